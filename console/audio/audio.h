/*
 * The console's speaker and microphone. AUDIO packets from the session go
 * through a jitter buffer to the sound device; the microphone, coded, goes
 * back as MIC. The device is PipeWire's where one answers (a console on a
 * desktop) and ALSA's otherwise (a bare console with a DRM display), each
 * driven by a thread of its own; the console's poll() loop only hands
 * packets over and sends what the microphone heard.
 *
 * A console with no sound device says so once and carries on: its HELLO
 * does not offer sound, and the session sends it none.
 */
#ifndef SLIM_CONSOLE_AUDIO_H
#define SLIM_CONSOLE_AUDIO_H

#include <stdbool.h>
#include <stdint.h>
#include "slim-audio.h"
#include "slim-codec.h"

enum console_audio_mode {
	CONSOLE_AUDIO_AUTO,     /* PipeWire, else ALSA's default device, else none */
	CONSOLE_AUDIO_PIPEWIRE,
	CONSOLE_AUDIO_ALSA,
	CONSOLE_AUDIO_NONE,
};

struct console_audio_config {
	enum console_audio_mode mode;
	const char *alsa_device; /* ALSA: the PCM for both directions; NULL: "default" */
	bool microphone;         /* capture and send the microphone */
};

struct console_audio_listener {
	/* A MIC datagram's packet to send (on the console's association). */
	void (*microphone)(void *data, const struct slim_audio_packet *p);
	/* The playback's figures, every few seconds while sound arrives. */
	void (*report)(void *data, const struct slim_wire_audio_report *report);
	/*
	 * `sound`: sound began after a silence, its first loud sample heard
	 * at `heard_us` on the console's clock (handed to the device, plus
	 * what the device holds before it); bench-audio measures mouth to ear
	 * and the A/V offset with it. Else: the sound ended, its last sample
	 * heard and 100 ms of quiet after it, at `heard_us`.
	 */
	void (*heard)(void *data, bool sound, uint64_t heard_us);
};

struct console_audio;

/* NULL if there is no sound device (said once): the console goes on without sound. */
struct console_audio *console_audio_create(const struct console_audio_config *config,
		const struct console_audio_listener *listener, void *data);
/* NULL is a no-op. */
void console_audio_destroy(struct console_audio *audio);

/* SLIM_CAP_AUDIO, and SLIM_CAP_MIC if the microphone is captured. */
uint32_t console_audio_caps(const struct console_audio *audio);
/*
 * An AUDIO command that arrived (sent at `time_us` on the server's clock);
 * `again`: a copy of an earlier packet, sent with a later one.
 */
void console_audio_receive(struct console_audio *audio, const struct slim_cmd *cmd,
		bool again, uint64_t time_us);
/* A new association: the session's stream starts over. */
void console_audio_reset(struct console_audio *audio);
/* Readable when the microphone has packets to send, or a sound began or ended. */
int console_audio_fd(const struct console_audio *audio);
/* Hands what is ready to the listener; `send_mic` false: the microphone's go nowhere. */
void console_audio_dispatch(struct console_audio *audio, bool send_mic);
/* The playback's figures as of the device's last 10 ms. */
const struct slim_audio_stats *console_audio_stats(struct console_audio *audio);
/* MIC packets handed to the listener. */
uint64_t console_audio_mic_sent(const struct console_audio *audio);

#endif
