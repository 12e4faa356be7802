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
/* A new console, or none: the microphone's stream starts over (silence until it speaks). */
void audio_microphone_reset(struct slim_audio *audio);

#endif
