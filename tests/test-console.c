/*
 * The console core end to end: datagrams in, pixels and presented frames
 * out, and what it answers upstream.
 */
#include <fcntl.h>
#include <lz4.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "console-core.h"
#include "slim-clock.h"
#include "test-util.h"

#define ASSOC 0xa550c1a7u
#define DGRAM_CAP 65536

/* A backend that remembers what it was given. */
struct rec_backend {
	struct slim_console_backend base;
	uint32_t width, height;
	int inits, resizes, frames, cursors;
	const struct slim_fb *fb;
	struct slim_rect damage[8192];
	size_t n_damage;
	struct slim_console_cursor cursor;
};

static bool rec_init(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	struct rec_backend *r = (struct rec_backend *)b;
	r->width = width;
	r->height = height;
	r->inits++;
	return true;
}

static void rec_present(struct slim_console_backend *b, const struct slim_fb *fb,
		const struct slim_rect *damage, size_t n)
{
	struct rec_backend *r = (struct rec_backend *)b;
	assert_true(n <= sizeof(r->damage) / sizeof(r->damage[0]));
	r->fb = fb;
	memcpy(r->damage, damage, n * sizeof(*damage));
	r->n_damage = n;
	r->frames++;
}

static bool rec_resize(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	struct rec_backend *r = (struct rec_backend *)b;
	r->width = width;
	r->height = height;
	r->resizes++;
	return true;
}

static void rec_destroy(struct slim_console_backend *b)
{
	free(b);
}

static void rec_cursor(struct slim_console_backend *b, const struct slim_console_cursor *c)
{
	struct rec_backend *r = (struct rec_backend *)b;
	r->cursor = *c;
	r->cursors++;
}

static const struct slim_console_backend_impl rec_impl = {
	.name = "record",
	.init = rec_init,
	.present = rec_present,
	.resize = rec_resize,
	.destroy = rec_destroy,
	.cursor = rec_cursor,
};

static struct rec_backend *rec_create(void)
{
	struct rec_backend *r = calloc(1, sizeof(*r));
	assert_non_null(r);
	r->base.impl = &rec_impl;
	return r;
}

/* A console with its sink; `backend` may be NULL for the headless one. */
struct console {
	struct slim_console_core *core;
	struct slim_console_backend *backend;
	struct test_sink *sink;
	struct slim_writer w;
	uint8_t *buf;
	size_t len;
};

static void console_open(struct console *c, uint32_t width, uint32_t height, uint16_t mtu,
		struct slim_console_backend *backend)
{
	c->sink = test_sink_create();
	c->backend = backend ? backend : slim_headless_backend_create();
	assert_non_null(c->backend);
	c->core = slim_console_core_create(width, height, mtu, c->backend, test_sink_send, c->sink);
	assert_non_null(c->core);
	c->buf = malloc(DGRAM_CAP);
	assert_non_null(c->buf);
}

static void console_close(struct console *c)
{
	slim_console_core_destroy(c->core);
	c->backend->impl->destroy(c->backend);
	free(c->sink);
	free(c->buf);
}

static struct slim_headless_backend *headless(struct console *c)
{
	return (struct slim_headless_backend *)c->backend;
}

static void begin(struct console *c)
{
	slim_writer_init(&c->w, c->buf, DGRAM_CAP, ASSOC, false);
}

static enum slim_error send_dgram(struct console *c, uint32_t seq, uint64_t time_us)
{
	c->len = slim_writer_finish(&c->w, seq, time_us);
	return slim_console_core_receive(c->core, c->buf, c->len);
}

/* Opens upstream datagram `i` of the sink and checks its header. */
static void open_upstream(struct console *c, size_t i, struct slim_reader *r, uint32_t assoc,
		uint16_t count)
{
	assert_true(i < c->sink->n && i < TEST_SINK_MAX);
	struct slim_dgram hdr;
	assert_int_equal(slim_reader_init(r, &hdr, c->sink->buf[i], c->sink->len[i], true, 0, 0),
		SLIM_OK);
	assert_int_equal(hdr.flags, SLIM_DGRAM_UPSTREAM);
	assert_int_equal(hdr.assoc, assoc);
	assert_int_equal(hdr.count, count);
}

static void next_cmd(struct slim_reader *r, struct slim_cmd *cmd, uint8_t type)
{
	assert_int_equal(slim_reader_next(r, cmd), SLIM_OK);
	assert_int_equal(cmd->type, type);
}

static void expect_nack(struct slim_reader *r, const struct slim_wire_seq_range *want,
		size_t n, uint16_t flags)
{
	struct slim_cmd cmd;
	next_cmd(r, &cmd, SLIM_CMD_NACK);
	assert_int_equal(cmd.nack.count, n);
	assert_int_equal(cmd.nack.flags, flags);
	for (size_t i = 0; i < n; i++) {
		struct slim_wire_seq_range got;
		slim_nack_get(&cmd, i, &got);
		assert_int_equal(got.first, want[i].first);
		assert_int_equal(got.last, want[i].last);
	}
}

static void expect_end(struct slim_reader *r)
{
	struct slim_cmd cmd;
	assert_int_equal(slim_reader_next(r, &cmd), SLIM_OK);
	assert_int_equal(cmd.type, 0);
}

static void test_create_bounds(void **state)
{
	assert_null(slim_console_core_create(0, 10, 1400, NULL, NULL, NULL));
	assert_null(slim_console_core_create(10, 0, 1400, NULL, NULL, NULL));
	assert_null(slim_console_core_create(SLIM_MAX_DIM + 1, 10, 1400, NULL, NULL, NULL));
	assert_null(slim_console_core_create(10, SLIM_MAX_DIM + 1, 1400, NULL, NULL, NULL));
	assert_null(slim_console_core_create(10, 10, SLIM_MIN_MTU - 1, NULL, NULL, NULL));
	assert_null(slim_console_core_create(10, 10, SLIM_MAX_MTU + 1, NULL, NULL, NULL));
	struct rec_backend *rec = rec_create();
	struct slim_console_core *core = slim_console_core_create(33, 17, SLIM_MIN_MTU,
		&rec->base, NULL, NULL);
	assert_non_null(core);
	assert_int_equal(rec->inits, 1);
	assert_int_equal(rec->width, 33);
	assert_int_equal(rec->height, 17);
	/* the screen starts black */
	const struct slim_fb *fb = slim_console_core_fb(core);
	assert_int_equal(fb->width, 33);
	assert_int_equal(fb->height, 17);
	for (uint32_t y = 0; y < 17; y++) {
		for (uint32_t x = 0; x < 33; x++) {
			assert_int_equal(*slim_fb_row(fb, x, y), 0xff000000);
		}
	}
	/* without a send function, HELLO still works */
	slim_console_core_hello(core, "quiet", 1);
	slim_console_core_destroy(core);
	rec_destroy(&rec->base);
}

static void test_hello(void **state)
{
	struct console c;
	console_open(&c, 800, 600, 1200, NULL);
	slim_console_core_hello(c.core, "desk-7", ASSOC);
	assert_int_equal(c.sink->n, 1);
	struct slim_reader r;
	struct slim_dgram hdr;
	assert_int_equal(slim_reader_init(&r, &hdr, c.sink->buf[0], c.sink->len[0], true, 0, 0),
		SLIM_OK);
	assert_int_equal(hdr.assoc, ASSOC);
	assert_int_equal(hdr.seq, 1);
	assert_int_equal(hdr.count, 1);
	assert_true(hdr.time_us > 0);
	struct slim_cmd cmd;
	next_cmd(&r, &cmd, SLIM_CMD_HELLO);
	assert_int_equal(cmd.hello.version, SLIM_VERSION);
	assert_int_equal(cmd.hello.width, 800);
	assert_int_equal(cmd.hello.height, 600);
	assert_int_equal(cmd.hello.mtu, 1200);
	assert_int_equal(cmd.hello.caps,
		SLIM_CAP_LZ4 | SLIM_CAP_RGB888 | SLIM_CAP_CSCS | SLIM_CAP_CURSOR |
		SLIM_CAP_PALETTE | SLIM_CAP_ZSTD | SLIM_CAP_CACHE | SLIM_CAP_HISTORY);
	char id[SLIM_CONSOLE_ID_LEN] = "desk-7";
	assert_memory_equal(cmd.hello.console_id, id, SLIM_CONSOLE_ID_LEN);
	expect_end(&r);

	/* the association is now the one said */
	begin(&c);
	assert_true(slim_put_fill(&c.w, (struct slim_rect){ 0, 0, 1, 1 }, 0xff));
	assert_int_equal(send_dgram(&c, 1, 0), SLIM_OK);
	slim_writer_init(&c.w, c.buf, DGRAM_CAP, ASSOC + 1, false);
	assert_true(slim_put_fill(&c.w, (struct slim_rect){ 0, 0, 1, 1 }, 0xff00));
	assert_int_equal(send_dgram(&c, 2, 0), SLIM_ERR_ASSOC);
	assert_int_equal(slim_console_core_fb(c.core)->px[0], 0xff0000ff);

	/* a second HELLO starts over: a new association, sequence numbers from 1 */
	test_sink_clear(c.sink);
	char long_id[64];
	memset(long_id, 'x', sizeof(long_id) - 1);
	long_id[63] = 0;
	slim_console_core_hello(c.core, long_id, ASSOC + 1);
	assert_int_equal(c.sink->n, 1);
	assert_int_equal(slim_reader_init(&r, &hdr, c.sink->buf[0], c.sink->len[0], true, 0, 0),
		SLIM_OK);
	assert_int_equal(hdr.assoc, ASSOC + 1);
	assert_int_equal(hdr.seq, 1);
	next_cmd(&r, &cmd, SLIM_CMD_HELLO);
	/* a long id is cut to the field: a key's id takes all of it, unterminated */
	assert_int_equal(strnlen(cmd.hello.console_id, SLIM_CONSOLE_ID_LEN), SLIM_CONSOLE_ID_LEN);
	assert_int_equal(send_dgram(&c, 1, 0), SLIM_OK);
	assert_int_equal(slim_console_core_fb(c.core)->px[0], 0xff00ff00);
	begin(&c);
	assert_true(slim_put_fill(&c.w, (struct slim_rect){ 0, 0, 1, 1 }, 0xff));
	assert_int_equal(send_dgram(&c, 2, 0), SLIM_ERR_ASSOC);
	const struct slim_console_stats *st = slim_console_core_stats(c.core);
	assert_int_equal(st->applied, 2);
	assert_int_equal(st->errors[SLIM_ERR_ASSOC], 2);
	assert_int_equal(st->bad, 2);
	assert_int_equal(st->datagrams, 4);
	console_close(&c);
}

/* The one datagram the console sent: an ACK of `frame`, alone. */
static void expect_lone_ack(struct console *c, uint32_t frame)
{
	struct slim_reader r;
	struct slim_cmd cmd;
	open_upstream(c, 0, &r, ASSOC, 1);
	next_cmd(&r, &cmd, SLIM_CMD_ACK);
	assert_int_equal(cmd.ack.frame, frame);
}

/*
 * A frame's ACK held for the next datagram sent: input carries it; a second
 * frame, a loss or a frame of several datagrams sends it at once.
 */
static void test_ack_delay(void **state)
{
	struct console c;
	console_open(&c, 64, 48, SLIM_DEFAULT_MTU, NULL);
	slim_console_core_set_ack_delay(c.core, true);
	slim_console_core_hello(c.core, "frames", ASSOC);
	struct slim_reader r;
	struct slim_cmd cmd;
	open_upstream(&c, 0, &r, ASSOC, 1);
	next_cmd(&r, &cmd, SLIM_CMD_HELLO);
	assert_true(cmd.hello.caps & SLIM_CAP_ACK_DELAY);
	test_sink_clear(c.sink);

	struct slim_wire_frame_end fe = { .frame = 1, .report_from = 1 };
	begin(&c);
	assert_true(slim_put_fill(&c.w, (struct slim_rect){ 0, 0, 10, 10 }, 0x00ff0000));
	assert_true(slim_put_frame_end(&c.w, &fe));
	uint64_t sent_us = slim_now_us();
	assert_int_equal(send_dgram(&c, 1, sent_us), SLIM_OK);
	assert_int_equal(c.sink->n, 0); /* held */
	int ms = slim_console_core_timeout_ms(c.core, slim_now_us());
	assert_true(ms > 0 && ms <= SLIM_ACK_DELAY_MS);

	/* a key goes with it */
	struct slim_wire_input key = { .kind = SLIM_INPUT_KEY, .code = 30, .value = 1 };
	assert_true(slim_console_core_send_input(c.core, &key, 1));
	assert_int_equal(c.sink->n, 1);
	open_upstream(&c, 0, &r, ASSOC, 3);
	next_cmd(&r, &cmd, SLIM_CMD_INPUT);
	next_cmd(&r, &cmd, SLIM_CMD_HELD);
	next_cmd(&r, &cmd, SLIM_CMD_ACK);
	assert_int_equal(cmd.ack.frame, 1);
	/* the time it was held is not part of the round trip */
	assert_true(cmd.ack.echo_us >= sent_us && cmd.ack.echo_us <= slim_now_us());
	expect_end(&r);
	test_sink_clear(c.sink);

	/* held, then a second frame: one ACK for both, at once */
	fe.frame = 2;
	begin(&c);
	assert_true(slim_put_input_ack(&c.w, 2)); /* the key arrived: nothing to send again */
	assert_true(slim_put_frame_end(&c.w, &fe));
	assert_int_equal(send_dgram(&c, 2, 1), SLIM_OK);
	assert_int_equal(c.sink->n, 0);
	fe.frame = 3;
	begin(&c);
	assert_true(slim_put_frame_end(&c.w, &fe));
	assert_int_equal(send_dgram(&c, 3, 1), SLIM_OK);
	assert_int_equal(c.sink->n, 1);
	expect_lone_ack(&c, 3);
	test_sink_clear(c.sink);

	/* a loss to report: NACK and ACK at once */
	fe.frame = 4;
	begin(&c);
	assert_true(slim_put_frame_end(&c.w, &fe));
	assert_int_equal(send_dgram(&c, 5, 1), SLIM_OK);
	assert_int_equal(c.sink->n, 2); /* the gap's NACK, then NACK and ACK */
	open_upstream(&c, 1, &r, ASSOC, 2);
	next_cmd(&r, &cmd, SLIM_CMD_NACK);
	next_cmd(&r, &cmd, SLIM_CMD_ACK);
	assert_int_equal(cmd.ack.frame, 4);
	test_sink_clear(c.sink);

	/* nothing to carry it: it goes alone when the delay is up */
	fe.frame = 5;
	fe.report_from = 6;
	begin(&c);
	assert_true(slim_put_frame_end(&c.w, &fe));
	assert_int_equal(send_dgram(&c, 6, 1), SLIM_OK);
	uint64_t now = slim_now_us();
	slim_console_core_tick(c.core, now);
	assert_int_equal(c.sink->n, 0);
	slim_console_core_tick(c.core, now + SLIM_ACK_DELAY_MS * 1000ull);
	assert_int_equal(c.sink->n, 1);
	expect_lone_ack(&c, 5);
	test_sink_clear(c.sink);

	/* a frame of two datagrams: the server learns the link from its ACK, at once */
	fe.frame = 6;
	fe.report_from = 7;
	begin(&c);
	assert_true(slim_put_fill(&c.w, (struct slim_rect){ 0, 0, 10, 10 }, 0x0000ff00));
	assert_int_equal(send_dgram(&c, 7, 1), SLIM_OK);
	begin(&c);
	assert_true(slim_put_frame_end(&c.w, &fe));
	assert_int_equal(send_dgram(&c, 8, 1), SLIM_OK);
	assert_int_equal(c.sink->n, 1);
	expect_lone_ack(&c, 6);
	console_close(&c);
}

static void test_frame_end_ack(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 60);
	struct console c;
	console_open(&c, 64, 48, SLIM_DEFAULT_MTU, NULL);
	slim_console_core_hello(c.core, "frames", ASSOC);
	test_sink_clear(c.sink);

	begin(&c);
	assert_true(slim_put_fill(&c.w, (struct slim_rect){ 0, 0, 10, 10 }, 0x00ff0000));
	uint8_t px[4 * 4 * 4];
	assert_non_null(test_put_set(&c.w, (struct slim_rect){ 10, 0, 4, 4 }, 0, &rng, px));
	assert_int_equal(send_dgram(&c, 1, 111), SLIM_OK);
	/* nothing is shown or acknowledged before the frame ends */
	assert_int_equal(headless(&c)->frames, 0);
	assert_int_equal(c.sink->n, 0);

	begin(&c);
	assert_true(slim_put_copy(&c.w, (struct slim_rect){ 0, 0, 14, 4 }, 20, 20));
	struct slim_wire_frame_end fe = { .frame = 5, .report_from = 1, .damage_us = 1, .encoded_us = 2 };
	assert_true(slim_put_frame_end(&c.w, &fe));
	assert_int_equal(send_dgram(&c, 2, 222), SLIM_OK);
	assert_int_equal(headless(&c)->frames, 1);
	assert_int_equal(headless(&c)->pixels_presented, 100 + 16 + 56);

	const struct slim_fb *fb = slim_console_core_fb(c.core);
	assert_int_equal(*slim_fb_row(fb, 9, 9), 0xffff0000);
	assert_int_equal(*slim_fb_row(fb, 10, 9), 0xff000000);
	uint32_t want;
	memcpy(&want, px + 4 * (4 * 3 + 2), 4);
	assert_int_equal(*slim_fb_row(fb, 12, 3), want | 0xff000000);
	assert_int_equal(*slim_fb_row(fb, 20 + 12, 20 + 3), want | 0xff000000);
	assert_int_equal(*slim_fb_row(fb, 20, 20), 0xffff0000);

	/* the ACK */
	assert_int_equal(c.sink->n, 1);
	struct slim_reader r;
	open_upstream(&c, 0, &r, ASSOC, 1);
	struct slim_cmd cmd;
	next_cmd(&r, &cmd, SLIM_CMD_ACK);
	assert_int_equal(cmd.ack.frame, 5);
	assert_int_equal(cmd.ack.highest_seq, 2);
	/*
	 * The datagram's time, plus what decoding and presenting took here
	 * (often under a microsecond, not always: a bound, not an equality).
	 */
	assert_true(cmd.ack.echo_us >= 222 && cmd.ack.echo_us - 222 < 1000000);
	assert_true(cmd.ack.received_us > 0);
	assert_true(cmd.ack.received_us <= cmd.ack.applied_us);
	expect_end(&r);

	/* the next frame presents only its own damage */
	begin(&c);
	assert_true(slim_put_fill(&c.w, (struct slim_rect){ 63, 47, 1, 1 }, 0));
	fe.frame = 6;
	assert_true(slim_put_frame_end(&c.w, &fe));
	assert_int_equal(send_dgram(&c, 3, 333), SLIM_OK);
	assert_int_equal(headless(&c)->frames, 2);
	assert_int_equal(headless(&c)->pixels_presented, 100 + 16 + 56 + 1);
	assert_int_equal(c.sink->n, 2);
	open_upstream(&c, 1, &r, ASSOC, 1);
	next_cmd(&r, &cmd, SLIM_CMD_ACK);
	assert_int_equal(cmd.ack.frame, 6);
	assert_int_equal(cmd.ack.highest_seq, 3);
	assert_true(cmd.ack.echo_us >= 333 && cmd.ack.echo_us - 333 < 1000000);

	/* a frame with nothing in it is still presented and acknowledged */
	begin(&c);
	fe.frame = 7;
	assert_true(slim_put_frame_end(&c.w, &fe));
	assert_int_equal(send_dgram(&c, 4, 444), SLIM_OK);
	assert_int_equal(headless(&c)->frames, 3);
	assert_int_equal(headless(&c)->pixels_presented, 100 + 16 + 56 + 1);
	assert_int_equal(c.sink->n, 3);

	const struct slim_console_stats *st = slim_console_core_stats(c.core);
	assert_int_equal(st->frames, 3);
	assert_int_equal(st->applied, 4);
	assert_int_equal(st->datagrams, 4);
	assert_int_equal(st->bad, 0);
	console_close(&c);
}

static void assert_rect(struct slim_rect a, struct slim_rect b)
{
	assert_int_equal(a.x, b.x);
	assert_int_equal(a.y, b.y);
	assert_int_equal(a.w, b.w);
	assert_int_equal(a.h, b.h);
}

static void test_damage(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 61);
	struct rec_backend *rec = rec_create();
	struct console c;
	console_open(&c, 320, 240, SLIM_DEFAULT_MTU, &rec->base);
	slim_console_core_hello(c.core, "damage", ASSOC);

	const struct slim_rect fill = { 1, 2, 3, 4 }, set = { 5, 6, 7, 8 }, bm = { 9, 10, 11, 12 };
	const struct slim_rect copy_src = { 0, 0, 13, 14 };
	const struct slim_wire_cscs cs = {
		.src_w = 20, .src_h = 10, .dst = { 100, 100, 40, 20 },
		.psrc = { 0, 0, 20, 10 }, .pdst = { 110, 105, 15, 6 },
	};
	struct slim_wire_cursor_image ci = { .serial = 1, .w = 2, .h = 2, .rows = 2 };
	begin(&c);
	assert_true(slim_put_fill(&c.w, fill, 1));
	assert_non_null(test_put_set(&c.w, set, SLIM_SET_LZ4, &rng, NULL));
	assert_non_null(test_put_bitmap(&c.w, bm, 1, 2, &rng));
	assert_true(slim_put_copy(&c.w, copy_src, 200, 150));
	assert_non_null(test_put_cscs(&c.w, &cs, SLIM_CSCS_DEPTH8, &rng));
	assert_non_null(test_put_cursor_image(&c.w, &ci, &rng));
	assert_true(slim_put_cursor_pos(&c.w, 5, 5, true));
	assert_int_equal(send_dgram(&c, 1, 0), SLIM_OK);
	begin(&c);
	assert_true(slim_put_frame_end(&c.w, &(struct slim_wire_frame_end){ .frame = 1 }));
	assert_int_equal(send_dgram(&c, 2, 0), SLIM_OK);

	assert_int_equal(rec->frames, 1);
	assert_ptr_equal(rec->fb, slim_console_core_fb(c.core));
	/* in order; the cursor damages nothing, it is drawn by the backend */
	assert_int_equal(rec->n_damage, 5);
	assert_rect(rec->damage[0], fill);
	assert_rect(rec->damage[1], set);
	assert_rect(rec->damage[2], bm);
	assert_rect(rec->damage[3], (struct slim_rect){ 200, 150, 13, 14 });
	assert_rect(rec->damage[4], (struct slim_rect){ 110, 105, 15, 6 });

	/* more rectangles than the console tracks collapse to their bounds */
	uint32_t seq = 3;
	const int rects = 5000;
	int done = 0;
	while (done < rects) {
		begin(&c);
		for (int i = 0; i < 60 && done < rects; i++, done++) {
			struct slim_rect r = { (uint16_t)(10 + done % 300), (uint16_t)(20 + done / 300),
				1, 1 };
			assert_true(slim_put_fill(&c.w, r, 0xffffff));
		}
		assert_int_equal(send_dgram(&c, seq++, 0), SLIM_OK);
	}
	begin(&c);
	assert_true(slim_put_frame_end(&c.w, &(struct slim_wire_frame_end){ .frame = 2 }));
	assert_int_equal(send_dgram(&c, seq++, 0), SLIM_OK);
	assert_int_equal(rec->frames, 2);
	assert_true(rec->n_damage >= 1 && rec->n_damage <= 4096);
	/* every filled pixel is inside the damage */
	for (int i = 0; i < rects; i++) {
		uint32_t x = 10 + (uint32_t)i % 300, y = 20 + (uint32_t)i / 300;
		bool in = false;
		for (size_t k = 0; k < rec->n_damage && !in; k++) {
			struct slim_rect d = rec->damage[k];
			in = x >= d.x && x < (uint32_t)d.x + d.w && y >= d.y && y < (uint32_t)d.y + d.h;
		}
		if (!in) {
			fail_msg("pixel (%u, %u) filled but not presented", x, y);
		}
	}
	/* and the damage stays on the screen */
	for (size_t k = 0; k < rec->n_damage; k++) {
		struct slim_rect d = rec->damage[k];
		assert_true((uint32_t)d.x + d.w <= 320 && (uint32_t)d.y + d.h <= 240);
	}
	console_close(&c);
}

/* Applies a datagram's commands to `fb` the way the encoder models the console. */
static void model_apply(const struct slim_fb *fb, const uint8_t *buf, size_t len,
		struct slim_cscs_scratch *s)
{
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	assert_int_equal(slim_reader_init(&r, &hdr, buf, len, false, (uint16_t)fb->width,
		(uint16_t)fb->height), SLIM_OK);
	while (slim_reader_next(&r, &cmd) == SLIM_OK && cmd.type != 0) {
		switch (cmd.type) {
		case SLIM_CMD_FILL:
			slim_fb_fill(fb, cmd.fill.r, cmd.fill.color);
			break;
		case SLIM_CMD_SET:
			if (cmd.flags & SLIM_SET_LZ4) {
				size_t raw = slim_set_raw_len(cmd.set.r, cmd.flags);
				uint8_t *out = malloc(raw);
				assert_int_equal(LZ4_decompress_safe((const char *)cmd.set.data,
					(char *)out, (int)cmd.set.len, (int)raw), (int)raw);
				slim_fb_set(fb, cmd.set.r, out, cmd.flags);
				free(out);
			} else {
				slim_fb_set(fb, cmd.set.r, cmd.set.data, cmd.flags);
			}
			break;
		case SLIM_CMD_BITMAP:
			slim_fb_bitmap(fb, cmd.bitmap.r, cmd.bitmap.fg, cmd.bitmap.bg, cmd.bitmap.bits);
			break;
		case SLIM_CMD_COPY:
			slim_fb_copy(fb, cmd.copy.src, cmd.copy.dx, cmd.copy.dy);
			break;
		case SLIM_CMD_CSCS:
			slim_fb_cscs(fb, &cmd.cscs, s);
			break;
		}
	}
	assert_int_equal(cmd.type, 0);
}

static struct slim_rect random_rect(struct test_rng *rng, uint32_t w, uint32_t h, uint32_t max)
{
	struct slim_rect r;
	r.w = (uint16_t)test_rand_range(rng, 1, max < w ? max : w);
	r.h = (uint16_t)test_rand_range(rng, 1, max < h ? max : h);
	r.x = (uint16_t)test_rand_below(rng, w - r.w + 1);
	r.y = (uint16_t)test_rand_below(rng, h - r.h + 1);
	return r;
}

/* A random stream of every kind of command: the console shows exactly what the model does. */
static void test_against_model(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 62);
	const uint32_t W = 200, H = 150;
	struct console c;
	console_open(&c, W, H, SLIM_DEFAULT_MTU, NULL);
	slim_console_core_hello(c.core, "model", ASSOC);
	struct slim_fb model = test_fb_create(W, H, NULL);
	slim_fb_fill(&model, (struct slim_rect){ 0, 0, (uint16_t)W, (uint16_t)H }, 0);
	struct slim_cscs_scratch *s = slim_cscs_scratch_create();
	for (uint32_t seq = 1; seq <= 400; seq++) {
		slim_writer_init(&c.w, c.buf, SLIM_DEFAULT_MTU, ASSOC, false);
		for (int k = 0; k < 6; k++) {
			struct slim_rect r = random_rect(&rng, W, H, 16);
			switch (test_rand_below(&rng, 8)) {
			case 0:
				slim_put_fill(&c.w, random_rect(&rng, W, H, 150), test_rand(&rng));
				break;
			case 1:
				test_put_set(&c.w, r, (uint8_t)test_rand_below(&rng, 4), &rng, NULL);
				break;
			case 2:
				test_put_bitmap(&c.w, r, test_rand(&rng), test_rand(&rng), &rng);
				break;
			case 3: {
				struct slim_rect src = random_rect(&rng, W, H, 120);
				slim_put_copy(&c.w, src, (uint16_t)test_rand_below(&rng, W - src.w + 1),
					(uint16_t)test_rand_below(&rng, H - src.h + 1));
				break;
			}
			case 4: {
				struct slim_rect dst = random_rect(&rng, W, H, 100);
				struct slim_rect pdst = random_rect(&rng, dst.w, dst.h, 100);
				pdst.x = (uint16_t)(pdst.x + dst.x);
				pdst.y = (uint16_t)(pdst.y + dst.y);
				struct slim_wire_cscs cs = {
					.src_w = 24, .src_h = 18,
					.dst = { dst.x, dst.y, dst.w, dst.h },
					.psrc = { 2, 4, 17, 11 },
					.pdst = { pdst.x, pdst.y, pdst.w, pdst.h },
				};
				test_put_cscs(&c.w, &cs, (uint8_t)test_rand_below(&rng, 2), &rng);
				break;
			}
			case 5:
				slim_put_cursor_pos(&c.w, (int16_t)test_rand(&rng), 0, true);
				break;
			case 6:
				slim_put_frame_end(&c.w, &(struct slim_wire_frame_end){ .frame = seq });
				break;
			default:
				break;
			}
		}
		c.len = slim_writer_finish(&c.w, seq, seq);
		assert_int_equal(slim_console_core_receive(c.core, c.buf, c.len), SLIM_OK);
		model_apply(&model, c.buf, c.len, s);
		test_fb_assert_equal(slim_console_core_fb(c.core), &model);
		test_sink_clear(c.sink);
	}
	assert_int_equal(slim_console_core_stats(c.core)->applied, 400);
	assert_int_equal(slim_console_core_stats(c.core)->bad, 0);
	slim_cscs_scratch_destroy(s);
	test_fb_destroy(&model);
	console_close(&c);
}

static void fill_dgram(struct console *c, struct slim_rect r, uint32_t color)
{
	begin(c);
	assert_true(slim_put_fill(&c->w, r, color));
}

static void test_loss(void **state)
{
	struct console c;
	console_open(&c, 64, 48, SLIM_DEFAULT_MTU, NULL);
	slim_console_core_hello(c.core, "loss", ASSOC);
	test_sink_clear(c.sink);
	const struct slim_rect px0 = { 0, 0, 1, 1 };
	const struct slim_fb *fb = slim_console_core_fb(c.core);
	const struct slim_console_stats *st = slim_console_core_stats(c.core);

	fill_dgram(&c, px0, 0x000001);
	assert_int_equal(send_dgram(&c, 1, 0), SLIM_OK);
	assert_int_equal(c.sink->n, 0);
	/* 2 and 3 do not come: the console says so at once */
	fill_dgram(&c, px0, 0x000004);
	assert_int_equal(send_dgram(&c, 4, 0), SLIM_OK);
	assert_int_equal(fb->px[0], 0xff000004);
	assert_int_equal(c.sink->n, 1);
	struct slim_reader r;
	open_upstream(&c, 0, &r, ASSOC, 1);
	expect_nack(&r, (struct slim_wire_seq_range[]){ { 2, 3 } }, 1, 0);
	expect_end(&r);

	/* the frame's ACK repeats the loss, before the ACK */
	begin(&c);
	assert_true(slim_put_frame_end(&c.w, &(struct slim_wire_frame_end){ .frame = 1 }));
	assert_int_equal(send_dgram(&c, 5, 555), SLIM_OK);
	assert_int_equal(c.sink->n, 2);
	open_upstream(&c, 1, &r, ASSOC, 2);
	expect_nack(&r, (struct slim_wire_seq_range[]){ { 2, 3 } }, 1, 0);
	struct slim_cmd cmd;
	next_cmd(&r, &cmd, SLIM_CMD_ACK);
	assert_int_equal(cmd.ack.frame, 1);
	assert_int_equal(cmd.ack.highest_seq, 5);
	assert_true(cmd.ack.echo_us >= 555 && cmd.ack.echo_us - 555 < 1000000);
	expect_end(&r);

	/* 3 turns up late: dropped, counted, not applied, nothing sent */
	test_sink_clear(c.sink);
	fill_dgram(&c, px0, 0x000003);
	assert_int_equal(send_dgram(&c, 3, 0), SLIM_OK);
	assert_int_equal(st->late, 1);
	assert_int_equal(fb->px[0], 0xff000004);
	/* 4 again: a duplicate, not applied again over what 6 paints */
	fill_dgram(&c, px0, 0x000006);
	assert_int_equal(send_dgram(&c, 6, 0), SLIM_OK);
	fill_dgram(&c, px0, 0x000004);
	assert_int_equal(send_dgram(&c, 4, 0), SLIM_OK);
	assert_int_equal(st->duplicates, 1);
	assert_int_equal(fb->px[0], 0xff000006);
	/* a repeated FRAME_END is neither presented nor acknowledged again */
	begin(&c);
	assert_true(slim_put_frame_end(&c.w, &(struct slim_wire_frame_end){ .frame = 1 }));
	assert_int_equal(send_dgram(&c, 5, 555), SLIM_OK);
	assert_int_equal(st->duplicates, 2);
	assert_int_equal(headless(&c)->frames, 1);
	assert_int_equal(c.sink->n, 0);
	/* 0 is never a sequence number */
	fill_dgram(&c, px0, 0x000000);
	assert_int_equal(send_dgram(&c, 0, 0), SLIM_OK);
	assert_int_equal(st->late, 2);
	assert_int_equal(fb->px[0], 0xff000006);

	/* and the losses are still reported with the next frame */
	begin(&c);
	assert_true(slim_put_frame_end(&c.w, &(struct slim_wire_frame_end){ .frame = 2 }));
	assert_int_equal(send_dgram(&c, 8, 888), SLIM_OK);
	assert_int_equal(c.sink->n, 2);
	open_upstream(&c, 0, &r, ASSOC, 1);
	expect_nack(&r, (struct slim_wire_seq_range[]){ { 7, 7 } }, 1, 0);
	open_upstream(&c, 1, &r, ASSOC, 2);
	expect_nack(&r, (struct slim_wire_seq_range[]){ { 2, 3 }, { 7, 7 } }, 2, 0);
	next_cmd(&r, &cmd, SLIM_CMD_ACK);
	assert_int_equal(cmd.ack.highest_seq, 8);

	assert_int_equal(st->applied, 5);
	assert_int_equal(st->datagrams, 9);
	assert_int_equal(st->bad, 0);
	console_close(&c);
}

/* Sequence numbers wrap from UINT32_MAX to 1: every NACK the console sends stays valid. */
static void test_seq_wrap(void **state)
{
	struct console c;
	console_open(&c, 64, 48, SLIM_DEFAULT_MTU, NULL);
	slim_console_core_hello(c.core, "wrap", ASSOC);
	const struct slim_rect px0 = { 0, 0, 1, 1 };
	const uint32_t top = UINT32_MAX;
	for (uint32_t s = top - 10; s != top - 1; s++) {
		fill_dgram(&c, px0, s);
		assert_int_equal(send_dgram(&c, s, 0), SLIM_OK);
	}
	/* top - 1 and top lost, and the server skips 0 */
	test_sink_clear(c.sink);
	fill_dgram(&c, px0, 1);
	assert_int_equal(send_dgram(&c, 1, 0), SLIM_OK);
	assert_int_equal(c.sink->n, 1);
	struct slim_reader r;
	open_upstream(&c, 0, &r, ASSOC, 1);
	expect_nack(&r, (struct slim_wire_seq_range[]){ { top - 1, top } }, 1, 0);
	expect_end(&r);

	/* a loss across the wrap is split at it */
	test_sink_clear(c.sink);
	slim_console_core_hello(c.core, "wrap", ASSOC);
	test_sink_clear(c.sink);
	for (uint32_t s = top - 10; s != top - 2; s++) {
		fill_dgram(&c, px0, s);
		assert_int_equal(send_dgram(&c, s, 0), SLIM_OK);
	}
	test_sink_clear(c.sink);
	fill_dgram(&c, px0, 3);
	assert_int_equal(send_dgram(&c, 3, 0), SLIM_OK);
	assert_int_equal(c.sink->n, 1);
	open_upstream(&c, 0, &r, ASSOC, 1);
	expect_nack(&r, (struct slim_wire_seq_range[]){ { top - 2, top }, { 1, 2 } }, 2, 0);
	expect_end(&r);

	/* straight from UINT32_MAX to 1 is no loss */
	slim_console_core_hello(c.core, "wrap", ASSOC);
	fill_dgram(&c, px0, 0);
	assert_int_equal(send_dgram(&c, top, 0), SLIM_OK);
	test_sink_clear(c.sink);
	fill_dgram(&c, px0, 0);
	assert_int_equal(send_dgram(&c, 1, 0), SLIM_OK);
	assert_int_equal(c.sink->n, 0);

	/* the frame's ACK after the wrap is valid and repeats the losses */
	slim_console_core_hello(c.core, "wrap", ASSOC);
	for (uint32_t s = top - 5000; s != top - 2; s++) {
		fill_dgram(&c, px0, s);
		assert_int_equal(send_dgram(&c, s, 0), SLIM_OK);
	}
	fill_dgram(&c, px0, 0);
	assert_int_equal(send_dgram(&c, top, 0), SLIM_OK);
	fill_dgram(&c, px0, 0);
	assert_int_equal(send_dgram(&c, 2, 0), SLIM_OK);
	test_sink_clear(c.sink);
	begin(&c);
	/* the server has settled nothing yet: losses are reported from its first datagram */
	assert_true(slim_put_frame_end(&c.w,
		&(struct slim_wire_frame_end){ .frame = 9, .report_from = top - 5000 }));
	assert_int_equal(send_dgram(&c, 3, 0), SLIM_OK);
	assert_int_equal(c.sink->n, 1);
	open_upstream(&c, 0, &r, ASSOC, 2);
	expect_nack(&r, (struct slim_wire_seq_range[]){ { top - 2, top - 1 }, { 1, 1 } }, 2, 0);
	struct slim_cmd cmd;
	next_cmd(&r, &cmd, SLIM_CMD_ACK);
	assert_int_equal(cmd.ack.highest_seq, 3);
	expect_end(&r);
	assert_int_equal(slim_console_core_stats(c.core)->bad, 0);
	console_close(&c);
}

/*
 * With the smallest MTU, an ACK still fits, and losses that do not fit
 * beside it ask for a repaint instead of being left out.
 */
static void test_ack_small_mtu(void **state)
{
	struct console c;
	console_open(&c, 64, 48, SLIM_MIN_MTU, NULL);
	slim_console_core_hello(c.core, "small", ASSOC);
	const struct slim_rect px0 = { 0, 0, 1, 1 };
	/* 1, 3, ..., 61: 30 gaps */
	const size_t gaps = 30;
	for (uint32_t seq = 1; seq <= 2 * gaps + 1; seq += 2) {
		fill_dgram(&c, px0, 0);
		assert_int_equal(send_dgram(&c, seq, 0), SLIM_OK);
	}
	test_sink_clear(c.sink);
	begin(&c);
	assert_true(slim_put_frame_end(&c.w, &(struct slim_wire_frame_end){ .frame = 1 }));
	const uint32_t seq = 2 * gaps + 2;
	assert_int_equal(send_dgram(&c, seq, 0), SLIM_OK);
	assert_int_equal(c.sink->n, 1);
	assert_true(c.sink->len[0] <= SLIM_MIN_MTU);
	struct slim_reader r;
	open_upstream(&c, 0, &r, ASSOC, 2);
	struct slim_cmd cmd;
	next_cmd(&r, &cmd, SLIM_CMD_NACK);
	/* either every range, or as many as fit and a request to repaint */
	assert_true(cmd.nack.count == gaps || (cmd.nack.flags & SLIM_NACK_REPAINT));
	assert_true(cmd.nack.count > 0);
	for (size_t i = 0; i < cmd.nack.count; i++) {
		struct slim_wire_seq_range range;
		slim_nack_get(&cmd, i, &range);
		assert_int_equal(range.first, 2 + 2 * i);
		assert_int_equal(range.last, 2 + 2 * i);
	}
	next_cmd(&r, &cmd, SLIM_CMD_ACK);
	assert_int_equal(cmd.ack.highest_seq, seq);
	expect_end(&r);
	console_close(&c);
}

static void test_cursor(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 63);
	struct rec_backend *rec = rec_create();
	struct console c;
	console_open(&c, 64, 48, SLIM_DEFAULT_MTU, &rec->base);
	slim_console_core_hello(c.core, "cursor", ASSOC);
	const struct slim_console_cursor *cur = slim_console_core_cursor(c.core);

	/* a 12x10 image in two pieces, in two datagrams */
	struct slim_wire_cursor_image ci = { .serial = 3, .w = 12, .h = 10, .hot_x = 4, .hot_y = 5,
		.row = 0, .rows = 6 };
	begin(&c);
	uint8_t *a = test_put_cursor_image(&c.w, &ci, &rng);
	assert_int_equal(send_dgram(&c, 1, 0), SLIM_OK);
	uint8_t top[12 * 6 * 4];
	memcpy(top, a + sizeof(ci), sizeof(top));
	ci.row = 6;
	ci.rows = 4;
	begin(&c);
	uint8_t *b = test_put_cursor_image(&c.w, &ci, &rng);
	assert_true(slim_put_cursor_pos(&c.w, -3, 47, true));
	assert_int_equal(rec->cursors, 0);
	assert_int_equal(send_dgram(&c, 2, 0), SLIM_OK);
	assert_int_equal(cur->w, 12);
	assert_int_equal(cur->h, 10);
	assert_int_equal(cur->hot_x, 4);
	assert_int_equal(cur->hot_y, 5);
	assert_int_equal(cur->x, -3);
	assert_int_equal(cur->y, 47);
	assert_true(cur->visible);
	assert_non_null(cur->pixels);
	assert_memory_equal(cur->pixels, top, sizeof(top));
	assert_memory_equal(cur->pixels + 12 * 6, b + sizeof(ci), 12 * 4 * 4);
	/* the backend is told about the position */
	assert_int_equal(rec->cursors, 1);
	assert_int_equal(rec->cursor.x, -3);
	assert_true(rec->cursor.visible);
	/* cursor commands do not draw into the picture */
	for (uint32_t i = 0; i < 64 * 48; i++) {
		assert_int_equal(slim_console_core_fb(c.core)->px[i], 0xff000000);
	}

	/* a new image starts clean: rows not sent yet are transparent */
	ci = (struct slim_wire_cursor_image){ .serial = 4, .w = 8, .h = 8, .row = 2, .rows = 1 };
	begin(&c);
	uint8_t *p = test_put_cursor_image(&c.w, &ci, &rng);
	assert_true(slim_put_cursor_pos(&c.w, 10, 10, false));
	assert_int_equal(send_dgram(&c, 3, 0), SLIM_OK);
	assert_int_equal(cur->w, 8);
	assert_false(cur->visible);
	for (uint32_t i = 0; i < 64; i++) {
		uint32_t want = 0;
		if (i / 8 == 2) {
			memcpy(&want, p + sizeof(ci) + 4 * (i % 8), 4);
		}
		assert_int_equal(cur->pixels[i], want);
	}
	assert_int_equal(rec->cursors, 2);

	/* the same serial with another size is another image too */
	ci = (struct slim_wire_cursor_image){ .serial = 4, .w = 8, .h = 9, .row = 8, .rows = 1 };
	begin(&c);
	p = test_put_cursor_image(&c.w, &ci, &rng);
	assert_int_equal(send_dgram(&c, 4, 0), SLIM_OK);
	assert_int_equal(cur->h, 9);
	for (uint32_t i = 0; i < 64; i++) {
		assert_int_equal(cur->pixels[i], 0);
	}
	assert_memory_equal(cur->pixels + 64, p + sizeof(ci), 8 * 4);
	/* while more rows of the same image add to it */
	ci.row = 0;
	begin(&c);
	p = test_put_cursor_image(&c.w, &ci, &rng);
	assert_int_equal(send_dgram(&c, 5, 0), SLIM_OK);
	assert_memory_equal(cur->pixels, p + sizeof(ci), 8 * 4);
	assert_int_not_equal(cur->pixels[64], 0);
	console_close(&c);
}

/* What one upstream datagram of input says: INPUT (optional), then HELD. */
struct input_dgram {
	uint32_t seq;
	bool has_input;
	uint32_t first;
	size_t n;
	struct slim_wire_input ev[64];
	uint32_t next;
	size_t n_held;
	uint16_t held[SLIM_HELD_MAX];
};

static struct input_dgram open_input(struct console *c, size_t i)
{
	struct input_dgram d;
	memset(&d, 0, sizeof(d));
	assert_true(i < c->sink->n && i < TEST_SINK_MAX);
	struct slim_reader r;
	struct slim_dgram hdr;
	assert_int_equal(slim_reader_init(&r, &hdr, c->sink->buf[i], c->sink->len[i], true, 0, 0),
		SLIM_OK);
	assert_int_equal(hdr.assoc, ASSOC);
	d.seq = hdr.seq;
	struct slim_cmd cmd;
	assert_int_equal(slim_reader_next(&r, &cmd), SLIM_OK);
	if (cmd.type == SLIM_CMD_INPUT) {
		d.has_input = true;
		d.first = cmd.input.first;
		d.n = cmd.input.count;
		assert_true(d.n <= 64);
		for (size_t k = 0; k < d.n; k++) {
			slim_input_get(&cmd, k, &d.ev[k]);
		}
		assert_int_equal(slim_reader_next(&r, &cmd), SLIM_OK);
	}
	assert_int_equal(cmd.type, SLIM_CMD_HELD);
	d.next = cmd.held.next;
	d.n_held = cmd.held.count;
	for (size_t k = 0; k < d.n_held; k++) {
		d.held[k] = slim_held_get(&cmd, k);
	}
	expect_end(&r);
	return d;
}

static void send_input_ack(struct console *c, uint32_t seq, uint32_t next)
{
	begin(c);
	assert_true(slim_put_input_ack(&c->w, next));
	assert_int_equal(send_dgram(c, seq, 0), SLIM_OK);
}

static void test_send_input(void **state)
{
	struct console c;
	console_open(&c, 64, 48, SLIM_MIN_MTU, NULL);
	slim_console_core_hello(c.core, "input", ASSOC);
	test_sink_clear(c.sink);
	const struct slim_wire_input ev[2] = {
		{ .kind = SLIM_INPUT_KEY, .code = 28, .value = 1, .time_ms = 5 },
		{ .kind = SLIM_INPUT_MOTION_ABS, .x = 10 * 256, .y = 20 * 256, .time_ms = 6 },
	};
	assert_true(slim_console_core_send_input(c.core, ev, 2));
	assert_false(slim_console_core_send_input(c.core, ev, 0));
	assert_int_equal(c.sink->n, 1);
	struct input_dgram d = open_input(&c, 0);
	assert_int_equal(d.seq, 2); /* after HELLO */
	assert_true(d.has_input);
	assert_int_equal(d.first, 1);
	assert_int_equal(d.n, 2);
	assert_int_equal(d.ev[1].kind, SLIM_INPUT_MOTION_ABS);
	assert_int_equal(d.ev[1].x, 10 * 256);
	assert_int_equal(d.ev[1].y, 20 * 256);
	assert_int_equal(d.ev[1].time_ms, 6);
	/* HELD after it: the Enter key is down after events 1 and 2 */
	assert_int_equal(d.next, 3);
	assert_int_equal(d.n_held, 1);
	assert_int_equal(d.held[0], 28);

	/* more than one datagram holds: the oldest that fit go, all are kept */
	struct slim_wire_input many[20];
	memset(many, 0, sizeof(many));
	assert_true(slim_console_core_send_input(c.core, many, 20));
	d = open_input(&c, 1);
	assert_int_equal(d.first, 1);
	assert_int_equal(d.n, (SLIM_MIN_MTU - 24 - 4 - 4 - 12 - 2) / 20);
	assert_int_equal(d.ev[0].code, 28);
	assert_int_equal(d.next, 23);
	assert_int_equal(slim_console_core_stats(c.core)->input.sent, 10);
	console_close(&c);
}

/* INPUT_ACK drops what it covers, alone in a datagram or ahead of pixels. */
static void test_input_ack(void **state)
{
	struct console c;
	console_open(&c, 64, 48, SLIM_DEFAULT_MTU, NULL);
	slim_console_core_hello(c.core, "acks", ASSOC);
	test_sink_clear(c.sink);
	const struct slim_wire_input keys[4] = {
		{ .kind = SLIM_INPUT_KEY, .code = 42, .value = 1 },
		{ .kind = SLIM_INPUT_KEY, .code = 30, .value = 1 },
		{ .kind = SLIM_INPUT_KEY, .code = 30, .value = 0 },
		{ .kind = SLIM_INPUT_KEY, .code = 42, .value = 0 },
	};
	assert_true(slim_console_core_send_input(c.core, keys, 2));
	const struct slim_console_stats *st = slim_console_core_stats(c.core);

	/* alone: applied, no frame, nothing sent back */
	send_input_ack(&c, 1, 2);
	assert_int_equal(st->input.acked, 1);
	assert_int_equal(st->frames, 0);
	assert_int_equal(c.sink->n, 1);
	uint64_t after_ack = slim_now_us();
	while (slim_now_us() == after_ack) {
	}

	/* the next INPUT carries only what is not acknowledged */
	assert_true(slim_console_core_send_input(c.core, keys + 2, 1));
	struct input_dgram d = open_input(&c, 1);
	assert_int_equal(d.first, 2);
	assert_int_equal(d.n, 2);
	assert_int_equal(d.ev[0].code, 30);
	assert_int_equal(d.ev[0].value, 1);
	assert_int_equal(d.next, 4);
	assert_int_equal(d.n_held, 1);
	assert_int_equal(d.held[0], 42);

	/* ahead of pixels and a frame end, as the encoder sends it */
	begin(&c);
	assert_true(slim_put_input_ack(&c.w, 4));
	assert_true(slim_put_fill(&c.w, (struct slim_rect){ 0, 0, 8, 8 }, 0x00abcdef));
	struct slim_wire_frame_end fe = { .frame = 1, .report_from = 1 };
	assert_true(slim_put_frame_end(&c.w, &fe));
	assert_int_equal(send_dgram(&c, 2, 77), SLIM_OK);
	assert_int_equal(st->input.acked, 3);
	assert_int_equal(*slim_fb_row(slim_console_core_fb(c.core), 7, 7), 0xffabcdef);
	assert_int_equal(headless(&c)->frames, 1);
	/* the frame began with this datagram, not with the acknowledgement alone */
	assert_int_equal(c.sink->n, 3);
	struct slim_reader r;
	open_upstream(&c, 2, &r, ASSOC, 1);
	struct slim_cmd cmd;
	next_cmd(&r, &cmd, SLIM_CMD_ACK);
	assert_true(cmd.ack.received_us > after_ack);
	assert_int_equal(cmd.ack.highest_seq, 2);

	/* all acknowledged: no retransmission, only the held keys' keepalive */
	assert_int_equal(slim_console_core_timeout_ms(c.core, slim_now_us()) > 200, true);
	slim_console_core_tick(c.core, slim_now_us() + 200000);
	assert_int_equal(c.sink->n, 3);
	/* an acknowledgement in an old datagram is not applied; nor is one of the future */
	assert_true(slim_console_core_send_input(c.core, keys + 3, 1));
	send_input_ack(&c, 1, 5);
	assert_int_equal(st->duplicates, 1);
	assert_int_equal(st->input.acked, 3);
	send_input_ack(&c, 3, 6);
	assert_int_equal(st->input.acked, 3);
	send_input_ack(&c, 4, 5);
	assert_int_equal(st->input.acked, 4);
	assert_int_equal(st->input.retransmits, 0);
	assert_int_equal(st->input.sent, 4);
	assert_int_equal(slim_console_core_timeout_ms(c.core, slim_now_us()), -1);
	console_close(&c);
}

/* The core's timers: retransmission and the held keys' keepalive. */
static void test_input_timers(void **state)
{
	struct console c;
	console_open(&c, 64, 48, SLIM_DEFAULT_MTU, NULL);
	/* no association, no timers */
	assert_int_equal(slim_console_core_timeout_ms(c.core, slim_now_us()), -1);
	slim_console_core_hello(c.core, "timers", ASSOC);
	test_sink_clear(c.sink);
	const struct slim_wire_input down = { .kind = SLIM_INPUT_BUTTON, .code = 0x110, .value = 1 };
	const struct slim_wire_input up = { .kind = SLIM_INPUT_BUTTON, .code = 0x110, .value = 0 };
	assert_true(slim_console_core_send_input(c.core, &down, 1));
	/* sent a moment ago: the first timeout, 100 ms, is due in at most that */
	uint64_t t = slim_now_us();
	int ms = slim_console_core_timeout_ms(c.core, t);
	assert_true(ms >= 99 && ms <= 100);
	slim_console_core_tick(c.core, t + 50000);
	assert_int_equal(c.sink->n, 1);
	/* nothing came back: the same again, with the retransmission counted */
	slim_console_core_tick(c.core, t + 101000);
	assert_int_equal(c.sink->n, 2);
	struct input_dgram d = open_input(&c, 1);
	assert_int_equal(d.first, 1);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.next, 2);
	assert_int_equal(d.held[0], 0x110);
	assert_int_equal(slim_console_core_stats(c.core)->input.retransmits, 1);
	assert_int_equal(slim_console_core_stats(c.core)->input.sent, 1);
	send_input_ack(&c, 1, 2);
	/* held, acknowledged, and silent for 250 ms: HELD alone */
	uint64_t quiet = slim_now_us() + 250000;
	slim_console_core_tick(c.core, quiet);
	assert_int_equal(c.sink->n, 3);
	d = open_input(&c, 2);
	assert_false(d.has_input);
	assert_int_equal(d.next, 2);
	assert_int_equal(d.n_held, 1);

	/* a new association: numbers from 1, the button still down */
	slim_console_core_hello(c.core, "timers", ASSOC);
	assert_int_equal(c.sink->n, 4);
	slim_console_core_tick(c.core, quiet + 1000000);
	assert_int_equal(c.sink->n, 5);
	d = open_input(&c, 4);
	assert_false(d.has_input);
	assert_int_equal(d.next, 1);
	assert_int_equal(d.held[0], 0x110);
	/* released while no server listens: only the held set follows */
	slim_console_core_track_input(c.core, &up, 1);
	assert_int_equal(c.sink->n, 5);
	slim_console_core_tick(c.core, quiet + 5000000);
	assert_int_equal(c.sink->n, 5);
	assert_int_equal(slim_console_core_timeout_ms(c.core, slim_now_us()), -1);
	console_close(&c);
}

/* What the core told the program around it. */
struct event_log {
	int refused, presented;
	uint16_t reason;
	char text[SLIM_REFUSE_TEXT_MAX + 1];
	uint32_t frame;
	uint64_t applied_us;
};

static void log_refused(void *data, uint16_t reason, const char *text, size_t len)
{
	struct event_log *log = data;
	assert_true(len <= SLIM_REFUSE_TEXT_MAX);
	log->refused++;
	log->reason = reason;
	memcpy(log->text, text, len);
	log->text[len] = '\0';
}

static void log_presented(void *data, uint32_t frame, uint64_t applied_us)
{
	struct event_log *log = data;
	log->presented++;
	log->frame = frame;
	log->applied_us = applied_us;
}

static const struct slim_console_events log_events = {
	.refused = log_refused,
	.presented = log_presented,
};

static void refuse_dgram(struct console *c, uint32_t assoc, uint16_t reason, const char *text)
{
	slim_writer_init(&c->w, c->buf, DGRAM_CAP, assoc, false);
	assert_true(slim_put_refuse(&c->w, reason, text));
}

/*
 * A refusal may come from a server that restarted and numbers from 1 again:
 * it is heard whatever its sequence number, and changes no pixel.
 */
static void test_refuse(void **state)
{
	struct console c;
	console_open(&c, 64, 48, SLIM_DEFAULT_MTU, NULL);
	struct event_log log = { 0 };
	slim_console_core_set_events(c.core, &log_events, &log);
	slim_console_core_hello(c.core, "refuse", ASSOC);
	fill_dgram(&c, (struct slim_rect){ 0, 0, 64, 48 }, 0x123456);
	assert_int_equal(send_dgram(&c, 1, 0), SLIM_OK);
	fill_dgram(&c, (struct slim_rect){ 5, 5, 10, 10 }, 0xabcdef);
	assert_true(slim_put_frame_end(&c.w, &(struct slim_wire_frame_end){ .frame = 9 }));
	assert_int_equal(send_dgram(&c, 10000, 0), SLIM_OK);
	assert_int_equal(log.presented, 1);
	assert_int_equal(log.frame, 9);
	assert_true(log.applied_us > 0);
	struct slim_fb before = test_fb_clone(slim_console_core_fb(c.core));
	const struct slim_console_stats *st = slim_console_core_stats(c.core);
	struct slim_console_stats st_before = *st;
	test_sink_clear(c.sink);

	/* far behind the window (and 0, which no datagram carries) */
	refuse_dgram(&c, ASSOC, SLIM_REFUSE_BUSY, "desk 7 has this session");
	assert_int_equal(send_dgram(&c, 1, 0), SLIM_OK);
	assert_int_equal(log.refused, 1);
	assert_int_equal(log.reason, SLIM_REFUSE_BUSY);
	assert_string_equal(log.text, "desk 7 has this session");
	refuse_dgram(&c, ASSOC, SLIM_REFUSE_UNKNOWN, "");
	assert_int_equal(send_dgram(&c, 0, 0), SLIM_OK);
	assert_int_equal(log.refused, 2);
	assert_int_equal(log.reason, SLIM_REFUSE_UNKNOWN);
	assert_string_equal(log.text, "");
	test_fb_assert_equal(slim_console_core_fb(c.core), &before);
	assert_int_equal(st->applied, st_before.applied);
	assert_int_equal(st->late, st_before.late);
	assert_int_equal(st->bad, 0);
	assert_int_equal(c.sink->n, 0); /* nothing to acknowledge or report lost */

	/* another association's refusal is not ours */
	refuse_dgram(&c, ASSOC + 1, SLIM_REFUSE_UNKNOWN, "who?");
	assert_int_equal(send_dgram(&c, 10001, 0), SLIM_ERR_ASSOC);
	assert_int_equal(log.refused, 2);
	assert_int_equal(st->errors[SLIM_ERR_ASSOC], 1);
	test_fb_assert_equal(slim_console_core_fb(c.core), &before);

	/* the sequence carries on where it was */
	fill_dgram(&c, (struct slim_rect){ 0, 0, 1, 1 }, 0xff);
	assert_int_equal(send_dgram(&c, 10001, 0), SLIM_OK);
	assert_int_equal(*slim_fb_row(slim_console_core_fb(c.core), 0, 0), 0xff0000ff);
	assert_int_equal(st->applied, st_before.applied + 1);
	assert_int_equal(c.sink->n, 0);
	test_fb_destroy(&before);
	console_close(&c);
}

static void test_ping(void **state)
{
	struct console c;
	console_open(&c, 64, 48, SLIM_MIN_MTU, NULL);
	slim_console_core_hello(c.core, "ping", ASSOC);
	test_sink_clear(c.sink);
	slim_console_core_ping(c.core);
	slim_console_core_ping(c.core);
	assert_int_equal(c.sink->n, 2);
	for (size_t i = 0; i < 2; i++) {
		struct slim_reader r;
		struct slim_dgram hdr;
		assert_int_equal(slim_reader_init(&r, &hdr, c.sink->buf[i], c.sink->len[i], true, 0, 0),
			SLIM_OK);
		assert_int_equal(hdr.assoc, ASSOC);
		assert_int_equal(hdr.seq, 2 + i); /* after HELLO, one more each */
		assert_int_equal(c.sink->len[i], 24 + 4);
		struct slim_cmd cmd;
		next_cmd(&r, &cmd, SLIM_CMD_PING);
		expect_end(&r);
	}
	console_close(&c);
}

static void test_resize(void **state)
{
	struct rec_backend *rec = rec_create();
	struct console c;
	console_open(&c, 64, 48, SLIM_DEFAULT_MTU, &rec->base);
	slim_console_core_hello(c.core, "resize", ASSOC);
	fill_dgram(&c, (struct slim_rect){ 0, 0, 64, 48 }, 0xffffff);
	assert_int_equal(send_dgram(&c, 1, 0), SLIM_OK);
	assert_false(slim_console_core_resize(c.core, 0, 10));
	assert_false(slim_console_core_resize(c.core, 10, SLIM_MAX_DIM + 1));
	assert_int_equal(slim_console_core_fb(c.core)->width, 64);
	assert_true(slim_console_core_resize(c.core, 100, 20));
	assert_int_equal(rec->resizes, 1);
	assert_int_equal(rec->width, 100);
	assert_int_equal(rec->height, 20);
	const struct slim_fb *fb = slim_console_core_fb(c.core);
	assert_int_equal(fb->width, 100);
	assert_int_equal(fb->height, 20);
	for (uint32_t y = 0; y < 20; y++) {
		for (uint32_t x = 0; x < 100; x++) {
			assert_int_equal(*slim_fb_row(fb, x, y), 0xff000000);
		}
	}
	/* rectangles are checked against the new size */
	fill_dgram(&c, (struct slim_rect){ 0, 0, 64, 48 }, 0xffffff);
	assert_int_equal(send_dgram(&c, 2, 0), SLIM_ERR_RECT);
	fill_dgram(&c, (struct slim_rect){ 0, 0, 100, 20 }, 0xffffff);
	assert_int_equal(send_dgram(&c, 2, 0), SLIM_OK);
	assert_int_equal(*slim_fb_row(fb, 99, 19), 0xffffffff);
	console_close(&c);
}

static void test_png(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 64);
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/slim-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	char path[4200];
	snprintf(path, sizeof(path), "%s/shot.png", dir);

	struct slim_fb fb = test_fb_create(37, 21, &rng);
	assert_true(slim_png_write(path, &fb));

	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	uint8_t sig[8];
	assert_int_equal(fread(sig, 1, 8, f), 8);
	static const uint8_t png_sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	assert_memory_equal(sig, png_sig, 8);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size > 8);

	/* read it back: 8-bit RGB, the pixels' R, G, B */
	rewind(f);
	png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png_create_info_struct(png);
	assert_non_null(png);
	assert_non_null(info);
	if (setjmp(png_jmpbuf(png))) {
		fail_msg("libpng could not read the file");
	}
	png_init_io(png, f);
	png_read_info(png, info);
	assert_int_equal(png_get_image_width(png, info), 37);
	assert_int_equal(png_get_image_height(png, info), 21);
	assert_int_equal(png_get_bit_depth(png, info), 8);
	assert_int_equal(png_get_color_type(png, info), PNG_COLOR_TYPE_RGB);
	uint8_t row[37 * 3];
	for (uint32_t y = 0; y < 21; y++) {
		png_read_row(png, row, NULL);
		for (uint32_t x = 0; x < 37; x++) {
			uint32_t px = *slim_fb_row(&fb, x, y);
			assert_int_equal(row[3 * x], (px >> 16) & 0xff);
			assert_int_equal(row[3 * x + 1], (px >> 8) & 0xff);
			assert_int_equal(row[3 * x + 2], px & 0xff);
		}
	}
	png_destroy_read_struct(&png, &info, NULL);
	fclose(f);

	/* where it cannot be written */
	char bad[4300];
	snprintf(bad, sizeof(bad), "%s/missing/shot.png", dir);
	assert_false(slim_png_write(bad, &fb));

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	test_fb_destroy(&fb);
}

int main(void)
{
	test_quiet_logs();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_bounds),
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_frame_end_ack),
		cmocka_unit_test(test_ack_delay),
		cmocka_unit_test(test_damage),
		cmocka_unit_test(test_against_model),
		cmocka_unit_test(test_loss),
		cmocka_unit_test(test_seq_wrap),
		cmocka_unit_test(test_ack_small_mtu),
		cmocka_unit_test(test_cursor),
		cmocka_unit_test(test_send_input),
		cmocka_unit_test(test_input_ack),
		cmocka_unit_test(test_input_timers),
		cmocka_unit_test(test_refuse),
		cmocka_unit_test(test_ping),
		cmocka_unit_test(test_resize),
		cmocka_unit_test(test_png),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
