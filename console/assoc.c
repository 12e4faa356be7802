#define _GNU_SOURCE /* SOCK_NONBLOCK, SOCK_CLOEXEC, explicit_bzero */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include "assoc.h"
#include "card.h"
#include "slim-clock.h"
#include "slim-log.h"
#include "slim-net.h"

#define HELLO_FIRST_MS 250
#define HELLO_MAX_MS 4000
/* A handshake that failed (a wrong key, no server) is tried again, slower. */
#define RETRY_FIRST_MS 1000
#define RETRY_MAX_MS 8000
/*
 * Keepalives as rare as liveness allows: a peer that restarted is found
 * within 5 s, and a quiet association costs one small datagram every 5 s
 * (RDP sends about 20 bytes every 5 s).
 */
#define PING_MS 5000
#define BUSY_RETRY_MS 5000
/* A cleartext hint is unauthenticated: acted on at most this often. */
#define HINT_MIN_US 2000000ull
/* A full repaint arrives as a burst; a small socket buffer would drop it. */
#define RCVBUF_BYTES (4 << 20)
/* Datagrams read per dispatch, so stdin and timers get their turn in a flood. */
#define RECV_BURST 256

struct slim_assoc {
	const char *name;
	int fd;
	const struct slim_assoc_impl *impl;
	void *data;

	enum slim_assoc_state state;
	uint32_t id;
	/* CONNECTING: the handshake is done and HELLO goes (else the handshake runs) */
	bool secured;
	/* CONNECTING without a connection: the next handshake is due at deadline_us */
	bool retry_pending;
	uint64_t deadline_us; /* next HELLO, PING or handshake */
	uint32_t ping_ms;
	uint32_t backoff_ms, retry_ms;
	uint64_t last_hint_us;
	/* send() saw ECONNREFUSED; acted on in tick, outside the user's calls */
	bool conn_refused;
	struct slim_sec_client *sec;

	/*
	 * Each reader's latest card event (bit set in card_known), and which
	 * of them the peer has not heard yet (card_unsent): what happens while
	 * not attached is told once attached, the latest state only.
	 */
	struct slim_wire_card cards[SLIM_CARD_MAX_READERS];
	uint32_t card_known, card_unsent;

	uint8_t buf[65536];
};

/* "HOST:PORT" or "[ADDR]:PORT" into its parts; the port is a number. */
static bool split_server(const char *what, const char *server, char *host, size_t host_len,
		char *port, size_t port_len, char *err, size_t err_len)
{
	const char *h = server, *h_end, *p;
	if (server[0] == '[') {
		h = server + 1;
		h_end = strchr(h, ']');
		if (!h_end || h_end[1] != ':') {
			goto syntax;
		}
		p = h_end + 2;
	} else {
		h_end = strrchr(server, ':');
		/* An IPv6 address has colons of its own: it needs brackets. */
		if (!h_end || strchr(server, ':') != h_end) {
			goto syntax;
		}
		p = h_end + 1;
	}
	size_t n = (size_t)(h_end - h);
	if (n == 0 || n >= host_len) {
		goto syntax;
	}
	memcpy(host, h, n);
	host[n] = '\0';
	char *end;
	errno = 0;
	unsigned long port_num = strtoul(p, &end, 10);
	if (p[0] < '0' || p[0] > '9' || *end != '\0' || errno != 0 ||
			port_num == 0 || port_num > 65535) {
		snprintf(err, err_len, "%s %s: the port must be a number in 1..65535", what, server);
		return false;
	}
	snprintf(port, port_len, "%lu", port_num);
	return true;
syntax:
	snprintf(err, err_len, "%s %s: expected HOST:PORT or [IPV6]:PORT", what, server);
	return false;
}

/* `source` (numeric) as a local address of `family`, port 0; false if it is not one. */
static bool source_address(const char *source, sa_family_t family,
		struct sockaddr_storage *local, socklen_t *local_len)
{
	memset(local, 0, sizeof(*local));
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)local;
		in->sin_family = AF_INET;
		*local_len = sizeof(*in);
		return inet_pton(AF_INET, source, &in->sin_addr) == 1;
	}
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)local;
	in6->sin6_family = AF_INET6;
	*local_len = sizeof(*in6);
	return family == AF_INET6 && inet_pton(AF_INET6, source, &in6->sin6_addr) == 1;
}

/* Nonblocking, with room for a repaint's burst. */
int slim_udp_connect_addr(const struct sockaddr *addr, socklen_t len, const char *source)
{
	int fd = socket(addr->sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_storage local;
	socklen_t local_len = 0;
	if (fd >= 0 && source && (!source_address(source, addr->sa_family, &local, &local_len) ||
			bind(fd, (struct sockaddr *)&local, local_len) != 0)) {
		close(fd);
		errno = EADDRNOTAVAIL;
		return -1;
	}
	/* connect(): the kernel filters other senders and reports ICMP errors */
	if (fd < 0 || connect(fd, addr, len) != 0) {
		int saved = errno;
		if (fd >= 0) {
			close(fd);
		}
		errno = saved;
		return -1;
	}
	int rcvbuf = RCVBUF_BYTES;
	/* The kernel caps this at net.core.rmem_max; a smaller buffer still works. */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	slim_net_stamp_arrivals(fd);
	return fd;
}

bool slim_udp_address_check(const char *what, const char *server, char *err, size_t err_len)
{
	char host[256], port[8];
	return split_server(what, server, host, sizeof(host), port, sizeof(port), err, err_len);
}

/* The first address that takes a connected UDP socket wins. */
int slim_udp_connect(const char *what, const char *server, const char *source, char *err,
		size_t err_len)
{
	char host[256], port[8];
	if (!split_server(what, server, host, sizeof(host), port, sizeof(port), err, err_len)) {
		return -1;
	}
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_DGRAM,
		.ai_flags = AI_NUMERICSERV,
	};
	struct addrinfo *res;
	int gai = getaddrinfo(host, port, &hints, &res);
	if (gai != 0) {
		snprintf(err, err_len, "%s %s: cannot resolve %s: %s", what, server, host,
			gai_strerror(gai));
		return -1;
	}
	int fd = -1, saved = 0;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = slim_udp_connect_addr(ai->ai_addr, ai->ai_addrlen, source);
		saved = errno;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, err_len, "%s %s: cannot connect a socket: %s", what, server,
			strerror(saved));
		return -1;
	}
	return fd;
}

static void send_raw(void *data, const uint8_t *buf, size_t len);

struct slim_assoc *slim_assoc_create(const char *name, int fd,
		const struct slim_assoc_impl *impl, void *data)
{
	struct slim_assoc *assoc = calloc(1, sizeof(*assoc));
	if (!assoc) {
		if (fd >= 0) {
			close(fd);
		}
		return NULL;
	}
	assoc->name = name;
	assoc->fd = fd;
	assoc->impl = impl;
	assoc->data = data;
	/* with a socket it is CONNECTING already: slim_assoc_connect is only a moment away */
	assoc->state = fd >= 0 ? SLIM_ASSOC_CONNECTING : SLIM_ASSOC_IDLE;
	assoc->retry_ms = RETRY_FIRST_MS;
	assoc->ping_ms = PING_MS;
	assoc->sec = slim_sec_client_create(send_raw, assoc);
	if (!assoc->sec) {
		slim_assoc_destroy(assoc);
		return NULL;
	}
	return assoc;
}

void slim_assoc_destroy(struct slim_assoc *assoc)
{
	if (!assoc) {
		return;
	}
	/*
	 * The console quits (or this peer is done with): over DTLS the server
	 * hears so at once, and a session frees its seat for the next console.
	 */
	if (assoc->sec && assoc->fd >= 0) {
		slim_sec_client_goodbye(assoc->sec);
	}
	if (assoc->fd >= 0) {
		close(assoc->fd);
	}
	slim_sec_client_destroy(assoc->sec);
	free(assoc);
}

int slim_assoc_fd(const struct slim_assoc *assoc)
{
	return assoc->fd;
}

enum slim_assoc_state slim_assoc_state(const struct slim_assoc *assoc)
{
	return assoc->state;
}

uint32_t slim_assoc_id(const struct slim_assoc *assoc)
{
	return assoc->id;
}

void slim_assoc_set_fd(struct slim_assoc *assoc, int fd)
{
	if (assoc->fd >= 0) {
		close(assoc->fd);
	}
	assoc->fd = fd;
	/* the connection belonged to the old endpoint */
	slim_sec_client_stop(assoc->sec);
}

/* What the secure layer hands the wire: the socket's own send. */
static void send_raw(void *data, const uint8_t *buf, size_t len)
{
	struct slim_assoc *assoc = data;
	if (send(assoc->fd, buf, len, 0) >= 0) {
		return;
	}
	if (errno == ECONNREFUSED) {
		assoc->conn_refused = true;
	} else {
		/* UDP: a datagram lost here is like one lost on the wire */
		slim_log(SLIM_LOG_DEBUG, "%s: send: %s", assoc->name, strerror(errno));
	}
}

void slim_assoc_send(struct slim_assoc *assoc, const uint8_t *buf, size_t len)
{
	slim_sec_client_send(assoc->sec, buf, len);
}

/* A fresh random association, never 0 and never the one before. */
static uint32_t new_id(uint32_t old)
{
	uint32_t a = 0;
	while (a == 0 || a == old) {
		/* GRND_NONBLOCK: a console that boots before the pool is ready must not hang */
		if (getrandom(&a, sizeof(a), GRND_NONBLOCK) != sizeof(a)) {
			/* the clock still tells one start from the next */
			a = (uint32_t)(slim_now_us() * 2654435761u) ^ (uint32_t)getpid();
		}
	}
	return a;
}

static void send_hello(struct slim_assoc *assoc)
{
	slim_log(SLIM_LOG_DEBUG, "%s: HELLO, association %08x", assoc->name, assoc->id);
	assoc->impl->send_hello(assoc->data, assoc->id);
}

/* HELLO again after the current backoff, which doubles up to its cap. */
static void schedule_hello_retry(struct slim_assoc *assoc, uint64_t now_us)
{
	assoc->deadline_us = now_us + assoc->backoff_ms * 1000ull;
	assoc->backoff_ms = assoc->backoff_ms * 2 > HELLO_MAX_MS ? HELLO_MAX_MS :
		assoc->backoff_ms * 2;
}

/* The handshake is done: HELLO, and again after the backoff until answered. */
static void secured(struct slim_assoc *assoc, uint64_t now_us)
{
	assoc->secured = true;
	assoc->retry_ms = RETRY_FIRST_MS;
	assoc->backoff_ms = HELLO_FIRST_MS;
	send_hello(assoc);
	schedule_hello_retry(assoc, now_us);
}

/* The connection could not be made: said, and tried again later, slower each time. */
static void handshake_failed(struct slim_assoc *assoc, const char *why, uint64_t now_us)
{
	slim_log(SLIM_LOG_DEBUG, "%s: handshake failed: %s", assoc->name, why);
	assoc->secured = false;
	assoc->retry_pending = true;
	assoc->deadline_us = now_us + assoc->retry_ms * 1000ull;
	assoc->retry_ms = assoc->retry_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : assoc->retry_ms * 2;
	if (assoc->impl->connecting) {
		assoc->impl->connecting(assoc->data, why);
	}
}

/* A new connection for the current association: its first handshake flight goes now. */
static void start_connection(struct slim_assoc *assoc, uint64_t now_us)
{
	struct slim_sec_client_config config = { 0 };
	char why[256] = "";
	assoc->secured = false;
	assoc->retry_pending = false;
	if (!assoc->impl->security(assoc->data, &config, why, sizeof(why))) {
		handshake_failed(assoc, why, now_us);
		return;
	}
	bool started = slim_sec_client_start(assoc->sec, &config, now_us);
	explicit_bzero(&config, sizeof(config));
	if (!started) {
		handshake_failed(assoc, slim_sec_client_error(assoc->sec), now_us);
	} else if (slim_sec_client_established(assoc->sec)) {
		secured(assoc, now_us); /* clear transport: nothing to wait for */
	}
}

/* Starts over with a new association; `why` is NULL when nothing went wrong. */
static void enter_connecting(struct slim_assoc *assoc, const char *why, uint64_t now_us)
{
	assoc->state = SLIM_ASSOC_CONNECTING;
	assoc->id = new_id(assoc->id);
	assoc->backoff_ms = HELLO_FIRST_MS;
	if (assoc->impl->connecting) {
		assoc->impl->connecting(assoc->data, why);
	}
	start_connection(assoc, now_us);
}

void slim_assoc_connect(struct slim_assoc *assoc, const char *why, uint64_t now_us)
{
	assoc->conn_refused = false;
	assoc->retry_ms = RETRY_FIRST_MS;
	enter_connecting(assoc, why, now_us);
}

void slim_assoc_restart(struct slim_assoc *assoc, const char *why, uint64_t now_us)
{
	if (assoc->state != SLIM_ASSOC_CONNECTING) {
		enter_connecting(assoc, why, now_us);
	}
}

static void send_card(struct slim_assoc *assoc, size_t reader)
{
	if (assoc->impl->send_card(assoc->data, &assoc->cards[reader])) {
		assoc->card_unsent &= ~(1u << reader);
	}
}

void slim_assoc_heard(struct slim_assoc *assoc, uint64_t now_us)
{
	if (assoc->state == SLIM_ASSOC_ATTACHED) {
		return;
	}
	assoc->state = SLIM_ASSOC_ATTACHED;
	assoc->deadline_us = now_us + assoc->ping_ms * 1000ull;
	if (assoc->impl->attached) {
		assoc->impl->attached(assoc->data, assoc->id);
	}
	/*
	 * What the peer did not hear yet, and every card still on a reader: a
	 * new association may be a peer that restarted and knows no card,
	 * just as it knows no pixel.
	 */
	for (size_t i = 0; i < SLIM_CARD_MAX_READERS; i++) {
		if ((assoc->card_unsent & (1u << i)) || ((assoc->card_known & (1u << i)) &&
				assoc->cards[i].event == SLIM_CARD_INSERTED)) {
			send_card(assoc, i);
		}
	}
}

void slim_assoc_set_ping_ms(struct slim_assoc *assoc, uint32_t ms, uint64_t now_us)
{
	assoc->ping_ms = ms;
	if (assoc->state == SLIM_ASSOC_ATTACHED && assoc->deadline_us > now_us + ms * 1000ull) {
		assoc->deadline_us = now_us + ms * 1000ull;
	}
}

void slim_assoc_ping(struct slim_assoc *assoc)
{
	if (assoc->state == SLIM_ASSOC_ATTACHED) {
		assoc->impl->send_ping(assoc->data);
	}
}

void slim_assoc_busy(struct slim_assoc *assoc, uint64_t now_us)
{
	assoc->state = SLIM_ASSOC_BUSY;
	assoc->deadline_us = now_us + BUSY_RETRY_MS * 1000ull;
}

void slim_assoc_send_card(struct slim_assoc *assoc, const struct slim_wire_card *card)
{
	if (card->reader >= SLIM_CARD_MAX_READERS) {
		return; /* the card sources number no reader this high */
	}
	assoc->cards[card->reader] = *card;
	assoc->card_known |= 1u << card->reader;
	assoc->card_unsent |= 1u << card->reader;
	if (assoc->state == SLIM_ASSOC_ATTACHED) {
		send_card(assoc, card->reader);
	}
}

static void connection_refused(struct slim_assoc *assoc, uint64_t now_us)
{
	assoc->conn_refused = false;
	if (assoc->impl->refused && assoc->impl->refused(assoc->data, now_us)) {
		return; /* on to another peer */
	}
	if (assoc->state == SLIM_ASSOC_CONNECTING) {
		/* the retries are under way; a handshake in flight waits for its own end */
		return;
	}
	slim_assoc_restart(assoc, "connection refused", now_us);
}

/* One datagram from the socket, through the secure layer. */
static void receive(struct slim_assoc *assoc, size_t len, uint64_t now_us, uint64_t arrived_us)
{
	const uint8_t *out;
	size_t out_len;
	switch (slim_sec_client_receive(assoc->sec, assoc->buf, len, &out, &out_len)) {
	case SLIM_SEC_DATA:
		assoc->impl->datagram(assoc->data, out, out_len, arrived_us);
		break;
	case SLIM_SEC_ESTABLISHED:
		if (assoc->state == SLIM_ASSOC_CONNECTING && !assoc->secured) {
			secured(assoc, now_us);
		}
		break;
	case SLIM_SEC_FAILED:
		handshake_failed(assoc, slim_sec_client_error(assoc->sec), now_us);
		break;
	case SLIM_SEC_FORGOTTEN:
		/* anyone could have sent it: a restart costs a handshake, so not too often */
		if (now_us - assoc->last_hint_us >= HINT_MIN_US) {
			assoc->last_hint_us = now_us;
			slim_assoc_restart(assoc, "the server forgot this console", now_us);
		}
		break;
	case SLIM_SEC_CLOSED: {
		/* its close_notify: it ended on purpose (it quit, or let go of this console) */
		char why[320];
		snprintf(why, sizeof(why), "%s ended the connection",
			assoc->impl->peer ? assoc->impl->peer(assoc->data) : "the other end");
		if (assoc->state == SLIM_ASSOC_CONNECTING) {
			handshake_failed(assoc, why, now_us);
		} else {
			slim_assoc_restart(assoc, why, now_us);
		}
		break;
	}
	case SLIM_SEC_NOTHING:
		break;
	}
}

void slim_assoc_dispatch(struct slim_assoc *assoc)
{
	for (int i = 0; i < RECV_BURST && assoc->fd >= 0; i++) {
		uint64_t arrived;
		ssize_t n = slim_net_recv(assoc->fd, assoc->buf, sizeof(assoc->buf), MSG_TRUNC,
			NULL, NULL, &arrived);
		uint64_t now = slim_now_us();
		if (n < 0) {
			if (errno == ECONNREFUSED) {
				connection_refused(assoc, now);
				continue;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				slim_log(SLIM_LOG_DEBUG, "%s: recv: %s", assoc->name, strerror(errno));
			}
			return;
		}
		if ((size_t)n > sizeof(assoc->buf)) {
			continue; /* longer than any datagram of ours: not one */
		}
		receive(assoc, (size_t)n, now, arrived);
	}
}

void slim_assoc_tick(struct slim_assoc *assoc, uint64_t now_us)
{
	if (assoc->state == SLIM_ASSOC_IDLE) {
		return;
	}
	if (assoc->conn_refused) {
		connection_refused(assoc, now_us);
	}
	if (assoc->state == SLIM_ASSOC_CONNECTING && !assoc->secured) {
		if (assoc->retry_pending) {
			if (now_us >= assoc->deadline_us) {
				start_connection(assoc, now_us);
			}
		} else if (slim_sec_client_tick(assoc->sec, now_us) == SLIM_SEC_FAILED) {
			handshake_failed(assoc, slim_sec_client_error(assoc->sec), now_us);
		}
		return;
	}
	if (now_us < assoc->deadline_us) {
		return;
	}
	switch (assoc->state) {
	case SLIM_ASSOC_CONNECTING:
		send_hello(assoc);
		schedule_hello_retry(assoc, now_us);
		break;
	case SLIM_ASSOC_ATTACHED:
		assoc->deadline_us = now_us + assoc->ping_ms * 1000ull;
		assoc->impl->send_ping(assoc->data);
		break;
	case SLIM_ASSOC_BUSY:
		assoc->deadline_us = now_us + BUSY_RETRY_MS * 1000ull;
		send_hello(assoc);
		break;
	case SLIM_ASSOC_IDLE:
		break;
	}
}

static int ms_until(uint64_t deadline_us, uint64_t now_us)
{
	if (now_us >= deadline_us) {
		return 0;
	}
	/* rounded up: waking a little early would only spin */
	uint64_t ms = (deadline_us - now_us + 999) / 1000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

int slim_assoc_timeout_ms(const struct slim_assoc *assoc, uint64_t now_us)
{
	if (assoc->state == SLIM_ASSOC_IDLE) {
		return -1;
	}
	if (assoc->conn_refused) {
		return 0;
	}
	if (assoc->state == SLIM_ASSOC_CONNECTING && !assoc->secured && !assoc->retry_pending) {
		return slim_sec_client_timeout_ms(assoc->sec, now_us);
	}
	return ms_until(assoc->deadline_us, now_us);
}
