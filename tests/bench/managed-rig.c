/*
 * The users, managers and consoles of a benchmark of the session manager
 * (managed-rig.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <linux/input-event-codes.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "managed-rig.h"
#include "run-tag.h"
#include "session.h"

#define MAX_USERS 256

char rig_tmpdir[64];
bool rig_verbose;
const char *rig_startup = SLIM_ECHO_BIN;
const char *rig_greeter = SLIMLAND_GREETER_BIN;
unsigned rig_greeters = 10;
void (*rig_at_cleanup)(void);

static const char *prog_name = "bench";
static char greeter_user[48], service[48], service_path[80], cgroup_slice[64];
static pid_t sessiond[RIG_MAX_SESSIONDS] = { -1, -1, -1 };
static int last_sessiond = -1;
/* our users (the greeter user first) and their uids: never root's processes */
static char users[MAX_USERS][48];
static uid_t uids[MAX_USERS];
static size_t n_users;
/* the run's greeter uids (run-tag.h): each manager a share of its own */
static unsigned greeter_uids[2];
static volatile sig_atomic_t cleaning;

static int run(const char *cmd)
{
	int status = system(cmd);
	return status == -1 ? -1 : WEXITSTATUS(status);
}

static uid_t uid_of(const char *user)
{
	struct passwd *pw = getpwnam(user);
	return pw ? pw->pw_uid : (uid_t)-1;
}

static bool is_ours(unsigned uid)
{
	if (greeter_uids[0] && uid >= greeter_uids[0] && uid <= greeter_uids[1]) {
		return true;
	}
	for (size_t i = 0; i < n_users; i++) {
		if (uids[i] == uid) {
			return true;
		}
	}
	return false;
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
		if (uid != (unsigned)-1 && is_ours(uid)) {
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
		"/sys/fs/cgroup/memory",
	};
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char dir[256];
		snprintf(dir, sizeof(dir), "%s/%s/user-%u.slice", roots[i], cgroup_slice,
			(unsigned)uid);
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

/* The managers, and the sessions they leave running when they stop: they are ours to end. */
void rig_stop_sessionds(void)
{
	for (int i = 0; i < RIG_MAX_SESSIONDS; i++) {
		if (sessiond[i] > 0) {
			kill(sessiond[i], SIGTERM);
		}
	}
	for (int i = 0; i < RIG_MAX_SESSIONDS; i++) {
		if (sessiond[i] > 0) {
			if (!bench_wait_exit(sessiond[i], 2000)) {
				kill(sessiond[i], SIGKILL);
				waitpid(sessiond[i], NULL, 0);
			}
			sessiond[i] = -1;
		}
	}
	last_sessiond = -1;
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

void rig_cleanup(void)
{
	if (cleaning) {
		return;
	}
	cleaning = 1;
	rig_stop_sessionds();
	if (rig_at_cleanup) {
		rig_at_cleanup();
	}
	if (service_path[0]) {
		unlink(service_path);
	}
	for (size_t i = 0; i < n_users; i++) {
		char cmd[160];
		snprintf(cmd, sizeof(cmd), "rm -rf /run/user/%u /run/slimland/user-%u",
			(unsigned)uids[i], (unsigned)uids[i]);
		run(cmd);
		remove_cgroups(uids[i]);
		snprintf(cmd, sizeof(cmd), "userdel -r %s >/dev/null 2>&1", users[i]);
		run(cmd);
	}
	n_users = 0;
	if (rig_tmpdir[0]) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rig_tmpdir);
		run(cmd);
		rig_tmpdir[0] = '\0';
	}
	run_tag_release(); /* nothing left to sweep */
}

static void on_signal(int sig)
{
	rig_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static bool add_user(const char *label, const char *home_shell, bool password,
		char *name, size_t size)
{
	if (n_users == MAX_USERS || !run_tag_name(name, size, label)) {
		return false;
	}
	char cmd[384];
	snprintf(cmd, sizeof(cmd), "useradd -m -d %s/home-%s -s %s %s%s%s%s", rig_tmpdir,
		name, home_shell, name, password ? " && echo '" : "", password ? name : "",
		password ? ":" RIG_PASSWORD "' | chpasswd" : "");
	if (run(cmd) != 0) {
		return false;
	}
	snprintf(users[n_users], sizeof(users[n_users]), "%s", name);
	uids[n_users] = uid_of(name);
	return uids[n_users++] != (uid_t)-1;
}

bool rig_add_user(const char *label, char *name, size_t size)
{
	return add_user(label, "/bin/sh", true, name, size);
}

bool rig_setup(const char *prog, const char *label)
{
	prog_name = prog;
	if (geteuid() != 0) {
		return false;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal); /* meson's timeout */
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	atexit(rig_cleanup);
	char greeter_label[32];
	snprintf(greeter_label, sizeof(greeter_label), "%s-gr", label);
	if (!run_tag_name(service, sizeof(service), label) ||
			!run_tag_uids_at_least(rig_greeters * RIG_MAX_SESSIONDS, &greeter_uids[0],
				&greeter_uids[1])) {
		return false;
	}
	snprintf(service_path, sizeof(service_path), "/etc/pam.d/%s", service);
	snprintf(cgroup_slice, sizeof(cgroup_slice), "%s.slice", service);
	snprintf(rig_tmpdir, sizeof(rig_tmpdir), "/tmp/%s-XXXXXX", service);
	if (!mkdtemp(rig_tmpdir) || chmod(rig_tmpdir, 0755) != 0) {
		rig_tmpdir[0] = '\0';
		fprintf(stderr, "%s: cannot create a temporary directory\n", prog);
		return false;
	}
	FILE *f = fopen(service_path, "w");
	if (!f) {
		return false;
	}
	fputs("auth required pam_unix.so\n"
		"account required pam_unix.so\n"
		"session required pam_unix.so\n", f);
	if (fclose(f) != 0) {
		return false;
	}
	return add_user(greeter_label, "/usr/sbin/nologin", false, greeter_user,
		sizeof(greeter_user));
}

bool rig_start_sessiond(const char *name, uint16_t port, enum slim_sec_mode mode,
		const char *key_dir, const char *extra)
{
	int slot = 0;
	while (slot < RIG_MAX_SESSIONDS && sessiond[slot] > 0) {
		slot++;
	}
	if (slot == RIG_MAX_SESSIONDS) {
		return false;
	}
	char conf[128], rundir[128], log[128];
	snprintf(conf, sizeof(conf), "%s/slimland-%s.conf", rig_tmpdir, name);
	snprintf(rundir, sizeof(rundir), "%s/run-%s", rig_tmpdir, name);
	snprintf(log, sizeof(log), "%s/sessiond-%s.log", rig_tmpdir, name);
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
		"key_dir = %s\n"
		"cgroup_slice = %s\n"
		"greeter_uids = %u-%u\n"
		"%s",
		port, rig_startup, rig_greeter, greeter_user, SLIMLAND_BIN, service,
		slim_sec_mode_name(mode), key_dir, cgroup_slice, greeter_uids[0] + slot * rig_greeters,
		greeter_uids[0] + (slot + 1) * rig_greeters - 1, extra ? extra : "");
	if (fclose(f) != 0) {
		return false;
	}
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, STDERR_FILENO);
			dup2(fd, STDOUT_FILENO);
		}
		execl(SLIMLAND_SESSIOND_BIN, SLIMLAND_SESSIOND_BIN, "--config", conf,
			"--run-dir", rundir, rig_verbose ? "-v" : (char *)NULL, (char *)NULL);
		_exit(127);
	}
	if (pid < 0) {
		return false;
	}
	sessiond[slot] = pid;
	/* ctl.sock comes after the UDP socket: then consoles can say HELLO */
	char ctl[160];
	snprintf(ctl, sizeof(ctl), "%s/ctl.sock", rundir);
	for (int i = 0; i < 250; i++) {
		if (access(ctl, F_OK) == 0) {
			last_sessiond = pid;
			return true;
		}
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			sessiond[slot] = -1;
			return false;
		}
		usleep(20000);
	}
	return false;
}

int rig_sessiond_pid(void)
{
	return last_sessiond;
}

bool rig_sessiond_said(const char *name, const char *text)
{
	char path[128], line[1024];
	snprintf(path, sizeof(path), "%s/sessiond-%s.log", rig_tmpdir, name);
	FILE *f = fopen(path, "re");
	bool said = false;
	while (f && !said && fgets(line, sizeof(line), f)) {
		said = strstr(line, text) != NULL;
	}
	if (f) {
		fclose(f);
	}
	return said;
}

void rig_show_logs(void)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "for f in %s/sessiond-*.log %s/run-*/log/*/*.log "
		"%s/etcd.log; do [ -s \"$f\" ] && { echo \"== $f\"; tail -n 25 \"$f\"; }; done >&2",
		rig_tmpdir, rig_tmpdir, rig_tmpdir);
	run(cmd);
}

/* Waiting for things to happen on the consoles */

static struct bench_console **running;
static size_t n_running, cap_running;

void rig_consoles_add(struct bench_console *c)
{
	if (n_running == cap_running) {
		cap_running = cap_running ? 2 * cap_running : 16;
		running = realloc(running, cap_running * sizeof(*running));
		if (!running) {
			abort();
		}
	}
	running[n_running++] = c;
}

void rig_consoles_truncate(size_t n)
{
	if (n < n_running) {
		n_running = n;
	}
	if (n_running == 0) {
		free(running);
		running = NULL;
		cap_running = 0;
	}
}

bool rig_consoles_run(int timeout_ms, bool (*done)(void *data), void *data)
{
	return bench_consoles_run(running, n_running, timeout_ms, done, data);
}

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

bool rig_wait_redirected(struct bench_console *c, uint32_t redirects_before,
		uint32_t frames, int timeout_ms)
{
	struct until u = { c, redirects_before, frames };
	return rig_consoles_run(timeout_ms, until_done, &u);
}

void rig_settle(struct bench_console *c, int quiet_ms, int max_ms)
{
	uint64_t end = bench_now_us() + (uint64_t)max_ms * 1000;
	while (bench_now_us() < end) {
		uint32_t before = c->frames;
		rig_consoles_run(quiet_ms, NULL, NULL);
		if (c->frames == before) {
			return;
		}
	}
}

uint32_t rig_key_for(char ch)
{
	static const char *const rows[] = { "1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm" };
	static const uint32_t first[] = { KEY_1, KEY_Q, KEY_A, KEY_Z };
	for (int r = 0; r < 4; r++) {
		const char *p = strchr(rows[r], ch);
		if (p && ch) {
			return first[r] + (uint32_t)(p - rows[r]);
		}
	}
	switch (ch) {
	case '\n':
		return KEY_ENTER;
	case '-':
		return KEY_MINUS;
	case ' ':
		return KEY_SPACE;
	case '.':
		return KEY_DOT;
	}
	return 0;
}

void rig_type_text(struct bench_console *c, const char *text)
{
	for (const char *p = text; *p; p++) {
		uint32_t code = rig_key_for(*p);
		bench_console_key(c, code, true);
		rig_consoles_run(8, NULL, NULL);
		bench_console_key(c, code, false);
		rig_consoles_run(8, NULL, NULL);
	}
}

/* The compositor's own background (src/compositor/heads/background.c), XRGB. */
#define RIG_BACKGROUND 0x334050u

struct until_greeter {
	struct bench_console *c;
	uint32_t redirects;
	uint32_t frames_seen; /* looked at once per frame presented */
};

/*
 * The greeter's window is up once half the screen is not the compositor's
 * background (as the integration tests wait for it): a loaded machine may
 * show the background alone, and repaint it whole, for seconds.
 */
static bool until_greeter_done(void *data)
{
	struct until_greeter *u = data;
	const struct bench_console *c = u->c;
	if (c->redirects <= u->redirects || c->frames == 0 || c->frames == u->frames_seen) {
		return false;
	}
	u->frames_seen = c->frames;
	const struct slim_fb *fb = slim_console_core_fb(c->core);
	size_t other = 0, all = 0;
	for (uint32_t y = 0; y < fb->height; y += 8) {
		const uint32_t *row = slim_fb_row(fb, 0, y);
		for (uint32_t x = 0; x < fb->width; x += 8, all++) {
			other += (row[x] & 0xffffffu) != RIG_BACKGROUND;
		}
	}
	return other * 2 >= all;
}

bool rig_wait_greeter(struct bench_console *c, uint32_t redirects_before, int timeout_ms)
{
	struct until_greeter u = { c, redirects_before, 0 };
	if (!rig_consoles_run(timeout_ms, until_greeter_done, &u)) {
		return false;
	}
	rig_settle(c, 300, 3000);
	return true;
}

struct until_session {
	struct bench_console *c;
	uint32_t redirects;
	uint16_t port;
	uint32_t redirects_seen, frames_seen; /* what was looked at last */
	uint32_t complete; /* the complete frame, once there */
	bool first_only;
};

static bool until_session_done(void *data)
{
	struct until_session *u = data;
	struct bench_console *c = u->c;
	/* a REDIRECT elsewhere (a greeter first) leaves it to the next one */
	if (c->redirects <= u->redirects || c->frames == 0 || bench_console_port(c) != u->port) {
		return false;
	}
	/* looked at once per frame presented: the picture's datagrams wait meanwhile */
	if (c->redirects != u->redirects_seen || c->frames != u->frames_seen) {
		u->redirects_seen = c->redirects;
		u->frames_seen = c->frames;
		u->complete = bench_console_complete_frame(c, &u->first_only);
	}
	return u->complete > 0;
}

uint64_t rig_wait_session(struct bench_console *c, uint32_t redirects_before,
		uint16_t session_port, int timeout_ms, bool *first_only)
{
	struct until_session u = { c, redirects_before, session_port, 0, 0, 0, false };
	if (!rig_consoles_run(timeout_ms, until_session_done, &u) ||
			u.complete > BENCH_CONSOLE_FRAMES) {
		return 0;
	}
	*first_only = u.first_only;
	return c->frame_us[u.complete - 1];
}

bool rig_console_login(struct bench_console *c, const char *manager, const char *id,
		uint32_t width, uint32_t height, enum slim_sec_mode mode, const char *user)
{
	char key[160], typed[96];
	snprintf(key, sizeof(key), "%s/console-%s.key", rig_tmpdir, id);
	if (!bench_console_start(c, manager, id, width, height, mode, key)) {
		fprintf(stderr, "%s: cannot start console %s\n", prog_name, id);
		return false;
	}
	rig_consoles_add(c);
	if (!rig_wait_greeter(c, 0, 20000)) {
		fprintf(stderr, "%s: console %s: no greeter (at %s)\n", prog_name, c->id,
			c->manager);
		return false;
	}
	uint16_t greeter_port = bench_console_port(c);
	snprintf(typed, sizeof(typed), "%s\n" RIG_PASSWORD "\n", user);
	uint32_t before = c->redirects;
	rig_type_text(c, typed);
	if (!rig_wait_redirected(c, before, 1, 15000) || bench_console_port(c) == greeter_port) {
		fprintf(stderr, "%s: %s at console %s (%s): no session\n", prog_name, user, c->id,
			c->manager);
		return false;
	}
	return true;
}
