/*
 * What the manager says to consoles on their control associations
 * (session-manager.md §1): REDIRECT, MOVE, REFUSE and the empty answer,
 * each one datagram through slim_manager_ops.send.
 */
#define _GNU_SOURCE /* explicit_bzero */
#include <netinet/in.h>
#include <string.h>
#include "console-send.h"
#include "sessions.h"
#include "slim-codec.h"

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

static void send_conn(struct slim_manager *mgr, struct slim_sec_conn *conn, const uint8_t *buf,
		size_t len)
{
	if (conn) {
		mgr->ops->send(mgr->ops_data, conn, buf, len);
	}
}

void slim_manager_send_refuse(struct slim_manager *mgr, struct slim_sec_conn *conn,
		const struct sockaddr *to, uint32_t assoc, uint16_t reason, const char *text)
{
	uint64_t now = slim_now_us();
	/* per source, then in all: a refusal is never a flood, even to a real console */
	struct slim_ratelimit *rl = &mgr->refuse.source[address_hash(to) %
		(sizeof(mgr->refuse.source) / sizeof(mgr->refuse.source[0]))];
	if (!slim_ratelimit(rl, now) || !slim_ratelimit(&mgr->refuse.all, now)) {
		return;
	}
	uint8_t buf[SLIM_MIN_MTU];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), assoc, false);
	slim_put_refuse(&w, reason, text);
	size_t len = slim_writer_finish(&w, 0, now);
	send_conn(mgr, conn, buf, len);
}

/* One datagram of the console's own: the heartbeat need not follow it soon. */
static void send_console(struct slim_console *c, const uint8_t *buf, size_t len)
{
	c->assoc.sent_us = slim_manager_now(c->mgr);
	send_conn(c->mgr, c->assoc.conn, buf, len);
}

void slim_console_send_refuse(struct slim_console *c, uint16_t reason, const char *text)
{
	slim_manager_send_refuse(c->mgr, c->assoc.conn, (const struct sockaddr *)&c->assoc.addr, c->assoc.id, reason, text);
}

void slim_consoles_nudge(struct slim_manager *mgr, struct slim_sec_conn *conn, uint32_t assoc)
{
	uint8_t buf[64];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), assoc, false);
	slim_put_refuse(&w, SLIM_REFUSE_UNKNOWN, "");
	send_conn(mgr, conn, buf, slim_writer_finish(&w, 0, slim_now_us()));
}

static size_t console_mtu(const struct slim_console *c)
{
	return c->assoc.mtu >= SLIM_MIN_MTU && c->assoc.mtu < SLIM_DEFAULT_MTU ? c->assoc.mtu : SLIM_DEFAULT_MTU;
}

void slim_console_send_redirect(struct slim_console *c, uint16_t port, const uint8_t *token,
		const uint8_t *key)
{
	struct slim_wire_redirect r = { .port = port };
	memcpy(r.token, token, sizeof(r.token));
	memcpy(r.key, key, sizeof(r.key));
	if (c->assoc.local.ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)&c->assoc.local;
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
		if (c->assoc.local.ss_family == AF_INET) {
			memcpy(r.addr, &((const struct sockaddr_in *)(const void *)&c->assoc.local)->sin_addr, 4);
		}
	}
	uint8_t buf[SLIM_MIN_MTU];
	struct slim_writer w;
	slim_writer_init(&w, buf, console_mtu(c) < sizeof(buf) ? console_mtu(c) : sizeof(buf),
		c->assoc.id, false);
	slim_put_redirect(&w, &r);
	size_t len = slim_writer_finish(&w, 0, slim_now_us());
	send_console(c, buf, len);
	explicit_bzero(&r, sizeof(r));
	explicit_bzero(buf, sizeof(buf));
}

void slim_console_send_move(struct slim_console *c, const struct slim_wire_move *move)
{
	uint8_t buf[128];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), c->assoc.id, false);
	slim_put_move(&w, move);
	send_console(c, buf, slim_writer_finish(&w, 0, slim_now_us()));
}

void slim_console_send_empty(struct slim_console *c)
{
	uint8_t buf[sizeof(struct slim_wire_dgram)];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), c->assoc.id, false);
	size_t len = slim_writer_finish(&w, 0, slim_now_us());
	send_console(c, buf, len);
}

