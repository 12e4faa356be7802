/*
 * Hot-desking, in the manner of SLIM section 2.4 and the Sun Ray: a card
 * taken to another console brings the session with it. Timed from the
 * console sending CARD to the session manager to that console having
 * presented the first complete picture of the session (every pixel of the
 * screen painted since its display association began), at 1920x1080 over
 * loopback.
 *
 * Everything is real but the two consoles, which this process plays with
 * the console's control association (console/manager.c) and a console
 * core each (managed.c): slimland-sessiond as root with a configuration of
 * its own, a throwaway user and PAM service (pam_unix) for the session and
 * a throwaway greeter user, greeter compositors running slimland-greeter,
 * and the session's compositor running slim-echo (one still window).
 *
 * The login goes through the real greeter on console A, typed as keys on
 * its display association after a tap of the card, still unknown, so that
 * the session is bound to it. Then the card goes from console to console:
 * by default it is taken off the old console first (card_removal = detach:
 * the old console gets a greeter, the session is detached) and, once that
 * has settled, put on the new one, which is timed: a pure attach, as when
 * someone walks over. With --takeover it is put on the new console while
 * still "on" the old one, and the move (old console to a greeter, new one
 * to the session) is timed in one.
 *
 * Where the time goes, from timestamps on one clock: manager = CARD sent ->
 * REDIRECT received; attach = REDIRECT -> the compositor's first datagram
 * (HELLO with the token, the compositor attaching and rendering, the first
 * datagram of the repaint); picture = first datagram -> the complete frame
 * presented.
 *
 * Both transports in the same run, one after the other with a manager of
 * their own: clear, and DTLS (slim-secure.h: the control association's
 * handshake with keys, and at every migration the display association's
 * ECDHE-PSK handshake with the per-attach key, which falls in "attach").
 * The bar: DTLS may add at most 10% to the p50.
 *
 * Needs root (users, PAM, the manager); exits 77 (skipped) otherwise. The
 * users, the PAM file, the processes of the users and the temporary files
 * are removed at exit, on failure and on SIGINT/SIGTERM/SIGHUP.
 *
 *   bench-migration [--json] [--quick] [--migrations N] [--takeover] [-v]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/input-event-codes.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "managed.h"
#include "session.h"
#include "slim-log.h"

#define USER "slimbench-mig"
#define PASSWORD "m1gr8bench"
#define GREETER_USER "slimbench-greet"
#define SERVICE "slimbench-migration"
#define SERVICE_PATH "/etc/pam.d/" SERVICE
#define WIDTH 1920
#define HEIGHT 1080
#define MAX_MIGRATIONS 1000
#define TARGET_P50_MS 100.0
/* What encryption may add to the p50 (issue: no more than 10%). */
#define DTLS_MAX_RATIO 1.10

static const uint8_t card_token[] = { 0x04, 0xb3, 0x1e, 0x5a, 0x72, 0x80, 0x01 };

static char tmpdir[64];
static pid_t sessiond = -1;
static uid_t uids[2] = { (uid_t)-1, (uid_t)-1 };
static volatile sig_atomic_t cleaning;
static bool verbose;

static int run(const char *cmd)
{
	int status = system(cmd);
	return status == -1 ? -1 : WEXITSTATUS(status);
}

/* The processes our users run: every one was started by our manager. */
static size_t signal_user_processes(int sig)
{
	size_t n = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 1) {
			continue;
		}
		char path[64], line[256];
		snprintf(path, sizeof(path), "/proc/%ld/status", pid);
		FILE *f = fopen(path, "re");
		unsigned uid = (unsigned)-1;
		while (f && fgets(line, sizeof(line), f)) {
			if (sscanf(line, "Uid: %u", &uid) == 1) {
				break;
			}
		}
		if (f) {
			fclose(f);
		}
		if (uid != (unsigned)-1 && (uid == uids[0] || uid == uids[1])) {
			kill((pid_t)pid, sig);
			n++;
		}
	}
	if (d) {
		closedir(d);
	}
	return n;
}

static void remove_cgroups(uid_t uid)
{
	static const char *const roots[] = {
		"/sys/fs/cgroup", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct",
	};
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char dir[256];
		snprintf(dir, sizeof(dir), "%s/slimland.slice/user-%u.slice", roots[i], (unsigned)uid);
		DIR *d = opendir(dir);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (strncmp(e->d_name, "session-", 8) == 0) {
				char path[600];
				snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
				rmdir(path);
			}
		}
		if (d) {
			closedir(d);
		}
		rmdir(dir);
		/* only if nobody else's sessions are in it */
		*strrchr(dir, '/') = '\0';
		rmdir(dir);
	}
}

/* The manager, and the sessions it leaves running when it stops: they are ours to end. */
static void stop_sessiond(void)
{
	if (sessiond > 0) {
		kill(sessiond, SIGTERM);
		for (int i = 0; i < 100 && waitpid(sessiond, NULL, WNOHANG) == 0; i++) {
			usleep(20000);
		}
		kill(sessiond, SIGKILL);
		waitpid(sessiond, NULL, 0);
		sessiond = -1;
	}
	if (signal_user_processes(SIGTERM) > 0) {
		for (int i = 0; i < 100 && signal_user_processes(0) > 0; i++) {
			usleep(20000);
		}
		signal_user_processes(SIGKILL);
		for (int i = 0; i < 50 && signal_user_processes(0) > 0; i++) {
			usleep(20000);
		}
	}
}

static void cleanup(void)
{
	if (cleaning) {
		return;
	}
	cleaning = 1;
	stop_sessiond();
	unlink(SERVICE_PATH);
	for (int i = 0; i < 2; i++) {
		if (uids[i] != (uid_t)-1) {
			char cmd[128];
			snprintf(cmd, sizeof(cmd), "rm -rf /run/user/%u /run/slimland/user-%u",
				(unsigned)uids[i], (unsigned)uids[i]);
			run(cmd);
			remove_cgroups(uids[i]);
		}
	}
	run("userdel -r " USER " >/dev/null 2>&1");
	run("userdel -r " GREETER_USER " >/dev/null 2>&1");
	if (tmpdir[0]) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		run(cmd);
		tmpdir[0] = '\0';
	}
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static uid_t uid_of(const char *user)
{
	struct passwd *pw = getpwnam(user);
	return pw ? pw->pw_uid : (uid_t)-1;
}

static bool setup_users(void)
{
	/* what a killed earlier run left */
	uids[0] = uid_of(USER);
	uids[1] = uid_of(GREETER_USER);
	signal_user_processes(SIGKILL);
	run("userdel -r " USER " >/dev/null 2>&1");
	run("userdel -r " GREETER_USER " >/dev/null 2>&1");

	FILE *f = fopen(SERVICE_PATH, "w");
	if (!f) {
		return false;
	}
	fputs("auth required pam_unix.so\n"
		"account required pam_unix.so\n"
		"session required pam_unix.so\n", f);
	if (fclose(f) != 0) {
		return false;
	}
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "useradd -m -d %s/home-user -s /bin/sh " USER, tmpdir);
	if (run(cmd) != 0 || run("echo '" USER ":" PASSWORD "' | chpasswd") != 0) {
		return false;
	}
	snprintf(cmd, sizeof(cmd), "useradd -m -d %s/home-greeter -s /usr/sbin/nologin "
		GREETER_USER, tmpdir);
	if (run(cmd) != 0) {
		return false;
	}
	uids[0] = uid_of(USER);
	uids[1] = uid_of(GREETER_USER);
	return uids[0] != (uid_t)-1 && uids[1] != (uid_t)-1;
}

static bool start_sessiond(uint16_t port, enum slim_sec_mode mode)
{
	char conf[128], rundir[128], log[128];
	const char *name = slim_sec_mode_name(mode);
	snprintf(conf, sizeof(conf), "%s/slimland-%s.conf", tmpdir, name);
	snprintf(rundir, sizeof(rundir), "%s/run-%s", tmpdir, name);
	snprintf(log, sizeof(log), "%s/sessiond-%s.log", tmpdir, name);
	FILE *f = fopen(conf, "w");
	if (!f) {
		return false;
	}
	fprintf(f, "listen = 127.0.0.1:%u\n"
		"startup = %s\n"
		"greeter = %s\n"
		"greeter_user = %s\n"
		"slimland = %s\n"
		"pam_service = %s\n"
		"card_removal = detach\n"
		"reauth = never\n"
		"transport = %s\n"
		"enroll = open\n"
		"key_dir = %s/keys\n",
		port, SLIM_ECHO_BIN, SLIMLAND_GREETER_BIN, GREETER_USER, SLIMLAND_BIN, SERVICE,
		name, tmpdir);
	if (fclose(f) != 0) {
		return false;
	}
	sessiond = fork();
	if (sessiond == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, STDERR_FILENO);
			dup2(fd, STDOUT_FILENO);
		}
		execl(SLIMLAND_SESSIOND_BIN, SLIMLAND_SESSIOND_BIN, "--config", conf,
			"--run-dir", rundir, verbose ? "-v" : (char *)NULL, (char *)NULL);
		_exit(127);
	}
	if (sessiond < 0) {
		return false;
	}
	/* ctl.sock comes after the UDP socket: then consoles can say HELLO */
	char ctl[160];
	snprintf(ctl, sizeof(ctl), "%s/ctl.sock", rundir);
	for (int i = 0; i < 250; i++) {
		if (access(ctl, F_OK) == 0) {
			return true;
		}
		if (waitpid(sessiond, NULL, WNOHANG) == sessiond) {
			sessiond = -1;
			return false;
		}
		usleep(20000);
	}
	return false;
}

static void show_logs(void)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "for f in %s/sessiond-*.log %s/run-*/log/*/*.log; do "
		"[ -f \"$f\" ] && { echo \"== $f\"; tail -n 25 \"$f\"; }; done >&2", tmpdir, tmpdir);
	run(cmd);
}

/* Waiting for things to happen on the consoles */

static struct bench_console A, B;
static struct bench_console *const both[] = { &A, &B };

struct until {
	struct bench_console *c;
	uint32_t redirects; /* more REDIRECTs acted on than this */
	uint32_t frames;    /* and at least this many frames presented since */
};

static bool until_done(void *data)
{
	const struct until *u = data;
	return u->c->redirects > u->redirects && u->c->frames >= u->frames;
}

/* Waits for console c to follow a new REDIRECT and present `frames` frames there. */
static bool wait_redirected(struct bench_console *c, uint32_t redirects_before,
		uint32_t frames, int timeout_ms)
{
	struct until u = { c, redirects_before, frames };
	return bench_consoles_run(both, 2, timeout_ms, until_done, &u);
}

/* Runs until c has presented no frame for quiet_ms, at most max_ms. */
static void settle(struct bench_console *c, int quiet_ms, int max_ms)
{
	uint64_t end = bench_now_us() + (uint64_t)max_ms * 1000;
	while (bench_now_us() < end) {
		uint32_t before = c->frames;
		bench_consoles_run(both, 2, quiet_ms, NULL, NULL);
		if (c->frames == before) {
			return;
		}
	}
}

static uint32_t key_for(char ch)
{
	static const char *const rows[] = { "1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm" };
	static const uint32_t first[] = { KEY_1, KEY_Q, KEY_A, KEY_Z };
	for (int r = 0; r < 4; r++) {
		const char *p = strchr(rows[r], ch);
		if (p && ch) {
			return first[r] + (uint32_t)(p - rows[r]);
		}
	}
	return ch == '\n' ? KEY_ENTER : ch == '-' ? KEY_MINUS : 0;
}

static void type_text(struct bench_console *c, const char *text)
{
	for (const char *p = text; *p; p++) {
		uint32_t code = key_for(*p);
		bench_console_key(c, code, true);
		bench_consoles_run(both, 2, 8, NULL, NULL);
		bench_console_key(c, code, false);
		bench_consoles_run(both, 2, 8, NULL, NULL);
	}
}

/* The greeter's window is up once frames follow the first (the background). */
static bool wait_greeter(struct bench_console *c, uint32_t redirects_before, int timeout_ms)
{
	if (!wait_redirected(c, redirects_before, 2, timeout_ms)) {
		return false;
	}
	settle(c, 300, 3000);
	return true;
}

/* Results */

enum part { TOTAL, MANAGER, ATTACH, PICTURE, PARTS };
static const char *const part_keys[PARTS] = {
	"migration", "card_to_redirect", "redirect_to_first_datagram",
	"first_datagram_to_presented",
};
static const char *const part_names[PARTS] = {
	"card -> picture (total)", "card -> REDIRECT", "REDIRECT -> 1st datagram",
	"1st datagram -> presented",
};
static uint64_t samples[PARTS][MAX_MIGRATIONS];
static uint64_t frame_bytes[MAX_MIGRATIONS];

static uint64_t percentile(uint64_t *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), bench_cmp_u64);
	return n ? v[(size_t)(p * (double)(n - 1))] : 0;
}

static double ms(uint64_t us)
{
	return (double)us / 1000.0;
}

/* One transport's figures. */
struct result {
	enum slim_sec_mode mode;
	size_t n, failed, first_only, copies;
	uint64_t p50[PARTS], p99[PARTS], min, max, bytes_p50;
	uint64_t setup_greeters_us, setup_login_us;
	uint32_t refusals;
};

/*
 * A manager of this transport, both consoles on greeters, a login on A,
 * then `migrations` moves of the card. False if it could not even begin.
 */
static bool measure(enum slim_sec_mode mode, size_t migrations, bool takeover,
		struct result *res)
{
	*res = (struct result){ .mode = mode };
	uint16_t port = bench_free_port(SOCK_DGRAM);
	if (port == 0 || !start_sessiond(port, mode)) {
		fprintf(stderr, "bench-migration: slimland-sessiond did not start (%s)\n",
			slim_sec_mode_name(mode));
		return false;
	}
	char manager[32], key_a[160], key_b[160];
	snprintf(manager, sizeof(manager), "127.0.0.1:%u", port);
	snprintf(key_a, sizeof(key_a), "%s/console-a.key", tmpdir);
	snprintf(key_b, sizeof(key_b), "%s/console-b.key", tmpdir);
	if (!bench_console_start(&A, manager, "bench-a", WIDTH, HEIGHT, mode, key_a) ||
			!bench_console_start(&B, manager, "bench-b", WIDTH, HEIGHT, mode, key_b)) {
		fprintf(stderr, "bench-migration: cannot start the consoles\n");
		return false;
	}

	/* Both consoles get a greeter. */
	uint64_t t_start = bench_now_us();
	if (!wait_greeter(&A, 0, 20000) || !wait_greeter(&B, 0, 20000)) {
		fprintf(stderr, "bench-migration: no greeter on the consoles (A: %u redirects, "
			"%u frames; B: %u, %u)\n", A.redirects, A.frames, B.redirects, B.frames);
		return false;
	}
	uint64_t t_greeters = bench_now_us();

	/* An unknown card, then the login it gets bound to. */
	bench_console_card(&A, true, card_token, sizeof(card_token));
	settle(&A, 200, 1000);
	uint32_t before = A.redirects;
	type_text(&A, USER "\n" PASSWORD "\n");
	if (!wait_redirected(&A, before, 1, 15000)) {
		fprintf(stderr, "bench-migration: the login on console A did not lead to a "
			"session\n");
		return false;
	}
	uint16_t session_port = bench_console_port(&A);
	settle(&A, 300, 5000);
	uint64_t t_login = bench_now_us();

	struct bench_console *from = &A, *to = &B;
	size_t n = 0;
	for (size_t i = 0; i < migrations; i++) {
		if (!takeover) {
			/* taken off the old console: it goes to a greeter, the session waits */
			uint32_t r = from->redirects;
			bench_console_card(from, false, card_token, sizeof(card_token));
			if (!wait_greeter(from, r, 10000)) {
				fprintf(stderr, "bench-migration: no greeter after the card left console %s\n",
					from->id);
				res->failed++;
			}
		}
		/* all quiet: the tap */
		settle(to, 100, 2000);
		uint32_t r = to->redirects, r_from = from->redirects;
		uint64_t t0 = bench_now_us();
		bench_console_card(to, true, card_token, sizeof(card_token));
		bool ok = wait_redirected(to, r, 1, 5000);
		uint32_t complete = 0;
		bool alone = false;
		while (ok && (complete = bench_console_complete_frame(to, &alone)) == 0) {
			ok = wait_redirected(to, r, to->frames + 1, 5000);
		}
		if (!ok || bench_console_port(to) != session_port) {
			fprintf(stderr, "bench-migration: migration %zu to console %s: %s\n", i + 1, to->id,
				ok ? "shown something else than the session" : "no complete frame within 5 s");
			res->failed++;
		} else {
			uint64_t t3 = to->frame_us[complete - 1];
			samples[TOTAL][n] = t3 - t0;
			samples[MANAGER][n] = to->redirect_us - t0;
			samples[ATTACH][n] = to->first_rx_us - to->redirect_us;
			samples[PICTURE][n] = t3 - to->first_rx_us;
			frame_bytes[n] = to->bytes;
			res->first_only += alone;
			res->copies += to->copies;
			n++;
		}
		if (takeover) {
			/* the old console shows its greeter by now: the removal changes nothing */
			bench_console_card(from, false, card_token, sizeof(card_token));
			wait_greeter(from, r_from, 10000);
		}
		if (res->failed > 3) {
			break;
		}
		struct bench_console *t = from;
		from = to;
		to = t;
	}
	res->n = n;
	res->bytes_p50 = percentile(frame_bytes, n, 0.5);
	for (int p = 0; p < PARTS; p++) {
		res->p50[p] = percentile(samples[p], n, 0.5);
		res->p99[p] = percentile(samples[p], n, 0.99);
		if (p == TOTAL && n) {
			res->min = samples[p][0];
			res->max = samples[p][n - 1];
		}
	}
	res->setup_greeters_us = t_greeters - t_start;
	res->setup_login_us = t_login - t_greeters;
	res->refusals = A.refusals + B.refusals;
	bench_console_stop(&A);
	bench_console_stop(&B);
	stop_sessiond();
	return true;
}

static void print_json(const struct result *res, size_t count, bool takeover)
{
	printf("{\"width_px\": %d, \"height_px\": %d, \"takeover\": %s, \"target_p50_ms\": %.0f",
		WIDTH, HEIGHT, takeover ? "true" : "false", TARGET_P50_MS);
	for (size_t i = 0; i < count; i++) {
		const struct result *r = &res[i];
		const char *m = slim_sec_mode_name(r->mode);
		printf(", \"%s_migrations\": %zu, \"%s_failed\": %zu", m, r->n, m, r->failed);
		for (int p = 0; p < PARTS; p++) {
			printf(", \"%s_%s_p50_ms\": %.3f, \"%s_%s_p99_ms\": %.3f", m, part_keys[p],
				ms(r->p50[p]), m, part_keys[p], ms(r->p99[p]));
		}
		printf(", \"%s_migration_min_ms\": %.3f, \"%s_migration_max_ms\": %.3f, "
			"\"%s_first_frame_complete\": %zu, \"%s_picture_bytes_p50\": %llu",
			m, ms(r->min), m, ms(r->max), m, r->first_only, m,
			(unsigned long long)r->bytes_p50);
	}
	if (count == 2 && res[0].p50[TOTAL]) {
		printf(", \"dtls_over_clear_p50_ratio\": %.3f",
			(double)res[1].p50[TOTAL] / (double)res[0].p50[TOTAL]);
	}
	printf("}\n");
}

static void print_table(const struct result *res, size_t count, bool takeover)
{
	printf("Card tap to the session's first complete frame on the other console, "
		"%dx%d, loopback\n%s\n\n", WIDTH, HEIGHT,
		takeover ? "put on the new console while the old one shows the session" :
		"taken off the old console first, then put on the new one");
	printf("%-27s", "");
	for (size_t i = 0; i < count; i++) {
		printf(" %9s-p50 %9s-p99", slim_sec_mode_name(res[i].mode),
			slim_sec_mode_name(res[i].mode));
	}
	printf("\n");
	for (int p = 0; p < PARTS; p++) {
		printf("%-27s", part_names[p]);
		for (size_t i = 0; i < count; i++) {
			printf(" %10.1f ms %10.1f ms", ms(res[i].p50[p]), ms(res[i].p99[p]));
		}
		printf("\n");
	}
	for (size_t i = 0; i < count; i++) {
		const struct result *r = &res[i];
		double miss = ms(r->p50[TOTAL]) - TARGET_P50_MS;
		printf("\n%s: %zu migrations, %zu failed; min %.1f ms, max %.1f ms; target p50 <= "
			"%.0f ms: %s", slim_sec_mode_name(r->mode), r->n, r->failed, ms(r->min), ms(r->max),
			TARGET_P50_MS, r->n == 0 ? "no data" : miss <= 0 ? "ok" : "MISSED");
		printf("\n  the first frame was complete on its own in %zu of %zu; %llu bytes (p50), "
			"%zu COPY commands; %u REFUSEs on display associations; setup: greeters %.1f s, "
			"login %.1f s\n", r->first_only, r->n, (unsigned long long)r->bytes_p50, r->copies,
			r->refusals, ms(r->setup_greeters_us) / 1000, ms(r->setup_login_us) / 1000);
	}
	if (count == 2 && res[0].p50[TOTAL]) {
		double ratio = (double)res[1].p50[TOTAL] / (double)res[0].p50[TOTAL];
		printf("\nDTLS / clear, p50: %.2f (bar: at most %.2f): %s\n", ratio, DTLS_MAX_RATIO,
			ratio <= DTLS_MAX_RATIO ? "ok" : "MISSED");
	}
}

int main(int argc, char *argv[])
{
	bool json = false, takeover = false;
	size_t migrations = 50;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--quick") == 0) {
			migrations = 6;
		} else if (strcmp(argv[i], "--takeover") == 0) {
			takeover = true;
		} else if (strcmp(argv[i], "-v") == 0) {
			verbose = true;
		} else if (strcmp(argv[i], "--migrations") == 0 && i + 1 < argc) {
			migrations = strtoul(argv[++i], NULL, 10);
			migrations = migrations < 1 ? 1 : migrations > MAX_MIGRATIONS ?
				MAX_MIGRATIONS : migrations;
		} else {
			fprintf(stderr, "usage: %s [--json] [--quick] [--migrations N] [--takeover] [-v]\n",
				argv[0]);
			return 2;
		}
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bench-migration: needs root (users, PAM, the session manager): "
			"skipped\n");
		return 77;
	}
	if (access("/usr/sbin/useradd", X_OK) != 0 || access("/usr/sbin/chpasswd", X_OK) != 0) {
		fprintf(stderr, "bench-migration: needs useradd and chpasswd: skipped\n");
		return 77;
	}
	slim_log_init(verbose ? SLIM_LOG_DEBUG : SLIM_LOG_ERROR, NULL);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal); /* meson's timeout */
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	atexit(cleanup);

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/slim-bench-migration-XXXXXX");
	if (!mkdtemp(tmpdir) || chmod(tmpdir, 0755) != 0) {
		tmpdir[0] = '\0';
		fprintf(stderr, "bench-migration: cannot create a temporary directory\n");
		return 1;
	}
	if (!setup_users()) {
		fprintf(stderr, "bench-migration: cannot create the test users or PAM service\n");
		return 1;
	}
	static const enum slim_sec_mode modes[] = { SLIM_SEC_CLEAR, SLIM_SEC_DTLS };
	struct result res[2];
	size_t count = 0;
	bool ok = true;
	for (size_t i = 0; i < 2 && ok; i++) {
		ok = measure(modes[i], migrations, takeover, &res[count]);
		if (ok) {
			count++;
		}
		ok = ok && res[count - 1].n > 0 && res[count - 1].failed == 0;
	}
	if (count > 0) {
		if (json) {
			print_json(res, count, takeover);
		} else {
			print_table(res, count, takeover);
		}
	}
	if (!ok) {
		show_logs();
	}
	bench_console_stop(&A);
	bench_console_stop(&B);
	cleanup();
	return ok ? 0 : 1;
}
