/*
 * A console of a session manager, played in-process for benchmarks: the
 * control association is the console program's own (console/manager.c:
 * HELLO, PING, CARD, REDIRECT, REFUSE UNKNOWN), and REDIRECT opens a
 * display association here, a console core on a UDP socket connected to
 * the endpoint that says HELLO with the token (slim_put_hello_token), so
 * that every datagram of it is seen and timed where it arrives.
 *
 * Each display association records when it was redirected, its first
 * datagram, and every frame presented with the screen rectangles that
 * frame painted: bench_console_complete_frame() then says which frame
 * first made the picture whole.
 *
 * Over DTLS (slim-secure.h) the console is what the real one is: the
 * control association proves a key of its own (made in a directory of the
 * benchmark's) and the display association the per-attach key its
 * REDIRECT brings; the time from REDIRECT to the first datagram includes
 * that handshake.
 */
#ifndef SLIM_BENCH_MANAGED_H
#define SLIM_BENCH_MANAGED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "console-core.h"
#include "slim-secure.h"

#define BENCH_CONSOLE_FRAMES 256

struct bench_rect {
	uint16_t x, y, w, h;
	uint32_t frame; /* frames presented in the association before it arrived */
};

struct bench_console {
	char id[SLIM_CONSOLE_ID_LEN + 1];
	/*
	 * The loopback address it sends from, one a console (127.1.0.1 on): a
	 * manager counts handshakes under way per address, as a LAN's desks
	 * each have one.
	 */
	char source[16];
	enum slim_sec_mode mode;
	struct slim_sec_identity *identity; /* DTLS: the control association's key */
	struct slim_sec_client *sec;        /* the display association's connection */
	uint32_t width, height;
	struct slim_console_backend *backend;
	struct slim_console_core *core;
	struct slim_console_manager *mgr; /* the control association (console/manager.c) */
	bool mgr_attached;
	/*
	 * The control association's life, on the same clock: the manager it
	 * speaks to (HOST:PORT) and how often that changed (a MOVE, or back to
	 * the list), each new association (HELLO from the start: the first, a
	 * MOVE, a restart) and the last time a manager answered one.
	 */
	char manager[64];
	uint32_t manager_changes;
	uint32_t mgr_connects;
	uint64_t mgr_connect_us;
	uint64_t mgr_attached_us;

	/* the display association */
	int fd;
	struct sockaddr_storage peer;
	socklen_t peer_len;
	uint8_t token[SLIM_ATTACH_TOKEN_LEN];
	uint8_t key[SLIM_SEC_KEY_LEN];
	bool has_token;
	uint32_t assoc;
	bool attached;              /* a datagram of the association arrived */
	bool refused;               /* ... and it was REFUSE */
	uint32_t refusals;          /* REFUSEs on display associations, in all */
	uint64_t hello_due_us, ping_due_us;
	uint32_t hello_backoff_ms;

	/* this association's times, on the one clock of the machine */
	uint32_t redirects;         /* REDIRECTs acted on (new endpoint or token) */
	uint64_t redirect_us;       /* the last one acted on */
	uint64_t first_rx_us;       /* its first datagram */
	uint32_t frames;            /* presented since */
	uint64_t frame_us[BENCH_CONSOLE_FRAMES];
	struct bench_rect *rects;   /* painted since, in arrival order */
	size_t n_rects, cap_rects;
	uint32_t copies;            /* COPY commands since (they paint from the old picture) */
	uint64_t datagrams, bytes;  /* since */
};

/*
 * Says HELLO to the session manager at `manager` (HOST:PORT). Clear: as
 * console `id`; DTLS: with a key made at `key_path` (if missing), whose id
 * c->id then is.
 */
bool bench_console_start(struct bench_console *c, const char *manager, const char *id,
		uint32_t width, uint32_t height, enum slim_sec_mode mode, const char *key_path);
void bench_console_stop(struct bench_console *c);

/* CARD on the control association, reader 0, a UID token. */
void bench_console_card(struct bench_console *c, bool inserted, const uint8_t *token,
		size_t len);
/* Input on the display association. */
void bench_console_key(struct bench_console *c, uint32_t code, bool down);

/*
 * Runs the consoles (receives, follows REDIRECTs, says HELLO and PING when
 * due) until `done(data)` is true, checked after every wakeup, or timeout_ms
 * passed; returns done's last answer. `done` NULL: runs for timeout_ms.
 */
bool bench_consoles_run(struct bench_console *const *cs, size_t n, int timeout_ms,
		bool (*done)(void *data), void *data);

/*
 * The first frame of the display association after which every pixel of
 * the screen has been painted by it (COPY not counted), 1-based; 0 if none
 * yet. `first_only`: whether frame 1 alone did it.
 */
uint32_t bench_console_complete_frame(const struct bench_console *c, bool *first_only);

/* The endpoint's port of the display association, 0 without one. */
uint16_t bench_console_port(const struct bench_console *c);

#endif
