/*
 * The lock-free hand-over of sound between threads: the ring
 * (protocol/slim-ring.c) and the jitter buffer fed on one thread and
 * played on another (protocol/slim-audio-feed.c), each under two real
 * threads that never wait for each other. The checks are of what comes
 * out: every item in order and intact, every packet accounted for (played,
 * late or unheard), no packet of a stream played after its reset, and
 * every frame played either silence or exactly a packet's PCM; and, on one
 * thread, the feed plays what the jitter buffer alone plays, sample for
 * sample. Built with -Db_sanitize=thread, ThreadSanitizer checks the
 * memory orders too.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "slim-audio-feed.h"
#include "slim-clock.h"
#include "slim-ring.h"
#include "test-util.h"

static void test_ring_one_thread(void **state)
{
	assert_null(slim_ring_create(8, 0));
	assert_null(slim_ring_create(8, 6));
	assert_null(slim_ring_create(0, 8));
	assert_null(slim_ring_create(SIZE_MAX / 4, 8));
	slim_ring_destroy(NULL);

	struct slim_ring *ring = slim_ring_create(sizeof(uint32_t), 8);
	assert_non_null(ring);
	uint32_t in[12], out[12];
	for (uint32_t i = 0; i < 12; i++) {
		in[i] = 100 + i;
	}
	assert_int_equal(slim_ring_read(ring, out, 4), 0);
	/* full: what does not fit stays out */
	assert_int_equal(slim_ring_write(ring, in, 12), 8);
	assert_int_equal(slim_ring_count(ring), 8);
	assert_int_equal(slim_ring_write(ring, in, 1), 0);
	assert_int_equal(slim_ring_read(ring, out, 5), 5);
	assert_memory_equal(out, in, 5 * sizeof(uint32_t));
	/* across the end, both ways */
	assert_int_equal(slim_ring_write(ring, in + 8, 4), 4);
	assert_int_equal(slim_ring_count(ring), 7);
	assert_int_equal(slim_ring_read(ring, out, 12), 7);
	assert_memory_equal(out, in + 5, 7 * sizeof(uint32_t));
	assert_int_equal(slim_ring_count(ring), 0);
	slim_ring_destroy(ring);
}

/* --- the ring under two threads */

#define RING_ITEMS 2000000u
#define RING_CAPACITY 64u

struct item {
	uint64_t seq;
	uint64_t check[3]; /* from seq: a torn item shows */
};

struct ring_run {
	struct slim_ring *ring;
	uint64_t seed;
	uint64_t bad; /* the reader's: items out of order or torn */
	uint64_t read;
};

static void fill(struct item *it, uint64_t seq)
{
	it->seq = seq;
	it->check[0] = seq * 0x9e3779b97f4a7c15ull;
	it->check[1] = ~seq;
	it->check[2] = seq ^ 0x5555aaaa5555aaaaull;
}

static void *ring_writer(void *data)
{
	struct ring_run *run = data;
	struct test_rng rng;
	test_rng_init(&rng, run->seed ^ 1);
	struct item batch[RING_CAPACITY + 3];
	uint64_t seq = 0;
	while (seq < RING_ITEMS) {
		/* batches larger than the ring too: the rest waits for room */
		uint32_t n = test_rand_range(&rng, 1, RING_CAPACITY + 3);
		if (n > RING_ITEMS - seq) {
			n = (uint32_t)(RING_ITEMS - seq);
		}
		for (uint32_t i = 0; i < n; i++) {
			fill(&batch[i], seq + i);
		}
		uint32_t done = 0;
		while (done < n) {
			uint32_t w = slim_ring_write(run->ring, batch + done, n - done);
			done += w;
			if (w == 0) {
				sched_yield();
			}
		}
		seq += n;
	}
	return NULL;
}

static void *ring_reader(void *data)
{
	struct ring_run *run = data;
	struct test_rng rng;
	test_rng_init(&rng, run->seed ^ 2);
	struct item batch[RING_CAPACITY + 3];
	while (run->read < RING_ITEMS) {
		uint32_t want = test_rand_range(&rng, 1, RING_CAPACITY + 3);
		uint32_t count = slim_ring_count(run->ring);
		uint32_t n = slim_ring_read(run->ring, batch, want);
		/* what count said is there stays there for the reader */
		if (n < (want < count ? want : count)) {
			run->bad++;
		}
		for (uint32_t i = 0; i < n; i++) {
			struct item expect;
			fill(&expect, run->read);
			if (memcmp(&batch[i], &expect, sizeof(expect)) != 0) {
				run->bad++;
			}
			run->read++;
		}
		if (n == 0) {
			sched_yield();
		}
	}
	return NULL;
}

static void test_ring_two_threads(void **state)
{
	struct ring_run run = { .seed = test_seed() };
	run.ring = slim_ring_create(sizeof(struct item), RING_CAPACITY);
	assert_non_null(run.ring);
	pthread_t writer, reader;
	assert_int_equal(pthread_create(&reader, NULL, ring_reader, &run), 0);
	assert_int_equal(pthread_create(&writer, NULL, ring_writer, &run), 0);
	pthread_join(writer, NULL);
	pthread_join(reader, NULL);
	assert_int_equal(run.read, RING_ITEMS);
	assert_int_equal(run.bad, 0);
	assert_int_equal(slim_ring_count(run.ring), 0);
	slim_ring_destroy(run.ring);
}

/* --- the jitter buffer fed on one thread, played on another */

#define STREAM_PACKETS 3000u
#define STREAMS 2u

/* Sample `i` of packet `seq` of stream `stream`: never 0, so never silence. */
static int16_t sample(uint32_t stream, uint32_t seq, uint32_t i)
{
	uint32_t v = (stream * 7919u + seq * 131u + i * 17u) % 30000u;
	return (int16_t)(v + 1);
}

struct feed_run {
	struct slim_audio_feed *feed;
	uint64_t seed;
	atomic_bool fed; /* the feeder is done */
	uint64_t pushed;
	uint64_t stats_bad; /* the feeder's: figures that went backwards */
	/* the player's */
	uint64_t frames, played, silent, corrupt, reordered;
	uint32_t last_stream, last_seq;
};

static void *feeder(void *data)
{
	struct feed_run *run = data;
	struct test_rng rng;
	test_rng_init(&rng, run->seed ^ 3);
	uint8_t pcm[SLIM_AUDIO_FRAME * sizeof(int16_t)];
	uint64_t seen = 0;
	for (uint32_t stream = 0; stream < STREAMS; stream++) {
		if (stream > 0) {
			/* a new association: the next sender numbers from 0 again */
			slim_audio_feed_reset(run->feed);
		}
		for (uint32_t seq = 0; seq < STREAM_PACKETS; seq++) {
			for (uint32_t i = 0; i < SLIM_AUDIO_FRAME; i++) {
				int16_t s = sample(stream, seq, i);
				memcpy(pcm + i * sizeof(s), &s, sizeof(s));
			}
			struct slim_audio_packet p = {
				.codec = SLIM_AUDIO_PCM, .channels = 1, .frames = SLIM_AUDIO_FRAME,
				.rate = SLIM_AUDIO_RATE, .seq = seq, .timestamp = seq * SLIM_AUDIO_FRAME,
				.data = pcm, .len = sizeof(pcm),
			};
			slim_audio_feed_push(run->feed, &p, false, slim_now_us());
			run->pushed++;
			if (test_rand_below(&rng, 8) == 0) {
				/* the figures, read while the player writes them */
				const struct slim_audio_stats *st = slim_audio_feed_stats(run->feed);
				uint64_t now = st->packets + st->late + st->unheard;
				run->stats_bad += now < seen;
				seen = now;
			}
			if (test_rand_below(&rng, 4) == 0) {
				sched_yield();
			}
		}
	}
	atomic_store(&run->fed, true);
	return NULL;
}

/* The player's: what a frame played was, in order, per stream. */
static void check_frame(struct feed_run *run, const int16_t *pcm)
{
	run->frames++;
	bool silent = true;
	for (uint32_t i = 0; i < SLIM_AUDIO_FRAME && silent; i++) {
		silent = pcm[i] == 0;
	}
	if (silent) {
		run->silent++;
		return;
	}
	uint32_t stream = STREAMS, seq = 0;
	for (uint32_t s = 0; s < STREAMS && stream == STREAMS; s++) {
		for (uint32_t q = 0; q < STREAM_PACKETS; q++) {
			if (pcm[0] == sample(s, q, 0) && pcm[1] == sample(s, q, 1)) {
				bool whole = true;
				for (uint32_t i = 0; i < SLIM_AUDIO_FRAME && whole; i++) {
					whole = pcm[i] == sample(s, q, i);
				}
				if (whole) {
					stream = s;
					seq = q;
					break;
				}
			}
		}
	}
	if (stream == STREAMS) {
		run->corrupt++;
		return;
	}
	/* a stream's packets in order; none of a stream before the last one's reset */
	if (run->played > 0 && (stream < run->last_stream ||
			(stream == run->last_stream && seq <= run->last_seq))) {
		run->reordered++;
	}
	run->played++;
	run->last_stream = stream;
	run->last_seq = seq;
}

static void *player(void *data)
{
	struct feed_run *run = data;
	struct test_rng rng;
	test_rng_init(&rng, run->seed ^ 4);
	int16_t pcm[SLIM_AUDIO_FRAME];
	while (!atomic_load(&run->fed)) {
		/* a quantum of one to four frames at a time, as PipeWire's may be */
		uint32_t n = test_rand_range(&rng, 1, 4);
		uint64_t now = slim_now_us();
		for (uint32_t i = 0; i < n; i++) {
			slim_audio_feed_pull(run->feed, pcm, now);
			check_frame(run, pcm);
		}
		sched_yield();
	}
	/* what is left, at once */
	for (int i = 0; i < 200; i++) {
		slim_audio_feed_pull(run->feed, pcm, slim_now_us());
		check_frame(run, pcm);
	}
	return NULL;
}

static void test_feed_two_threads(void **state)
{
	struct feed_run run = { .seed = test_seed() };
	run.feed = slim_audio_feed_create(1, 20, 200);
	assert_non_null(run.feed);
	atomic_init(&run.fed, false);
	pthread_t f, p;
	assert_int_equal(pthread_create(&p, NULL, player, &run), 0);
	assert_int_equal(pthread_create(&f, NULL, feeder, &run), 0);
	pthread_join(f, NULL);
	pthread_join(p, NULL);
	const struct slim_audio_stats *st = slim_audio_feed_stats(run.feed);
	print_message("fed %llu packets: %llu taken, %llu late, %llu unheard, %llu skipped; "
		"played %llu frames: %llu of packets, %llu silent\n",
		(unsigned long long)run.pushed, (unsigned long long)st->packets,
		(unsigned long long)st->late, (unsigned long long)st->unheard,
		(unsigned long long)st->skipped, (unsigned long long)run.frames,
		(unsigned long long)run.played, (unsigned long long)run.silent);
	assert_int_equal(run.corrupt, 0);
	assert_int_equal(run.reordered, 0);
	assert_int_equal(run.stats_bad, 0);
	assert_int_equal(st->bad, 0);
	assert_int_equal(st->duplicate, 0);
	/* every packet handed over is accounted for, once */
	assert_int_equal(st->packets + st->late + st->unheard, run.pushed);
	/* and the player heard both streams */
	assert_true(run.played > 0);
	assert_int_equal(run.last_stream, STREAMS - 1);
	slim_audio_feed_destroy(run.feed);
}

/* --- the same sound as the jitter buffer alone */

#define SAME_PACKETS 400
#define SAME_COPIES 2 /* each datagram carries the two packets before its own */

struct arrival {
	uint64_t at_us;
	int packet;
};

static int by_time(const void *a, const void *b)
{
	const struct arrival *x = a, *y = b;
	return x->at_us < y->at_us ? -1 : x->at_us > y->at_us;
}

/*
 * One thread: a stream (Opus, stereo, as a console plays it) over a
 * network that delays by up to 25 ms, loses 8 % and duplicates 3 % of the
 * datagrams, through the jitter buffer alone (pushed on arrival, pulled
 * every 10 ms, as before the hand-over) and through the feed: the same
 * samples, frame for frame, and the same figures, a reset midway
 * included. What the hand-over adds is never heard.
 */
static void test_feed_plays_as_the_buffer(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, test_seed() ^ 5);
	struct slim_audio_encoder *enc = slim_audio_encoder_create(SLIM_AUDIO_OPUS, 2, 64000, 10);
	assert_non_null(enc);
	static struct slim_audio_packet p[SAME_PACKETS];
	static uint8_t data[SAME_PACKETS][SLIM_AUDIO_MAX_PAYLOAD];
	int16_t pcm[SLIM_AUDIO_FRAME * 2];
	for (int i = 0; i < SAME_PACKETS; i++) {
		for (int n = 0; n < SLIM_AUDIO_FRAME; n++) {
			/* a chord, so that Opus has something to code */
			pcm[2 * n] = (int16_t)(((i * SLIM_AUDIO_FRAME + n) * 37) % 8000 - 4000);
			pcm[2 * n + 1] = (int16_t)(((i * SLIM_AUDIO_FRAME + n) * 53) % 6000 - 3000);
		}
		assert_true(slim_audio_encode(enc, pcm, data[i], sizeof(data[i]), &p[i]) > 0);
		p[i].data = data[i];
	}
	static struct arrival arrivals[SAME_PACKETS * 2];
	int n = 0;
	for (int i = 0; i < SAME_PACKETS; i++) {
		if (test_rand_below(&rng, 100) < 8) {
			continue;
		}
		uint64_t at = 1000000 + (uint64_t)i * 10000 + 5000 + test_rand_below(&rng, 25000);
		arrivals[n++] = (struct arrival){ at, i };
		if (test_rand_below(&rng, 100) < 3) {
			arrivals[n++] = (struct arrival){ at + test_rand_below(&rng, 20000), i };
		}
	}
	qsort(arrivals, (size_t)n, sizeof(arrivals[0]), by_time);

	struct slim_audio_jitter *alone = slim_audio_jitter_create(2, 20, 200);
	struct slim_audio_feed *feed = slim_audio_feed_create(2, 20, 200);
	assert_non_null(alone);
	assert_non_null(feed);
	int16_t a[SLIM_AUDIO_FRAME * 2], b[SLIM_AUDIO_FRAME * 2];
	int next = 0, sound = 0;
	for (int k = 0; k < SAME_PACKETS + 40; k++) {
		uint64_t t = 1000000 + (uint64_t)k * 10000 + 2500;
		for (; next < n && arrivals[next].at_us <= t; next++) {
			int i = arrivals[next].packet;
			uint64_t at = arrivals[next].at_us;
			slim_audio_jitter_push(alone, &p[i], at);
			slim_audio_feed_push(feed, &p[i], false, at);
			for (int c = 1; c <= SAME_COPIES && i - c >= 0; c++) {
				slim_audio_jitter_push_again(alone, &p[i - c]);
				slim_audio_feed_push(feed, &p[i - c], true, at);
			}
		}
		slim_audio_jitter_pull(alone, a);
		slim_audio_feed_pull(feed, b, t);
		assert_memory_equal(a, b, sizeof(a));
		bool quiet = true;
		for (int s = 0; s < SLIM_AUDIO_FRAME * 2 && quiet; s++) {
			quiet = a[s] == 0;
		}
		sound += !quiet;
		if (k == SAME_PACKETS / 2) {
			/* a new association, between two pulls */
			slim_audio_jitter_reset(alone);
			slim_audio_feed_reset(feed);
		}
	}
	const struct slim_audio_stats *x = slim_audio_jitter_stats(alone);
	const struct slim_audio_stats *y = slim_audio_feed_stats(feed);
	print_message("%d frames of sound; lost %llu, repaired %llu, duplicates %llu, "
		"concealed %llu, skipped %llu\n", sound, (unsigned long long)x->lost,
		(unsigned long long)x->repaired, (unsigned long long)x->duplicate,
		(unsigned long long)x->concealed, (unsigned long long)x->skipped);
	assert_memory_equal(x, y, sizeof(*x));
	assert_true(sound > SAME_PACKETS * 3 / 4);
	assert_true(x->repaired > 0);
	slim_audio_jitter_destroy(alone);
	slim_audio_feed_destroy(feed);
	slim_audio_encoder_destroy(enc);
}

/* A player that never pulls: what it was handed is dropped, and told, not played late. */
static void test_feed_stale(void **state)
{
	struct slim_audio_feed *feed = slim_audio_feed_create(1, 20, 200);
	assert_non_null(feed);
	uint8_t pcm[SLIM_AUDIO_FRAME * sizeof(int16_t)];
	memset(pcm, 0x11, sizeof(pcm));
	struct slim_audio_packet p = {
		.codec = SLIM_AUDIO_PCM, .channels = 1, .frames = SLIM_AUDIO_FRAME,
		.rate = SLIM_AUDIO_RATE, .data = pcm, .len = sizeof(pcm),
	};
	uint64_t t = 1000000;
	unsigned taken = 0;
	for (uint32_t seq = 0; seq < 1000; seq++, t += 10000) {
		p.seq = seq;
		taken += slim_audio_feed_push(feed, &p, false, t);
	}
	assert_true(taken < 1000); /* the ring is full long before */
	/* ten seconds on, a player starts: nothing of then is played */
	int16_t out[SLIM_AUDIO_FRAME];
	slim_audio_feed_pull(feed, out, t);
	const struct slim_audio_stats *st = slim_audio_feed_stats(feed);
	assert_int_equal(st->packets, 0);
	assert_int_equal(st->unheard, 1000);
	for (int i = 0; i < SLIM_AUDIO_FRAME; i++) {
		assert_int_equal(out[i], 0);
	}
	/* a packet longer than any the wire carries: bad, not copied */
	p.seq = 1000;
	p.len = SLIM_AUDIO_MAX_WIRE_PAYLOAD + 1;
	uint8_t big[SLIM_AUDIO_MAX_WIRE_PAYLOAD + 1] = { 0 };
	p.data = big;
	assert_true(slim_audio_feed_push(feed, &p, false, t));
	slim_audio_feed_pull(feed, out, t);
	assert_int_equal(slim_audio_feed_stats(feed)->bad, 1);
	slim_audio_feed_destroy(feed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_one_thread),
		cmocka_unit_test(test_ring_two_threads),
		cmocka_unit_test(test_feed_two_threads),
		cmocka_unit_test(test_feed_plays_as_the_buffer),
		cmocka_unit_test(test_feed_stale),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
