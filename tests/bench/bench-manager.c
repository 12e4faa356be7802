/*
 * The session manager at scale: one slimland-sessiond (transport dtls)
 * and N consoles (1,000 by default), most of them idle at a greeter. The
 * consoles are this process's (managed.c: the console's own control
 * association, HELLO and PING as slimland-console says them, each with a
 * key of its own, approved beforehand in the manager's KEY_DIR/consoles
 * as `slimlandctl approve` writes it).
 *
 * Each console without a session gets a greeter: a greeter compositor
 * (slimland) and the `greeter =` program, here slim-echo (one still
 * window) on a small screen, so that N of them fit in memory; the
 * manager's figures and the greeters' are apart.
 *
 * Measured: the time until the manager knows all N (answered HELLO) and
 * until all show their greeter; over two windows of --idle seconds each
 * (30 by default) the manager's CPU (utime + stime, /proc/PID/stat, as a
 * percentage of one core) and its wakeups (context switches); its RSS and
 * PSS; what one greeter costs (PSS of its compositor and client); and the
 * time of the real `slimlandctl list` and `slimlandctl consoles` (p50 and
 * max of --calls calls), the consoles pinging meanwhile.
 * Targets: at most 2% of a core idle, `slimlandctl list` p50 at most 100 ms.
 *
 * Needs root (a greeter user, greeter uids, the manager: managed-rig.h,
 * which removes them at exit, on failure and on SIGINT/SIGTERM/SIGHUP);
 * exits 77 (skipped) otherwise. Take the figures from a release build:
 * ASan inflates the manager's CPU and memory, and the greeters' far more.
 *
 *   bench-manager [--json] [--quick] [--consoles N] [--idle SECONDS] [--calls N] [-v]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "managed.h"
#include "managed-rig.h"
#include "session.h"
#include "slim-log.h"

#define WIDTH 320
#define HEIGHT 240
#define MAX_CALLS 100
#define TARGET_IDLE_PERCENT 2.0
#define TARGET_LIST_MS 100.0

static pid_t sessiond = -1;

/*
 * A key for each console, and the manager's list of consoles naming them
 * approved, as `slimlandctl approve` leaves it.
 */
static bool make_consoles(size_t n, const char *key_dir)
{
	char path[160];
	snprintf(path, sizeof(path), "%s/consoles", key_dir);
	FILE *list = fopen(path, "w");
	if (!list) {
		return false;
	}
	bool ok = true;
	for (size_t i = 0; i < n && ok; i++) {
		char key[128], err[256], id[SLIM_CONSOLE_ID_LEN + 1];
		char hex[2 * SLIM_SEC_FINGERPRINT_LEN + 1];
		snprintf(key, sizeof(key), "%s/console-%zu.key", rig_tmpdir, i);
		struct slim_sec_identity *identity = slim_sec_identity_load(key, true, err,
			sizeof(err));
		if (!identity) {
			fprintf(stderr, "bench-manager: %s\n", err);
			ok = false;
			break;
		}
		const uint8_t *fp = slim_sec_identity_fingerprint(identity);
		slim_sec_fingerprint_id(fp, id);
		slim_sec_fingerprint_hex(fp, hex);
		ok = fprintf(list, "approved %s sha256:%s desk-%zu\n", id, hex, i) > 0;
		slim_sec_identity_destroy(identity);
	}
	return fclose(list) == 0 && ok;
}

static bool start_sessiond(uint16_t port, size_t n)
{
	char key_dir[128], extra[256];
	snprintf(key_dir, sizeof(key_dir), "%s/keys", rig_tmpdir);
	if (mkdir(key_dir, 0700) != 0 || !make_consoles(n, key_dir)) {
		return false;
	}
	/* the consoles approved beforehand; no cgroups for greeters alone */
	snprintf(extra, sizeof(extra), "enroll = approve\ncgroups = off\nmax_consoles = %zu\n", n);
	if (!rig_start_sessiond("mgr", port, SLIM_SEC_DTLS, key_dir, extra)) {
		return false;
	}
	sessiond = rig_sessiond_pid();
	return true;
}

/* The consoles, and what waiting on them counts */

static struct bench_console *consoles;
static size_t n_consoles;

static size_t count_known(void)
{
	size_t k = 0;
	for (size_t i = 0; i < n_consoles; i++) {
		k += consoles[i].mgr_attached;
	}
	return k;
}

static size_t count_greeted(void)
{
	size_t k = 0;
	for (size_t i = 0; i < n_consoles; i++) {
		k += consoles[i].frames > 0;
	}
	return k;
}

static bool all_known(void *data)
{
	return count_known() == n_consoles;
}

static bool all_greeted(void *data)
{
	return count_greeted() == n_consoles;
}

/* One process's figures */

struct proc_stat {
	uint64_t cpu_ticks;   /* utime + stime */
	uint64_t switches;    /* voluntary and not */
};

static bool read_stat(pid_t pid, struct proc_stat *st)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f) {
		return false;
	}
	size_t len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	/* past the command's parentheses: fields 3.. ; utime and stime are 14 and 15 */
	char *p = strrchr(buf, ')');
	unsigned long long ut, stime;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			&ut, &stime) != 2) {
		return false;
	}
	st->cpu_ticks = ut + stime;
	st->switches = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	char line[256];
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long v;
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
				sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1) {
			st->switches += v;
		}
	}
	if (f) {
		fclose(f);
	}
	return true;
}

/* Pss and Rss of /proc/PID/smaps_rollup, in kB; false if it is gone. */
static bool read_memory(pid_t pid, long *pss_kb, long *rss_kb)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f) {
		return false;
	}
	*pss_kb = *rss_kb = 0;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "Pss: %ld kB", pss_kb);
		sscanf(line, "Rss: %ld kB", rss_kb);
	}
	fclose(f);
	return true;
}

/* The parent of a process; 0 if it is gone. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f) {
		return 0;
	}
	size_t len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	char *p = strrchr(buf, ')');
	int ppid;
	return p && sscanf(p + 2, "%*c %d", &ppid) == 1 ? (pid_t)ppid : 0;
}

/* The greeters: every process the manager started, by program. */
struct greeters {
	size_t compositors, clients, others;
	long compositor_pss_kb, client_pss_kb, other_pss_kb;
};

static void measure_greeters(struct greeters *g)
{
	memset(g, 0, sizeof(*g));
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		char path[64], comm[64] = "";
		pid_t up = *end || pid <= 1 ? 0 : (pid_t)pid;
		for (int depth = 0; up > 1 && up != sessiond && depth < 8; depth++) {
			up = parent_of(up);
		}
		if (up != sessiond || pid == sessiond) {
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		FILE *f = fopen(path, "re");
		if (!f || !fgets(comm, sizeof(comm), f)) {
			comm[0] = '\0';
		}
		if (f) {
			fclose(f);
		}
		long pss, rss;
		if (!read_memory((pid_t)pid, &pss, &rss)) {
			continue;
		}
		if (strncmp(comm, "slimland", 8) == 0) {
			g->compositors++;
			g->compositor_pss_kb += pss;
		} else if (strncmp(comm, "slim-echo", 9) == 0) {
			g->clients++;
			g->client_pss_kb += pss;
		} else {
			g->others++;
			g->other_pss_kb += pss;
		}
	}
	if (d) {
		closedir(d);
	}
}

/*
 * `slimlandctl ARG`, timed from its fork to its exit by a process in
 * between that only waits for it, while this one keeps the consoles
 * running (and answering the manager) meanwhile.
 */
struct ctl_call {
	pid_t pid;
	int status;
	bool exited;
};

static bool ctl_done(void *data)
{
	struct ctl_call *c = data;
	if (!c->exited && waitpid(c->pid, &c->status, WNOHANG) == c->pid) {
		c->exited = true;
	}
	return c->exited;
}

static void timed_ctl(const char *arg, volatile uint64_t *took_us)
{
	char sock[160], out[160];
	snprintf(sock, sizeof(sock), "%s/run-mgr/ctl.sock", rig_tmpdir);
	snprintf(out, sizeof(out), "%s/ctl.out", rig_tmpdir);
	uint64_t t0 = bench_now_us();
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
		}
		execl(SLIMLANDCTL_BIN, SLIMLANDCTL_BIN, "--socket", sock, arg, (char *)NULL);
		_exit(127);
	}
	int status;
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
			WEXITSTATUS(status) == 0) {
		*took_us = bench_now_us() - t0;
		_exit(0);
	}
	_exit(1);
}

static uint64_t time_ctl(const char *arg, size_t *lines)
{
	static volatile uint64_t *took_us;
	if (!took_us) {
		void *m = mmap(NULL, sizeof(*took_us), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			return 0;
		}
		took_us = m;
	}
	*took_us = 0;
	struct ctl_call c = { .pid = fork() };
	if (c.pid == 0) {
		timed_ctl(arg, took_us);
	}
	if (c.pid < 0 || !rig_consoles_run(10000, ctl_done, &c) ||
			!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0) {
		if (c.pid > 0 && !c.exited) {
			kill(c.pid, SIGKILL);
			waitpid(c.pid, NULL, 0);
		}
		return 0;
	}
	char out[160], line[1024];
	snprintf(out, sizeof(out), "%s/ctl.out", rig_tmpdir);
	FILE *f = fopen(out, "re");
	*lines = 0;
	while (f && fgets(line, sizeof(line), f)) {
		(*lines)++;
	}
	if (f) {
		fclose(f);
	}
	return *took_us;
}

struct timing {
	size_t calls, failed, lines;
	double p50_ms, max_ms;
};

static void time_calls(const char *arg, size_t calls, struct timing *t)
{
	uint64_t us[MAX_CALLS];
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < calls; i++) {
		uint64_t took = time_ctl(arg, &t->lines);
		if (took == 0) {
			t->failed++;
			continue;
		}
		us[t->calls++] = took;
	}
	if (t->calls) {
		qsort(us, t->calls, sizeof(us[0]), bench_cmp_u64);
		t->p50_ms = us[t->calls / 2] / 1000.0;
		t->max_ms = us[t->calls - 1] / 1000.0;
	}
}

struct idle {
	double seconds, cpu_percent, wakeups_per_s;
};

static bool measure_idle(int seconds, struct idle *out)
{
	struct proc_stat a, b;
	uint64_t t0 = bench_now_us();
	if (!read_stat(sessiond, &a)) {
		return false;
	}
	rig_consoles_run(seconds * 1000, NULL, NULL);
	if (!read_stat(sessiond, &b)) {
		return false;
	}
	out->seconds = (bench_now_us() - t0) / 1e6;
	out->cpu_percent = 100.0 * (double)(b.cpu_ticks - a.cpu_ticks) /
		(double)sysconf(_SC_CLK_TCK) / out->seconds;
	out->wakeups_per_s = (double)(b.switches - a.switches) / out->seconds;
	return true;
}

struct result {
	size_t consoles, known, greeted;
	double known_s, greeted_s;
	struct idle idle[2];
	long pss_kb, rss_kb;
	struct greeters greeters;
	struct timing list, consoles_list;
};

static void print_json(const struct result *r)
{
	const struct greeters *g = &r->greeters;
	size_t n_g = g->compositors ? g->compositors : 1;
	printf("{\"consoles\": %zu, \"consoles_known\": %zu, \"consoles_greeted\": %zu, "
		"\"screen_px\": \"%dx%d\", \"all_known_s\": %.2f, \"all_greeted_s\": %.2f",
		r->consoles, r->known, r->greeted, WIDTH, HEIGHT, r->known_s, r->greeted_s);
	for (int i = 0; i < 2; i++) {
		printf(", \"manager_cpu_idle_percent_%d\": %.3f, \"manager_wakeups_per_s_%d\": %.1f, "
			"\"idle_window_s_%d\": %.1f", i + 1, r->idle[i].cpu_percent, i + 1,
			r->idle[i].wakeups_per_s, i + 1, r->idle[i].seconds);
	}
	printf(", \"manager_cpu_idle_percent\": %.3f, \"target_idle_percent\": %.1f",
		(r->idle[0].cpu_percent + r->idle[1].cpu_percent) / 2, TARGET_IDLE_PERCENT);
	printf(", \"manager_rss_kb\": %ld, \"manager_pss_kb\": %ld", r->rss_kb, r->pss_kb);
	printf(", \"greeter_compositors\": %zu, \"greeter_clients\": %zu, "
		"\"greeter_compositor_pss_kb\": %ld, \"greeter_client_pss_kb\": %ld, "
		"\"greeter_other_pss_kb\": %ld, \"greeters_pss_kb\": %ld",
		g->compositors, g->clients, g->compositor_pss_kb / (long)n_g,
		g->clients ? g->client_pss_kb / (long)g->clients : 0,
		g->other_pss_kb, g->compositor_pss_kb + g->client_pss_kb + g->other_pss_kb);
	printf(", \"list_calls\": %zu, \"list_failed\": %zu, \"list_p50_ms\": %.2f, "
		"\"list_max_ms\": %.2f, \"target_list_ms\": %.0f", r->list.calls, r->list.failed,
		r->list.p50_ms, r->list.max_ms, TARGET_LIST_MS);
	printf(", \"consoles_list_p50_ms\": %.2f, \"consoles_list_max_ms\": %.2f, "
		"\"consoles_list_lines\": %zu}\n", r->consoles_list.p50_ms, r->consoles_list.max_ms,
		r->consoles_list.lines);
}

static void print_table(const struct result *r)
{
	const struct greeters *g = &r->greeters;
	double idle = (r->idle[0].cpu_percent + r->idle[1].cpu_percent) / 2;
	printf("One session manager (dtls), %zu consoles at %dx%d, each at a greeter "
		"(slimland + slim-echo), idle, pinging\n\n", r->consoles, WIDTH, HEIGHT);
	printf("%-40s %12s\n", "", "value");
	printf("%-40s %10zu\n", "consoles known (answered HELLO)", r->known);
	printf("%-40s %10.2f s\n", "  until all known", r->known_s);
	printf("%-40s %10zu\n", "consoles showing their greeter", r->greeted);
	printf("%-40s %10.2f s\n", "  until all showed it", r->greeted_s);
	for (int i = 0; i < 2; i++) {
		printf("manager CPU, idle window %d (%4.1f s) %10.3f %% of a core, %.0f wakeups/s\n",
			i + 1, r->idle[i].seconds, r->idle[i].cpu_percent, r->idle[i].wakeups_per_s);
	}
	printf("%-40s %10ld kB\n", "manager RSS", r->rss_kb);
	printf("%-40s %10ld kB\n", "manager PSS", r->pss_kb);
	printf("%-40s %10.2f ms (max %.2f, %zu calls)\n", "slimlandctl list p50", r->list.p50_ms,
		r->list.max_ms, r->list.calls);
	printf("%-40s %10.2f ms (max %.2f, %zu lines)\n", "slimlandctl consoles p50",
		r->consoles_list.p50_ms, r->consoles_list.max_ms, r->consoles_list.lines);
	printf("\ngreeters: %zu compositors, PSS %ld kB each; %zu clients, PSS %ld kB each; "
		"all: %.1f MB\n", g->compositors,
		g->compositors ? g->compositor_pss_kb / (long)g->compositors : 0, g->clients,
		g->clients ? g->client_pss_kb / (long)g->clients : 0,
		(g->compositor_pss_kb + g->client_pss_kb + g->other_pss_kb) / 1024.0);
	printf("\ntargets: manager idle <= %.0f%% of a core: %s; slimlandctl list p50 <= "
		"%.0f ms: %s\n", TARGET_IDLE_PERCENT, idle <= TARGET_IDLE_PERCENT ? "ok" : "MISSED",
		TARGET_LIST_MS, r->list.p50_ms <= TARGET_LIST_MS && r->list.calls ? "ok" : "MISSED");
}

int main(int argc, char *argv[])
{
	bool json = false;
	size_t n = 1000, calls = 20;
	int idle_s = 30, settle_s = 5;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--quick") == 0) {
			n = 50;
			idle_s = 5;
			settle_s = 1;
			calls = 10;
		} else if (strcmp(argv[i], "--consoles") == 0 && i + 1 < argc) {
			n = strtoul(argv[++i], NULL, 10);
			n = n < 1 ? 1 : n > 4000 ? 4000 : n;
		} else if (strcmp(argv[i], "--idle") == 0 && i + 1 < argc) {
			idle_s = atoi(argv[++i]);
			idle_s = idle_s < 1 ? 1 : idle_s > 600 ? 600 : idle_s;
		} else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
			calls = strtoul(argv[++i], NULL, 10);
			calls = calls < 1 ? 1 : calls > MAX_CALLS ? MAX_CALLS : calls;
		} else if (strcmp(argv[i], "-v") == 0) {
			rig_verbose = true;
		} else {
			fprintf(stderr, "usage: %s [--json] [--quick] [--consoles N] [--idle SECONDS] "
				"[--calls N] [-v]\n", argv[0]);
			return 2;
		}
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bench-manager: needs root (a greeter user, the session manager): "
			"skipped\n");
		return 77;
	}
	if (access("/usr/sbin/useradd", X_OK) != 0) {
		fprintf(stderr, "bench-manager: needs useradd: skipped\n");
		return 77;
	}
	slim_log_init(rig_verbose ? SLIM_LOG_DEBUG : SLIM_LOG_ERROR, NULL);
	/* two sockets a console, and its key file while it loads */
	struct rlimit nofile = { 4 * n + 256, 4 * n + 256 };
	setrlimit(RLIMIT_NOFILE, &nofile);
	rig_greeter = SLIM_ECHO_BIN;
	rig_greeters = (unsigned)n + 8;
	if (!rig_setup("bench-manager", "mgr")) {
		fprintf(stderr, "bench-manager: cannot set up the greeter user and uids\n");
		return 1;
	}

	uint16_t port = bench_free_port(SOCK_DGRAM);
	if (!start_sessiond(port, n)) {
		fprintf(stderr, "bench-manager: the session manager did not start\n");
		rig_show_logs();
		return 1;
	}
	consoles = calloc(n, sizeof(*consoles));
	if (!consoles) {
		return 1;
	}
	struct result r = { .consoles = n };
	char manager[32];
	snprintf(manager, sizeof(manager), "127.0.0.1:%u", port);
	uint64_t t0 = bench_now_us();
	for (size_t i = 0; i < n; i++) {
		char key[128];
		snprintf(key, sizeof(key), "%s/console-%zu.key", rig_tmpdir, i);
		if (!bench_console_start(&consoles[i], manager, "", WIDTH, HEIGHT, SLIM_SEC_DTLS,
				key)) {
			fprintf(stderr, "bench-manager: console %zu did not start\n", i);
			return 1;
		}
		rig_consoles_add(&consoles[i]);
		n_consoles++;
	}
	/* a bound that grows with them: each greeter is a compositor and a client to start */
	int bound_ms = 60000 + (int)n * 500;
	bool ok = rig_consoles_run(bound_ms, all_known, NULL);
	r.known = count_known();
	r.known_s = (bench_now_us() - t0) / 1e6;
	ok = ok && rig_consoles_run(bound_ms, all_greeted, NULL);
	r.greeted = count_greeted();
	r.greeted_s = (bench_now_us() - t0) / 1e6;
	if (!ok) {
		fprintf(stderr, "bench-manager: %zu of %zu consoles known, %zu at their greeter\n",
			r.known, n, r.greeted);
	}
	/* the last greeters' first frames and handshakes done: then idle */
	rig_consoles_run(settle_s * 1000, NULL, NULL);
	ok = measure_idle(idle_s, &r.idle[0]) && measure_idle(idle_s, &r.idle[1]) && ok;
	ok = read_memory(sessiond, &r.pss_kb, &r.rss_kb) && ok;
	measure_greeters(&r.greeters);
	time_calls("list", calls, &r.list);
	time_calls("consoles", calls, &r.consoles_list);
	ok = ok && r.list.calls > 0 && r.list.failed == 0 && r.consoles_list.failed == 0;
	if (json) {
		print_json(&r);
	} else {
		print_table(&r);
	}
	if (!ok) {
		rig_show_logs();
	}
	rig_consoles_truncate(0);
	for (size_t i = 0; i < n_consoles; i++) {
		bench_console_stop(&consoles[i]);
	}
	rig_cleanup();
	return ok ? 0 : 1;
}
