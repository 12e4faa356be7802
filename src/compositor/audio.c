/*
 * The session's end of its sound: two PipeWire nodes of the compositor's,
 * made the defaults by their priority (WirePlumber picks the highest):
 *
 *   "Console speaker"     a sink: what clients play is mixed by PipeWire
 *                         and captured here, for the console the session
 *                         shows on; with none, it plays into nothing, at
 *                         the sound server's pace (clients never block)
 *   "Console microphone"  a source: the console's microphone, silence
 *                         while there is none
 *
 * PipeWire calls the process callbacks on its own thread (pw_thread_loop);
 * what they hand to the compositor goes through an eventfd to its event
 * loop. PipeWire missing or dying is said once; the pixels never wait on it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "audio.h"
#include "slim-log.h"

#define RATE 48000
#define CHANNELS 2
/* Above every device's, so that the console is where sound goes by default. */
#define PRIORITY "3000"
/* 10 ms a quantum: the latency budget is 40 ms from client to console. */
#define LATENCY "480/48000"
/* Louder than this (of 32767) is sound, not a stream of zeros. */
#define AUDIBLE 64

struct slim_audio {
	struct pw_thread_loop *thread;
	struct pw_context *context;
	struct pw_core *core;
	struct spa_hook core_listener;
	struct pw_stream *speaker, *microphone;
	struct spa_hook speaker_listener, microphone_listener;

	/* from PipeWire's thread to the compositor's */
	int wake_fd;
	struct wl_event_source *wake;
	atomic_bool heard;      /* the speaker got sound */
	atomic_bool lost;       /* the connection to PipeWire broke */
	bool said_heard, said_lost;
};

static void wake(struct slim_audio *audio)
{
	uint64_t one = 1;
	(void)!write(audio->wake_fd, &one, sizeof(one));
}

/* PipeWire's thread: what clients played, mixed. */
static void handle_speaker_process(void *data)
{
	struct slim_audio *audio = data;
	struct pw_buffer *b = pw_stream_dequeue_buffer(audio->speaker);
	if (!b) {
		return;
	}
	struct spa_data *d = &b->buffer->datas[0];
	const int16_t *s = d->data;
	uint32_t n = d->data && d->chunk ? d->chunk->size / sizeof(int16_t) : 0;
	if (!atomic_load_explicit(&audio->heard, memory_order_relaxed)) {
		for (uint32_t i = 0; i < n; i++) {
			if (s[i] > AUDIBLE || s[i] < -AUDIBLE) {
				atomic_store(&audio->heard, true);
				wake(audio);
				break;
			}
		}
	}
	pw_stream_queue_buffer(audio->speaker, b);
}

/* PipeWire's thread: the console's microphone; silence until one speaks. */
static void handle_microphone_process(void *data)
{
	struct slim_audio *audio = data;
	struct pw_buffer *b = pw_stream_dequeue_buffer(audio->microphone);
	if (!b) {
		return;
	}
	struct spa_data *d = &b->buffer->datas[0];
	if (d->data) {
		uint32_t stride = CHANNELS * sizeof(int16_t);
		uint32_t frames = d->maxsize / stride;
		if (b->requested && b->requested < frames) {
			frames = (uint32_t)b->requested;
		}
		memset(d->data, 0, (size_t)frames * stride);
		d->chunk->offset = 0;
		d->chunk->stride = (int32_t)stride;
		d->chunk->size = frames * stride;
	}
	pw_stream_queue_buffer(audio->microphone, b);
}

static const struct pw_stream_events speaker_events = {
	PW_VERSION_STREAM_EVENTS,
	.process = handle_speaker_process,
};

static const struct pw_stream_events microphone_events = {
	PW_VERSION_STREAM_EVENTS,
	.process = handle_microphone_process,
};

static void handle_core_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct slim_audio *audio = data;
	if (id == PW_ID_CORE && res == -EPIPE) {
		atomic_store(&audio->lost, true);
		wake(audio);
	}
}

static const struct pw_core_events core_events = {
	PW_VERSION_CORE_EVENTS,
	.error = handle_core_error,
};

/* The compositor's thread. */
static int handle_wake(int fd, uint32_t mask, void *data)
{
	struct slim_audio *audio = data;
	uint64_t n;
	(void)!read(fd, &n, sizeof(n));
	if (atomic_load(&audio->heard) && !audio->said_heard) {
		audio->said_heard = true;
		slim_log(SLIM_LOG_INFO, "audio: the console speaker plays sound");
	}
	if (atomic_load(&audio->lost) && !audio->said_lost) {
		audio->said_lost = true;
		slim_log(SLIM_LOG_ERROR, "audio: PipeWire went away: the session has no sound");
	}
	return 0;
}

static struct pw_stream *make_stream(struct slim_audio *audio, const char *name,
		const char *description, const char *class, enum spa_direction direction,
		struct spa_hook *listener, const struct pw_stream_events *events)
{
	struct pw_properties *props = pw_properties_new(
		PW_KEY_NODE_NAME, name,
		PW_KEY_NODE_DESCRIPTION, description,
		PW_KEY_MEDIA_CLASS, class,
		PW_KEY_NODE_LATENCY, LATENCY,
		"priority.session", PRIORITY,
		"priority.driver", PRIORITY,
		NULL);
	struct pw_stream *stream = props ? pw_stream_new(audio->core, name, props) : NULL;
	if (!stream) {
		return NULL;
	}
	pw_stream_add_listener(stream, listener, events, audio);
	uint8_t buf[512];
	struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
	const struct spa_pod *params[] = {
		spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat,
			&SPA_AUDIO_INFO_RAW_INIT(.format = SPA_AUDIO_FORMAT_S16,
				.channels = CHANNELS, .rate = RATE,
				.position = { SPA_AUDIO_CHANNEL_FL, SPA_AUDIO_CHANNEL_FR })),
	};
	if (pw_stream_connect(stream, direction, PW_ID_ANY,
			PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS, params, 1) < 0) {
		spa_hook_remove(listener);
		pw_stream_destroy(stream);
		return NULL;
	}
	return stream;
}

struct slim_audio *audio_create(struct wl_event_loop *loop)
{
	struct slim_audio *audio = calloc(1, sizeof(*audio));
	if (!audio) {
		return NULL;
	}
	pw_init(NULL, NULL);
	audio->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	audio->thread = pw_thread_loop_new("slimland-audio", NULL);
	if (audio->wake_fd < 0 || !audio->thread) {
		goto fail;
	}
	audio->wake = wl_event_loop_add_fd(loop, audio->wake_fd, WL_EVENT_READABLE,
		handle_wake, audio);
	audio->context = pw_context_new(pw_thread_loop_get_loop(audio->thread), NULL, 0);
	if (!audio->wake || !audio->context) {
		goto fail;
	}
	pw_thread_loop_lock(audio->thread);
	if (pw_thread_loop_start(audio->thread) < 0) {
		pw_thread_loop_unlock(audio->thread);
		goto fail;
	}
	audio->core = pw_context_connect(audio->context, NULL, 0);
	if (audio->core) {
		pw_core_add_listener(audio->core, &audio->core_listener, &core_events, audio);
		audio->speaker = make_stream(audio, "slimland-console-speaker", "Console speaker",
			"Audio/Sink", PW_DIRECTION_INPUT, &audio->speaker_listener, &speaker_events);
		audio->microphone = make_stream(audio, "slimland-console-microphone",
			"Console microphone", "Audio/Source", PW_DIRECTION_OUTPUT,
			&audio->microphone_listener, &microphone_events);
	}
	pw_thread_loop_unlock(audio->thread);
	if (!audio->core) {
		slim_log(SLIM_LOG_ERROR, "audio: no PipeWire to connect to: the session has no sound");
		goto fail;
	}
	if (!audio->speaker || !audio->microphone) {
		slim_log(SLIM_LOG_ERROR, "audio: cannot make the console's speaker and microphone");
		goto fail;
	}
	slim_log(SLIM_LOG_INFO, "audio: sound goes to \"Console speaker\", "
		"comes from \"Console microphone\"");
	return audio;
fail:
	audio_destroy(audio);
	return NULL;
}

void audio_destroy(struct slim_audio *audio)
{
	if (!audio) {
		return;
	}
	if (audio->thread) {
		/* stopped first: no callback runs while the objects go */
		pw_thread_loop_stop(audio->thread);
	}
	if (audio->speaker) {
		spa_hook_remove(&audio->speaker_listener);
		pw_stream_destroy(audio->speaker);
	}
	if (audio->microphone) {
		spa_hook_remove(&audio->microphone_listener);
		pw_stream_destroy(audio->microphone);
	}
	if (audio->core) {
		spa_hook_remove(&audio->core_listener);
		pw_core_disconnect(audio->core);
	}
	if (audio->context) {
		pw_context_destroy(audio->context);
	}
	if (audio->thread) {
		pw_thread_loop_destroy(audio->thread);
	}
	if (audio->wake) {
		wl_event_source_remove(audio->wake);
	}
	if (audio->wake_fd >= 0) {
		close(audio->wake_fd);
	}
	free(audio);
	pw_deinit();
}
