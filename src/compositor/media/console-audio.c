/*
 * The session's end of its sound: two PipeWire nodes of the compositor's,
 * made the defaults by their priority (WirePlumber picks the highest):
 *
 *   "Console speaker"     a sink: what clients play is mixed by PipeWire
 *                         and captured here, 10 ms at a time, for the
 *                         console the session shows on; with none, it
 *                         plays into nothing, at the sound server's pace
 *                         (clients never block)
 *   "Console microphone"  a source: the console's microphone through a
 *                         jitter buffer, silence while there is none
 *
 * PipeWire calls the process callbacks on its real-time data thread,
 * which never waits on the compositor's: the speaker's samples go to the
 * event loop through a ring (slim-ring.h: a client that floods the sink
 * overwrites nothing, the ring drops what the compositor has not taken)
 * and an eventfd; the microphone's packets come the other way into a
 * jitter buffer the data thread alone plays (slim-audio-feed.h). Nothing
 * there logs, allocates or takes a lock. PipeWire missing or dying is said
 * once; the pixels never wait on it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pipewire/pipewire.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "console-audio.h"
#include "slim-audio-feed.h"
#include "slim-log.h"
#include "slim-pipewire.h"
#include "slim-ring.h"

#define CHANNELS 2
/* Above every device's, so that the console is where sound goes by default. */
#define PRIORITY "3000"
/* 10 ms a quantum: the latency budget is 40 ms from client to console. */
#define LATENCY "480/48000"
/* Louder than this (of 32767) is sound, not a stream of zeros. */
#define AUDIBLE 64
/* The speaker's ring: 320 ms of stereo frames, a power of two. */
#define RING_FRAMES 16384u
/* The microphone's jitter buffer: mono, 20 to 200 ms. */
#define MIC_MIN_MS 20
#define MIC_MAX_MS 200
/* Clients of the session's own PipeWire told apart from the session's daemons. */
#define CLIENTS_KEPT 64

struct slim_audio {
	struct slim_pw *pw;
	struct pw_stream *speaker, *microphone; /* pw's */
	struct pw_registry *registry;
	struct spa_hook registry_listener;

	/*
	 * PipeWire's thread's: the clients that are not the session's own
	 * (its daemons, the compositor), by id; more than CLIENTS_KEPT at once
	 * count as used for good.
	 */
	uint32_t users[CLIENTS_KEPT];
	int n_users;
	atomic_int users_now; /* n_users, or CLIENTS_KEPT + 1 once more came */

	const struct slim_audio_handler *handler;
	void *data;

	/* the speaker's stereo frames, from PipeWire's thread to the compositor's */
	struct slim_ring *ring;
	uint32_t ring_part; /* frames put in (or dropped) since the last whole 10 ms */

	/* the console's microphone, from the compositor's thread to PipeWire's */
	struct slim_audio_feed *mic;
	int16_t mic_frame[SLIM_AUDIO_FRAME]; /* pulled, not yet all played: PipeWire's thread's */
	uint32_t mic_used;                   /* of mic_frame, played */
	uint64_t mic_said;                   /* packets the log has counted */

	int wake_fd;
	struct wl_event_source *wake;
	atomic_bool ready;      /* the speaker is a node of PipeWire's */
	atomic_bool heard;      /* the speaker got sound */
	atomic_bool lost;       /* the connection to PipeWire broke */
	bool said_ready, said_heard, said_lost;
};

static void wake(struct slim_audio *audio)
{
	uint64_t one = 1;
	(void)!write(audio->wake_fd, &one, sizeof(one));
}

/* PipeWire's thread: into the ring; what the compositor has not taken is dropped. */
static void ring_put(struct slim_audio *audio, const int16_t *s, uint32_t frames)
{
	slim_ring_write(audio->ring, s, frames);
	audio->ring_part += frames;
	if (audio->ring_part >= SLIM_AUDIO_FRAME) {
		audio->ring_part %= SLIM_AUDIO_FRAME;
		wake(audio); /* another whole 10 ms */
	}
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
	if (d->chunk && d->chunk->offset + d->chunk->size > d->maxsize) {
		n = 0;
	} else if (n > 0) {
		s = (const int16_t *)((const uint8_t *)d->data + d->chunk->offset);
		ring_put(audio, s, n / CHANNELS);
	}
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

/*
 * PipeWire's thread: the console's microphone (mono, as microphones are),
 * 10 ms pulled from the jitter buffer at a time whatever the quantum;
 * silence until a console speaks.
 */
static void handle_microphone_process(void *data)
{
	struct slim_audio *audio = data;
	struct pw_buffer *b = pw_stream_dequeue_buffer(audio->microphone);
	if (!b) {
		return;
	}
	struct spa_data *d = &b->buffer->datas[0];
	if (d->data) {
		uint32_t stride = sizeof(int16_t);
		uint32_t frames = d->maxsize / stride;
		if (b->requested && b->requested < frames) {
			frames = (uint32_t)b->requested;
		}
		int16_t *out = d->data;
		uint64_t now = slim_now_us();
		for (uint32_t i = 0; i < frames; i++) {
			if (audio->mic_used == SLIM_AUDIO_FRAME) {
				slim_audio_feed_pull(audio->mic, audio->mic_frame, now);
				audio->mic_used = 0;
			}
			out[i] = audio->mic_frame[audio->mic_used++];
		}
		d->chunk->offset = 0;
		d->chunk->stride = (int32_t)stride;
		d->chunk->size = frames * stride;
	}
	pw_stream_queue_buffer(audio->microphone, b);
}

/* PipeWire's thread: the speaker made, as a node others may be linked to. */
static void handle_speaker_state_changed(void *data, enum pw_stream_state old,
		enum pw_stream_state state, const char *error)
{
	struct slim_audio *audio = data;
	if (state == PW_STREAM_STATE_PAUSED || state == PW_STREAM_STATE_STREAMING) {
		atomic_store(&audio->ready, true);
		wake(audio);
	}
}

static const struct pw_stream_events speaker_events = {
	PW_VERSION_STREAM_EVENTS,
	.state_changed = handle_speaker_state_changed,
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
	/* every whole 10 ms the ring holds, oldest first */
	while (slim_ring_count(audio->ring) >= SLIM_AUDIO_FRAME) {
		int16_t pcm[SLIM_AUDIO_FRAME * CHANNELS];
		slim_ring_read(audio->ring, pcm, SLIM_AUDIO_FRAME);
		audio->handler->speaker(audio->data, pcm);
	}
	if (atomic_load(&audio->ready) && !audio->said_ready) {
		audio->said_ready = true;
		if (audio->handler->ready) {
			audio->handler->ready(audio->data);
		}
	}
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

/*
 * Whether a client of PipeWire is the session's own: the compositor, or
 * a daemon it runs (WirePlumber; pipewire-pulse's own connection, whose
 * PulseAudio clients each come as a client of their own).
 */
static bool own_client(const struct spa_dict *props)
{
	static const char *const own[] = { "pipewire", "WirePlumber", "WirePlumber [export]" };
	const char *pid = spa_dict_lookup(props, PW_KEY_SEC_PID);
	const char *name = spa_dict_lookup(props, PW_KEY_APP_NAME);
	if (pid && strtol(pid, NULL, 10) == (long)getpid()) {
		return true;
	}
	for (size_t i = 0; name && i < sizeof(own) / sizeof(own[0]); i++) {
		if (strcmp(name, own[i]) == 0) {
			return true;
		}
	}
	return false;
}

/* PipeWire's thread. */
static void handle_registry_global(void *data, uint32_t id, uint32_t permissions,
		const char *type, uint32_t version, const struct spa_dict *props)
{
	struct slim_audio *audio = data;
	if (strcmp(type, PW_TYPE_INTERFACE_Client) != 0 || !props || own_client(props)) {
		return;
	}
	if (audio->n_users < CLIENTS_KEPT) {
		audio->users[audio->n_users++] = id;
		atomic_store(&audio->users_now, audio->n_users);
	} else {
		atomic_store(&audio->users_now, CLIENTS_KEPT + 1);
	}
}

/* PipeWire's thread. */
static void handle_registry_global_remove(void *data, uint32_t id)
{
	struct slim_audio *audio = data;
	for (int i = 0; i < audio->n_users; i++) {
		if (audio->users[i] == id) {
			audio->users[i] = audio->users[--audio->n_users];
			if (atomic_load(&audio->users_now) <= CLIENTS_KEPT) {
				atomic_store(&audio->users_now, audio->n_users);
			}
			return;
		}
	}
}

static const struct pw_registry_events registry_events = {
	PW_VERSION_REGISTRY_EVENTS,
	.global = handle_registry_global,
	.global_remove = handle_registry_global_remove,
};

int audio_users(const struct slim_audio *audio)
{
	return atomic_load(&((struct slim_audio *)audio)->users_now);
}

static struct pw_stream *make_stream(struct slim_audio *audio, const char *name,
		const char *description, const char *class, enum spa_direction direction,
		uint32_t channels, const struct pw_stream_events *events)
{
	struct pw_properties *props = pw_properties_new(
		PW_KEY_NODE_NAME, name,
		PW_KEY_NODE_DESCRIPTION, description,
		PW_KEY_MEDIA_CLASS, class,
		PW_KEY_NODE_LATENCY, LATENCY,
		"priority.session", PRIORITY,
		"priority.driver", PRIORITY,
		NULL);
	return slim_pw_add_stream(audio->pw, name, props, direction, channels, 0, events, audio);
}

void audio_microphone_packet(struct slim_audio *audio, const struct slim_audio_packet *p,
		bool again)
{
	slim_audio_feed_push(audio->mic, p, again, slim_now_us());
}

/* What the microphone's stream did, once it did something new. */
static void say_microphone_stats(struct slim_audio *audio)
{
	const struct slim_audio_stats *st = slim_audio_feed_stats(audio->mic);
	if (st->packets + st->unheard > audio->mic_said) {
		slim_log(SLIM_LOG_INFO, "audio: the microphone so far: %llu packets, %llu lost "
			"(%llu rebuilt, %llu concealed), %llu late, %llu skipped, %llu bad, "
			"%llu unheard (nothing recorded); buffer %u ms, jitter %u us",
			(unsigned long long)st->packets, (unsigned long long)st->lost,
			(unsigned long long)st->recovered, (unsigned long long)st->concealed,
			(unsigned long long)st->late, (unsigned long long)st->skipped,
			(unsigned long long)st->bad, (unsigned long long)st->unheard,
			st->depth_ms, st->jitter_us);
		audio->mic_said = st->packets + st->unheard;
	}
}

void audio_microphone_reset(struct slim_audio *audio)
{
	say_microphone_stats(audio);
	slim_audio_feed_reset(audio->mic);
}

struct slim_audio *audio_create(struct wl_event_loop *loop,
		const struct slim_audio_handler *handler, void *data)
{
	struct slim_audio *audio = calloc(1, sizeof(*audio));
	if (!audio) {
		return NULL;
	}
	audio->handler = handler;
	audio->data = data;
	audio->mic_used = SLIM_AUDIO_FRAME;
	audio->ring = slim_ring_create(CHANNELS * sizeof(int16_t), RING_FRAMES);
	audio->mic = slim_audio_feed_create(1, MIC_MIN_MS, MIC_MAX_MS);
	audio->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (audio->wake_fd < 0 || !audio->ring || !audio->mic) {
		goto fail;
	}
	audio->wake = wl_event_loop_add_fd(loop, audio->wake_fd, WL_EVENT_READABLE,
		handle_wake, audio);
	if (!audio->wake) {
		goto fail;
	}
	const char *why;
	audio->pw = slim_pw_connect("slimland-audio", &core_events, audio, &why);
	if (!audio->pw) {
		slim_log(SLIM_LOG_ERROR, "audio: %s: the session has no sound", why);
		goto fail;
	}
	audio->speaker = make_stream(audio, "slimland-console-speaker", "Console speaker",
		"Audio/Sink", PW_DIRECTION_INPUT, CHANNELS, &speaker_events);
	audio->microphone = make_stream(audio, "slimland-console-microphone",
		"Console microphone", "Audio/Source", PW_DIRECTION_OUTPUT, 1, &microphone_events);
	audio->registry = pw_core_get_registry(audio->pw->core, PW_VERSION_REGISTRY, 0);
	if (audio->registry) {
		pw_registry_add_listener(audio->registry, &audio->registry_listener,
			&registry_events, audio);
	}
	pw_thread_loop_unlock(audio->pw->thread);
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
	/* the registry, a proxy of ours, goes before the connection (slim-pipewire.h) */
	if (audio->registry) {
		pw_thread_loop_lock(audio->pw->thread);
		spa_hook_remove(&audio->registry_listener);
		pw_proxy_destroy((struct pw_proxy *)audio->registry);
		pw_thread_loop_unlock(audio->pw->thread);
	}
	/* first: no callback runs once it is gone */
	slim_pw_destroy(audio->pw);
	if (audio->wake) {
		wl_event_source_remove(audio->wake);
	}
	if (audio->wake_fd >= 0) {
		close(audio->wake_fd);
	}
	if (audio->mic) {
		say_microphone_stats(audio);
	}
	slim_audio_feed_destroy(audio->mic);
	slim_ring_destroy(audio->ring);
	free(audio);
}
