/*
 * The console's input queue on its own: what each datagram carries, what
 * acknowledgements drop, when events go again, and the keys held.
 */
#include <stdlib.h>
#include <string.h>
#include "input-queue.h"
#include "test-util.h"

#define ASSOC 0x1b9u
#define MS 1000ull
#define T0 (1000 * MS) /* an arbitrary start on the caller's clock */

struct sent {
	bool has_input;
	uint32_t first;
	size_t n;
	struct slim_wire_input ev[SLIM_INPUT_QUEUE_MAX];
	bool has_held;
	uint32_t next;
	size_t n_held;
	uint16_t held[SLIM_HELD_MAX];
};

struct fixture {
	struct slim_input_queue q;
	struct slim_input_stats stats;
	uint8_t buf[SLIM_MAX_MTU];
	struct slim_writer w;
	uint16_t mtu;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	slim_input_queue_init(&f->q, &f->stats);
	f->mtu = SLIM_DEFAULT_MTU;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

/* Decodes what the queue wrote: INPUT (optional), then HELD, nothing else. */
static struct sent decode(struct fixture *f)
{
	struct sent s;
	memset(&s, 0, sizeof(s));
	size_t len = slim_writer_finish(&f->w, 1, 0);
	assert_true(len <= f->mtu);
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	assert_int_equal(slim_reader_init(&r, &hdr, f->buf, len, true, 0, 0), SLIM_OK);
	assert_int_equal(slim_reader_next(&r, &cmd), SLIM_OK);
	if (cmd.type == SLIM_CMD_INPUT) {
		s.has_input = true;
		s.first = cmd.input.first;
		s.n = cmd.input.count;
		for (size_t i = 0; i < s.n; i++) {
			slim_input_get(&cmd, i, &s.ev[i]);
		}
		assert_int_equal(slim_reader_next(&r, &cmd), SLIM_OK);
	}
	assert_int_equal(cmd.type, SLIM_CMD_HELD);
	s.has_held = true;
	s.next = cmd.held.next;
	s.n_held = cmd.held.count;
	for (size_t i = 0; i < s.n_held; i++) {
		s.held[i] = slim_held_get(&cmd, i);
	}
	assert_int_equal(slim_reader_next(&r, &cmd), SLIM_OK);
	assert_int_equal(cmd.type, 0);
	return s;
}

static void begin(struct fixture *f)
{
	slim_writer_init(&f->w, f->buf, f->mtu, ASSOC, true);
}

/* What the console sends right after queueing input. */
static struct sent write_now(struct fixture *f, uint64_t now)
{
	begin(f);
	assert_true(slim_input_queue_write(&f->q, &f->w, now));
	return decode(f);
}

/* What a tick at `now` sends; `due` says whether it must send anything. */
static struct sent tick(struct fixture *f, uint64_t now, bool due)
{
	begin(f);
	bool sent = slim_input_queue_tick(&f->q, &f->w, now);
	assert_int_equal(sent, due);
	struct sent s;
	memset(&s, 0, sizeof(s));
	return sent ? decode(f) : s;
}

static struct slim_wire_input key(uint16_t code, int32_t value)
{
	return (struct slim_wire_input){ .kind = SLIM_INPUT_KEY, .code = code, .value = value };
}

static void push(struct fixture *f, struct slim_wire_input ev, uint64_t now)
{
	assert_int_equal(slim_input_queue_push(&f->q, &ev, 1, now), 1);
}

static bool holds(const struct sent *s, uint16_t code)
{
	for (size_t i = 0; i < s->n_held; i++) {
		if (s->held[i] == code) {
			return true;
		}
	}
	return false;
}

/* Every INPUT carries everything unacknowledged, oldest first, and HELD follows. */
static void test_cumulative(void **state)
{
	struct fixture *f = *state;
	push(f, key(30, 1), T0);
	struct sent s = write_now(f, T0);
	assert_true(s.has_input);
	assert_int_equal(s.first, 1);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.ev[0].code, 30);
	assert_int_equal(s.next, 2);
	assert_int_equal(s.n_held, 1);
	assert_int_equal(s.held[0], 30);

	/* the first datagram was lost, say: the next carries both */
	push(f, key(30, 0), T0 + 5 * MS);
	s = write_now(f, T0 + 5 * MS);
	assert_int_equal(s.first, 1);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.ev[0].value, 1);
	assert_int_equal(s.ev[1].value, 0);
	assert_int_equal(s.next, 3);
	assert_int_equal(s.n_held, 0);
	/* counted once each, however often they go */
	assert_int_equal(f->stats.sent, 2);
	assert_int_equal(f->stats.retransmits, 0);
	assert_int_equal(slim_input_queue_next(&f->q), 3);
}

/* Acknowledgements drop what they cover; old, repeated and impossible ones nothing. */
static void test_ack_trims(void **state)
{
	struct fixture *f = *state;
	for (uint16_t i = 0; i < 5; i++) {
		push(f, key(16 + i, 1), T0);
	}
	write_now(f, T0);
	slim_input_queue_ack(&f->q, 3, T0 + 2 * MS);
	assert_int_equal(f->stats.acked, 2);
	struct sent s = write_now(f, T0 + 3 * MS);
	assert_int_equal(s.first, 3);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.ev[0].code, 18);
	/* again, and older: nothing changes */
	slim_input_queue_ack(&f->q, 3, T0 + 4 * MS);
	slim_input_queue_ack(&f->q, 2, T0 + 4 * MS);
	slim_input_queue_ack(&f->q, 1, T0 + 4 * MS);
	/* beyond what was ever sent: a confused or lying server, ignored */
	slim_input_queue_ack(&f->q, 7, T0 + 4 * MS);
	slim_input_queue_ack(&f->q, 0x80000003u, T0 + 4 * MS);
	assert_int_equal(f->stats.acked, 2);
	s = write_now(f, T0 + 5 * MS);
	assert_int_equal(s.first, 3);
	assert_int_equal(s.n, 3);
	/* everything: HELD alone goes, the keys still down */
	slim_input_queue_ack(&f->q, 6, T0 + 6 * MS);
	assert_int_equal(f->stats.acked, 5);
	s = write_now(f, T0 + 7 * MS);
	assert_false(s.has_input);
	assert_int_equal(s.next, 6);
	assert_int_equal(s.n_held, 5);
	/* nothing waits for an acknowledgement: no retransmission is due, ever */
	tick(f, T0 + 100 * MS, false);
}

/* Retransmission after the timeout, doubling up to 250 ms; an acknowledgement resets it. */
static void test_rto_backoff(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(slim_input_queue_rto_us(&f->q), 100 * MS);
	assert_int_equal(slim_input_queue_timeout_ms(&f->q, T0), -1);
	push(f, key(30, 1), T0);
	push(f, key(30, 0), T0);
	write_now(f, T0);
	assert_int_equal(slim_input_queue_timeout_ms(&f->q, T0), 100);
	assert_int_equal(slim_input_queue_timeout_ms(&f->q, T0 + 40 * MS + 1), 60);
	tick(f, T0 + 100 * MS - 1, false);
	/* 100 ms, then 200, then 250 (not 400), and 250 from then on */
	const uint64_t gaps[] = { 100, 200, 250, 250, 250 };
	uint64_t t = T0;
	for (size_t i = 0; i < sizeof(gaps) / sizeof(gaps[0]); i++) {
		t += gaps[i] * MS;
		tick(f, t - 1, false);
		struct sent s = tick(f, t, true);
		assert_int_equal(s.first, 1);
		assert_int_equal(s.n, 2);
		assert_int_equal(s.next, 3);
		assert_int_equal(f->stats.retransmits, i + 1);
		assert_true(slim_input_queue_rto_us(&f->q) <= 250 * MS);
	}
	assert_int_equal(slim_input_queue_rto_us(&f->q), 250 * MS);
	assert_int_equal(f->stats.sent, 2);
	/* an acknowledgement of something new undoes the doubling */
	slim_input_queue_ack(&f->q, 2, t + 1 * MS);
	assert_int_equal(slim_input_queue_rto_us(&f->q), 100 * MS);
	/* the event acknowledged went five times: no round trip measured (Karn) */
	assert_false(f->q.have_rtt);
	tick(f, t + 100 * MS, false);
	tick(f, t + 101 * MS, true);
	slim_input_queue_ack(&f->q, 3, t + 102 * MS);
	assert_int_equal(slim_input_queue_timeout_ms(&f->q, t + 102 * MS), -1);
	tick(f, t + 10000 * MS, false);
}

/* The round trip of events sent once sets the timeout: max(30 ms, 2 srtt + 10 ms). */
static void test_rto_measured(void **state)
{
	struct fixture *f = *state;
	uint64_t t = T0;
	/* a fast network: 4 ms, so 18 ms, and 30 ms at the least */
	push(f, key(30, 1), t);
	write_now(f, t);
	slim_input_queue_ack(&f->q, 2, t + 4 * MS);
	assert_true(f->q.have_rtt);
	assert_int_equal(f->q.srtt_us, 4 * MS);
	assert_int_equal(slim_input_queue_rto_us(&f->q), 30 * MS);
	/* a slower one: 1/8 of each new sample */
	t += 1000 * MS;
	push(f, key(30, 0), t);
	write_now(f, t);
	slim_input_queue_ack(&f->q, 3, t + 68 * MS);
	assert_int_equal(f->q.srtt_us, (7 * 4 * MS + 68 * MS) / 8);
	assert_int_equal(slim_input_queue_rto_us(&f->q), 2 * 12 * MS + 10 * MS);
	/* the timer follows it */
	t += 1000 * MS;
	push(f, key(31, 1), t);
	write_now(f, t);
	tick(f, t + 34 * MS - 1, false);
	tick(f, t + 34 * MS, true);
	/* then doubles: 68 ms */
	tick(f, t + 34 * MS + 68 * MS - 1, false);
	tick(f, t + 34 * MS + 68 * MS, true);
	/* an event that went again measures nothing */
	uint64_t srtt = f->q.srtt_us;
	slim_input_queue_ack(&f->q, 4, t + 200 * MS);
	assert_int_equal(f->q.srtt_us, srtt);
	/* a very slow network: never more than 250 ms */
	slim_input_queue_reset(&f->q, 1);
	push(f, key(31, 0), t);
	write_now(f, t);
	slim_input_queue_ack(&f->q, 2, t + 400 * MS);
	assert_int_equal(slim_input_queue_rto_us(&f->q), 250 * MS);
}

/* Keys and buttons down are held; up releases; repeats and other events change nothing. */
static void test_held(void **state)
{
	struct fixture *f = *state;
	const struct slim_wire_input ev[] = {
		key(42, 1),                                                  /* shift */
		key(30, 1),
		key(30, 2),                                                  /* a repeat */
		key(42, 1),                                                  /* down again */
		{ .kind = SLIM_INPUT_BUTTON, .code = 0x110, .value = 1 },
		{ .kind = SLIM_INPUT_MOTION_REL, .code = 30, .x = 5 },
		{ .kind = SLIM_INPUT_FRAME },
		key(30, 0),
		key(57, 0),                                                  /* never down */
	};
	assert_int_equal(slim_input_queue_push(&f->q, ev, 9, T0), 9);
	struct sent s = write_now(f, T0);
	assert_int_equal(s.n, 9);
	assert_int_equal(s.next, 10);
	assert_int_equal(s.n_held, 2);
	assert_true(holds(&s, 42));
	assert_true(holds(&s, 0x110));
	assert_false(holds(&s, 30));
	const struct slim_wire_input up[] = {
		{ .kind = SLIM_INPUT_BUTTON, .code = 0x110, .value = 0 },
		key(42, 0),
	};
	slim_input_queue_push(&f->q, up, 2, T0);
	s = write_now(f, T0);
	assert_int_equal(s.n_held, 0);

	/* tracked only (not attached): the held set follows, nothing is queued */
	slim_input_queue_track(&f->q, ev, 2);
	s = write_now(f, T0);
	assert_int_equal(s.n, 11);
	assert_int_equal(s.n_held, 2);
	slim_input_queue_track(&f->q, ev + 7, 1);
	s = write_now(f, T0);
	assert_int_equal(s.n_held, 1);
	assert_int_equal(s.held[0], 42);

	/* 64 at most: the 65th goes unreported */
	slim_input_queue_reset(&f->q, 1);
	for (uint16_t code = 100; code < 100 + SLIM_HELD_MAX + 3; code++) {
		slim_input_queue_track(&f->q, &(struct slim_wire_input){ .kind = SLIM_INPUT_KEY,
			.code = code, .value = 1 }, 1);
	}
	s = write_now(f, T0);
	assert_int_equal(s.n_held, SLIM_HELD_MAX);
	assert_true(holds(&s, 42));
	assert_false(holds(&s, 100 + SLIM_HELD_MAX));
}

/* Something held and nothing sent for 250 ms: HELD alone. */
static void test_keepalive(void **state)
{
	struct fixture *f = *state;
	/* nothing held: silence is fine */
	slim_input_queue_note_send(&f->q, T0);
	tick(f, T0 + 10000 * MS, false);
	assert_int_equal(slim_input_queue_timeout_ms(&f->q, T0), -1);

	push(f, key(29, 1), T0);
	write_now(f, T0);
	slim_input_queue_ack(&f->q, 2, T0 + 1 * MS);
	assert_int_equal(slim_input_queue_timeout_ms(&f->q, T0 + 1 * MS), 249);
	tick(f, T0 + 250 * MS - 1, false);
	struct sent s = tick(f, T0 + 250 * MS, true);
	assert_false(s.has_input);
	assert_int_equal(s.next, 2);
	assert_int_equal(s.n_held, 1);
	assert_int_equal(s.held[0], 29);
	/* any datagram of the console puts the next one off */
	slim_input_queue_note_send(&f->q, T0 + 400 * MS);
	tick(f, T0 + 650 * MS - 1, false);
	tick(f, T0 + 650 * MS, true);
	assert_int_equal(slim_input_queue_timeout_ms(&f->q, T0 + 650 * MS), 250);
	/* released: no more keepalives */
	push(f, key(29, 0), T0 + 700 * MS);
	write_now(f, T0 + 700 * MS);
	slim_input_queue_ack(&f->q, 3, T0 + 701 * MS);
	tick(f, T0 + 5000 * MS, false);
	assert_int_equal(f->stats.retransmits, 0);
}

/* A full queue drops new events, but the held set stays true. */
static void test_full(void **state)
{
	struct fixture *f = *state;
	test_quiet_logs();
	unsigned long logs = test_log_messages;
	struct slim_wire_input ev[SLIM_INPUT_QUEUE_MAX];
	for (size_t i = 0; i < SLIM_INPUT_QUEUE_MAX; i++) {
		ev[i] = (struct slim_wire_input){ .kind = SLIM_INPUT_MOTION_REL, .x = (int32_t)i };
	}
	assert_int_equal(slim_input_queue_push(&f->q, ev, SLIM_INPUT_QUEUE_MAX - 1, T0),
		SLIM_INPUT_QUEUE_MAX - 1);
	/* the last place, and two that find none: a press and a release that do not go */
	const struct slim_wire_input keys[] = { key(30, 1), key(31, 1), key(30, 0) };
	assert_int_equal(slim_input_queue_push(&f->q, keys, 3, T0), 1);
	assert_int_equal(f->stats.dropped, 2);
	assert_int_equal(slim_input_queue_push(&f->q, keys + 2, 1, T0), 0);
	assert_int_equal(f->stats.dropped, 3);
	/* said once, not for every event */
	assert_int_equal(test_log_messages, logs + 1);
	struct sent s = write_now(f, T0);
	/* the oldest that fit, and a HELD for all: 30 is up again, 31 down */
	assert_int_equal(s.first, 1);
	assert_int_equal(s.n, (SLIM_DEFAULT_MTU - 24 - 4 - 4 - 4 - 8 - 2) / 20);
	assert_int_equal(s.ev[0].x, 0);
	assert_int_equal(s.next, 1 + SLIM_INPUT_QUEUE_MAX);
	assert_int_equal(s.n_held, 1);
	assert_int_equal(s.held[0], 31);
	/* room again after an acknowledgement */
	slim_input_queue_ack(&f->q, 1 + (uint32_t)s.n, T0 + 1 * MS);
	assert_int_equal(slim_input_queue_push(&f->q, keys, 1, T0 + 2 * MS), 1);
	assert_int_equal(slim_input_queue_next(&f->q), 2 + SLIM_INPUT_QUEUE_MAX);
}

/* More than a datagram holds: the rest goes once acknowledgements make room. */
static void test_mtu(void **state)
{
	struct fixture *f = *state;
	f->mtu = SLIM_MIN_MTU;
	/* 64 held: 12 + 128 bytes of HELD leave room for 4 events in 256 */
	for (uint16_t code = 0; code < SLIM_HELD_MAX; code++) {
		push(f, key((uint16_t)(200 + code), 1), T0);
	}
	struct sent s = write_now(f, T0);
	assert_int_equal(s.first, 1);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.n_held, SLIM_HELD_MAX);
	assert_int_equal(s.next, 65);
	assert_int_equal(f->stats.sent, 4);
	/* the timer covers what went; the rest waits for room */
	assert_int_equal(slim_input_queue_timeout_ms(&f->q, T0), 100);
	tick(f, T0 + 1 * MS, false);
	slim_input_queue_ack(&f->q, 5, T0 + 2 * MS);
	assert_int_equal(slim_input_queue_timeout_ms(&f->q, T0 + 2 * MS), 0);
	s = tick(f, T0 + 2 * MS, true);
	assert_int_equal(s.first, 5);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.ev[0].code, 204);
	assert_int_equal(f->stats.sent, 8);
	assert_int_equal(f->stats.retransmits, 0);
	tick(f, T0 + 3 * MS, false);
}

/* A new association numbers from 1 again and forgets the queue, not the keys. */
static void test_reset(void **state)
{
	struct fixture *f = *state;
	push(f, key(42, 1), T0);
	push(f, key(30, 1), T0);
	push(f, key(30, 0), T0);
	write_now(f, T0);
	slim_input_queue_reset(&f->q, 1);
	assert_int_equal(slim_input_queue_next(&f->q), 1);
	/* nothing to send again */
	tick(f, T0 + 100 * MS, false);
	/* the old association's acknowledgement means nothing now */
	slim_input_queue_ack(&f->q, 4, T0 + 101 * MS);
	assert_int_equal(f->stats.acked, 0);
	struct sent s = write_now(f, T0 + 102 * MS);
	assert_false(s.has_input);
	assert_int_equal(s.next, 1);
	assert_int_equal(s.n_held, 1);
	assert_int_equal(s.held[0], 42);
	push(f, key(42, 0), T0 + 103 * MS);
	s = write_now(f, T0 + 103 * MS);
	assert_int_equal(s.first, 1);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.next, 2);
	assert_int_equal(s.n_held, 0);
}

/* Numbers wrap modulo 2^32, and 0 is a number like any other. */
static void test_wrap(void **state)
{
	struct fixture *f = *state;
	slim_input_queue_reset(&f->q, 0xfffffffeu);
	for (uint16_t i = 0; i < 4; i++) {
		push(f, key(16 + i, 1), T0);
	}
	struct sent s = write_now(f, T0);
	assert_int_equal(s.first, 0xfffffffeu);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.next, 2);
	/* an acknowledgement from before the wrap is old */
	slim_input_queue_ack(&f->q, 0xfffffffdu, T0 + 1 * MS);
	assert_int_equal(f->stats.acked, 0);
	/* one across the wrap drops three: fffffffe, ffffffff and 0 */
	slim_input_queue_ack(&f->q, 1, T0 + 1 * MS);
	assert_int_equal(f->stats.acked, 3);
	s = write_now(f, T0 + 2 * MS);
	assert_int_equal(s.first, 1);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.ev[0].code, 19);
	slim_input_queue_ack(&f->q, 0xffffffffu, T0 + 3 * MS);
	assert_int_equal(f->stats.acked, 3);
	slim_input_queue_ack(&f->q, 2, T0 + 3 * MS);
	assert_int_equal(f->stats.acked, 4);
	assert_int_equal(slim_input_queue_timeout_ms(&f->q, T0 + 3 * MS), 249);
}

/* The ring wraps too: events stay in order across its end. */
static void test_ring(void **state)
{
	struct fixture *f = *state;
	uint32_t next = 1;
	int32_t value = 0;
	for (int round = 0; round < 7; round++) {
		for (int i = 0; i < 100; i++) {
			struct slim_wire_input ev = { .kind = SLIM_INPUT_MOTION_REL, .x = value++ };
			push(f, ev, T0);
		}
		struct sent s = write_now(f, T0);
		assert_int_equal(s.first, next);
		for (size_t i = 1; i < s.n; i++) {
			assert_int_equal(s.ev[i].x, s.ev[i - 1].x + 1);
		}
		assert_int_equal(s.ev[0].x, (int32_t)(next - 1));
		next += (uint32_t)s.n;
		slim_input_queue_ack(&f->q, next, T0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cumulative, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ack_trims, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rto_backoff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rto_measured, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keepalive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mtu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ring, setup, teardown),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
