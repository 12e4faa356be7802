/*
 * The console core end to end, input: what it sends upstream, how the
 * session's INPUT_ACKs retire it, and its timers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "console-fixture.h"
#include "slim-clock.h"

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

int main(void)
{
	test_quiet_logs();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_input),
		cmocka_unit_test(test_input_ack),
		cmocka_unit_test(test_input_timers),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
