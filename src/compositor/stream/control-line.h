/*
 * The lines of the managed compositor's control socket
 * (protocol/session-manager.md section 2), parsed and formatted without
 * any socket, so that the parser can be tested alone.
 */
#ifndef SLIM_CONTROL_LINE_H
#define SLIM_CONTROL_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-proto.h"

/* The longest line either side may send, without its '\n'. */
#define SLIM_CONTROL_LINE_MAX 1024
/* expect's KEY: a DTLS pre-shared key (SLIM_SEC_KEY_LEN) */
#define SLIM_CONTROL_KEY_LEN 32

enum slim_control_request {
	SLIM_CONTROL_EXPECT, /* expect TOKEN CONSOLE KEY */
	SLIM_CONTROL_DETACH, /* detach */
	SLIM_CONTROL_PING,   /* ping: answered with pong */
	SLIM_CONTROL_PONG,   /* pong: the answer to a ping, nothing to do */
	SLIM_CONTROL_SHADOW, /* shadow TOKEN CONSOLE KEY ask|always view|control */
	SLIM_CONTROL_UNSHADOW, /* unshadow: the shadow console's watching ends */
};

struct slim_control_line {
	enum slim_control_request request;
	/*
	 * expect: the token, the console id as HELLO carries it (NUL-padded),
	 * and the key of the console's DTLS connection for this attach
	 */
	uint8_t token[SLIM_ATTACH_TOKEN_LEN];
	char console_id[SLIM_CONSOLE_ID_LEN];
	uint8_t key[SLIM_CONTROL_KEY_LEN];
	/* shadow: the session's user is asked first; the shadow's input reaches the session */
	bool ask, control;
};

/*
 * Parses one line (without its '\n'; `len` bytes, not terminated). False,
 * with a reason in `*why`, for anything section 2 does not say exactly:
 * fields are separated by one space, tokens, console ids and keys are
 * lowercase hex, a console id is 1 to SLIM_CONSOLE_ID_LEN bytes, a key 32;
 * shadow's last two words are `ask` or `always`, `view` or `control`.
 */
bool slim_control_line_parse(const char *line, size_t len, struct slim_control_line *out,
		const char **why);

/*
 * A console id from HELLO (NUL-padded, not necessarily terminated) as
 * lowercase hex of its bytes up to the first NUL; `out` holds
 * 2 * SLIM_CONSOLE_ID_LEN + 1 bytes.
 */
void slim_control_console_hex(const char id[SLIM_CONSOLE_ID_LEN],
		char out[2 * SLIM_CONSOLE_ID_LEN + 1]);

#endif
