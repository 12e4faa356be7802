#define _GNU_SOURCE /* IP_PKTINFO, IPV6_RECVPKTINFO, SOCK_NONBLOCK, explicit_bzero */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "console-send.h"
#include "consoles.h"
#include "sessions.h"
#include "slim-codec.h"

/*
 * Connections of keys not enrolled (waiting for an administrator, refused,
 * or not yet said HELLO) make room among themselves: four times the list of
 * those waiting, and never at an enrolled console's expense.
 */
#define MAX_UNADMITTED (4 * SLIM_ENROLL_PENDING_MAX)
#define MAX_HALF_OPEN 64
/* Consoles in a lab may share an address (tests share 127.0.0.1). */
#define MAX_PER_SOURCE 8
/*
 * Established connections of enrolled consoles, past one each of the
 * table (max_consoles): a console that starts over from a new address
 * holds a second until its old one falls silent.
 */
#define CONNS_SLACK 64
/* Receive buffer a console: a few of its datagrams at once, at about 1 KiB each of kernel memory. */
#define RCVBUF_PER_CONSOLE 4096

struct slim_udp {
	struct slim_manager *mgr;
	int fd;
	struct wl_event_source *source, *timer;
	struct slim_sec_server *sec;
	/* where the datagram being handled reached us (IP_PKTINFO) */
	struct sockaddr_storage local;
	socklen_t local_len;
	uint8_t buf[65536];
};

static bool same_address(const struct sockaddr *a, socklen_t alen,
		const struct sockaddr_storage *b, socklen_t blen)
{
	if (a->sa_family != b->ss_family) {
		return false;
	}
	if (a->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->sa_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
		return x->sin6_port == y->sin6_port &&
			memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0;
	}
	return alen == blen && memcmp(a, b, alen) == 0;
}

/* The id as text, or false if it is not one we can put on a control line. */
static bool console_id(const char raw[SLIM_CONSOLE_ID_LEN], char out[SLIM_CONSOLE_ID_LEN + 1])
{
	size_t n = 0;
	while (n < SLIM_CONSOLE_ID_LEN && raw[n] != '\0') {
		char ch = raw[n];
		bool ok = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
			(ch >= 'A' && ch <= 'Z') || ch == '-' || ch == '_' || ch == '.' || ch == ':';
		if (!ok) {
			return false;
		}
		out[n] = ch;
		n++;
	}
	out[n] = '\0';
	return n > 0;
}

static void drop(struct slim_manager *mgr, const char *what)
{
	mgr->dropped++;
	if (slim_ratelimit(&mgr->log_rl, slim_now_us())) {
		slim_log(SLIM_LOG_DEBUG, "consoles: dropped a datagram: %s", what);
	}
}

/* Where the console is and what it said: its connection, addresses and screen. */
static void take_hello(struct slim_console *c, const struct slim_peer *peer,
		const struct slim_dgram *hdr, const struct slim_cmd *cmd)
{
	if ((size_t)peer->from_len <= sizeof(c->assoc.addr)) {
		memcpy(&c->assoc.addr, peer->from, peer->from_len);
		c->assoc.addr_len = peer->from_len;
	}
	memset(&c->assoc.local, 0, sizeof(c->assoc.local));
	c->assoc.local_len = 0;
	if (peer->local && (size_t)peer->local_len <= sizeof(c->assoc.local)) {
		memcpy(&c->assoc.local, peer->local, peer->local_len);
		c->assoc.local_len = peer->local_len;
	}
	c->assoc.conn = peer->conn;
	c->assoc.id = hdr->assoc;
	c->card.seq = hdr->seq;
	c->assoc.width = cmd->hello.width;
	c->assoc.height = cmd->hello.height;
	c->assoc.mtu = cmd->hello.mtu;
	c->assoc.caps = cmd->hello.caps;
}

/* The manager its HELLO says it could not reach: said by each new association, or not. */
static void take_unreached(struct slim_console *c, const struct slim_cmd *cmd, uint64_t now)
{
	c->has_unreached = cmd->unreached != NULL;
	if (cmd->unreached) {
		memcpy(c->unreached, cmd->unreached, sizeof(c->unreached));
		c->unreached_until_us = now + SLIM_UNREACHED_US;
	}
}

/*
 * The console's id: over DTLS its key's, which HELLO must repeat; over clear
 * transport what HELLO says. False if there is none to believe.
 */
static bool hello_id(struct slim_manager *mgr, const struct slim_peer *peer,
		const struct slim_cmd *cmd, char id[SLIM_CONSOLE_ID_LEN + 1])
{
	if (!peer->key) {
		return console_id(cmd->hello.console_id, id);
	}
	slim_sec_fingerprint_id(peer->key, id);
	if (memcmp(cmd->hello.console_id, id, SLIM_CONSOLE_ID_LEN) != 0) {
		drop(mgr, "HELLO with a console id that is not its key's");
		return false;
	}
	return true;
}

/* Whether enrollment lets the console in; if not, it is told why. */
static bool admitted(struct slim_manager *mgr, const struct slim_peer *peer, uint32_t assoc,
		const char *id)
{
	char text[SLIM_REFUSE_TEXT_MAX];
	struct slim_enroll_hello hello = {
		.id = id, .key = peer->key, .addr = peer->from, .addr_len = peer->from_len,
		.conn = peer->conn, .assoc = assoc,
	};
	switch (slim_enroll_check(&mgr->enroll, &hello, slim_manager_now(mgr))) {
	case SLIM_ENROLL_ADMIT:
		if (mgr->ops->admit) {
			mgr->ops->admit(mgr->ops_data, peer->conn);
		}
		return true;
	case SLIM_ENROLL_WAIT:
		snprintf(text, sizeof(text), "waiting for an administrator: slimlandctl approve %s", id);
		slim_manager_send_refuse(mgr, peer->conn, peer->from, assoc, SLIM_REFUSE_PENDING, text);
		return false;
	case SLIM_ENROLL_REFUSE:
		slim_manager_send_refuse(mgr, peer->conn, peer->from, assoc, SLIM_REFUSE_DENIED,
			"this session manager does not serve this console");
		return false;
	}
	return false;
}

static void handle_hello(struct slim_manager *mgr, const struct slim_peer *peer,
		const struct slim_dgram *hdr, const struct slim_cmd *cmd)
{
	char id[SLIM_CONSOLE_ID_LEN + 1];
	if (hdr->assoc == 0) {
		drop(mgr, "HELLO in association 0");
		return;
	}
	if (!hello_id(mgr, peer, cmd, id)) {
		if (!peer->key) {
			drop(mgr, "HELLO with a bad console id");
		}
		return;
	}
	if (!admitted(mgr, peer, hdr->assoc, id)) {
		return;
	}
	if (!slim_screen_fits(cmd->hello.width, cmd->hello.height)) {
		/* before the table changes: no greeter is started at that size */
		if (slim_ratelimit(&mgr->log_rl, slim_now_us())) {
			slim_log(SLIM_LOG_INFO, "console %s: HELLO at %ux%u refused: over %u pixels",
				id, cmd->hello.width, cmd->hello.height, SLIM_MAX_SCREEN_PIXELS);
		}
		slim_manager_send_refuse(mgr, peer->conn, peer->from, hdr->assoc, SLIM_REFUSE_TOO_LARGE,
			SLIM_REFUSE_TOO_LARGE_TEXT);
		return;
	}
	uint64_t now = slim_manager_now(mgr);
	struct slim_console *c = slim_manager_console(mgr, id);
	/*
	 * Over DTLS the key is the console, wherever it is now (a reboot, a new
	 * address); in clear only the address it said HELLO from is.
	 */
	bool same = c && c->heard.known && (peer->key || same_address(peer->from, peer->from_len,
		&c->assoc.addr, c->assoc.addr_len));
	if (same) {
		bool new_assoc = c->assoc.id != hdr->assoc || c->assoc.conn != peer->conn;
		slim_console_heard(c, now);
		if (new_assoc) {
			take_hello(c, peer, hdr, cmd);
			take_unreached(c, cmd, now);
		}
		slim_console_hello(c, new_assoc);
		return;
	}
	if (c && c->heard.known && now - c->heard.last_us < SLIM_CONSOLE_TAKEOVER_US) {
		if (slim_ratelimit(&mgr->log_rl, slim_now_us())) {
			slim_log(SLIM_LOG_INFO, "console %s: HELLO from a second address refused", id);
		}
		slim_manager_send_refuse(mgr, peer->conn, peer->from, hdr->assoc, SLIM_REFUSE_BUSY,
			"this console id is in use elsewhere");
		return;
	}
	if (!c) {
		c = slim_manager_console_create(mgr, id);
		if (!c) {
			drop(mgr, "no room for another console");
			return;
		}
		slim_log(SLIM_LOG_INFO, "console %s: new", id);
	}
	take_hello(c, peer, hdr, cmd);
	take_unreached(c, cmd, now);
	slim_console_heard(c, now);
	slim_console_hello(c, true);
}

static struct slim_console *find_association(struct slim_manager *mgr, uint32_t assoc,
		const struct slim_sec_conn *conn)
{
	struct slim_console *c;
	wl_list_for_each(c, &mgr->consoles, link) {
		if (c->heard.known && c->assoc.id == assoc && c->assoc.conn == conn) {
			return c;
		}
	}
	return NULL;
}

void slim_consoles_receive(struct slim_manager *mgr, const struct slim_peer *peer,
		const uint8_t *buf, size_t len)
{
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	enum slim_error err = slim_reader_init(&r, &hdr, buf, len, true,
		SLIM_MAX_DIM, SLIM_MAX_DIM);
	/* validated whole before anything is applied (slim-protocol.md §5) */
	struct slim_reader check = r;
	while (err == SLIM_OK) {
		err = slim_reader_next(&check, &cmd);
		if (err == SLIM_OK && cmd.type == 0) {
			break;
		}
	}
	if (err != SLIM_OK) {
		drop(mgr, slim_error_str(err));
		return;
	}
	bool refused = false;
	for (;;) {
		if (slim_reader_next(&r, &cmd) != SLIM_OK || cmd.type == 0) {
			break;
		}
		if (cmd.type == SLIM_CMD_HELLO) {
			handle_hello(mgr, peer, &hdr, &cmd);
			continue;
		}
		/* looked up again for every command: the one before may have changed the table */
		struct slim_console *c = find_association(mgr, hdr.assoc, peer->conn);
		if (!c) {
			if (!refused && (cmd.type == SLIM_CMD_PING || cmd.type == SLIM_CMD_CARD)) {
				refused = true;
				slim_manager_send_refuse(mgr, peer->conn, peer->from, hdr.assoc, SLIM_REFUSE_UNKNOWN, "");
			}
			continue;
		}
		slim_console_heard(c, slim_manager_now(mgr));
		switch (cmd.type) {
		case SLIM_CMD_PING:
			/*
			 * Answered, smaller than it came: a console whose manager
			 * falls silent (a power cut) goes to the next one (§9).
			 */
			slim_console_send_empty(c);
			break;
		case SLIM_CMD_CARD:
			if (hdr.seq == c->card.seq) {
				break; /* a copy: consoles send each CARD more than once */
			}
			if (hdr.seq < c->card.seq) {
				drop(mgr, "CARD replayed or late");
				break;
			}
			c->card.seq = hdr.seq;
			slim_console_card(c, &cmd.card);
			break;
		default:
			/* INPUT, ACK, NACK belong to display associations, not ours */
			break;
		}
	}
}

void slim_consoles_closed(struct slim_manager *mgr, struct slim_sec_conn *conn, bool goodbye)
{
	struct slim_console *c, *gone = NULL;
	wl_list_for_each(c, &mgr->consoles, link) {
		if (c->assoc.conn == conn) {
			c->assoc.conn = NULL; /* its next PING draws a hint, and it says HELLO again */
			gone = goodbye ? c : NULL;
		}
	}
	slim_enroll_forget_conn(&mgr->enroll, conn);
	if (gone) {
		slim_console_goodbye(gone);
	}
}

static void arm_timer(struct slim_udp *udp)
{
	int ms = slim_sec_server_timeout_ms(udp->sec, slim_now_us());
	/* 0 disarms a wl timer: what is due now runs a millisecond later */
	wl_event_source_timer_update(udp->timer, ms < 0 ? 0 : ms == 0 ? 1 : ms);
}

static int handle_timer(void *data)
{
	struct slim_udp *udp = data;
	slim_sec_server_tick(udp->sec, slim_now_us());
	arm_timer(udp);
	return 0;
}

static void handle_sec_datagram(void *data, struct slim_sec_conn *conn, const uint8_t *buf,
		size_t len)
{
	struct slim_udp *udp = data;
	socklen_t from_len;
	const struct sockaddr *from = slim_sec_conn_address(conn, &from_len);
	struct slim_peer peer = {
		.conn = conn,
		.key = slim_sec_conn_peer_key(conn),
		.from = from,
		.from_len = from_len,
		.local = udp->local_len ? (const struct sockaddr *)&udp->local : NULL,
		.local_len = udp->local_len,
	};
	slim_consoles_receive(udp->mgr, &peer, buf, len);
}

/* A key enrolled here is admitted before its HELLO: from its handshake on. */
static void handle_sec_established(void *data, struct slim_sec_conn *conn)
{
	struct slim_udp *udp = data;
	const uint8_t *key = slim_sec_conn_peer_key(conn);
	char id[SLIM_CONSOLE_ID_LEN + 1];
	if (key) {
		slim_sec_fingerprint_id(key, id);
		if (slim_enroll_serves(&udp->mgr->enroll, id)) {
			slim_sec_conn_admit(conn);
		}
	}
}

static void handle_sec_closed(void *data, struct slim_sec_conn *conn, const char *why)
{
	struct slim_udp *udp = data;
	slim_consoles_closed(udp->mgr, conn, slim_sec_conn_goodbye(conn));
}

static const struct slim_sec_server_handler sec_handler = {
	.established = handle_sec_established,
	.datagram = handle_sec_datagram,
	.closed = handle_sec_closed,
};

static int handle_readable(int fd, uint32_t mask, void *data)
{
	struct slim_udp *udp = data;
	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage from;
		char control[256];
		struct iovec iov = { .iov_base = udp->buf, .iov_len = sizeof(udp->buf) };
		struct msghdr msg = {
			.msg_name = &from, .msg_namelen = sizeof(from),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = control, .msg_controllen = sizeof(control),
		};
		ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);
		if (n < 0) {
			break;
		}
		/* where the datagram was sent to: what REDIRECTs name as the compositor's host */
		memset(&udp->local, 0, sizeof(udp->local));
		udp->local_len = 0;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO) {
				struct in_pktinfo pi;
				memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
				struct sockaddr_in *in4 = (struct sockaddr_in *)&udp->local;
				in4->sin_family = AF_INET;
				in4->sin_addr = pi.ipi_addr;
				udp->local_len = sizeof(*in4);
			} else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO) {
				struct in6_pktinfo pi;
				memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
				struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&udp->local;
				in6->sin6_family = AF_INET6;
				in6->sin6_addr = pi.ipi6_addr;
				udp->local_len = sizeof(*in6);
			}
		}
		slim_sec_server_receive(udp->sec, udp->buf, (size_t)n, (struct sockaddr *)&from,
			msg.msg_namelen, slim_now_us());
	}
	arm_timer(udp);
	return 0;
}

/* The secure layer's way out. */
static void send_to_wire(void *data, const uint8_t *buf, size_t len, const struct sockaddr *to,
		socklen_t to_len)
{
	struct slim_udp *udp = data;
	if (sendto(udp->fd, buf, len, MSG_DONTWAIT, to, to_len) < 0 &&
			slim_ratelimit(&udp->mgr->log_rl, slim_now_us())) {
		slim_log(SLIM_LOG_DEBUG, "consoles: sendto: %s", strerror(errno));
	}
}

struct slim_udp *slim_udp_create(struct slim_manager *mgr, const char *listen,
		const struct slim_sec_identity *identity)
{
	struct sockaddr_storage addr;
	socklen_t addr_len;
	if (!slim_parse_address(listen, SLIM_SESSIOND_PORT, &addr, &addr_len)) {
		slim_log(SLIM_LOG_ERROR, "listen: bad address %s", listen);
		return NULL;
	}
	if (!identity && !slim_sec_clear_allowed((struct sockaddr *)&addr)) {
		slim_log(SLIM_LOG_ERROR, "transport = clear listens on loopback only, not %s", listen);
		return NULL;
	}
	struct slim_udp *udp = calloc(1, sizeof(*udp));
	if (!udp) {
		return NULL;
	}
	udp->mgr = mgr;
	udp->fd = -1;
	uint32_t idle_s = mgr->config.console_timeout_s ? mgr->config.console_timeout_s : 3600;
	struct slim_sec_server_config sec_config = {
		.mode = identity ? SLIM_SEC_DTLS : SLIM_SEC_CLEAR,
		.identity = identity,
		.max_conns = mgr->config.max_consoles + CONNS_SLACK,
		.max_unadmitted = MAX_UNADMITTED,
		.max_half_open = MAX_HALF_OPEN,
		.max_per_source = MAX_PER_SOURCE,
		.idle_ms = idle_s * 1000,
	};
	char err[256];
	udp->sec = slim_sec_server_create(&sec_config, &sec_handler, udp, send_to_wire, udp,
		err, sizeof(err));
	if (!udp->sec) {
		slim_log(SLIM_LOG_ERROR, "consoles: %s", err);
		goto fail;
	}
	udp->fd = socket(addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (udp->fd < 0) {
		slim_log(SLIM_LOG_ERROR, "socket: %s", strerror(errno));
		goto fail;
	}
	int on = 1;
	if (addr.ss_family == AF_INET) {
		setsockopt(udp->fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof(on));
	} else {
		setsockopt(udp->fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on, sizeof(on));
		setsockopt(udp->fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof(on));
	}
	/*
	 * Every console's HELLO, handshake and PING arrive here: hundreds
	 * after a power cut, while a greeter is being started. The default
	 * buffer (~200 KiB, a hundred-odd small datagrams) overflowed there,
	 * and consoles whose handshakes were lost waited until forgotten.
	 * FORCE: past rmem_max, as root.
	 */
	int rcvbuf = RCVBUF_PER_CONSOLE * (int)(mgr->config.max_consoles < 4096 ?
		mgr->config.max_consoles : 4096);
	if (setsockopt(udp->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) != 0) {
		setsockopt(udp->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	}
	if (bind(udp->fd, (struct sockaddr *)&addr, addr_len) < 0) {
		slim_log(SLIM_LOG_ERROR, "listen %s: %s", listen, strerror(errno));
		goto fail;
	}
	udp->source = wl_event_loop_add_fd(mgr->loop, udp->fd, WL_EVENT_READABLE,
		handle_readable, udp);
	udp->timer = wl_event_loop_add_timer(mgr->loop, handle_timer, udp);
	if (!udp->source || !udp->timer) {
		goto fail;
	}
	slim_log(SLIM_LOG_INFO, "consoles: listening on %s (%s)", listen,
		identity ? "DTLS" : "in clear");
	return udp;
fail:
	slim_udp_destroy(udp);
	return NULL;
}

void slim_udp_destroy(struct slim_udp *udp)
{
	if (!udp) {
		return;
	}
	if (udp->source) {
		wl_event_source_remove(udp->source);
	}
	if (udp->timer) {
		wl_event_source_remove(udp->timer);
	}
	slim_sec_server_destroy(udp->sec);
	if (udp->fd >= 0) {
		close(udp->fd);
	}
	free(udp);
}

const struct slim_sec_stats *slim_udp_stats(const struct slim_udp *udp)
{
	return slim_sec_server_stats(udp->sec);
}
