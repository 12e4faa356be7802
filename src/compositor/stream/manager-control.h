/*
 * --managed: the control socket through which the session manager tells
 * this compositor which console to expect, and hears which one attached
 * (protocol/session-manager.md section 2). A unix stream socket at
 * $XDG_RUNTIME_DIR/slimland-control, mode 0600, that accepts only peers of
 * the manager's uid (SO_PEERCRED), one manager connection at a time: a new
 * one replaces the old (a manager that restarted).
 *
 * No wlroots here: only the Wayland event loop.
 */
#ifndef SLIM_CONTROL_H
#define SLIM_CONTROL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <wayland-server-core.h>
#include "control-line.h"
#include "encoder.h"
#include "slim-key-latency.h"

struct slim_pacer_stats;

struct slim_control_handler {
	/* expect TOKEN CONSOLE KEY: `console_id` NUL-padded as in HELLO */
	void (*expect)(void *data, const uint8_t token[SLIM_ATTACH_TOKEN_LEN],
		const char console_id[SLIM_CONSOLE_ID_LEN], const uint8_t key[SLIM_CONTROL_KEY_LEN]);
	void (*detach)(void *data);
	/*
	 * shadow TOKEN CONSOLE KEY ask|always view|control: CONSOLE may watch
	 * the session (after the user said yes, if `ask`), with its input if
	 * `control`; `unshadow` ends it.
	 */
	void (*shadow)(void *data, const struct slim_control_line *req);
	void (*unshadow)(void *data);
};

struct slim_control;

/*
 * Listens at $XDG_RUNTIME_DIR/slimland-control; says "hello PORT PID" to
 * each manager, a peer of `manager_uid`.
 */
struct slim_control *slim_control_create(struct wl_event_loop *loop, uint16_t port,
		uid_t manager_uid, const struct slim_control_handler *handler, void *data);
/* Closes the connection and removes the socket's file. NULL is a no-op. */
void slim_control_destroy(struct slim_control *ctl);

/* Events for the manager; dropped while none is connected, or with `ctl` NULL. */
void slim_control_attached(struct slim_control *ctl, const char console_id[SLIM_CONSOLE_ID_LEN],
		uint32_t width, uint32_t height);
void slim_control_detached(struct slim_control *ctl, const char console_id[SLIM_CONSOLE_ID_LEN]);
/*
 * The person at the console did something: said as `active`, at most once
 * every 10 s, so that the manager's idle clock (reauth = idle:N) counts
 * from the last input without hearing every key.
 */
void slim_control_active(struct slim_control *ctl);
/* Whether a client inhibits idle (a video being watched); said on change. */
void slim_control_inhibit(struct slim_control *ctl, bool inhibited);
/*
 * How sound fares on the console: `audio CONSOLE CODEC KBIT DEPTH_MS
 * LOSS LOST`, LOSS the packets lost on the way and LOST those lost in
 * every copy, both per mille of what was sent (session-manager.md §2).
 */
void slim_control_audio(struct slim_control *ctl, const char console_id[SLIM_CONSOLE_ID_LEN],
		const char *codec, unsigned kbit, unsigned depth_ms, unsigned loss_permille,
		unsigned lost_permille);
/*
 * What the pacer knows of the console's link: `link CONSOLE RATE_KBIT
 * PACING_KBIT RTT_US MIN_RTT_US QUEUE_BYTES DROPPED` (session-manager.md §2).
 */
void slim_control_link(struct slim_control *ctl, const char console_id[SLIM_CONSOLE_ID_LEN],
		const struct slim_pacer_stats *stats);
/* What a compressed stream to the console costs (session-manager.md §2). */
struct slim_control_video {
	const char *kind;   /* "software" or "vaapi" */
	const char *device; /* the x264 preset or the render node */
	uint64_t bitrate_bps;
	double encode_ms_p50, encode_ms_p99;
	uint16_t width, height;
};
/*
 * `video CONSOLE KIND DEVICE KBIT ENCODE_P50_US ENCODE_P99_US WIDTH HEIGHT`:
 * the console's busiest compressed stream.
 */
void slim_control_video(struct slim_control *ctl, const char console_id[SLIM_CONSOLE_ID_LEN],
		const struct slim_control_video *video);
/*
 * What went to the console in this association: `traffic CONSOLE BYTES
 * DATAGRAMS REPAIRED RESENT`, and its keystrokes to pixels: `keys CONSOLE
 * COUNT SUM_US` and SLIM_KEY_BUCKETS counts (session-manager.md §2).
 */
void slim_control_traffic(struct slim_control *ctl, const char console_id[SLIM_CONSOLE_ID_LEN],
		const struct slim_encoder_stats *st, const struct slim_key_latency *keys);

/*
 * The shadow's course (session-manager.md §2): `shadow-ready PORT` (the
 * user said yes: the shadow console is to say HELLO at PORT),
 * `shadow-refused WHY`, `shadow-attached CONSOLE`, `shadow-ended WHY`;
 * WHY is one word.
 */
void slim_control_shadow_ready(struct slim_control *ctl, uint16_t port);
void slim_control_shadow_refused(struct slim_control *ctl, const char *why);
void slim_control_shadow_attached(struct slim_control *ctl,
		const char console_id[SLIM_CONSOLE_ID_LEN]);
void slim_control_shadow_ended(struct slim_control *ctl, const char *why);

#endif
