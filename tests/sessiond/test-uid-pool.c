/*
 * The greeters' uid pool (uid-pool.c): which uid a greeter gets, when a
 * uid may be had again, and which uids are never used because a user has
 * them, against this machine's real user database (nobody is in every
 * Debian's) and a subuid file of the test's own.
 */
#define _DEFAULT_SOURCE
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>
#include "slim-log.h"
#include "uid-pool.h"

static int logged;

__attribute__((format(printf, 2, 0)))
static void count_log(enum slim_log_level level, const char *fmt, va_list args)
{
	logged++;
	if (getenv("TEST_VERBOSE")) {
		vfprintf(stderr, fmt, args);
		fputc('\n', stderr);
	}
}

static void test_ranges(void **state)
{
	struct slim_uid_pool pool;
	assert_false(slim_uid_pool_init(&pool, 0, 10));         /* root: never */
	assert_false(slim_uid_pool_init(&pool, 80, 79));
	assert_false(slim_uid_pool_init(&pool, 70000, 70000 + SLIM_GREETER_UIDS_MAX));
	assert_false(slim_uid_pool_init(&pool, 0x7fffff00u, 0x80000000u));
	assert_true(slim_uid_pool_init(&pool, 70000, 70000 + SLIM_GREETER_UIDS_MAX - 1));
	assert_int_equal(pool.count, SLIM_GREETER_UIDS_MAX);
	assert_true(slim_uid_pool_has(&pool, 70000));
	assert_true(slim_uid_pool_has(&pool, 70000 + SLIM_GREETER_UIDS_MAX - 1));
	assert_false(slim_uid_pool_has(&pool, 69999));
	assert_false(slim_uid_pool_has(&pool, 70000 + SLIM_GREETER_UIDS_MAX));
	assert_int_equal(slim_uid_pool_state(&pool, 69999), SLIM_UID_REFUSED);
	slim_uid_pool_finish(&pool);
	assert_false(slim_uid_pool_has(&pool, 70000));
}

/* Round robin; a uid ENDING is not free; none free: (uid_t)-1. */
static void test_take(void **state)
{
	struct slim_uid_pool pool;
	assert_true(slim_uid_pool_init(&pool, 70000, 70002));
	assert_int_equal(slim_uid_pool_take(&pool), 70000);
	assert_int_equal(slim_uid_pool_take(&pool), 70001);
	slim_uid_pool_set(&pool, 70000, SLIM_UID_ENDING);
	assert_int_equal(pool.ending, 1);
	assert_int_equal(slim_uid_pool_take(&pool), 70002);
	/* 70000's processes still die: nothing free */
	assert_int_equal(slim_uid_pool_take(&pool), (uid_t)-1);
	slim_uid_pool_set(&pool, 70000, SLIM_UID_FREE);
	assert_int_equal(pool.ending, 0);
	slim_uid_pool_set(&pool, 70001, SLIM_UID_ENDING);
	slim_uid_pool_set(&pool, 70001, SLIM_UID_FREE);
	/* the one after the last taken first: 70000, then 70001 */
	assert_int_equal(slim_uid_pool_take(&pool), 70000);
	assert_int_equal(slim_uid_pool_take(&pool), 70001);
	assert_int_equal(slim_uid_pool_state(&pool, 70001), SLIM_UID_USED);
	/* outside the range: nothing changes */
	slim_uid_pool_set(&pool, 5, SLIM_UID_FREE);
	assert_int_equal(slim_uid_pool_take(&pool), (uid_t)-1);
	slim_uid_pool_finish(&pool);
}

/* A greeter found again after a restart has its uid back, once. */
static void test_claim(void **state)
{
	struct slim_uid_pool pool;
	assert_true(slim_uid_pool_init(&pool, 70000, 70009));
	assert_true(slim_uid_pool_claim(&pool, 70004));
	assert_false(slim_uid_pool_claim(&pool, 70004)); /* a second greeter with it */
	assert_false(slim_uid_pool_claim(&pool, 1000));   /* none of the pool's */
	slim_uid_pool_set(&pool, 70005, SLIM_UID_ENDING);
	assert_false(slim_uid_pool_claim(&pool, 70005));
	assert_int_equal(slim_uid_pool_take(&pool), 70000);
	assert_int_equal(slim_uid_pool_take(&pool), 70001);
	slim_uid_pool_finish(&pool);
}

/* The users' uids: refused at the start, said once; one found later at its take. */
static void test_users(void **state)
{
	struct passwd *nobody = getpwnam("nobody");
	assert_non_null(nobody);
	uid_t nobody_uid = nobody->pw_uid;
	if (getpwuid(nobody_uid - 2) || getpwuid(nobody_uid - 1) || getpwuid(nobody_uid + 1)) {
		skip(); /* nobody's neighbours are users here */
	}
	struct slim_uid_pool pool;
	assert_true(slim_uid_pool_init(&pool, nobody_uid - 2, nobody_uid + 1));
	logged = 0;
	assert_int_equal(slim_uid_pool_refuse_users(&pool, NULL), 1);
	assert_int_equal(logged, 1);
	assert_int_equal(slim_uid_pool_state(&pool, nobody_uid), SLIM_UID_REFUSED);
	for (int i = 0; i < 3; i++) {
		assert_int_not_equal(slim_uid_pool_take(&pool), nobody_uid);
	}
	assert_int_equal(slim_uid_pool_take(&pool), (uid_t)-1);
	slim_uid_pool_finish(&pool);

	/* not refused at the start (a user added since): refused at its take, said */
	assert_true(slim_uid_pool_init(&pool, nobody_uid, nobody_uid + 1));
	logged = 0;
	assert_int_equal(slim_uid_pool_take(&pool), nobody_uid + 1);
	assert_int_equal(logged, 1);
	assert_int_equal(slim_uid_pool_state(&pool, nobody_uid), SLIM_UID_REFUSED);
	assert_int_equal(slim_uid_pool_take(&pool), (uid_t)-1);
	slim_uid_pool_finish(&pool);
}

/* Subordinate uids (a user's containers run as them) are refused too. */
static void test_subuids(void **state)
{
	char path[] = "/tmp/slim-subuid-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs("alice:70010:5\n"
		"bob:60000:10005\n"    /* its last 5 uids: 70000-70004 */
		"carol:100000:65536\n" /* beyond the range */
		"a line of garbage\n"
		"dave:x:y\n", f);
	fclose(f);
	struct slim_uid_pool pool;
	assert_true(slim_uid_pool_init(&pool, 70000, 70019));
	logged = 0;
	assert_int_equal(slim_uid_pool_refuse_users(&pool, path), 10);
	assert_int_equal(logged, 1);
	unlink(path);
	for (uid_t uid = 70000; uid < 70020; uid++) {
		bool taken = (uid >= 70000 && uid < 70005) || (uid >= 70010 && uid < 70015);
		assert_int_equal(slim_uid_pool_state(&pool, uid),
			taken ? SLIM_UID_REFUSED : SLIM_UID_FREE);
	}
	assert_int_equal(slim_uid_pool_take(&pool), 70005);
	/* a file that is not there: nothing refused, nothing said */
	logged = 0;
	assert_int_equal(slim_uid_pool_refuse_users(&pool, "/nonexistent/subuid"), 0);
	assert_int_equal(logged, 0);
	slim_uid_pool_finish(&pool);
}

int main(void)
{
	slim_log_init(SLIM_LOG_DEBUG, count_log);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_take),
		cmocka_unit_test(test_claim),
		cmocka_unit_test(test_users),
		cmocka_unit_test(test_subuids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
