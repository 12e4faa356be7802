/*
 * The session manager's world, faked: the slim_manager_ops its tests and
 * fuzzers drive it with. A compositor is the far end of a socketpair (its
 * control socket), and a real child process that only waits to be ended
 * where a test needs pidfds and SIGTERM; a login takes the password
 * "right", or is refused at once; datagrams to consoles are kept (or only
 * checked) for the caller to read; the clock is the caller's.
 */
#ifndef SLIM_TEST_FAKE_MANAGER_H
#define SLIM_TEST_FAKE_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "sessions.h"
#include "slim-lines.h"

#define FAKE_COMPOSITORS 64
#define FAKE_SENT 256

struct fake_compositor {
	bool greeter;
	char user[64];
	char console_env[64]; /* a greeter's SLIMLAND_CONSOLE */
	char runtime[256];    /* its XDG_RUNTIME_DIR, if it was given one */
	uid_t uid;            /* the uid it runs as, a greeter's own (req->as_uid) */
	pid_t pid;            /* 0: no process */
	int fd;               /* the compositor's end of the control socket */
	struct slim_lines lines;
	int sent_before;      /* datagrams the manager had sent when it was started */
};

struct fake_sent {
	uint8_t buf[2048];
	size_t len;
	int console; /* the n of fake_conn(n) it went to */
};

struct fake_world {
	/* How the world behaves, set before the manager is made. */
	bool processes; /* each compositor a child process: pidfds, SIGTERM, exits */
	bool eager;     /* a compositor says hello at once (fake_compositors_answer does the rest) */
	bool logins;    /* logins run, with the password "right"; else refused at once */
	bool keep_sent; /* datagrams are kept in sent[] (more than FAKE_SENT is a failure) */
	/*
	 * The consoles' heartbeat runs (manager-harness.c): off, its timer
	 * never fires, so that the tests count the datagrams they expect.
	 */
	bool heartbeats;
	/* Every datagram the manager sends (NULL: none). */
	void (*check_sent)(const uint8_t *buf, size_t len);

	/* What happened. */
	struct fake_compositor comps[FAKE_COMPOSITORS];
	int n_comps;
	struct fake_sent sent[FAKE_SENT];
	int n_sent;
	int logins_done, logouts; /* PAM sessions opened and closed */
	uint64_t now_us;          /* the manager's clock (ops.now) */
	/* what ops.greeter_clear was given; it answers "gone" unless the uid lingers */
	struct {
		uid_t uid;
		char dir[256];
	} cleared[64];
	int n_cleared;
	uid_t lingering; /* a uid whose processes take a while to die (0: none) */
	bool admitted[32]; /* console n's connection was admitted (ops.admit) */
};

extern struct fake_world fake;
extern const struct slim_manager_ops fake_ops;

/* Forgets what happened (the behaviour stays as set). */
void fake_reset(void);
/* Kills and reaps the compositors' processes and closes their sockets. */
void fake_compositors_end(void);
/*
 * Console n's connection, as the secure transport would hand it over: the
 * manager never looks inside one, only gives it back to send.
 */
struct slim_sec_conn *fake_conn(int n);
/* ops.spawn, for a test that adds a compositor of its own. */
bool fake_spawn(void *data, const struct slim_spawn_request *req,
		struct slim_spawn_result *out, int *control_fd);
/* Reads what the manager said on fd; a compositor answers `expect` with `attached`. */
void fake_peer_drain(int fd, bool compositor);
/* Every fake compositor reads what it was told and answers. */
void fake_compositors_answer(void);

#endif
