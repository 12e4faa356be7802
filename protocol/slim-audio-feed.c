#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "slim-audio-feed.h"
#include "slim-ring.h"

/*
 * Packets handed over and not yet taken: a datagram brings up to three
 * (its own and SLIM_AUDIO_REDUNDANCY copies) every 10 ms, and a player
 * pulls at least every PipeWire quantum (8192 frames, 170 ms, at the
 * most): 128 is some 400 ms of them.
 */
#define ENTRIES 128
/* In `middle`: the copy there is newer than the feeder's. */
#define FRESH 4u

struct entry {
	struct slim_audio_packet p; /* its data: `data` below, once taken */
	uint64_t arrival_us;
	uint32_t generation;
	bool again;
	uint8_t data[SLIM_AUDIO_MAX_WIRE_PAYLOAD];
};

struct slim_audio_feed {
	struct slim_ring *ring; /* of struct entry */
	atomic_uint generation; /* resets, by the feeder */
	/* the figures: three copies, one the player's, one between, one the feeder's */
	struct slim_audio_stats copies[3];
	atomic_uint middle; /* the one between, | FRESH */

	/* the feeder's */
	unsigned front;
	uint64_t dropped;
	struct slim_audio_stats stats;

	/* the player's */
	struct slim_audio_jitter *jitter;
	uint32_t played_generation;
	uint64_t stale;
	int64_t stale_us;
	unsigned back;
};

struct slim_audio_feed *slim_audio_feed_create(int channels, unsigned min_ms, unsigned max_ms)
{
	struct slim_audio_feed *feed = calloc(1, sizeof(*feed));
	if (!feed) {
		return NULL;
	}
	feed->jitter = slim_audio_jitter_create(channels, min_ms, max_ms);
	feed->ring = slim_ring_create(sizeof(struct entry), ENTRIES);
	if (!feed->jitter || !feed->ring) {
		slim_audio_feed_destroy(feed);
		return NULL;
	}
	/* deeper than the buffer ever holds, and a quantum more */
	feed->stale_us = ((int64_t)max_ms + 100) * 1000;
	for (int i = 0; i < 3; i++) {
		feed->copies[i] = *slim_audio_jitter_stats(feed->jitter);
	}
	feed->back = 0;
	atomic_init(&feed->middle, 1);
	feed->front = 2;
	feed->stats = feed->copies[feed->front];
	atomic_init(&feed->generation, 0);
	return feed;
}

void slim_audio_feed_destroy(struct slim_audio_feed *feed)
{
	if (!feed) {
		return;
	}
	slim_ring_destroy(feed->ring);
	slim_audio_jitter_destroy(feed->jitter);
	free(feed);
}

bool slim_audio_feed_push(struct slim_audio_feed *feed, const struct slim_audio_packet *p,
		bool again, uint64_t arrival_us)
{
	struct entry e = {
		.p = *p,
		.arrival_us = arrival_us,
		.generation = atomic_load_explicit(&feed->generation, memory_order_relaxed),
		.again = again,
	};
	/* longer than any packet the wire carries: no data, which the buffer counts as bad */
	e.p.len = p->len <= sizeof(e.data) ? p->len : 0;
	e.p.data = NULL;
	if (e.p.len > 0) {
		memcpy(e.data, p->data, e.p.len);
	}
	if (slim_ring_write(feed->ring, &e, 1) == 0) {
		feed->dropped += !again;
		return false;
	}
	return true;
}

void slim_audio_feed_reset(struct slim_audio_feed *feed)
{
	atomic_fetch_add_explicit(&feed->generation, 1, memory_order_release);
}

const struct slim_audio_stats *slim_audio_feed_stats(struct slim_audio_feed *feed)
{
	if (atomic_load_explicit(&feed->middle, memory_order_relaxed) & FRESH) {
		feed->front = atomic_exchange_explicit(&feed->middle, feed->front,
			memory_order_acq_rel) & ~FRESH;
	}
	feed->stats = feed->copies[feed->front];
	feed->stats.unheard += feed->dropped;
	return &feed->stats;
}

static void take(struct slim_audio_feed *feed, uint64_t now_us)
{
	uint32_t generation = atomic_load_explicit(&feed->generation, memory_order_acquire);
	if (generation != feed->played_generation) {
		slim_audio_jitter_reset(feed->jitter);
		feed->played_generation = generation;
	}
	struct entry e;
	while (slim_ring_read(feed->ring, &e, 1) == 1) {
		int32_t after = (int32_t)(e.generation - feed->played_generation);
		if (after < 0) {
			feed->stale += !e.again; /* of the stream before a reset */
			continue;
		}
		if (after > 0) {
			/* handed over after a reset that came since the load above */
			slim_audio_jitter_reset(feed->jitter);
			feed->played_generation = e.generation;
		}
		/* signed: the feeder may have stamped it after `now_us` was read */
		if ((int64_t)(now_us - e.arrival_us) > feed->stale_us) {
			feed->stale += !e.again;
			continue;
		}
		e.p.data = e.p.len > 0 ? e.data : NULL;
		if (e.again) {
			slim_audio_jitter_push_again(feed->jitter, &e.p);
		} else {
			slim_audio_jitter_push(feed->jitter, &e.p, e.arrival_us);
		}
	}
}

/* The figures as they are now, for the feeder. */
static void publish(struct slim_audio_feed *feed)
{
	struct slim_audio_stats *c = &feed->copies[feed->back];
	*c = *slim_audio_jitter_stats(feed->jitter);
	c->unheard = feed->stale;
	feed->back = atomic_exchange_explicit(&feed->middle, feed->back | FRESH,
		memory_order_acq_rel) & ~FRESH;
}

void slim_audio_feed_pull(struct slim_audio_feed *feed, int16_t *pcm, uint64_t now_us)
{
	take(feed, now_us);
	slim_audio_jitter_pull(feed->jitter, pcm);
	publish(feed);
}
