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

#define TEST_USER "slimtest-auth"
#define TEST_PASSWORD "c0rrect horse ünïcode"
#define TEST_SERVICE "slimland-test"
#define TEST_SERVICE_PATH "/etc/pam.d/" TEST_SERVICE

static int run(const char *cmd)
{
	int status = system(cmd);
	return status == -1 ? -1 : WEXITSTATUS(status);
}

static void cleanup(void)
{
	unlink(TEST_SERVICE_PATH);
	run("userdel -r " TEST_USER " >/dev/null 2>&1");
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int setup(void **state)
{
	cleanup(); /* what a killed earlier run left */
	FILE *f = fopen(TEST_SERVICE_PATH, "w");
	if (!f) {
		return -1;
	}
	fputs("auth required pam_unix.so\n"
		"account required pam_unix.so\n"
		"session required pam_unix.so\n", f);
	if (fclose(f) != 0) {
		return -1;
	}
	if (run("useradd -M -d /nonexistent -s /bin/sh " TEST_USER) != 0 ||
			run("echo '" TEST_USER ":" TEST_PASSWORD "' | chpasswd") != 0) {
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
	assert_int_equal(run("chage -E 0 " TEST_USER), 0);
	const char *why = NULL;
	struct slim_auth *auth = slim_auth_login(TEST_SERVICE, TEST_USER, TEST_PASSWORD, &why);
	run("chage -E -1 " TEST_USER);
	assert_null(auth);
	assert_string_equal(why, "Account expired or locked");
}

static void test_expired_password(void **state)
{
	assert_int_equal(run("chage -d 0 " TEST_USER), 0);
	const char *why = NULL;
	struct slim_auth *auth = slim_auth_login(TEST_SERVICE, TEST_USER, TEST_PASSWORD, &why);
	run("chage -d -1 " TEST_USER);
	assert_null(auth);
	assert_string_equal(why, "Password expired: change it first");
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "test-auth: needs root (useradd, /etc/shadow): skipped\n");
		return 77;
	}
	if (access("/usr/sbin/useradd", X_OK) != 0 || access("/usr/sbin/chpasswd", X_OK) != 0) {
		fprintf(stderr, "test-auth: needs useradd and chpasswd: skipped\n");
		return 77;
	}
	signal(SIGTERM, on_signal); /* meson's timeout */
	signal(SIGINT, on_signal);
	atexit(cleanup);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_right_password),
		cmocka_unit_test(test_wrong_password),
		cmocka_unit_test(test_unknown_user),
		cmocka_unit_test(test_expired_account),
		cmocka_unit_test(test_expired_password),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
