/*
 * VIDEO fragments, cut as the server cuts them (slim_video_fragment), sent
 * through the codec (slim_put_video, slim_reader) and put back together by
 * the console's depacketiser: order, loss, resends, key pictures, bounds
 * and fragments that lie about where their bytes go.
 */
#include <stdlib.h>
#include <string.h>
#include "slim-video.h"
#include "test-util.h"

#define SCREEN_W 640
#define SCREEN_H 480
#define ROOM 100
#define MAX_BYTES 4000
#define T0 1000000ull

struct pic {
	struct slim_video_picture p;
	uint8_t bytes[MAX_BYTES];
};

static uint32_t seq;

static void make(struct pic *pic, uint8_t stream, uint32_t frame, uint8_t flags, size_t size,
		struct test_rng *rng)
{
	assert_true(size > 0 && size <= MAX_BYTES);
	test_rand_bytes(rng, pic->bytes, size);
	pic->p = (struct slim_video_picture){
		.stream = stream,
		.flags = flags,
		.width = 320,
		.height = 240,
		.frame = frame,
		.dst = { 10, 20, 320, 240 },
		.clip = { 10, 20, 300, 200 },
		.data = pic->bytes,
		.size = size,
	};
}

static uint16_t frags(const struct pic *pic)
{
	return slim_video_frags(pic->p.size, ROOM);
}

/* A VIDEO command in a datagram of its own, read back and pushed. */
static bool push_raw(struct slim_video_depack *d, uint8_t flags, const struct slim_wire_video *hdr,
		const uint8_t *data, size_t len, uint64_t now)
{
	static uint8_t buf[SLIM_MAX_MTU];
	struct slim_writer w;
	slim_writer_init(&w, buf, SLIM_MAX_MTU, 0x1234, false);
	assert_true(slim_put_video(&w, flags, hdr, data, len));
	size_t n = slim_writer_finish(&w, ++seq, now);
	struct slim_reader r;
	struct slim_dgram dg;
	struct slim_cmd cmd;
	assert_int_equal(slim_reader_init(&r, &dg, buf, n, false, SCREEN_W, SCREEN_H), SLIM_OK);
	assert_int_equal(slim_reader_next(&r, &cmd), SLIM_OK);
	assert_int_equal(cmd.type, SLIM_CMD_VIDEO);
	bool ok = slim_video_depack_push(d, &cmd, now);
	assert_int_equal(slim_reader_next(&r, &cmd), SLIM_OK);
	assert_int_equal(cmd.type, 0);
	return ok;
}

static bool send_frag(struct slim_video_depack *d, const struct pic *pic, uint16_t frag, uint64_t now)
{
	struct slim_wire_video hdr;
	const uint8_t *data;
	size_t len;
	slim_video_fragment(&pic->p, ROOM, frag, &hdr, &data, &len);
	return push_raw(d, pic->p.flags, &hdr, data, len, now);
}

static void send_all(struct slim_video_depack *d, const struct pic *pic, uint64_t now)
{
	for (uint16_t i = 0; i < frags(pic); i++) {
		assert_true(send_frag(d, pic, i, now));
	}
}

static void expect(struct slim_video_depack *d, const struct pic *pic, uint64_t now)
{
	struct slim_video_au au;
	assert_true(slim_video_depack_pop(d, &au, now));
	assert_int_equal(au.stream, pic->p.stream);
	assert_int_equal(au.frame, pic->p.frame);
	assert_int_equal(au.flags, pic->p.flags);
	assert_int_equal(au.width, pic->p.width);
	assert_int_equal(au.height, pic->p.height);
	assert_memory_equal(&au.dst, &pic->p.dst, sizeof(au.dst));
	assert_memory_equal(&au.clip, &pic->p.clip, sizeof(au.clip));
	assert_int_equal(au.size, pic->p.size);
	assert_memory_equal(au.data, pic->bytes, au.size);
}

static void expect_none(struct slim_video_depack *d, uint64_t now)
{
	struct slim_video_au au;
	assert_false(slim_video_depack_pop(d, &au, now));
}

static void test_cutting(void **state)
{
	assert_int_equal(slim_video_frags(0, 100), 1);
	assert_int_equal(slim_video_frags(1, 100), 1);
	assert_int_equal(slim_video_frags(100, 100), 1);
	assert_int_equal(slim_video_frags(101, 100), 2);
	assert_int_equal(slim_video_frags(SLIM_VIDEO_MAX_PICTURE, 2048), SLIM_VIDEO_MAX_FRAGS);
	assert_int_equal(slim_video_frags(SLIM_VIDEO_MAX_PICTURE, 1), UINT16_MAX);
	assert_int_equal(slim_video_frags(10, 0), UINT16_MAX);

	struct test_rng rng;
	test_rng_init(&rng, 1);
	static struct pic pic;
	make(&pic, 2, 77, SLIM_VIDEO_KEY, 250, &rng);
	struct slim_wire_video h;
	const uint8_t *data;
	size_t len;
	slim_video_fragment(&pic.p, ROOM, 2, &h, &data, &len);
	assert_int_equal(h.stream, 2);
	assert_int_equal(h.codec, SLIM_CODEC_H264);
	assert_int_equal(h.frag, 2);
	assert_int_equal(h.frags, 3);
	assert_int_equal(h.frame, 77);
	assert_int_equal(h.offset, 200);
	assert_int_equal(h.size, 250);
	assert_int_equal(h.width, 320);
	assert_int_equal(h.clip.w, 300);
	assert_ptr_equal(data, pic.bytes + 200);
	assert_int_equal(len, 50);
}

/*
 * Thirty pictures, the fragments of each three in random order with random
 * copies among them, come out whole, in order, each once.
 */
static void test_shuffled(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 2);
	struct slim_video_depack *d = slim_video_depack_create();
	static struct pic pics[30];
	for (uint32_t i = 0; i < 30; i++) {
		make(&pics[i], 0, 1000 + i, i == 0 ? SLIM_VIDEO_START | SLIM_VIDEO_KEY : 0,
			test_rand_range(&rng, 1, MAX_BYTES), &rng);
	}
	uint64_t now = T0, copies = 0, sent = 0;
	uint32_t out = 0;
	for (uint32_t g = 0; g < 30; g += 3) {
		struct sent { uint32_t pic; uint16_t frag; } order[3 * 40 * 2];
		size_t n = 0;
		for (uint32_t i = g; i < g + 3; i++) {
			for (uint16_t f = 0; f < frags(&pics[i]); f++) {
				order[n++] = (struct sent){ i, f };
				if (test_rand_below(&rng, 4) == 0) {
					order[n++] = (struct sent){ i, f };
					copies++;
				}
			}
		}
		for (size_t i = n - 1; i > 0; i--) {
			size_t j = test_rand_below(&rng, (uint32_t)i + 1);
			struct sent t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (size_t i = 0; i < n; i++) {
			now += 100;
			assert_true(send_frag(d, &pics[order[i].pic], order[i].frag, now));
			sent++;
			struct slim_video_au au;
			while (slim_video_depack_pop(d, &au, now)) {
				assert_int_equal(au.frame, pics[out].p.frame);
				assert_int_equal(au.size, pics[out].p.size);
				assert_memory_equal(au.data, pics[out].bytes, au.size);
				out++;
			}
		}
	}
	assert_int_equal(out, 30);
	const struct slim_video_depack_stats *st = slim_video_depack_stats(d);
	assert_int_equal(st->fragments, sent);
	assert_int_equal(st->duplicates, copies);
	assert_int_equal(st->pictures, 30);
	assert_int_equal(st->skipped, 0);
	assert_int_equal(st->bad, 0);
	assert_int_equal(slim_video_depack_next_deadline(d, now), -1);
	slim_video_depack_destroy(d);
}

/* A fragment lost and sent again within the hold: nothing is skipped. */
static void test_resent(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 3);
	struct slim_video_depack *d = slim_video_depack_create();
	static struct pic pics[5];
	for (uint32_t i = 0; i < 5; i++) {
		make(&pics[i], 1, 10 + i, i == 0 ? SLIM_VIDEO_KEY : 0, 350, &rng);
	}
	uint64_t now = T0;
	send_all(d, &pics[0], now);
	send_all(d, &pics[1], now);
	expect(d, &pics[0], now);
	expect(d, &pics[1], now);
	expect_none(d, now);
	assert_int_equal(slim_video_depack_next_deadline(d, now), -1);
	for (uint16_t f = 0; f < frags(&pics[2]); f++) {
		if (f != 1) {
			assert_true(send_frag(d, &pics[2], f, now));
		}
	}
	/* incomplete and nothing after it: nothing to give up on */
	assert_int_equal(slim_video_depack_next_deadline(d, now), -1);
	now += 1000;
	send_all(d, &pics[3], now);
	send_all(d, &pics[4], now + 5000);
	expect_none(d, now + 5000);
	assert_int_equal(slim_video_depack_next_deadline(d, now + 5000), SLIM_VIDEO_HOLD_US - 5000);
	now += SLIM_VIDEO_HOLD_US - 1;
	expect_none(d, now);
	assert_int_equal(slim_video_depack_next_deadline(d, now), 1);
	assert_true(send_frag(d, &pics[2], 1, now));
	assert_int_equal(slim_video_depack_next_deadline(d, now), 0);
	expect(d, &pics[2], now);
	expect(d, &pics[3], now);
	expect(d, &pics[4], now);
	expect_none(d, now + SLIM_VIDEO_HOLD_US);
	uint8_t stream;
	uint32_t frame;
	assert_false(slim_video_depack_wants_key(d, now, &stream, &frame));
	assert_int_equal(slim_video_depack_stats(d)->skipped, 0);
	assert_int_equal(slim_video_depack_next_deadline(d, now), -1);
	slim_video_depack_destroy(d);
}

/*
 * A fragment never comes: the hold ends, the stream asks for a key
 * picture every SLIM_VIDEO_ASK_US and hands out nothing but one.
 */
static void test_hold_ends(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 4);
	struct slim_video_depack *d = slim_video_depack_create();
	static struct pic pics[9];
	for (uint32_t i = 0; i < 9; i++) {
		make(&pics[i], 3, 20 + i, i == 0 || i == 6 ? SLIM_VIDEO_KEY : 0, 250, &rng);
	}
	uint64_t now = T0;
	send_all(d, &pics[0], now);
	send_all(d, &pics[1], now);
	expect(d, &pics[0], now);
	expect(d, &pics[1], now);
	assert_true(send_frag(d, &pics[2], 0, now));
	send_all(d, &pics[3], now);
	send_all(d, &pics[4], now);
	uint8_t stream = 0xff;
	uint32_t frame = 0;
	now += SLIM_VIDEO_HOLD_US - 1;
	expect_none(d, now);
	assert_false(slim_video_depack_wants_key(d, now, &stream, &frame));
	now++;
	assert_int_equal(slim_video_depack_next_deadline(d, now), 0);
	expect_none(d, now);
	assert_int_equal(slim_video_depack_next_deadline(d, now), -1);
	assert_int_equal(slim_video_depack_stats(d)->skipped, 3);
	assert_true(slim_video_depack_wants_key(d, now, &stream, &frame));
	assert_int_equal(stream, 3);
	assert_int_equal(frame, 21);
	assert_false(slim_video_depack_wants_key(d, now, &stream, &frame));
	assert_false(slim_video_depack_wants_key(d, now + SLIM_VIDEO_ASK_US - 1, &stream, &frame));
	assert_true(slim_video_depack_wants_key(d, now + SLIM_VIDEO_ASK_US, &stream, &frame));
	assert_int_equal(slim_video_depack_stats(d)->key_requests, 2);
	/* what was given up stays given up: a late fragment of it is a copy */
	assert_true(send_frag(d, &pics[2], 1, now));
	assert_int_equal(slim_video_depack_stats(d)->duplicates, 1);
	/* a whole picture that needs what was lost waits; the key picture goes */
	send_all(d, &pics[5], now);
	expect_none(d, now);
	send_all(d, &pics[7], now);
	send_all(d, &pics[6], now);
	expect(d, &pics[6], now);
	expect(d, &pics[7], now);
	send_all(d, &pics[8], now);
	expect(d, &pics[8], now);
	assert_int_equal(slim_video_depack_stats(d)->skipped, 4);
	now += 10 * SLIM_VIDEO_ASK_US;
	assert_false(slim_video_depack_wants_key(d, now, &stream, &frame));
	slim_video_depack_destroy(d);
}

/* A whole key picture goes at once: the incomplete ones before it are skipped. */
static void test_key_skips(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 5);
	struct slim_video_depack *d = slim_video_depack_create();
	static struct pic pics[4];
	for (uint32_t i = 0; i < 4; i++) {
		make(&pics[i], 0, 5 + i, i == 0 || i == 3 ? SLIM_VIDEO_KEY : 0, 150, &rng);
	}
	send_all(d, &pics[0], T0);
	expect(d, &pics[0], T0);
	assert_true(send_frag(d, &pics[1], 0, T0));
	assert_true(send_frag(d, &pics[2], 1, T0));
	send_all(d, &pics[3], T0);
	expect(d, &pics[3], T0);
	assert_int_equal(slim_video_depack_stats(d)->skipped, 2);
	uint8_t stream;
	uint32_t frame;
	assert_false(slim_video_depack_wants_key(d, T0, &stream, &frame));
	slim_video_depack_destroy(d);
}

/* A stream starts with a key picture; a whole one that is not waits, then asks. */
static void test_starts_with_key(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 6);
	struct slim_video_depack *d = slim_video_depack_create();
	static struct pic p, key;
	make(&p, 2, 500, 0, 120, &rng);
	make(&key, 2, 501, SLIM_VIDEO_KEY, 120, &rng);
	send_all(d, &p, T0);
	expect_none(d, T0);
	assert_int_equal(slim_video_depack_next_deadline(d, T0), SLIM_VIDEO_HOLD_US);
	expect_none(d, T0 + SLIM_VIDEO_HOLD_US);
	uint8_t stream;
	uint32_t frame;
	assert_true(slim_video_depack_wants_key(d, T0 + SLIM_VIDEO_HOLD_US, &stream, &frame));
	assert_int_equal(stream, 2);
	send_all(d, &key, T0 + SLIM_VIDEO_HOLD_US);
	expect(d, &key, T0 + SLIM_VIDEO_HOLD_US);
	slim_video_depack_destroy(d);
}

/* Sixteen pictures wait at most, and 8 MiB: past that the oldest goes, and a key is wanted. */
static void test_bounds(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 7);
	struct slim_video_depack *d = slim_video_depack_create();
	static struct pic pics[18];
	for (uint32_t i = 0; i < 18; i++) {
		make(&pics[i], 0, 40 + i, i == 0 ? SLIM_VIDEO_KEY : 0, 150, &rng);
	}
	send_all(d, &pics[0], T0);
	expect(d, &pics[0], T0);
	uint8_t stream;
	uint32_t frame;
	for (uint32_t i = 1; i <= SLIM_VIDEO_MAX_WAITING; i++) {
		assert_true(send_frag(d, &pics[i], 0, T0));
		assert_false(slim_video_depack_wants_key(d, T0, &stream, &frame));
	}
	assert_true(send_frag(d, &pics[17], 0, T0));
	assert_int_equal(slim_video_depack_stats(d)->skipped, 1);
	assert_true(slim_video_depack_wants_key(d, T0, &stream, &frame));
	assert_int_equal(frame, 40);
	/* the oldest went: its second fragment is a late copy */
	assert_true(send_frag(d, &pics[1], 1, T0));
	assert_int_equal(slim_video_depack_stats(d)->duplicates, 1);
	/* the others are still there */
	assert_true(send_frag(d, &pics[2], 1, T0));
	expect_none(d, T0);

	/* bytes: four pictures of the largest size fill 8 MiB; a fifth drops the oldest */
	slim_video_depack_reset(d);
	uint64_t skipped = slim_video_depack_stats(d)->skipped;
	static uint8_t chunk[1000];
	for (uint32_t i = 0; i < 5; i++) {
		struct slim_wire_video h = {
			.stream = 1, .codec = SLIM_CODEC_H264, .frag = 0, .frags = 2,
			.width = 64, .height = 64, .frame = 7 + i, .offset = 0,
			.size = SLIM_VIDEO_MAX_PICTURE, .dst = { 0, 0, 64, 64 }, .clip = { 0, 0, 64, 64 },
		};
		assert_true(push_raw(d, 0, &h, chunk, sizeof(chunk), T0));
		assert_int_equal(slim_video_depack_stats(d)->skipped, skipped + (i == 4));
	}
	assert_true(slim_video_depack_wants_key(d, T0, &stream, &frame));
	assert_int_equal(stream, 1);
	slim_video_depack_destroy(d);
}

/* A fragment whose header disagrees with its picture's first is dropped, nothing else. */
static void test_disagreeing(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 8);
	struct slim_video_depack *d = slim_video_depack_create();
	static struct pic pic;
	make(&pic, 0, 3, SLIM_VIDEO_KEY, 300, &rng);
	assert_true(send_frag(d, &pic, 0, T0));
	struct slim_wire_video h;
	const uint8_t *data;
	size_t len;
	slim_video_fragment(&pic.p, ROOM, 1, &h, &data, &len);
	struct slim_wire_video bad = h;
	bad.size = 301;
	assert_false(push_raw(d, SLIM_VIDEO_KEY, &bad, data, len, T0));
	bad = h;
	bad.frags = 4;
	assert_false(push_raw(d, SLIM_VIDEO_KEY, &bad, data, len, T0));
	bad = h;
	bad.width = 322;
	assert_false(push_raw(d, SLIM_VIDEO_KEY, &bad, data, len, T0));
	bad = h;
	bad.dst.w = 330;
	assert_false(push_raw(d, SLIM_VIDEO_KEY, &bad, data, len, T0));
	bad = h;
	bad.clip.h = 199;
	assert_false(push_raw(d, SLIM_VIDEO_KEY, &bad, data, len, T0));
	assert_false(push_raw(d, 0, &h, data, len, T0));
	assert_false(push_raw(d, SLIM_VIDEO_KEY | SLIM_VIDEO_START, &h, data, len, T0));
	assert_int_equal(slim_video_depack_stats(d)->bad, 7);
	expect_none(d, T0);
	assert_true(send_frag(d, &pic, 1, T0));
	assert_true(send_frag(d, &pic, 2, T0));
	expect(d, &pic, T0);
	/* numbers far ahead or behind: counted, not kept */
	static struct pic far;
	make(&far, 0, 3 + 1025, 0, 50, &rng);
	assert_false(send_frag(d, &far, 0, T0));
	far.p.frame = 3 + 1024;
	assert_true(send_frag(d, &far, 0, T0));
	far.p.frame = 2;
	assert_true(send_frag(d, &far, 0, T0));
	assert_int_equal(slim_video_depack_stats(d)->bad, 8);
	assert_int_equal(slim_video_depack_stats(d)->duplicates, 1);
	slim_video_depack_destroy(d);
}

/* The numbers wrap from 0xffffffff to 0 without a skip. */
static void test_wrap(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 9);
	struct slim_video_depack *d = slim_video_depack_create();
	static struct pic pics[5];
	for (uint32_t i = 0; i < 5; i++) {
		make(&pics[i], 0, 0xfffffffdu + i, i == 0 ? SLIM_VIDEO_KEY : 0, 220, &rng);
	}
	send_all(d, &pics[0], T0);
	expect(d, &pics[0], T0);
	send_all(d, &pics[4], T0);
	send_all(d, &pics[2], T0);
	send_all(d, &pics[3], T0);
	expect_none(d, T0);
	assert_true(send_frag(d, &pics[1], 2, T0));
	assert_true(send_frag(d, &pics[1], 0, T0));
	expect_none(d, T0);
	assert_true(send_frag(d, &pics[1], 1, T0));
	for (uint32_t i = 1; i < 5; i++) {
		expect(d, &pics[i], T0);
	}
	assert_int_equal(pics[4].p.frame, 1);
	assert_int_equal(slim_video_depack_stats(d)->skipped, 0);
	slim_video_depack_destroy(d);
}

/* A new encoder: its first picture goes whatever its number, and the numbering starts there. */
static void test_start(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 10);
	struct slim_video_depack *d = slim_video_depack_create();
	static struct pic old[3], fresh[3];
	for (uint32_t i = 0; i < 3; i++) {
		make(&old[i], 0, 100000 + i, i == 0 ? SLIM_VIDEO_KEY | SLIM_VIDEO_START : 0, 180, &rng);
		make(&fresh[i], 0, i, i == 0 ? SLIM_VIDEO_KEY | SLIM_VIDEO_START : 0, 180, &rng);
	}
	send_all(d, &old[0], T0);
	send_all(d, &old[1], T0);
	expect(d, &old[0], T0);
	expect(d, &old[1], T0);
	assert_true(send_frag(d, &old[2], 0, T0));
	/* the new encoder's second picture comes before its first is whole */
	assert_true(send_frag(d, &fresh[0], 0, T0));
	send_all(d, &fresh[1], T0);
	expect_none(d, T0);
	send_all(d, &fresh[0], T0);
	expect(d, &fresh[0], T0);
	expect(d, &fresh[1], T0);
	assert_int_equal(slim_video_depack_stats(d)->skipped, 1);
	/* the old encoder's pictures are behind the new numbering or too far ahead */
	assert_false(send_frag(d, &old[2], 1, T0));
	send_all(d, &fresh[2], T0);
	expect(d, &fresh[2], T0);
	uint8_t stream;
	uint32_t frame;
	assert_false(slim_video_depack_wants_key(d, T0, &stream, &frame));
	slim_video_depack_destroy(d);
}

/*
 * A new encoder's first picture lost whole: the pictures after it, behind
 * the old numbering, are not taken; after a hold's time of them the stream
 * wants a key picture, and takes one whatever its number.
 */
static void test_start_lost(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 14);
	struct slim_video_depack *d = slim_video_depack_create();
	static struct pic old, fresh[5];
	make(&old, 0, 500, SLIM_VIDEO_KEY | SLIM_VIDEO_START, 100, &rng);
	for (uint32_t i = 0; i < 5; i++) {
		make(&fresh[i], 0, i, i == 0 ? SLIM_VIDEO_KEY | SLIM_VIDEO_START :
			i == 3 ? SLIM_VIDEO_KEY : 0, 100, &rng);
	}
	send_all(d, &old, T0);
	expect(d, &old, T0);
	uint8_t stream;
	uint32_t frame;
	send_all(d, &fresh[1], T0);
	send_all(d, &fresh[2], T0 + SLIM_VIDEO_HOLD_US - 1);
	expect_none(d, T0 + SLIM_VIDEO_HOLD_US - 1);
	assert_false(slim_video_depack_wants_key(d, T0 + SLIM_VIDEO_HOLD_US - 1, &stream, &frame));
	/* a key picture that is not the one wanted yet: not taken either */
	send_all(d, &fresh[3], T0 + SLIM_VIDEO_HOLD_US);
	expect_none(d, T0 + SLIM_VIDEO_HOLD_US);
	assert_true(slim_video_depack_wants_key(d, T0 + SLIM_VIDEO_HOLD_US, &stream, &frame));
	assert_int_equal(frame, 500);
	send_all(d, &fresh[3], T0 + SLIM_VIDEO_HOLD_US);
	expect(d, &fresh[3], T0 + SLIM_VIDEO_HOLD_US);
	send_all(d, &fresh[4], T0 + SLIM_VIDEO_HOLD_US);
	expect(d, &fresh[4], T0 + SLIM_VIDEO_HOLD_US);
	assert_false(slim_video_depack_wants_key(d, T0 + 10 * SLIM_VIDEO_HOLD_US, &stream, &frame));
	slim_video_depack_destroy(d);
}

/*
 * Fragments that overlap, leave gaps, or move: each is dropped where it
 * would make the picture anything but its bytes, once, in order.
 */
static void test_hostile_offsets(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 11);
	struct slim_video_depack *d = slim_video_depack_create();
	static struct pic pic;
	make(&pic, 0, 9, SLIM_VIDEO_KEY, 300, &rng);
	struct slim_wire_video h[3];
	const uint8_t *data[3];
	size_t len[3];
	for (uint16_t i = 0; i < 3; i++) {
		slim_video_fragment(&pic.p, ROOM, i, &h[i], &data[i], &len[i]);
	}
	struct slim_wire_video x = h[0];
	x.offset = 5; /* the first fragment starts the picture */
	assert_false(push_raw(d, SLIM_VIDEO_KEY, &x, pic.bytes + 5, 100, T0));
	x = h[2];
	x.offset = 150; /* the last ends it */
	assert_false(push_raw(d, SLIM_VIDEO_KEY, &x, pic.bytes + 150, 100, T0));
	assert_true(push_raw(d, SLIM_VIDEO_KEY, &h[0], data[0], len[0], T0));
	x = h[2];
	x.offset = 100; /* leaves no byte for the one between */
	assert_false(push_raw(d, SLIM_VIDEO_KEY, &x, pic.bytes + 100, 200, T0));
	x = h[1];
	x.offset = 50; /* overlaps the first */
	assert_false(push_raw(d, SLIM_VIDEO_KEY, &x, pic.bytes + 50, 100, T0));
	x.offset = 101; /* a gap after it */
	assert_false(push_raw(d, SLIM_VIDEO_KEY, &x, pic.bytes + 101, 99, T0));
	x = h[2];
	x.offset = 0; /* where the first is */
	assert_false(push_raw(d, SLIM_VIDEO_KEY, &x, pic.bytes, 300, T0));
	x = h[0];
	x.offset = 0; /* the first again, shorter: not a copy */
	assert_false(push_raw(d, SLIM_VIDEO_KEY, &x, pic.bytes, 99, T0));
	assert_true(push_raw(d, SLIM_VIDEO_KEY, &h[2], data[2], len[2], T0));
	x = h[1];
	x.offset = 100; /* runs into the last */
	assert_false(push_raw(d, SLIM_VIDEO_KEY, &x, pic.bytes + 100, 150, T0));
	assert_int_equal(slim_video_depack_stats(d)->bad, 8);
	expect_none(d, T0);
	assert_true(push_raw(d, SLIM_VIDEO_KEY, &h[1], data[1], len[1], T0));
	expect(d, &pic, T0);

	/* cut otherwise than the server cuts, but consistent: taken */
	static struct pic odd;
	make(&odd, 0, 10, 0, 300, &rng);
	x = h[0];
	x.frame = 10;
	x.offset = 0;
	assert_true(push_raw(d, 0, &x, odd.bytes, 1, T0));
	x.frag = 2;
	x.offset = 2;
	assert_true(push_raw(d, 0, &x, odd.bytes + 2, 298, T0));
	x.frag = 1;
	x.offset = 1;
	assert_true(push_raw(d, 0, &x, odd.bytes + 1, 1, T0));
	expect(d, &odd, T0);
	slim_video_depack_destroy(d);
}

/* The decoder could not use a picture: the stream wants a key until one goes. */
static void test_broken(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 12);
	struct slim_video_depack *d = slim_video_depack_create();
	static struct pic pics[4];
	for (uint32_t i = 0; i < 4; i++) {
		make(&pics[i], 3, 60 + i, i == 0 || i == 3 ? SLIM_VIDEO_KEY : 0, 120, &rng);
	}
	uint8_t stream;
	uint32_t frame;
	slim_video_depack_broken(d, 3, 60); /* nothing handed out: nothing broken */
	slim_video_depack_broken(d, SLIM_VIDEO_STREAMS, 60);
	assert_false(slim_video_depack_wants_key(d, T0, &stream, &frame));
	send_all(d, &pics[0], T0);
	send_all(d, &pics[1], T0);
	expect(d, &pics[0], T0);
	expect(d, &pics[1], T0);
	slim_video_depack_broken(d, 3, 61);
	assert_true(slim_video_depack_wants_key(d, T0, &stream, &frame));
	assert_int_equal(stream, 3);
	assert_int_equal(frame, 61);
	send_all(d, &pics[2], T0);
	expect_none(d, T0);
	send_all(d, &pics[3], T0);
	expect(d, &pics[3], T0);
	/* a report about a picture before the key picture that mended it */
	slim_video_depack_broken(d, 3, 62);
	assert_false(slim_video_depack_wants_key(d, T0 + SLIM_VIDEO_ASK_US, &stream, &frame));
	slim_video_depack_destroy(d);
}

/* Streams are apart: one's loss holds nothing of another's; reset forgets all. */
static void test_streams_and_reset(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 13);
	struct slim_video_depack *d = slim_video_depack_create();
	static struct pic a[3], b[3];
	for (uint32_t i = 0; i < 3; i++) {
		make(&a[i], 0, 1 + i, i == 0 ? SLIM_VIDEO_KEY : 0, 200, &rng);
		make(&b[i], 1, 1 + i, i == 0 ? SLIM_VIDEO_KEY : 0, 200, &rng);
	}
	send_all(d, &a[0], T0);
	send_all(d, &b[0], T0);
	assert_true(send_frag(d, &a[1], 0, T0));
	send_all(d, &a[2], T0);
	send_all(d, &b[1], T0);
	send_all(d, &b[2], T0);
	struct slim_video_au au;
	uint32_t next[2] = { 1, 1 };
	while (slim_video_depack_pop(d, &au, T0)) {
		assert_true(au.stream < 2);
		assert_int_equal(au.frame, next[au.stream]++);
	}
	assert_int_equal(next[0], 2);
	assert_int_equal(next[1], 4);
	assert_true(slim_video_depack_next_deadline(d, T0) > 0);
	slim_video_depack_reset(d);
	assert_int_equal(slim_video_depack_next_deadline(d, T0), -1);
	expect_none(d, T0 + SLIM_VIDEO_HOLD_US);
	send_all(d, &a[1], T0);
	expect_none(d, T0);
	send_all(d, &a[0], T0);
	expect(d, &a[0], T0);
	expect(d, &a[1], T0);
	slim_video_depack_destroy(d);
	slim_video_depack_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cutting),
		cmocka_unit_test(test_shuffled),
		cmocka_unit_test(test_resent),
		cmocka_unit_test(test_hold_ends),
		cmocka_unit_test(test_key_skips),
		cmocka_unit_test(test_starts_with_key),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_disagreeing),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_start),
		cmocka_unit_test(test_start_lost),
		cmocka_unit_test(test_hostile_offsets),
		cmocka_unit_test(test_broken),
		cmocka_unit_test(test_streams_and_reset),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
