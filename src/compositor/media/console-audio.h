/*
 * The session's sound through PipeWire (console-audio.c): the console's speaker
 * and microphone as the session's default sink and source. No wlroots:
 * only the Wayland event loop, which PipeWire's thread wakes.
 */
#ifndef SLIM_COMPOSITOR_AUDIO_H
#define SLIM_COMPOSITOR_AUDIO_H

#include <stdint.h>
#include <wayland-server-core.h>
#include "slim-audio.h"

struct slim_audio;

struct slim_audio_handler {
	/*
	 * 10 ms of what clients played, mixed: SLIM_AUDIO_FRAME stereo
	 * samples, on the compositor's thread, as they come.
	 */
	void (*speaker)(void *data, const int16_t *pcm);
	/*
	 * The speaker is a node in PipeWire, once: what links streams
	 * (WirePlumber) finds it there from then on. NULL: not told.
	 */
	void (*ready)(void *data);
};

/* Connects to the session's PipeWire; NULL (said once) if there is none. */
struct slim_audio *audio_create(struct wl_event_loop *loop,
		const struct slim_audio_handler *handler, void *data);
/* NULL is a no-op. */
void audio_destroy(struct slim_audio *audio);

/*
 * A packet of the console's microphone (a MIC command), into its jitter
 * buffer; `again`: a copy of an earlier packet, sent with a later one.
 */
void audio_microphone_packet(struct slim_audio *audio, const struct slim_audio_packet *p,
		bool again);
/*
 * How many clients of PipeWire are not the session's own (its daemons,
 * the compositor): while there are none, no one is playing or recording.
 */
int audio_users(const struct slim_audio *audio);
/* A new console, or none: the microphone's stream starts over (silence until it speaks). */
void audio_microphone_reset(struct slim_audio *audio);

#endif
