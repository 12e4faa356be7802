/* Where a group's new session goes (src/sessiond/group/placement.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include "placement.h"

static struct slim_place_weights weights(void)
{
	struct slim_place_weights w;
	slim_place_weights_defaults(&w);
	return w;
}

static void test_fewest_sessions_on_equal_servers(void **state)
{
	struct slim_place_weights w = weights();
	struct slim_place_server s[3] = {
		{ .name = "a", .sessions = 2, .mem_avail_mb = 8000, .cpus = 4 },
		{ .name = "b", .sessions = 1, .mem_avail_mb = 8000, .cpus = 4 },
		{ .name = "c", .sessions = 3, .mem_avail_mb = 8000, .cpus = 4 },
	};
	assert_int_equal(slim_place(s, 3, &w, NULL), 1);
	/* a tie goes to the first name */
	s[0].sessions = 1;
	assert_int_equal(slim_place(s, 3, &w, NULL), 0);
}

/* 30 logins on three like servers (each login makes its server's session count grow). */
static void test_thirty_logins_spread_evenly(void **state)
{
	struct slim_place_weights w = weights();
	struct slim_place_server s[3] = {
		{ .name = "a", .mem_avail_mb = 16000, .cpus = 8, .load_pct = 30 },
		{ .name = "b", .mem_avail_mb = 16000, .cpus = 8, .load_pct = 30 },
		{ .name = "c", .mem_avail_mb = 16000, .cpus = 8, .load_pct = 30 },
	};
	for (int i = 0; i < 30; i++) {
		int at = slim_place(s, 3, &w, NULL);
		assert_in_range(at, 0, 2);
		s[at].sessions++;
		/* what each session takes, as the server would report it next */
		s[at].mem_avail_mb -= w.ram_per_user_mb;
	}
	for (int i = 0; i < 3; i++) {
		assert_int_equal(s[i].sessions, 10);
	}
}

static void test_memory_and_cpu_count(void **state)
{
	struct slim_place_weights w = weights();
	struct slim_place_server s[2] = {
		{ .name = "small", .sessions = 0, .mem_avail_mb = 1000, .cpus = 2 },
		{ .name = "big", .sessions = 5, .mem_avail_mb = 32000, .cpus = 16 },
	};
	assert_int_equal(slim_place(s, 2, &w, NULL), 1);
	/* a busy CPU leaves less room than an idle one */
	struct slim_place_server t[2] = {
		{ .name = "busy", .mem_avail_mb = 4000, .cpus = 4, .load_pct = 400 },
		{ .name = "idle", .mem_avail_mb = 4000, .cpus = 4, .load_pct = 0 },
	};
	assert_int_equal(slim_place(t, 2, &w, NULL), 1);
	assert_true(slim_place_room(&t[1], &w) - slim_place_room(&t[0], &w) == 400);
	/* existing_users_weight: each session costs a session's room */
	struct slim_place_server u = { .name = "u", .sessions = 3, .mem_avail_mb = 2000 };
	assert_true(slim_place_room(&u, &w) == 1000 - 300);
}

static void test_drain_and_previous(void **state)
{
	struct slim_place_weights w = weights();
	struct slim_place_server s[3] = {
		{ .name = "a", .sessions = 0, .mem_avail_mb = 8000, .cpus = 4, .drain = true },
		{ .name = "b", .sessions = 4, .mem_avail_mb = 8000, .cpus = 4 },
		{ .name = "c", .sessions = 1, .mem_avail_mb = 8000, .cpus = 4 },
	};
	assert_int_equal(slim_place(s, 3, &w, NULL), 2);
	/* the user's previous server, while it has room for one more */
	assert_int_equal(slim_place(s, 3, &w, "b"), 1);
	/* but never a draining one */
	assert_int_equal(slim_place(s, 3, &w, "a"), 2);
	/* a previous server without room: the one with the most */
	s[1].mem_avail_mb = 0;
	s[1].cpus = 0;
	assert_int_equal(slim_place(s, 3, &w, "b"), 2);
	/* a previous server that is gone */
	assert_int_equal(slim_place(s, 3, &w, "z"), 2);
	/* every server drains: nowhere */
	s[1].drain = s[2].drain = true;
	assert_int_equal(slim_place(s, 3, &w, NULL), -1);
	assert_int_equal(slim_place(s, 0, &w, NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fewest_sessions_on_equal_servers),
		cmocka_unit_test(test_thirty_logins_spread_evenly),
		cmocka_unit_test(test_memory_and_cpu_count),
		cmocka_unit_test(test_drain_and_previous),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
