/*
 * Which consoles the session manager serves (session-manager.md §7). A
 * console is known by its id, derived from the key it proves in its DTLS
 * handshake. The administrator's answers live in KEY_DIR/consoles, one
 * line a console:
 *
 *   approved|revoked ID sha256:HEX|- [NAME]
 *
 * (`-` for a console seen over clear transport, which proves no key).
 * Consoles nobody has answered for yet wait in a bounded list in memory:
 * they get no greeter and no place in the console table, only a REFUSE
 * that tells them (and the person at them) to wait.
 *
 *   enroll = approve  new consoles wait for `slimlandctl approve ID`
 *   enroll = open     a new console is approved on its first HELLO
 *                     (at a limited rate: each may start a greeter)
 *   enroll = closed   a new console is refused
 */
#ifndef SLIM_SESSIOND_ENROLL_H
#define SLIM_SESSIOND_ENROLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "config.h"
#include "slim-log.h"
#include "slim-proto.h"
#include "slim-secure.h"

/* Consoles waiting for an answer; past this the longest waiting is forgotten. */
#define SLIM_ENROLL_PENDING_MAX 64
#define SLIM_ENROLL_NAME_MAX 63

enum slim_enroll_verdict {
	SLIM_ENROLL_ADMIT,   /* approved: the console table takes it */
	SLIM_ENROLL_WAIT,    /* pending: REFUSE PENDING */
	SLIM_ENROLL_REFUSE,  /* revoked, or enroll = closed: REFUSE DENIED */
};

struct slim_enrolled {
	char id[SLIM_CONSOLE_ID_LEN + 1];
	bool revoked;
	bool has_key;
	uint8_t key[SLIM_SEC_FINGERPRINT_LEN];
	char name[SLIM_ENROLL_NAME_MAX + 1];
};

struct slim_sec_conn;

struct slim_pending {
	char id[SLIM_CONSOLE_ID_LEN + 1];
	bool has_key;
	uint8_t key[SLIM_SEC_FINGERPRINT_LEN];
	struct sockaddr_storage addr;
	socklen_t addr_len;
	uint64_t first_us, last_us;
	/* its connection and association while they last: an approval tells it at once */
	struct slim_sec_conn *conn;
	uint32_t assoc;
};

struct slim_enroll {
	char path[300];      /* KEY_DIR/consoles; "" keeps nothing on disk (tests) */
	enum slim_enroll_mode mode;
	struct slim_enrolled *list;
	size_t n, cap;
	struct slim_pending pending[SLIM_ENROLL_PENDING_MAX];
	size_t n_pending;
	/* enroll = open: new consoles at most 1 a second, in bursts of 10 */
	uint64_t open_last_us;
	uint32_t open_tokens;
	struct slim_ratelimit log_rl;
};

/*
 * Reads `path` (a missing file is an empty list; bad lines are reported
 * and skipped). False only when out of memory.
 */
bool slim_enroll_init(struct slim_enroll *e, const char *path, enum slim_enroll_mode mode);
void slim_enroll_finish(struct slim_enroll *e);

/* Parses the file's text, adding its consoles; returns the bad lines. */
int slim_enroll_parse(struct slim_enroll *e, const char *text, size_t len, const char *name);
/* Writes the list to its file: a temporary file (0600), fsync, rename. */
bool slim_enroll_write(const struct slim_enroll *e);

/* Who said HELLO, and how. */
struct slim_enroll_hello {
	const char *id;
	const uint8_t *key; /* its proven fingerprint; NULL over clear transport */
	const struct sockaddr *addr;
	socklen_t addr_len;
	struct slim_sec_conn *conn;
	uint32_t assoc;
};

/* Whether the console is enrolled and not revoked. */
bool slim_enroll_serves(const struct slim_enroll *e, const char *id);

/* What to do with a HELLO, at `now_us`. */
enum slim_enroll_verdict slim_enroll_check(struct slim_enroll *e,
		const struct slim_enroll_hello *hello, uint64_t now_us);

/*
 * `slimlandctl approve|revoke`: `which` is an id or an unambiguous prefix
 * of 8 digits or more, of a pending or enrolled console. On success `id`
 * (SLIM_CONSOLE_ID_LEN + 1 bytes) is the console's id and, for approve,
 * *conn and *assoc its pending connection and association, if it has
 * one; else *why says why not.
 */
bool slim_enroll_approve(struct slim_enroll *e, const char *which, const char *name, char *id,
		struct slim_sec_conn **conn, uint32_t *assoc, const char **why);
bool slim_enroll_revoke(struct slim_enroll *e, const char *which, char *id, const char **why);

/*
 * A server group's decision on a console (its registry, group.c): taken
 * as is, written to the file. True if it changed anything; *conn and
 * *assoc are a console waiting here that may now be told (as approve).
 */
bool slim_enroll_adopt(struct slim_enroll *e, const struct slim_enrolled *from,
		struct slim_sec_conn **conn, uint32_t *assoc);

/* A connection ended: no pending console may keep a pointer to it. */
void slim_enroll_forget_conn(struct slim_enroll *e, const struct slim_sec_conn *conn);

/* Whether `text` is a name a console may be given (letters, digits, . _ -). */
bool slim_enroll_name_valid(const char *text);

#endif
