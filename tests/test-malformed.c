/*
 * What the network may bring: valid datagrams, corrupted in every way we
 * can think of, fed to the console. A bad datagram is rejected whole,
 * counted, and changes nothing: not a pixel, not the cursor, and nothing
 * is sent back. Here the datagram's frame: its header, lengths, counts,
 * rectangles, compression, and random corruption; each command's fields
 * are in test-malformed-commands.c.
 */
#include <lz4.h>
#include <zstd.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "malformed-fixture.h"
#include "slim-log.h"
#include "slim-zstd.h"

static void test_truncated(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	build_full(f, d);
	for (size_t len = 0; len < d->len; len++) {
		expect_reject(f, d->buf, len, SLIM_ERR_SHORT);
	}
	/* whole, it is fine */
	expect_accept(f, d->buf, d->len);
	dgram_free(d);
}

/* The error a command whose length field lies by `delta` should get. */
static enum slim_error lying_error(const struct dgram *d, size_t k, uint16_t len, int delta)
{
	bool last = k == d->n - 1;
	if (delta > 0 && last) {
		return SLIM_ERR_SHORT; /* runs past the end */
	}
	bool lz4 = cmd_type(d, k) == SLIM_CMD_SET && (d->buf[d->off[k] + 1] & SLIM_SET_LZ4);
	if (lz4 && len + delta >= (int)sizeof(struct slim_wire_set) + 1) {
		/* the length of compressed data is its own: LZ4 finds it wrong */
		return SLIM_ERR_LZ4;
	}
	bool runs = cmd_type(d, k) == SLIM_CMD_PALETTE && (d->buf[d->off[k] + 1] & SLIM_PALETTE_RLE);
	uint8_t colors = d->buf[d->off[k] + sizeof(struct slim_wire_cmd) + 8];
	if (runs && len + delta >= (int)sizeof(struct slim_wire_palette) + 3 * colors) {
		/* so is that of runs: they no longer cover the rectangle */
		return SLIM_ERR_PALETTE;
	}
	return SLIM_ERR_LENGTH;
}

static void test_lying_lengths(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	size_t n = build_full(f, d);
	for (size_t k = 0; k < n; k++) {
		uint16_t len = get_cmd_len(d, k);
		const int deltas[] = { 1, -1, 2, -2, 7, -(int)len };
		for (size_t i = 0; i < sizeof(deltas) / sizeof(deltas[0]); i++) {
			set_cmd_len(d, k, (uint16_t)(len + deltas[i]));
			expect_reject(f, d->buf, d->len, lying_error(d, k, len, deltas[i]));
		}
		/* far past the end */
		set_cmd_len(d, k, 0xffff);
		expect_reject(f, d->buf, d->len, SLIM_ERR_SHORT);
		set_cmd_len(d, k, (uint16_t)(d->len - d->off[k] - 4 + 1));
		expect_reject(f, d->buf, d->len, SLIM_ERR_SHORT);
		set_cmd_len(d, k, len);
	}
	expect_accept(f, d->buf, d->len);
	dgram_free(d);
}

struct rect_case {
	struct slim_rect r;
	enum slim_error err;
};

static const struct rect_case rect_cases[] = {
	{ { 0, 0, CW, CH }, SLIM_OK },
	{ { CW - 1, CH - 1, 1, 1 }, SLIM_OK },
	{ { CW - 10, 0, 11, 1 }, SLIM_ERR_RECT },
	{ { 0, CH - 5, 1, 6 }, SLIM_ERR_RECT },
	{ { 0, 0, CW + 1, 1 }, SLIM_ERR_RECT },
	{ { 0, 0, 1, CH + 1 }, SLIM_ERR_RECT },
	{ { CW, 0, 1, 1 }, SLIM_ERR_RECT },
	{ { 0, CH, 1, 1 }, SLIM_ERR_RECT },
	{ { 0, 0, 0, 5 }, SLIM_ERR_RECT },
	{ { 0, 0, 5, 0 }, SLIM_ERR_RECT },
	{ { 0, 0, 0, 0 }, SLIM_ERR_RECT },
	{ { 65535, 0, 2, 1 }, SLIM_ERR_RECT }, /* x + w wraps in 16 bits */
	{ { 0, 65535, 1, 2 }, SLIM_ERR_RECT },
	{ { 1, 1, 65535, 65535 }, SLIM_ERR_RECT },
};

static void check_rect_case(struct fixture *f, struct dgram *d, enum slim_error err)
{
	dgram_end(f, d);
	if (err == SLIM_OK) {
		expect_accept(f, d->buf, d->len);
	} else {
		expect_reject(f, d->buf, d->len, err);
	}
}

static void test_rect_off_screen(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	for (size_t i = 0; i < sizeof(rect_cases) / sizeof(rect_cases[0]); i++) {
		struct slim_rect r = rect_cases[i].r;
		enum slim_error err = rect_cases[i].err;
		struct slim_wire_rect wr = { r.x, r.y, r.w, r.h };

		dgram_begin(d);
		assert_true(slim_put_fill(&d->w, r, 0xff00ff));
		check_rect_case(f, d, err);

		/* SET and BITMAP with as many pixels as the rectangle has (none if it is empty) */
		if ((size_t)r.w * r.h * 4 + 8 <= UINT16_MAX) {
			dgram_begin(d);
			uint8_t *p = slim_writer_add(&d->w, SLIM_CMD_SET, 0, 8 + (r.w && r.h ? r.w * r.h * 4u : 4));
			memcpy(p, &wr, sizeof(wr));
			check_rect_case(f, d, err);

			dgram_begin(d);
			struct slim_wire_bitmap b = { .r = wr, .fg = 1, .bg = 2 };
			p = slim_writer_add(&d->w, SLIM_CMD_BITMAP, 0, sizeof(b) + (r.w + 7u) / 8 * r.h);
			memset(p, 0xa5, sizeof(b) + (r.w + 7u) / 8 * r.h);
			memcpy(p, &b, sizeof(b));
			check_rect_case(f, d, err);
		}

		/* COPY from it to the origin, and from the origin to it */
		dgram_begin(d);
		assert_true(slim_put_copy(&d->w, r, 0, 0));
		check_rect_case(f, d, err);
		dgram_begin(d);
		assert_true(slim_put_copy(&d->w, (struct slim_rect){ 0, 0, r.w, r.h }, r.x, r.y));
		check_rect_case(f, d, err);

		/* CSCS painting it, from a 2x2 image */
		dgram_begin(d);
		struct slim_wire_cscs c = { .src_w = 2, .src_h = 2, .dst = wr,
			.psrc = { 0, 0, 2, 2 }, .pdst = wr };
		if (r.w == 0 || r.h == 0) {
			c.dst.w = c.dst.h = 1; /* an empty dst is a bad field; here pdst is tested */
		}
		uint8_t *p = slim_writer_add(&d->w, SLIM_CMD_CSCS, 0, sizeof(c) + 6);
		memcpy(p, &c, sizeof(c));
		memset(p + sizeof(c), 0x80, 6);
		check_rect_case(f, d, err);
	}
	dgram_free(d);
}

static void test_unknown_types(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	build_full(f, d);
	for (unsigned t = 0; t < 256; t++) {
		if (t >= SLIM_CMD_FILL && t <= SLIM_CMD_VIDEO) {
			continue;
		}
		/* in the middle of the datagram */
		d->buf[d->off[5]] = (uint8_t)t;
		expect_reject(f, d->buf, d->len, (t & 0x80) ? SLIM_ERR_DIRECTION : SLIM_ERR_UNKNOWN);
	}
	d->buf[d->off[5]] = SLIM_CMD_BITMAP;
	expect_accept(f, d->buf, d->len);
	dgram_free(d);
}

/* The upstream commands, each alone in a downstream datagram. */
static void test_upstream_in_downstream(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	struct slim_wire_hello hello = { .version = 1, .width = CW, .height = CH, .mtu = 1400 };
	struct slim_wire_input ev = { .kind = SLIM_INPUT_KEY, .code = 1, .value = 1 };
	struct slim_wire_ack ack = { .frame = 1, .highest_seq = 1 };
	struct slim_wire_seq_range range = { 1, 2 };
	uint16_t held = 30;
	for (int k = 0; k < 7; k++) {
		dgram_begin(d);
		assert_true(slim_put_fill(&d->w, (struct slim_rect){ 0, 0, 4, 4 }, 0));
		switch (k) {
		case 0:
			assert_true(slim_put_hello(&d->w, &hello));
			break;
		case 1:
			assert_true(slim_put_input(&d->w, 1, &ev, 1));
			break;
		case 2:
			assert_true(slim_put_ack(&d->w, &ack));
			break;
		case 3:
			assert_true(slim_put_nack(&d->w, &range, 1, 0));
			break;
		case 4:
			add_raw(&d->w, 0x88, 0, NULL, 8);
			break;
		case 5:
			assert_true(slim_put_held(&d->w, 2, &held, 1));
			break;
		case 6:
			assert_true(slim_put_ping(&d->w));
			break;
		}
		dgram_end(f, d);
		expect_reject(f, d->buf, d->len, SLIM_ERR_DIRECTION);
	}

	/* downstream commands in a datagram marked upstream */
	build_full(f, d);
	d->buf[5] |= SLIM_DGRAM_UPSTREAM;
	expect_reject(f, d->buf, d->len, SLIM_ERR_DIRECTION);
	/* and what the reader says on the server's side */
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	assert_int_equal(slim_reader_init(&r, &hdr, d->buf, d->len, true, CW, CH), SLIM_OK);
	assert_int_equal(slim_reader_next(&r, &cmd), SLIM_ERR_DIRECTION);
	d->buf[5] &= (uint8_t)~SLIM_DGRAM_UPSTREAM;
	assert_int_equal(slim_reader_init(&r, &hdr, d->buf, d->len, true, CW, CH),
		SLIM_ERR_DIRECTION);
	expect_accept(f, d->buf, d->len);
	dgram_free(d);
}

static void test_bad_header(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	build_full(f, d);
	uint8_t *copy = malloc(d->len);
	for (int i = 0; i < 4; i++) {
		memcpy(copy, d->buf, d->len);
		copy[i] ^= 0x20; /* "slim" is not "SLIM" */
		expect_reject(f, copy, d->len, SLIM_ERR_MAGIC);
	}
	/* version 1, before numbered input, included */
	const uint8_t versions[] = { 0, 1, 3, 0x81, 0xff };
	for (size_t i = 0; i < sizeof(versions); i++) {
		memcpy(copy, d->buf, d->len);
		copy[4] = versions[i];
		expect_reject(f, copy, d->len, SLIM_ERR_VERSION);
	}
	memcpy(copy, d->buf, d->len);
	copy[5] = SLIM_DGRAM_UPSTREAM;
	expect_reject(f, copy, d->len, SLIM_ERR_DIRECTION);

	const uint32_t assocs[] = { ASSOC + 1, ASSOC ^ 0x80000000u, 0 };
	for (size_t i = 0; i < 3; i++) {
		memcpy(copy, d->buf, d->len);
		memcpy(copy + 8, &assocs[i], 4);
		expect_reject(f, copy, d->len, SLIM_ERR_ASSOC);
	}
	/* a header alone, shorter than a header */
	expect_reject(f, d->buf, sizeof(struct slim_wire_dgram) - 1, SLIM_ERR_SHORT);
	expect_reject(f, d->buf, 0, SLIM_ERR_SHORT);
	expect_accept(f, d->buf, d->len);
	free(copy);
	dgram_free(d);
}

/* Before HELLO there is no association: nothing is accepted, not even association 0. */
static void test_no_association(void **state)
{
	struct test_sink *sink = test_sink_create();
	struct slim_console_core *core = slim_console_core_create(64, 48, 1400, NULL,
		test_sink_send, sink);
	assert_non_null(core);
	uint8_t buf[256];
	struct slim_writer w;
	for (uint32_t assoc = 0; assoc < 2; assoc++) {
		slim_writer_init(&w, buf, sizeof(buf), assoc, false);
		assert_true(slim_put_fill(&w, (struct slim_rect){ 0, 0, 8, 8 }, 0xffffff));
		size_t len = slim_writer_finish(&w, 1, 0);
		assert_int_equal(slim_console_core_receive(core, buf, len), SLIM_ERR_ASSOC);
	}
	assert_int_equal(slim_console_core_stats(core)->errors[SLIM_ERR_ASSOC], 2);
	assert_int_equal(slim_console_core_stats(core)->bad, 2);
	assert_int_equal(slim_console_core_fb(core)->px[0], 0xff000000);
	assert_int_equal(sink->n, 0);
	slim_console_core_destroy(core);
	free(sink);
}

static void test_trailing_and_count(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	build_full(f, d);
	uint16_t count = (uint16_t)d->n;
	/* one byte more than the commands */
	d->buf[d->len] = 0;
	expect_reject(f, d->buf, d->len + 1, SLIM_ERR_TRAILING);
	/* a count that lies */
	uint16_t lie = count - 1;
	memcpy(d->buf + 6, &lie, 2);
	expect_reject(f, d->buf, d->len, SLIM_ERR_TRAILING);
	lie = 0;
	memcpy(d->buf + 6, &lie, 2);
	expect_reject(f, d->buf, d->len, SLIM_ERR_TRAILING);
	lie = count + 1;
	memcpy(d->buf + 6, &lie, 2);
	expect_reject(f, d->buf, d->len, SLIM_ERR_SHORT);
	lie = 0xffff;
	memcpy(d->buf + 6, &lie, 2);
	expect_reject(f, d->buf, d->len, SLIM_ERR_SHORT);
	memcpy(d->buf + 6, &count, 2);
	expect_accept(f, d->buf, d->len);

	/* an empty datagram is fine */
	dgram_begin(d);
	dgram_end(f, d);
	assert_int_equal(d->len, sizeof(struct slim_wire_dgram));
	snapshot(f);
	expect_accept(f, d->buf, d->len);
	assert_true(unchanged(f));
	dgram_free(d);
}

static void test_lz4(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	uint8_t raw[8 * 5 * 4];
	test_rand_bytes(&f->rng, raw, sizeof(raw));
	memset(raw, 0x33, 64);
	char packed[LZ4_COMPRESSBOUND(sizeof(raw))];
	/* compressed from an 8x4 rectangle */
	int n = LZ4_compress_default((const char *)raw, packed, 8 * 4 * 4, sizeof(packed));
	assert_true(n > 0);

	static const struct {
		struct slim_rect r;
		uint8_t flags;
		enum slim_error err;
	} cases[] = {
		{ { 1, 1, 8, 4 }, SLIM_SET_LZ4, SLIM_OK },
		{ { 1, 1, 8, 5 }, SLIM_SET_LZ4, SLIM_ERR_LZ4 }, /* expands to less */
		{ { 1, 1, 8, 3 }, SLIM_SET_LZ4, SLIM_ERR_LZ4 }, /* expands to more */
		{ { 1, 1, 4, 8 }, SLIM_SET_LZ4, SLIM_OK },       /* the same number of bytes */
		{ { 1, 1, 8, 4 }, SLIM_SET_LZ4 | SLIM_SET_RGB888, SLIM_ERR_LZ4 },
		{ { 1, 1, 32, 1 }, SLIM_SET_LZ4, SLIM_OK },
		{ { 1, 1, 31, 1 }, SLIM_SET_LZ4, SLIM_ERR_LZ4 },
		{ { 1, 1, 33, 1 }, SLIM_SET_LZ4, SLIM_ERR_LZ4 },
		{ { 1, 1, 8, 4 }, 0, SLIM_ERR_LENGTH }, /* compressed, but not flagged */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		dgram_begin(d);
		struct slim_wire_set s = { .r = { cases[i].r.x, cases[i].r.y, cases[i].r.w, cases[i].r.h } };
		uint8_t *p = slim_writer_add(&d->w, SLIM_CMD_SET, cases[i].flags, sizeof(s) + (size_t)n);
		memcpy(p, &s, sizeof(s));
		memcpy(p + sizeof(s), packed, (size_t)n);
		dgram_end(f, d);
		if (cases[i].err == SLIM_OK) {
			expect_accept(f, d->buf, d->len);
		} else {
			expect_reject(f, d->buf, d->len, cases[i].err);
		}
	}

	/* data that is not LZ4 at all */
	static const uint8_t junk[][8] = {
		{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, /* literals past the end */
		{ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 },
		{ 0x1f, 0x41, 0x00, 0x00, 0xff, 0x00, 0x00, 0x00 }, /* an offset of 0 */
		{ 0x10, 0x41, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00 }, /* an offset before the start */
	};
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		for (size_t len = 1; len <= 8; len++) {
			dgram_begin(d);
			struct slim_wire_set s = { .r = { 0, 0, 8, 4 } };
			uint8_t *p = slim_writer_add(&d->w, SLIM_CMD_SET, SLIM_SET_LZ4, sizeof(s) + len);
			memcpy(p, &s, sizeof(s));
			memcpy(p + sizeof(s), junk[i], len);
			dgram_end(f, d);
			expect_reject(f, d->buf, d->len, SLIM_ERR_LZ4);
		}
	}
	/* LZ4 without a byte of data */
	dgram_begin(d);
	add_raw(&d->w, SLIM_CMD_SET, SLIM_SET_LZ4, &(struct slim_wire_set){ .r = { 0, 0, 1, 1 } },
		sizeof(struct slim_wire_set));
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_LENGTH);
	dgram_free(d);
}

/* A PALETTE of `colors` with the given index bytes, packed or in runs. */
static void test_later_command_bad(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	struct slim_rect bad = { CW - 1, 0, 2, 1 };
	struct slim_wire_frame_end fe = { .frame = 3 };
	struct slim_wire_cursor_image ci = { .serial = 99, .w = 4, .h = 4, .rows = 4 };
	for (int k = 0; k < 7; k++) {
		dgram_begin(d);
		switch (k) {
		case 0:
			assert_true(slim_put_fill(&d->w, (struct slim_rect){ 0, 0, CW, CH }, 0xffffff));
			break;
		case 1:
			/* a frame ends, and would be presented and acknowledged */
			assert_true(slim_put_fill(&d->w, (struct slim_rect){ 0, 0, 9, 9 }, 0));
			assert_true(slim_put_frame_end(&d->w, &fe));
			break;
		case 2:
			assert_non_null(test_put_cursor_image(&d->w, &ci, &f->rng));
			assert_true(slim_put_cursor_pos(&d->w, 1, 1, false));
			break;
		case 3:
			assert_non_null(test_put_set(&d->w, (struct slim_rect){ 0, 0, 64, 64 },
				SLIM_SET_LZ4, &f->rng, NULL));
			break;
		case 4:
			assert_true(slim_put_copy(&d->w, (struct slim_rect){ 0, 0, 100, 100 }, 1, 1));
			assert_non_null(test_put_cscs(&d->w, &full_cscs8, 0, &f->rng));
			break;
		case 5:
			build_full(f, d);
			break;
		case 6:
			assert_non_null(test_put_bitmap(&d->w, (struct slim_rect){ 0, 0, 100, 100 },
				0, 0xffffff, &f->rng));
			break;
		}
		assert_true(slim_put_fill(&d->w, bad, 0));
		dgram_end(f, d);
		expect_reject(f, d->buf, d->len, SLIM_ERR_RECT);
	}
	/* bad LZ4 after good LZ4 */
	dgram_begin(d);
	assert_non_null(test_put_set(&d->w, (struct slim_rect){ 0, 0, 64, 64 }, SLIM_SET_LZ4,
		&f->rng, NULL));
	uint8_t *p = test_put_set(&d->w, (struct slim_rect){ 0, 64, 64, 32 }, SLIM_SET_LZ4,
		&f->rng, NULL);
	/* claims a row more than it expands to */
	struct slim_wire_set s = { .r = { 0, 64, 64, 33 } };
	memcpy(p, &s, sizeof(s));
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_LZ4);
	/* good commands, then bytes that are not a command */
	build_full(f, d);
	d->buf[d->len] = SLIM_CMD_FILL;
	expect_reject(f, d->buf, d->len + 1, SLIM_ERR_TRAILING);
	dgram_free(d);
}

/*
 * A rejected datagram is not applied: the next good one with its number is
 * taken, and if a later one comes first, the rejected one is reported lost.
 */
static void test_rejected_is_lost(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	dgram_begin(d);
	assert_true(slim_put_fill(&d->w, (struct slim_rect){ CW, 0, 1, 1 }, 0));
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_RECT);
	dgram_begin(d);
	assert_true(slim_put_fill(&d->w, (struct slim_rect){ 0, 0, 1, 1 }, 0x0000ff));
	dgram_end(f, d);
	expect_accept(f, d->buf, d->len);
	assert_int_equal(f->sink->n, 0); /* in order: no NACK */
	assert_int_equal(slim_console_core_fb(f->core)->px[0], 0xff0000ff);

	/* this one is rejected, the next is accepted: the rejected one is lost */
	uint32_t lost = f->seq;
	dgram_begin(d);
	assert_true(slim_put_fill(&d->w, (struct slim_rect){ 0, 0, 0, 1 }, 0));
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_RECT);
	f->seq++;
	dgram_begin(d);
	assert_true(slim_put_fill(&d->w, (struct slim_rect){ 0, 0, 1, 1 }, 0x00ff00));
	dgram_end(f, d);
	expect_accept(f, d->buf, d->len);
	assert_int_equal(f->sink->n, 1);
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	assert_int_equal(slim_reader_init(&r, &hdr, f->sink->buf[0], f->sink->len[0], true, 0, 0),
		SLIM_OK);
	assert_int_equal(slim_reader_next(&r, &cmd), SLIM_OK);
	assert_int_equal(cmd.type, SLIM_CMD_NACK);
	assert_int_equal(cmd.nack.count, 1);
	struct slim_wire_seq_range range;
	slim_nack_get(&cmd, 0, &range);
	assert_int_equal(range.first, lost);
	assert_int_equal(range.last, lost);
	test_sink_clear(f->sink);
	dgram_free(d);
}

/* A flood of bad datagrams is counted, but logged only a few times a second. */
static void test_log_rate(void **state)
{
	struct fixture *f = *state;
	uint8_t junk[64] = { 0 };
	unsigned long before = test_log_messages;
	uint64_t start = slim_now_us();
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(slim_console_core_receive(f->core, junk, sizeof(junk)),
			SLIM_ERR_MAGIC);
	}
	uint64_t seconds = (slim_now_us() - start) / 1000000;
	unsigned long logged = test_log_messages - before;
	assert_int_equal(slim_console_core_stats(f->core)->errors[SLIM_ERR_MAGIC], 1000);
	/* 5 a second, plus a "suppressed" line each time a second starts anew */
	assert_true(logged <= 6 * (seconds + 2));
}

/* More commands than any datagram of at most SLIM_MAX_MTU bytes can hold. */
static void test_too_many_commands(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	dgram_begin(d);
	for (int i = 0; i < 20000; i++) {
		assert_true(slim_put_cursor_pos(&d->w, (int16_t)i, 0, true));
	}
	dgram_end(f, d);
	assert_true(d->len > SLIM_MAX_MTU);
	expect_reject(f, d->buf, d->len, SLIM_ERR_LENGTH);
	dgram_free(d);
}

static void mutate(struct test_rng *rng, uint8_t *buf, size_t *len, const struct dgram *base)
{
	switch (test_rand_below(rng, 7)) {
	case 0: /* bit flips */
		for (uint32_t n = test_rand_range(rng, 1, 4); n > 0; n--) {
			size_t i = test_rand_below(rng, (uint32_t)*len);
			buf[i] ^= (uint8_t)(1u << test_rand_below(rng, 8));
		}
		break;
	case 1: /* truncation */
		*len = test_rand_below(rng, (uint32_t)*len);
		break;
	case 2: { /* a byte set to something interesting */
		static const uint8_t values[] = { 0, 1, 0x7f, 0x80, 0xfe, 0xff };
		size_t i = test_rand_below(rng, (uint32_t)*len);
		buf[i] = test_rand_below(rng, 2) ? values[test_rand_below(rng, 6)] :
			(uint8_t)test_rand(rng);
		break;
	}
	case 3: { /* a command's length */
		size_t k = test_rand_below(rng, (uint32_t)base->n);
		uint16_t l;
		memcpy(&l, buf + base->off[k] + 2, 2);
		l = test_rand_below(rng, 2) ? (uint16_t)test_rand(rng) :
			(uint16_t)(l + (int)test_rand_below(rng, 9) - 4);
		memcpy(buf + base->off[k] + 2, &l, 2);
		break;
	}
	case 4: { /* a field inside a command header or body */
		size_t k = test_rand_below(rng, (uint32_t)base->n);
		size_t i = base->off[k] + test_rand_below(rng, 40);
		if (i + 2 <= *len) {
			uint16_t v = test_rand_below(rng, 2) ? (uint16_t)test_rand(rng) :
				(uint16_t)(test_rand_below(rng, 400));
			memcpy(buf + i, &v, 2);
		}
		break;
	}
	case 5: /* bytes appended */
		for (uint32_t n = test_rand_range(rng, 1, 16); n > 0; n--) {
			buf[(*len)++] = (uint8_t)test_rand(rng);
		}
		break;
	case 6: /* a command's type */
		buf[base->off[test_rand_below(rng, (uint32_t)base->n)]] = (uint8_t)test_rand(rng);
		break;
	}
}

static bool all_opaque(const struct slim_fb *fb)
{
	for (uint32_t y = 0; y < fb->height; y++) {
		const uint32_t *row = slim_fb_row(fb, 0, y);
		for (uint32_t x = 0; x < fb->width; x++) {
			if ((row[x] >> 24) != 0xff) {
				return false;
			}
		}
	}
	return true;
}

/*
 * Random corruption of valid datagrams never crashes (ASan watches in CI),
 * and each result is either applied, dropped as old, or rejected whole.
 */
static void test_fuzz(void **state)
{
	struct fixture *f = *state;
	struct test_rng *rng = &f->rng;
	enum { BASES = 4 };
	struct dgram *bases[BASES];
	for (int b = 0; b < BASES; b++) {
		bases[b] = dgram_new();
		struct dgram *d = bases[b];
		if (b == 0) {
			build_full(f, d);
			continue;
		}
		dgram_begin(d);
		for (int i = 0; i < 12; i++) {
			struct slim_rect r = { (uint16_t)test_rand_below(rng, CW - 16),
				(uint16_t)test_rand_below(rng, CH - 16),
				(uint16_t)test_rand_range(rng, 1, 16), (uint16_t)test_rand_range(rng, 1, 16) };
			switch ((b + i) % 5) {
			case 0:
				assert_true(slim_put_fill(&d->w, r, test_rand(rng)));
				break;
			case 1:
				test_put_set(&d->w, r, (uint8_t)(b == 2 ? SLIM_SET_LZ4 : 0) |
					(i % 2 ? SLIM_SET_RGB888 : 0), rng, NULL);
				break;
			case 2:
				test_put_bitmap(&d->w, r, test_rand(rng), test_rand(rng), rng);
				break;
			case 3:
				assert_true(slim_put_copy(&d->w, r, (uint16_t)(r.x / 2), r.y));
				break;
			case 4:
				test_put_cscs(&d->w, i % 2 ? &full_cscs4 : &full_cscs8, (uint8_t)(i % 2), rng);
				break;
			}
		}
		assert_true(slim_put_frame_end(&d->w, &(struct slim_wire_frame_end){ .frame = 5 }));
		dgram_end(f, d);
	}
	/* every base is valid */
	for (int b = 0; b < BASES; b++) {
		struct slim_reader r;
		struct slim_dgram hdr;
		struct slim_cmd cmd;
		assert_int_equal(slim_reader_init(&r, &hdr, bases[b]->buf, bases[b]->len, false,
			CW, CH), SLIM_OK);
		size_t n = 0;
		while (slim_reader_next(&r, &cmd) == SLIM_OK && cmd.type != 0) {
			n++;
		}
		assert_int_equal(n, bases[b]->w.count);
		assert_int_equal(slim_reader_next(&r, &cmd), SLIM_OK);
	}

	uint8_t *buf = malloc(DGRAM_CAP);
	uint64_t outcomes[4] = { 0 };
	const int iterations = 20000;
	for (int it = 0; it < iterations; it++) {
		const struct dgram *base = bases[it % BASES];
		size_t len = base->len;
		memcpy(buf, base->buf, len);
		memcpy(buf + 12, &f->seq, 4); /* new to the console */
		mutate(rng, buf, &len, base);
		if (test_rand_below(rng, 4) == 0) {
			mutate(rng, buf, &len, base);
		}

		snapshot(f);
		enum slim_error err = slim_console_core_receive(f->core, buf, len);
		const struct slim_console_stats *st = slim_console_core_stats(f->core);
		assert_true(st->datagrams == f->stats.datagrams + 1);
		if (err == SLIM_OK) {
			if (st->applied == f->stats.applied + 1) {
				outcomes[0]++;
				assert_true(st->bad == f->stats.bad);
				assert_true(all_opaque(slim_console_core_fb(f->core)));
				uint32_t seq;
				memcpy(&seq, buf + 12, 4);
				f->seq = seq + 1 == 0 ? 1 : seq + 1;
			} else {
				/* dropped as a duplicate or late */
				outcomes[1]++;
				assert_true(st->applied == f->stats.applied);
				assert_true(st->duplicates + st->late ==
					f->stats.duplicates + f->stats.late + 1);
				assert_true(unchanged(f));
			}
		} else {
			outcomes[2]++;
			assert_true(err > SLIM_OK && err < SLIM_ERR_COUNT);
			assert_true(st->errors[err] == f->stats.errors[err] + 1);
			assert_true(st->bad == f->stats.bad + 1);
			assert_true(st->applied == f->stats.applied);
			if (!unchanged(f)) {
				fail_msg("iteration %d: rejected (%s) but changed", it, slim_error_str(err));
			}
		}
		test_sink_clear(f->sink);
	}
	print_message("fuzz: %llu applied, %llu dropped as old, %llu rejected\n",
		(unsigned long long)outcomes[0], (unsigned long long)outcomes[1],
		(unsigned long long)outcomes[2]);
	/* the mutations reach both sides */
	assert_true(outcomes[0] > (uint64_t)iterations / 20);
	assert_true(outcomes[2] > (uint64_t)iterations / 5);
	free(buf);
	for (int b = 0; b < BASES; b++) {
		dgram_free(bases[b]);
	}
}

int main(void)
{
	test_quiet_logs();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lying_lengths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rect_off_screen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upstream_in_downstream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_header, setup, teardown),
		cmocka_unit_test(test_no_association),
		cmocka_unit_test_setup_teardown(test_trailing_and_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lz4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_later_command_bad, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rejected_is_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_rate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_many_commands, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fuzz, setup, teardown),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
