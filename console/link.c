#define _GNU_SOURCE /* SOCK_NONBLOCK, SOCK_CLOEXEC */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include "card.h"
#include "link.h"
#include "slim-log.h"

#define HELLO_FIRST_MS 250
#define HELLO_MAX_MS 4000
#define PING_MS 1000
#define BUSY_RETRY_MS 5000
/* A full repaint arrives as a burst; a small socket buffer would drop it. */
#define RCVBUF_BYTES (4 << 20)
/* Datagrams read per dispatch, so stdin and timers get their turn in a flood. */
#define RECV_BURST 256

struct slim_link {
	int fd;
	char *server;
	struct slim_console_core *core;
	char id[SLIM_CONSOLE_ID_LEN];
	const struct slim_link_listener *listener;
	void *listener_data;

	enum slim_link_state state;
	uint32_t assoc;
	/* the endpoint and token of the last REDIRECT acted on */
	struct sockaddr_storage peer;
	socklen_t peer_len;
	bool has_token;
	uint8_t token[SLIM_ATTACH_TOKEN_LEN];
	uint64_t deadline_us; /* next HELLO or PING */
	uint32_t backoff_ms;
	/* send() saw ECONNREFUSED; acted on in tick, outside the core's calls */
	bool conn_refused;

	/* A refusal the core reported while it handled a datagram, acted on after. */
	bool refusal;
	uint16_t refusal_reason;
	char refusal_text[SLIM_REFUSE_TEXT_MAX + 1];

	/*
	 * Each reader's latest card event (bit set in card_known), and which
	 * of them no server has heard yet (card_unsent): what happens while
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

/* A connected UDP socket, nonblocking, with room for a repaint's burst; -1 and errno. */
static int connect_addr(const struct sockaddr *addr, socklen_t len)
{
	int fd = socket(addr->sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
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
	return fd;
}

/* The first address that takes a connected UDP socket wins. */
int slim_udp_connect(const char *what, const char *server, char *err, size_t err_len)
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
		fd = connect_addr(ai->ai_addr, ai->ai_addrlen);
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

struct slim_link *slim_link_create(const char *server, char *err, size_t err_len)
{
	struct slim_link *link = calloc(1, sizeof(*link));
	if (!link) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	if (!server) {
		/* no endpoint until a REDIRECT names one */
		link->fd = -1;
		link->state = SLIM_LINK_IDLE;
		return link;
	}
	link->fd = slim_udp_connect("--server", server, err, err_len);
	link->server = strdup(server);
	if (link->fd < 0 || !link->server) {
		if (link->fd >= 0) {
			snprintf(err, err_len, "out of memory");
		}
		slim_link_destroy(link);
		return NULL;
	}
	return link;
}

void slim_link_destroy(struct slim_link *link)
{
	if (!link) {
		return;
	}
	if (link->core) {
		slim_console_core_set_events(link->core, NULL, NULL);
	}
	if (link->fd >= 0) {
		close(link->fd);
	}
	free(link->server);
	free(link);
}

int slim_link_fd(const struct slim_link *link)
{
	return link->fd;
}

enum slim_link_state slim_link_state(const struct slim_link *link)
{
	return link->state;
}

const char *slim_link_server(const struct slim_link *link)
{
	return link->server;
}

void slim_link_send(void *data, const uint8_t *buf, size_t len)
{
	struct slim_link *link = data;
	if (send(link->fd, buf, len, 0) >= 0) {
		return;
	}
	if (errno == ECONNREFUSED) {
		link->conn_refused = true;
	} else {
		/* UDP: a datagram lost here is like one lost on the wire */
		slim_log(SLIM_LOG_DEBUG, "link: send: %s", strerror(errno));
	}
}

/* A fresh random association, never 0 and never the one before. */
static uint32_t new_assoc(uint32_t old)
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

static void send_hello(struct slim_link *link)
{
	slim_log(SLIM_LOG_DEBUG, "link: HELLO, association %08x", link->assoc);
	slim_console_core_hello(link->core, link->id, link->assoc);
}

/* HELLO again after the current backoff, which doubles up to its cap. */
static void schedule_hello_retry(struct slim_link *link, uint64_t now_us)
{
	link->deadline_us = now_us + link->backoff_ms * 1000ull;
	link->backoff_ms = link->backoff_ms * 2 > HELLO_MAX_MS ? HELLO_MAX_MS : link->backoff_ms * 2;
}

/* Starts over with a new association; `why` is NULL at start. */
static void enter_connecting(struct slim_link *link, const char *why, uint64_t now_us)
{
	link->state = SLIM_LINK_CONNECTING;
	link->assoc = new_assoc(link->assoc);
	link->backoff_ms = HELLO_FIRST_MS;
	if (link->listener && link->listener->connecting) {
		link->listener->connecting(link->listener_data, why);
	}
	send_hello(link);
	schedule_hello_retry(link, now_us);
}

static void send_card(struct slim_link *link, size_t reader)
{
	if (slim_console_core_send_card(link->core, &link->cards[reader])) {
		link->card_unsent &= ~(1u << reader);
	}
}

static void enter_attached(struct slim_link *link, uint64_t now_us)
{
	link->state = SLIM_LINK_ATTACHED;
	link->deadline_us = now_us + PING_MS * 1000ull;
	if (link->listener && link->listener->attached) {
		link->listener->attached(link->listener_data, link->assoc);
	}
	/*
	 * What no server heard yet, and every card still on a reader: a new
	 * association may be a server that restarted and knows no card,
	 * just as it knows no pixel.
	 */
	for (size_t i = 0; i < SLIM_CARD_MAX_READERS; i++) {
		if ((link->card_unsent & (1u << i)) || ((link->card_known & (1u << i)) &&
				link->cards[i].event == SLIM_CARD_INSERTED)) {
			send_card(link, i);
		}
	}
}

void slim_link_send_card(struct slim_link *link, const struct slim_wire_card *card)
{
	if (card->reader >= SLIM_CARD_MAX_READERS) {
		return; /* the card sources number no reader this high */
	}
	link->cards[card->reader] = *card;
	link->card_known |= 1u << card->reader;
	link->card_unsent |= 1u << card->reader;
	if (link->state == SLIM_LINK_ATTACHED) {
		send_card(link, card->reader);
	}
}

void slim_link_request_repaint(struct slim_link *link)
{
	if (link->core && link->state == SLIM_LINK_ATTACHED) {
		slim_log(SLIM_LOG_DEBUG, "link: HELLO again for a repaint, association %08x",
			link->assoc);
		slim_console_core_request_repaint(link->core, link->id);
	}
}

static void on_refused(void *data, uint16_t reason, const char *text, size_t len)
{
	struct slim_link *link = data;
	link->refusal = true;
	link->refusal_reason = reason;
	/* the server's words, kept to one line nobody's terminal obeys */
	size_t n = len < SLIM_REFUSE_TEXT_MAX ? len : SLIM_REFUSE_TEXT_MAX;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)text[i];
		link->refusal_text[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	link->refusal_text[n] = '\0';
}

static void on_presented(void *data, uint32_t frame, uint64_t applied_us)
{
	struct slim_link *link = data;
	if (link->listener && link->listener->presented) {
		link->listener->presented(link->listener_data, frame, applied_us);
	}
}

static const struct slim_console_events core_events = {
	.refused = on_refused,
	.presented = on_presented,
};

void slim_link_start(struct slim_link *link, struct slim_console_core *core,
		const char *id, const struct slim_link_listener *listener, void *data)
{
	link->core = core;
	snprintf(link->id, sizeof(link->id), "%s", id);
	link->listener = listener;
	link->listener_data = data;
	slim_console_core_set_events(core, &core_events, link);
	if (link->fd >= 0) {
		enter_connecting(link, NULL, slim_now_us());
	}
}

/* "HOST:PORT", or "[ADDR]:PORT" for IPv6, of a numeric address. */
static char *endpoint_name(const struct sockaddr *addr, socklen_t len)
{
	char host[NI_MAXHOST], port[NI_MAXSERV], name[NI_MAXHOST + NI_MAXSERV + 4];
	if (getnameinfo(addr, len, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		return NULL;
	}
	snprintf(name, sizeof(name), addr->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s",
		host, port);
	return strdup(name);
}

bool slim_link_redirect(struct slim_link *link, const struct sockaddr *addr, socklen_t len,
		const uint8_t token[SLIM_ATTACH_TOKEN_LEN])
{
	bool same_peer = link->fd >= 0 && len == link->peer_len &&
		memcmp(addr, &link->peer, len) == 0;
	if (same_peer && link->has_token && memcmp(token, link->token, sizeof(link->token)) == 0) {
		return false; /* the manager repeats itself until the compositor hears us */
	}
	if (!same_peer) {
		char *name = endpoint_name(addr, len);
		int fd = name && len <= sizeof(link->peer) ? connect_addr(addr, len) : -1;
		if (fd < 0) {
			slim_log(SLIM_LOG_ERROR, "link: cannot open a socket to %s: %s",
				name ? name : "the redirect's endpoint", strerror(errno));
			free(name);
			return false;
		}
		/* what is still queued on the old socket belongs to the old association */
		if (link->fd >= 0) {
			close(link->fd);
		}
		link->fd = fd;
		free(link->server);
		link->server = name;
		memcpy(&link->peer, addr, len);
		link->peer_len = len;
	}
	link->has_token = true;
	memcpy(link->token, token, sizeof(link->token));
	slim_console_core_set_token(link->core, token);
	link->conn_refused = false;
	/* a new association: the compositor checks the token on this HELLO */
	enter_connecting(link, NULL, slim_now_us());
	return true;
}

static void handle_refusal(struct slim_link *link, uint64_t now_us)
{
	if (link->listener && link->listener->refused) {
		link->listener->refused(link->listener_data, link->refusal_reason,
			link->refusal_text);
	}
	switch (link->refusal_reason) {
	case SLIM_REFUSE_BUSY:
		/* HELLO again now and then, unchanged, until the seat is free */
		link->state = SLIM_LINK_BUSY;
		link->deadline_us = now_us + BUSY_RETRY_MS * 1000ull;
		break;
	case SLIM_REFUSE_UNKNOWN:
		/*
		 * While CONNECTING the HELLO is on its way and its retries keep
		 * their backoff: answering each refusal at once would let a
		 * confused server drive a HELLO loop at network speed.
		 */
		if (link->state != SLIM_LINK_CONNECTING) {
			enter_connecting(link, "the server forgot this console", now_us);
		}
		break;
	default:
		/* a reason this version does not know: nothing to act on */
		break;
	}
}

/*
 * Whether a datagram of our association says the server serves us: all
 * but a refusal (the core's test for one: a REFUSE alone in its datagram).
 */
static bool serves_us(const struct slim_link *link, size_t len)
{
	const struct slim_fb *fb = slim_console_core_fb(link->core);
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	if (slim_reader_init(&r, &hdr, link->buf, len, false, (uint16_t)fb->width,
			(uint16_t)fb->height) != SLIM_OK || hdr.assoc != link->assoc) {
		return false;
	}
	return hdr.count != 1 || slim_reader_next(&r, &cmd) != SLIM_OK ||
		cmd.type != SLIM_CMD_REFUSE;
}

/* Hands one datagram to the core and follows what it says about the association. */
static void handle_datagram(struct slim_link *link, size_t len, uint64_t now_us)
{
	/*
	 * Attached before the core applies it, so that "attached" comes before
	 * the frame it brings. Whatever it holds, the HELLO got through.
	 */
	if (link->state != SLIM_LINK_ATTACHED && serves_us(link, len)) {
		enter_attached(link, now_us);
	}
	link->refusal = false;
	slim_console_core_receive(link->core, link->buf, len);
	if (link->refusal) {
		link->refusal = false;
		handle_refusal(link, now_us);
	}
}

static void connection_refused(struct slim_link *link, uint64_t now_us)
{
	link->conn_refused = false;
	/* While CONNECTING, the HELLO retries are already under way. */
	if (link->state != SLIM_LINK_CONNECTING) {
		enter_connecting(link, "connection refused", now_us);
	}
}

void slim_link_dispatch(struct slim_link *link)
{
	for (int i = 0; i < RECV_BURST; i++) {
		ssize_t n = recv(link->fd, link->buf, sizeof(link->buf), MSG_TRUNC);
		uint64_t now = slim_now_us();
		if (n < 0) {
			if (errno == ECONNREFUSED) {
				connection_refused(link, now);
				continue;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				slim_log(SLIM_LOG_DEBUG, "link: recv: %s", strerror(errno));
			}
			return;
		}
		if ((size_t)n > sizeof(link->buf)) {
			/* longer than any datagram may be: cut, so the core rejects it */
			n = sizeof(link->buf);
		}
		handle_datagram(link, (size_t)n, now);
	}
}

void slim_link_tick(struct slim_link *link, uint64_t now_us)
{
	if (link->state == SLIM_LINK_IDLE) {
		return;
	}
	if (link->conn_refused) {
		connection_refused(link, now_us);
	}
	if (now_us < link->deadline_us) {
		return;
	}
	switch (link->state) {
	case SLIM_LINK_CONNECTING:
		send_hello(link);
		schedule_hello_retry(link, now_us);
		break;
	case SLIM_LINK_ATTACHED:
		link->deadline_us = now_us + PING_MS * 1000ull;
		slim_console_core_ping(link->core);
		break;
	case SLIM_LINK_BUSY:
		link->deadline_us = now_us + BUSY_RETRY_MS * 1000ull;
		send_hello(link);
		break;
	case SLIM_LINK_IDLE:
		break;
	}
}

int slim_link_timeout_ms(const struct slim_link *link, uint64_t now_us)
{
	if (link->state == SLIM_LINK_IDLE) {
		return -1;
	}
	if (link->conn_refused || now_us >= link->deadline_us) {
		return 0;
	}
	/* rounded up: waking a little early would only spin */
	uint64_t ms = (link->deadline_us - now_us + 999) / 1000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}
