/*
 * What the network may bring: valid datagrams, corrupted in every way we
 * can think of, fed to the console. A bad datagram is rejected whole,
 * counted, and changes nothing: not a pixel, not the cursor, and nothing
 * is sent back.
 */
#include <lz4.h>
#include <zstd.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "console-core.h"
#include "slim-log.h"
#include "slim-zstd.h"
#include "test-util.h"

#define CW 160
#define CH 120
#define ASSOC 0x600dcafeu
#define DGRAM_CAP (256 * 1024)
#define MAX_CMDS 64

struct fixture {
	struct slim_console_backend *backend;
	struct slim_console_core *core;
	struct test_sink *sink;
	struct test_rng rng;
	uint32_t seq; /* the next sequence number, which the console takes as new */

	/* what expect_reject compares against */
	struct slim_fb before;
	struct slim_console_stats stats;
	struct slim_console_cursor cursor;
	uint32_t cursor_px[SLIM_CURSOR_MAX * SLIM_CURSOR_MAX];
	size_t sent;
	uint64_t presented;
};

struct dgram {
	uint8_t *buf;
	struct slim_writer w;
	size_t len;
	/* where each command's header is, once finished */
	size_t n;
	size_t off[MAX_CMDS];
};

static uint64_t frames_presented(struct fixture *f)
{
	return ((struct slim_headless_backend *)f->backend)->frames;
}

static struct dgram *dgram_new(void)
{
	struct dgram *d = calloc(1, sizeof(*d));
	assert_non_null(d);
	d->buf = malloc(DGRAM_CAP);
	assert_non_null(d->buf);
	return d;
}

static void dgram_free(struct dgram *d)
{
	free(d->buf);
	free(d);
}

static void dgram_begin(struct dgram *d)
{
	slim_writer_init(&d->w, d->buf, DGRAM_CAP, ASSOC, false);
}

/* Finishes with the next sequence number and finds the commands. */
static size_t dgram_end(struct fixture *f, struct dgram *d)
{
	d->len = slim_writer_finish(&d->w, f->seq, 1000 + (uint64_t)f->seq);
	size_t off = sizeof(struct slim_wire_dgram);
	d->n = 0;
	for (uint16_t i = 0; i < d->w.count && d->n < MAX_CMDS; i++) {
		struct slim_wire_cmd hdr;
		memcpy(&hdr, d->buf + off, sizeof(hdr));
		d->off[d->n++] = off;
		off += sizeof(hdr) + hdr.len;
	}
	return d->len;
}

static uint8_t cmd_type(const struct dgram *d, size_t k)
{
	return d->buf[d->off[k]];
}

static void set_cmd_len(struct dgram *d, size_t k, uint16_t len)
{
	memcpy(d->buf + d->off[k] + 2, &len, sizeof(len));
}

static uint16_t get_cmd_len(const struct dgram *d, size_t k)
{
	uint16_t len;
	memcpy(&len, d->buf + d->off[k] + 2, sizeof(len));
	return len;
}

static uint8_t *add_raw(struct slim_writer *w, uint8_t type, uint8_t flags,
		const void *body, size_t len)
{
	uint8_t *p = slim_writer_add(w, type, flags, len);
	assert_non_null(p);
	if (body) {
		memcpy(p, body, len);
	} else {
		memset(p, 0, len);
	}
	return p;
}

static void snapshot(struct fixture *f)
{
	const struct slim_fb *fb = slim_console_core_fb(f->core);
	memcpy(f->before.px, fb->px, fb->stride * fb->height * 4);
	f->stats = *slim_console_core_stats(f->core);
	f->cursor = *slim_console_core_cursor(f->core);
	if (f->cursor.pixels) {
		memcpy(f->cursor_px, f->cursor.pixels, (size_t)f->cursor.w * f->cursor.h * 4);
	}
	f->sent = f->sink->n;
	f->presented = frames_presented(f);
}

static bool unchanged(struct fixture *f)
{
	const struct slim_fb *fb = slim_console_core_fb(f->core);
	const struct slim_console_cursor *c = slim_console_core_cursor(f->core);
	if (memcmp(f->before.px, fb->px, fb->stride * fb->height * 4) != 0) {
		print_error("framebuffer changed\n");
		return false;
	}
	if (memcmp(c, &f->cursor, sizeof(*c)) != 0 || (c->pixels &&
			memcmp(f->cursor_px, c->pixels, (size_t)c->w * c->h * 4) != 0)) {
		print_error("cursor changed\n");
		return false;
	}
	if (f->sink->n != f->sent || frames_presented(f) != f->presented) {
		print_error("something was sent or presented\n");
		return false;
	}
	return true;
}

static void expect_reject(struct fixture *f, const uint8_t *buf, size_t len,
		enum slim_error err)
{
	snapshot(f);
	enum slim_error got = slim_console_core_receive(f->core, buf, len);
	if (got != err) {
		fail_msg("length %zu: got \"%s\", expected \"%s\"", len, slim_error_str(got),
			slim_error_str(err));
	}
	const struct slim_console_stats *st = slim_console_core_stats(f->core);
	assert_true(st->datagrams == f->stats.datagrams + 1);
	assert_true(st->errors[err] == f->stats.errors[err] + 1);
	assert_true(st->bad == f->stats.bad + 1);
	assert_true(st->applied == f->stats.applied);
	assert_true(st->frames == f->stats.frames);
	assert_true(unchanged(f));
}

static void expect_accept(struct fixture *f, const uint8_t *buf, size_t len)
{
	uint64_t applied = slim_console_core_stats(f->core)->applied;
	uint64_t bad = slim_console_core_stats(f->core)->bad;
	assert_int_equal(slim_console_core_receive(f->core, buf, len), SLIM_OK);
	assert_true(slim_console_core_stats(f->core)->applied == applied + 1);
	assert_true(slim_console_core_stats(f->core)->bad == bad);
	f->seq++;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	test_rng_init(&f->rng, 40);
	f->sink = test_sink_create();
	f->backend = slim_headless_backend_create();
	assert_non_null(f->backend);
	f->core = slim_console_core_create(CW, CH, SLIM_DEFAULT_MTU, f->backend,
		test_sink_send, f->sink);
	assert_non_null(f->core);
	f->before = test_fb_create(CW, CH, NULL);
	f->before.stride = CW; /* the console's */
	slim_console_core_hello(f->core, "malformed", ASSOC);
	f->seq = 1;

	/* noise everywhere, and a cursor, so that any change shows */
	struct dgram *d = dgram_new();
	for (uint16_t y = 0; y < CH; y += 2) {
		dgram_begin(d);
		assert_non_null(test_put_set(&d->w, (struct slim_rect){ 0, y, CW, 2 }, 0, &f->rng, NULL));
		dgram_end(f, d);
		expect_accept(f, d->buf, d->len);
	}
	dgram_begin(d);
	struct slim_wire_cursor_image ci = { .serial = 7, .w = 32, .h = 32, .hot_x = 1, .rows = 32 };
	assert_non_null(test_put_cursor_image(&d->w, &ci, &f->rng));
	assert_true(slim_put_cursor_pos(&d->w, 50, 60, true));
	assert_true(slim_put_frame_end(&d->w, &(struct slim_wire_frame_end){ .frame = 1 }));
	dgram_end(f, d);
	expect_accept(f, d->buf, d->len);
	dgram_free(d);
	test_sink_clear(f->sink);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	slim_console_core_destroy(f->core);
	f->backend->impl->destroy(f->backend);
	free(f->before.px);
	free(f->sink);
	free(f);
	return 0;
}

static const struct slim_wire_cscs full_cscs8 = {
	.src_w = 24, .src_h = 16, .dst = { 100, 60, 48, 32 },
	.psrc = { 0, 0, 24, 16 }, .pdst = { 100, 60, 48, 32 },
};

static const struct slim_wire_cscs full_cscs4 = {
	.src_w = 24, .src_h = 16, .dst = { 100, 60, 48, 32 },
	.psrc = { 4, 2, 15, 9 }, .pdst = { 110, 65, 20, 17 },
};

/*
 * One of every downstream command, INPUT_ACK first (where the encoder puts
 * it) and FRAME_END last. Returns the number of commands.
 */
static size_t build_full(struct fixture *f, struct dgram *d)
{
	struct test_rng *rng = &f->rng;
	dgram_begin(d);
	assert_true(slim_put_input_ack(&d->w, 1));
	assert_true(slim_put_fill(&d->w, (struct slim_rect){ 10, 10, 20, 20 }, 0x123456));
	assert_non_null(test_put_set(&d->w, (struct slim_rect){ 30, 5, 8, 4 }, 0, rng, NULL));
	assert_non_null(test_put_set(&d->w, (struct slim_rect){ 40, 5, 5, 3 }, SLIM_SET_RGB888,
		rng, NULL));
	assert_non_null(test_put_set(&d->w, (struct slim_rect){ 0, 100, 64, 16 }, SLIM_SET_LZ4,
		rng, NULL));
	assert_non_null(test_put_bitmap(&d->w, (struct slim_rect){ 50, 50, 13, 5 }, 1, 2, rng));
	assert_true(slim_put_copy(&d->w, (struct slim_rect){ 0, 0, 16, 16 }, 8, 4));
	assert_non_null(test_put_palette(&d->w, (struct slim_rect){ 90, 10, 21, 7 }, 16, false,
		rng));
	assert_non_null(test_put_palette(&d->w, (struct slim_rect){ 100, 60, 40, 30 }, 5, true,
		rng));
	/* kept, and drawn elsewhere from the cache in the same datagram */
	add_raw(&d->w, SLIM_CMD_CACHE_STORE, 0, &(struct slim_wire_cache){ .slot = 4095,
		.r = { 100, 60, 32, 30 } }, sizeof(struct slim_wire_cache));
	add_raw(&d->w, SLIM_CMD_CACHE_DRAW, 0, &(struct slim_wire_cache){ .slot = 4095,
		.r = { 0, 80, 32, 30 } }, sizeof(struct slim_wire_cache));
	assert_non_null(test_put_cscs(&d->w, &full_cscs8, SLIM_CSCS_DEPTH8, rng));
	assert_non_null(test_put_cscs(&d->w, &full_cscs4, SLIM_CSCS_DEPTH4, rng));
	struct slim_wire_cursor_image ci = { .serial = 8, .w = 16, .h = 16, .hot_x = 15,
		.hot_y = 15, .rows = 16 };
	assert_non_null(test_put_cursor_image(&d->w, &ci, rng));
	assert_true(slim_put_cursor_pos(&d->w, -3, 200, true));
	assert_true(slim_put_frame_end(&d->w, &(struct slim_wire_frame_end){ .frame = 2 }));
	dgram_end(f, d);
	assert_int_equal(d->n, 16);
	return d->n;
}

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
		if (t >= SLIM_CMD_FILL && t <= SLIM_CMD_MOVE) {
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
static void put_palette(struct dgram *d, struct slim_rect r, unsigned colors, uint8_t flags,
		const uint8_t *data, size_t len)
{
	struct slim_wire_palette p = { .r = { r.x, r.y, r.w, r.h }, .colors = (uint8_t)colors };
	uint8_t *body = slim_writer_add(&d->w, SLIM_CMD_PALETTE, flags,
		sizeof(p) + 3 * (size_t)colors + len);
	assert_non_null(body);
	memcpy(body, &p, sizeof(p));
	for (unsigned i = 0; i < colors; i++) {
		body[sizeof(p) + 3 * i] = (uint8_t)(i * 2 + 1); /* colour i is 0x0000(2i+1) */
		body[sizeof(p) + 3 * i + 1] = 0;
		body[sizeof(p) + 3 * i + 2] = 0;
	}
	memcpy(body + sizeof(p) + 3 * (size_t)colors, data, len);
}

static void test_palette(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	struct slim_rect r = { 3, 4, 5, 2 }; /* 10 pixels */
	static const struct {
		unsigned colors;
		uint8_t flags;
		uint8_t data[8];
		size_t len;
		enum slim_error err;
	} cases[] = {
		/* 3 colours: 2 bits an index, 5 pixels a row in 2 bytes */
		{ 3, 0, { 0x24, 0x80, 0x90, 0x00 }, 4, SLIM_OK },
		{ 3, 0, { 0x24, 0xc0, 0x90, 0x00 }, 4, SLIM_ERR_PALETTE }, /* index 3 of 3 */
		{ 3, 0, { 0x24, 0x80, 0x90 }, 3, SLIM_ERR_LENGTH },
		{ 4, 0, { 0xff, 0xc0, 0xff, 0xc0 }, 4, SLIM_OK },
		/* runs: 1 of index 0, 9 of index 2 */
		{ 3, SLIM_PALETTE_RLE, { 0x00, 0x82, 0x08 }, 3, SLIM_OK },
		{ 3, SLIM_PALETTE_RLE, { 0x00, 0x82, 0x07 }, 3, SLIM_ERR_PALETTE }, /* a pixel short */
		{ 3, SLIM_PALETTE_RLE, { 0x00, 0x82, 0x09 }, 3, SLIM_ERR_PALETTE }, /* one too many */
		{ 3, SLIM_PALETTE_RLE, { 0x00, 0x83, 0x08 }, 3, SLIM_ERR_PALETTE }, /* index 3 of 3 */
		{ 3, SLIM_PALETTE_RLE, { 0x00, 0x82 }, 2, SLIM_ERR_PALETTE },       /* no length */
		{ 3, SLIM_PALETTE_RLE, { 0x82, 0xff, 0xff }, 3, SLIM_ERR_PALETTE }, /* past the end */
		{ 3, SLIM_PALETTE_RLE, { 0x00, 0x82, 0x08, 0x00 }, 4, SLIM_ERR_PALETTE }, /* a byte over */
		{ 3, SLIM_PALETTE_RLE, { 0 }, 0, SLIM_ERR_PALETTE },
		{ 3, 0x02, { 0x24, 0x80, 0x90, 0x00 }, 4, SLIM_ERR_FIELD },
		{ 0, 0, { 0 }, 0, SLIM_ERR_FIELD },
		{ 128, SLIM_PALETTE_RLE, { 0x89, 0x08 }, 2, SLIM_ERR_FIELD },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		dgram_begin(d);
		/* the command before it is fine, and applied only if it is */
		assert_true(slim_put_fill(&d->w, (struct slim_rect){ 0, 0, 2, 2 }, 0x00abcdef));
		put_palette(d, r, cases[i].colors, cases[i].flags, cases[i].data, cases[i].len);
		dgram_end(f, d);
		if (cases[i].err != SLIM_OK) {
			expect_reject(f, d->buf, d->len, cases[i].err);
			continue;
		}
		expect_accept(f, d->buf, d->len);
		/* what each case paints, worked out by hand */
		static const uint8_t packed3[10] = { 0, 2, 1, 0, 2, 2, 1, 0, 0, 0 };
		static const uint8_t runs[10] = { 0, 2, 2, 2, 2, 2, 2, 2, 2, 2 };
		const struct slim_fb *fb = slim_console_core_fb(f->core);
		for (uint32_t k = 0; k < 10; k++) {
			uint8_t want = cases[i].flags ? runs[k] : cases[i].colors == 4 ? 3 : packed3[k];
			uint32_t px = *slim_fb_row(fb, r.x + k % 5, r.y + k / 5);
			assert_int_equal(px, SLIM_OPAQUE | (uint32_t)(want * 2 + 1));
		}
	}
	/* a table cut short */
	uint8_t cut[sizeof(struct slim_wire_palette) + 11] = { 0 };
	memcpy(cut, &(struct slim_wire_palette){ .r = { 0, 0, 1, 1 }, .colors = 4 },
		sizeof(struct slim_wire_palette));
	dgram_begin(d);
	add_raw(&d->w, SLIM_CMD_PALETTE, 0, cut, sizeof(cut));
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_LENGTH);
	dgram_free(d);
}

static void put_cache(struct dgram *d, uint8_t type, uint16_t slot, struct slim_rect r)
{
	add_raw(&d->w, type, 0, &(struct slim_wire_cache){ .slot = slot,
		.r = { r.x, r.y, r.w, r.h } }, sizeof(struct slim_wire_cache));
}

static void test_cache(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	struct slim_rect a = { 10, 10, 32, 16 }, b = { 60, 40, 32, 16 };

	/* nothing kept yet: drawing any slot is a miss */
	dgram_begin(d);
	put_cache(d, SLIM_CMD_CACHE_DRAW, 7, a);
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_CACHE);

	/* kept, then drawn in a later datagram: the same pixels */
	dgram_begin(d);
	assert_non_null(test_put_palette(&d->w, a, 9, true, &f->rng));
	put_cache(d, SLIM_CMD_CACHE_STORE, 7, a);
	dgram_end(f, d);
	expect_accept(f, d->buf, d->len);
	dgram_begin(d);
	put_cache(d, SLIM_CMD_CACHE_DRAW, 7, b);
	dgram_end(f, d);
	expect_accept(f, d->buf, d->len);
	const struct slim_fb *fb = slim_console_core_fb(f->core);
	for (uint32_t y = 0; y < a.h; y++) {
		assert_memory_equal(slim_fb_row(fb, b.x, b.y + y), slim_fb_row(fb, a.x, a.y + y),
			(size_t)a.w * 4);
	}

	static const struct {
		uint8_t type;
		uint16_t slot;
		struct slim_rect r;
		enum slim_error err;
	} cases[] = {
		{ SLIM_CMD_CACHE_DRAW, 7, { 0, 0, 16, 32 }, SLIM_ERR_CACHE }, /* its pixels, not its size */
		{ SLIM_CMD_CACHE_DRAW, 7, { 0, 0, 32, 15 }, SLIM_ERR_CACHE },
		{ SLIM_CMD_CACHE_DRAW, 8, { 0, 0, 32, 16 }, SLIM_ERR_CACHE }, /* never kept */
		{ SLIM_CMD_CACHE_DRAW, SLIM_CACHE_SLOTS, { 0, 0, 32, 16 }, SLIM_ERR_FIELD },
		{ SLIM_CMD_CACHE_STORE, SLIM_CACHE_SLOTS, { 0, 0, 32, 16 }, SLIM_ERR_FIELD },
		{ SLIM_CMD_CACHE_STORE, 1, { 0, 0, 33, 32 }, SLIM_ERR_FIELD }, /* more than a slot */
		{ SLIM_CMD_CACHE_STORE, 1, { CW - 8, 0, 16, 16 }, SLIM_ERR_RECT },
		{ SLIM_CMD_CACHE_DRAW, 7, { CW - 16, 0, 32, 16 }, SLIM_ERR_RECT },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		dgram_begin(d);
		assert_true(slim_put_fill(&d->w, (struct slim_rect){ 0, 0, 2, 2 }, 0x00abcdef));
		put_cache(d, cases[i].type, cases[i].slot, cases[i].r);
		dgram_end(f, d);
		expect_reject(f, d->buf, d->len, cases[i].err);
	}
	/* a store in a datagram that was rejected kept nothing */
	dgram_begin(d);
	put_cache(d, SLIM_CMD_CACHE_STORE, 9, a);
	assert_true(slim_put_fill(&d->w, (struct slim_rect){ CW, 0, 1, 1 }, 0));
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_RECT);
	dgram_begin(d);
	put_cache(d, SLIM_CMD_CACHE_DRAW, 9, a);
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_CACHE);

	/* a new association starts with nothing kept */
	slim_console_core_hello(f->core, "test", ASSOC);
	test_sink_clear(f->sink);
	f->seq = 1;
	dgram_begin(d);
	put_cache(d, SLIM_CMD_CACHE_DRAW, 7, b);
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_CACHE);
	dgram_free(d);
}

/* Compressed with earlier datagrams as the dictionary: only those the console applied. */
static void test_history(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	uint8_t *z = malloc(DGRAM_CAP);
	struct slim_zstd *sz = slim_zstd_create();
	struct slim_history *sent = slim_history_create();
	assert_non_null(z);
	assert_non_null(sz);
	assert_non_null(sent);
	size_t hdr = sizeof(struct slim_wire_dgram);

	/* a datagram applied, and one the console never got */
	uint32_t applied = f->seq;
	build_full(f, d);
	slim_history_add(sent, applied, d->buf + hdr, d->len - hdr);
	expect_accept(f, d->buf, d->len);
	uint32_t lost = f->seq++;
	slim_history_add(sent, lost, d->buf + hdr, d->len - hdr);

	/* the same commands again, the applied one as the dictionary: a few bytes */
	memcpy(d->buf + offsetof(struct slim_wire_dgram, seq), &f->seq, sizeof(f->seq));
	assert_true(slim_zstd_use_history(sz, sent, applied, applied));
	size_t n = slim_zstd_deflate(sz, SLIM_ZSTD_FAST, d->buf, d->len, z, DGRAM_CAP);
	assert_true(n > 0 && n < d->len / 4);
	assert_true(z[5] & SLIM_DGRAM_HISTORY);
	expect_accept(f, z, n);

	/* naming one it does not have, or a run that cannot be */
	static const struct {
		int first, last; /* from `applied` */
	} bad[] = { { 1, 1 }, { 0, 1 }, { -100, 0 }, { 0, SLIM_HISTORY_DGRAMS } };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		build_full(f, d);
		assert_true(slim_zstd_use_history(sz, sent, applied, applied));
		n = slim_zstd_deflate(sz, SLIM_ZSTD_FAST, d->buf, d->len, z, DGRAM_CAP);
		struct slim_wire_history w = { applied + (uint32_t)bad[i].first,
			applied + (uint32_t)bad[i].last };
		memcpy(z + hdr, &w, sizeof(w));
		expect_reject(f, z, n, SLIM_ERR_HISTORY);
	}
	/* no room for what it names */
	build_full(f, d);
	n = slim_zstd_deflate(sz, SLIM_ZSTD_FAST, d->buf, d->len, z, DGRAM_CAP);
	expect_reject(f, z, hdr + 4, SLIM_ERR_ZSTD);

	/* a new association has kept nothing */
	slim_console_core_hello(f->core, "test", ASSOC);
	test_sink_clear(f->sink);
	f->seq = applied + 10;
	build_full(f, d);
	n = slim_zstd_deflate(sz, SLIM_ZSTD_FAST, d->buf, d->len, z, DGRAM_CAP);
	expect_reject(f, z, n, SLIM_ERR_HISTORY);

	slim_history_destroy(sent);
	slim_zstd_destroy(sz);
	free(z);
	dgram_free(d);
}

/* Compresses d's commands with `level`, the content size said or not. */
static size_t zstd_dgram(const struct dgram *d, uint8_t *out, size_t cap, bool size_flag)
{
	size_t hdr = sizeof(struct slim_wire_dgram);
	ZSTD_CCtx *c = ZSTD_createCCtx();
	assert_non_null(c);
	ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, size_flag);
	size_t n;
	if (size_flag) {
		n = ZSTD_compress2(c, out + hdr, cap - hdr, d->buf + hdr, d->len - hdr);
	} else {
		/* streamed: the frame does not say how big it is */
		ZSTD_outBuffer o = { out + hdr, cap - hdr, 0 };
		ZSTD_inBuffer in = { d->buf + hdr, d->len - hdr, 0 };
		assert_int_equal(ZSTD_compressStream2(c, &o, &in, ZSTD_e_end), 0);
		n = o.pos;
	}
	assert_false(ZSTD_isError(n));
	ZSTD_freeCCtx(c);
	memcpy(out, d->buf, hdr);
	out[5] |= SLIM_DGRAM_ZSTD; /* slim_wire_dgram.flags */
	return hdr + n;
}

static void test_zstd(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	uint8_t *z = malloc(DGRAM_CAP);
	assert_non_null(z);

	/* the full datagram, compressed: the same pixels as sent raw */
	build_full(f, d);
	struct slim_zstd *sz = slim_zstd_create();
	assert_non_null(sz);
	size_t n = slim_zstd_deflate(sz, SLIM_ZSTD_FAST, d->buf, d->len, z, DGRAM_CAP);
	assert_true(n > 0 && n < d->len);
	expect_accept(f, z, n);

	/* cut anywhere, a byte more, or not saying its size */
	for (size_t len = sizeof(struct slim_wire_dgram); len < n; len++) {
		build_full(f, d);
		slim_zstd_deflate(sz, SLIM_ZSTD_FAST, d->buf, d->len, z, DGRAM_CAP);
		expect_reject(f, z, len, SLIM_ERR_ZSTD);
	}
	build_full(f, d);
	n = slim_zstd_deflate(sz, SLIM_ZSTD_FAST, d->buf, d->len, z, DGRAM_CAP);
	z[n] = 0;
	expect_reject(f, z, n + 1, SLIM_ERR_ZSTD);
	n = zstd_dgram(d, z, DGRAM_CAP, false);
	expect_reject(f, z, n, SLIM_ERR_ZSTD);

	/* not zstd at all */
	memcpy(z, d->buf, d->len);
	z[5] |= SLIM_DGRAM_ZSTD;
	expect_reject(f, z, d->len, SLIM_ERR_ZSTD);

	/* more than a datagram may expand to: refused from the frame's header */
	dgram_begin(d);
	for (size_t k = 0; k < 16; k++) {
		add_raw(&d->w, SLIM_CMD_FILL, 0, NULL, 4096 + 8);
	}
	dgram_end(f, d);
	assert_true(d->len > SLIM_ZSTD_MAX_DGRAM);
	n = zstd_dgram(d, z, DGRAM_CAP, true);
	expect_reject(f, z, n, SLIM_ERR_ZSTD);

	/* expanded, its commands are checked as any others */
	dgram_begin(d);
	assert_true(slim_put_fill(&d->w, (struct slim_rect){ CW, 0, 1, 1 }, 0));
	dgram_end(f, d);
	n = zstd_dgram(d, z, DGRAM_CAP, true);
	expect_reject(f, z, n, SLIM_ERR_RECT);
	slim_zstd_destroy(sz);
	free(z);
	dgram_free(d);
}

/* One datagram may expand to at most the console's scratch memory (4 MiB). */
static void test_lz4_too_much(void **state)
{
	struct test_sink *sink = test_sink_create();
	struct slim_console_core *core = slim_console_core_create(512, 256, 1400, NULL,
		test_sink_send, sink);
	assert_non_null(core);
	slim_console_core_hello(core, "big", ASSOC);
	size_t raw_len = 256 * 256 * 4;
	uint8_t *raw = calloc(1, raw_len);
	int bound = LZ4_compressBound((int)raw_len);
	char *packed = malloc((size_t)bound);
	int n = LZ4_compress_default((const char *)raw, packed, (int)raw_len, bound);
	assert_true(n > 0);
	uint8_t *buf = malloc(DGRAM_CAP);
	struct slim_writer w;
	uint32_t seq = 1;
	for (int sets = 16; sets <= 17; sets++) {
		slim_writer_init(&w, buf, DGRAM_CAP, ASSOC, false);
		for (int i = 0; i < sets; i++) {
			struct slim_wire_set s = { .r = { (uint16_t)(256 * (i % 2)), 0, 256, 256 } };
			uint8_t *p = slim_writer_add(&w, SLIM_CMD_SET, SLIM_SET_LZ4, sizeof(s) + (size_t)n);
			assert_non_null(p);
			memcpy(p, &s, sizeof(s));
			memcpy(p + sizeof(s), packed, (size_t)n);
		}
		size_t len = slim_writer_finish(&w, seq, 0);
		enum slim_error err = slim_console_core_receive(core, buf, len);
		if (sets == 16) {
			assert_int_equal(err, SLIM_OK);
			assert_int_equal(slim_console_core_stats(core)->applied, 1);
			seq++;
		} else {
			assert_int_equal(err, SLIM_ERR_LZ4);
			assert_int_equal(slim_console_core_stats(core)->errors[SLIM_ERR_LZ4], 1);
		}
	}
	/* a SET of more than 65536 pixels is refused before any of that */
	slim_writer_init(&w, buf, DGRAM_CAP, ASSOC, false);
	struct slim_wire_set s = { .r = { 0, 0, 257, 256 } };
	uint8_t *p = slim_writer_add(&w, SLIM_CMD_SET, SLIM_SET_LZ4, sizeof(s) + (size_t)n);
	memcpy(p, &s, sizeof(s));
	memcpy(p + sizeof(s), packed, (size_t)n);
	size_t len = slim_writer_finish(&w, seq, 0);
	assert_int_equal(slim_console_core_receive(core, buf, len), SLIM_ERR_FIELD);
	free(buf);
	free(packed);
	free(raw);
	slim_console_core_destroy(core);
	free(sink);
}

/* A CSCS header with a payload of the size it says, unless told otherwise. */
static void put_cscs(struct dgram *d, const struct slim_wire_cscs *c, uint8_t flags,
		long payload_delta)
{
	uint8_t depth = flags & SLIM_CSCS_DEPTH_MASK;
	size_t n = 0;
	if (c->psrc.w && c->psrc.h && (size_t)c->psrc.w * c->psrc.h <= SLIM_MAX_PIECE_PIXELS) {
		n = slim_cscs_payload_len(c->psrc.w, c->psrc.h,
			depth == SLIM_CSCS_DEPTH4 ? SLIM_CSCS_DEPTH4 : SLIM_CSCS_DEPTH8, NULL, NULL);
	}
	n = (size_t)((long)n + payload_delta);
	uint8_t *p = slim_writer_add(&d->w, SLIM_CMD_CSCS, flags, sizeof(*c) + n);
	assert_non_null(p);
	memcpy(p, c, sizeof(*c));
	memset(p + sizeof(*c), 0x77, n);
}

static void test_cscs(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	const struct slim_wire_cscs ok = {
		.src_w = 40, .src_h = 30, .dst = { 20, 10, 80, 60 },
		.psrc = { 10, 8, 21, 13 }, .pdst = { 40, 26, 40, 20 },
	};
	struct {
		struct slim_wire_cscs c;
		uint8_t flags;
		long delta;
		enum slim_error err;
	} cases[32];
	size_t n = 0;
#define CASE(field, value, fl, dl, e) do { \
		cases[n].c = ok; \
		cases[n].c.field = value; \
		cases[n].flags = fl; \
		cases[n].delta = dl; \
		cases[n].err = e; \
		n++; \
	} while (0)
	CASE(src_w, 40, 0, 0, SLIM_OK);
	CASE(src_w, 40, SLIM_CSCS_DEPTH4, 0, SLIM_OK);
	CASE(psrc.x, 11, 0, 0, SLIM_ERR_FIELD);       /* odd x */
	CASE(psrc.y, 9, 0, 0, SLIM_ERR_FIELD);        /* odd y */
	CASE(psrc.x, 20, 0, 0, SLIM_ERR_FIELD);       /* x + w past the image */
	CASE(psrc.y, 18, 0, 0, SLIM_ERR_FIELD);       /* y + h past the image */
	CASE(psrc.w, 0, 0, 0, SLIM_ERR_FIELD);
	CASE(psrc.h, 0, 0, 0, SLIM_ERR_FIELD);
	CASE(src_w, 0, 0, 0, SLIM_ERR_FIELD);
	CASE(src_h, 0, 0, 0, SLIM_ERR_FIELD);
	CASE(src_w, SLIM_MAX_DIM + 2, 0, 0, SLIM_ERR_FIELD);
	CASE(dst.w, 0, 0, 0, SLIM_ERR_FIELD);
	CASE(dst.h, 0, 0, 0, SLIM_ERR_FIELD);
	CASE(src_w, 40, 2, 0, SLIM_ERR_FIELD);        /* depth 2 */
	CASE(src_w, 40, 3, 0, SLIM_ERR_FIELD);        /* depth 3 */
	CASE(src_w, 40, 4, 0, SLIM_ERR_FIELD);        /* unknown flag */
	CASE(src_w, 40, 0x80, 0, SLIM_ERR_FIELD);
	CASE(pdst.x, 19, 0, 0, SLIM_ERR_RECT);        /* pdst left of dst */
	CASE(pdst.y, 9, 0, 0, SLIM_ERR_RECT);         /* above */
	CASE(pdst.w, 61, 0, 0, SLIM_ERR_RECT);        /* right of it */
	CASE(pdst.h, 45, 0, 0, SLIM_ERR_RECT);        /* below */
	CASE(pdst.w, 0, 0, 0, SLIM_ERR_RECT);
	CASE(pdst.x, CW - 5, 0, 0, SLIM_ERR_RECT);    /* off screen */
	CASE(dst.w, 60000, 0, 0, SLIM_OK);            /* dst may extend past the screen */
	CASE(src_w, 40, 0, 1, SLIM_ERR_LENGTH);
	CASE(src_w, 40, 0, -1, SLIM_ERR_LENGTH);
	CASE(src_w, 40, SLIM_CSCS_DEPTH4, 1, SLIM_ERR_LENGTH);
	CASE(src_w, 40, SLIM_CSCS_DEPTH4, -1, SLIM_ERR_LENGTH);
#undef CASE
	/* more samples than a piece may carry */
	cases[n].c = (struct slim_wire_cscs){ .src_w = 300, .src_h = 300, .dst = { 0, 0, 10, 10 },
		.psrc = { 0, 0, 300, 220 }, .pdst = { 0, 0, 10, 10 } };
	cases[n].flags = 0;
	cases[n].delta = 0;
	cases[n].err = SLIM_ERR_FIELD;
	n++;
	assert_true(n <= sizeof(cases) / sizeof(cases[0]));

	for (size_t i = 0; i < n; i++) {
		dgram_begin(d);
		put_cscs(d, &cases[i].c, cases[i].flags, cases[i].delta);
		dgram_end(f, d);
		if (cases[i].err == SLIM_OK) {
			expect_accept(f, d->buf, d->len);
		} else {
			expect_reject(f, d->buf, d->len, cases[i].err);
		}
	}
	/* only the header */
	dgram_begin(d);
	add_raw(&d->w, SLIM_CMD_CSCS, 0, &ok, sizeof(ok) - 1);
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_LENGTH);

	/* a piece may paint at most SLIM_MAX_CSCS_PIXELS (on a screen large enough to try) */
	for (int over = 0; over <= 1; over++) {
		struct slim_wire_cscs big = { .src_w = 4, .src_h = 4, .dst = { 0, 0, 2048, 1024 },
			.psrc = { 0, 0, 4, 4 }, .pdst = { 0, 0, (uint16_t)(1024 + over), 1024 } };
		dgram_begin(d);
		put_cscs(d, &big, 0, 0);
		dgram_end(f, d);
		struct slim_reader r;
		struct slim_dgram hdr;
		struct slim_cmd cmd;
		assert_int_equal(slim_reader_init(&r, &hdr, d->buf, d->len, false, 2048, 1024), SLIM_OK);
		assert_int_equal(slim_reader_next(&r, &cmd), over ? SLIM_ERR_FIELD : SLIM_OK);
	}
	dgram_free(d);
}

static void test_fields(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	struct slim_wire_set s = { .r = { 1, 2, 3, 4 } };
	struct {
		uint8_t type, flags;
		const void *body;
		size_t len;
		enum slim_error err;
	} cases[40];
	size_t n = 0;
	uint8_t body[4096];
	memset(body, 0, sizeof(body));
	memcpy(body, &s, sizeof(s));
#define CASE(t, fl, b, l, e) do { \
		cases[n] = (__typeof__(cases[0])){ t, fl, b, l, e }; \
		n++; \
	} while (0)
	/* SET */
	CASE(SLIM_CMD_SET, 0, body, 8 + 48, SLIM_OK);
	CASE(SLIM_CMD_SET, SLIM_SET_RGB888, body, 8 + 36, SLIM_OK);
	CASE(SLIM_CMD_SET, 0, body, 8 + 47, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_SET, 0, body, 8 + 36, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_SET, SLIM_SET_RGB888, body, 8 + 48, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_SET, 0, body, 8, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_SET, 0, body, 7, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_SET, 4, body, 8 + 48, SLIM_ERR_FIELD);
	CASE(SLIM_CMD_SET, 0x80, body, 8 + 48, SLIM_ERR_FIELD);
	/* BITMAP: 3 pixels wide is one byte a row */
	static const struct slim_wire_bitmap bm = { .r = { 1, 2, 3, 4 }, .fg = 1, .bg = 2 };
	uint8_t bmb[64];
	memset(bmb, 0xff, sizeof(bmb));
	memcpy(bmb, &bm, sizeof(bm));
	CASE(SLIM_CMD_BITMAP, 0, bmb, 16 + 4, SLIM_OK);
	CASE(SLIM_CMD_BITMAP, 0, bmb, 16 + 3, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_BITMAP, 0, bmb, 16 + 5, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_BITMAP, 0, bmb, 15, SLIM_ERR_LENGTH);
	/* fixed sizes */
	CASE(SLIM_CMD_FILL, 0, body, 11, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_FILL, 0, body, 13, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_COPY, 0, body, 11, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_COPY, 0, body, 13, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_CURSOR_POS, 0, body, 5, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_CURSOR_POS, 0, body, 7, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_FRAME_END, 0, body, 23, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_FRAME_END, 0, body, 25, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_FRAME_END, 0, body, 0, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_INPUT_ACK, 0, body, 4, SLIM_OK);
	CASE(SLIM_CMD_INPUT_ACK, 0, body, 3, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_INPUT_ACK, 0, body, 5, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_INPUT_ACK, 0, body, 0, SLIM_ERR_LENGTH);
#undef CASE
	for (size_t i = 0; i < n; i++) {
		dgram_begin(d);
		add_raw(&d->w, cases[i].type, cases[i].flags, cases[i].body, cases[i].len);
		dgram_end(f, d);
		if (cases[i].err == SLIM_OK) {
			expect_accept(f, d->buf, d->len);
		} else {
			expect_reject(f, d->buf, d->len, cases[i].err);
		}
	}

	/* CURSOR_IMAGE */
	const struct slim_wire_cursor_image ok = { .serial = 9, .w = 8, .h = 6, .hot_x = 7,
		.hot_y = 5, .row = 2, .rows = 4 };
	struct {
		struct slim_wire_cursor_image h;
		long delta;
		enum slim_error err;
	} cur[16];
	n = 0;
#define CASE(field, value, dl, e) do { \
		cur[n].h = ok; \
		cur[n].h.field = value; \
		cur[n].delta = dl; \
		cur[n].err = e; \
		n++; \
	} while (0)
	CASE(serial, 9, 0, SLIM_OK);
	CASE(w, 0, 0, SLIM_ERR_FIELD);
	CASE(h, 0, 0, SLIM_ERR_FIELD);
	CASE(w, SLIM_CURSOR_MAX + 1, 0, SLIM_ERR_FIELD);
	CASE(h, SLIM_CURSOR_MAX + 1, 0, SLIM_ERR_FIELD);
	CASE(hot_x, 8, 0, SLIM_ERR_FIELD);
	CASE(hot_y, 6, 0, SLIM_ERR_FIELD);
	CASE(rows, 0, 0, SLIM_ERR_FIELD);
	CASE(row, 3, 0, SLIM_ERR_FIELD);              /* rows 3..6 of 6 */
	CASE(row, 65535, 0, SLIM_ERR_FIELD);          /* row + rows wraps in 16 bits */
	CASE(serial, 9, 4, SLIM_ERR_LENGTH);
	CASE(serial, 9, -4, SLIM_ERR_LENGTH);
	CASE(serial, 9, -1, SLIM_ERR_LENGTH);
#undef CASE
	for (size_t i = 0; i < n; i++) {
		dgram_begin(d);
		size_t len = (size_t)ok.w * ok.rows * 4 + (size_t)cur[i].delta;
		uint8_t *p = slim_writer_add(&d->w, SLIM_CMD_CURSOR_IMAGE, 0, sizeof(ok) + len);
		memcpy(p, &cur[i].h, sizeof(ok));
		memset(p + sizeof(ok), 0x42, len);
		dgram_end(f, d);
		if (cur[i].err == SLIM_OK) {
			expect_accept(f, d->buf, d->len);
		} else {
			expect_reject(f, d->buf, d->len, cur[i].err);
		}
	}
	dgram_begin(d);
	add_raw(&d->w, SLIM_CMD_CURSOR_IMAGE, 0, &ok, sizeof(ok) - 1);
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_LENGTH);
	dgram_free(d);
}

/* Decodes the first command of an upstream datagram, as the server does. */
static enum slim_error upstream_error(const uint8_t *buf, size_t len)
{
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	enum slim_error err = slim_reader_init(&r, &hdr, buf, len, true, 0, 0);
	if (err != SLIM_OK) {
		return err;
	}
	while ((err = slim_reader_next(&r, &cmd)) == SLIM_OK && cmd.type != 0) {
	}
	return err;
}

/*
 * What the console sends, as the server validates it. The console itself
 * refuses every one of these datagrams for their direction.
 */
static void test_upstream_fields(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[2048];
	struct slim_writer w;
	const struct slim_wire_hello hello = { .version = 1, .width = 1024, .height = 768,
		.mtu = 1400, .caps = SLIM_CAP_LZ4 };
	struct {
		struct slim_wire_hello h;
		enum slim_error err;
	} hellos[] = {
		{ hello, SLIM_OK },
		{ hello, SLIM_ERR_FIELD }, { hello, SLIM_ERR_FIELD }, { hello, SLIM_ERR_FIELD },
		{ hello, SLIM_ERR_FIELD }, { hello, SLIM_ERR_FIELD }, { hello, SLIM_ERR_FIELD },
		{ hello, SLIM_ERR_FIELD },
	};
	hellos[1].h.width = 0;
	hellos[2].h.height = 0;
	hellos[3].h.width = hellos[3].h.height = 0;
	hellos[4].h.width = SLIM_MAX_DIM + 1;
	hellos[5].h.height = SLIM_MAX_DIM + 1;
	hellos[6].h.mtu = SLIM_MIN_MTU - 1;
	hellos[7].h.mtu = SLIM_MAX_MTU + 1;
	for (size_t i = 0; i < sizeof(hellos) / sizeof(hellos[0]); i++) {
		slim_writer_init(&w, buf, sizeof(buf), ASSOC, true);
		assert_true(slim_put_hello(&w, &hellos[i].h));
		size_t len = slim_writer_finish(&w, f->seq, 0);
		assert_int_equal(upstream_error(buf, len), hellos[i].err);
		expect_reject(f, buf, len, SLIM_ERR_DIRECTION);
	}

	/* raw upstream commands */
	uint8_t body[1024];
	memset(body, 0, sizeof(body));
	struct {
		uint8_t type;
		size_t len;
		uint16_t count, flags;
		uint32_t first, last;
		enum slim_error err;
	} raw[] = {
		{ SLIM_CMD_NACK, 4 + 8, 1, 0, 5, 5, SLIM_OK },
		{ SLIM_CMD_NACK, 4 + 8, 1, 0, 6, 5, SLIM_ERR_FIELD },          /* first > last */
		{ SLIM_CMD_NACK, 4 + 8, 1, 0, 0xffffffff, 0, SLIM_ERR_FIELD }, /* no wrapping */
		{ SLIM_CMD_NACK, 4 + 8, 1, 2, 5, 5, SLIM_ERR_FIELD },          /* unknown flag */
		{ SLIM_CMD_NACK, 4 + 65 * 8, 65, 0, 5, 5, SLIM_ERR_FIELD },    /* > 64 ranges */
		{ SLIM_CMD_NACK, 4 + 64 * 8, 64, 0, 5, 5, SLIM_OK },
		{ SLIM_CMD_NACK, 4 + 8, 2, 0, 5, 5, SLIM_ERR_LENGTH },
		{ SLIM_CMD_NACK, 4 + 16, 1, 0, 5, 5, SLIM_ERR_LENGTH },
		{ SLIM_CMD_NACK, 3, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_NACK, 4, 0, SLIM_NACK_REPAINT, 0, 0, SLIM_OK },
		{ SLIM_CMD_HELLO, 43, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_HELLO, 45, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_INPUT, 0, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_INPUT, 4, 0, 0, 0, 0, SLIM_ERR_LENGTH },            /* no event */
		{ SLIM_CMD_INPUT, 20, 0, 0, 0, 0, SLIM_ERR_LENGTH },           /* no number */
		{ SLIM_CMD_INPUT, 23, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_INPUT, 25, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_INPUT, 40, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_INPUT, 24, 0, 0, 0, 0, SLIM_OK },
		{ SLIM_CMD_INPUT, 44, 0, 0, 0, 0, SLIM_OK },
		{ SLIM_CMD_HELD, 8, 0, 0, 0, 0, SLIM_OK },                     /* nothing held */
		{ SLIM_CMD_HELD, 8 + 2, 1, 0, 0, 0, SLIM_OK },
		{ SLIM_CMD_HELD, 8 + 128, 64, 0, 0, 0, SLIM_OK },
		{ SLIM_CMD_HELD, 7, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_HELD, 0, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_HELD, 8 + 130, 65, 0, 0, 0, SLIM_ERR_FIELD },       /* > 64 codes */
		{ SLIM_CMD_HELD, 8, 0xffff, 0, 0, 0, SLIM_ERR_FIELD },
		{ SLIM_CMD_HELD, 8 + 2, 0, 0, 0, 0, SLIM_ERR_LENGTH },         /* a code too many */
		{ SLIM_CMD_HELD, 8 + 2, 2, 0, 0, 0, SLIM_ERR_LENGTH },         /* a code short */
		{ SLIM_CMD_HELD, 8 + 3, 1, 0, 0, 0, SLIM_ERR_LENGTH },         /* half a code */
		{ SLIM_CMD_INPUT_ACK, 4, 0, 0, 0, 0, SLIM_ERR_DIRECTION },
		{ SLIM_CMD_ACK, 31, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_ACK, 33, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_ACK, 32, 0, 0, 0, 0, SLIM_OK },
		{ SLIM_CMD_MIC, 16, 0, 0, 0, 0, SLIM_ERR_LENGTH }, /* a header, no sound */
		{ SLIM_CMD_MIC, 17, 0, 0, 0, 0, SLIM_OK },
		{ SLIM_CMD_AUDIO_REPORT, 23, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_AUDIO_REPORT, 24, 0, 0, 0, 0, SLIM_OK },
		{ SLIM_CMD_AUDIO, 17, 0, 0, 0, 0, SLIM_ERR_DIRECTION },
		{ 0x8a, 8, 0, 0, 0, 0, SLIM_ERR_UNKNOWN },
		{ 0xff, 8, 0, 0, 0, 0, SLIM_ERR_UNKNOWN },
		{ SLIM_CMD_FILL, 12, 0, 0, 0, 0, SLIM_ERR_DIRECTION },
	};
	for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
		memset(body, 0, sizeof(body));
		if (raw[i].type == SLIM_CMD_HELD && raw[i].len >= 8) {
			/* a code for every one the count says, as far as the length goes */
			struct slim_wire_held hh = { .next = 5, .count = raw[i].count };
			memcpy(body, &hh, sizeof(hh));
			memset(body + sizeof(hh), 0x1e, raw[i].len - sizeof(hh));
		}
		if (raw[i].type == SLIM_CMD_NACK && raw[i].len >= 4) {
			struct slim_wire_nack nh = { raw[i].count, raw[i].flags };
			memcpy(body, &nh, sizeof(nh));
			for (size_t k = 0; 4 + 8 * (k + 1) <= raw[i].len; k++) {
				struct slim_wire_seq_range r = { raw[i].first, raw[i].last };
				memcpy(body + 4 + 8 * k, &r, sizeof(r));
			}
		}
		slim_writer_init(&w, buf, sizeof(buf), ASSOC, true);
		add_raw(&w, raw[i].type, 0, body, raw[i].len);
		size_t len = slim_writer_finish(&w, f->seq, 0);
		if (upstream_error(buf, len) != raw[i].err) {
			fail_msg("case %zu: got \"%s\"", i, slim_error_str(upstream_error(buf, len)));
		}
		expect_reject(f, buf, len, SLIM_ERR_DIRECTION);
	}
}

/* The first commands are fine, a later one is not: nothing at all happens. */
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
		cmocka_unit_test(test_lz4_too_much),
		cmocka_unit_test_setup_teardown(test_palette, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zstd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_history, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cscs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upstream_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_later_command_bad, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rejected_is_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_rate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_many_commands, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fuzz, setup, teardown),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
