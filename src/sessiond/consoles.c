#define _GNU_SOURCE /* IP_PKTINFO, IPV6_RECVPKTINFO, SOCK_NONBLOCK */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "consoles.h"
#include "sessions.h"
#include "slim-codec.h"

struct slim_udp {
	struct slim_manager *mgr;
	int fd;
	struct wl_event_source *source;
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

static uint32_t address_hash(const struct sockaddr *a)
{
	const uint8_t *p = NULL;
	size_t n = 0;
	if (a->sa_family == AF_INET) {
		p = (const uint8_t *)&((const struct sockaddr_in *)(const void *)a)->sin_addr;
		n = 4;
	} else if (a->sa_family == AF_INET6) {
		p = (const uint8_t *)&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr;
		n = 16;
	}
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++) {
		h = (h ^ p[i]) * 16777619u;
	}
	return h;
}

static void send_to(struct slim_manager *mgr, const uint8_t *buf, size_t len,
		const struct sockaddr *to, socklen_t to_len)
{
	mgr->ops->send(mgr->ops_data, buf, len, to, to_len);
}

static void send_refuse(struct slim_manager *mgr, uint32_t assoc, uint16_t reason,
		const char *text, const struct sockaddr *to, socklen_t to_len)
{
	uint64_t now = slim_now_us();
	/* a forged source must not turn us into a reflector: per source, then in all */
	struct slim_ratelimit *rl = &mgr->refuse_rl[address_hash(to) %
		(sizeof(mgr->refuse_rl) / sizeof(mgr->refuse_rl[0]))];
	if (!slim_ratelimit(rl, now) || !slim_ratelimit(&mgr->refuse_all_rl, now)) {
		return;
	}
	uint8_t buf[SLIM_MIN_MTU];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), assoc, false);
	slim_put_refuse(&w, reason, text);
	size_t len = slim_writer_finish(&w, 0, now);
	send_to(mgr, buf, len, to, to_len);
}

static size_t console_mtu(const struct slim_console *c)
{
	return c->mtu >= SLIM_MIN_MTU && c->mtu < SLIM_DEFAULT_MTU ? c->mtu : SLIM_DEFAULT_MTU;
}

void slim_console_send_redirect(struct slim_console *c, uint16_t port, const uint8_t *token)
{
	struct slim_wire_redirect r = { .port = port };
	memcpy(r.token, token, sizeof(r.token));
	if (c->local.ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)&c->local;
		static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
		if (memcmp(in6->sin6_addr.s6_addr, mapped, 12) == 0) {
			r.family = 4;
			memcpy(r.addr, in6->sin6_addr.s6_addr + 12, 4);
		} else {
			r.family = 6;
			memcpy(r.addr, in6->sin6_addr.s6_addr, 16);
		}
	} else {
		/* AF_INET, or unknown (0.0.0.0): the console then keeps the manager's host */
		r.family = 4;
		if (c->local.ss_family == AF_INET) {
			memcpy(r.addr, &((const struct sockaddr_in *)(const void *)&c->local)->sin_addr, 4);
		}
	}
	uint8_t buf[SLIM_MIN_MTU];
	struct slim_writer w;
	slim_writer_init(&w, buf, console_mtu(c) < sizeof(buf) ? console_mtu(c) : sizeof(buf),
		c->assoc, false);
	slim_put_redirect(&w, &r);
	size_t len = slim_writer_finish(&w, 0, slim_now_us());
	send_to(c->mgr, buf, len, (const struct sockaddr *)&c->addr, c->addr_len);
}

void slim_console_send_empty(struct slim_console *c)
{
	uint8_t buf[sizeof(struct slim_wire_dgram)];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), c->assoc, false);
	size_t len = slim_writer_finish(&w, 0, slim_now_us());
	send_to(c->mgr, buf, len, (const struct sockaddr *)&c->addr, c->addr_len);
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

static void handle_hello(struct slim_manager *mgr, const struct slim_dgram *hdr,
		const struct slim_cmd *cmd, const struct sockaddr *from, socklen_t from_len,
		const struct sockaddr *local, socklen_t local_len)
{
	char id[SLIM_CONSOLE_ID_LEN + 1];
	if (hdr->assoc == 0 || !console_id(cmd->hello.console_id, id)) {
		drop(mgr, "HELLO with a bad console id or association");
		return;
	}
	uint64_t now = slim_manager_now(mgr);
	struct slim_console *c = slim_manager_console(mgr, id);
	if (c && c->known && same_address(from, from_len, &c->addr, c->addr_len)) {
		bool new_assoc = c->assoc != hdr->assoc;
		slim_console_heard(c, now);
		if (new_assoc) {
			c->assoc = hdr->assoc;
			c->card_seq = hdr->seq;
			c->width = cmd->hello.width;
			c->height = cmd->hello.height;
			c->mtu = cmd->hello.mtu;
			c->caps = cmd->hello.caps;
		}
		slim_console_hello(c, new_assoc);
		return;
	}
	if (c && c->known && now - c->last_heard_us < SLIM_CONSOLE_TAKEOVER_US) {
		if (slim_ratelimit(&mgr->log_rl, slim_now_us())) {
			slim_log(SLIM_LOG_INFO, "console %s: HELLO from a second address refused", id);
		}
		send_refuse(mgr, hdr->assoc, SLIM_REFUSE_BUSY,
			"this console id is in use elsewhere", from, from_len);
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
	if ((size_t)from_len > sizeof(c->addr)) {
		return;
	}
	memcpy(&c->addr, from, from_len);
	c->addr_len = from_len;
	memset(&c->local, 0, sizeof(c->local));
	c->local_len = 0;
	if (local && (size_t)local_len <= sizeof(c->local)) {
		memcpy(&c->local, local, local_len);
		c->local_len = local_len;
	}
	c->assoc = hdr->assoc;
	c->card_seq = hdr->seq;
	c->width = cmd->hello.width;
	c->height = cmd->hello.height;
	c->mtu = cmd->hello.mtu;
	c->caps = cmd->hello.caps;
	slim_console_heard(c, now);
	slim_console_hello(c, true);
}

static struct slim_console *find_association(struct slim_manager *mgr, uint32_t assoc,
		const struct sockaddr *from, socklen_t from_len)
{
	struct slim_console *c;
	wl_list_for_each(c, &mgr->consoles, link) {
		if (c->known && c->assoc == assoc &&
				same_address(from, from_len, &c->addr, c->addr_len)) {
			return c;
		}
	}
	return NULL;
}

void slim_consoles_receive(struct slim_manager *mgr, const uint8_t *buf, size_t len,
		const struct sockaddr *from, socklen_t from_len,
		const struct sockaddr *local, socklen_t local_len)
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
			handle_hello(mgr, &hdr, &cmd, from, from_len, local, local_len);
			continue;
		}
		/* looked up again for every command: the one before may have changed the table */
		struct slim_console *c = find_association(mgr, hdr.assoc, from, from_len);
		if (!c) {
			if (!refused && (cmd.type == SLIM_CMD_PING || cmd.type == SLIM_CMD_CARD)) {
				refused = true;
				send_refuse(mgr, hdr.assoc, SLIM_REFUSE_UNKNOWN, "", from, from_len);
			}
			continue;
		}
		slim_console_heard(c, slim_manager_now(mgr));
		switch (cmd.type) {
		case SLIM_CMD_PING:
			break;
		case SLIM_CMD_CARD:
			if (hdr.seq == c->card_seq) {
				break; /* a copy: consoles send each CARD more than once */
			}
			if (hdr.seq < c->card_seq) {
				drop(mgr, "CARD replayed or late");
				break;
			}
			c->card_seq = hdr.seq;
			slim_console_card(c, &cmd.card);
			break;
		default:
			/* INPUT, ACK, NACK belong to display associations, not ours */
			break;
		}
	}
}

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
		struct sockaddr_storage local = { 0 };
		socklen_t local_len = 0;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO) {
				struct in_pktinfo pi;
				memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
				struct sockaddr_in *in4 = (struct sockaddr_in *)&local;
				in4->sin_family = AF_INET;
				in4->sin_addr = pi.ipi_addr;
				local_len = sizeof(*in4);
			} else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO) {
				struct in6_pktinfo pi;
				memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
				struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&local;
				in6->sin6_family = AF_INET6;
				in6->sin6_addr = pi.ipi6_addr;
				local_len = sizeof(*in6);
			}
		}
		slim_consoles_receive(udp->mgr, udp->buf, (size_t)n, (struct sockaddr *)&from,
			msg.msg_namelen, local_len ? (struct sockaddr *)&local : NULL, local_len);
	}
	return 0;
}

struct slim_udp *slim_udp_create(struct slim_manager *mgr, const char *listen)
{
	struct sockaddr_storage addr;
	socklen_t addr_len;
	if (!slim_parse_address(listen, SLIM_SESSIOND_PORT, &addr, &addr_len)) {
		slim_log(SLIM_LOG_ERROR, "listen: bad address %s", listen);
		return NULL;
	}
	struct slim_udp *udp = calloc(1, sizeof(*udp));
	if (!udp) {
		return NULL;
	}
	udp->mgr = mgr;
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
	if (bind(udp->fd, (struct sockaddr *)&addr, addr_len) < 0) {
		slim_log(SLIM_LOG_ERROR, "listen %s: %s", listen, strerror(errno));
		goto fail;
	}
	udp->source = wl_event_loop_add_fd(mgr->loop, udp->fd, WL_EVENT_READABLE,
		handle_readable, udp);
	if (!udp->source) {
		goto fail;
	}
	slim_log(SLIM_LOG_INFO, "consoles: listening on %s", listen);
	return udp;
fail:
	if (udp->fd >= 0) {
		close(udp->fd);
	}
	free(udp);
	return NULL;
}

void slim_udp_destroy(struct slim_udp *udp)
{
	if (!udp) {
		return;
	}
	wl_event_source_remove(udp->source);
	close(udp->fd);
	free(udp);
}

void slim_udp_send(struct slim_udp *udp, const uint8_t *buf, size_t len,
		const struct sockaddr *to, socklen_t to_len)
{
	if (sendto(udp->fd, buf, len, MSG_DONTWAIT, to, to_len) < 0 &&
			slim_ratelimit(&udp->mgr->log_rl, slim_now_us())) {
		slim_log(SLIM_LOG_DEBUG, "consoles: sendto: %s", strerror(errno));
	}
}
