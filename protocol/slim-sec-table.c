/*
 * The secure server's connections by address: a hash table salted so that
 * nobody outside picks its collisions, and an array to walk them all.
 * Ended connections stay in both until no callback can still hold them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "slim-sec-server-internal.h"

bool slim_sec_addr_key(const struct sockaddr *sa, socklen_t len, struct addr_key *key)
{
	memset(key, 0, sizeof(*key));
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)sa;
		key->family = 4;
		key->port = in->sin_port;
		memcpy(key->addr, &in->sin_addr, 4);
		return true;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		key->family = 6;
		key->port = in6->sin6_port;
		memcpy(key->addr, &in6->sin6_addr, 16);
		return true;
	}
	return false;
}

uint32_t slim_sec_addr_hash(const struct slim_sec_server *srv, const struct addr_key *key,
		bool with_port)
{
	uint32_t h = 2166136261u ^ srv->salt;
	const uint8_t *p = (const uint8_t *)key;
	for (size_t i = 0; i < sizeof(*key); i++) {
		if (!with_port && (i == 2 || i == 3)) {
			continue;
		}
		h = (h ^ p[i]) * 16777619u;
	}
	return h;
}

/* The bucket of the table an address is in. */
static struct slim_sec_conn **bucket(struct slim_sec_server *srv, const struct addr_key *key)
{
	return &srv->buckets[slim_sec_addr_hash(srv, key, true) % HASH_BUCKETS];
}

static bool same_source(const struct addr_key *a, const struct addr_key *b)
{
	return a->family == b->family && memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

struct slim_sec_conn *slim_sec_table_find(struct slim_sec_server *srv,
		const struct addr_key *key, bool established)
{
	struct slim_sec_conn *c = *bucket(srv, key);
	for (; c; c = c->next_hash) {
		if (!c->dead && c->established == established &&
				memcmp(&c->key, key, sizeof(*key)) == 0) {
			return c;
		}
	}
	return NULL;
}

void slim_sec_log_limited(struct slim_sec_server *srv, const struct addr_key *key,
		const char *what)
{
	if (!slim_ratelimit(&srv->log_rl, slim_now_us())) {
		return;
	}
	char addr[64] = "?";
	if (key->family == 4) {
		const uint8_t *a = key->addr;
		snprintf(addr, sizeof(addr), "%u.%u.%u.%u:%u", a[0], a[1], a[2], a[3],
			(unsigned)ntohs(key->port));
	} else {
		snprintf(addr, sizeof(addr), "[ipv6]:%u", (unsigned)ntohs(key->port));
	}
	slim_log(SLIM_LOG_INFO, "secure: %s: %s", addr, what);
}

void slim_sec_drop(struct slim_sec_server *srv, const struct addr_key *key, const char *why)
{
	srv->stats.dropped++;
	slim_sec_log_limited(srv, key, why);
}

static void conn_free(struct slim_sec_conn *conn)
{
	if (conn->tls) {
		gnutls_deinit(conn->tls);
	}
	free(conn);
}

static void unlink_conn(struct slim_sec_server *srv, struct slim_sec_conn *conn)
{
	struct slim_sec_conn **p = bucket(srv, &conn->key);
	while (*p && *p != conn) {
		p = &(*p)->next_hash;
	}
	if (*p) {
		*p = conn->next_hash;
	}
	srv->conns[conn->index] = srv->conns[--srv->n_conns];
	srv->conns[conn->index]->index = conn->index;
	if (conn->established) {
		srv->stats.conns--;
	} else {
		srv->stats.half_open--;
	}
}

void slim_sec_table_reap(struct slim_sec_server *srv)
{
	if (srv->busy) {
		return;
	}
	for (size_t i = 0; i < srv->n_conns;) {
		struct slim_sec_conn *conn = srv->conns[i];
		if (conn->dead) {
			unlink_conn(srv, conn);
			conn_free(conn);
		} else {
			i++;
		}
	}
}

struct slim_sec_conn *slim_sec_table_add(struct slim_sec_server *srv,
		const struct addr_key *key, const struct sockaddr *from, socklen_t from_len,
		uint64_t now_us)
{
	if (srv->n_conns == srv->cap_conns) {
		size_t cap = srv->cap_conns ? 2 * srv->cap_conns : 16;
		struct slim_sec_conn **conns = realloc(srv->conns, cap * sizeof(*conns));
		if (!conns) {
			return NULL;
		}
		srv->conns = conns;
		srv->cap_conns = cap;
	}
	struct slim_sec_conn *conn = calloc(1, sizeof(*conn));
	if (!conn) {
		return NULL;
	}
	conn->srv = srv;
	conn->key = *key;
	memcpy(&conn->addr, from, from_len);
	conn->addr_len = from_len;
	conn->started_us = conn->last_in_us = now_us;
	struct slim_sec_conn **b = bucket(srv, key);
	conn->next_hash = *b;
	*b = conn;
	conn->index = srv->n_conns;
	srv->conns[srv->n_conns++] = conn;
	srv->stats.half_open++;
	return conn;
}

void slim_sec_table_finish(struct slim_sec_server *srv)
{
	for (size_t i = 0; i < srv->n_conns; i++) {
		conn_free(srv->conns[i]);
	}
	free(srv->conns);
	srv->conns = NULL;
	srv->n_conns = srv->cap_conns = 0;
}

unsigned slim_sec_table_count_half_open(const struct slim_sec_server *srv,
		const struct addr_key *key, unsigned *same_source_count,
		struct slim_sec_conn **oldest)
{
	unsigned all = 0;
	*same_source_count = 0;
	*oldest = NULL;
	for (size_t i = 0; i < srv->n_conns; i++) {
		struct slim_sec_conn *c = srv->conns[i];
		if (!c->dead && !c->established) {
			all++;
			*same_source_count += same_source(&c->key, key);
			if (!*oldest || c->started_us < (*oldest)->started_us) {
				*oldest = c;
			}
		}
	}
	return all;
}
