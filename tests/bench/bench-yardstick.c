/*
 * SLIM's yardstick (section 6.1, Figure 9) against background users, with
 * the cgroup policy off and on in the same run.
 *
 * The yardstick: slim-echo --work-ms 30 in a real slimland session, keys
 * from this process as its console every 150 ms; each key burns 30 ms of
 * the client's CPU, then repaints. Latency added = key sent -> frame
 * presented, less the 30 ms of work.
 *
 * The background: 4 users running the duty cycles of the paper's
 * applications (3, 7, 12 and 17% of a core), and B users with a busy loop
 * each, B from 0 to well past saturation. Every background user is a user
 * slice of its own with a session, its processes in that session's
 * background class, as the compositor would class an unfocused client.
 *
 *   off       every process in one cgroup: a stock scheduler
 *   on        the tree of src/cgroup: the yardstick's compositor and
 *             focused client in their classes; every user equal
 *   on, idle  the same, the background users' sessions shown on no
 *             console (detached = idle, the default): their slices idle
 *   on, own   the busy loops the yardstick user's own, in its session's
 *             background class (an unfocused terminal building something)
 *
 * Then Wong and Seltzer's echo test: 20 keys a second into foot while 0, 5,
 * 10 and 20 busy loops run (placed as above), key to frame; and fairness:
 * two users each with a yardstick, one with 1 busy loop and one with 8,
 * the policy on: each one's latency and CPU share.
 *
 *   bench-yardstick [--json] [--quick] [--plot FILE.png]
 *
 * Needs root and a writable cgroup hierarchy (v1 cpu or v2 with cpu).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/input-event-codes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cgroup.h"
#include "plot.h"
#include "session.h"

#define WORK_MS 30
#define THINK_MS 150
#define MAX_LOOPS 32
#define DUTY_USERS 4
#define YARD_UID 100000u
#define LOAD_UID 100100u

enum mode { OFF, ON, ON_IDLE, ON_OWN, MODES };
static const char *const mode_names[MODES] = { "off", "on", "on_idle", "on_own" };

static struct slim_cgroup_fs fs;
/* what the busy loops compute, so that the compiler keeps them */
static volatile uint64_t sink;
static struct slim_cgroup_policy policy;
static pid_t load[MAX_LOOPS + DUTY_USERS];
static size_t n_load;

/* Where this process was started, in each hierarchy: it goes back there. */
static char origin[SLIM_CGROUP_MAX_HIER][256];

static void find_origin(void)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[512];
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
		if (!b) {
			continue;
		}
		*b = '\0';
		for (size_t i = 0; i < fs.n; i++) {
			bool match = fs.version == 2 ? a[1] == '\0' :
				strstr(a + 1, fs.controllers[i]) != NULL;
			if (match && !origin[i][0]) {
				snprintf(origin[i], sizeof(origin[i]), "%s", b + 1);
			}
		}
	}
	if (f) {
		fclose(f);
	}
}

/* This process, and what it forks from now on, into `rel`'s class (NULL: back home). */
static void join(const char *rel, enum slim_cgroup_class class)
{
	for (size_t i = 0; i < fs.n; i++) {
		char path[512];
		if (rel) {
			snprintf(path, sizeof(path), "%s/%s/%s/cgroup.procs", fs.mount[i], rel,
				slim_cgroup_class_name(class));
		} else {
			snprintf(path, sizeof(path), "%s%s/cgroup.procs", fs.mount[i], origin[i]);
		}
		FILE *f = fopen(path, "we");
		if (f) {
			fputs("0\n", f);
			fclose(f);
		}
	}
}

/* A background user: busy `duty` percent of a 100 ms period (100: a busy loop). */
static void start_load(uint32_t uid, unsigned duty, bool classed)
{
	char rel[SLIM_CGROUP_PATH];
	slim_cgroup_path(rel, sizeof(rel), uid, 1);
	pid_t pid = fork();
	if (pid != 0) {
		load[n_load++] = pid;
		return;
	}
	if (classed) {
		join(rel, SLIM_CGROUP_BACKGROUND);
	}
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	/* a phase of its own */
	next.tv_nsec = (next.tv_nsec + (long)(uid % 10) * 10000000L) % 1000000000L;
	for (;;) {
		struct timespec now;
		uint64_t until = (uint64_t)next.tv_sec * 1000000000u + (uint64_t)next.tv_nsec +
			duty * 1000000ull;
		do {
			for (int i = 0; i < 10000; i++) {
				sink += (uint64_t)i;
			}
			clock_gettime(CLOCK_MONOTONIC, &now);
		} while (duty >= 100 ||
			(uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec < until);
		next.tv_nsec += 100000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
}

static void stop_load(void)
{
	for (size_t i = 0; i < n_load; i++) {
		kill(load[i], SIGKILL);
		waitpid(load[i], NULL, 0);
	}
	n_load = 0;
}

static bool make_session(uint32_t uid)
{
	char rel[SLIM_CGROUP_PATH], why[256];
	slim_cgroup_path(rel, sizeof(rel), uid, 1);
	if (!slim_cgroup_session_create(&fs, &policy, rel, 0, 0, why, sizeof(why))) {
		fprintf(stderr, "bench-yardstick: %s\n", why);
		return false;
	}
	return true;
}

static void remove_session(uint32_t uid)
{
	char rel[SLIM_CGROUP_PATH];
	slim_cgroup_path(rel, sizeof(rel), uid, 1);
	slim_cgroup_session_remove(&fs, rel);
	slim_cgroup_path(rel, sizeof(rel), uid, 0);
	for (size_t i = 0; i < fs.n; i++) {
		char dir[512];
		snprintf(dir, sizeof(dir), "%s/%s", fs.mount[i], rel);
		rmdir(dir);
	}
}

static void set_idle(uint32_t uid, bool idle)
{
	char rel[SLIM_CGROUP_PATH];
	slim_cgroup_path(rel, sizeof(rel), uid, 0);
	slim_cgroup_set_idle(&fs, rel, idle);
}

static char *yardstick_argv[] = { SLIM_ECHO_BIN, "--work-ms", "30", NULL };
/* cat in canonical mode: the tty echoes 'a', and BackSpace erases it again */
static char *foot_argv[] = { "foot", "-o", "cursor.blink=no", "sh", "-c",
	"exec cat >/dev/null", NULL };

/* A session of `uid` running `argv`, in its classes (classed) or where this process is. */
static bool start_client(struct bench_session *s, pid_t *client, uint32_t uid, bool classed,
		char **argv)
{
	char rel[SLIM_CGROUP_PATH];
	slim_cgroup_path(rel, sizeof(rel), uid, 1);
	if (classed) {
		join(rel, SLIM_CGROUP_COMPOSITOR);
	}
	bool ok = bench_session_start(s, SLIMLAND_BIN, 640, 480, BENCH_LINK_CLEAR);
	bool echo = argv == yardstick_argv; /* slim-echo says when it is ready */
	int out = -1;
	char line[64];
	*client = ok ? bench_session_client(s, argv, echo ? &out : NULL) : -1;
	ok = ok && *client > 0 && (!echo || bench_read_line(out, line, sizeof(line), 10000));
	if (out >= 0) {
		close(out);
	}
	if (classed) {
		join(NULL, 0);
	}
	if (ok) {
		bench_session_settle(s, 300, 10000);
	}
	return ok;
}

static bool start_yardstick(struct bench_session *s, pid_t *client, uint32_t uid, bool classed)
{
	return start_client(s, client, uid, classed, yardstick_argv);
}

static void stop_yardstick(struct bench_session *s, pid_t client)
{
	if (client > 0) {
		kill(client, SIGTERM);
		waitpid(client, NULL, 0);
	}
	bench_session_stop(s);
}

struct stats {
	double min_ms, mean_ms, p95_ms, max_ms;
	size_t missed;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static struct stats summarise(double *v, size_t n, size_t missed)
{
	struct stats st = { .missed = missed };
	if (n == 0) {
		return st;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		sum += v[i];
	}
	st.mean_ms = sum / (double)n;
	st.p95_ms = v[(size_t)(0.95 * (double)(n - 1))];
	st.min_ms = v[0];
	st.max_ms = v[n - 1];
	return st;
}

/*
 * Keys to every session in turn, one every period_ms for each (BackSpace
 * every other one with `alternate`); the time each took beyond work_ms,
 * into lat[session][k].
 */
static void measure_keys(struct bench_session *s, size_t n_sessions, size_t keys,
		int period_ms, int work_ms, bool alternate, double **lat, size_t *n, size_t *missed)
{
	for (size_t k = 0; k < keys + 2; k++) {
		uint32_t code = alternate && (k & 1) ? KEY_BACKSPACE : KEY_A;
		uint64_t period_start = bench_now_us();
		for (size_t m = 0; m < n_sessions; m++) {
			uint64_t t0 = bench_now_us();
			bench_session_key(&s[m], code, true);
			bool got = bench_session_wait_frame(&s[m], 3000);
			bench_session_key(&s[m], code, false);
			if (k < 2) {
				continue; /* warm-up */
			}
			if (!got) {
				missed[m]++;
				continue;
			}
			double ms = (double)(s[m].last.applied_us - t0) / 1000.0 - work_ms;
			lat[m][n[m]++] = ms < 0 ? 0 : ms;
		}
		uint64_t spent = (bench_now_us() - period_start) / 1000;
		int rest = period_ms * (int)n_sessions - (int)spent;
		for (size_t m = 0; rest > 0 && m < n_sessions; m++) {
			int each = rest / (int)(n_sessions - m);
			bench_session_settle(&s[m], each, each);
			rest -= each;
		}
	}
}

static void measure(struct bench_session *s, size_t n_sessions, size_t keys, double **lat,
		size_t *n, size_t *missed)
{
	measure_keys(s, n_sessions, keys, THINK_MS, WORK_MS, false, lat, n, missed);
}

/* The background of a point: 4 duty-cycle users and `loops` busy loops. */
static void start_background(enum mode mode, unsigned loops, bool duty_users)
{
	bool classed = mode != OFF;
	for (unsigned i = 0; i < DUTY_USERS + loops; i++) {
		set_idle(LOAD_UID + i, mode == ON_IDLE);
	}
	static const unsigned duty[DUTY_USERS] = { 3, 7, 12, 17 };
	for (unsigned i = 0; duty_users && i < DUTY_USERS; i++) {
		start_load(LOAD_UID + i, duty[i], classed);
	}
	for (unsigned i = 0; i < loops; i++) {
		start_load(mode == ON_OWN ? YARD_UID : LOAD_UID + DUTY_USERS + i, 100, classed);
	}
}

/*
 * Wong and Seltzer's echo test: 20 keys a second into foot ('a' and
 * BackSpace in turn) while busy loops run; key to frame on the console.
 */
/* Why a run gave no figure, said once: a benchmark that fails says where. */
static bool run_said(bool started, size_t answered, const char *what, enum mode mode,
		unsigned loops)
{
	if (!started) {
		fprintf(stderr, "bench-yardstick: %s, policy %s, %u busy loops: the session or its "
			"client did not start\n", what, mode_names[mode], loops);
	} else if (answered == 0) {
		fprintf(stderr, "bench-yardstick: %s, policy %s, %u busy loops: no key was answered "
			"within 3 s\n", what, mode_names[mode], loops);
	}
	return started && answered > 0;
}

static bool run_echo(enum mode mode, unsigned loops, size_t keys, struct stats *out)
{
	start_background(mode, loops, false);
	struct bench_session s;
	pid_t client;
	bool ok = start_client(&s, &client, YARD_UID, mode != OFF, foot_argv);
	double *lat = calloc(keys + 2, sizeof(double));
	size_t n = 0, missed = 0;
	if (ok && lat) {
		measure_keys(&s, 1, keys, 50, 0, true, &lat, &n, &missed);
		*out = summarise(lat, n, missed);
	}
	free(lat);
	stop_yardstick(&s, client);
	stop_load();
	return run_said(ok, n, "echo in foot", mode, loops);
}

static bool run_point(enum mode mode, unsigned loops, size_t keys, struct stats *out)
{
	start_background(mode, loops, true);
	struct bench_session s;
	pid_t client;
	bool ok = start_yardstick(&s, &client, YARD_UID, mode != OFF);
	double *lat = calloc(keys + 2, sizeof(double));
	size_t n = 0, missed = 0;
	if (ok && lat) {
		measure(&s, 1, keys, &lat, &n, &missed);
		*out = summarise(lat, n, missed);
	}
	free(lat);
	stop_yardstick(&s, client);
	stop_load();
	return run_said(ok, n, "yardstick", mode, loops);
}

/* CPU a user's slice has used, µs (all its sessions' classes). */
static uint64_t user_cpu_us(uint32_t uid)
{
	char rel[SLIM_CGROUP_PATH];
	slim_cgroup_path(rel, sizeof(rel), uid, 1);
	uint64_t sum = 0;
	for (int c = 0; c < SLIM_CGROUP_CLASSES; c++) {
		pid_t pids[1];
		uint64_t us;
		if (slim_cgroup_class_read(&fs, rel, c, pids, 0, &us) >= 0) {
			sum += us;
		}
	}
	return sum;
}

struct fairness {
	struct stats yard[2];
	double share[2]; /* of the machine's CPU over the run */
};

/* Two users with a yardstick each; user 0 also runs 1 busy loop, user 1 runs 8. */
static bool run_fairness(size_t keys, struct fairness *f)
{
	static const unsigned loops[2] = { 1, 8 };
	for (int u = 0; u < 2; u++) {
		set_idle(YARD_UID + (uint32_t)u, false);
	}
	struct bench_session s[2];
	pid_t client[2] = { -1, -1 };
	bool ok = true;
	for (int u = 0; u < 2; u++) {
		ok = ok && start_yardstick(&s[u], &client[u], YARD_UID + (uint32_t)u, true);
	}
	uint64_t cpu0[2], t0 = bench_now_us();
	for (int u = 0; ok && u < 2; u++) {
		cpu0[u] = user_cpu_us(YARD_UID + (uint32_t)u);
	}
	/* the busy loops of user u run in u's own session, background class */
	for (int u = 0; ok && u < 2; u++) {
		char rel[SLIM_CGROUP_PATH];
		slim_cgroup_path(rel, sizeof(rel), YARD_UID + (uint32_t)u, 1);
		for (unsigned i = 0; i < loops[u]; i++) {
			pid_t pid = fork();
			if (pid == 0) {
				join(rel, SLIM_CGROUP_BACKGROUND);
				for (;;) {
					sink++;
				}
			}
			load[n_load++] = pid;
		}
	}
	double *lat[2] = { calloc(keys + 2, sizeof(double)), calloc(keys + 2, sizeof(double)) };
	size_t n[2] = { 0, 0 }, missed[2] = { 0, 0 };
	if (ok && lat[0] && lat[1]) {
		measure(s, 2, keys, lat, n, missed);
		double wall_us = (double)(bench_now_us() - t0) * (double)sysconf(_SC_NPROCESSORS_ONLN);
		for (int u = 0; u < 2; u++) {
			f->yard[u] = summarise(lat[u], n[u], missed[u]);
			f->share[u] = (double)(user_cpu_us(YARD_UID + (uint32_t)u) - cpu0[u]) / wall_us;
		}
	}
	stop_load();
	for (int u = 0; u < 2; u++) {
		stop_yardstick(&s[u], client[u]);
		free(lat[u]);
	}
	return run_said(ok, n[0] < n[1] ? n[0] : n[1], "fairness", ON, 9);
}

int main(int argc, char *argv[])
{
	bool json = false, quick = false;
	const char *plot_path = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--quick") == 0) {
			quick = true;
		} else if (strcmp(argv[i], "--plot") == 0 && i + 1 < argc) {
			plot_path = argv[++i];
		} else {
			fprintf(stderr, "usage: %s [--json] [--quick] [--plot FILE.png]\n", argv[0]);
			return 2;
		}
	}
	char why[256];
	if (geteuid() != 0 || !slim_cgroup_fs_detect(&fs, "/sys/fs/cgroup", why, sizeof(why))) {
		fprintf(stderr, "bench-yardstick: needs root and cgroups (%s)\n",
			geteuid() != 0 ? "not root" : why);
		return 77;
	}
	slim_cgroup_policy_defaults(&policy);
	find_origin();
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	size_t keys = quick ? 5 : 40;
	/* 0, 1, 2, then 1 to 8 a core: well past saturation */
	unsigned points[8];
	size_t n_points = 0;
	static const unsigned per_core[] = { 1, 2, 3, 4, 6, 8 };
	points[n_points++] = 0;
	points[n_points++] = 1;
	points[n_points++] = 2;
	for (size_t i = 0; i < sizeof(per_core) / sizeof(per_core[0]) && n_points < 8; i++) {
		unsigned v = per_core[i] * (unsigned)cores;
		if (v > points[n_points - 1] && v <= MAX_LOOPS) {
			points[n_points++] = v;
		}
	}
	if (quick) {
		n_points = 2;
	}
	/* the echo test's: 0, 5, 10 and 20 */
	static const unsigned echo_loops[] = { 0, 5, 10, 20 };
	size_t n_echo = quick ? 1 : 4;
	unsigned max_loops = points[n_points - 1] > echo_loops[n_echo - 1] ?
		points[n_points - 1] : echo_loops[n_echo - 1];
	bool ok = true;
	for (unsigned u = 0; u < 2; u++) {
		ok = ok && make_session(YARD_UID + u);
	}
	for (unsigned i = 0; ok && i < DUTY_USERS + max_loops; i++) {
		ok = make_session(LOAD_UID + i);
	}
	static struct stats res[8][MODES];
	for (size_t p = 0; ok && p < n_points; p++) {
		for (int m = 0; ok && m < MODES; m++) {
			ok = run_point(m, points[p], keys, &res[p][m]);
		}
	}
	static struct stats echo[4][MODES];
	for (size_t p = 0; ok && p < n_echo; p++) {
		for (int m = 0; ok && m < MODES; m++) {
			ok = run_echo(m, echo_loops[p], quick ? 5 : 100, &echo[p][m]);
		}
	}
	struct fairness fair = { 0 };
	ok = ok && run_fairness(keys, &fair);
	for (unsigned u = 0; u < 2; u++) {
		remove_session(YARD_UID + u);
	}
	for (unsigned i = 0; i < DUTY_USERS + max_loops; i++) {
		remove_session(LOAD_UID + i);
	}
	if (!ok) {
		fprintf(stderr, "bench-yardstick: a run failed\n");
		return 1;
	}
	/* the target: 4 busy loops a core */
	size_t at = 0;
	for (size_t p = 0; p < n_points; p++) {
		if (points[p] == (unsigned)(4 * cores)) {
			at = p;
		}
	}
	double fair_ratio = fair.share[0] > fair.share[1] ? fair.share[1] / fair.share[0] :
		fair.share[0] / fair.share[1];
	if (json) {
		printf("{\"cores\": %ld, \"keys\": %zu, \"cgroup_version\": %d", cores, keys,
			fs.version);
		for (size_t p = 0; p < n_points; p++) {
			for (int m = 0; m < MODES; m++) {
				printf(", \"loops_%u_%s_mean_ms\": %.2f, \"loops_%u_%s_p95_ms\": %.2f",
					points[p], mode_names[m], res[p][m].mean_ms, points[p], mode_names[m],
					res[p][m].p95_ms);
			}
		}
		printf(", \"target_loops\": %u", points[at]);
		for (int m = 0; m < MODES; m++) {
			printf(", \"target_%s_p95_ms\": %.2f", mode_names[m], res[at][m].p95_ms);
			if (m != OFF) {
				printf(", \"target_%s_over_off_p95_ratio\": %.3f", mode_names[m],
					res[at][OFF].p95_ms > 0 ? res[at][m].p95_ms / res[at][OFF].p95_ms : 0);
			}
		}
		for (size_t p = 0; p < n_echo; p++) {
			for (int m = 0; m < MODES; m++) {
				printf(", \"echo_%u_%s_mean_ms\": %.2f, \"echo_%u_%s_max_ms\": %.2f",
					echo_loops[p], mode_names[m], echo[p][m].mean_ms, echo_loops[p],
					mode_names[m], echo[p][m].max_ms);
			}
		}
		printf(", \"fair_user1_p95_ms\": %.2f, \"fair_user8_p95_ms\": %.2f"
			", \"fair_user1_cpu_share\": %.3f, \"fair_user8_cpu_share\": %.3f"
			", \"fair_share_ratio\": %.3f}\n", fair.yard[0].p95_ms, fair.yard[1].p95_ms,
			fair.share[0], fair.share[1], fair_ratio);
	} else {
		printf("SLIM's yardstick (30 ms of CPU a key, a key every 150 ms) against "
			"background users\n(cf. SLIM 6.1, Figure 9): latency added to the 30 ms, "
			"%zu keys a point, %ld cores, cgroup v%d\n\n", keys, cores, fs.version);
		printf("%10s | %17s | %17s | %17s | %17s\n", "busy loops", "off: mean   p95",
			"on: mean   p95", "on, idle: mean p95", "on, own: mean p95");
		for (size_t p = 0; p < n_points; p++) {
			printf("%10u |", points[p]);
			for (int m = 0; m < MODES; m++) {
				printf(" %6.1f %6.1f ms |", res[p][m].mean_ms, res[p][m].p95_ms);
			}
			printf("\n");
		}
		printf("\nand 4 users at 3, 7, 12 and 17%% duty cycles throughout; each "
			"background user a\nuser slice of its own. off: one cgroup for all; on: the "
			"policy, every user equal;\non, idle: the background users' sessions on no "
			"console (detached = idle);\non, own: the busy loops in the yardstick "
			"user's own session, an unfocused client's.\n");
		printf("target, %u busy loops (4 a core), policy on: p95 <= 10 ms:\n", points[at]);
		for (int m = ON; m < MODES; m++) {
			printf("  %-8s %6.1f ms %s (off: %.1f ms, %.2fx)\n", mode_names[m],
				res[at][m].p95_ms, res[at][m].p95_ms <= 10 ? "ok" : "MISSED",
				res[at][OFF].p95_ms, res[at][OFF].p95_ms > 0 ?
				res[at][m].p95_ms / res[at][OFF].p95_ms : 0);
		}
		printf("\nEcho in foot, 20 keys a second, while busy loops run (cf. Wong and "
			"Seltzer): key to\nframe on the console, min / mean / max, ms\n\n");
		printf("%10s |", "busy loops");
		for (int m = 0; m < MODES; m++) {
			printf(" %20s |", mode_names[m]);
		}
		printf("\n");
		for (size_t p = 0; p < n_echo; p++) {
			printf("%10u |", echo_loops[p]);
			for (int m = 0; m < MODES; m++) {
				printf(" %5.1f %6.1f %6.1f |", echo[p][m].min_ms, echo[p][m].mean_ms,
					echo[p][m].max_ms);
			}
			printf("\n");
		}
		printf("target with the policy on: under 50 ms\n");
		printf("\nFairness, the policy on: two users with a yardstick each\n");
		printf("%-22s %9s %9s %10s\n", "user", "mean", "p95", "CPU share");
		for (int u = 0; u < 2; u++) {
			printf("%-22s %6.1f ms %6.1f ms %9.1f%%\n", u ? "with 8 busy loops" :
				"with 1 busy loop", fair.yard[u].mean_ms, fair.yard[u].p95_ms,
				100 * fair.share[u]);
		}
		printf("shares within %.0f%% of each other (target 10%%)\n",
			100 * (1 - fair_ratio));
	}
	if (plot_path) {
		double x[8], y[MODES][8];
		for (size_t p = 0; p < n_points; p++) {
			x[p] = points[p];
			for (int m = 0; m < MODES; m++) {
				y[m][p] = res[p][m].p95_ms;
			}
		}
		const double *series[MODES] = { y[OFF], y[ON], y[ON_IDLE], y[ON_OWN] };
		if (!bench_plot_png(plot_path, x, series, MODES, n_points, 10)) {
			fprintf(stderr, "bench-yardstick: cannot write %s\n", plot_path);
			return 1;
		}
	}
	return 0;
}
