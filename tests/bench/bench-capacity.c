/*
 * How many people one server holds, in the manner of SLIM section 6.1
 * (Figure 9: users per CPU before a yardstick task is slowed): N users
 * logged in through the session manager, each at a console of its own,
 * doing human work, while one more user, the probe, types and the time
 * from each of its keys to the console's next frame is measured.
 *
 * Everything is real but the consoles, which this process plays
 * (managed-rig.h: the console's own control association and core, over
 * DTLS, 1920x1080): slimland-sessiond as root, enrolling consoles, the
 * greeter compositors with slimland-greeter, PAM logins of throwaway
 * users typed at the greeters, each session a slimland compositor in the
 * manager's cgroups with its own session bus, and in it:
 *
 *   typists     nine users in ten: foot, lines of prose typed at 75 words
 *               a minute (one key every 160 ms) with 2-10 s pauses between
 *               lines, and now and then `less` paging a licence, a page
 *               every 1.5 s (Wong and Seltzer's typing and paging)
 *   watchers    the tenth: mpv playing a 320x240 clip at 24 Hz, looped
 *   the probe   foot; a key every 250-350 ms, timed key sent -> the next
 *               frame presented on its console
 *
 * Users are added in steps (--step, 10 by default; 2 with --quick); each
 * step's consoles go to a process of their own that plays them and their
 * users' work, so that the probe's console, here, waits behind nobody's
 * datagrams. At each step, once the new sessions have settled: the probe's
 * p50, p95 and p99, the machine's CPU (the consoles' own shown apart:
 * on a real desk they are other machines), its memory in use, and the
 * manager's CPU and memory. It stops at --max users, or once the p95 has
 * passed 100 ms, or when a login fails. Then (not --quick) one more user
 * logs in whose session starts 500 clients and a 16384x16384 buffer
 * (slim-hog), and the step is measured again beside it.
 *
 * Then: the largest N with the probe's p95 within 50 and 100 ms, users per
 * core at 50 ms, and the PSS of a session (its compositor, the daemons it
 * started, its clients; /proc/PID/smaps_rollup): idle and alone (the
 * probe's, logged in, before anyone else), active (the last step's
 * typists), and the probe's again at the end, attached and then once its
 * console has left (its session frees what only a console needs 5 s
 * later). Shared libraries count in PSS split among the processes that
 * map them: alone, a session carries them whole.
 *
 *   bench-capacity [--json] [--quick] [--step N] [--max N] [--plot FILE.png] [-v]
 *
 * Needs root (users, PAM, the manager); exits 77 (skipped) otherwise.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <linux/input-event-codes.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "managed-rig.h"
#include "plot.h"
#include "session.h"
#include "slim-log.h"

#define WIDTH 1920
#define HEIGHT 1080
#define MAX_USERS 200
#define MAX_STEPS 64
#define TARGET_P95_MS 50.0
#define LIMIT_P95_MS 100.0
/* 75 words a minute, five letters and a space a word: a key every 160 ms */
#define KEY_MS 160
#define PAGE_MS 1500
#define PROBE_MS 250
#define MAX_SAMPLES 4096
/* a run stops adding users after this long */
#define RUN_BUDGET_S (25 * 60)

struct step {
	size_t users;              /* at work, the hog among them */
	bool hog;
	size_t samples;
	double p50_ms, p95_ms, p99_ms;
	double cpu_cores;          /* the machine's, busy */
	double console_cores;      /* of which the consoles (this benchmark) */
	double manager_percent;    /* of one core */
	double manager_rss_mb;
	double memory_used_gb;     /* MemTotal - MemAvailable */
	double login_s;            /* the step's logins, each, p50 */
};

/* PSS of one session, MB */
struct pss {
	double compositor, daemons, clients;
	size_t sessions;
};

/* the sessions whose PSS is shown */
enum pss_row { PSS_ALONE, PSS_ACTIVE, PSS_ATTACHED, PSS_DETACHED, PSS_ROWS };
static const char *const pss_names[PSS_ROWS] = {
	[PSS_ALONE] = "idle, alone (the probe's at the start)",
	[PSS_ACTIVE] = "active (the last step's typists)",
	[PSS_ATTACHED] = "the probe's at the end, attached",
	[PSS_DETACHED] = "  and once its console has left",
};
static const char *const pss_keys[PSS_ROWS] = {
	[PSS_ALONE] = "idle_alone", [PSS_ACTIVE] = "active",
	[PSS_ATTACHED] = "probe_attached", [PSS_DETACHED] = "probe_detached",
};

static const char *prog = "bench-capacity";
static struct pss pss[PSS_ROWS];
static struct step steps[MAX_STEPS];
static size_t n_steps;
static struct bench_console probe;
static char probe_user[48];
/* every background console, kept (reachable) while its worker plays it */
static struct bench_console *desks[MAX_USERS];
static char desk_users[MAX_USERS][48];
static size_t n_desks;
static pid_t workers[MAX_USERS];
static size_t n_workers;
static char manager[32];

/* The work of one desk, in the worker process */

enum desk_work { WORK_THINK, WORK_TYPE, WORK_PAGE };

struct desk {
	struct bench_console *c;
	enum desk_work work;
	char text[128];        /* what is being typed */
	size_t pos;
	uint32_t pages;        /* left to page (WORK_PAGE, once "less doc" is typed) */
	uint64_t due_us;
	unsigned seed;
};

static const char *const words[] = {
	"the", "server", "keeps", "every", "session", "while", "people", "walk", "between",
	"desks", "and", "their", "work", "follows", "them", "a", "console", "holds",
	"nothing", "of", "its", "own", "pixels", "arrive", "as", "commands", "from", "far",
};

static unsigned rnd(unsigned *seed, unsigned n)
{
	return (unsigned)rand_r(seed) % n;
}

static void desk_think(struct desk *d, uint64_t now)
{
	d->work = WORK_THINK;
	d->due_us = now + (2000 + rnd(&d->seed, 8000)) * 1000ull;
}

/* The next line: prose to echo, or (one in five) a licence to page. */
static void desk_start(struct desk *d, uint64_t now)
{
	d->pos = 0;
	if (rnd(&d->seed, 5) == 0) {
		d->work = WORK_PAGE;
		d->pages = 4 + rnd(&d->seed, 4);
		snprintf(d->text, sizeof(d->text), "less doc\n");
	} else {
		d->work = WORK_TYPE;
		size_t len = (size_t)snprintf(d->text, sizeof(d->text), "echo");
		unsigned n = 5 + rnd(&d->seed, 6);
		for (unsigned i = 0; i < n && len + 16 < sizeof(d->text); i++) {
			len += (size_t)snprintf(d->text + len, sizeof(d->text) - len, " %s",
				words[rnd(&d->seed, sizeof(words) / sizeof(words[0]))]);
		}
		snprintf(d->text + len, sizeof(d->text) - len, "\n");
	}
	d->due_us = now;
}

static void desk_key(struct desk *d, uint32_t code)
{
	bench_console_key(d->c, code, true);
	bench_console_key(d->c, code, false);
}

/* One step of a desk's work, due now. */
static void desk_act(struct desk *d, uint64_t now)
{
	if (d->work == WORK_THINK) {
		desk_start(d, now);
		return;
	}
	if (d->text[d->pos]) {
		desk_key(d, rig_key_for(d->text[d->pos++]));
		d->due_us = now + KEY_MS * 1000ull;
		return;
	}
	if (d->work == WORK_PAGE && d->pages > 0) {
		d->pages--;
		desk_key(d, KEY_SPACE);
		d->due_us = now + PAGE_MS * 1000ull;
		return;
	}
	if (d->work == WORK_PAGE) {
		desk_key(d, KEY_Q);
	}
	desk_think(d, now);
}

/*
 * The worker: plays its consoles and their users' work until killed (or
 * until this benchmark dies). Never returns.
 */
static void worker_run(struct bench_console **cs, size_t n, const bool *typist, unsigned seed)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct desk d[MAX_USERS];
	size_t n_typists = 0;
	uint64_t now = bench_now_us();
	for (size_t i = 0; i < n; i++) {
		if (typist[i]) {
			d[n_typists] = (struct desk){ .c = cs[i], .seed = seed + (unsigned)i };
			desk_think(&d[n_typists++], now);
		}
	}
	for (;;) {
		uint64_t next = now + 1000000;
		for (size_t i = 0; i < n_typists; i++) {
			next = d[i].due_us < next ? d[i].due_us : next;
		}
		int wait_ms = next > now ? (int)((next - now + 999) / 1000) : 0;
		bench_consoles_run(cs, n, wait_ms, NULL, NULL);
		now = bench_now_us();
		for (size_t i = 0; i < n_typists; i++) {
			if (d[i].due_us <= now) {
				desk_act(&d[i], now);
			}
		}
	}
}

/* Measuring */

/* The machine's CPU time spent, all cores, in microseconds. */
static uint64_t machine_busy_us(void)
{
	FILE *f = fopen("/proc/stat", "re");
	unsigned long long v[8] = { 0 };
	if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			&v[3], &v[4], &v[5], &v[6], &v[7]) != 8) {
		v[0] = 0;
	}
	if (f) {
		fclose(f);
	}
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t all = 0;
	for (int i = 0; i < 8; i++) {
		all += v[i];
	}
	uint64_t idle = v[3] + v[4];
	return (all - idle) * 1000000ull / (uint64_t)hz;
}

/* A number from a "Key: N kB" line of a /proc file, in kB (0 if none). */
static uint64_t proc_kb(const char *path, const char *key)
{
	FILE *f = fopen(path, "re");
	char line[256];
	uint64_t kb = 0;
	size_t len = strlen(key);
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, len) == 0 && line[len] == ':') {
			kb = strtoull(line + len + 1, NULL, 10);
			break;
		}
	}
	if (f) {
		fclose(f);
	}
	return kb;
}

static uint64_t consoles_cpu_us(void)
{
	uint64_t us = bench_process_cpu_us(getpid());
	for (size_t i = 0; i < n_workers; i++) {
		us += bench_process_cpu_us(workers[i]);
	}
	return us;
}

static int uid_of_pid(long pid, char comm[32])
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	FILE *f = fopen(path, "re");
	int uid = -1;
	comm[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Name: %31s", comm) == 1) {
			continue;
		}
		if (sscanf(line, "Uid: %d", &uid) == 1) {
			break;
		}
	}
	if (f) {
		fclose(f);
	}
	return uid;
}

/* The PSS of these users' sessions, each on average, by kind of process. */
static void session_pss(const char *const *users, size_t n, struct pss *out)
{
	*out = (struct pss){ .sessions = n };
	int uids[MAX_USERS];
	for (size_t i = 0; i < n; i++) {
		struct passwd *pw = getpwnam(users[i]);
		uids[i] = pw ? (int)pw->pw_uid : -2;
	}
	DIR *dir = opendir("/proc");
	struct dirent *e;
	while (dir && (e = readdir(dir))) {
		char *end, comm[32];
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 1) {
			continue;
		}
		int uid = uid_of_pid(pid, comm);
		bool ours = false;
		for (size_t i = 0; i < n && !ours; i++) {
			ours = uids[i] == uid;
		}
		if (!ours) {
			continue;
		}
		char path[64];
		snprintf(path, sizeof(path), "/proc/%ld/smaps_rollup", pid);
		double mb = (double)proc_kb(path, "Pss") / 1024.0;
		if (strcmp(comm, "slimland") == 0) {
			out->compositor += mb;
		} else if (strcmp(comm, "dbus-daemon") == 0 || strncmp(comm, "pipewire", 8) == 0 ||
				strcmp(comm, "wireplumber") == 0) {
			out->daemons += mb;
		} else {
			out->clients += mb;
		}
	}
	if (dir) {
		closedir(dir);
	}
	if (n > 0) {
		out->compositor /= (double)n;
		out->daemons /= (double)n;
		out->clients /= (double)n;
	}
}

static double percentile_ms(uint64_t *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), bench_cmp_u64);
	return n ? (double)v[(size_t)(p * (double)(n - 1))] / 1000.0 : 0;
}

struct until_frame {
	struct bench_console *c;
	uint32_t frames;
};

static bool until_frame(void *data)
{
	const struct until_frame *u = data;
	return u->c->frames > u->frames;
}

/* The probe types for measure_ms: each key's time to the next frame presented. */
static size_t probe_measure(int measure_ms, uint64_t *lat, size_t max, unsigned *seed)
{
	size_t n = 0, typed = 0;
	uint64_t end = bench_now_us() + (uint64_t)measure_ms * 1000;
	while (bench_now_us() < end && n < max) {
		/* a fresh line now and then: Ctrl+U, not timed */
		if (++typed % 40 == 0) {
			bench_console_key(&probe, KEY_LEFTCTRL, true);
			bench_console_key(&probe, KEY_U, true);
			bench_console_key(&probe, KEY_U, false);
			bench_console_key(&probe, KEY_LEFTCTRL, false);
			rig_settle(&probe, 100, 1000);
		}
		struct until_frame u = { &probe, probe.frames };
		uint32_t code = rig_key_for("asdfghjkl"[rnd(seed, 9)]);
		uint64_t t0 = bench_now_us();
		bench_console_key(&probe, code, true);
		if (rig_consoles_run(2000, until_frame, &u)) {
			lat[n++] = bench_now_us() - t0;
		}
		bench_console_key(&probe, code, false);
		rig_consoles_run(PROBE_MS + (int)rnd(seed, 100), NULL, NULL);
	}
	return n;
}

/* The session every user starts: a clip for the watchers, foot for the others. */
static bool write_startup(char *path, size_t size)
{
	char clip[160];
	snprintf(clip, sizeof(clip), "%s/clip.mkv", rig_tmpdir);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "ffmpeg -v error -y -f lavfi -i testsrc=size=320x240:rate=24 "
		"-t 10 -c:v mpeg4 -q:v 4 '%s'", clip);
	if (system(cmd) != 0) {
		fprintf(stderr, "%s: cannot make the clip (ffmpeg)\n", prog);
		return false;
	}
	snprintf(path, size, "%s/session.sh", rig_tmpdir);
	FILE *f = fopen(path, "w");
	if (!f) {
		return false;
	}
	fprintf(f, "#!/bin/sh\n"
		"if [ -e \"$HOME/watch\" ]; then\n"
		"\texec mpv --vo=wlshm --no-audio --loop=inf --hwdec=no --osd-level=0 --no-osc "
		"--really-quiet '%s'\n"
		"fi\n"
		"if [ -e \"$HOME/hog\" ]; then\n"
		"\t%s clients 500 &\n"
		"\t%s buffer 16384 16384 &\n"
		"fi\n"
		"exec foot\n", clip, SLIM_HOG_BIN, SLIM_HOG_BIN);
	return fclose(f) == 0 && chmod(path, 0755) == 0;
}

/* What a desk's user does. */
enum desk_kind { DESK_TYPIST, DESK_WATCHER, DESK_HOG };
/* the mark in its home that says so to session.sh */
static const char *const desk_marks[] = { [DESK_WATCHER] = "watch", [DESK_HOG] = "hog" };

/* A user of the run: a home with a licence to page, and the mark of its kind. */
static bool add_desk_user(const char *label, enum desk_kind kind, char *name, size_t size)
{
	if (!rig_add_user(label, name, size)) {
		return false;
	}
	char cmd[512];
	int len = snprintf(cmd, sizeof(cmd), "cp /usr/share/common-licenses/GPL-3 %s/home-%s/doc "
		"&& chown %s %s/home-%s/doc", rig_tmpdir, name, name, rig_tmpdir, name);
	if (desk_marks[kind]) {
		snprintf(cmd + len, sizeof(cmd) - (size_t)len, " && touch %s/home-%s/%s",
			rig_tmpdir, name, desk_marks[kind]);
	}
	return system(cmd) == 0;
}

/*
 * `count` more users log in at consoles of their own, then go to a worker
 * of their own: one in ten watches the clip, the others type; `hog`: one
 * user whose session starts 500 clients and a 16384x16384 buffer.
 */
static bool add_desks(size_t count, bool hog, double *login_p50_s)
{
	size_t first = n_desks;
	bool typist[MAX_USERS];
	uint64_t login_us[MAX_USERS];
	for (size_t i = 0; i < count && n_desks < MAX_USERS; i++) {
		size_t k = n_desks;
		char label[16], id[32];
		enum desk_kind kind = hog ? DESK_HOG : k % 10 == 0 ? DESK_WATCHER : DESK_TYPIST;
		snprintf(label, sizeof(label), "u%03zu", k + 1);
		snprintf(id, sizeof(id), "desk-%03zu", k + 1);
		if (!add_desk_user(label, kind, desk_users[k], sizeof(desk_users[k]))) {
			fprintf(stderr, "%s: cannot add user %s\n", prog, label);
			return false;
		}
		desks[k] = calloc(1, sizeof(*desks[k]));
		if (!desks[k]) {
			abort();
		}
		uint64_t t0 = bench_now_us();
		bool in = rig_console_login(desks[k], manager, id, WIDTH, HEIGHT, SLIM_SEC_DTLS,
			desk_users[k]);
		n_desks++;
		if (!in) {
			return false;
		}
		login_us[i] = bench_now_us() - t0;
		typist[i] = kind == DESK_TYPIST;
		rig_settle(desks[k], 300, 5000);
	}
	*login_p50_s = percentile_ms(login_us, n_desks - first, 0.5) / 1000.0;
	pid_t pid = fork();
	if (pid == 0) {
		worker_run(&desks[first], n_desks - first, typist, (unsigned)first * 7919u);
	}
	if (pid < 0) {
		return false;
	}
	workers[n_workers++] = pid;
	rig_consoles_truncate(1); /* the probe's only, here */
	return true;
}

static void stop_workers(void)
{
	for (size_t i = 0; i < n_workers; i++) {
		kill(workers[i], SIGTERM);
	}
	for (size_t i = 0; i < n_workers; i++) {
		waitpid(workers[i], NULL, 0);
	}
	n_workers = 0;
}

/* One step's figures: the probe for measure_ms, and the machine meanwhile. */
static void measure_step(struct step *s, int measure_ms, unsigned *seed)
{
	static uint64_t lat[MAX_SAMPLES];
	pid_t mgr = rig_sessiond_pid();
	uint64_t busy0 = machine_busy_us();
	uint64_t con0 = consoles_cpu_us(), mgr0 = bench_process_cpu_us(mgr);
	uint64_t t0 = bench_now_us();
	s->samples = probe_measure(measure_ms, lat, MAX_SAMPLES, seed);
	uint64_t busy1 = machine_busy_us();
	double wall = (double)(bench_now_us() - t0);
	s->users = n_desks;
	s->p50_ms = percentile_ms(lat, s->samples, 0.50);
	s->p95_ms = percentile_ms(lat, s->samples, 0.95);
	s->p99_ms = percentile_ms(lat, s->samples, 0.99);
	s->cpu_cores = (double)(busy1 - busy0) / wall;
	s->console_cores = (double)(consoles_cpu_us() - con0) / wall;
	s->manager_percent = 100.0 * (double)(bench_process_cpu_us(mgr) - mgr0) / wall;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)mgr);
	s->manager_rss_mb = (double)proc_kb(path, "VmRSS") / 1024.0;
	s->memory_used_gb = (double)(proc_kb("/proc/meminfo", "MemTotal") -
		proc_kb("/proc/meminfo", "MemAvailable")) / (1024.0 * 1024.0);
}

/* Whether a line of one of the user's session logs has `text`. */
static bool session_said(const char *user, const char *text)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "grep -qs -- '%s' %s/run-capacity/log/%s/session-*.log", text,
		rig_tmpdir, user);
	return system(cmd) == 0;
}

/*
 * The probe's console leaves; false if its session did not say within 30 s
 * that it let go of what only a console needs (5 s after it left). The
 * log is read every 100 ms: nothing else tells.
 */
static bool probe_detach(void)
{
	/* its close_notify, as slimland-console says goodbye when it quits */
	slim_sec_client_goodbye(probe.sec);
	bench_console_stop(&probe);
	rig_consoles_truncate(0);
	for (int i = 0; i < 300; i++) {
		if (session_said(probe_user, "their buffers freed")) {
			return true;
		}
		usleep(100000);
	}
	return false;
}

/* Reporting */

static size_t users_within(double ms)
{
	size_t n = 0;
	for (size_t i = 0; i < n_steps; i++) {
		if (!steps[i].hog && steps[i].p95_ms <= ms && steps[i].users > n) {
			n = steps[i].users;
		}
	}
	return n;
}

static double pss_all(const struct pss *p)
{
	return p->compositor + p->daemons + p->clients;
}

static void print_table(long cores)
{
	printf("bench-capacity: the probe's keystroke -> pixels against N users at work "
		"(foot typing at 75 wpm and paging, 1 in 10 watching a clip), 1920x1080 "
		"consoles over DTLS, %ld cores\n\n", cores);
	printf("%6s %8s %8s %8s %7s %10s %9s %9s %9s %9s %8s\n", "users", "p50 ms", "p95 ms",
		"p99 ms", "x p95@0", "CPU cores", "consoles", "manager%", "mgr MB", "used GB",
		"login s");
	for (size_t i = 0; i < n_steps; i++) {
		const struct step *s = &steps[i];
		char users[16];
		snprintf(users, sizeof(users), s->hog ? "%zu+hog" : "%zu", s->users - s->hog);
		printf("%6s %8.1f %8.1f %8.1f %7.2f %10.2f %9.2f %9.2f %9.1f %9.2f %8.2f\n",
			users, s->p50_ms, s->p95_ms, s->p99_ms,
			steps[0].p95_ms > 0 ? s->p95_ms / steps[0].p95_ms : 0, s->cpu_cores,
			s->console_cores, s->manager_percent, s->manager_rss_mb, s->memory_used_gb,
			s->login_s);
	}
	size_t n50 = users_within(TARGET_P95_MS), n100 = users_within(LIMIT_P95_MS);
	printf("\nusers with the probe's p95 <= 50 ms: %zu (%.1f per core); <= 100 ms: %zu\n",
		n50, (double)n50 / (double)cores, n100);
	printf("\nPSS of a session, MB %28s %8s %8s %8s %8s\n", "compositor", "daemons",
		"clients", "all-in", "sessions");
	for (int i = 0; i < PSS_ROWS; i++) {
		const struct pss *p = &pss[i];
		printf("  %-38s %8.1f %8.1f %8.1f %8.1f %8zu\n", pss_names[i], p->compositor,
			p->daemons, p->clients, p->compositor + p->daemons + p->clients, p->sessions);
	}
	double attached = pss_all(&pss[PSS_ATTACHED]);
	printf("detached / attached: %.2f\n",
		attached > 0 ? pss_all(&pss[PSS_DETACHED]) / attached : 0);
}

static void print_json(long cores)
{
	size_t n50 = users_within(TARGET_P95_MS);
	printf("{\"cores\": %ld, \"users_at_p95_50ms\": %zu, \"users_at_p95_100ms\": %zu, "
		"\"users_per_core_at_p95_50ms\": %.2f, ", cores, n50, users_within(LIMIT_P95_MS),
		(double)n50 / (double)cores);
	for (int i = 0; i < PSS_ROWS; i++) {
		const struct pss *p = &pss[i];
		printf("\"%s_session_pss\": {\"compositor_mb\": %.1f, \"daemons_mb\": %.1f, "
			"\"clients_mb\": %.1f, \"all_mb\": %.1f, \"sessions\": %zu}, ", pss_keys[i],
			p->compositor, p->daemons, p->clients, pss_all(p), p->sessions);
	}
	printf("\"steps\": [");
	for (size_t i = 0; i < n_steps; i++) {
		const struct step *s = &steps[i];
		printf("%s{\"users\": %zu, \"hog\": %s, \"samples\": %zu, \"probe_p50_ms\": %.2f, "
			"\"probe_p95_ms\": %.2f, \"probe_p99_ms\": %.2f, \"p95_ratio_to_no_users\": %.3f, "
			"\"cpu_cores\": %.3f, \"consoles_cpu_cores\": %.3f, "
			"\"manager_cpu_percent\": %.3f, \"manager_rss_mb\": %.1f, "
			"\"memory_used_gb\": %.2f, \"login_p50_s\": %.2f}", i ? ", " : "", s->users,
			s->hog ? "true" : "false", s->samples, s->p50_ms, s->p95_ms, s->p99_ms,
			steps[0].p95_ms > 0 ? s->p95_ms / steps[0].p95_ms : 0, s->cpu_cores,
			s->console_cores, s->manager_percent, s->manager_rss_mb, s->memory_used_gb,
			s->login_s);
	}
	printf("]}\n");
}

static bool plot(const char *path)
{
	double x[MAX_STEPS], p50[MAX_STEPS], p95[MAX_STEPS];
	size_t n = 0;
	for (size_t i = 0; i < n_steps; i++) {
		if (!steps[i].hog) {
			x[n] = (double)steps[i].users;
			p50[n] = steps[i].p50_ms;
			p95[n++] = steps[i].p95_ms;
		}
	}
	const double *series[] = { p95, p50 };
	return bench_plot_png(path, x, series, 2, n, TARGET_P95_MS);
}

int main(int argc, char *argv[])
{
	bool json = false, quick = false;
	size_t step = 10, max = 150;
	const char *plot_path = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--quick") == 0) {
			quick = true;
			step = max = 2;
		} else if (strcmp(argv[i], "--step") == 0 && i + 1 < argc) {
			step = strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc) {
			max = strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--plot") == 0 && i + 1 < argc) {
			plot_path = argv[++i];
		} else if (strcmp(argv[i], "-v") == 0) {
			rig_verbose = true;
		} else {
			fprintf(stderr, "usage: %s [--json] [--quick] [--step N] [--max N] "
				"[--plot FILE.png] [-v]\n", argv[0]);
			return 2;
		}
	}
	step = step < 1 ? 1 : step;
	max = max > MAX_USERS ? MAX_USERS : max;
	if (geteuid() != 0) {
		fprintf(stderr, "%s: needs root (users, PAM, the session manager): skipped\n", prog);
		return 77;
	}
	slim_log_init(rig_verbose ? SLIM_LOG_DEBUG : SLIM_LOG_ERROR, NULL);
	char startup[128], key_dir[128];
	/* one manager; a uid is free again once its last greeter's processes have gone */
	rig_greeters = 32;
	if (!rig_setup(prog, "cap") || !write_startup(startup, sizeof(startup)) ||
			!add_desk_user("probe", DESK_TYPIST, probe_user, sizeof(probe_user))) {
		fprintf(stderr, "%s: cannot create the users, the PAM service or the clip\n", prog);
		return 1;
	}
	rig_startup = startup;
	snprintf(key_dir, sizeof(key_dir), "%s/keys", rig_tmpdir);
	uint16_t port = bench_free_port(SOCK_DGRAM);
	snprintf(manager, sizeof(manager), "127.0.0.1:%u", port);
	if (port == 0 || !rig_start_sessiond("capacity", port, SLIM_SEC_DTLS, key_dir, NULL)) {
		fprintf(stderr, "%s: slimland-sessiond did not start\n", prog);
		return 1;
	}
	bool ok = rig_console_login(&probe, manager, "probe", WIDTH, HEIGHT, SLIM_SEC_DTLS,
		probe_user);
	unsigned seed = 1;
	int measure_ms = quick ? 4000 : 30000;
	uint64_t t_start = bench_now_us();
	if (ok) {
		rig_settle(&probe, 500, 5000);
		const char *who[] = { probe_user };
		session_pss(who, 1, &pss[PSS_ALONE]);
	}
	while (ok && n_steps < MAX_STEPS - 1) {
		struct step *s = &steps[n_steps];
		*s = (struct step){ 0 };
		if (n_steps > 0) {
			size_t add = n_desks + step > max ? max - n_desks : step;
			ok = add_desks(add, false, &s->login_s);
			if (!ok) {
				break;
			}
			/* the new sessions' first pictures are out of the way */
			rig_settle(&probe, 1000, 5000);
		}
		measure_step(s, measure_ms, &seed);
		n_steps++;
		if (rig_verbose) {
			fprintf(stderr, "%s: %zu users: p95 %.1f ms\n", prog, s->users, s->p95_ms);
		}
		if (n_desks >= max || s->p95_ms > LIMIT_P95_MS ||
				bench_now_us() - t_start > RUN_BUDGET_S * 1000000ull) {
			break;
		}
	}
	/* the typists of the last step */
	const char *typists[MAX_USERS];
	size_t n_typists = 0;
	for (size_t i = n_desks > step ? n_desks - step : 0; i < n_desks; i++) {
		if (i % 10 != 0) {
			typists[n_typists++] = desk_users[i];
		}
	}
	session_pss(typists, n_typists, &pss[PSS_ACTIVE]);
	if (ok && !quick && n_steps < MAX_STEPS) {
		/* one more user, whose session starts 500 clients and a 1 GiB buffer */
		struct step *s = &steps[n_steps];
		*s = (struct step){ .hog = true };
		ok = add_desks(1, true, &s->login_s);
		if (ok) {
			rig_settle(&probe, 1000, 5000);
			measure_step(s, measure_ms, &seed);
			n_steps++;
		}
	}
	if (ok) {
		const char *who[] = { probe_user };
		session_pss(who, 1, &pss[PSS_ATTACHED]);
		if (probe_detach()) {
			session_pss(who, 1, &pss[PSS_DETACHED]);
		} else {
			fprintf(stderr, "%s: the probe's session did not say it freed its buffers\n", prog);
			ok = false;
		}
	}
	stop_workers();
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (n_steps > 0) {
		if (json) {
			print_json(cores);
		} else {
			print_table(cores);
		}
		if (plot_path && !plot(plot_path)) {
			fprintf(stderr, "%s: cannot write %s\n", prog, plot_path);
		}
	}
	bool measured = n_steps > 1 && steps[n_steps - 1].samples > 0;
	if (!ok || !measured) {
		fprintf(stderr, "%s: %s\n", prog, ok ? "no step measured" : "a login failed");
		rig_show_logs();
	}
	bench_console_stop(&probe);
	rig_cleanup();
	return ok && measured ? 0 : 1;
}
