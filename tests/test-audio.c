/*
 * Sound's shared part (protocol/slim-audio.c): a 440 Hz tone through Opus
 * (or PCM) and the jitter buffer, over a simulated network that delays,
 * reorders, duplicates and loses packets, played 10 ms at a time on the
 * receiver's clock as a console would.
 *
 * "Recognisable": the share of the output's energy at 440 Hz (Goertzel,
 * normalised so that a pure tone gives 1), taken over 50 ms windows (a
 * loss may shift the tone's phase; the ear does not mind) and averaged.
 * "A gap": two frames in a row or more (20 ms) under a tenth of the tone's
 * level; a single quiet frame is the click a loss may cost. At 64 kbit/s
 * Opus codes the tone in its CELT mode, where in-band FEC carries nothing:
 * what saves a lost packet is the copy of it the next datagrams carry
 * (SLIM_AUDIO_REDUNDANCY), which the simulated network delivers as the
 * wire does; a packet lost with all its copies is the decoder's guess,
 * which dips for 10-20 ms around it (the loss tests print what they saw).
 */
#define _GNU_SOURCE /* M_PI */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "slim-audio.h"
#include "test-util.h"

#define SECONDS 3
#define FRAMES (SECONDS * 100)
#define AMPLITUDE 8000.0
#define TONE_HZ 440.0
/* The first frames are the buffer filling and the codec starting. */
#define SETTLE_FRAMES 30

struct net {
	int loss_percent;      /* random loss */
	int duplicate_percent;
	int jitter_ms;         /* each packet delayed 5 ms + 0..jitter_ms */
	bool swap_pairs;       /* every other pair arrives swapped */
};

struct arrival {
	uint64_t at_us;
	int frame; /* its packet; with Opus, the copies of the ones before it come along */
};

/* Every packet sent, by frame. */
struct sent {
	struct slim_audio_packet p;
	uint8_t data[2048];
};

static int by_time(const void *a, const void *b)
{
	const struct arrival *x = a, *y = b;
	return x->at_us < y->at_us ? -1 : x->at_us > y->at_us;
}

static void tone(int16_t *pcm, int channels, int frame)
{
	for (int i = 0; i < SLIM_AUDIO_FRAME; i++) {
		double t = (double)(frame * SLIM_AUDIO_FRAME + i) / SLIM_AUDIO_RATE;
		int16_t v = (int16_t)lrint(AMPLITUDE * sin(2 * M_PI * TONE_HZ * t));
		for (int c = 0; c < channels; c++) {
			pcm[i * channels + c] = v;
		}
	}
}

/*
 * Sends SECONDS of the tone through `net` and plays it: `out` gets
 * FRAMES frames of the first channel. Returns the receiver's stats.
 */
static struct slim_audio_stats run(enum slim_audio_codec codec, int channels, struct net net,
		uint64_t salt, int16_t *out)
{
	struct test_rng rng;
	test_rng_init(&rng, salt);
	struct slim_audio_encoder *enc = slim_audio_encoder_create(codec, channels, 64000,
		net.loss_percent);
	struct slim_audio_jitter *j = slim_audio_jitter_create(channels, 20, 200);
	assert_non_null(enc);
	assert_non_null(j);
	struct arrival *arrivals = calloc(2 * FRAMES, sizeof(*arrivals));
	struct sent *sent_packets = calloc(FRAMES, sizeof(*sent_packets));
	assert_non_null(arrivals);
	assert_non_null(sent_packets);
	size_t n = 0;
	int16_t pcm[SLIM_AUDIO_FRAME * SLIM_AUDIO_MAX_CHANNELS];
	for (int f = 0; f < FRAMES; f++) {
		tone(pcm, channels, f);
		struct sent *s = &sent_packets[f];
		assert_true(slim_audio_encode(enc, pcm, s->data, sizeof(s->data), &s->p) > 0);
		if ((int)test_rand_below(&rng, 100) < net.loss_percent) {
			continue;
		}
		struct arrival *a = &arrivals[n];
		a->frame = f;
		uint64_t sent = (uint64_t)f * 10000;
		a->at_us = sent + 5000 + (net.jitter_ms ?
			test_rand_below(&rng, (uint32_t)net.jitter_ms * 1000) : 0);
		if (net.swap_pairs && f % 4 == 1) {
			a->at_us += 10000; /* after the next one */
		}
		n++;
		if ((int)test_rand_below(&rng, 100) < net.duplicate_percent) {
			arrivals[n] = *a;
			arrivals[n].at_us += 3000;
			n++;
		}
	}
	qsort(arrivals, n, sizeof(*arrivals), by_time);
	/* the receiver plays a frame every 10 ms, from 10 ms on */
	size_t next = 0;
	for (int f = 0; f < FRAMES; f++) {
		uint64_t now = (uint64_t)(f + 1) * 10000;
		while (next < n && arrivals[next].at_us <= now) {
			/* as slim_audio_send carries them: the packet, then copies of those before */
			int at = arrivals[next].frame;
			slim_audio_jitter_push(j, &sent_packets[at].p, arrivals[next].at_us);
			for (int k = 1; codec == SLIM_AUDIO_OPUS && k <= SLIM_AUDIO_REDUNDANCY &&
					at - k >= 0; k++) {
				slim_audio_jitter_push_again(j, &sent_packets[at - k].p);
			}
			next++;
		}
		slim_audio_jitter_pull(j, pcm);
		for (int i = 0; i < SLIM_AUDIO_FRAME; i++) {
			out[f * SLIM_AUDIO_FRAME + i] = pcm[i * channels];
		}
	}
	struct slim_audio_stats stats = *slim_audio_jitter_stats(j);
	free(arrivals);
	free(sent_packets);
	slim_audio_jitter_destroy(j);
	slim_audio_encoder_destroy(enc);
	return stats;
}

/* The share of the energy at TONE_HZ in out[from..to) (frames). */
static double window_share(const int16_t *out, int from, int to)
{
	size_t len = (size_t)(to - from) * SLIM_AUDIO_FRAME;
	const int16_t *x = out + (size_t)from * SLIM_AUDIO_FRAME;
	double w = 2 * M_PI * TONE_HZ / SLIM_AUDIO_RATE, coeff = 2 * cos(w);
	double s1 = 0, s2 = 0, energy = 0;
	for (size_t i = 0; i < len; i++) {
		double s = x[i] + coeff * s1 - s2;
		s2 = s1;
		s1 = s;
		energy += (double)x[i] * x[i];
	}
	double power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
	return energy > 0 ? 2 * power / ((double)len * energy) : 0;
}

/* window_share over 50 ms windows from `from` to `to`, averaged. */
static double tone_share(const int16_t *out, int from, int to)
{
	double sum = 0;
	int n = 0;
	for (int f = from; f + 5 <= to; f += 5, n++) {
		sum += window_share(out, f, f + 5);
	}
	return n ? sum / n : 0;
}

static double frame_rms(const int16_t *out, int f)
{
	double e = 0;
	for (int i = 0; i < SLIM_AUDIO_FRAME; i++) {
		double v = out[f * SLIM_AUDIO_FRAME + i];
		e += v * v;
	}
	return sqrt(e / SLIM_AUDIO_FRAME);
}

/* Runs of two frames or more, after settling, under a tenth of the tone's level. */
static int gaps(const int16_t *out)
{
	int n = 0, run = 0;
	for (int f = SETTLE_FRAMES; f < FRAMES; f++) {
		run = frame_rms(out, f) < AMPLITUDE / sqrt(2) / 10 ? run + 1 : 0;
		n += run == 2;
	}
	return n;
}

static int16_t *output(void)
{
	int16_t *out = calloc((size_t)FRAMES * SLIM_AUDIO_FRAME, sizeof(int16_t));
	assert_non_null(out);
	return out;
}

static void test_opus_round_trip(void **state)
{
	int16_t *out = output();
	for (int channels = 1; channels <= 2; channels++) {
		struct slim_audio_stats st = run(SLIM_AUDIO_OPUS, channels, (struct net){ 0 }, 1, out);
		double share = tone_share(out, SETTLE_FRAMES, FRAMES);
		double rms = frame_rms(out, FRAMES / 2);
		print_message("opus %d ch: tone share %.4f, rms %.0f (sent %.0f), depth %u ms\n",
			channels, share, rms, AMPLITUDE / sqrt(2), st.depth_ms);
		assert_true(share > 0.98);
		assert_true(fabs(rms - AMPLITUDE / sqrt(2)) < 0.15 * AMPLITUDE / sqrt(2));
		assert_int_equal(st.lost, 0);
		assert_int_equal(st.bad, 0);
		assert_int_equal(gaps(out), 0);
	}
	free(out);
}

static void test_pcm_exact(void **state)
{
	int16_t *out = output();
	struct slim_audio_stats st = run(SLIM_AUDIO_PCM, 2, (struct net){ 0 }, 2, out);
	assert_int_equal(st.lost, 0);
	assert_int_equal(st.skipped, 0);
	/* once filled, the frames come out as they went in, a fixed delay later */
	int16_t pcm[SLIM_AUDIO_FRAME * 2];
	int delay = -1;
	for (int d = 0; d < SETTLE_FRAMES && delay < 0; d++) {
		tone(pcm, 2, SETTLE_FRAMES - d);
		delay = pcm[0] == out[SETTLE_FRAMES * SLIM_AUDIO_FRAME] &&
			pcm[2 * 100] == out[SETTLE_FRAMES * SLIM_AUDIO_FRAME + 100] ? d : -1;
	}
	assert_true(delay >= 0);
	for (int f = SETTLE_FRAMES; f < FRAMES; f++) {
		tone(pcm, 2, f - delay);
		for (int i = 0; i < SLIM_AUDIO_FRAME; i++) {
			assert_int_equal(out[f * SLIM_AUDIO_FRAME + i], pcm[2 * i]);
		}
	}
	free(out);
}

static void loss(int percent, uint64_t salt, double min_share)
{
	int16_t *out = output();
	struct slim_audio_stats st = run(SLIM_AUDIO_OPUS, 1,
		(struct net){ .loss_percent = percent, .jitter_ms = 5 }, salt, out);
	double share = tone_share(out, SETTLE_FRAMES, FRAMES);
	print_message("%d%% loss: repaired %llu, lost %llu, recovered %llu, concealed %llu, "
		"gaps %d, tone share %.4f\n", percent, (unsigned long long)st.repaired,
		(unsigned long long)st.lost, (unsigned long long)st.recovered,
		(unsigned long long)st.concealed, gaps(out), share);
	assert_true(st.repaired > 0);
	assert_int_equal(gaps(out), 0);
	assert_true(share > min_share);
	free(out);
}

static void test_loss_5(void **state)
{
	loss(5, 3, 0.97);
}

static void test_loss_10(void **state)
{
	loss(10, 4, 0.97);
}

static void test_reorder_duplicates(void **state)
{
	int16_t *in_order = output(), *out = output();
	run(SLIM_AUDIO_OPUS, 1, (struct net){ 0 }, 5, in_order);
	struct slim_audio_stats st = run(SLIM_AUDIO_OPUS, 1,
		(struct net){ .swap_pairs = true, .duplicate_percent = 10 }, 5, out);
	assert_true(st.duplicate > 0);
	assert_int_equal(st.late, 0);
	assert_int_equal(st.lost, 0);
	/* the same packets in the same order: the tone as whole as without the network */
	print_message("reordered: tone share %.4f (in order %.4f), skipped %llu\n",
		tone_share(out, SETTLE_FRAMES, FRAMES), tone_share(in_order, SETTLE_FRAMES, FRAMES),
		(unsigned long long)st.skipped);
	assert_int_equal(gaps(out), 0);
	assert_true(tone_share(out, SETTLE_FRAMES, FRAMES) > 0.95);
	free(in_order);
	free(out);
}

static void test_depth_follows_jitter(void **state)
{
	int16_t *out = output();
	struct slim_audio_stats calm = run(SLIM_AUDIO_OPUS, 1, (struct net){ 0 }, 6, out);
	struct slim_audio_stats jumpy = run(SLIM_AUDIO_OPUS, 1, (struct net){ .jitter_ms = 40 },
		6, out);
	print_message("depth: %u ms at jitter %u us, %u ms at jitter %u us\n", calm.depth_ms,
		calm.jitter_us, jumpy.depth_ms, jumpy.jitter_us);
	assert_int_equal(calm.depth_ms, 20);
	assert_true(jumpy.jitter_us > 5000);
	assert_true(jumpy.depth_ms >= 2 * calm.depth_ms);
	assert_int_equal(gaps(out), 0);
	free(out);
}

static void test_bad_packets(void **state)
{
	struct slim_audio_encoder *enc = slim_audio_encoder_create(SLIM_AUDIO_OPUS, 1, 32000, 5);
	struct slim_audio_jitter *j = slim_audio_jitter_create(1, 20, 100);
	assert_non_null(enc);
	assert_non_null(j);
	assert_null(slim_audio_encoder_create(SLIM_AUDIO_OPUS, 3, 32000, 5));
	assert_null(slim_audio_encoder_create(9, 1, 32000, 5));
	assert_null(slim_audio_jitter_create(0, 20, 100));
	assert_null(slim_audio_jitter_create(1, 20, 100000));
	int16_t pcm[SLIM_AUDIO_FRAME];
	uint8_t buf[SLIM_AUDIO_MAX_PAYLOAD];
	uint8_t huge[4096] = { 0 };
	/* a code-3 TOC with no frame count: not a packet Opus can decode */
	static const uint8_t corrupt[] = { 0xff };
	uint64_t bad = 0;
	for (int f = 0; f < 100; f++) {
		tone(pcm, 1, f);
		struct slim_audio_packet p;
		assert_true(slim_audio_encode(enc, pcm, buf, sizeof(buf), &p) > 0);
		struct slim_audio_packet lies[] = { p, p, p, p, p, p, p };
		lies[0].channels = 2;
		lies[1].rate = 44100;
		lies[2].frames = 960;
		lies[3].codec = 9;
		lies[4].codec = SLIM_AUDIO_PCM; /* an Opus payload's length */
		lies[5].len = 0;
		lies[6].data = huge;
		lies[6].len = sizeof(huge);
		for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
			assert_false(slim_audio_jitter_push(j, &lies[i], (uint64_t)f * 10000));
			bad++;
		}
		if (f == 50) {
			/* accepted (its header is fine), found bad when played: concealed */
			struct slim_audio_packet c = p;
			c.data = corrupt;
			c.len = sizeof(corrupt);
			assert_true(slim_audio_jitter_push(j, &c, (uint64_t)f * 10000));
		} else {
			assert_true(slim_audio_jitter_push(j, &p, (uint64_t)f * 10000));
		}
		slim_audio_jitter_pull(j, pcm);
	}
	const struct slim_audio_stats *st = slim_audio_jitter_stats(j);
	assert_int_equal(st->bad, bad + 1);
	assert_int_equal(st->packets, 100);
	assert_int_equal(st->concealed, 1);
	/* the stream carried on: the last frame is the tone */
	assert_true(frame_rms(pcm, 0) > AMPLITUDE / sqrt(2) / 2);
	slim_audio_jitter_destroy(j);
	slim_audio_encoder_destroy(enc);
}

/* Anything pushed in any order: nothing grows, nothing breaks (ASan watches). */
static void test_flood(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 7);
	struct slim_audio_jitter *j = slim_audio_jitter_create(2, 20, 600);
	assert_non_null(j);
	uint8_t data[2048];
	int16_t pcm[SLIM_AUDIO_FRAME * 2];
	for (int i = 0; i < 200000; i++) {
		test_rand_bytes(&rng, data, sizeof(data));
		struct slim_audio_packet p = {
			.codec = (uint8_t)(1 + test_rand_below(&rng, 2)),
			.channels = 2,
			.frames = SLIM_AUDIO_FRAME,
			.rate = SLIM_AUDIO_RATE,
			.seq = test_rand_below(&rng, 4) ? (uint32_t)i : test_rand(&rng),
			.timestamp = test_rand(&rng),
			.data = data,
		};
		p.len = p.codec == SLIM_AUDIO_PCM ? SLIM_AUDIO_FRAME * 4 :
			1 + test_rand_below(&rng, SLIM_AUDIO_MAX_PAYLOAD);
		slim_audio_jitter_push(j, &p, test_rand(&rng));
		if (i % 3 == 0) {
			slim_audio_jitter_pull(j, pcm);
		}
	}
	const struct slim_audio_stats *st = slim_audio_jitter_stats(j);
	assert_true(st->packets > 0);
	assert_true(st->depth_ms >= 20 && st->depth_ms <= 600);
	slim_audio_jitter_destroy(j);
}

/* The datagrams slim_audio_send makes, kept for the test to deliver. */
struct wire {
	uint8_t dgram[4][SLIM_DEFAULT_MTU];
	size_t len[4];
	int n;
};

static void keep(void *data, const uint8_t *buf, size_t len)
{
	struct wire *w = data;
	assert_true(w->n < 4 && len <= SLIM_DEFAULT_MTU);
	memcpy(w->dgram[w->n], buf, len);
	w->len[w->n++] = len;
}

/*
 * A datagram as the console reads it, outside the sequence: AUDIO commands,
 * the packet and copies of those before it. Returns the commands.
 */
static int deliver(struct slim_audio_jitter *j, const uint8_t *buf, size_t len, uint64_t at)
{
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	assert_int_equal(slim_reader_init(&r, &hdr, buf, len, false, 64, 64), SLIM_OK);
	assert_int_equal(hdr.seq, 0);
	int n = 0;
	while (slim_reader_next(&r, &cmd) == SLIM_OK && cmd.type) {
		assert_int_equal(cmd.type, SLIM_CMD_AUDIO);
		struct slim_audio_packet p;
		slim_audio_packet_from_cmd(&cmd, &p);
		if (n++ == 0) {
			assert_true(slim_audio_jitter_push(j, &p, at));
		} else {
			slim_audio_jitter_push_again(j, &p);
		}
	}
	return n;
}

/*
 * 10 ms of stereo PCM (1920 bytes) does not fit a 1400-byte datagram: it
 * goes in two halves, and comes out exact; a half that never comes is
 * silence, counted as concealed; Opus fits one datagram.
 */
static void test_wire_halves(void **state)
{
	struct slim_audio_encoder *enc = slim_audio_encoder_create(SLIM_AUDIO_PCM, 2, 0, 0);
	struct slim_audio_jitter *j = slim_audio_jitter_create(2, 20, 200);
	assert_non_null(enc);
	assert_non_null(j);
	int16_t in[SLIM_AUDIO_FRAME * 2], out[SLIM_AUDIO_FRAME * 2];
	uint8_t payload[SLIM_AUDIO_MAX_WIRE_PAYLOAD];
	uint64_t now = 1000000;
	for (int f = 0; f < 6; f++, now += 10000) {
		tone(in, 2, f);
		struct slim_audio_packet p;
		assert_int_equal(slim_audio_encode(enc, in, payload, sizeof(payload), &p),
			(int)sizeof(payload));
		struct wire w = { .n = 0 };
		assert_int_equal(slim_audio_send(NULL, &p, false, 7, SLIM_DEFAULT_MTU, now, keep, &w), 2);
		/* frame 3 loses its second half */
		for (int i = 0; i < (f == 3 ? 1 : 2); i++) {
			deliver(j, w.dgram[i], w.len[i], now);
		}
		if (f == 0) {
			continue; /* the buffer holds 20 ms before it plays */
		}
		slim_audio_jitter_pull(j, out);
		tone(in, 2, f - 1);
		if (f - 1 == 3) {
			assert_memory_equal(out, in, sizeof(out) / 2);
			for (size_t i = SLIM_AUDIO_FRAME; i < SLIM_AUDIO_FRAME * 2; i++) {
				assert_int_equal(out[i], 0);
			}
		} else {
			assert_memory_equal(out, in, sizeof(out));
		}
	}
	const struct slim_audio_stats *st = slim_audio_jitter_stats(j);
	assert_int_equal(st->packets, 6);
	assert_int_equal(st->concealed, 1);
	assert_int_equal(st->lost, 0);
	slim_audio_encoder_destroy(enc);
	slim_audio_jitter_destroy(j);

	enc = slim_audio_encoder_create(SLIM_AUDIO_OPUS, 2, 64000, 10);
	struct slim_audio_packet p;
	tone(in, 2, 0);
	assert_true(slim_audio_encode(enc, in, payload, sizeof(payload), &p) > 0);
	struct wire w = { .n = 0 };
	assert_int_equal(slim_audio_send(NULL, &p, false, 7, SLIM_DEFAULT_MTU, now, keep, &w), 1);
	slim_audio_encoder_destroy(enc);
}

/*
 * Nobody played for half a second while packets came (the session's
 * microphone source idles until something records): the buffer drops to
 * its depth at once, not one frame at a time for the next half second.
 */
static void test_backlog_dropped_at_once(void **state)
{
	struct slim_audio_encoder *enc = slim_audio_encoder_create(SLIM_AUDIO_PCM, 1, 0, 0);
	struct slim_audio_jitter *j = slim_audio_jitter_create(1, 20, 200);
	int16_t in[SLIM_AUDIO_FRAME], out[SLIM_AUDIO_FRAME];
	uint8_t payload[SLIM_AUDIO_MAX_WIRE_PAYLOAD];
	for (int f = 0; f < 50; f++) {
		tone(in, 1, f);
		struct slim_audio_packet p;
		slim_audio_encode(enc, in, payload, sizeof(payload), &p);
		assert_true(slim_audio_jitter_push(j, &p, (uint64_t)f * 10000));
	}
	slim_audio_jitter_pull(j, out);
	const struct slim_audio_stats *st = slim_audio_jitter_stats(j);
	assert_true(st->skipped >= 40);
	/* from then on, each frame follows the one before, as the next ones come */
	uint64_t skipped = st->skipped;
	int first = (int)skipped;
	tone(in, 1, first);
	assert_memory_equal(out, in, sizeof(out));
	tone(in, 1, 50);
	struct slim_audio_packet p;
	slim_audio_encode(enc, in, payload, sizeof(payload), &p);
	assert_true(slim_audio_jitter_push(j, &p, 500000));
	slim_audio_jitter_pull(j, out);
	tone(in, 1, first + 1);
	assert_memory_equal(out, in, sizeof(out));
	assert_int_equal(slim_audio_jitter_stats(j)->skipped, skipped);
	slim_audio_encoder_destroy(enc);
	slim_audio_jitter_destroy(j);
}

/*
 * Each Opus datagram carries the two packets before its own: two lost in a
 * row are rebuilt exactly from the next, three are one concealed frame.
 */
static void test_redundancy(void **state)
{
	struct slim_audio_encoder *enc = slim_audio_encoder_create(SLIM_AUDIO_OPUS, 2, 64000, 10);
	struct slim_audio_jitter *j = slim_audio_jitter_create(2, 20, 200);
	struct slim_audio_sender sender;
	slim_audio_sender_reset(&sender);
	int16_t in[SLIM_AUDIO_FRAME * 2], out[SLIM_AUDIO_FRAME * 2];
	uint8_t payload[SLIM_AUDIO_MAX_PAYLOAD];
	uint64_t now = 1000000;
	int commands = 0;
	for (int f = 0; f < 40; f++, now += 10000) {
		tone(in, 2, f);
		struct slim_audio_packet p;
		assert_true(slim_audio_encode(enc, in, payload, sizeof(payload), &p) > 0);
		struct wire w = { .n = 0 };
		assert_int_equal(slim_audio_send(&sender, &p, false, 7, SLIM_DEFAULT_MTU, now, keep,
			&w), 1);
		/* 10 and 11 lost: 12 brings them; 20, 21 and 22 lost: 23 brings 21 and 22 */
		bool lost = f == 10 || f == 11 || (f >= 20 && f <= 22);
		if (!lost) {
			commands = deliver(j, w.dgram[0], w.len[0], now);
			assert_int_equal(commands, f < SLIM_AUDIO_REDUNDANCY ? f + 1 :
				SLIM_AUDIO_REDUNDANCY + 1);
		}
		if (f > 0) {
			slim_audio_jitter_pull(j, out);
		}
	}
	const struct slim_audio_stats *st = slim_audio_jitter_stats(j);
	print_message("redundancy: repaired %llu, lost %llu, concealed %llu\n",
		(unsigned long long)st->repaired, (unsigned long long)st->lost,
		(unsigned long long)st->concealed);
	assert_int_equal(st->repaired, 4);
	assert_int_equal(st->lost, 1);
	assert_int_equal(st->duplicate, 0);
	assert_int_equal(st->late, 0);
	slim_audio_encoder_destroy(enc);
	slim_audio_jitter_destroy(j);
}

/*
 * Packets that come late (a sender not scheduled in time: the network's
 * jitter does not show it) make the buffer deeper; a stream that simply
 * stops does not.
 */
static void test_late_deepens(void **state)
{
	struct slim_audio_encoder *enc = slim_audio_encoder_create(SLIM_AUDIO_PCM, 1, 0, 0);
	struct slim_audio_jitter *j = slim_audio_jitter_create(1, 20, 200);
	int16_t in[SLIM_AUDIO_FRAME], out[SLIM_AUDIO_FRAME];
	uint8_t payload[SLIM_AUDIO_MAX_WIRE_PAYLOAD];
	struct slim_audio_packet p[40];
	uint8_t data[40][SLIM_AUDIO_FRAME * 2];
	for (int f = 0; f < 40; f++) {
		tone(in, 1, f);
		slim_audio_encode(enc, in, payload, sizeof(payload), &p[f]);
		memcpy(data[f], payload, p[f].len);
		p[f].data = data[f];
	}
	uint64_t t = 0;
	for (int f = 0; f < 10; f++, t += 10000) {
		slim_audio_jitter_push(j, &p[f], t);
		slim_audio_jitter_pull(j, out);
	}
	assert_int_equal(slim_audio_jitter_stats(j)->depth_ms, 20);
	/*
	 * three frames with nothing new (the first plays what is held, two
	 * are guessed), then the three late packets at once: two frames more
	 */
	for (int i = 0; i < 3; i++) {
		slim_audio_jitter_pull(j, out);
	}
	for (int f = 10; f < 13; f++) {
		slim_audio_jitter_push(j, &p[f], t + 30000);
	}
	assert_int_equal(slim_audio_jitter_stats(j)->lost, 0);
	assert_int_equal(slim_audio_jitter_stats(j)->depth_ms, 30);
	slim_audio_jitter_destroy(j);

	/* a stream that stops after its last packet: no lateness */
	j = slim_audio_jitter_create(1, 20, 200);
	t = 0;
	for (int f = 0; f < 20; f++, t += 10000) {
		slim_audio_jitter_push(j, &p[f], t);
		slim_audio_jitter_pull(j, out);
	}
	for (int i = 0; i < 30; i++) {
		slim_audio_jitter_pull(j, out);
	}
	for (int f = 20; f < 40; f++, t += 10000) {
		slim_audio_jitter_push(j, &p[f], t + 300000);
		slim_audio_jitter_pull(j, out);
	}
	assert_int_equal(slim_audio_jitter_stats(j)->depth_ms, 20);
	slim_audio_jitter_destroy(j);
	slim_audio_encoder_destroy(enc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opus_round_trip),
		cmocka_unit_test(test_pcm_exact),
		cmocka_unit_test(test_loss_5),
		cmocka_unit_test(test_loss_10),
		cmocka_unit_test(test_reorder_duplicates),
		cmocka_unit_test(test_depth_follows_jitter),
		cmocka_unit_test(test_bad_packets),
		cmocka_unit_test(test_flood),
		cmocka_unit_test(test_wire_halves),
		cmocka_unit_test(test_backlog_dropped_at_once),
		cmocka_unit_test(test_redundancy),
		cmocka_unit_test(test_late_deepens),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
