/*
 * The manager's end of a managed compositor's control socket (§2). The
 * socket appears a moment after the compositor starts, so connecting is
 * retried on a timer; after a manager restart it is simply there. Every
 * line the compositor says is checked here and reported to its owner (the
 * table's session) through the handler it was given.
 */
#ifndef SLIM_SESSIOND_CONTROL_H
#define SLIM_SESSIOND_CONTROL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <wayland-server-core.h>
#include "slim-key-latency.h"
#include "slim-log.h"
#include "slim-proto.h"

struct slim_compositor_control;

#define SLIM_CONTROL_RETRY_MS 100
#define SLIM_CONTROL_GIVE_UP_MS 30000

/* How sound fares on a console, a compositor's latest `audio` line. */
struct slim_session_audio {
	char console[SLIM_CONSOLE_ID_LEN + 1]; /* "": none said */
	char codec[8];
	unsigned kbit, depth_ms, loss_permille, lost_permille;
};

/* What its pacer knows of a console's link, a compositor's latest `link` line. */
struct slim_session_net {
	char console[SLIM_CONSOLE_ID_LEN + 1]; /* "": none said */
	unsigned long rate_kbit, pacing_kbit; /* 0: not known, nothing held back */
	unsigned long rtt_us, min_rtt_us, queue_bytes, dropped;
};

/* A compressed stream to a console, a compositor's latest `video` line. */
struct slim_session_video {
	char console[SLIM_CONSOLE_ID_LEN + 1]; /* "": none said */
	char kind[16], device[32];
	unsigned long kbit, encode_p50_us, encode_p99_us;
	unsigned width, height;
};

/*
 * What went to a console in its association, a compositor's latest
 * `traffic` and `keys` lines: counters that start again with each.
 */
struct slim_session_traffic {
	char console[SLIM_CONSOLE_ID_LEN + 1]; /* "": none said */
	uint64_t bytes, datagrams, repaired, resent;
};
struct slim_session_keys {
	char console[SLIM_CONSOLE_ID_LEN + 1]; /* "": none said */
	struct slim_key_latency latency;
};

/* What the compositor says (§2), each line checked first. */
struct slim_compositor_control_handler {
	void (*hello)(void *data, uint16_t port, pid_t pid);
	void (*attached)(void *data, const char *console, uint16_t width, uint16_t height);
	void (*detached)(void *data, const char *console);
	void (*active)(void *data);
	void (*inhibit)(void *data, bool inhibited);
	void (*audio)(void *data, const struct slim_session_audio *audio);
	void (*net)(void *data, const struct slim_session_net *net);
	void (*video)(void *data, const struct slim_session_video *video);
	/* shadowing (§2): the port, the console (id), WHY a word of [a-z-] */
	void (*shadow_ready)(void *data, uint16_t port);
	void (*shadow_refused)(void *data, const char *why);
	void (*shadow_attached)(void *data, const char *console);
	void (*shadow_ended)(void *data, const char *why);
	void (*traffic)(void *data, const struct slim_session_traffic *traffic);
	void (*keys)(void *data, const struct slim_session_keys *keys);
	/* The socket closed, or never came: nothing more will be said. */
	void (*closed)(void *data);
};

struct slim_compositor_control_owner {
	struct wl_event_loop *loop;
	uint32_t session;  /* its id, for the log */
	uid_t uid;         /* the compositor the socket must be held by */
	pid_t pid;
	bool at_once;      /* the first try without a pause (a restart: it is there) */
	struct slim_ratelimit *log_rl; /* what a compositor provokes is logged at this rate */
	const struct slim_compositor_control_handler *handler;
	void *data;
};

/*
 * Connects to `path`, or adopts `fd` (>= 0: already connected), which is
 * then its own to close, whether it is made or not.
 */
struct slim_compositor_control *slim_compositor_control_create(
		const struct slim_compositor_control_owner *owner, const char *path, int fd);
void slim_compositor_control_destroy(struct slim_compositor_control *control);
bool slim_compositor_control_connected(const struct slim_compositor_control *control);
/* Sends one line; false if it could not be sent (not connected, peer gone). */
bool slim_compositor_control_send(struct slim_compositor_control *control, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
