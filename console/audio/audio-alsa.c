/*
 * ALSA, for a console without a sound server: one thread plays, one
 * captures, 10 ms a period. Both keep time with the monotonic clock and
 * never block in ALSA (the PCMs are opened non-blocking): a device that
 * cannot take a period yet is tried again a little later, and plugins that
 * never wait (null, file) are paced all the same. A device that underruns
 * or overruns is prepared again; a sound card is never what stops the
 * console.
 */
#define _GNU_SOURCE
#include <alsa/asoundlib.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "audio-internal.h"
#include "slim-clock.h"
#include "slim-log.h"

#define PERIOD_US 10000
/* What the device holds ahead of what is heard: two periods. */
#define LATENCY_US 20000
/* Further behind than this, the clock starts again from now. */
#define BEHIND_US 50000

struct console_audio_device {
	struct console_audio *audio;
	snd_pcm_t *playback, *capture;
	pthread_t play_thread, capture_thread;
	bool play_started, capture_started;
	atomic_bool stop;
};

static void sleep_until(uint64_t us)
{
	struct timespec ts = { .tv_sec = (time_t)(us / 1000000),
		.tv_nsec = (long)(us % 1000000) * 1000 };
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/* The next period's time, or now if the thread fell far behind. */
static uint64_t next_period(uint64_t next)
{
	next += PERIOD_US;
	uint64_t now = slim_now_us();
	return now > next + BEHIND_US ? now : next;
}

static void *play_main(void *data)
{
	struct console_audio_device *dev = data;
	int16_t pcm[SLIM_AUDIO_FRAME * CONSOLE_AUDIO_CHANNELS];
	bool pending = false;
	uint64_t next = slim_now_us();
	while (!atomic_load(&dev->stop)) {
		if (!pending) {
			snd_pcm_sframes_t delay = 0;
			if (snd_pcm_delay(dev->playback, &delay) < 0 || delay < 0) {
				delay = 0;
			}
			console_audio_pull(dev->audio, pcm,
				(uint64_t)delay * 1000000 / SLIM_AUDIO_RATE);
			pending = true;
		}
		snd_pcm_sframes_t n = snd_pcm_writei(dev->playback, pcm, SLIM_AUDIO_FRAME);
		if (n == -EAGAIN) {
			/* the device is full: its own clock runs a little slow */
			sleep_until(slim_now_us() + PERIOD_US / 4);
			continue;
		}
		if (n < 0 && snd_pcm_recover(dev->playback, (int)n, 1) < 0) {
			snd_pcm_prepare(dev->playback);
		}
		pending = false;
		next = next_period(next);
		sleep_until(next);
	}
	return NULL;
}

static void *capture_main(void *data)
{
	struct console_audio_device *dev = data;
	int16_t pcm[SLIM_AUDIO_FRAME * CONSOLE_MIC_CHANNELS];
	uint64_t next = slim_now_us();
	snd_pcm_start(dev->capture);
	while (!atomic_load(&dev->stop)) {
		snd_pcm_sframes_t n = snd_pcm_readi(dev->capture, pcm, SLIM_AUDIO_FRAME);
		if (n == -EAGAIN || (n >= 0 && n < SLIM_AUDIO_FRAME)) {
			/* not a whole period yet (a partial read is kept: ALSA's frames are gone) */
			if (n > 0) {
				memset(pcm + n * CONSOLE_MIC_CHANNELS, 0,
					(size_t)(SLIM_AUDIO_FRAME - n) * CONSOLE_MIC_CHANNELS *
					sizeof(int16_t));
			} else {
				sleep_until(slim_now_us() + PERIOD_US / 4);
				continue;
			}
		} else if (n < 0) {
			if (snd_pcm_recover(dev->capture, (int)n, 1) < 0) {
				snd_pcm_prepare(dev->capture);
			}
			snd_pcm_start(dev->capture);
			continue;
		}
		console_audio_push_mic(dev->audio, pcm);
		next = next_period(next);
		sleep_until(next);
	}
	return NULL;
}

static snd_pcm_t *open_pcm(const char *name, snd_pcm_stream_t stream, unsigned channels,
		char *err, size_t err_len)
{
	snd_pcm_t *pcm;
	int e = snd_pcm_open(&pcm, name, stream, SND_PCM_NONBLOCK);
	if (e < 0) {
		snprintf(err, err_len, "ALSA %s: %s", name, snd_strerror(e));
		return NULL;
	}
	e = snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED,
		channels, SLIM_AUDIO_RATE, 1, LATENCY_US * 2);
	if (e < 0) {
		snprintf(err, err_len, "ALSA %s: 48 kHz, %u channels: %s", name, channels,
			snd_strerror(e));
		snd_pcm_close(pcm);
		return NULL;
	}
	return pcm;
}

static void alsa_destroy(struct console_audio_device *dev)
{
	atomic_store(&dev->stop, true);
	if (dev->play_started) {
		pthread_join(dev->play_thread, NULL);
	}
	if (dev->capture_started) {
		pthread_join(dev->capture_thread, NULL);
	}
	if (dev->playback) {
		snd_pcm_close(dev->playback);
	}
	if (dev->capture) {
		snd_pcm_close(dev->capture);
	}
	free(dev);
}

static struct console_audio_device *alsa_create(struct console_audio *audio, const char *name,
		bool *microphone, char *err, size_t err_len)
{
	struct console_audio_device *dev = calloc(1, sizeof(*dev));
	if (!dev) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	dev->audio = audio;
	dev->playback = open_pcm(name, SND_PCM_STREAM_PLAYBACK, CONSOLE_AUDIO_CHANNELS, err,
		err_len);
	if (!dev->playback) {
		free(dev);
		return NULL;
	}
	if (*microphone) {
		char mic_err[256];
		dev->capture = open_pcm(name, SND_PCM_STREAM_CAPTURE, CONSOLE_MIC_CHANNELS, mic_err,
			sizeof(mic_err));
		if (!dev->capture) {
			/* a speaker without a microphone is still worth having */
			slim_log(SLIM_LOG_ERROR, "audio: no microphone: %s", mic_err);
		}
	}
	dev->play_started = pthread_create(&dev->play_thread, NULL, play_main, dev) == 0;
	dev->capture_started = dev->capture &&
		pthread_create(&dev->capture_thread, NULL, capture_main, dev) == 0;
	*microphone = dev->capture_started;
	if (!dev->play_started) {
		snprintf(err, err_len, "cannot start a thread");
		alsa_destroy(dev);
		return NULL;
	}
	return dev;
}

const struct console_audio_device_impl console_audio_alsa = {
	.create = alsa_create,
	.destroy = alsa_destroy,
};
