/*
 * The state file (§5): what a restarted manager needs to find its sessions
 * again. Written atomically after every change; read once at start.
 *
 *   session ID UID USER PID PORT CONTROLPATH
 *   token HASH SESSION   (a card's keyed hash, never its token: sessions.h)
 *   console ID SESSION
 *
 * Greeters are sessions too (USER is the greeter user), so that a console
 * on its greeter keeps it across a restart.
 */
#ifndef SLIM_SESSIOND_STATE_H
#define SLIM_SESSIOND_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "sessions.h"

struct slim_state_session {
	uint32_t id;
	uid_t uid;
	char user[64];
	pid_t pid;
	uint16_t port;
	char control[320];
};

struct slim_state_token {
	struct slim_card_hash token;
	uint32_t session;
};

struct slim_state_console {
	char id[SLIM_CONSOLE_ID_LEN + 1];
	uint32_t session;
};

struct slim_state {
	struct slim_state_session *sessions;
	size_t n_sessions;
	struct slim_state_token *tokens;
	size_t n_tokens;
	struct slim_state_console *consoles;
	size_t n_consoles;
	int bad_lines;
	bool truncated; /* the last line had no '\n': it was dropped */
};

/* Formats the manager's table (malloc'd, NUL-terminated). */
char *slim_state_format(struct slim_manager *mgr, size_t *len);
/* Writes it to `path`: a temporary file, fsync, rename. */
bool slim_state_write(struct slim_manager *mgr, const char *path);

/* Parses state text; bad lines are reported (with `name`) and skipped. */
bool slim_state_parse(const char *text, size_t len, const char *name, struct slim_state *state);
void slim_state_finish(struct slim_state *state);

/* Whether PID runs slimland (as uid); on success *pidfd is a pidfd for it. */
bool slim_state_check_pid(pid_t pid, uid_t uid, int *pidfd);

/*
 * Reads `path` and adds what still runs to the manager: sessions whose PID
 * still runs slimland (reconnecting their control sockets), their tokens,
 * and which console shows what. A missing file is no error.
 */
bool slim_state_restore(struct slim_manager *mgr, const char *path);
/* The same, from parsed state (tests). `check` false trusts the PIDs. */
void slim_state_apply(struct slim_manager *mgr, const struct slim_state *state, bool check);

#endif
