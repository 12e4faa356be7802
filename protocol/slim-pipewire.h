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

#endif
