/*
 * The session's sound (sound.c): its sound server started when a client
 * first asks for sound and ended after `sleep_s` seconds (0: never) with
 * no client, and server->audio, the console's speaker and microphone in
 * it, there while it runs.
 */
#ifndef SLIM_SOUND_H
#define SLIM_SOUND_H

#include <stdint.h>

struct slim_server;
struct slim_sound;

/* NULL (said in the log) when the session can have no sound. */
struct slim_sound *sound_create(struct slim_server *server, uint32_t sleep_s);
/* NULL is a no-op. */
void sound_destroy(struct slim_sound *sound);

#endif
