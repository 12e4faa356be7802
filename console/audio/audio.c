/*
 * The console's sound between its poll() loop and the device's threads:
 * the speaker's jitter buffer (pushed from the loop, pulled by the
 * device), and a queue of the microphone's coded packets (pushed by the
 * device, sent from the loop, which an eventfd wakes). One mutex guards
 * both; each holder does one push or one 10 ms pull.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "audio-internal.h"
#include "slim-log.h"

/* The speaker's jitter buffer: 20 ms on a quiet LAN, up to 200 ms. */
#define JITTER_MIN_MS 20
#define JITTER_MAX_MS 200
/* The microphone: Opus, mono, speech-sized. */
#define MIC_BITRATE 32000
/* Coded microphone packets waiting for the loop: 160 ms. */
#define MIC_QUEUE 16
/* How often the playback's figures go to the session while sound arrives. */
#define REPORT_US 2000000
/* Onset: louder than this after at least this much quiet. */
#define ONSET_LEVEL 1000
#define ONSET_QUIET_FRAMES 10

struct mic_packet {
	struct slim_audio_packet p;
	uint8_t data[SLIM_AUDIO_MAX_PAYLOAD];
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

	pthread_mutex_t lock;
	/* under the lock */
	struct slim_audio_jitter *jitter;
	struct slim_audio_stats stats; /* a copy, for the loop */
	struct slim_audio_encoder *mic_enc;
	struct mic_packet mic[MIC_QUEUE];
	unsigned mic_head, mic_count;
	uint64_t mic_dropped;
	unsigned quiet; /* frames played quiet in a row (a device that played nothing: quiet) */
	uint64_t last_pull_us;
	uint64_t onset_us; /* an onset not yet told; 0: none */
	uint64_t quiet_us; /* the end of a sound, not yet told; 0: none */
	bool sounding;     /* an onset was told and no end yet */
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

void console_audio_pull(struct console_audio *audio, int16_t *pcm, uint64_t delay_us)
{
	uint64_t now = slim_now_us();
	pthread_mutex_lock(&audio->lock);
	if (now - audio->last_pull_us > ONSET_QUIET_FRAMES * 10000) {
		/* a sound server runs its graph only while something plays: quiet till now */
		audio->quiet = ONSET_QUIET_FRAMES;
	}
	audio->last_pull_us = now;
	slim_audio_jitter_pull(audio->jitter, pcm);
	size_t at;
	bool heard = loud(pcm, SLIM_AUDIO_FRAME * CONSOLE_AUDIO_CHANNELS, &at);
	bool tell = heard && audio->quiet >= ONSET_QUIET_FRAMES;
	if (tell) {
		audio->onset_us = now + delay_us +
			(uint64_t)(at / CONSOLE_AUDIO_CHANNELS) * 1000000 / SLIM_AUDIO_RATE;
		audio->sounding = true;
	}
	audio->quiet = heard ? 0 : audio->quiet + 1;
	if (audio->sounding && audio->quiet == ONSET_QUIET_FRAMES) {
		/* as long a quiet as an onset needs: the sound is over, all of it played */
		audio->quiet_us = now + delay_us;
		audio->sounding = false;
		tell = true;
	}
	pthread_mutex_unlock(&audio->lock);
	if (tell) {
		wake(audio);
	}
}

void console_audio_push_mic(struct console_audio *audio, const int16_t *pcm)
{
	pthread_mutex_lock(&audio->lock);
	/* the oldest goes if the loop has not sent it: the newest sound matters */
	if (audio->mic_count == MIC_QUEUE) {
		audio->mic_head = (audio->mic_head + 1) % MIC_QUEUE;
		audio->mic_count--;
		audio->mic_dropped++;
	}
	struct mic_packet *m = &audio->mic[(audio->mic_head + audio->mic_count) % MIC_QUEUE];
	if (slim_audio_encode(audio->mic_enc, pcm, m->data, sizeof(m->data), &m->p) > 0) {
		audio->mic_count++;
	}
	pthread_mutex_unlock(&audio->lock);
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
	pthread_mutex_init(&audio->lock, NULL);
	audio->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	audio->jitter = slim_audio_jitter_create(CONSOLE_AUDIO_CHANNELS, JITTER_MIN_MS,
		JITTER_MAX_MS);
	audio->mic_enc = slim_audio_encoder_create(SLIM_AUDIO_OPUS, CONSOLE_MIC_CHANNELS,
		MIC_BITRATE, 10);
	if (audio->wake_fd < 0 || !audio->jitter || !audio->mic_enc) {
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
	slim_audio_jitter_destroy(audio->jitter);
	slim_audio_encoder_destroy(audio->mic_enc);
	if (audio->wake_fd >= 0) {
		close(audio->wake_fd);
	}
	pthread_mutex_destroy(&audio->lock);
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
	pthread_mutex_lock(&audio->lock);
	if (again) {
		slim_audio_jitter_push_again(audio->jitter, &p);
	} else {
		slim_audio_jitter_push(audio->jitter, &p, now);
	}
	audio->stats = *slim_audio_jitter_stats(audio->jitter);
	pthread_mutex_unlock(&audio->lock);
	if (now - audio->last_report_us >= REPORT_US && audio->listener->report) {
		audio->last_report_us = now;
		const struct slim_audio_stats *s = &audio->stats;
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
	pthread_mutex_lock(&audio->lock);
	slim_audio_jitter_reset(audio->jitter);
	pthread_mutex_unlock(&audio->lock);
}

int console_audio_fd(const struct console_audio *audio)
{
	return audio ? audio->wake_fd : -1;
}

void console_audio_dispatch(struct console_audio *audio, bool send_mic)
{
	uint64_t n;
	(void)!read(audio->wake_fd, &n, sizeof(n));
	for (;;) {
		struct mic_packet m;
		uint64_t onset = 0, quiet = 0;
		pthread_mutex_lock(&audio->lock);
		bool have = audio->mic_count > 0;
		if (have) {
			m = audio->mic[audio->mic_head];
			audio->mic_head = (audio->mic_head + 1) % MIC_QUEUE;
			audio->mic_count--;
		}
		onset = audio->onset_us;
		quiet = audio->quiet_us;
		audio->onset_us = audio->quiet_us = 0;
		pthread_mutex_unlock(&audio->lock);
		if (onset && audio->listener->heard) {
			audio->listener->heard(audio->data, true, onset);
		}
		if (quiet && audio->listener->heard) {
			audio->listener->heard(audio->data, false, quiet);
		}
		if (!have) {
			break;
		}
		m.p.data = m.data;
		if (send_mic && audio->listener->microphone) {
			audio->listener->microphone(audio->data, &m.p);
		}
	}
}

const struct slim_audio_stats *console_audio_stats(const struct console_audio *audio)
{
	return &audio->stats;
}
