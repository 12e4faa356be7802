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
 * own): a console of B's that A never saw, which A enrolls (enroll = open)
 * and starts a greeter for before the card comes, as it would. The same
 * console again would be one A still knows, showing its greeter there (in
 * clear, refused as a second address of a console heard seconds ago).
 *
 * The parts of card -> REDIRECT: card -> MOVE (B's lookup, the MOVE on the
 * wire; managed.c stamps the new association when it begins), MOVE -> A
 * answers (A enrolling the console; over DTLS first the control handshake
 * with A, whose key B vouched for), A answers -> REDIRECT (A's greeter
 * for the console, then the card told again and A's binding).
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "migration.h"
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
	snprintf(data, sizeof(data), "%s/etcd", mig_tmpdir);
	snprintf(log, sizeof(log), "%s/etcd.log", mig_tmpdir);
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
			if (mig_verbose) {
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
	for (int i = 0; i < 100 && waitpid(etcd, NULL, WNOHANG) == 0; i++) {
		usleep(20000);
	}
	kill(etcd, SIGKILL);
	waitpid(etcd, NULL, 0);
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
	char name[32], key_dir[128], extra[512];
	snprintf(name, sizeof(name), "%s-%c", m, which);
	snprintf(key_dir, sizeof(key_dir), "%s/keys-%s", mig_tmpdir, name);
	/* a prefix per transport: the servers of the clear run may linger for a lease */
	snprintf(extra, sizeof(extra), "etcd = http://127.0.0.1:%u\n"
		"group_prefix = /slimbench-migration-%s/\n"
		"server_name = %s\n"
		"group_address = 127.0.0.1:%u\n"
		"group_ttl = %d\n"
		"console_timeout = %d\n",
		etcd_port, m, name, port, GROUP_TTL_S, CONSOLE_TIMEOUT_S);
	if (which == 'b') {
		char key_dir_a[128];
		snprintf(key_dir_a, sizeof(key_dir_a), "%s/keys-%s-a", mig_tmpdir, m);
		if (!copy_card_key(key_dir_a, key_dir)) {
			fprintf(stderr, "bench-migration: cannot copy %s/card.key\n", key_dir_a);
			return false;
		}
	}
	if (!mig_start_sessiond(name, port, mode, key_dir, extra)) {
		return false;
	}
	/* registered: its record and lease are in etcd, and its watch runs */
	char said[64];
	snprintf(said, sizeof(said), "group: %s registered under", name);
	for (int i = 0; i < 500; i++) {
		if (mig_sessiond_said(name, said)) {
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
		if (!mig_wait_greeter(from, r, 10000)) {
			fprintf(stderr, "bench-migration: no greeter after the card left console %s\n",
				from->id);
			st->failed++;
		}

		/* a console of B's that neither server has seen */
		char id[32], key[160];
		snprintf(id, sizeof(id), "bench-b%zu", i + 1);
		snprintf(key, sizeof(key), "%s/console-%s-b%zu.key", mig_tmpdir, m, i + 1);
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
		if (!mig_wait_greeter(&mig_b, 0, 20000) || mig_b.manager_changes) {
			fprintf(stderr, "bench-migration: console %s: %s\n", mig_b.id,
				mig_b.manager_changes ? "moved away from B at its HELLO" :
				"no greeter from B");
			st->failed++;
			continue;
		}

		/* all quiet: the tap */
		mig_settle(&mig_b, 100, 2000);
		uint32_t redirects = mig_b.redirects;
		uint64_t t0 = bench_now_us();
		bench_console_card(&mig_b, true, card_token, sizeof(card_token));
		bool alone = false;
		uint64_t t3 = mig_wait_session(&mig_b, redirects, session_port, 5000, &alone);
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
