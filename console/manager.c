#define _GNU_SOURCE /* SOCK_NONBLOCK, SOCK_CLOEXEC */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include "card.h"
#include "link.h"
#include "manager.h"
#include "slim-log.h"

#define HELLO_FIRST_MS 250
#define HELLO_MAX_MS 4000
#define PING_MS 1000
#define BUSY_RETRY_MS 5000
/* The manager's datagrams are small: a REDIRECT or a REFUSE. */
#define MANAGER_DGRAM_MAX 512

enum manager_state {
	MANAGER_CONNECTING,
	MANAGER_ATTACHED,
	MANAGER_BUSY,
};

struct slim_manager {
	int fd;
	char *address;
	struct slim_console_core *core;
	char id[SLIM_CONSOLE_ID_LEN];
	const struct slim_manager_listener *listener;
	void *data;

	enum manager_state state;
	uint32_t assoc, up_seq;
	uint64_t deadline_us; /* next HELLO or PING */
	uint32_t backoff_ms;
	bool conn_refused;

	/* as in link.c: each reader's latest event, and which the manager has not heard */
	struct slim_wire_card cards[SLIM_CARD_MAX_READERS];
	uint32_t card_known, card_unsent;

	struct slim_ratelimit log_limit;
	uint8_t buf[MANAGER_DGRAM_MAX];
};

/* "HOST[:PORT]" with the default port made explicit, as slim_udp_connect wants it. */
static char *with_port(const char *manager)
{
	char buf[320];
	const char *last = strrchr(manager, ':');
	bool bracketed = manager[0] == '[';
	bool has_port = bracketed ? (last && last > strchr(manager, ']')) :
		(last && strchr(manager, ':') == last);
	if (has_port) {
		snprintf(buf, sizeof(buf), "%s", manager);
	} else if (!bracketed && last) {
		/* a bare IPv6 address */
		snprintf(buf, sizeof(buf), "[%s]:%d", manager, SLIM_SESSIOND_PORT);
	} else {
		snprintf(buf, sizeof(buf), "%s:%d", manager, SLIM_SESSIOND_PORT);
	}
	return strdup(buf);
}

struct slim_manager *slim_manager_create(const char *manager, struct slim_console_core *core,
		const char *id, const struct slim_manager_listener *listener, void *data,
		char *err, size_t err_len)
{
	struct slim_manager *m = calloc(1, sizeof(*m));
	if (m) {
		m->fd = -1;
		m->address = with_port(manager);
	}
	if (!m || !m->address) {
		snprintf(err, err_len, "out of memory");
		slim_manager_destroy(m);
		return NULL;
	}
	m->fd = slim_udp_connect("--manager", m->address, err, err_len);
	if (m->fd < 0) {
		slim_manager_destroy(m);
		return NULL;
	}
	m->core = core;
	snprintf(m->id, sizeof(m->id), "%s", id);
	m->listener = listener;
	m->data = data;
	m->log_limit = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	return m;
}

void slim_manager_destroy(struct slim_manager *m)
{
	if (!m) {
		return;
	}
	if (m->fd >= 0) {
		close(m->fd);
	}
	free(m->address);
	free(m);
}

const char *slim_manager_address(const struct slim_manager *m)
{
	return m->address;
}

int slim_manager_fd(const struct slim_manager *m)
{
	return m->fd;
}

/* Numbers and sends one upstream datagram of the control association. */
static void send_dgram(struct slim_manager *m, struct slim_writer *w)
{
	if (++m->up_seq == 0) {
		m->up_seq = 1;
	}
	size_t len = slim_writer_finish(w, m->up_seq, slim_now_us());
	if (send(m->fd, w->buf, len, 0) < 0) {
		if (errno == ECONNREFUSED) {
			m->conn_refused = true;
		} else {
			slim_log(SLIM_LOG_DEBUG, "manager: send: %s", strerror(errno));
		}
	}
}

static void send_hello(struct slim_manager *m)
{
	uint8_t buf[128];
	struct slim_writer w;
	struct slim_wire_hello hello;
	slim_console_core_fill_hello(m->core, m->id, &hello);
	slim_writer_init(&w, buf, sizeof(buf), m->assoc, true);
	slim_put_hello(&w, &hello);
	slim_log(SLIM_LOG_DEBUG, "manager: HELLO, association %08x", m->assoc);
	send_dgram(m, &w);
}

static void send_card(struct slim_manager *m, size_t reader)
{
	uint8_t buf[128];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), m->assoc, true);
	slim_put_card(&w, &m->cards[reader]);
	send_dgram(m, &w);
	m->card_unsent &= ~(1u << reader);
}

static void send_ping(struct slim_manager *m)
{
	uint8_t buf[64];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), m->assoc, true);
	slim_put_ping(&w);
	send_dgram(m, &w);
}

/* A fresh random association, never 0 and never the one before. */
static uint32_t new_assoc(uint32_t old)
{
	uint32_t a = 0;
	while (a == 0 || a == old) {
		if (getrandom(&a, sizeof(a), GRND_NONBLOCK) != sizeof(a)) {
			a = (uint32_t)(slim_now_us() * 2654435761u) ^ (uint32_t)getpid();
		}
	}
	return a;
}

static void schedule_hello_retry(struct slim_manager *m, uint64_t now_us)
{
	m->deadline_us = now_us + m->backoff_ms * 1000ull;
	m->backoff_ms = m->backoff_ms * 2 > HELLO_MAX_MS ? HELLO_MAX_MS : m->backoff_ms * 2;
}

static void enter_connecting(struct slim_manager *m, const char *why, uint64_t now_us)
{
	m->state = MANAGER_CONNECTING;
	m->assoc = new_assoc(m->assoc);
	m->up_seq = 0;
	m->backoff_ms = HELLO_FIRST_MS;
	if (m->listener->connecting) {
		m->listener->connecting(m->data, why);
	}
	send_hello(m);
	schedule_hello_retry(m, now_us);
}

static void enter_attached(struct slim_manager *m, uint64_t now_us)
{
	m->state = MANAGER_ATTACHED;
	m->deadline_us = now_us + PING_MS * 1000ull;
	if (m->listener->attached) {
		m->listener->attached(m->data, m->assoc);
	}
	/* a manager that restarted knows no card: every card still on a reader again */
	for (size_t i = 0; i < SLIM_CARD_MAX_READERS; i++) {
		if ((m->card_unsent & (1u << i)) || ((m->card_known & (1u << i)) &&
				m->cards[i].event == SLIM_CARD_INSERTED)) {
			send_card(m, i);
		}
	}
}

void slim_manager_start(struct slim_manager *m)
{
	enter_connecting(m, NULL, slim_now_us());
}

void slim_manager_send_card(struct slim_manager *m, const struct slim_wire_card *card)
{
	if (card->reader >= SLIM_CARD_MAX_READERS) {
		return;
	}
	m->cards[card->reader] = *card;
	m->card_known |= 1u << card->reader;
	m->card_unsent |= 1u << card->reader;
	if (m->state == MANAGER_ATTACHED) {
		send_card(m, card->reader);
	}
}

static void log_limited(struct slim_manager *m, const char *what, const char *why)
{
	if (slim_ratelimit(&m->log_limit, slim_now_us())) {
		slim_log(SLIM_LOG_ERROR, "manager: %s: %s", what, why);
	}
}

static void handle_refuse(struct slim_manager *m, const struct slim_cmd *cmd, uint64_t now_us)
{
	if (cmd->refuse.reason == SLIM_REFUSE_UNKNOWN) {
		/*
		 * The manager restarted. While CONNECTING the retries keep their
		 * backoff; otherwise HELLO again at once. The display association
		 * is not touched: the picture goes on.
		 */
		if (m->state != MANAGER_CONNECTING) {
			enter_connecting(m, "the session manager forgot this console", now_us);
		}
	} else if (cmd->refuse.reason == SLIM_REFUSE_BUSY) {
		m->state = MANAGER_BUSY;
		m->deadline_us = now_us + BUSY_RETRY_MS * 1000ull;
		log_limited(m, m->address, "refused this console");
	}
}

static void handle_redirect(struct slim_manager *m, const struct slim_wire_redirect *r)
{
	struct sockaddr_storage addr = { 0 };
	socklen_t len;
	if (r->family == 4) {
		struct sockaddr_in *in = (struct sockaddr_in *)&addr;
		in->sin_family = AF_INET;
		in->sin_port = htons(r->port);
		memcpy(&in->sin_addr, r->addr, 4);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&addr;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(r->port);
		memcpy(&in6->sin6_addr, r->addr, 16);
		len = sizeof(*in6);
	}
	m->listener->redirect(m->data, (struct sockaddr *)&addr, len, r->token);
}

static void handle_datagram(struct slim_manager *m, size_t len, uint64_t now_us)
{
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	enum slim_error err = slim_reader_init(&r, &hdr, m->buf, len, false, 0, 0);
	if (err != SLIM_OK || hdr.assoc != m->assoc) {
		/* the connected socket hears the manager only: an old association, or noise */
		log_limited(m, "dropped a datagram", err != SLIM_OK ? slim_error_str(err) :
			"not this association");
		return;
	}
	if (hdr.count == 1 && slim_reader_next(&r, &cmd) == SLIM_OK &&
			cmd.type == SLIM_CMD_REFUSE) {
		handle_refuse(m, &cmd, now_us);
		return;
	}
	/* anything else in our association says the manager heard the HELLO */
	if (m->state != MANAGER_ATTACHED) {
		enter_attached(m, now_us);
	}
	slim_reader_init(&r, &hdr, m->buf, len, false, 0, 0);
	/* REDIRECT travels alone, like REFUSE */
	if (hdr.count == 1 && slim_reader_next(&r, &cmd) == SLIM_OK &&
			cmd.type == SLIM_CMD_REDIRECT) {
		handle_redirect(m, &cmd.redirect);
	}
}

static void connection_refused(struct slim_manager *m, uint64_t now_us)
{
	m->conn_refused = false;
	if (m->state != MANAGER_CONNECTING) {
		enter_connecting(m, "connection refused", now_us);
	}
}

void slim_manager_dispatch(struct slim_manager *m)
{
	for (int i = 0; i < 64; i++) {
		ssize_t n = recv(m->fd, m->buf, sizeof(m->buf), MSG_TRUNC);
		uint64_t now = slim_now_us();
		if (n < 0) {
			if (errno == ECONNREFUSED) {
				connection_refused(m, now);
				continue;
			}
			return;
		}
		if ((size_t)n > sizeof(m->buf)) {
			log_limited(m, "dropped a datagram", "too long");
			continue;
		}
		handle_datagram(m, (size_t)n, now);
	}
}

void slim_manager_tick(struct slim_manager *m, uint64_t now_us)
{
	if (m->conn_refused) {
		connection_refused(m, now_us);
	}
	if (now_us < m->deadline_us) {
		return;
	}
	switch (m->state) {
	case MANAGER_CONNECTING:
		send_hello(m);
		schedule_hello_retry(m, now_us);
		break;
	case MANAGER_ATTACHED:
		m->deadline_us = now_us + PING_MS * 1000ull;
		send_ping(m);
		break;
	case MANAGER_BUSY:
		m->deadline_us = now_us + BUSY_RETRY_MS * 1000ull;
		send_hello(m);
		break;
	}
}

int slim_manager_timeout_ms(const struct slim_manager *m, uint64_t now_us)
{
	if (m->conn_refused || now_us >= m->deadline_us) {
		return 0;
	}
	uint64_t ms = (m->deadline_us - now_us + 999) / 1000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}
