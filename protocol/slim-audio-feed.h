/*
 * A jitter buffer (slim-audio.h) fed on one thread and played on another,
 * a real-time one, with no lock between them: the session's microphone
 * (packets from the compositor's event loop, played on PipeWire's data
 * thread) and the console's speaker (from its poll loop, played on its
 * device's thread).
 *
 * The feeding thread hands each packet over, copied with its time of
 * arrival, through a ring (slim-ring.h); the playing thread takes what
 * came into the jitter buffer, which is its alone, before each 10 ms it
 * pulls. The buffer's figures come back as the newest whole copy (a triple
 * buffer: neither side waits for the other); a reset is a generation
 * number, which drops what was handed over before it (as unheard).
 * Nothing on the playing side allocates, blocks or calls the kernel.
 */
#ifndef SLIM_AUDIO_FEED_H
#define SLIM_AUDIO_FEED_H

#include <stdbool.h>
#include <stdint.h>
#include "slim-audio.h"

struct slim_audio_feed;

/* A jitter buffer as slim_audio_jitter_create's; NULL on bad arguments or no memory. */
struct slim_audio_feed *slim_audio_feed_create(int channels, unsigned min_ms, unsigned max_ms);
/* NULL is a no-op; neither thread may be using it. */
void slim_audio_feed_destroy(struct slim_audio_feed *feed);

/* --- the feeding thread's */

/*
 * A packet as it arrived at `arrival_us` (slim_now_us's clock,
 * slim-clock.h); `again` as slim_audio_jitter_push_again. False if the
 * player has not taken what came before and there is no room: dropped,
 * and counted in the figures' `unheard`.
 */
bool slim_audio_feed_push(struct slim_audio_feed *feed, const struct slim_audio_packet *p,
		bool again, uint64_t arrival_us);
/* As slim_audio_jitter_reset, from the next pull on. */
void slim_audio_feed_reset(struct slim_audio_feed *feed);
/* The jitter buffer's figures as of the player's last pull. */
const struct slim_audio_stats *slim_audio_feed_stats(struct slim_audio_feed *feed);

/* --- the playing thread's */

/*
 * What was handed over, taken in (a packet that waited longer than the
 * buffer's deepest, because nobody pulled, is dropped as unheard), then
 * the next SLIM_AUDIO_FRAME samples a channel, as slim_audio_jitter_pull.
 */
void slim_audio_feed_pull(struct slim_audio_feed *feed, int16_t *pcm, uint64_t now_us);

#endif
