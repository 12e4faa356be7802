/*
 * The cgroup tree and the compositor's policy on this machine's real
 * cgroups (v1 or v2, whichever the kernel has; the VM test covers v2 where
 * this host has v1): a session built and delegated as the manager does,
 * then real processes moved by slim_sched as focus and attachment change.
 * Needs root, as the manager; a machine without writable cgroups skips.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "cgroup.h"
#include "slim-sched.h"

#define ROOT "/sys/fs/cgroup"

static struct slim_cgroup_fs fs;
static struct slim_cgroup_policy policy;
static char top[64], rel[SLIM_CGROUP_PATH];

static bool in_class(pid_t pid, enum slim_cgroup_class class)
{
	char want[SLIM_CGROUP_PATH + 32], got[SLIM_CGROUP_PATH + 32];
	snprintf(want, sizeof(want), "%s/%s", rel, slim_cgroup_class_name(class));
	return slim_cgroup_of(&fs, pid, got, sizeof(got)) && strcmp(got, want) == 0;
}

/*
 * A process that sleeps until killed, with a child that does the same; both
 * there once the child has written to a pipe.
 */
static pid_t sleeper_with_child(void)
{
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (fork() == 0) {
			if (write(ready[1], "r", 1) != 1) {
				_exit(1);
			}
			pause();
			_exit(0);
		}
		pause();
		_exit(0);
	}
	char c;
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	close(ready[1]);
	return pid;
}

static void kill_tree(pid_t pid)
{
	pid_t kids[16];
	size_t n = slim_cgroup_descendants(pid, kids, 16);
	for (size_t i = 0; i < n; i++) {
		kill(kids[i], SIGKILL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int setup(void **state)
{
	char why[256];
	if (geteuid() != 0 || !slim_cgroup_fs_detect(&fs, ROOT, why, sizeof(why))) {
		fprintf(stderr, "skip: %s\n", geteuid() != 0 ? "not root" : why);
		exit(77);
	}
	slim_cgroup_policy_defaults(&policy);
	snprintf(top, sizeof(top), "slimtest-%d.slice", (int)getpid());
	snprintf(rel, sizeof(rel), "%s/user-65534.slice/session-1", top);
	if (!slim_cgroup_session_create(&fs, &policy, rel, 65534, 65534, why, sizeof(why))) {
		fprintf(stderr, "skip: cgroups not writable here: %s\n", why);
		exit(77);
	}
	return 0;
}

static int teardown(void **state)
{
	/* the test process itself went back to the root first */
	slim_cgroup_session_remove(&fs, rel);
	for (size_t i = 0; i < fs.n; i++) {
		char dir[512];
		snprintf(dir, sizeof(dir), "%s/%s/user-65534.slice", fs.mount[i], top);
		rmdir(dir);
		snprintf(dir, sizeof(dir), "%s/%s", fs.mount[i], top);
		rmdir(dir);
	}
	return 0;
}

static void read_value(enum slim_cgroup_class class, const char *hier, const char *file,
		char *buf, size_t size)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s/%s/%s", hier, rel, slim_cgroup_class_name(class), file);
	FILE *f = fopen(path, "re");
	assert_non_null(f);
	assert_non_null(fgets(buf, (int)size, f));
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* The classes exist with the policy's weights, handed to the user. */
static void test_session_built(void **state)
{
	char buf[64];
	read_value(SLIM_CGROUP_INTERACTIVE, fs.mount[0], fs.version == 2 ? "cpu.weight" :
		"cpu.shares", buf, sizeof(buf));
	assert_string_equal(buf, fs.version == 2 ? "1000" : "10240");
	read_value(SLIM_CGROUP_BACKGROUND, fs.mount[0], fs.version == 2 ? "cpu.weight" :
		"cpu.shares", buf, sizeof(buf));
	assert_string_equal(buf, fs.version == 2 ? "100" : "1024");
	char path[512];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", fs.mount[0], rel);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	snprintf(path, sizeof(path), "%s/%s/interactive/cgroup.procs", fs.mount[0], rel);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	/* the weights stay the manager's */
	snprintf(path, sizeof(path), "%s/%s/interactive/%s", fs.mount[0], rel,
		fs.version == 2 ? "cpu.weight" : "cpu.shares");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_uid, 0);
}

/* The hierarchy holding the memory controller, or -1. */
static int memory_hierarchy(void)
{
	for (size_t i = 0; i < fs.n; i++) {
		if (fs.version == 2 || strcmp(fs.controllers[i], "memory") == 0) {
			return (int)i;
		}
	}
	return -1;
}

static uint64_t read_number(const char *dir, const char *file, const char *key)
{
	char path[600], line[128];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	FILE *f = fopen(path, "re");
	assert_non_null(f);
	uint64_t v = UINT64_MAX;
	size_t klen = key ? strlen(key) : 0;
	while (fgets(line, sizeof(line), f)) {
		if (!key) {
			v = strtoull(line, NULL, 10);
			break;
		}
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ') {
			v = strtoull(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	assert_true(v != UINT64_MAX);
	return v;
}

/*
 * A session's memory is limited on its own directory, which the user does
 * not own; a client of it that allocates past the limit runs into it (its
 * memory reclaimed, or it is killed), and nothing outside the session is
 * touched: this test process, which started it, goes on.
 */
static void test_memory_limit(void **state)
{
	int h = memory_hierarchy();
	if (h < 0) {
		print_message("skip: no memory controller here (the VM test has one)\n");
		return;
	}
	char dir[512], why[256], rel2[SLIM_CGROUP_PATH];
	struct stat st;
	snprintf(dir, sizeof(dir), "%s/%s", fs.mount[h], rel);
	const char *max_file = fs.version == 2 ? "memory.max" : "memory.limit_in_bytes";
	uint64_t want = policy.session_memory_max, got = read_number(dir, max_file, NULL);
	assert_true(got <= want && got + 4096 > want);
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%s", max_file);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_uid, 0);

	struct slim_cgroup_policy small = policy;
	small.session_memory_high = 0;
	small.session_memory_max = 32ull << 20;
	snprintf(rel2, sizeof(rel2), "%s/user-65534.slice/session-2", top);
	assert_true(slim_cgroup_session_create(&fs, &small, rel2, 65534, 65534, why, sizeof(why)));
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* a client of the session that asks for 256 MiB and touches it all */
		if (slim_cgroup_move(&fs, rel2, SLIM_CGROUP_BACKGROUND, getpid()) != 0) {
			_exit(2);
		}
		for (int i = 0; i < 256; i++) {
			char *p = malloc(1 << 20);
			if (!p) {
				_exit(3);
			}
			memset(p, i + 1, 1 << 20);
		}
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_false(WIFEXITED(status) && WEXITSTATUS(status) >= 2);
	snprintf(dir, sizeof(dir), "%s/%s", fs.mount[h], rel2);
	/* v2: times the session met memory.max; v1: allocations the limit refused */
	uint64_t hits = fs.version == 2 ? read_number(dir, "memory.events", "max") :
		read_number(dir, "memory.failcnt", NULL);
	print_message("a client asking 256 MiB of a 32 MiB session: %s, the limit met %llu "
		"times\n", WIFSIGNALED(status) ? "killed" : "swapped out",
		(unsigned long long)hits);
	assert_true(hits > 0);
	/* with no swap to go to, the kernel killed it, and only it */
	FILE *swaps = fopen("/proc/swaps", "re");
	char line[256];
	int swap_lines = 0;
	while (swaps && fgets(line, sizeof(line), swaps)) {
		swap_lines++;
	}
	if (swaps) {
		fclose(swaps);
	}
	if (swap_lines <= 1) {
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	}
	slim_cgroup_session_remove(&fs, rel2);
}

/* A process moved goes with its whole tree's later children; a gone one is ESRCH. */
static void test_move_and_read(void **state)
{
	pid_t pid = sleeper_with_child();
	assert_int_equal(slim_cgroup_move(&fs, rel, SLIM_CGROUP_BACKGROUND, pid), 0);
	assert_true(in_class(pid, SLIM_CGROUP_BACKGROUND));
	pid_t pids[8];
	uint64_t cpu_us;
	assert_int_equal(slim_cgroup_class_read(&fs, rel, SLIM_CGROUP_BACKGROUND, pids, 8,
		&cpu_us), 1);
	assert_int_equal(pids[0], pid);
	kill_tree(pid);
	assert_int_equal(slim_cgroup_move(&fs, rel, SLIM_CGROUP_BACKGROUND, pid), ESRCH);
	assert_int_equal(slim_cgroup_class_read(&fs, rel, SLIM_CGROUP_BACKGROUND, pids, 8,
		&cpu_us), 0);
	assert_int_equal(slim_cgroup_class_read(&fs, "no/such/session", SLIM_CGROUP_BACKGROUND,
		pids, 8, &cpu_us), -1);
}

/*
 * The compositor's policy, this process playing the compositor: clients
 * go to background, or hidden while detached; focus takes a client and
 * its children to interactive and back; attach and detach move them all.
 */
static void test_policy(void **state)
{
	/* started outside the session: never taken in */
	pid_t outsider = sleeper_with_child();
	/* clients the compositor started begin in its class */
	assert_int_equal(slim_cgroup_move(&fs, rel, SLIM_CGROUP_COMPOSITOR, getpid()), 0);
	pid_t a = sleeper_with_child(), b = sleeper_with_child();
	struct slim_sched *sched = slim_sched_create(ROOT);
	assert_non_null(sched);
	assert_true(slim_sched_enabled(sched));
	pid_t kids[4];
	assert_int_equal(slim_cgroup_descendants(a, kids, 4), 1);
	pid_t a_child = kids[0];

	/* no console yet */
	slim_sched_client(sched, a);
	assert_true(in_class(a, SLIM_CGROUP_HIDDEN));
	assert_true(in_class(a_child, SLIM_CGROUP_HIDDEN));
	slim_sched_focus(sched, a);
	slim_sched_apply(sched);
	assert_true(in_class(a, SLIM_CGROUP_HIDDEN));
	/* noted at once, moved when the compositor applies (after its frame) */
	slim_sched_attached(sched, true);
	assert_true(slim_sched_pending(sched));
	assert_true(in_class(a, SLIM_CGROUP_HIDDEN));
	slim_sched_apply(sched);
	assert_false(slim_sched_pending(sched));
	assert_true(in_class(a, SLIM_CGROUP_INTERACTIVE));
	assert_true(in_class(a_child, SLIM_CGROUP_INTERACTIVE));
	slim_sched_client(sched, b);
	assert_true(in_class(b, SLIM_CGROUP_BACKGROUND));
	/* focus moves */
	slim_sched_focus(sched, b);
	assert_true(in_class(a, SLIM_CGROUP_INTERACTIVE));
	slim_sched_apply(sched);
	assert_true(in_class(b, SLIM_CGROUP_INTERACTIVE));
	assert_true(in_class(a, SLIM_CGROUP_BACKGROUND));
	assert_true(in_class(a_child, SLIM_CGROUP_BACKGROUND));
	assert_true(slim_sched_stats(sched)->max_us > 0);
	print_message("a focus change, 4 processes: %llu us\n",
		(unsigned long long)slim_sched_stats(sched)->last_us);
	/* a server for every client (Xwayland) stays with the compositor */
	pid_t server = sleeper_with_child();
	slim_sched_client(sched, server);
	slim_sched_server(sched, server);
	assert_true(in_class(server, SLIM_CGROUP_COMPOSITOR));
	slim_sched_attached(sched, false);
	slim_sched_apply(sched);
	slim_sched_attached(sched, true);
	slim_sched_apply(sched);
	slim_sched_focus(sched, a);
	slim_sched_apply(sched);
	slim_sched_focus(sched, b);
	slim_sched_apply(sched);
	assert_true(in_class(server, SLIM_CGROUP_COMPOSITOR));
	kill_tree(server);
	/* changes that cancel out before they are applied move nothing */
	uint64_t moves = slim_sched_stats(sched)->moves;
	slim_sched_focus(sched, a);
	slim_sched_focus(sched, b);
	slim_sched_attached(sched, false);
	slim_sched_attached(sched, true);
	assert_false(slim_sched_pending(sched));
	slim_sched_apply(sched);
	assert_int_equal(slim_sched_stats(sched)->moves, moves);
	/* a focused client that exits; then nobody */
	kill_tree(b);
	slim_sched_focus(sched, a);
	slim_sched_apply(sched);
	assert_true(in_class(a, SLIM_CGROUP_INTERACTIVE));
	slim_sched_attached(sched, false);
	slim_sched_apply(sched);
	assert_true(in_class(a, SLIM_CGROUP_HIDDEN));
	assert_true(in_class(a_child, SLIM_CGROUP_HIDDEN));
	/* detached and attached again with the focus moved meanwhile */
	slim_sched_focus(sched, outsider);
	slim_sched_attached(sched, true);
	slim_sched_apply(sched);
	assert_false(in_class(outsider, SLIM_CGROUP_INTERACTIVE));
	assert_true(in_class(a, SLIM_CGROUP_BACKGROUND));
	kill_tree(outsider);
	/* a class removed under it: said once, then nothing more is tried */
	kill_tree(a);
	for (size_t i = 0; i < fs.n; i++) {
		char dir[512];
		snprintf(dir, sizeof(dir), "%s/%s/interactive", fs.mount[i], rel);
		assert_int_equal(rmdir(dir), 0);
	}
	pid_t c = sleeper_with_child();
	slim_sched_client(sched, c);
	assert_true(in_class(c, SLIM_CGROUP_BACKGROUND));
	slim_sched_focus(sched, c);
	slim_sched_apply(sched);
	assert_false(slim_sched_enabled(sched));
	assert_true(in_class(c, SLIM_CGROUP_BACKGROUND));
	kill_tree(c);
	for (size_t i = 0; i < fs.n; i++) {
		char procs[512];
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", fs.mount[i]);
		FILE *f = fopen(procs, "we");
		assert_non_null(f);
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
	}
	slim_sched_destroy(sched);
	slim_sched_destroy(NULL);
}

/* Where there is no tree (a standalone session): an object that does nothing. */
static void test_no_tree(void **state)
{
	struct slim_sched *sched = slim_sched_create(ROOT);
	assert_non_null(sched);
	assert_false(slim_sched_enabled(sched));
	slim_sched_focus(sched, getpid());
	slim_sched_attached(sched, true);
	slim_sched_destroy(sched);
}

static void test_config_keys(void **state)
{
	struct slim_cgroup_policy p;
	slim_cgroup_policy_defaults(&p);
	assert_int_equal(slim_cgroup_policy_apply(&p, "weight_interactive", "500"), 1);
	assert_int_equal(p.weight[SLIM_CGROUP_INTERACTIVE], 500);
	assert_int_equal(slim_cgroup_policy_apply(&p, "weight_interactive", "0"), 0);
	assert_int_equal(slim_cgroup_policy_apply(&p, "weight_background", "10001"), 0);
	assert_int_equal(slim_cgroup_policy_apply(&p, "weight_nobody", "5"), -1);
	assert_int_equal(slim_cgroup_policy_apply(&p, "cgroups", "off"), 1);
	assert_false(p.enabled);
	assert_int_equal(slim_cgroup_policy_apply(&p, "cgroups", "maybe"), 0);
	assert_int_equal(slim_cgroup_policy_apply(&p, "memory_low", "512"), 1);
	assert_true(p.memory_low == 512ull << 20);
	assert_int_equal(slim_cgroup_policy_apply(&p, "memory_low", "-1"), 0);
	assert_int_equal(slim_cgroup_policy_apply(&p, "session_memory_max", "2048"), 1);
	assert_true(p.session_memory_max == 2048ull << 20);
	assert_int_equal(slim_cgroup_policy_apply(&p, "session_memory_high", "0"), 1);
	assert_true(p.session_memory_high == 0);
	assert_int_equal(slim_cgroup_policy_apply(&p, "session_memory_max", "2G"), 0);
	assert_true(p.session_memory_max == 2048ull << 20);
	assert_int_equal(slim_cgroup_policy_apply(&p, "detached", "fair"), 1);
	assert_false(p.detached_idle);
	assert_int_equal(slim_cgroup_policy_apply(&p, "listen", "x"), -1);
	/* the slice: a directory's name, nothing that climbs or hides */
	assert_string_equal(p.slice, "slimland.slice");
	const char *bad[] = { "", ".", "..", ".x", "a/b", "../x", "a b", "a\nb" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(slim_cgroup_policy_apply(&p, "cgroup_slice", bad[i]), 0);
	}
	assert_string_equal(p.slice, "slimland.slice");
	assert_int_equal(slim_cgroup_policy_apply(&p, "cgroup_slice", "st1x-a.slice"), 1);
	assert_string_equal(p.slice, "st1x-a.slice");
	/* the manager's paths go below it (v1: at the hierarchy's root) */
	struct slim_cgroup_fs v1 = { .version = 1, .n = 1, .mount = { "/nonexistent" } };
	char where[256], path[SLIM_CGROUP_PATH];
	slim_cgroup_manager_base(&v1, p.slice, where, sizeof(where));
	assert_string_equal(where, "/nonexistent/st1x-a.slice");
	slim_cgroup_path(path, sizeof(path), 5, 2);
	assert_string_equal(path, "st1x-a.slice/user-5.slice/session-2");
	slim_cgroup_manager_base(&v1, "slimland.slice", where, sizeof(where));
	slim_cgroup_path(path, sizeof(path), 5, 0);
	assert_string_equal(path, "slimland.slice/user-5.slice");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_keys),
		cmocka_unit_test(test_no_tree),
		cmocka_unit_test(test_session_built),
		cmocka_unit_test(test_move_and_read),
		cmocka_unit_test(test_memory_limit),
		cmocka_unit_test(test_policy),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
