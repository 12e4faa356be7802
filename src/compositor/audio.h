/*
 * The session's sound through PipeWire (audio.c): the console's speaker
 * and microphone as the session's default sink and source. No wlroots:
 * only the Wayland event loop, which PipeWire's thread wakes.
 */
#ifndef SLIM_AUDIO_H
#define SLIM_AUDIO_H

#include <wayland-server-core.h>

struct slim_audio;

/* Connects to the session's PipeWire; NULL (said once) if there is none. */
struct slim_audio *audio_create(struct wl_event_loop *loop);
/* NULL is a no-op. */
void audio_destroy(struct slim_audio *audio);

#endif
