/*
 * spawn.c with a real user: the "compositor" is a shell script that writes
 * what it was given (arguments, ids, directory, environment, descriptors) to
 * its log, which the test reads back. Needs root (useradd, setuid); skipped
 * otherwise. The user and the files are removed whatever happens.
 */
#define _GNU_SOURCE /* setgroups */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "spawn.h"
#include "test-root.h"
#include "userdb.h"

/*
 * the user and its cgroup: the run's own (root_name); a second user's uid
 * stands for a greeter's own (no user may have one, but this one is
 * certainly nobody else's)
 */
static char test_user[48], test_cgroup[96], other_user[48];
#define TEST_USER test_user
#define TEST_CGROUP test_cgroup

static char tmpdir[64];

static const char fake_slimland[] =
	"#!/bin/sh\n"
	"echo \"args: $*\"\n"
	"echo \"ids: $(id -u) $(id -g)\"\n"
	"echo \"cwd: $(pwd)\"\n"
	"echo \"stdin: $(readlink /proc/$$/fd/0)\"\n"
	"echo \"sid: $(cut -d' ' -f6 /proc/$$/stat) pid: $$\"\n"
	"[ -e /proc/$$/fd/$LEAK_FD ] && echo \"leaked: $LEAK_FD\"\n"
	"env | sort | sed 's/^/env: /'\n"
	"sed 's/^/cgroup: /' /proc/$$/cgroup\n"
	"exit 0\n";

static void remove_cgroups(void)
{
	struct slim_cgroup_fs fs;
	char why[256];
	if (!slim_cgroup_fs_detect(&fs, "/sys/fs/cgroup", why, sizeof(why))) {
		return;
	}
	slim_cgroup_session_remove(&fs, TEST_CGROUP);
	for (size_t i = 0; i < fs.n; i++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/%s", fs.mount[i], TEST_CGROUP);
		*strrchr(path, '/') = '\0';
		rmdir(path);
	}
}

static void cleanup(void)
{
	root_remove_user(TEST_USER, NULL);
	root_remove_user(other_user, NULL);
	if (tmpdir[0]) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		root_run(cmd);
		tmpdir[0] = '\0';
	}
	remove_cgroups();
}

static int setup(void **state)
{
	cleanup();
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/%s-XXXXXX", TEST_USER);
	if (!mkdtemp(tmpdir) || chmod(tmpdir, 0755) != 0) {
		return -1;
	}
	char path[128], cmd[256];
	snprintf(path, sizeof(path), "%s/fake-slimland", tmpdir);
	FILE *f = fopen(path, "w");
	if (!f || fputs(fake_slimland, f) < 0 || fclose(f) != 0 || chmod(path, 0755) != 0) {
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "useradd -m -d %s/home -s /bin/sh %s", tmpdir, TEST_USER);
	if (root_run(cmd) != 0) {
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "useradd -M -d /nonexistent -s /bin/sh %s", other_user);
	return root_run(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	cleanup();
	return 0;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		return NULL;
	}
	static char buf[65536];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (!haystack) {
		fail_msg("no log");
	} else if (!strstr(haystack, needle)) {
		fail_msg("'%s' not in:\n%s", needle, haystack);
	}
}

static void test_spawn(void **state)
{
	struct passwd *pw = getpwnam(TEST_USER);
	assert_non_null(pw);
	uid_t uid = pw->pw_uid;
	gid_t gid = pw->pw_gid;

	/* A descriptor the manager holds must not reach the session. */
	int leak = open("/dev/null", O_RDONLY);
	assert_true(leak >= 0);
	char leak_env[32];
	snprintf(leak_env, sizeof(leak_env), "LEAK_FD=%d", leak);

	char runtime[128], runtime_env[160], slimland[128], log_path[160];
	snprintf(runtime, sizeof(runtime), "%s/run", tmpdir);
	snprintf(runtime_env, sizeof(runtime_env), "XDG_RUNTIME_DIR=%s", runtime);
	snprintf(slimland, sizeof(slimland), "%s/fake-slimland", tmpdir);
	snprintf(log_path, sizeof(log_path), "%s/log", runtime);
	char *const env[] = { runtime_env, "PATH=/usr/bin:/bin", leak_env, NULL };
	struct slim_cgroup_policy policy;
	slim_cgroup_policy_defaults(&policy);
	struct slim_spawn_request req = {
		.user = TEST_USER,
		.slimland = slimland,
		.listen = "127.0.0.1:0",
		.startup = "foot --title 'a b'",
		.env = env,
		.cgroup = TEST_CGROUP,
		.cgroups = &policy,
		.log_path = log_path,
		.video_budget = "40",
	};
	struct slim_spawn_result out;
	assert_true(slim_spawn_compositor(&req, &out));
	close(leak);
	assert_true(out.pid > 0);
	assert_true(out.pidfd >= 0);
	assert_string_equal(out.runtime_dir, runtime);
	char control[200];
	snprintf(control, sizeof(control), "%s/slimland-control", runtime);
	assert_string_equal(out.control_path, control);

	/* The pidfd says when it has exited. */
	struct pollfd p = { .fd = out.pidfd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 10000), 1);
	int status;
	assert_int_equal(waitpid(out.pid, &status, 0), out.pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(out.pidfd);

	struct stat st;
	assert_int_equal(stat(runtime, &st), 0);
	assert_int_equal(st.st_uid, uid);
	assert_int_equal(st.st_mode & 0777, 0700);

	const char *log = read_file(log_path);
	assert_non_null(log);
	char want[256];
	/* its control socket takes the manager's uid alone */
	snprintf(want, sizeof(want), "args: --managed --manager-uid %u --listen 127.0.0.1:0 "
		"--video-budget 40 -s foot --title 'a b'\n", (unsigned)geteuid());
	assert_contains(log, want);
	snprintf(want, sizeof(want), "ids: %u %u\n", (unsigned)uid, (unsigned)gid);
	assert_contains(log, want);
	snprintf(want, sizeof(want), "cwd: %s/home\n", tmpdir);
	assert_contains(log, want);
	assert_contains(log, "stdin: /dev/null\n");
	snprintf(want, sizeof(want), "sid: %d pid: %d\n", (int)out.pid, (int)out.pid);
	assert_contains(log, want);
	assert_null(strstr(log, "leaked:"));
	snprintf(want, sizeof(want), "env: HOME=%s/home\n", tmpdir);
	assert_contains(log, want);
	snprintf(want, sizeof(want), "env: USER=%s\n", TEST_USER);
	assert_contains(log, want);
	snprintf(want, sizeof(want), "env: LOGNAME=%s\n", TEST_USER);
	assert_contains(log, want);
	assert_contains(log, "env: SHELL=/bin/sh\n");
	assert_contains(log, "env: PATH=/usr/bin:/bin\n"); /* the request's wins */
	snprintf(want, sizeof(want), "env: XDG_RUNTIME_DIR=%s\n", runtime);
	assert_contains(log, want);
	/* Nothing of ours: this one is set in main(). */
	assert_null(strstr(log, "SLIMTEST_SECRET"));
	/* Where cgroups can be made here, the session is in its compositor class. */
	if (strstr(log, TEST_CGROUP)) {
		snprintf(want, sizeof(want), "%s/compositor\n", TEST_CGROUP);
		assert_contains(log, want);
		print_message("in cgroup %s/compositor\n", TEST_CGROUP);
	} else {
		print_message("not in cgroup %s (no writable hierarchy here)\n", TEST_CGROUP);
	}
}

static void test_failures(void **state)
{
	struct slim_spawn_result out;
	struct slim_spawn_request req = {
		.user = "slimtest-nobody",
		.slimland = "/bin/true",
	};
	assert_false(slim_spawn_compositor(&req, &out));

	/* An exec that fails in the child is reported by the parent. */
	char runtime_env[160];
	snprintf(runtime_env, sizeof(runtime_env), "XDG_RUNTIME_DIR=%s/run", tmpdir);
	char *const env[] = { runtime_env, NULL };
	req.user = TEST_USER;
	req.slimland = "/nonexistent/slimland";
	req.env = env;
	assert_false(slim_spawn_compositor(&req, &out));
}

static void make_file(const char *dir, const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
}

/* A greeter's runtime directory goes whole; what its symlinks point at stays. */
static void test_remove_runtime_dir(void **state)
{
	char dir[128], sub[160], outside[128], link[200], kept[200];
	snprintf(dir, sizeof(dir), "%s/greeter-c1", tmpdir);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	snprintf(outside, sizeof(outside), "%s/outside", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(mkdir(outside, 0700), 0);
	make_file(dir, "wayland-0.lock");
	make_file(sub, "deeper");
	make_file(outside, "precious");
	/* what a hostile greeter could leave: links to a directory and to a file elsewhere */
	snprintf(link, sizeof(link), "%s/to-dir", dir);
	assert_int_equal(symlink(outside, link), 0);
	snprintf(link, sizeof(link), "%s/to-file", sub);
	snprintf(kept, sizeof(kept), "%s/precious", outside);
	assert_int_equal(symlink(kept, link), 0);

	slim_spawn_remove_runtime_dir(dir);
	struct stat st;
	assert_int_equal(lstat(dir, &st), -1);
	assert_int_equal(stat(kept, &st), 0);
	/* a directory that is not there: nothing to do, nothing said */
	slim_spawn_remove_runtime_dir(dir);
}

/*
 * A greeter's spawn: its own uid with the user's gid, name and home, its
 * runtime directory that uid's, its log opened by the manager in a
 * directory the uid cannot enter.
 */
static void test_spawn_as_uid(void **state)
{
	struct passwd *pw = getpwnam(TEST_USER);
	assert_non_null(pw);
	gid_t gid = pw->pw_gid;
	pw = getpwnam(other_user);
	assert_non_null(pw);
	uid_t uid = pw->pw_uid;
	char runtime[128], runtime_env[160], slimland[128], logs[128], log_path[160];
	snprintf(runtime, sizeof(runtime), "%s/greeter-%u", tmpdir, (unsigned)uid);
	snprintf(runtime_env, sizeof(runtime_env), "XDG_RUNTIME_DIR=%s", runtime);
	snprintf(slimland, sizeof(slimland), "%s/fake-slimland", tmpdir);
	snprintf(logs, sizeof(logs), "%s/logs", tmpdir);
	snprintf(log_path, sizeof(log_path), "%s/greeter-c1.log", logs);
	assert_int_equal(mkdir(logs, 0700), 0);
	char *const env[] = { runtime_env, NULL };
	struct slim_spawn_request req = {
		.user = TEST_USER,
		.as_uid = uid,
		.slimland = slimland,
		.env = env,
		.log_path = log_path,
	};
	struct slim_spawn_result out;
	assert_true(slim_spawn_compositor(&req, &out));
	assert_string_equal(out.runtime_dir, runtime);
	int status;
	assert_int_equal(waitpid(out.pid, &status, 0), out.pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(out.pidfd);

	struct stat st;
	assert_int_equal(stat(runtime, &st), 0);
	assert_int_equal(st.st_uid, uid);
	assert_int_equal(st.st_gid, gid);
	assert_int_equal(st.st_mode & 0777, 0700);
	/* the manager's file: the uid could not have opened it */
	assert_int_equal(stat(log_path, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	const char *log = read_file(log_path);
	char want[256];
	snprintf(want, sizeof(want), "ids: %u %u\n", (unsigned)uid, (unsigned)gid);
	assert_contains(log, want);
	snprintf(want, sizeof(want), "env: USER=%s\n", TEST_USER);
	assert_contains(log, want);
	snprintf(want, sizeof(want), "env: HOME=%s/home\n", tmpdir);
	assert_contains(log, want);
	snprintf(want, sizeof(want), "env: XDG_RUNTIME_DIR=%s\n", runtime);
	assert_contains(log, want);
	assert_contains(log, "stdin: /dev/null\n");
}

/* A process of uid: forks `depth` deep, each in a session of its own; writes its pid to fd. */
static void __attribute__((noreturn)) tree(uid_t uid, int depth, int fd)
{
	if (uid != 0 && (setgroups(0, NULL) != 0 || setuid(uid) != 0)) {
		_exit(1);
	}
	setsid();
	signal(SIGTERM, SIG_IGN); /* SIGKILL it has to be */
	pid_t me = getpid();
	if (write(fd, &me, sizeof(me)) != (ssize_t)sizeof(me)) {
		_exit(1);
	}
	if (depth > 0 && fork() == 0) {
		tree(0, depth - 1, fd);
	}
	for (;;) {
		pause();
	}
}

/* Everything of a uid ends, however deep it forked; nobody else's process does. */
static void test_end_uid(void **state)
{
	struct passwd *pw = getpwnam(other_user);
	assert_non_null(pw);
	uid_t uid = pw->pw_uid;
	pw = getpwnam(TEST_USER);
	assert_non_null(pw);
	uid_t bystander_uid = pw->pw_uid;
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t top = fork();
	if (top == 0) {
		tree(uid, 3, p[1]);
	}
	pid_t bystander = fork();
	if (bystander == 0) {
		tree(bystander_uid, 0, p[1]);
	}
	close(p[1]);
	int pidfds[5], n = 0;
	pid_t pids[5];
	while (n < 5 && read(p[0], &pids[n], sizeof(pids[n])) == (ssize_t)sizeof(pids[n])) {
		pidfds[n] = (int)syscall(SYS_pidfd_open, pids[n], 0);
		assert_true(pidfds[n++] >= 0);
	}
	close(p[0]);
	assert_int_equal(n, 5);

	assert_false(slim_spawn_end_uid(0)); /* never root's */
	/* SIGKILL to all at once; true once none of them runs (a moment, perhaps) */
	bool gone = false;
	for (int i = 0; i < 100 && !gone; i++) {
		gone = slim_spawn_end_uid(uid);
		if (!gone) {
			usleep(10000);
		}
	}
	assert_true(gone);
	int status;
	assert_int_equal(waitpid(top, &status, 0), top);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	for (int i = 0; i < n; i++) {
		/* every process of the uid has exited; the bystander, not of it, runs on */
		struct pollfd pf = { .fd = pidfds[i], .events = POLLIN };
		assert_int_equal(poll(&pf, 1, 0), pids[i] == bystander ? 0 : 1);
		close(pidfds[i]);
	}
	assert_int_equal(kill(bystander, 0), 0);
	kill(bystander, SIGKILL);
	assert_int_equal(waitpid(bystander, NULL, 0), bystander);
}

/* A greeter's user record: NAME.user, UID.user linking to it, both gone again. */
static void test_userdb(void **state)
{
	char dir[128], path[200], link[200];
	snprintf(dir, sizeof(dir), "%s/userdb", tmpdir);
	assert_true(slim_userdb_add(dir, "gr-70001", 70001, 123, "/home/a \"b\"", "/bin/sh"));
	snprintf(path, sizeof(path), "%s/gr-70001.user", dir);
	snprintf(link, sizeof(link), "%s/70001.user", dir);
	assert_string_equal(read_file(path), "{\"userName\":\"gr-70001\",\"uid\":70001,"
		"\"gid\":123,\"homeDirectory\":\"/home/a \\\"b\\\"\",\"shell\":\"/bin/sh\","
		"\"realName\":\"slimland greeter\",\"disposition\":\"dynamic\"}\n");
	char target[64];
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	assert_int_equal(n, strlen("gr-70001.user"));
	target[n] = '\0';
	assert_string_equal(target, "gr-70001.user");
	/* again: replaced whole */
	assert_true(slim_userdb_add(dir, "gr-70001", 70001, 124, "/", "/bin/sh"));
	assert_non_null(strstr(read_file(path), "\"gid\":124,"));
	assert_false(slim_userdb_add(dir, "../evil", 70002, 1, "/", "/bin/sh"));
	slim_userdb_remove(dir, 70001);
	struct stat st;
	assert_int_equal(lstat(path, &st), -1);
	assert_int_equal(lstat(link, &st), -1);
	slim_userdb_remove(dir, 70001); /* nothing there: nothing done */
}

int main(void)
{
	static const char *const tools[] = { "/usr/sbin/useradd", NULL };
	int skip = root_require("test-spawn", tools);
	if (skip) {
		return skip;
	}
	setenv("SLIMTEST_SECRET", "1", 1);
	root_name(test_user, sizeof(test_user), "spawn");
	root_name(other_user, sizeof(other_user), "spawn-g");
	snprintf(test_cgroup, sizeof(test_cgroup), "%s.slice/spawn-test", TEST_USER);
	root_cleanup_on_exit(cleanup);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spawn),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_remove_runtime_dir),
		cmocka_unit_test(test_spawn_as_uid),
		cmocka_unit_test(test_end_uid),
		cmocka_unit_test(test_userdb),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
