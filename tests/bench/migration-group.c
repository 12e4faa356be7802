/*
 * bench-migration --group: hot-desking across a server group
 * (session-manager.md section 9), with everything real but the consoles.
 *
 * One etcd member of the benchmark's own on loopback (free ports, its data
 * in the temporary directory, killed at the end, on failure, on signals
 * and if this process dies), and per transport two managers in one group
 * under a prefix of that transport's: A and B, each with its port, run
 * directory and keys, A's card.key copied to B (the servers of a group
 * share it), group_ttl 3. The login is on A, so A publishes the card.
 *
 * Each migration: the card is taken off the console showing the session
 * (A gives it a greeter, the session waits), a console new to both
 * servers says HELLO to B and gets B's greeter (B has a session's room
 * more than A: placement keeps it there), and the card is tapped on it,
 * timed. B knows no binding for the card, the registry names A: MOVE. The
 * console's control association (console/manager.c) goes to A, which
 * answers its HELLO; the card is told to it again, and A redirects the
 * console to the session.
 *
 * The tapping console is a new one each time (an id, or a key, of its
 * own): a console of B's that A never saw, which A enrolls (enroll = open). The same
 * console again would be one A still knows, showing its greeter there (in
 * clear, refused as a second address of a console heard seconds ago).
 *
 * The parts of card -> REDIRECT: card -> MOVE (B's lookup, the MOVE on the
 * wire; managed.c stamps the new association when it begins), MOVE -> A
 * answers (A enrolling the console; over DTLS first the control handshake
 * with A, whose key B vouched for), A answers -> REDIRECT (the card told
 * again and A's binding; A holds the moved console's greeter back for it).
 *
 * Placement, once, in clear and not with --quick: a third manager C joins,
 * every server starts empty, and 30 throwaway users log in one after the
 * other, each at a new console (640x480) that says HELLO to A and follows
 * any MOVE; the sessions each server then runs (its `slimlandctl list`)
 * and where each console landed are counted. The weights are pinned
 * (existing_users_weight 200, cpu_weight 0): the three servers share one
 * machine, whose memory and load each reads at another moment and rounds,
 * and those few points of room would decide the ties a session's room
 * (the move's margin) leaves; SLIM_BENCH_DEFAULT_WEIGHTS=1 keeps the
 * defaults.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "migration.h"
#include "run-tag.h"
#include "session.h"

#define ETCD "etcd"
#define ETCD_START_MS 20000
#define GROUP_TTL_S 3
/*
 * A console B moves away stays in A's table with a greeter once the card
 * leaves it: forgotten (its greeter ended) this long after it fell silent,
 * so that the new console of each migration does not leave one more
 * greeter running for the default 30 s. Twice the consoles' PING.
 */
#define CONSOLE_TIMEOUT_S 10

/*
 * Placement's weights, pinned: the servers share one host, so memory and
 * load are one machine's, read and published (rounded) at different
 * moments. With the defaults a server with one session more than another
 * is exactly a session's room (100) behind it, and the few points those
 * readings differ by decide whether A moves a console or keeps it. CPU
 * left out, and a session costing two sessions' room, the sessions
 * decide. SLIM_BENCH_DEFAULT_WEIGHTS=1: the defaults (200, 100, 100).
 */
#define PINNED_WEIGHTS "ram_per_user = 200\nexisting_users_weight = 200\ncpu_weight = 0\n"

static const char *weights(void)
{
	const char *e = getenv("SLIM_BENCH_DEFAULT_WEIGHTS");
	return e && *e && strcmp(e, "0") != 0 ? "" : PINNED_WEIGHTS;
}

static const uint8_t card_token[] = { 0x04, 0xb3, 0x1e, 0x5a, 0x72, 0x80, 0x01 };

static pid_t etcd = -1;
static uint16_t etcd_port;

/* GET `path` of the etcd member: its answer (headers and body), false if none in timeout_ms. */
static bool http_get(uint16_t port, const char *path, char *out, size_t size, int timeout_ms)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return false;
	}
	char request[256];
	int len = snprintf(request, sizeof(request), "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%u\r\n\r\n",
		path, port);
	size_t got = 0;
	bool ok = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 &&
		write(fd, request, (size_t)len) == len;
	uint64_t end = bench_now_us() + (uint64_t)timeout_ms * 1000;
	while (ok && got + 1 < size) {
		uint64_t now = bench_now_us();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (now >= end || poll(&p, 1, (int)((end - now) / 1000) + 1) <= 0) {
			ok = false;
			break;
		}
		ssize_t n = read(fd, out + got, size - 1 - got);
		if (n <= 0) {
			break; /* HTTP/1.0: the answer ends with the connection */
		}
		got += (size_t)n;
	}
	close(fd);
	out[got] = '\0';
	return ok && got > 0;
}

/* etcd reads ETCD_* variables as flags: none of the caller's reach it. */
static void clear_etcd_environment(void)
{
	extern char **environ;
	for (bool again = true; again; ) {
		again = false;
		for (char **e = environ; e && *e; e++) {
			if (strncmp(*e, "ETCD", 4) == 0) {
				char name[128];
				size_t n = strcspn(*e, "=");
				snprintf(name, sizeof(name), "%.*s", (int)n, *e);
				unsetenv(name);
				again = true;
				break;
			}
		}
	}
}

bool mig_etcd_start(void)
{
	uint16_t peer = 0;
	for (int i = 0; i < 10 && (etcd_port == 0 || peer == 0 || etcd_port == peer); i++) {
		etcd_port = bench_free_port(SOCK_STREAM);
		peer = bench_free_port(SOCK_STREAM);
	}
	if (etcd_port == 0 || peer == 0 || etcd_port == peer) {
		fprintf(stderr, "bench-migration: no free ports for etcd\n");
		return false;
	}
	char data[128], log[128], client_url[64], peer_url[64], cluster[96], token[64];
	snprintf(data, sizeof(data), "%s/etcd", rig_tmpdir);
	snprintf(log, sizeof(log), "%s/etcd.log", rig_tmpdir);
	snprintf(client_url, sizeof(client_url), "http://127.0.0.1:%u", etcd_port);
	snprintf(peer_url, sizeof(peer_url), "http://127.0.0.1:%u", peer);
	snprintf(cluster, sizeof(cluster), "bench=%s", peer_url);
	/* a cluster of its own: it never joins another member on these ports */
	snprintf(token, sizeof(token), "slimbench-migration-%ld", (long)getpid());
	pid_t parent = getpid();
	etcd = fork();
	if (etcd == 0) {
		/* gone with us, even if we are killed without a chance to clean up */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) {
			_exit(1);
		}
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, STDERR_FILENO);
			dup2(fd, STDOUT_FILENO);
		}
		clear_etcd_environment();
		execlp(ETCD, ETCD, "--name", "bench", "--data-dir", data,
			"--listen-client-urls", client_url, "--advertise-client-urls", client_url,
			"--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
			"--initial-cluster", cluster, "--initial-cluster-state", "new",
			"--initial-cluster-token", token,
			"--logger", "zap", "--log-outputs", "stderr", "--log-level", "error",
			(char *)NULL);
		fprintf(stderr, "cannot run %s: %s\n", ETCD, strerror(errno));
		_exit(127);
	}
	if (etcd < 0) {
		fprintf(stderr, "bench-migration: fork: %s\n", strerror(errno));
		return false;
	}
	/* healthy: a leader, and a read through it */
	uint64_t t0 = bench_now_us(), end = t0 + ETCD_START_MS * 1000ull;
	while (bench_now_us() < end) {
		char answer[1024];
		if (http_get(etcd_port, "/health", answer, sizeof(answer), 1000) &&
				strstr(answer, "\"health\":\"true\"")) {
			if (rig_verbose) {
				fprintf(stderr, "bench-migration: etcd at %s healthy after %.0f ms\n",
					client_url, (double)(bench_now_us() - t0) / 1000);
			}
			return true;
		}
		int status;
		if (waitpid(etcd, &status, WNOHANG) == etcd) {
			etcd = -1;
			fprintf(stderr, "bench-migration: etcd exited (%s %d) before it answered; "
				"--group needs etcd (Debian: etcd-server)\n",
				WIFEXITED(status) ? "status" : "signal",
				WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			return false;
		}
		usleep(50000);
	}
	fprintf(stderr, "bench-migration: etcd at %s not healthy within %d s\n", client_url,
		ETCD_START_MS / 1000);
	return false;
}

void mig_etcd_stop(void)
{
	if (etcd <= 0) {
		return;
	}
	kill(etcd, SIGTERM);
	if (!bench_wait_exit(etcd, 2000)) {
		kill(etcd, SIGKILL);
		waitpid(etcd, NULL, 0);
	}
	etcd = -1;
}

/* A's card.key as B's: a group's servers hash cards alike. */
static bool copy_card_key(const char *from_dir, const char *to_dir)
{
	char from[160], to[160], key[256];
	snprintf(from, sizeof(from), "%s/card.key", from_dir);
	snprintf(to, sizeof(to), "%s/card.key", to_dir);
	int in = open(from, O_RDONLY | O_CLOEXEC);
	ssize_t n = in >= 0 ? read(in, key, sizeof(key)) : -1;
	if (in >= 0) {
		close(in);
	}
	if (n <= 0 || (mkdir(to_dir, 0700) != 0 && errno != EEXIST)) {
		return false;
	}
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	bool ok = out >= 0 && write(out, key, (size_t)n) == n;
	if (out >= 0) {
		ok = close(out) == 0 && ok;
	}
	return ok;
}

static bool start_server(enum slim_sec_mode mode, char which, uint16_t port)
{
	const char *m = slim_sec_mode_name(mode);
	char name[32], key_dir[128], extra[640];
	snprintf(name, sizeof(name), "%s-%c", m, which);
	snprintf(key_dir, sizeof(key_dir), "%s/keys-%s", rig_tmpdir, name);
	/* a prefix per transport: the servers of the clear run may linger for a lease */
	snprintf(extra, sizeof(extra), "etcd = http://127.0.0.1:%u\n"
		"group_prefix = /slimbench-migration-%s/\n"
		"server_name = %s\n"
		"group_address = 127.0.0.1:%u\n"
		"group_ttl = %d\n"
		"console_timeout = %d\n"
		"%s",
		etcd_port, m, name, port, GROUP_TTL_S, CONSOLE_TIMEOUT_S, weights());
	if (which != 'a') {
		char key_dir_a[128];
		snprintf(key_dir_a, sizeof(key_dir_a), "%s/keys-%s-a", rig_tmpdir, m);
		if (!copy_card_key(key_dir_a, key_dir)) {
			fprintf(stderr, "bench-migration: cannot copy %s/card.key\n", key_dir_a);
			return false;
		}
	}
	if (!rig_start_sessiond(name, port, mode, key_dir, extra)) {
		return false;
	}
	/* registered: its record and lease are in etcd, and its watch runs */
	char said[64];
	snprintf(said, sizeof(said), "group: %s registered under", name);
	for (int i = 0; i < 500; i++) {
		if (rig_sessiond_said(name, said)) {
			return true;
		}
		usleep(20000);
	}
	fprintf(stderr, "bench-migration: %s did not register in etcd within 10 s\n", name);
	return false;
}

bool mig_group_start(enum slim_sec_mode mode, uint16_t *port_a, uint16_t *port_b)
{
	*port_a = bench_free_port(SOCK_DGRAM);
	*port_b = bench_free_port(SOCK_DGRAM);
	if (*port_a == 0 || *port_b == 0 || *port_a == *port_b) {
		return false;
	}
	/* A first: it makes the card key */
	return start_server(mode, 'a', *port_a) && start_server(mode, 'b', *port_b);
}

void mig_group_migrations(enum slim_sec_mode mode, uint16_t port_b, size_t migrations,
		uint16_t session_port, struct bench_console **shows, struct mig_group_stats *st)
{
	const char *m = slim_sec_mode_name(mode);
	char manager_b[32];
	snprintf(manager_b, sizeof(manager_b), "127.0.0.1:%u", port_b);
	for (size_t i = 0; i < migrations && st->failed <= 3; i++) {
		struct bench_console *from = *shows;
		uint32_t r = from->redirects;
		bench_console_card(from, false, card_token, sizeof(card_token));
		if (!rig_wait_greeter(from, r, 10000)) {
			fprintf(stderr, "bench-migration: no greeter after the card left console %s\n",
				from->id);
			st->failed++;
		}

		/* a console of B's that neither server has seen */
		char id[32], key[160];
		snprintf(id, sizeof(id), "bench-b%zu", i + 1);
		snprintf(key, sizeof(key), "%s/console-%s-b%zu.key", rig_tmpdir, m, i + 1);
		if (i > 0) {
			st->refusals += mig_b.refusals; /* the first was one of A's */
		}
		bench_console_stop(&mig_b);
		if (!bench_console_start(&mig_b, manager_b, id, MIG_WIDTH, MIG_HEIGHT, mode, key)) {
			fprintf(stderr, "bench-migration: cannot start console %s\n", id);
			st->failed = migrations;
			return;
		}
		*shows = &mig_b; /* the card's console from now on */
		if (!rig_wait_greeter(&mig_b, 0, 20000) || mig_b.manager_changes) {
			fprintf(stderr, "bench-migration: console %s: %s\n", mig_b.id,
				mig_b.manager_changes ? "moved away from B at its HELLO" :
				"no greeter from B");
			st->failed++;
			continue;
		}

		/* all quiet: the tap */
		rig_settle(&mig_b, 100, 2000);
		uint32_t redirects = mig_b.redirects;
		uint64_t t0 = bench_now_us();
		bench_console_card(&mig_b, true, card_token, sizeof(card_token));
		bool alone = false;
		uint64_t t3 = rig_wait_session(&mig_b, redirects, session_port, 5000, &alone);
		if (mig_b.manager_changes > 1) {
			/* to A, back to B (placement), to A again, ... */
			st->bounces += mig_b.manager_changes - 1;
		}
		if (t3 == 0 || mig_b.manager_changes == 0) {
			fprintf(stderr, "bench-migration: migration %zu through B: %s (manager %s, "
				"%u changes)\n", i + 1, t3 == 0 ? "no complete frame of the session within 5 s" :
				"shown the session without a MOVE", mig_b.manager, mig_b.manager_changes);
			st->failed++;
			continue;
		}
		struct mig_sample s;
		mig_sample_of(&mig_b, t0, t3, true, alone, &s);
		mig_record(&s);
		st->n++;
	}
	st->refusals += migrations > 0 ? mig_b.refusals : 0;
}

/* Placement */

/* One request on manager `name`'s control socket, as slimlandctl makes it: its lines before "ok". */
static bool ctl_request(const char *name, const char *request, char *out, size_t size)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/run-%s/ctl.sock", rig_tmpdir, name);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char line[256];
	int len = snprintf(line, sizeof(line), "%s\n", request);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0 ||
			write(fd, line, (size_t)len) != len) {
		if (fd >= 0) {
			close(fd);
		}
		return false;
	}
	size_t got = 0;
	bool ok = false;
	uint64_t end = bench_now_us() + 3000000;
	out[0] = '\0';
	while (got + 1 < size) {
		uint64_t now = bench_now_us();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (now >= end || poll(&p, 1, (int)((end - now) / 1000) + 1) <= 0) {
			break;
		}
		ssize_t n = read(fd, out + got, size - 1 - got);
		if (n <= 0) {
			break;
		}
		got += (size_t)n;
		out[got] = '\0';
		char *ok_line = strstr(out, "ok\n");
		if (ok_line && (ok_line == out || ok_line[-1] == '\n')) {
			*ok_line = '\0';
			ok = true;
			break;
		}
		if (strncmp(out, "error ", 6) == 0 || strstr(out, "\nerror ")) {
			break;
		}
	}
	close(fd);
	return ok;
}

static const char *const placement_names[MIG_PLACEMENT_SERVERS] = { "A", "B", "C" };

/* Sessions of users starting with `prefix` in manager `name`'s `list`; their ids in ids (if any). */
static int count_sessions(const char *name, const char *prefix, unsigned *ids, int max)
{
	static char out[65536];
	if (!ctl_request(name, "list", out, sizeof(out))) {
		return -1;
	}
	int n = 0;
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
		unsigned id;
		char user[64];
		if (sscanf(l, "session %u %63s", &id, user) == 2 &&
				strncmp(user, prefix, strlen(prefix)) == 0) {
			if (ids && n < max) {
				ids[n] = id;
			}
			n++;
		}
	}
	return n;
}

/* Sessions in the registry as manager `name` reads it (`group`): their sum, -1 if no answer. */
static int registry_sessions(const char *name)
{
	static char out[65536];
	if (!ctl_request(name, "group", out, sizeof(out))) {
		return -1;
	}
	int total = 0;
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
		char server[64];
		unsigned n;
		if (sscanf(l, "server %63s address %*s sessions %u", server, &n) == 2) {
			total += (int)n;
		}
	}
	return total;
}

static bool wait_registry(const char *name, int sessions, int timeout_ms)
{
	for (int i = 0; i * 50 < timeout_ms; i++) {
		if (registry_sessions(name) == sessions) {
			return true;
		}
		usleep(50000);
	}
	return false;
}

/* Ends our users' sessions (`prefix`) on manager `name`; true once none is left. */
static bool end_sessions(const char *name, const char *prefix)
{
	unsigned ids[64];
	int n = count_sessions(name, prefix, ids, 64);
	for (int i = 0; i < n && i < 64; i++) {
		char request[32], out[256];
		snprintf(request, sizeof(request), "end %u", ids[i]);
		ctl_request(name, request, out, sizeof(out));
	}
	for (int i = 0; i < 200; i++) {
		if (count_sessions(name, prefix, NULL, 0) == 0) {
			return true;
		}
		rig_settle(&mig_a, 50, 50); /* every console runs meanwhile */
	}
	return false;
}

void mig_placement_run(enum slim_sec_mode mode, uint16_t port_a, uint16_t port_b,
		struct mig_placement *p)
{
	const char *m = slim_sec_mode_name(mode);
	char placement_prefix[48]; /* the placement's users' names begin so */
	run_tag_name(placement_prefix, sizeof(placement_prefix), "pl");
	*p = (struct mig_placement){ .weights = weights()[0] ? "pinned: ram_per_user 200, "
		"existing_users_weight 200, cpu_weight 0" : "defaults: ram_per_user 200, "
		"existing_users_weight 100, cpu_weight 100" };
	char server[MIG_PLACEMENT_SERVERS][32], at[MIG_PLACEMENT_SERVERS][32];
	uint16_t port_c = 0;
	for (int i = 0; i < 10 && (port_c == 0 || port_c == port_a || port_c == port_b); i++) {
		port_c = bench_free_port(SOCK_DGRAM);
	}
	uint16_t ports[MIG_PLACEMENT_SERVERS] = { port_a, port_b, port_c };
	for (int i = 0; i < MIG_PLACEMENT_SERVERS; i++) {
		snprintf(server[i], sizeof(server[i]), "%s-%c", m, 'a' + i);
		snprintf(at[i], sizeof(at[i]), "127.0.0.1:%u", ports[i]);
	}
	/* nobody's session yet: the migrations' one ends, its consoles go to greeters */
	if (!end_sessions(server[0], mig_user)) {
		fprintf(stderr, "bench-migration: placement: the migrations' session did not end\n");
		p->failed = MIG_PLACEMENT_LOGINS;
		return;
	}
	if (!mig_placement_users() || !start_server(mode, 'c', port_c)) {
		fprintf(stderr, "bench-migration: placement: no users or no server C\n");
		p->failed = MIG_PLACEMENT_LOGINS;
		return;
	}
	if (!wait_registry(server[0], 0, 10000) ||
			count_sessions(server[0], "", NULL, 0) < 0) {
		fprintf(stderr, "bench-migration: placement: A does not see an empty group\n");
	}
	/* C in A's copy of the registry */
	char c_line[64];
	snprintf(c_line, sizeof(c_line), "server %s ", server[2]);
	for (int i = 0; i < 100; i++) {
		static char out[65536];
		if (ctl_request(server[0], "group", out, sizeof(out)) && strstr(out, c_line)) {
			break;
		}
		usleep(50000);
	}

	struct bench_console *cs = calloc(MIG_PLACEMENT_LOGINS, sizeof(*cs));
	uint64_t login_us[MIG_PLACEMENT_LOGINS];
	size_t started = 0, timed = 0;
	for (size_t i = 0; cs && i < MIG_PLACEMENT_LOGINS && p->failed <= 3; i++) {
		struct bench_console *c = &cs[i];
		char id[32], user[32];
		snprintf(id, sizeof(id), "bench-%s-p%02zu", m, i + 1);
		mig_placement_user((int)i, user, sizeof(user));
		/* what the last login left, in A's copy of the registry */
		if (!wait_registry(server[0], (int)(p->logins), 3000)) {
			p->registry_lag++;
		}
		uint64_t t0 = bench_now_us();
		bool in = rig_console_login(c, at[0], id, MIG_PLACEMENT_WIDTH, MIG_PLACEMENT_HEIGHT,
			mode, user);
		if (!c->core) {
			p->failed++;
			break;
		}
		started++;
		if (!in) {
			p->failed++;
			continue;
		}
		p->moved += c->manager_changes > 0;
		int where = -1;
		for (int s = 0; s < MIG_PLACEMENT_SERVERS; s++) {
			if (strcmp(c->manager, at[s]) == 0) {
				where = s;
			}
		}
		login_us[timed++] = bench_now_us() - t0;
		rig_settle(c, 200, 3000);
		if (where >= 0) {
			p->landed[where]++;
		}
		p->logins++;
		if (rig_verbose) {
			fprintf(stderr, "bench-migration: placement: %s at %s%s\n", user,
				where >= 0 ? placement_names[where] : c->manager,
				c->manager_changes ? " (moved)" : "");
		}
	}
	if (!wait_registry(server[0], (int)p->logins, 3000)) {
		p->registry_lag++;
	}
	uint32_t lo = UINT32_MAX, hi = 0;
	for (int s = 0; s < MIG_PLACEMENT_SERVERS; s++) {
		int n = count_sessions(server[s], placement_prefix, NULL, 0);
		p->sessions[s] = n < 0 ? 0 : (uint32_t)n;
		lo = p->sessions[s] < lo ? p->sessions[s] : lo;
		hi = p->sessions[s] > hi ? p->sessions[s] : hi;
	}
	p->spread = hi - lo;
	qsort(login_us, timed, sizeof(login_us[0]), bench_cmp_u64);
	p->login_p50_us = timed ? login_us[timed / 2] : 0;
	p->done = p->logins > 0;

	/* all ended, the consoles to greeters, then gone */
	for (int s = 0; s < MIG_PLACEMENT_SERVERS; s++) {
		if (!end_sessions(server[s], placement_prefix)) {
			fprintf(stderr, "bench-migration: placement: sessions left on %s\n", server[s]);
		}
	}
	rig_consoles_truncate(2);
	for (size_t i = 0; i < started; i++) {
		bench_console_stop(&cs[i]);
	}
	free(cs);
}
