/*
 * The one kind of PipeWire stream slimland makes (slim-pipewire.c): 16-bit
 * samples at 48 kHz, mono or stereo, processed on PipeWire's data thread.
 * The session's speaker and microphone, the console's playback and
 * capture, and bench-audio's player all are such streams.
 */
#ifndef SLIM_PIPEWIRE_H
#define SLIM_PIPEWIRE_H

#include <pipewire/pipewire.h>

/*
 * A stream of `channels` (1: mono; 2: front left and right) connected in
 * `direction` with `flags` (PW_STREAM_FLAG_MAP_BUFFERS and _RT_PROCESS are
 * added), `events` told to `data` through `listener`. `props` is taken.
 * NULL if it cannot be made or connected.
 */
struct pw_stream *slim_pw_stream_create(struct pw_core *core, const char *name,
		struct pw_properties *props, enum spa_direction direction, uint32_t channels,
		enum pw_stream_flags flags, struct spa_hook *listener,
		const struct pw_stream_events *events, void *data);

/* Streams one connection holds: a playback and a capture. */
#define SLIM_PW_STREAMS 2

/*
 * A connection to the PipeWire server with its own loop thread, and the
 * streams made on it: the session's speaker and microphone, the console's
 * playback and capture. Made and torn down in one place, in the order
 * PipeWire needs.
 */
struct slim_pw {
	/* the caller's to lock, signal and wait on, and to ask the server through */
	struct pw_thread_loop *thread;
	struct pw_core *core;

	struct pw_context *context;
	struct spa_hook core_listener;
	struct slim_pw_stream {
		struct pw_stream *stream;
		struct spa_hook listener;
	} streams[SLIM_PW_STREAMS];
	int n_streams;
};

/*
 * Starts a loop thread called `thread_name` and connects to the server of
 * the environment ($PIPEWIRE_REMOTE, $XDG_RUNTIME_DIR), `core_events` (or
 * NULL) told to `data`. Returns with the loop locked, for the caller to
 * make its streams before it unlocks; NULL, with why in `*why`, if there
 * is no thread or no server answers.
 */
struct slim_pw *slim_pw_connect(const char *thread_name,
		const struct pw_core_events *core_events, void *data, const char **why);

/*
 * Under the loop's lock: a stream as slim_pw_stream_create's, torn down
 * with the connection. NULL if it cannot be made (or SLIM_PW_STREAMS were).
 */
struct pw_stream *slim_pw_add_stream(struct slim_pw *pw, const char *name,
		struct pw_properties *props, enum spa_direction direction, uint32_t channels,
		enum pw_stream_flags flags, const struct pw_stream_events *events, void *data);

/*
 * Stops the thread first, so that no callback runs while the streams,
 * the core and the context go. The caller's own proxies (a registry) are
 * to be gone before. NULL is a no-op.
 */
void slim_pw_destroy(struct slim_pw *pw);

#endif
