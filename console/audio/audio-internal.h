/*
 * Between the console's sound (audio.c) and its devices (audio-alsa.c,
 * audio-pipewire.c): a device's threads pull 10 ms to play and push 10 ms
 * the microphone heard, one thread each (a thread may do both): neither
 * waits, allocates or logs.
 */
#ifndef SLIM_CONSOLE_AUDIO_INTERNAL_H
#define SLIM_CONSOLE_AUDIO_INTERNAL_H

#include <stddef.h>
#include "audio.h"

#define CONSOLE_AUDIO_CHANNELS 2 /* what plays */
#define CONSOLE_MIC_CHANNELS 1   /* what the microphone sends */

struct console_audio_device;

struct console_audio_device_impl {
	/*
	 * Starts playing (and, with `*microphone`, capturing: false if there
	 * is nothing to capture from); NULL with the reason in `err` if the
	 * device cannot be had.
	 */
	struct console_audio_device *(*create)(struct console_audio *audio, const char *name,
		bool *microphone, char *err, size_t err_len);
	void (*destroy)(struct console_audio_device *dev);
};

extern const struct console_audio_device_impl console_audio_alsa;
extern const struct console_audio_device_impl console_audio_pipewire;

/*
 * The next SLIM_AUDIO_FRAME stereo samples to play; `delay_us` is how long
 * the device holds them before they are heard.
 */
void console_audio_pull(struct console_audio *audio, int16_t *pcm, uint64_t delay_us);
/* SLIM_AUDIO_FRAME mono samples the microphone heard. */
void console_audio_push_mic(struct console_audio *audio, const int16_t *pcm);
/*
 * The device stopped for good, from any one thread: a session's sound
 * server, which it must not play into (said from the loop).
 */
void console_audio_stop(struct console_audio *audio);
/*
 * The sound server here is the session's own: no device is to be tried
 * after this one (ALSA's default goes to the same server, through
 * pipewire-alsa).
 */
void console_audio_no_fallback(struct console_audio *audio);

#endif
