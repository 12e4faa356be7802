/*
 * The server's end of the secure transport: many clients on one UDP socket.
 *
 * Every datagram is looked at in this order, and the cheapest test that
 * settles it wins:
 *   1. not a DTLS record (short, or a cleartext slim datagram): dropped;
 *   2. a ClientHello: its cookie is checked first (stateless, one HMAC).
 *      Without a valid cookie the answer is a HelloVerifyRequest no larger
 *      than the ClientHello, at a rate in all, and nothing is kept. With
 *      one (the sender receives at its address) no rate applies that
 *      others could have spent: a half-open handshake is made, within
 *      per-address, per-source and global bounds;
 *   3. a record of a connection of its address: handed to it (the
 *      handshake record to a half-open one, the rest to the established);
 *   4. an encrypted record nobody here knows (the server restarted): a
 *      32-byte cleartext hint at a limited rate, and only for a record at
 *      least as large.
 * A half-open handshake sends at most three times what it received, and
 * ends after cfg.handshake_ms.
 */
#define _GNU_SOURCE /* explicit_bzero */
#include <errno.h>
#include <gnutls/dtls.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "slim-log.h"
#include "slim-sec-internal.h"

#define HASH_BUCKETS 1024
#define SOURCE_BUCKETS 256
#define COOKIE_ROTATE_US (60 * 1000000ull)
/* A handshake under way is replaced by another from its address only once this old. */
#define RESTART_US 1000000ull
/* A half-open handshake sends at most this many times what it received. */
#define AMPLIFICATION 3
/* Hints: a restarted server's consoles need one each, not a stream. */
#define HINT_RATE 200
#define HINT_SOURCE_RATE 5

/* An address as bytes: family, port, address; what tables and cookies key on. */
struct addr_key {
	uint8_t family;
	uint8_t pad;
	uint16_t port;
	uint8_t addr[16];
};

struct rate_bucket {
	uint64_t last_us;
	uint32_t tokens;
};

struct slim_sec_conn {
	struct slim_sec_server *srv;
	struct slim_sec_conn *next_hash;
	size_t index; /* in srv->conns */
	struct addr_key key;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	bool established, dead;
	bool goodbye; /* the client's close_notify ended it */
	bool admitted; /* the user vouched for it: only an admitted one pushes it out */
	gnutls_session_t tls;
	uint8_t client_random[32]; /* which ClientHello a half-open one answers */
	uint64_t started_us, last_in_us;
	uint64_t bytes_in, bytes_out;
	struct slim_sec_inbox inbox;
	bool has_peer_key;
	uint8_t peer_key[SLIM_SEC_FINGERPRINT_LEN];
	char psk_identity[SLIM_SEC_PSK_IDENTITY_MAX + 1];
	void *user;
};

struct slim_sec_server {
	struct slim_sec_server_config cfg;
	const struct slim_sec_server_handler *handler;
	void *data;
	slim_sec_send_to_fn send_to;
	void *send_data;

	gnutls_certificate_credentials_t cert;
	gnutls_psk_server_credentials_t psk;
	gnutls_priority_t priority;
	gnutls_datum_t cookie_key[2]; /* the current one, and the one before */
	uint64_t cookie_rotated_us;
	uint32_t salt; /* of the table's hash: nobody outside picks our collisions */

	struct slim_sec_conn *buckets[HASH_BUCKETS];
	struct slim_sec_conn **conns;
	size_t n_conns, cap_conns;
	int busy; /* inside receive or tick: closed connections are freed at the end */

	struct rate_bucket hello_all;
	struct rate_bucket hint_all, hint_source[SOURCE_BUCKETS];
	struct slim_sec_stats stats;
	struct slim_ratelimit log_rl;
	uint8_t out[SLIM_SEC_MAX_RECORD + 64];
};

/* A token bucket: `rate` a second, bursts of up to a second's worth. */
static bool take(struct rate_bucket *b, unsigned rate, uint64_t now_us)
{
	if (b->last_us == 0 || now_us < b->last_us) {
		b->last_us = now_us;
		b->tokens = rate;
	}
	uint64_t add = (now_us - b->last_us) * rate / 1000000;
	if (add > 0) {
		b->tokens = b->tokens + add > rate ? rate : (uint32_t)(b->tokens + add);
		b->last_us = now_us;
	}
	if (b->tokens == 0) {
		return false;
	}
	b->tokens--;
	return true;
}

static bool make_key(const struct sockaddr *sa, socklen_t len, struct addr_key *key)
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

/* FNV-1a of the key, salted; with_port false: of the IP address alone. */
static uint32_t key_hash(const struct slim_sec_server *srv, const struct addr_key *key,
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

static bool same_source(const struct addr_key *a, const struct addr_key *b)
{
	return a->family == b->family && memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

static struct slim_sec_conn *lookup(struct slim_sec_server *srv, const struct addr_key *key,
		bool established)
{
	struct slim_sec_conn *c = srv->buckets[key_hash(srv, key, true) % HASH_BUCKETS];
	for (; c; c = c->next_hash) {
		if (!c->dead && c->established == established &&
				memcmp(&c->key, key, sizeof(*key)) == 0) {
			return c;
		}
	}
	return NULL;
}

static void log_limited(struct slim_sec_server *srv, const struct addr_key *key,
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

/* Not ours to read: counted, and said at a limited rate. */
static void drop(struct slim_sec_server *srv, const struct addr_key *key, const char *why)
{
	srv->stats.dropped++;
	log_limited(srv, key, why);
}

/* ---- connections ---- */

static ssize_t conn_push(gnutls_transport_ptr_t ptr, const void *buf, size_t len)
{
	struct slim_sec_conn *conn = ptr;
	struct slim_sec_server *srv = conn->srv;
	if (!conn->established) {
		/* QUIC's rule: an address not yet proven gets at most 3x what it sent */
		if (conn->bytes_out + len > AMPLIFICATION * conn->bytes_in) {
			srv->stats.amplification += len;
			return (ssize_t)len;
		}
	}
	conn->bytes_out += len;
	srv->send_to(srv->send_data, buf, len, (const struct sockaddr *)&conn->addr,
		conn->addr_len);
	return (ssize_t)len;
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
	struct slim_sec_conn **p = &srv->buckets[key_hash(srv, &conn->key, true) % HASH_BUCKETS];
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

/* Frees what was closed, once no callback can still hold it. */
static void reap(struct slim_sec_server *srv)
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

static struct slim_sec_conn *conn_add(struct slim_sec_server *srv, const struct addr_key *key,
		const struct sockaddr *from, socklen_t from_len, uint64_t now_us)
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
	uint32_t b = key_hash(srv, key, true) % HASH_BUCKETS;
	conn->next_hash = srv->buckets[b];
	srv->buckets[b] = conn;
	conn->index = srv->n_conns;
	srv->conns[srv->n_conns++] = conn;
	srv->stats.half_open++;
	return conn;
}

/* Ends a connection: told to the user unless the user asked for it. */
static void conn_end(struct slim_sec_conn *conn, const char *why, bool tell)
{
	struct slim_sec_server *srv = conn->srv;
	if (conn->dead) {
		return;
	}
	conn->dead = true;
	if (conn->established && conn->tls) {
		/* an authenticated close_notify: the console knows to start again */
		gnutls_bye(conn->tls, GNUTLS_SHUT_WR);
	}
	if (tell && conn->established && srv->handler->closed) {
		srv->handler->closed(srv->data, conn, why);
	}
}

/*
 * Over the bound of `conn`'s kind, the other connection of that kind heard
 * from least recently makes room (it may come back). Admitted connections
 * and the others have bounds of their own, so that no number of keys
 * nobody vouched for can push out one the user did.
 */
static void make_room(struct slim_sec_server *srv, struct slim_sec_conn *conn)
{
	struct slim_sec_conn *oldest = NULL;
	unsigned live = 0;
	for (size_t i = 0; i < srv->n_conns; i++) {
		struct slim_sec_conn *c = srv->conns[i];
		if (c->established && !c->dead && c->admitted == conn->admitted) {
			live++;
			if (c != conn && (!oldest || c->last_in_us < oldest->last_in_us)) {
				oldest = c;
			}
		}
	}
	if (live > (conn->admitted ? srv->cfg.max_conns : srv->cfg.max_unadmitted) && oldest) {
		conn_end(oldest, "too many connections", true);
	}
}

static void become_established(struct slim_sec_server *srv, struct slim_sec_conn *conn)
{
	/* one established connection an address: a new handshake means a new console start */
	struct slim_sec_conn *old = lookup(srv, &conn->key, true);
	if (old) {
		conn_end(old, "replaced by a new connection from its address", true);
	}
	conn->established = true;
	conn->admitted = srv->cfg.max_unadmitted == 0;
	srv->stats.half_open--;
	srv->stats.conns++;
	srv->stats.handshakes++;
	if (srv->handler->established) {
		srv->handler->established(srv->data, conn); /* which may admit it */
	}
	if (!conn->dead) {
		make_room(srv, conn);
	}
}

static void handshake_step(struct slim_sec_server *srv, struct slim_sec_conn *conn)
{
	int r = gnutls_handshake(conn->tls);
	if (r == 0) {
		if (srv->cert && !(conn->has_peer_key =
				slim_sec_peer_fingerprint(conn->tls, conn->peer_key))) {
			srv->stats.handshakes_failed++;
			log_limited(srv, &conn->key, "handshake without a client key");
			conn_end(conn, NULL, false);
			return;
		}
		if (srv->psk) {
			gnutls_datum_t user = { 0 };
			if (gnutls_psk_server_get_username2(conn->tls, &user) == 0 &&
					user.size <= SLIM_SEC_PSK_IDENTITY_MAX) {
				memcpy(conn->psk_identity, user.data, user.size);
				conn->psk_identity[user.size] = '\0';
			}
		}
		become_established(srv, conn);
		return;
	}
	if (r != GNUTLS_E_AGAIN && r != GNUTLS_E_INTERRUPTED && gnutls_error_is_fatal(r)) {
		/* a fatal alert tells the console why (its address proved itself with the cookie) */
		gnutls_alert_send_appropriate(conn->tls, r);
		srv->stats.handshakes_failed++;
		char why[160];
		snprintf(why, sizeof(why), "handshake failed: %s", gnutls_strerror(r));
		log_limited(srv, &conn->key, why);
		conn_end(conn, NULL, false);
	}
}

static void conn_feed(struct slim_sec_server *srv, struct slim_sec_conn *conn,
		const uint8_t *buf, size_t len, uint64_t now_us)
{
	conn->inbox.data = buf;
	conn->inbox.len = len;
	conn->bytes_in += len;
	conn->last_in_us = now_us;
	if (!conn->established) {
		handshake_step(srv, conn);
	} else {
		ssize_t n = gnutls_record_recv(conn->tls, srv->out, sizeof(srv->out));
		if (n > 0) {
			srv->handler->datagram(srv->data, conn, srv->out, (size_t)n);
		} else if (n == 0) {
			conn->goodbye = true;
			conn_end(conn, "the client closed the connection", true);
		} else if (n != GNUTLS_E_AGAIN && gnutls_error_is_fatal((int)n)) {
			conn_end(conn, gnutls_strerror((int)n), true);
		} else {
			/* a replay, a duplicate, or a record that did not authenticate */
			srv->stats.records_rejected++;
		}
	}
	conn->inbox.data = NULL;
}

/* PSK: the key for the identity the client names, from the user. */
static int psk_key(gnutls_session_t session, const gnutls_datum_t *user, gnutls_datum_t *key)
{
	struct slim_sec_conn *conn = gnutls_session_get_ptr(session);
	struct slim_sec_server *srv = conn->srv;
	char identity[SLIM_SEC_PSK_IDENTITY_MAX + 1];
	if (user->size == 0 || user->size > SLIM_SEC_PSK_IDENTITY_MAX ||
			memchr(user->data, '\0', user->size)) {
		return -1;
	}
	memcpy(identity, user->data, user->size);
	identity[user->size] = '\0';
	if (strcmp(identity, SLIM_SEC_PAIRING_IDENTITY) == 0 &&
			gnutls_kx_get(session) != GNUTLS_KX_ECDHE_PSK) {
		/* a long-lived key without forward secrecy: no (slim-sec-internal.h) */
		log_limited(srv, &conn->key, "the pairing key without ECDHE");
		return -1;
	}
	uint8_t k[SLIM_SEC_KEY_LEN];
	if (!srv->cfg.psk_lookup(srv->data, identity, k)) {
		log_limited(srv, &conn->key, "a pre-shared key identity nobody expects");
		return -1;
	}
	key->data = gnutls_malloc(sizeof(k));
	if (!key->data) {
		explicit_bzero(k, sizeof(k));
		return -1;
	}
	memcpy(key->data, k, sizeof(k));
	key->size = sizeof(k);
	explicit_bzero(k, sizeof(k));
	return 0;
}

static bool conn_setup(struct slim_sec_server *srv, struct slim_sec_conn *conn,
		gnutls_dtls_prestate_st *prestate)
{
	unsigned flags = GNUTLS_SERVER | GNUTLS_DATAGRAM | GNUTLS_NONBLOCK | GNUTLS_NO_TICKETS;
	if (srv->cert) {
		flags |= GNUTLS_ENABLE_RAWPK;
	}
	if (gnutls_init(&conn->tls, flags) != 0 ||
			gnutls_priority_set(conn->tls, srv->priority) != 0 ||
			gnutls_credentials_set(conn->tls,
				srv->cert ? GNUTLS_CRD_CERTIFICATE : GNUTLS_CRD_PSK,
				srv->cert ? (void *)srv->cert : (void *)srv->psk) != 0) {
		return false;
	}
	if (srv->cert) {
		/* the console proves its key: that is its id */
		gnutls_certificate_server_set_request(conn->tls, GNUTLS_CERT_REQUIRE);
	}
	gnutls_session_set_ptr(conn->tls, conn);
	slim_sec_inbox_attach(&conn->inbox, conn->tls, conn_push, conn);
	/* the records' size is the slim layer's business (each console's MTU) */
	gnutls_dtls_set_mtu(conn->tls, SLIM_SEC_MAX_RECORD + 64);
	gnutls_dtls_set_timeouts(conn->tls, SLIM_SEC_RETRANSMIT_MS, srv->cfg.handshake_ms);
	gnutls_dtls_prestate_set(conn->tls, prestate);
	return true;
}

/* ---- what nobody has proven anything for ---- */

struct unverified {
	struct slim_sec_server *srv;
	const struct sockaddr *to;
	socklen_t to_len;
	size_t limit; /* no answer larger than the question */
};

static ssize_t unverified_push(gnutls_transport_ptr_t ptr, const void *buf, size_t len)
{
	struct unverified *u = ptr;
	if (len <= u->limit) {
		u->srv->send_to(u->srv->send_data, buf, len, u->to, u->to_len);
		u->srv->stats.cookies_sent++;
		u->srv->stats.unverified_bytes += len;
	}
	return (ssize_t)len;
}

static void rotate_cookie_key(struct slim_sec_server *srv, uint64_t now_us)
{
	if (srv->cookie_key[0].data && now_us - srv->cookie_rotated_us < COOKIE_ROTATE_US) {
		return;
	}
	gnutls_datum_t fresh;
	if (gnutls_key_generate(&fresh, GNUTLS_COOKIE_KEY_SIZE) != 0) {
		return; /* the old key goes on serving */
	}
	if (srv->cookie_key[1].data) {
		explicit_bzero(srv->cookie_key[1].data, srv->cookie_key[1].size);
		gnutls_free(srv->cookie_key[1].data);
	}
	srv->cookie_key[1] = srv->cookie_key[0];
	srv->cookie_key[0] = fresh;
	srv->cookie_rotated_us = now_us;
}

/*
 * Handshakes under way in all and from `key`'s address; `oldest` the one
 * started first (from anywhere).
 */
static unsigned count_half_open(const struct slim_sec_server *srv, const struct addr_key *key,
		unsigned *same_source_count, struct slim_sec_conn **oldest)
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

static void client_hello(struct slim_sec_server *srv, const uint8_t *buf, size_t len,
		const struct addr_key *key, const struct sockaddr *from, socklen_t from_len,
		uint64_t now_us)
{
	/*
	 * The cookie first, before anything a spoofed flood could have spent:
	 * a valid one proves that the sender receives at its address.
	 */
	rotate_cookie_key(srv, now_us);
	gnutls_dtls_prestate_st prestate;
	bool valid = false;
	/* the key before the last rotation still opens cookies it handed out */
	for (int i = 0; i < 2 && !valid && srv->cookie_key[i].data; i++) {
		memset(&prestate, 0, sizeof(prestate));
		valid = gnutls_dtls_cookie_verify(&srv->cookie_key[i], (void *)key, sizeof(*key),
			(void *)buf, len, &prestate) == 0;
	}
	if (!valid) {
		/*
		 * The answers to unproven addresses have a rate in all and none per
		 * source: a HelloVerifyRequest is no larger than what came, and a
		 * rate per source would be spent by a flood in a console's name
		 * before the console's own ClientHello, which needs its cookie.
		 */
		if (!take(&srv->hello_all, srv->cfg.hello_rate, now_us)) {
			srv->stats.rate_limited++;
			return;
		}
		struct unverified u = { srv, from, from_len, len };
		memset(&prestate, 0, sizeof(prestate));
		gnutls_dtls_cookie_send(&srv->cookie_key[0], (void *)key, sizeof(*key), &prestate,
			&u, unverified_push);
		return;
	}
	/* record header, handshake header (12), client_version (2), then the random */
	const size_t random_at = SLIM_DTLS_HEADER + 12 + 2;
	if (len < random_at + 32) {
		drop(srv, key, "a ClientHello too short to be one");
		return;
	}
	struct slim_sec_conn *conn = lookup(srv, key, false);
	if (conn && memcmp(conn->client_random, buf + random_at, 32) == 0) {
		conn_feed(srv, conn, buf, len, now_us); /* the client sent it again */
		return;
	}
	/*
	 * A cookie holds for a minute or two, so a ClientHello recorded on the
	 * wire may come again from its address: it must neither end the
	 * handshake a console has under way (one younger than RESTART_US stays,
	 * which also holds an address to one handshake begun a second) nor
	 * begin one for the connection the address has.
	 */
	struct slim_sec_conn *live = lookup(srv, key, true);
	if ((conn && now_us - conn->started_us < RESTART_US) ||
			(live && memcmp(live->client_random, buf + random_at, 32) == 0)) {
		srv->stats.half_open_full++;
		return;
	}
	if (conn) {
		conn_end(conn, NULL, false); /* the client started over */
	}
	unsigned from_source;
	struct slim_sec_conn *oldest;
	unsigned all = count_half_open(srv, key, &from_source, &oldest);
	if (from_source >= srv->cfg.max_per_source) {
		srv->stats.half_open_full++;
		return;
	}
	if (all >= srv->cfg.max_half_open && oldest) {
		/*
		 * The oldest makes room, rather than the newest being turned away:
		 * a console's handshake needs a few milliseconds, and keeping it
		 * out would take more valid cookies a millisecond than the rates
		 * above let through.
		 */
		srv->stats.half_open_full++;
		conn_end(oldest, NULL, false);
	}
	conn = conn_add(srv, key, from, from_len, now_us);
	if (!conn) {
		return;
	}
	memcpy(conn->client_random, buf + random_at, 32);
	if (!conn_setup(srv, conn, &prestate)) {
		conn_end(conn, NULL, false);
		return;
	}
	/*
	 * The cookie proves this address sent the ClientHello it answers: the
	 * same one without the cookie. That counts towards what it may be sent,
	 * as QUIC counts a client's padded Initial (a certificate flight is ~440
	 * bytes, more than three of these ClientHellos alone).
	 */
	size_t sid_at = random_at + 32;
	size_t cookie_at = sid_at + 1 + (len > sid_at ? buf[sid_at] : 0);
	size_t cookie_len = cookie_at < len ? buf[cookie_at] : 0;
	conn->bytes_in = len > cookie_len + 1 ? len - cookie_len - 1 : 0;
	/* and its HelloVerifyRequest: record and handshake headers, version, the cookie */
	conn->bytes_out = SLIM_DTLS_HEADER + 12 + 2 + 1 + cookie_len;
	conn_feed(srv, conn, buf, len, now_us);
}

static void send_hint(struct slim_sec_server *srv, size_t len, const struct addr_key *key,
		const struct sockaddr *from, socklen_t from_len, uint64_t now_us)
{
	uint32_t source = key_hash(srv, key, false) % SOURCE_BUCKETS;
	if (len < SLIM_SEC_HINT_LEN) {
		drop(srv, key, "a record too short to answer");
		return;
	}
	if (!take(&srv->hint_all, HINT_RATE, now_us) ||
			!take(&srv->hint_source[source], HINT_SOURCE_RATE, now_us)) {
		srv->stats.rate_limited++;
		return;
	}
	uint8_t hint[SLIM_SEC_HINT_LEN];
	size_t n = slim_sec_make_hint(hint, sizeof(hint));
	srv->send_to(srv->send_data, hint, n, from, from_len);
	srv->stats.hints_sent++;
	srv->stats.unverified_bytes += n;
}

/* ---- clear transport: every address a connection, for loopback benchmarks ---- */

static void clear_receive(struct slim_sec_server *srv, const uint8_t *buf, size_t len,
		const struct addr_key *key, const struct sockaddr *from, socklen_t from_len,
		uint64_t now_us)
{
	uint32_t magic;
	if (len < sizeof(magic) || (memcpy(&magic, buf, sizeof(magic)), magic != SLIM_MAGIC)) {
		drop(srv, key, "not a slim datagram");
		return;
	}
	struct slim_sec_conn *conn = lookup(srv, key, true);
	if (!conn) {
		conn = conn_add(srv, key, from, from_len, now_us);
		if (!conn) {
			return;
		}
		become_established(srv, conn);
		if (conn->dead) {
			return;
		}
	}
	conn->last_in_us = now_us;
	srv->handler->datagram(srv->data, conn, buf, len);
}

/* ---- the server ---- */

struct slim_sec_server *slim_sec_server_create(const struct slim_sec_server_config *config,
		const struct slim_sec_server_handler *handler, void *data,
		slim_sec_send_to_fn send_to, void *send_data, char *err, size_t err_len)
{
	struct slim_sec_server *srv = calloc(1, sizeof(*srv));
	if (!srv) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	srv->cfg = *config;
	srv->handler = handler;
	srv->data = data;
	srv->send_to = send_to;
	srv->send_data = send_data;
	srv->log_rl = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	struct slim_sec_server_config *c = &srv->cfg;
	c->max_conns = c->max_conns ? c->max_conns : 64;
	c->max_half_open = c->max_half_open ? c->max_half_open : 16;
	c->max_per_source = c->max_per_source ? c->max_per_source : 4;
	c->hello_rate = c->hello_rate ? c->hello_rate : 20000;
	c->idle_ms = c->idle_ms ? c->idle_ms : 30000;
	c->handshake_ms = c->handshake_ms ? c->handshake_ms : 10000;
	if (!slim_sec_random(&srv->salt, sizeof(srv->salt))) {
		snprintf(err, err_len, "no random numbers");
		goto fail;
	}
	if (c->mode == SLIM_SEC_CLEAR) {
		return srv;
	}
	if ((c->identity != NULL) == (c->psk_lookup != NULL)) {
		snprintf(err, err_len, "a secure server needs a key or pre-shared keys, one of them");
		goto fail;
	}
	if (c->identity) {
		if (!slim_sec_identity_credentials(c->identity, &srv->cert)) {
			snprintf(err, err_len, "cannot use the server's key");
			goto fail;
		}
	} else if (gnutls_psk_allocate_server_credentials(&srv->psk) != 0) {
		snprintf(err, err_len, "out of memory");
		goto fail;
	} else {
		gnutls_psk_set_server_credentials_function2(srv->psk, psk_key);
	}
	if (gnutls_priority_init(&srv->priority, srv->cert ? SLIM_SEC_PRIORITY_CERT :
			SLIM_SEC_PRIORITY_PSK_SERVER, NULL) != 0) {
		snprintf(err, err_len, "GnuTLS refuses the priorities");
		goto fail;
	}
	rotate_cookie_key(srv, slim_now_us());
	if (!srv->cookie_key[0].data) {
		snprintf(err, err_len, "cannot make a cookie key");
		goto fail;
	}
	return srv;
fail:
	slim_sec_server_destroy(srv);
	return NULL;
}

void slim_sec_server_destroy(struct slim_sec_server *srv)
{
	if (!srv) {
		return;
	}
	for (size_t i = 0; i < srv->n_conns; i++) {
		conn_end(srv->conns[i], NULL, false);
		conn_free(srv->conns[i]);
	}
	free(srv->conns);
	for (int i = 0; i < 2; i++) {
		if (srv->cookie_key[i].data) {
			explicit_bzero(srv->cookie_key[i].data, srv->cookie_key[i].size);
			gnutls_free(srv->cookie_key[i].data);
		}
	}
	if (srv->priority) {
		gnutls_priority_deinit(srv->priority);
	}
	if (srv->cert) {
		gnutls_certificate_free_credentials(srv->cert);
	}
	if (srv->psk) {
		gnutls_psk_free_server_credentials(srv->psk);
	}
	free(srv);
}

void slim_sec_server_receive(struct slim_sec_server *srv, const uint8_t *buf, size_t len,
		const struct sockaddr *from, socklen_t from_len, uint64_t now_us)
{
	struct addr_key key;
	srv->stats.datagrams++;
	if ((size_t)from_len > sizeof(struct sockaddr_storage) || !make_key(from, from_len, &key)) {
		srv->stats.dropped++; /* no address to answer or to name */
		return;
	}
	srv->busy++;
	if (srv->cfg.mode == SLIM_SEC_CLEAR) {
		clear_receive(srv, buf, len, &key, from, from_len, now_us);
		goto out;
	}
	uint32_t magic = 0;
	if (len >= sizeof(magic)) {
		memcpy(&magic, buf, sizeof(magic));
	}
	if (len < SLIM_DTLS_HEADER + 1 || magic == SLIM_MAGIC) {
		drop(srv, &key, magic == SLIM_MAGIC ? "a datagram in clear (this server wants DTLS)" :
			"too short for a DTLS record");
		goto out;
	}
	uint8_t type = buf[0];
	uint16_t epoch = slim_dtls_epoch(buf);
	if (type == SLIM_DTLS_HANDSHAKE && epoch == 0 && buf[SLIM_DTLS_HEADER] == SLIM_DTLS_CLIENT_HELLO) {
		client_hello(srv, buf, len, &key, from, from_len, now_us);
		goto out;
	}
	/* the handshake's records go to a handshake under way, the rest to the connection */
	bool handshake = type == SLIM_DTLS_HANDSHAKE || type == SLIM_DTLS_CHANGE_CIPHER_SPEC ||
		epoch == 0;
	struct slim_sec_conn *conn = lookup(srv, &key, !handshake);
	if (!conn) {
		conn = lookup(srv, &key, handshake);
	}
	if (conn) {
		conn_feed(srv, conn, buf, len, now_us);
	} else if (type == SLIM_DTLS_APPLICATION_DATA && epoch != 0) {
		send_hint(srv, len, &key, from, from_len, now_us);
	} else {
		drop(srv, &key, "a record of no connection");
	}
out:
	srv->busy--;
	reap(srv);
}

void slim_sec_server_tick(struct slim_sec_server *srv, uint64_t now_us)
{
	srv->busy++;
	/* by index: callbacks may add nothing, but they may end connections */
	for (size_t i = 0; i < srv->n_conns; i++) {
		struct slim_sec_conn *conn = srv->conns[i];
		if (conn->dead) {
			continue;
		}
		if (conn->established) {
			if (now_us - conn->last_in_us >= srv->cfg.idle_ms * 1000ull) {
				conn_end(conn, "silent", true);
			}
		} else if (now_us - conn->started_us >= srv->cfg.handshake_ms * 1000ull) {
			srv->stats.handshakes_failed++;
			conn_end(conn, NULL, false);
		} else if (gnutls_dtls_get_timeout(conn->tls) == 0) {
			handshake_step(srv, conn); /* sends the last flight again */
		}
	}
	srv->busy--;
	reap(srv);
}

int slim_sec_server_timeout_ms(const struct slim_sec_server *srv, uint64_t now_us)
{
	uint64_t next = UINT64_MAX;
	for (size_t i = 0; i < srv->n_conns; i++) {
		const struct slim_sec_conn *conn = srv->conns[i];
		uint64_t at;
		if (conn->dead) {
			at = now_us;
		} else if (conn->established) {
			at = conn->last_in_us + srv->cfg.idle_ms * 1000ull;
		} else {
			at = conn->started_us + srv->cfg.handshake_ms * 1000ull;
			uint64_t retransmit = now_us + gnutls_dtls_get_timeout(conn->tls) * 1000ull;
			at = retransmit < at ? retransmit : at;
		}
		next = at < next ? at : next;
	}
	if (next == UINT64_MAX) {
		return -1;
	}
	uint64_t ms = next <= now_us ? 0 : (next - now_us + 999) / 1000;
	return ms > 60000 ? 60000 : (int)ms;
}

const struct slim_sec_stats *slim_sec_server_stats(const struct slim_sec_server *srv)
{
	return &srv->stats;
}

enum slim_sec_mode slim_sec_server_mode(const struct slim_sec_server *srv)
{
	return srv->cfg.mode;
}

bool slim_sec_conn_send(struct slim_sec_conn *conn, const uint8_t *buf, size_t len)
{
	if (conn->dead || !conn->established) {
		return false;
	}
	struct slim_sec_server *srv = conn->srv;
	if (srv->cfg.mode == SLIM_SEC_CLEAR) {
		srv->send_to(srv->send_data, buf, len, (const struct sockaddr *)&conn->addr,
			conn->addr_len);
		return true;
	}
	return gnutls_record_send(conn->tls, buf, len) == (ssize_t)len;
}

void slim_sec_conn_close(struct slim_sec_conn *conn)
{
	conn_end(conn, NULL, false);
	reap(conn->srv);
}

const struct sockaddr *slim_sec_conn_address(const struct slim_sec_conn *conn, socklen_t *len)
{
	*len = conn->addr_len;
	return (const struct sockaddr *)&conn->addr;
}

const uint8_t *slim_sec_conn_peer_key(const struct slim_sec_conn *conn)
{
	return conn->has_peer_key ? conn->peer_key : NULL;
}

const char *slim_sec_conn_psk_identity(const struct slim_sec_conn *conn)
{
	return conn->psk_identity;
}

bool slim_sec_conn_goodbye(const struct slim_sec_conn *conn)
{
	return conn->goodbye;
}

void slim_sec_conn_admit(struct slim_sec_conn *conn)
{
	if (conn->admitted || conn->dead || !conn->established) {
		return;
	}
	conn->admitted = true;
	make_room(conn->srv, conn);
}

void slim_sec_conn_set_user(struct slim_sec_conn *conn, void *user)
{
	conn->user = user;
}

void *slim_sec_conn_user(const struct slim_sec_conn *conn)
{
	return conn->user;
}
