/*
 * The console's record of applied sequence numbers: what is new, what is a
 * duplicate, what came too late, and which ranges were lost.
 */
#include <string.h>
#include "seq-window.h"
#include "test-util.h"

#define MAX_RANGES 256

struct lost {
	struct slim_wire_seq_range r[MAX_RANGES];
	size_t n;
	bool overflow;
};

/* The ranges reported from `from` on. */
static struct lost get_lost_from(const struct slim_seq_window *w, uint32_t from, size_t max)
{
	struct lost l;
	memset(&l, 0, sizeof(l));
	assert_true(max <= MAX_RANGES);
	l.n = slim_seq_window_lost(w, from, l.r, max, &l.overflow);
	assert_true(l.n <= max);
	/* every range is well formed and never contains 0, which is never sent */
	for (size_t i = 0; i < l.n; i++) {
		assert_true(l.r[i].first <= l.r[i].last);
		assert_true(l.r[i].first != 0);
	}
	return l;
}

/* Everything the window can speak for. */
static struct lost get_lost(const struct slim_seq_window *w, size_t max)
{
	return get_lost_from(w, w->highest - w->span + 1, max);
}

static void assert_range(const struct lost *l, size_t i, uint32_t first, uint32_t last)
{
	assert_true(i < l->n);
	assert_int_equal(l->r[i].first, first);
	assert_int_equal(l->r[i].last, last);
}

/* Checks that `seq` is new and marks it, as the console does. */
static void apply(struct slim_seq_window *w, uint32_t seq)
{
	assert_int_equal(slim_seq_window_check(w, seq), SLIM_SEQ_NEW);
	slim_seq_window_mark(w, seq);
	assert_int_equal(w->highest, seq);
	assert_int_equal(slim_seq_window_check(w, seq), SLIM_SEQ_DUPLICATE);
}

static void test_in_order(void **state)
{
	struct slim_seq_window w;
	slim_seq_window_reset(&w);
	assert_int_equal(w.highest, 0);
	struct lost l = get_lost(&w, 64);
	assert_int_equal(l.n, 0);
	assert_false(l.overflow);
	for (uint32_t s = 1; s <= 10000; s++) {
		apply(&w, s);
		if (s % 997 == 0) {
			l = get_lost(&w, 64);
			assert_int_equal(l.n, 0);
			assert_false(l.overflow);
		}
	}
	l = get_lost(&w, 64);
	assert_int_equal(l.n, 0);
	assert_false(l.overflow);
}

static void test_zero_is_never_new(void **state)
{
	struct slim_seq_window w;
	slim_seq_window_reset(&w);
	assert_int_equal(slim_seq_window_check(&w, 0), SLIM_SEQ_LATE);
	apply(&w, 1);
	assert_int_equal(slim_seq_window_check(&w, 0), SLIM_SEQ_LATE);
	slim_seq_window_reset(&w);
	apply(&w, 0xfffffff0);
	/* 0 comes right after UINT32_MAX, but the server skips it */
	apply(&w, 0xffffffff);
	assert_int_equal(slim_seq_window_check(&w, 0), SLIM_SEQ_LATE);
}

static void test_duplicates(void **state)
{
	struct slim_seq_window w;
	slim_seq_window_reset(&w);
	for (uint32_t s = 1; s <= 10; s++) {
		apply(&w, s);
	}
	for (uint32_t s = 1; s <= 10; s++) {
		assert_int_equal(slim_seq_window_check(&w, s), SLIM_SEQ_DUPLICATE);
	}
	assert_int_equal(slim_seq_window_check(&w, 11), SLIM_SEQ_NEW);
	/* a checked duplicate changes nothing */
	assert_int_equal(w.highest, 10);
}

static void test_late_is_dropped(void **state)
{
	struct slim_seq_window w;
	slim_seq_window_reset(&w);
	apply(&w, 1);
	apply(&w, 3);
	/* 2 was overtaken by 3: it is late and stays lost */
	assert_int_equal(slim_seq_window_check(&w, 2), SLIM_SEQ_LATE);
	assert_int_equal(slim_seq_window_check(&w, 2), SLIM_SEQ_LATE);
	struct lost l = get_lost(&w, 64);
	assert_int_equal(l.n, 1);
	assert_range(&l, 0, 2, 2);
	apply(&w, 4);
	assert_int_equal(slim_seq_window_check(&w, 2), SLIM_SEQ_LATE);
	assert_int_equal(slim_seq_window_check(&w, 3), SLIM_SEQ_DUPLICATE);
	l = get_lost(&w, 64);
	assert_int_equal(l.n, 1);
	assert_range(&l, 0, 2, 2);
}

static void test_gaps(void **state)
{
	struct slim_seq_window w;
	slim_seq_window_reset(&w);
	/* the first datagram seen is 5: 1..4 were lost */
	apply(&w, 5);
	struct lost l = get_lost(&w, 64);
	assert_int_equal(l.n, 1);
	assert_range(&l, 0, 1, 4);
	apply(&w, 6);
	apply(&w, 10);
	apply(&w, 12);
	apply(&w, 13);
	apply(&w, 100);
	l = get_lost(&w, 64);
	assert_false(l.overflow);
	assert_int_equal(l.n, 4);
	assert_range(&l, 0, 1, 4);
	assert_range(&l, 1, 7, 9);
	assert_range(&l, 2, 11, 11);
	assert_range(&l, 3, 14, 99);
	for (uint32_t s = 7; s <= 9; s++) {
		assert_int_equal(slim_seq_window_check(&w, s), SLIM_SEQ_LATE);
	}
	assert_int_equal(slim_seq_window_check(&w, 12), SLIM_SEQ_DUPLICATE);
}

/* Against a plain list of what was applied, on random arrival orders. */
static void test_random_against_model(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 1);
	static bool applied[20000];
	for (int round = 0; round < 20; round++) {
		struct slim_seq_window w;
		slim_seq_window_reset(&w);
		memset(applied, 0, sizeof(applied));
		uint32_t highest = 0;
		for (int i = 0; i < 3000; i++) {
			/* mostly forward, sometimes a repeat or a reordering */
			uint32_t s;
			uint32_t k = test_rand_below(&rng, 10);
			if (k < 6 || highest < 10) {
				s = highest + test_rand_range(&rng, 1, 3);
			} else {
				s = highest - test_rand_below(&rng, 10);
			}
			enum slim_seq_verdict v = slim_seq_window_check(&w, s);
			enum slim_seq_verdict want = s > highest ? SLIM_SEQ_NEW :
				applied[s] ? SLIM_SEQ_DUPLICATE : SLIM_SEQ_LATE;
			assert_int_equal(v, want);
			if (v == SLIM_SEQ_NEW) {
				slim_seq_window_mark(&w, s);
				applied[s] = true;
				highest = s;
			}
		}
		struct lost l = get_lost(&w, MAX_RANGES);
		/* the ranges are exactly the numbers in [lo, highest] not applied */
		uint32_t lo = highest >= SLIM_SEQ_WINDOW ? highest - SLIM_SEQ_WINDOW + 1 : 1;
		size_t i = 0;
		uint32_t s = lo;
		while (s <= highest) {
			if (applied[s]) {
				s++;
				continue;
			}
			uint32_t first = s;
			while (!applied[s]) {
				s++;
			}
			if (i < MAX_RANGES) {
				assert_range(&l, i, first, s - 1);
			}
			i++;
		}
		assert_int_equal(l.n, i < MAX_RANGES ? i : MAX_RANGES);
	}
}

static void test_wrap_around(void **state)
{
	struct slim_seq_window w;
	slim_seq_window_reset(&w);
	const uint32_t top = UINT32_MAX;
	apply(&w, top - 5);
	struct lost l = get_lost(&w, 64);
	/* only the window's reach is reported, not four billion numbers */
	assert_int_equal(l.n, 1);
	assert_range(&l, 0, top - 5 - SLIM_SEQ_WINDOW + 1, top - 6);
	slim_seq_window_reset(&w);
	for (uint32_t s = top - SLIM_SEQ_WINDOW - 10; s != top - 3; s++) {
		apply(&w, s);
	}
	apply(&w, top - 1); /* top - 3, top - 2 lost */
	apply(&w, top);
	assert_int_equal(slim_seq_window_check(&w, top - 2), SLIM_SEQ_LATE);
	/* the server goes from UINT32_MAX to 1 */
	assert_int_equal(slim_seq_window_check(&w, 1), SLIM_SEQ_NEW);
	assert_int_equal(slim_seq_window_check(&w, 2), SLIM_SEQ_NEW);
	apply(&w, 1);
	apply(&w, 2);
	apply(&w, 4); /* 3 lost */
	/* after the wrap, old numbers are still recognised */
	assert_int_equal(slim_seq_window_check(&w, top), SLIM_SEQ_DUPLICATE);
	assert_int_equal(slim_seq_window_check(&w, top - 1), SLIM_SEQ_DUPLICATE);
	assert_int_equal(slim_seq_window_check(&w, top - 2), SLIM_SEQ_LATE);
	assert_int_equal(slim_seq_window_check(&w, 3), SLIM_SEQ_LATE);
	assert_int_equal(slim_seq_window_check(&w, top - SLIM_SEQ_WINDOW), SLIM_SEQ_LATE);
	assert_int_equal(slim_seq_window_check(&w, 5), SLIM_SEQ_NEW);
	/* half the number space ahead is new, behind it is old */
	assert_int_equal(slim_seq_window_check(&w, 0x80000003), SLIM_SEQ_NEW);
	assert_int_equal(slim_seq_window_check(&w, 0x80000010), SLIM_SEQ_LATE);
	/* losses on both sides of the wrap are still reported, and no range wraps */
	l = get_lost(&w, 64);
	assert_false(l.overflow);
	assert_int_equal(l.n, 2);
	assert_range(&l, 0, top - 3, top - 2);
	assert_range(&l, 1, 3, 3);

	/* a gap across the wrap splits at it */
	slim_seq_window_reset(&w);
	for (uint32_t s = top - 10; s != top - 2; s++) {
		apply(&w, s);
	}
	apply(&w, 3); /* top - 2 .. top, and 1, 2 lost */
	l = get_lost(&w, 64);
	assert_int_equal(l.n, 3);
	assert_range(&l, 0, (uint32_t)(4 - SLIM_SEQ_WINDOW), top - 11);
	assert_range(&l, 1, top - 2, top);
	assert_range(&l, 2, 1, 2);
}

static void test_large_jumps(void **state)
{
	struct slim_seq_window w;
	slim_seq_window_reset(&w);
	for (uint32_t s = 1; s <= 100; s++) {
		apply(&w, s);
	}
	/* a jump beyond the window: everything it can speak for is lost */
	apply(&w, 100 + SLIM_SEQ_WINDOW + 500);
	struct lost l = get_lost(&w, 64);
	assert_int_equal(l.n, 1);
	assert_range(&l, 0, 100 + 500 + 1, 100 + SLIM_SEQ_WINDOW + 499);
	/* older than the window: late, never a duplicate */
	assert_int_equal(slim_seq_window_check(&w, 100), SLIM_SEQ_LATE);
	assert_int_equal(slim_seq_window_check(&w, 50), SLIM_SEQ_LATE);
	assert_int_equal(slim_seq_window_check(&w, 601), SLIM_SEQ_LATE);

	/* a jump just inside the window keeps what is still in it */
	slim_seq_window_reset(&w);
	for (uint32_t s = 1; s <= 10; s++) {
		apply(&w, s);
	}
	uint32_t far = 10 + SLIM_SEQ_WINDOW - 5;
	apply(&w, far);
	for (uint32_t s = 1; s <= 10; s++) {
		bool in_window = far - s < SLIM_SEQ_WINDOW;
		assert_int_equal(slim_seq_window_check(&w, s),
			in_window ? SLIM_SEQ_DUPLICATE : SLIM_SEQ_LATE);
	}
	/* numbers sharing a bit with the old ones are not taken for them */
	for (uint32_t s = 11; s < far; s++) {
		assert_int_equal(slim_seq_window_check(&w, s), SLIM_SEQ_LATE);
	}
	l = get_lost(&w, 64);
	assert_int_equal(l.n, 1);
	assert_range(&l, 0, 11, far - 1);

	/* the window slides: numbers fall out of it one by one */
	slim_seq_window_reset(&w);
	for (uint32_t s = 1; s <= 3 * SLIM_SEQ_WINDOW; s += 2) {
		apply(&w, s);
	}
	uint32_t hi = w.highest;
	assert_int_equal(hi % 2, 1);
	assert_int_equal(slim_seq_window_check(&w, hi - SLIM_SEQ_WINDOW + 2), SLIM_SEQ_DUPLICATE);
	assert_int_equal(slim_seq_window_check(&w, hi - SLIM_SEQ_WINDOW), SLIM_SEQ_LATE);
	l = get_lost(&w, MAX_RANGES);
	assert_true(l.overflow);
	assert_int_equal(l.n, MAX_RANGES);
	assert_range(&l, 0, hi - SLIM_SEQ_WINDOW + 1, hi - SLIM_SEQ_WINDOW + 1);
	assert_range(&l, 1, hi - SLIM_SEQ_WINDOW + 3, hi - SLIM_SEQ_WINDOW + 3);
}

static void test_range_overflow(void **state)
{
	struct slim_seq_window w;
	slim_seq_window_reset(&w);
	/* 64 gaps fit exactly */
	for (uint32_t i = 0; i <= 64; i++) {
		apply(&w, 1 + 2 * i);
	}
	struct lost l = get_lost(&w, SLIM_NACK_MAX_RANGES);
	assert_false(l.overflow);
	assert_int_equal(l.n, 64);
	for (size_t i = 0; i < 64; i++) {
		assert_range(&l, i, 2 + 2 * (uint32_t)i, 2 + 2 * (uint32_t)i);
	}
	/* the 65th overflows; the oldest 64 are kept */
	apply(&w, w.highest + 2);
	l = get_lost(&w, SLIM_NACK_MAX_RANGES);
	assert_true(l.overflow);
	assert_int_equal(l.n, 64);
	assert_range(&l, 0, 2, 2);
	assert_range(&l, 63, 128, 128);
	/* a smaller limit overflows sooner */
	l = get_lost(&w, 3);
	assert_true(l.overflow);
	assert_int_equal(l.n, 3);
	l = get_lost(&w, 0);
	assert_true(l.overflow);
	assert_int_equal(l.n, 0);
}

/* What the server has settled (before `from`) is not reported again. */
static void test_report_from(void **state)
{
	struct slim_seq_window w;
	slim_seq_window_reset(&w);
	apply(&w, 1);
	apply(&w, 5);  /* 2..4 lost */
	apply(&w, 10); /* 6..9 lost */
	apply(&w, 12); /* 11 lost */
	struct lost l = get_lost_from(&w, 1, 64);
	assert_int_equal(l.n, 3);
	assert_range(&l, 0, 2, 4);
	assert_range(&l, 1, 6, 9);
	assert_range(&l, 2, 11, 11);
	/* from the middle of a gap: the gap is cut there */
	l = get_lost_from(&w, 8, 64);
	assert_int_equal(l.n, 2);
	assert_range(&l, 0, 8, 9);
	assert_range(&l, 1, 11, 11);
	l = get_lost_from(&w, 10, 64);
	assert_int_equal(l.n, 1);
	assert_range(&l, 0, 11, 11);
	l = get_lost_from(&w, 12, 64);
	assert_int_equal(l.n, 0);
	assert_false(l.overflow);
	/* a burst of old losses does not overflow the report once settled */
	slim_seq_window_reset(&w);
	for (uint32_t s = 1; s <= 1001; s += 2) {
		apply(&w, s);
	}
	apply(&w, 1003); /* 1002 lost */
	l = get_lost_from(&w, 1, 64);
	assert_true(l.overflow);
	l = get_lost_from(&w, 1001, 64);
	assert_false(l.overflow);
	assert_int_equal(l.n, 1);
	assert_range(&l, 0, 1002, 1002);
	/* older than the window: the whole window */
	for (uint32_t s = 1004; s <= 6000; s++) {
		apply(&w, s);
	}
	apply(&w, 6002);
	l = get_lost_from(&w, 1, 64);
	assert_int_equal(l.n, 1);
	assert_range(&l, 0, 6001, 6001);
	/* across the wrap */
	slim_seq_window_reset(&w);
	for (uint32_t s = UINT32_MAX - 20; s != UINT32_MAX - 5; s++) {
		apply(&w, s);
	}
	apply(&w, UINT32_MAX - 3);
	apply(&w, 2);
	l = get_lost_from(&w, UINT32_MAX - 8, 64);
	assert_int_equal(l.n, 3);
	assert_range(&l, 0, UINT32_MAX - 5, UINT32_MAX - 4);
	assert_range(&l, 1, UINT32_MAX - 2, UINT32_MAX);
	assert_range(&l, 2, 1, 1);
	l = get_lost_from(&w, UINT32_MAX - 1, 64);
	assert_int_equal(l.n, 2);
	assert_range(&l, 0, UINT32_MAX - 1, UINT32_MAX);
	assert_range(&l, 1, 1, 1);
	l = get_lost_from(&w, 1, 64);
	assert_int_equal(l.n, 1);
	assert_range(&l, 0, 1, 1);
}

static void test_reset(void **state)
{
	struct slim_seq_window w;
	slim_seq_window_reset(&w);
	apply(&w, 10);
	apply(&w, 20);
	slim_seq_window_reset(&w);
	assert_int_equal(w.highest, 0);
	assert_int_equal(slim_seq_window_check(&w, 10), SLIM_SEQ_NEW);
	assert_int_equal(slim_seq_window_check(&w, 1), SLIM_SEQ_NEW);
	struct lost l = get_lost(&w, 64);
	assert_int_equal(l.n, 0);
	apply(&w, 1);
	l = get_lost(&w, 64);
	assert_int_equal(l.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_zero_is_never_new),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_late_is_dropped),
		cmocka_unit_test(test_gaps),
		cmocka_unit_test(test_random_against_model),
		cmocka_unit_test(test_wrap_around),
		cmocka_unit_test(test_large_jumps),
		cmocka_unit_test(test_range_overflow),
		cmocka_unit_test(test_report_from),
		cmocka_unit_test(test_reset),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
