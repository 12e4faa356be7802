/*
 * The server's rule for console input, without a compositor: each event
 * once and in order, duplicates skipped, a gap stops, HELD releases what
 * the console no longer holds and never presses anything.
 */
#include <stdlib.h>
#include <string.h>
#include "input-seq.h"
#include "test-util.h"

#define MAX_APPLIED 256

/* What reached the session, in order. */
struct session {
	struct slim_wire_input ev[MAX_APPLIED];
	size_t n;
};

static void apply(void *data, const struct slim_wire_input *ev)
{
	struct session *s = data;
	assert_true(s->n < MAX_APPLIED);
	s->ev[s->n++] = *ev;
}

/* A decoded command; its pointers point into `buf`. */
struct command {
	uint8_t buf[SLIM_MAX_MTU];
	struct slim_cmd cmd;
};

static void decode(struct command *c, struct slim_writer *w)
{
	size_t len = slim_writer_finish(w, 1, 0);
	struct slim_reader r;
	struct slim_dgram hdr;
	assert_int_equal(slim_reader_init(&r, &hdr, c->buf, len, true, 0, 0), SLIM_OK);
	assert_int_equal(slim_reader_next(&r, &c->cmd), SLIM_OK);
}

static struct command *input(uint32_t first, const struct slim_wire_input *ev, size_t n)
{
	struct command *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	struct slim_writer w;
	slim_writer_init(&w, c->buf, sizeof(c->buf), 1, true);
	assert_true(slim_put_input(&w, first, ev, n));
	decode(c, &w);
	return c;
}

static struct command *held(uint32_t next, const uint16_t *codes, size_t n)
{
	struct command *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	struct slim_writer w;
	slim_writer_init(&w, c->buf, sizeof(c->buf), 1, true);
	assert_true(slim_put_held(&w, next, codes, n));
	decode(c, &w);
	return c;
}

/* Applies an INPUT; returns how many events were new. */
static size_t feed(struct slim_input_seq *seq, struct session *s, uint32_t first,
		const struct slim_wire_input *ev, size_t n)
{
	struct command *c = input(first, ev, n);
	size_t applied = slim_input_seq_input(seq, &c->cmd, apply, s);
	free(c);
	return applied;
}

static size_t feed_held(struct slim_input_seq *seq, struct session *s, uint32_t next,
		const uint16_t *codes, size_t n)
{
	struct command *c = held(next, codes, n);
	size_t released = slim_input_seq_held(seq, &c->cmd, apply, s);
	free(c);
	return released;
}

static struct slim_wire_input key(uint16_t code, int32_t value)
{
	return (struct slim_wire_input){ .kind = SLIM_INPUT_KEY, .code = code, .value = value };
}

static struct slim_wire_input button(uint16_t code, int32_t value)
{
	return (struct slim_wire_input){ .kind = SLIM_INPUT_BUTTON, .code = code, .value = value };
}

static void assert_event(const struct session *s, size_t i, uint8_t kind, uint16_t code,
		int32_t value)
{
	assert_true(i < s->n);
	assert_int_equal(s->ev[i].kind, kind);
	assert_int_equal(s->ev[i].code, code);
	assert_int_equal(s->ev[i].value, value);
}

/* The console sends everything unacknowledged again: each event reaches the session once. */
static void test_exactly_once(void **state)
{
	struct slim_input_seq seq;
	struct session s = { .n = 0 };
	slim_input_seq_reset(&seq, 1);
	const struct slim_wire_input ev[] = {
		key(42, 1), key(30, 1), key(30, 0), key(42, 0),
		{ .kind = SLIM_INPUT_MOTION_REL, .x = 7 }, { .kind = SLIM_INPUT_FRAME },
	};
	assert_int_equal(feed(&seq, &s, 1, ev, 2), 2);
	assert_int_equal(slim_input_seq_next(&seq), 3);
	/* the same again (its acknowledgement was lost), then with more behind it */
	assert_int_equal(feed(&seq, &s, 1, ev, 2), 0);
	assert_int_equal(feed(&seq, &s, 1, ev, 4), 2);
	assert_int_equal(feed(&seq, &s, 2, ev + 1, 5), 2);
	assert_int_equal(feed(&seq, &s, 1, ev, 6), 0);
	assert_int_equal(slim_input_seq_next(&seq), 7);
	assert_int_equal(s.n, 6);
	for (size_t i = 0; i < 6; i++) {
		assert_memory_equal(&s.ev[i], &ev[i], sizeof(ev[i]));
	}
	assert_int_equal(slim_input_seq_held_count(&seq), 0);
}

/* A gap stops the datagram: what follows it waits for the missing events. */
static void test_gap(void **state)
{
	struct slim_input_seq seq;
	struct session s = { .n = 0 };
	slim_input_seq_reset(&seq, 1);
	const struct slim_wire_input ev[] = { key(16, 1), key(16, 0), key(17, 1), key(17, 0) };
	assert_int_equal(feed(&seq, &s, 1, ev, 1), 1);
	/* 2 was lost; 3 and 4 came alone (a console that could send no more) */
	assert_int_equal(feed(&seq, &s, 3, ev + 2, 2), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(slim_input_seq_next(&seq), 2);
	/* far ahead, or half the number space away: nothing either */
	assert_int_equal(feed(&seq, &s, 0x80000001u, ev, 4), 0);
	assert_int_equal(feed(&seq, &s, 0x7fffffffu, ev, 4), 0);
	/* the retransmission brings it, in order */
	assert_int_equal(feed(&seq, &s, 1, ev, 4), 3);
	assert_int_equal(s.n, 4);
	assert_event(&s, 1, SLIM_INPUT_KEY, 16, 0);
	assert_event(&s, 2, SLIM_INPUT_KEY, 17, 1);
	assert_event(&s, 3, SLIM_INPUT_KEY, 17, 0);
	/* HELD while a gap is open says nothing: the console counted events not seen */
	slim_input_seq_reset(&seq, 1);
	s.n = 0;
	feed(&seq, &s, 1, ev, 1);
	assert_int_equal(feed_held(&seq, &s, 5, NULL, 0), 0);
	assert_int_equal(slim_input_seq_held_count(&seq), 1);
	assert_int_equal(s.n, 1);
}

/* A release of what is not held does not reach the session, but takes its number. */
static void test_release_not_held(void **state)
{
	struct slim_input_seq seq;
	struct session s = { .n = 0 };
	slim_input_seq_reset(&seq, 1);
	const struct slim_wire_input ev[] = {
		key(30, 0), button(0x110, 0), key(30, 2), key(31, 1), key(31, 1), key(31, 2),
		key(31, 0), key(31, 0), button(0x110, 1), key(0x110, 0), button(0x110, 0),
	};
	assert_int_equal(feed(&seq, &s, 1, ev, 11), 11);
	assert_int_equal(slim_input_seq_next(&seq), 12);
	/* the repeat passes (the session ignores it), the press twice, the release once */
	assert_int_equal(s.n, 7);
	assert_event(&s, 0, SLIM_INPUT_KEY, 30, 2);
	assert_event(&s, 1, SLIM_INPUT_KEY, 31, 1);
	assert_event(&s, 2, SLIM_INPUT_KEY, 31, 1);
	assert_event(&s, 3, SLIM_INPUT_KEY, 31, 2);
	assert_event(&s, 4, SLIM_INPUT_KEY, 31, 0);
	/* a key and a button with the same code are not the same thing */
	assert_event(&s, 5, SLIM_INPUT_BUTTON, 0x110, 1);
	assert_event(&s, 6, SLIM_INPUT_BUTTON, 0x110, 0);
	assert_int_equal(slim_input_seq_held_count(&seq), 0);
}

/* HELD releases what the console no longer holds, once everything is applied. */
static void test_held_reconcile(void **state)
{
	struct slim_input_seq seq;
	struct session s = { .n = 0 };
	slim_input_seq_reset(&seq, 1);
	/* shift, a and the left button down; the releases of a and the button were lost */
	const struct slim_wire_input ev[] = { key(42, 1), key(30, 1), button(0x110, 1) };
	feed(&seq, &s, 1, ev, 3);
	assert_int_equal(slim_input_seq_held_count(&seq), 3);
	s.n = 0;
	const uint16_t shift[] = { 42 };
	/* from before the last events: it does not speak for them */
	assert_int_equal(feed_held(&seq, &s, 3, NULL, 0), 0);
	/* from beyond them: events are missing (a queue that overflowed drops none of these) */
	assert_int_equal(feed_held(&seq, &s, 6, NULL, 0), 0);
	assert_int_equal(s.n, 0);
	/* up to date: shift stays, a and the button are released */
	assert_int_equal(feed_held(&seq, &s, 4, shift, 1), 2);
	assert_int_equal(s.n, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(s.ev[i].value, 0);
		assert_true((s.ev[i].kind == SLIM_INPUT_KEY && s.ev[i].code == 30) ||
			(s.ev[i].kind == SLIM_INPUT_BUTTON && s.ev[i].code == 0x110));
	}
	assert_true(s.ev[0].code != s.ev[1].code);
	assert_int_equal(slim_input_seq_held_count(&seq), 1);
	/* the same again changes nothing; the number did not move */
	assert_int_equal(feed_held(&seq, &s, 4, shift, 1), 0);
	assert_int_equal(slim_input_seq_next(&seq), 4);
	/* the lost release comes at last: nothing left to release */
	const struct slim_wire_input late[] = { key(30, 0), button(0x110, 0) };
	assert_int_equal(feed(&seq, &s, 4, late, 2), 2);
	assert_int_equal(s.n, 2);
	/* HELD never presses: codes the server does not hold are left alone */
	const uint16_t many[] = { 42, 30, 0x110, 57 };
	assert_int_equal(feed_held(&seq, &s, 6, many, 4), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(slim_input_seq_held_count(&seq), 1);
	/* an empty HELD releases the rest */
	assert_int_equal(feed_held(&seq, &s, 6, NULL, 0), 1);
	assert_event(&s, 2, SLIM_INPUT_KEY, 42, 0);
	assert_int_equal(slim_input_seq_held_count(&seq), 0);
}

/* The console went away: everything it held is released, keys as keys, buttons as buttons. */
static void test_release_all(void **state)
{
	struct slim_input_seq seq;
	struct session s = { .n = 0 };
	slim_input_seq_reset(&seq, 1);
	const struct slim_wire_input ev[] = { key(29, 1), button(0x111, 1), key(56, 1), key(56, 0) };
	feed(&seq, &s, 1, ev, 4);
	s.n = 0;
	assert_int_equal(slim_input_seq_release_all(&seq, apply, &s), 2);
	assert_int_equal(s.n, 2);
	bool key29 = false, button111 = false;
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(s.ev[i].value, 0);
		key29 |= s.ev[i].kind == SLIM_INPUT_KEY && s.ev[i].code == 29;
		button111 |= s.ev[i].kind == SLIM_INPUT_BUTTON && s.ev[i].code == 0x111;
	}
	assert_true(key29 && button111);
	assert_int_equal(slim_input_seq_release_all(&seq, apply, &s), 0);
	assert_int_equal(s.n, 2);
	/* the numbers go on until a new association resets them */
	assert_int_equal(slim_input_seq_next(&seq), 5);
	slim_input_seq_reset(&seq, 1);
	assert_int_equal(slim_input_seq_next(&seq), 1);
}

/* Numbers wrap modulo 2^32; 0 is one of them. */
static void test_wrap(void **state)
{
	struct slim_input_seq seq;
	struct session s = { .n = 0 };
	slim_input_seq_reset(&seq, 0xfffffffeu);
	const struct slim_wire_input ev[] = { key(2, 1), key(2, 0), key(3, 1), key(3, 0) };
	assert_int_equal(feed(&seq, &s, 0xfffffffeu, ev, 3), 3);
	assert_int_equal(slim_input_seq_next(&seq), 1);
	assert_int_equal(feed(&seq, &s, 0xfffffffdu, ev, 4), 0);
	assert_int_equal(feed(&seq, &s, 0xfffffffeu, ev, 4), 1);
	assert_int_equal(slim_input_seq_next(&seq), 2);
	assert_int_equal(s.n, 4);
	assert_event(&s, 3, SLIM_INPUT_KEY, 3, 0);
	assert_int_equal(feed_held(&seq, &s, 2, NULL, 0), 0);
}

/* 64 keys held at most: a press beyond is not applied, so it cannot be stuck. */
static void test_held_max(void **state)
{
	struct slim_input_seq seq;
	struct session s = { .n = 0 };
	slim_input_seq_reset(&seq, 1);
	struct slim_wire_input ev[SLIM_HELD_MAX + 2];
	for (size_t i = 0; i < SLIM_HELD_MAX + 1; i++) {
		ev[i] = key((uint16_t)(100 + i), 1);
	}
	ev[SLIM_HELD_MAX + 1] = key(100 + SLIM_HELD_MAX, 0);
	assert_int_equal(feed(&seq, &s, 1, ev, SLIM_HELD_MAX + 2), SLIM_HELD_MAX + 2);
	assert_int_equal(s.n, SLIM_HELD_MAX);
	assert_int_equal(slim_input_seq_held_count(&seq), SLIM_HELD_MAX);
	assert_int_equal(slim_input_seq_release_all(&seq, apply, &s), SLIM_HELD_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exactly_once),
		cmocka_unit_test(test_gap),
		cmocka_unit_test(test_release_not_held),
		cmocka_unit_test(test_held_reconcile),
		cmocka_unit_test(test_release_all),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_held_max),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
