/*
 * login.c against the real PAM stack and a throwaway user: PAM runs in a
 * worker process, never in the manager's (this test's) own, and a login in
 * progress never blocks the manager's event loop. The PAM service
 * (/etc/pam.d/TAG-login, root_name) is pam_unix with two pam_exec hooks: one
 * that takes a second to authenticate, and one that records, in the session
 * phase, which process called pam_open_session / pam_close_session (pam_exec
 * runs in that process: its child's $PPID). Needs root; skipped otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "login.h"
#include "test-root.h"

#define TEST_PASSWORD "c0rrect horse"

/* the user and the PAM service: the run's own (root_name) */
static char test_user[48], test_service_path[64];
#define TEST_USER test_user
#define TEST_SERVICE test_user
#define TEST_SERVICE_PATH test_service_path

static char tmpdir[64];

static struct {
	struct wl_event_loop *loop;
	struct wl_event_source *tick;
	int ticks;
	bool done;        /* authenticated with an error, failed, or started */
	enum slim_login_next next; /* what authenticated answers */
	bool held;        /* authenticated answered SLIM_LOGIN_HOLD */
	char error[128];
	int ticks_at_verdict;
	struct slim_spawn_result res;
} t;

static void cleanup(void)
{
	root_remove_user(TEST_USER, TEST_SERVICE_PATH);
	if (tmpdir[0]) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		root_run(cmd);
		tmpdir[0] = '\0';
	}
}

static bool write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	return f && fputs(text, f) >= 0 && fclose(f) == 0 && chmod(path, mode) == 0;
}

static int setup(void **state)
{
	cleanup();
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/%s-XXXXXX", TEST_USER);
	if (!mkdtemp(tmpdir) || chmod(tmpdir, 0755) != 0) {
		return -1;
	}
	char path[128], text[1024];
	snprintf(path, sizeof(path), "%s/fake-slimland", tmpdir);
	if (!write_file(path, "#!/bin/sh\nexec sleep 60\n", 0755)) {
		return -1;
	}
	snprintf(path, sizeof(path), "%s/session-hook", tmpdir);
	snprintf(text, sizeof(text), "#!/bin/sh\necho \"$PAM_TYPE $PPID\" >> %s/pam-log\n", tmpdir);
	if (!write_file(path, text, 0755)) {
		return -1;
	}
	snprintf(text, sizeof(text),
		"auth required pam_exec.so /bin/sleep 1\n"
		"auth required pam_unix.so\n"
		"account required pam_unix.so\n"
		"session required pam_exec.so %s/session-hook\n"
		"session required pam_unix.so\n", tmpdir);
	return root_add_user(TEST_USER, TEST_PASSWORD, TEST_SERVICE_PATH, text) ? 0 : -1;
}

static int teardown(void **state)
{
	cleanup();
	return 0;
}

static int handle_tick(void *data)
{
	t.ticks++;
	wl_event_source_timer_update(t.tick, 20);
	return 0;
}

static enum slim_login_next cb_authenticated(void *data, const char *error)
{
	t.ticks_at_verdict = t.ticks;
	if (error) {
		snprintf(t.error, sizeof(t.error), "%s", error);
		t.done = true;
		return SLIM_LOGIN_STOP;
	}
	t.held = t.next == SLIM_LOGIN_HOLD;
	if (t.next != SLIM_LOGIN_START) {
		t.done = true;
	}
	return t.next;
}

static void cb_started(void *data, const struct slim_spawn_result *res, int control_fd)
{
	t.res = *res;
	t.done = true;
}

static void cb_failed(void *data, const char *error)
{
	snprintf(t.error, sizeof(t.error), "%s", error);
	t.done = true;
}

static const struct slim_login_callbacks callbacks = {
	.authenticated = cb_authenticated,
	.started = cb_started,
	.failed = cb_failed,
};

static struct slim_login *start_next(const char *password, enum slim_login_next next)
{
	memset(&t, 0, sizeof(t));
	t.loop = wl_event_loop_create();
	t.tick = wl_event_loop_add_timer(t.loop, handle_tick, NULL);
	wl_event_source_timer_update(t.tick, 20);
	t.next = next;
	t.res.pid = -1;
	static char slimland[128], runtime_env[160], pw[64];
	snprintf(slimland, sizeof(slimland), "%s/fake-slimland", tmpdir);
	snprintf(runtime_env, sizeof(runtime_env), "XDG_RUNTIME_DIR=%s/run", tmpdir);
	static char *env[2];
	env[0] = runtime_env;
	snprintf(pw, sizeof(pw), "%s", password);
	struct slim_login_request req = {
		.service = TEST_SERVICE,
		.user = TEST_USER,
		.password = pw,
		.console = "test",
		.spawn = {
			.slimland = slimland,
			.listen = "127.0.0.1:0",
			.startup = "true",
			.env = env,
		},
	};
	struct slim_login *login = slim_login_start(t.loop, &req, &callbacks, NULL);
	explicit_bzero(pw, sizeof(pw));
	assert_non_null(login);
	for (int i = 0; i < 1000 && !t.done; i++) {
		wl_event_loop_dispatch(t.loop, 10);
	}
	assert_true(t.done);
	return login;
}

static struct slim_login *start(const char *password, bool go)
{
	return start_next(password, go ? SLIM_LOGIN_START : SLIM_LOGIN_STOP);
}

static void finish(void)
{
	wl_event_source_remove(t.tick);
	wl_event_loop_destroy(t.loop);
}

static char *pam_log(void)
{
	static char buf[512];
	char path[128];
	snprintf(path, sizeof(path), "%s/pam-log", tmpdir);
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (f) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = '\0';
		fclose(f);
	}
	return buf;
}

static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	assert_non_null(p);
	int ppid = 0;
	char state;
	assert_int_equal(sscanf(p + 1, " %c %d", &state, &ppid), 2);
	return ppid;
}

static void test_wrong_password_does_not_block(void **state)
{
	struct slim_login *login = start("wrong", true);
	(void)login; /* over: freed by login.c */
	assert_string_equal(t.error, "Wrong user name or password");
	/* PAM took a second (pam_exec sleep 1): the loop ran all along */
	assert_true(t.ticks_at_verdict >= 20);
	assert_null(strstr(pam_log(), "open_session"));
	finish();
	while (waitpid(-1, NULL, 0) > 0) {
	}
}

static void test_session_in_worker(void **state)
{
	struct slim_login *login = start(TEST_PASSWORD, true);
	assert_string_equal(t.error, "");
	assert_true(t.ticks_at_verdict >= 20);
	assert_true(t.res.pid > 0);
	assert_true(t.res.pidfd >= 0);
	/* pam_open_session ran in the worker, the compositor's parent, not in us */
	int opener = 0;
	assert_int_equal(sscanf(pam_log(), "open_session %d", &opener), 1);
	assert_int_not_equal(opener, getpid());
	assert_int_equal(parent_of(t.res.pid), opener);
	assert_int_equal(parent_of(opener), getpid());
	/* the manager forgets the login: the worker keeps the PAM session open */
	slim_login_cancel(login);
	usleep(200000);
	assert_null(strstr(pam_log(), "close_session"));
	/* the compositor ends (slimlandctl end): the worker closes the session and exits */
	kill(t.res.pid, SIGTERM);
	assert_int_equal(waitpid(opener, NULL, 0), opener);
	char want[64];
	snprintf(want, sizeof(want), "close_session %d", opener);
	assert_non_null(strstr(pam_log(), want));
	close(t.res.pidfd);
	finish();
}

static void test_stop_after_verdict(void **state)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/pam-log", tmpdir);
	unlink(path);
	start(TEST_PASSWORD, false);
	assert_string_equal(t.error, "");
	assert_true(t.res.pid < 0);
	finish();
	while (waitpid(-1, NULL, 0) > 0) {
	}
	assert_null(strstr(pam_log(), "open_session"));
}

/* Held after the verdict (a server group claims the card meanwhile), then started. */
static void test_held_then_started(void **state)
{
	struct slim_login *login = start_next(TEST_PASSWORD, SLIM_LOGIN_HOLD);
	assert_true(t.held);
	assert_string_equal(t.error, "");
	assert_true(t.res.pid < 0);
	/* nothing is opened while it waits */
	assert_null(strstr(pam_log(), "open_session"));
	t.done = false;
	slim_login_proceed(login, true);
	for (int i = 0; i < 1000 && !t.done; i++) {
		wl_event_loop_dispatch(t.loop, 10);
	}
	assert_true(t.done);
	assert_true(t.res.pid > 0);
	assert_non_null(strstr(pam_log(), "open_session"));
	slim_login_cancel(login);
	kill(t.res.pid, SIGTERM);
	close(t.res.pidfd);
	finish();
	while (waitpid(-1, NULL, 0) > 0) {
	}
}

int main(void)
{
	static const char *const tools[] = { "/usr/sbin/useradd", "/usr/sbin/chpasswd", NULL };
	int skip = root_require("test-login", tools);
	if (skip) {
		return skip;
	}
	root_name(test_user, sizeof(test_user), "login");
	snprintf(test_service_path, sizeof(test_service_path), "/etc/pam.d/%s", TEST_SERVICE);
	root_cleanup_on_exit(cleanup);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wrong_password_does_not_block),
		cmocka_unit_test(test_session_in_worker),
		cmocka_unit_test(test_stop_after_verdict),
		cmocka_unit_test(test_held_then_started),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
