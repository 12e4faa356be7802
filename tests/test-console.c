/*
 * The console core end to end, its association: datagrams in, what it
 * answers upstream (acknowledgements, NACKs, refusals, pings) and presented
 * frames out. The picture is in test-console-picture.c, input in
 * test-console-input.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "console-fixture.h"
#include "slim-clock.h"

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
	rec->base.impl->destroy(&rec->base);
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
	assert_int_equal(cmd.hello.version, SLIM_HELLO_VERSION);
	assert_int_equal(cmd.hello.width, 800);
	assert_int_equal(cmd.hello.height, 600);
	assert_int_equal(cmd.hello.mtu, 1200);
	assert_int_equal(cmd.hello.caps,
		SLIM_CAP_LZ4 | SLIM_CAP_RGB888 | SLIM_CAP_CSCS | SLIM_CAP_CURSOR |
		SLIM_CAP_PALETTE | SLIM_CAP_ZSTD | SLIM_CAP_CACHE | SLIM_CAP_HISTORY |
		SLIM_CAP_HEADS);
	/* one head, the screen's: a console with one monitor */
	assert_int_equal(cmd.n_heads, 1);
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

int main(void)
{
	test_quiet_logs();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_bounds),
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_frame_end_ack),
		cmocka_unit_test(test_ack_delay),
		cmocka_unit_test(test_loss),
		cmocka_unit_test(test_seq_wrap),
		cmocka_unit_test(test_ack_small_mtu),
		cmocka_unit_test(test_refuse),
		cmocka_unit_test(test_ping),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
