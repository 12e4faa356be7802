/*
 * slim-knock HOST:PORT COUNT SECONDS: COUNT consoles with keys made up on
 * the spot, each holding a control association with a session manager
 * open as a console waiting for enrollment would: a DTLS handshake with
 * its own key, then HELLO every second. One that the manager closes, or
 * forgets, starts again a second later. At most a few handshakes are under
 * way at once (the manager takes 8 from one address), keys that never held
 * a connection first.
 *
 * Says "knocked COUNT" once every key has held a connection, and at the
 * end (SECONDS, or SIGTERM) "knock handshakes=H closed=C forgotten=F
 * open=N peak=P": handshakes completed, connections the manager closed or
 * forgot, connections open now and at most at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include "slim-codec.h"
#include "slim-log.h"
#include "slim-secure.h"

#define IN_FLIGHT 6
#define HELLO_US 1000000ull
#define RETRY_US 1000000ull

enum knocker_state { IDLE, HANDSHAKE, OPEN };

struct knocker {
	int fd;
	struct slim_sec_identity *id;
	char console_id[SLIM_CONSOLE_ID_LEN + 1];
	struct slim_sec_client *sec;
	enum knocker_state state;
	uint32_t assoc;
	uint64_t next_us; /* IDLE: the next start; OPEN: the next HELLO */
	bool knocked;
};

static struct {
	struct knocker *k;
	int n, in_flight, open, peak, knocked;
	int next; /* whose turn it is to start: every key gets one in turn */
	unsigned long handshakes, closed, forgotten;
} g;

static volatile sig_atomic_t ended;

static void handle_term(int sig)
{
	ended = 1;
}

static void send_raw(void *data, const uint8_t *buf, size_t len)
{
	struct knocker *k = data;
	send(k->fd, buf, len, MSG_DONTWAIT);
}

/* Whoever answers is believed: these consoles only knock. */
static const char *trust_any(void *data, const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN])
{
	return NULL;
}

/* A new ECDSA P-256 key, in memory. */
static struct slim_sec_identity *make_identity(void)
{
	gnutls_x509_privkey_t key;
	gnutls_datum_t pem = { 0 };
	struct slim_sec_identity *id = NULL;
	char err[256];
	if (gnutls_x509_privkey_init(&key) != 0) {
		return NULL;
	}
	if (gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
			GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) == 0 &&
			gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &pem) == 0) {
		id = slim_sec_identity_from_pem((const char *)pem.data, pem.size, err, sizeof(err));
	}
	gnutls_free(pem.data);
	gnutls_x509_privkey_deinit(key);
	return id;
}

static void start(struct knocker *k, uint64_t now)
{
	struct slim_sec_client_config cfg = {
		.mode = SLIM_SEC_DTLS, .identity = k->id, .check_server = trust_any,
		.mtu = SLIM_DEFAULT_MTU,
	};
	k->state = HANDSHAKE;
	g.in_flight++;
	if (!slim_sec_client_start(k->sec, &cfg, now)) {
		g.in_flight--;
		k->state = IDLE;
		k->next_us = now + RETRY_US;
	}
}

static void hello(struct knocker *k, uint64_t now)
{
	uint8_t buf[128];
	struct slim_writer w;
	struct slim_wire_hello h = { .version = SLIM_VERSION, .width = 640, .height = 480,
		.mtu = SLIM_DEFAULT_MTU };
	memcpy(h.console_id, k->console_id, SLIM_CONSOLE_ID_LEN);
	slim_writer_init(&w, buf, sizeof(buf), k->assoc, true);
	slim_put_hello(&w, &h);
	slim_sec_client_send(k->sec, buf, slim_writer_finish(&w, 0, now));
	k->next_us = now + HELLO_US;
}

/* The handshake ended (done or failed), or the connection did. */
static void set_state(struct knocker *k, enum knocker_state state, uint64_t now)
{
	if (k->state == HANDSHAKE) {
		g.in_flight--;
	} else if (k->state == OPEN) {
		g.open--;
	}
	k->state = state;
	if (state == OPEN) {
		g.handshakes++;
		g.open++;
		g.peak = g.open > g.peak ? g.open : g.peak;
		if (!k->knocked) {
			k->knocked = true;
			if (++g.knocked == g.n) {
				printf("knocked %d\n", g.n);
				fflush(stdout);
			}
		}
		while (getrandom(&k->assoc, sizeof(k->assoc), 0) != sizeof(k->assoc) || !k->assoc) {
		}
		hello(k, now);
	} else {
		slim_sec_client_stop(k->sec);
		k->next_us = now + RETRY_US;
	}
}

static void receive(struct knocker *k, uint64_t now)
{
	uint8_t buf[2048];
	ssize_t n;
	while ((n = recv(k->fd, buf, sizeof(buf), MSG_DONTWAIT)) >= 0) {
		const uint8_t *out;
		size_t out_len;
		switch (slim_sec_client_receive(k->sec, buf, (size_t)n, &out, &out_len)) {
		case SLIM_SEC_ESTABLISHED:
			set_state(k, OPEN, now);
			break;
		case SLIM_SEC_FAILED:
			set_state(k, IDLE, now);
			break;
		case SLIM_SEC_CLOSED:
			g.closed++;
			set_state(k, IDLE, now);
			break;
		case SLIM_SEC_FORGOTTEN:
			g.forgotten++;
			set_state(k, IDLE, now);
			break;
		case SLIM_SEC_DATA: /* REFUSE PENDING, most likely */
		case SLIM_SEC_NOTHING:
			break;
		}
	}
}

/* Handshakes begin in turn, keys that never held a connection first. */
static void start_some(uint64_t now)
{
	for (int fresh = 1; fresh >= 0; fresh--) {
		for (int i = 0; i < g.n && g.in_flight < IN_FLIGHT; i++) {
			struct knocker *k = &g.k[(g.next + i) % g.n];
			if (k->state == IDLE && now >= k->next_us && k->knocked != fresh) {
				start(k, now);
				g.next = (int)(k - g.k + 1) % g.n;
			}
		}
	}
}

static bool open_socket(struct knocker *k, const struct addrinfo *ai)
{
	k->fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	return k->fd >= 0 && connect(k->fd, ai->ai_addr, ai->ai_addrlen) == 0;
}

int main(int argc, char **argv)
{
	char host[256];
	const char *colon = argc == 4 ? strrchr(argv[1], ':') : NULL;
	g.n = argc == 4 ? atoi(argv[2]) : 0;
	double seconds = argc == 4 ? atof(argv[3]) : 0;
	if (!colon || colon == argv[1] || (size_t)(colon - argv[1]) >= sizeof(host) ||
			g.n <= 0 || seconds <= 0) {
		fprintf(stderr, "usage: slim-knock HOST:PORT COUNT SECONDS\n");
		return 2;
	}
	memcpy(host, argv[1], (size_t)(colon - argv[1]));
	host[colon - argv[1]] = '\0';
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai;
	if (getaddrinfo(host, colon + 1, &hints, &ai) != 0) {
		fprintf(stderr, "slim-knock: cannot resolve %s\n", argv[1]);
		return 1;
	}
	slim_log_init(SLIM_LOG_ERROR, NULL);
	/* a socket a console */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)g.n + 64) {
		rl.rlim_cur = (rlim_t)g.n + 64;
		rl.rlim_max = rl.rlim_max > rl.rlim_cur ? rl.rlim_max : rl.rlim_cur;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	int ep = epoll_create1(EPOLL_CLOEXEC);
	g.k = calloc((size_t)g.n, sizeof(*g.k));
	if (ep < 0 || !g.k) {
		return 1;
	}
	for (int i = 0; i < g.n; i++) {
		struct knocker *k = &g.k[i];
		k->id = make_identity();
		k->sec = slim_sec_client_create(send_raw, k);
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
		if (!k->id || !k->sec || !open_socket(k, ai) ||
				epoll_ctl(ep, EPOLL_CTL_ADD, k->fd, &ev) != 0) {
			fprintf(stderr, "slim-knock: console %d: %s\n", i, strerror(errno));
			return 1;
		}
		slim_sec_fingerprint_id(slim_sec_identity_fingerprint(k->id), k->console_id);
	}
	freeaddrinfo(ai);
	signal(SIGTERM, handle_term);
	uint64_t end = slim_now_us() + (uint64_t)(seconds * 1e6);
	for (uint64_t now = slim_now_us(); now < end && !ended; now = slim_now_us()) {
		start_some(now);
		for (int i = 0; i < g.n; i++) {
			struct knocker *k = &g.k[i];
			if (k->state == HANDSHAKE &&
					slim_sec_client_tick(k->sec, now) == SLIM_SEC_FAILED) {
				set_state(k, IDLE, now);
			} else if (k->state == OPEN && now >= k->next_us) {
				hello(k, now);
			}
		}
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, 10);
		for (int i = 0; i < n; i++) {
			receive(&g.k[evs[i].data.u32], slim_now_us());
		}
	}
	printf("knock handshakes=%lu closed=%lu forgotten=%lu open=%d peak=%d\n", g.handshakes,
		g.closed, g.forgotten, g.open, g.peak);
	for (int i = 0; i < g.n; i++) {
		slim_sec_client_destroy(g.k[i].sec);
		slim_sec_identity_destroy(g.k[i].id);
		close(g.k[i].fd);
	}
	free(g.k);
	close(ep);
	return 0;
}
