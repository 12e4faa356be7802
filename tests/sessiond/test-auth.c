/*
 * auth.c against the real PAM stack: a throwaway user and a PAM service of
 * pam_unix alone (/etc/pam.d/TAG-auth, root_name), so the machine's own PAM
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

#define TEST_PASSWORD "c0rrect horse ünïcode"

/* the user and the PAM service: the run's own (root_name) */
static char test_user[48], test_service_path[64];
#define TEST_USER test_user
#define TEST_SERVICE test_user
#define TEST_SERVICE_PATH test_service_path

/* chage with these arguments, on the test user */
static int chage(const char *args)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "chage %s %s", args, TEST_USER);
	return root_run(cmd);
}

static void cleanup(void)
{
	root_remove_user(TEST_USER, TEST_SERVICE_PATH);
}

static int setup(void **state)
{
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
	assert_int_equal(chage("-E 0"), 0);
	const char *why = NULL;
	struct slim_auth *auth = slim_auth_login(TEST_SERVICE, TEST_USER, TEST_PASSWORD, &why);
	chage("-E -1");
	assert_null(auth);
	assert_string_equal(why, "Account expired or locked");
}

static void test_expired_password(void **state)
{
	assert_int_equal(chage("-d 0"), 0);
	const char *why = NULL;
	struct slim_auth *auth = slim_auth_login(TEST_SERVICE, TEST_USER, TEST_PASSWORD, &why);
	chage("-d -1");
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
	root_name(test_user, sizeof(test_user), "auth");
	snprintf(test_service_path, sizeof(test_service_path), "/etc/pam.d/%s", TEST_SERVICE);
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
