/*
 * auth.c against the real PAM stack: a throwaway user and a PAM service of
 * pam_unix alone (/etc/pam.d/slimland-test), so the machine's own PAM
 * configuration plays no part. Needs root (useradd, /etc/shadow); skipped
 * otherwise. The user and the service file are removed whatever happens.
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "auth.h"
#include "test-root.h"

#define TEST_USER "slimtest-auth"
#define TEST_PASSWORD "c0rrect horse ünïcode"
#define TEST_SERVICE "slimland-test"
#define TEST_SERVICE_PATH "/etc/pam.d/" TEST_SERVICE

static void cleanup(void)
{
	root_remove_user(TEST_USER, TEST_SERVICE_PATH);
}

static int setup(void **state)
{
	cleanup(); /* what a killed earlier run left */
	if (!root_add_user(TEST_USER, TEST_PASSWORD, TEST_SERVICE_PATH,
			"auth required pam_unix.so\n"
			"account required pam_unix.so\n"
			"session required pam_unix.so\n")) {
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	cleanup();
	return 0;
}

static void test_right_password(void **state)
{
	const char *why = NULL;
	struct slim_auth *auth = slim_auth_login(TEST_SERVICE, TEST_USER, TEST_PASSWORD, &why);
	assert_non_null(auth);
	assert_string_equal(slim_auth_user(auth), TEST_USER);
	assert_non_null(slim_auth_env(auth));
	slim_auth_logout(auth);
	slim_auth_logout(NULL);
}

static void test_wrong_password(void **state)
{
	const char *why = NULL;
	assert_null(slim_auth_login(TEST_SERVICE, TEST_USER, "wrong", &why));
	assert_string_equal(why, "Wrong user name or password");
	why = NULL;
	assert_null(slim_auth_login(TEST_SERVICE, TEST_USER, "", &why));
	assert_string_equal(why, "Wrong user name or password");
}

static void test_unknown_user(void **state)
{
	const char *why = NULL;
	assert_null(slim_auth_login(TEST_SERVICE, "slimtest-nobody", TEST_PASSWORD, &why));
	assert_string_equal(why, "Wrong user name or password");
}

static void test_expired_account(void **state)
{
	assert_int_equal(root_run("chage -E 0 " TEST_USER), 0);
	const char *why = NULL;
	struct slim_auth *auth = slim_auth_login(TEST_SERVICE, TEST_USER, TEST_PASSWORD, &why);
	root_run("chage -E -1 " TEST_USER);
	assert_null(auth);
	assert_string_equal(why, "Account expired or locked");
}

static void test_expired_password(void **state)
{
	assert_int_equal(root_run("chage -d 0 " TEST_USER), 0);
	const char *why = NULL;
	struct slim_auth *auth = slim_auth_login(TEST_SERVICE, TEST_USER, TEST_PASSWORD, &why);
	root_run("chage -d -1 " TEST_USER);
	assert_null(auth);
	assert_string_equal(why, "Password expired: change it first");
}

int main(void)
{
	static const char *const tools[] = { "/usr/sbin/useradd", "/usr/sbin/chpasswd", NULL };
	int skip = root_require("test-auth", tools);
	if (skip) {
		return skip;
	}
	root_cleanup_on_exit(cleanup);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_right_password),
		cmocka_unit_test(test_wrong_password),
		cmocka_unit_test(test_unknown_user),
		cmocka_unit_test(test_expired_account),
		cmocka_unit_test(test_expired_password),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
