/*
 * The session's sound: its sound server (daemons/audio-daemons.c), woken
 * by the first client that asks for sound and put to sleep once no client
 * has used it for a while, and the console's speaker and microphone in it
 * (media/console-audio.c), made while it runs. A session that never plays
 * a sound costs no daemon and no PipeWire connection.
 */
#include <stdlib.h>
#include <time.h>
#include "audio-daemons.h"
#include "console-audio.h"
#include "link.h"
#include "sound.h"

/* How often the session looks whether its sound server is still used. */
#define CHECK_MS 5000

struct slim_sound {
	struct wl_event_loop *loop;
	struct slim_link *link;
	struct slim_audio_daemons *daemons;
	struct slim_audio *audio; /* while a PipeWire runs */
	struct wl_event_source *wake[SLIM_AUDIO_SOCKETS]; /* while LISTENING */
	struct wl_event_source *check;
	uint32_t sleep_s;    /* 0: never */
	uint64_t used_ms;    /* when a client was last seen */
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void handle_audio_speaker(void *data, const int16_t *pcm)
{
	struct slim_sound *sound = data;
	slim_link_send_audio(sound->link, pcm);
}

static void handle_audio_ready(void *data)
{
	struct slim_sound *sound = data;
	slim_audio_daemons_link(sound->daemons);
}

static const struct slim_audio_handler audio_handler = {
	.speaker = handle_audio_speaker,
	.ready = handle_audio_ready,
};

static int handle_socket_readable(int fd, uint32_t mask, void *data);

static void watch_sockets(struct slim_sound *sound, bool on)
{
	for (int i = 0; i < SLIM_AUDIO_SOCKETS; i++) {
		if (sound->wake[i]) {
			wl_event_source_remove(sound->wake[i]);
			sound->wake[i] = NULL;
		}
		int fd = on ? slim_audio_daemons_socket(sound->daemons, i) : -1;
		if (fd >= 0) {
			sound->wake[i] = wl_event_loop_add_fd(sound->loop, fd,
				WL_EVENT_READABLE, handle_socket_readable, sound);
		}
	}
}

/* The speaker and microphone, once a PipeWire is there (or coming). */
static void connect_audio(struct slim_sound *sound)
{
	sound->audio = audio_create(sound->loop, &audio_handler, sound);
	if (!sound->audio) {
		/* no speaker to wait for: the clients' streams are linked without it */
		slim_audio_daemons_link(sound->daemons);
	}
	sound->used_ms = now_ms();
	if (sound->sleep_s > 0 &&
			slim_audio_daemons_state(sound->daemons) != SLIM_AUDIO_USERS) {
		wl_event_source_timer_update(sound->check, CHECK_MS);
	}
}

/* A client's connection waits in a socket: the daemons start and take it. */
static int handle_socket_readable(int fd, uint32_t mask, void *data)
{
	struct slim_sound *sound = data;
	/* level-triggered: the connection stays there until its daemon takes it */
	watch_sockets(sound, false);
	if (slim_audio_daemons_wake(sound->daemons)) {
		connect_audio(sound);
	}
	return 0;
}

static int handle_check(void *data)
{
	struct slim_sound *sound = data;
	uint64_t now = now_ms();
	if (!sound->audio || audio_users(sound->audio) > 0) {
		sound->used_ms = now;
	} else if (now - sound->used_ms >= (uint64_t)sound->sleep_s * 1000) {
		audio_destroy(sound->audio);
		sound->audio = NULL;
		slim_audio_daemons_sleep(sound->daemons);
		watch_sockets(sound, true);
		return 0;
	}
	wl_event_source_timer_update(sound->check, CHECK_MS);
	return 0;
}

struct slim_sound *sound_create(struct wl_event_loop *loop, struct slim_sched *sched,
		struct slim_link *link, uint32_t sleep_s)
{
	struct slim_sound *sound = calloc(1, sizeof(*sound));
	if (!sound) {
		return NULL;
	}
	sound->loop = loop;
	sound->link = link;
	sound->sleep_s = sleep_s;
	sound->daemons = slim_audio_daemons_create(sched);
	sound->check = wl_event_loop_add_timer(loop, handle_check, sound);
	if (!sound->daemons || !sound->check) {
		sound_destroy(sound);
		return NULL;
	}
	if (slim_audio_daemons_state(sound->daemons) == SLIM_AUDIO_USERS) {
		connect_audio(sound);
	} else {
		watch_sockets(sound, true);
	}
	return sound;
}

struct slim_audio *sound_audio(const struct slim_sound *sound)
{
	return sound ? sound->audio : NULL;
}

void sound_destroy(struct slim_sound *sound)
{
	if (!sound) {
		return;
	}
	watch_sockets(sound, false);
	if (sound->check) {
		wl_event_source_remove(sound->check);
	}
	audio_destroy(sound->audio);
	slim_audio_daemons_destroy(sound->daemons);
	free(sound);
}
