/*
 * PipeWire, for a console that runs on a desktop (or any machine with a
 * sound server): a playback stream to the default sink and, with the
 * microphone, a capture stream from the default source, both of 10 ms
 * quanta. PipeWire's data thread calls them; whatever its quantum, the
 * console's side moves whole 10 ms frames and keeps the remainder.
 *
 * A PipeWire that is a session's own (a console run beside the session, in
 * its runtime directory) is refused: played into, the session would hear
 * itself again and again. The session marks it from before it starts
 * (slim-pw-mark.h), which tells at once, however soon the console came;
 * its "Console speaker" appearing, then or later (a session that took
 * the user's PipeWire), stops the streams.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pipewire/pipewire.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "audio-internal.h"
#include "slim-log.h"
#include "slim-pipewire.h"
#include "slim-pw-mark.h"

#define LATENCY "480/48000"
/* What the compositor calls its sink (src/compositor/media/console-audio.c). */
#define SESSION_SINK "slimland-console-speaker"

struct console_audio_device {
	struct console_audio *audio;
	struct slim_pw *pw;
	struct pw_registry *registry;
	struct spa_hook registry_listener;
	int sync_seq;
	bool synced, session_sink;
	struct pw_stream *playback, *capture; /* pw's */

	/* the data thread's own */
	int16_t play_frame[SLIM_AUDIO_FRAME * CONSOLE_AUDIO_CHANNELS];
	uint32_t play_used; /* frames of play_frame already played */
	int16_t mic_frame[SLIM_AUDIO_FRAME * CONSOLE_MIC_CHANNELS];
	uint32_t mic_have;
};

/* How long what is queued now waits before it is heard. */
static uint64_t stream_delay_us(struct pw_stream *stream)
{
	struct pw_time t;
	if (pw_stream_get_time_n(stream, &t, sizeof(t)) < 0 || t.rate.denom == 0 || t.delay < 0) {
		return 0;
	}
	return (uint64_t)t.delay * 1000000 * t.rate.num / t.rate.denom;
}

static void handle_playback_process(void *data)
{
	struct console_audio_device *dev = data;
	struct pw_buffer *b = pw_stream_dequeue_buffer(dev->playback);
	if (!b) {
		return;
	}
	struct spa_data *d = &b->buffer->datas[0];
	if (d->data) {
		uint32_t stride = CONSOLE_AUDIO_CHANNELS * sizeof(int16_t);
		uint32_t frames = d->maxsize / stride;
		if (b->requested && b->requested < frames) {
			frames = (uint32_t)b->requested;
		}
		int16_t *out = d->data;
		uint64_t delay = stream_delay_us(dev->playback);
		for (uint32_t i = 0; i < frames; ) {
			if (dev->play_used == SLIM_AUDIO_FRAME) {
				uint64_t ahead = (uint64_t)i * 1000000 / SLIM_AUDIO_RATE;
				console_audio_pull(dev->audio, dev->play_frame, delay + ahead);
				dev->play_used = 0;
			}
			uint32_t n = SLIM_AUDIO_FRAME - dev->play_used;
			n = n < frames - i ? n : frames - i;
			memcpy(out + i * CONSOLE_AUDIO_CHANNELS,
				dev->play_frame + dev->play_used * CONSOLE_AUDIO_CHANNELS, n * stride);
			dev->play_used += n;
			i += n;
		}
		d->chunk->offset = 0;
		d->chunk->stride = (int32_t)stride;
		d->chunk->size = frames * stride;
	}
	pw_stream_queue_buffer(dev->playback, b);
}

static void handle_capture_process(void *data)
{
	struct console_audio_device *dev = data;
	struct pw_buffer *b = pw_stream_dequeue_buffer(dev->capture);
	if (!b) {
		return;
	}
	struct spa_data *d = &b->buffer->datas[0];
	if (d->data && d->chunk && d->chunk->offset <= d->maxsize &&
			d->chunk->size <= d->maxsize - d->chunk->offset) {
		const int16_t *in = (const int16_t *)((const uint8_t *)d->data + d->chunk->offset);
		uint32_t frames = d->chunk->size / (CONSOLE_MIC_CHANNELS * sizeof(int16_t));
		for (uint32_t i = 0; i < frames; i++) {
			dev->mic_frame[dev->mic_have++] = in[i];
			if (dev->mic_have == SLIM_AUDIO_FRAME) {
				console_audio_push_mic(dev->audio, dev->mic_frame);
				dev->mic_have = 0;
			}
		}
	}
	pw_stream_queue_buffer(dev->capture, b);
}

static const struct pw_stream_events playback_events = {
	PW_VERSION_STREAM_EVENTS,
	.process = handle_playback_process,
};

static const struct pw_stream_events capture_events = {
	PW_VERSION_STREAM_EVENTS,
	.process = handle_capture_process,
};

static struct pw_stream *make_stream(struct console_audio_device *dev, const char *name,
		const char *role, enum spa_direction direction, uint32_t channels,
		const struct pw_stream_events *events)
{
	struct pw_properties *props = pw_properties_new(
		PW_KEY_MEDIA_TYPE, "Audio",
		PW_KEY_MEDIA_CATEGORY, direction == PW_DIRECTION_OUTPUT ? "Playback" : "Capture",
		PW_KEY_MEDIA_ROLE, role,
		PW_KEY_NODE_LATENCY, LATENCY,
		PW_KEY_APP_NAME, "slimland-console",
		NULL);
	return slim_pw_add_stream(dev->pw, name, props, direction, channels,
		PW_STREAM_FLAG_AUTOCONNECT, events, dev);
}

/* PipeWire's loop thread (not its data thread), under the loop's lock. */
static void handle_registry_global(void *data, uint32_t id, uint32_t permissions,
		const char *type, uint32_t version, const struct spa_dict *props)
{
	struct console_audio_device *dev = data;
	const char *name = props ? spa_dict_lookup(props, PW_KEY_NODE_NAME) : NULL;
	if (strcmp(type, PW_TYPE_INTERFACE_Node) != 0 || !name || strcmp(name, SESSION_SINK) != 0 ||
			dev->session_sink) {
		return;
	}
	dev->session_sink = true;
	if (dev->playback) {
		/* a session came to this PipeWire after the console did */
		pw_stream_disconnect(dev->playback);
		if (dev->capture) {
			pw_stream_disconnect(dev->capture);
		}
		console_audio_stop(dev->audio);
	}
}

static const struct pw_registry_events registry_events = {
	PW_VERSION_REGISTRY_EVENTS,
	.global = handle_registry_global,
};

static void handle_core_done(void *data, uint32_t id, int seq)
{
	struct console_audio_device *dev = data;
	if (id == PW_ID_CORE && seq == dev->sync_seq) {
		dev->synced = true;
		pw_thread_loop_signal(dev->pw->thread, false);
	}
}

static const struct pw_core_events core_events = {
	PW_VERSION_CORE_EVENTS,
	.done = handle_core_done,
};

/*
 * Under the loop's lock: whether the server lists a session's sink (a
 * round trip) or, connected, is marked as a session's.
 */
static bool is_a_sessions(struct console_audio_device *dev)
{
	dev->registry = pw_core_get_registry(dev->pw->core, PW_VERSION_REGISTRY, 0);
	if (!dev->registry) {
		return false;
	}
	pw_registry_add_listener(dev->registry, &dev->registry_listener, &registry_events, dev);
	dev->sync_seq = pw_core_sync(dev->pw->core, PW_ID_CORE, 0);
	while (!dev->synced) {
		if (pw_thread_loop_timed_wait(dev->pw->thread, 2) != 0) {
			break; /* a server that does not answer: its streams will not work either */
		}
	}
	return dev->session_sink || slim_pw_marked();
}

static void pipewire_destroy(struct console_audio_device *dev)
{
	if (dev->registry) {
		/* before the core it came from; no callback runs meanwhile */
		pw_thread_loop_lock(dev->pw->thread);
		spa_hook_remove(&dev->registry_listener);
		pw_proxy_destroy((struct pw_proxy *)dev->registry);
		pw_thread_loop_unlock(dev->pw->thread);
	}
	slim_pw_destroy(dev->pw);
	free(dev);
}

static struct console_audio_device *pipewire_create(struct console_audio *audio,
		const char *name, bool *microphone, char *err, size_t err_len)
{
	struct console_audio_device *dev = calloc(1, sizeof(*dev));
	if (!dev) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	dev->audio = audio;
	dev->play_used = SLIM_AUDIO_FRAME;
	const char *why;
	dev->pw = slim_pw_connect("slimland-console-audio", &core_events, dev, &why);
	if (!dev->pw) {
		snprintf(err, err_len, "%s", why);
		goto fail;
	}
	bool echo = is_a_sessions(dev);
	if (!echo) {
		dev->playback = make_stream(dev, "Session", "Communication", PW_DIRECTION_OUTPUT,
			CONSOLE_AUDIO_CHANNELS, &playback_events);
		if (*microphone) {
			dev->capture = make_stream(dev, "Session microphone", "Communication",
				PW_DIRECTION_INPUT, CONSOLE_MIC_CHANNELS, &capture_events);
		}
	}
	pw_thread_loop_unlock(dev->pw->thread);
	if (echo) {
		console_audio_no_fallback(audio);
		snprintf(err, err_len, "the PipeWire here is a session's own: the session would "
			"hear itself");
		goto fail;
	}
	if (!dev->playback) {
		snprintf(err, err_len, "PipeWire: cannot make a playback stream");
		goto fail;
	}
	*microphone = dev->capture != NULL;
	return dev;
fail:
	pipewire_destroy(dev);
	return NULL;
}

const struct console_audio_device_impl console_audio_pipewire = {
	.create = pipewire_create,
	.destroy = pipewire_destroy,
};
