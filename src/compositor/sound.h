/*
 * The session's sound (sound.c): its sound server started when a client
 * first asks for sound and ended after `sleep_s` seconds (0: never) with
 * no client, and the console's speaker and microphone in it while it runs,
 * the speaker's sound sent on `link`.
 */
#ifndef SLIM_SOUND_H
#define SLIM_SOUND_H

#include <stdint.h>

struct slim_audio;
struct slim_link;
struct slim_sched;
struct slim_sound;
struct wl_event_loop;

/* NULL (said in the log) when the session can have no sound. */
struct slim_sound *sound_create(struct wl_event_loop *loop, struct slim_sched *sched,
		struct slim_link *link, uint32_t sleep_s);
/* The console's speaker and microphone, while a PipeWire runs; NULL otherwise (or NULL sound). */
struct slim_audio *sound_audio(const struct slim_sound *sound);
/* NULL is a no-op. */
void sound_destroy(struct slim_sound *sound);

#endif
