/*
 * The console's sound between its poll() loop and the device's threads,
 * which never wait on the loop (PipeWire's is a real-time thread): the
 * speaker's packets go into a jitter buffer the device alone plays
 * (slim-audio-feed.h); the microphone's coded packets, and when a sound
 * began or ended, come back through rings (slim-ring.h) and an eventfd
 * that wakes the loop. Nothing a device's thread calls here logs,
 * allocates or takes a lock.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "audio-internal.h"
#include "slim-audio-feed.h"
#include "slim-clock.h"
#include "slim-log.h"
#include "slim-pw-mark.h"
#include "slim-ring.h"

/* The speaker's jitter buffer: 20 ms on a quiet LAN, up to 200 ms. */
#define JITTER_MIN_MS 20
#define JITTER_MAX_MS 200
/* The microphone: Opus, mono, speech-sized. */
#define MIC_BITRATE 32000
/*
 * Coded microphone packets the loop sends at most when it comes to them:
 * 160 ms, the newest (the ring holds 640 ms: a loop that fell further
 * behind loses the newest instead, as only the loop can drop the oldest).
 */
#define MIC_QUEUE 16
#define MIC_RING 64
/* Sounds begun or ended, waiting for the loop. */
#define HEARD_QUEUE 16
/* How often the playback's figures go to the session while sound arrives. */
#define REPORT_US 2000000
/* Onset: louder than this after at least this much quiet. */
#define ONSET_LEVEL 1000
#define ONSET_QUIET_FRAMES 10

struct mic_packet {
	struct slim_audio_packet p;
	uint8_t data[SLIM_AUDIO_MAX_PAYLOAD];
};

struct heard {
	bool sound; /* began; else ended */
	uint64_t at_us;
};

struct console_audio {
	const struct console_audio_listener *listener;
	void *data;
	const struct console_audio_device_impl *impl;
	struct console_audio_device *dev;
	char device[80];
	bool microphone;
	bool no_fallback; /* see console_audio_no_fallback */
	int wake_fd;
	uint64_t last_report_us;
	uint64_t mic_sent;
	atomic_bool stopped; /* see console_audio_stop */
	bool said_stopped;

	struct slim_audio_feed *speaker; /* the loop feeds it, the device plays it */
	struct slim_ring *mic;           /* of struct mic_packet, from the device */
	struct slim_ring *heard;         /* of struct heard, from the device */

	/* the playing thread's */
	unsigned quiet; /* frames played quiet in a row (a device that played nothing: quiet) */
	uint64_t last_pull_us;
	bool sounding;  /* an onset was told and no end yet */

	/* the capturing thread's */
	struct slim_audio_encoder *mic_enc;
};

static void wake(struct console_audio *audio)
{
	uint64_t one = 1;
	(void)!write(audio->wake_fd, &one, sizeof(one));
}

static bool loud(const int16_t *pcm, size_t n, size_t *at)
{
	for (size_t i = 0; i < n; i++) {
		if (pcm[i] > ONSET_LEVEL || pcm[i] < -ONSET_LEVEL) {
			*at = i;
			return true;
		}
	}
	return false;
}

/* The playing thread's: a sound began or ended, for the loop. */
static void tell_heard(struct console_audio *audio, bool sound, uint64_t at_us)
{
	struct heard h = { .sound = sound, .at_us = at_us };
	if (slim_ring_write(audio->heard, &h, 1) == 1) {
		wake(audio);
	}
}

void console_audio_pull(struct console_audio *audio, int16_t *pcm, uint64_t delay_us)
{
	uint64_t now = slim_now_us();
	if (now - audio->last_pull_us > ONSET_QUIET_FRAMES * 10000) {
		/* a sound server runs its graph only while something plays: quiet till now */
		audio->quiet = ONSET_QUIET_FRAMES;
	}
	audio->last_pull_us = now;
	slim_audio_feed_pull(audio->speaker, pcm, now);
	size_t at;
	bool heard = loud(pcm, SLIM_AUDIO_FRAME * CONSOLE_AUDIO_CHANNELS, &at);
	if (heard && audio->quiet >= ONSET_QUIET_FRAMES) {
		tell_heard(audio, true, now + delay_us +
			(uint64_t)(at / CONSOLE_AUDIO_CHANNELS) * 1000000 / SLIM_AUDIO_RATE);
		audio->sounding = true;
	}
	audio->quiet = heard ? 0 : audio->quiet + 1;
	if (audio->sounding && audio->quiet == ONSET_QUIET_FRAMES) {
		/* as long a quiet as an onset needs: the sound is over, all of it played */
		tell_heard(audio, false, now + delay_us);
		audio->sounding = false;
	}
}

void console_audio_push_mic(struct console_audio *audio, const int16_t *pcm)
{
	struct mic_packet m;
	if (slim_audio_encode(audio->mic_enc, pcm, m.data, sizeof(m.data), &m.p) > 0 &&
			slim_ring_write(audio->mic, &m, 1) == 1) {
		wake(audio);
	}
}

void console_audio_stop(struct console_audio *audio)
{
	atomic_store(&audio->stopped, true);
	wake(audio);
}

void console_audio_no_fallback(struct console_audio *audio)
{
	audio->no_fallback = true;
}

static bool start_device(struct console_audio *audio, const struct console_audio_device_impl *impl,
		const char *name, char *err, size_t err_len)
{
	audio->dev = impl->create(audio, name, &audio->microphone, err, err_len);
	if (!audio->dev) {
		return false;
	}
	audio->impl = impl;
	snprintf(audio->device, sizeof(audio->device), "%s%s", name ? "alsa:" : "pipewire",
		name ? name : "");
	return true;
}

struct console_audio *console_audio_create(const struct console_audio_config *config,
		const struct console_audio_listener *listener, void *data)
{
	if (config->mode == CONSOLE_AUDIO_NONE) {
		return NULL;
	}
	struct console_audio *audio = calloc(1, sizeof(*audio));
	if (!audio) {
		return NULL;
	}
	audio->listener = listener;
	audio->data = data;
	audio->microphone = config->microphone;
	audio->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	audio->speaker = slim_audio_feed_create(CONSOLE_AUDIO_CHANNELS, JITTER_MIN_MS,
		JITTER_MAX_MS);
	audio->mic = slim_ring_create(sizeof(struct mic_packet), MIC_RING);
	audio->heard = slim_ring_create(sizeof(struct heard), HEARD_QUEUE);
	audio->mic_enc = slim_audio_encoder_create(SLIM_AUDIO_OPUS, CONSOLE_MIC_CHANNELS,
		MIC_BITRATE, 10);
	if (audio->wake_fd < 0 || !audio->speaker || !audio->mic || !audio->heard ||
			!audio->mic_enc) {
		slim_log(SLIM_LOG_ERROR, "audio: out of memory: no sound");
		goto fail;
	}
	const char *alsa = config->alsa_device ? config->alsa_device : "default";
	char err[256] = "", pw_err[256] = "";
	bool ok = false;
	switch (config->mode) {
	case CONSOLE_AUDIO_AUTO:
		ok = start_device(audio, &console_audio_pipewire, NULL, pw_err, sizeof(pw_err)) ||
			(!audio->no_fallback &&
			start_device(audio, &console_audio_alsa, alsa, err, sizeof(err)));
		if (ok && audio->impl == &console_audio_alsa && slim_pw_marked()) {
			/* ALSA's default may be a way into the same PipeWire (pipewire-alsa) */
			audio->impl->destroy(audio->dev);
			audio->dev = NULL;
			snprintf(err, sizeof(err), "ALSA's default may play into the PipeWire here, "
				"a session's own: the session would hear itself");
			ok = false;
		}
		break;
	case CONSOLE_AUDIO_PIPEWIRE:
		ok = start_device(audio, &console_audio_pipewire, NULL, err, sizeof(err));
		break;
	case CONSOLE_AUDIO_ALSA:
		ok = start_device(audio, &console_audio_alsa, alsa, err, sizeof(err));
		break;
	case CONSOLE_AUDIO_NONE:
		break;
	}
	if (!ok) {
		slim_log(SLIM_LOG_ERROR, "audio: no sound device (%s%s%s): the console has no sound",
			pw_err, pw_err[0] && err[0] ? "; " : "", err);
		goto fail;
	}
	slim_log(SLIM_LOG_INFO, "audio: the session's sound plays on %s%s", audio->device,
		audio->microphone ? ", its microphone is heard" : "");
	return audio;
fail:
	console_audio_destroy(audio);
	return NULL;
}

void console_audio_destroy(struct console_audio *audio)
{
	if (!audio) {
		return;
	}
	if (audio->dev) {
		/* its threads end here: nothing pulls or pushes after */
		audio->impl->destroy(audio->dev);
	}
	slim_audio_feed_destroy(audio->speaker);
	slim_ring_destroy(audio->mic);
	slim_ring_destroy(audio->heard);
	slim_audio_encoder_destroy(audio->mic_enc);
	if (audio->wake_fd >= 0) {
		close(audio->wake_fd);
	}
	free(audio);
}

uint32_t console_audio_caps(const struct console_audio *audio)
{
	if (!audio) {
		return 0;
	}
	return SLIM_CAP_AUDIO | (audio->microphone ? SLIM_CAP_MIC : 0);
}

void console_audio_receive(struct console_audio *audio, const struct slim_cmd *cmd,
		bool again, uint64_t time_us)
{
	struct slim_audio_packet p;
	slim_audio_packet_from_cmd(cmd, &p);
	uint64_t now = slim_now_us();
	slim_audio_feed_push(audio->speaker, &p, again, now);
	if (now - audio->last_report_us >= REPORT_US && audio->listener->report) {
		audio->last_report_us = now;
		const struct slim_audio_stats *s = slim_audio_feed_stats(audio->speaker);
		struct slim_wire_audio_report report = {
			.received = (uint32_t)s->packets,
			.repaired = (uint32_t)s->repaired,
			.lost = (uint32_t)s->lost,
			.concealed = (uint32_t)s->concealed,
			.depth_ms = (uint16_t)s->depth_ms,
			.jitter_us = s->jitter_us,
		};
		audio->listener->report(audio->data, &report);
	}
}

void console_audio_reset(struct console_audio *audio)
{
	slim_audio_feed_reset(audio->speaker);
}

int console_audio_fd(const struct console_audio *audio)
{
	return audio ? audio->wake_fd : -1;
}

void console_audio_dispatch(struct console_audio *audio, bool send_mic)
{
	uint64_t n;
	(void)!read(audio->wake_fd, &n, sizeof(n));
	if (atomic_load(&audio->stopped) && !audio->said_stopped) {
		audio->said_stopped = true;
		slim_log(SLIM_LOG_ERROR, "audio: the PipeWire here is a session's own now (it has "
			"\"Console speaker\"): the console's sound stops, the session would hear itself");
	}
	struct heard h;
	while (slim_ring_read(audio->heard, &h, 1) == 1) {
		if (audio->listener->heard) {
			audio->listener->heard(audio->data, h.sound, h.at_us);
		}
	}
	struct mic_packet m;
	for (uint32_t old = slim_ring_count(audio->mic); old > MIC_QUEUE; old--) {
		slim_ring_read(audio->mic, &m, 1);
	}
	while (slim_ring_read(audio->mic, &m, 1) == 1) {
		m.p.data = m.data;
		if (send_mic && audio->listener->microphone) {
			audio->listener->microphone(audio->data, &m.p);
			audio->mic_sent++;
		}
	}
}

const struct slim_audio_stats *console_audio_stats(struct console_audio *audio)
{
	return slim_audio_feed_stats(audio->speaker);
}

uint64_t console_audio_mic_sent(const struct console_audio *audio)
{
	return audio->mic_sent;
}
