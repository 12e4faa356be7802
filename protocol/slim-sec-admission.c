/*
 * Who may start a handshake with the secure server. A ClientHello's cookie
 * is checked before anything a spoofed flood could have spent; without one
 * the answer is no larger than the question and goes at a rate in all;
 * with one, a half-open handshake is made within per-address, per-source
 * and global bounds. A record nobody knows gets a hint, at a rate.
 */
#define _GNU_SOURCE /* explicit_bzero */
#include <string.h>
#include "slim-sec-server-internal.h"

#define COOKIE_ROTATE_US (60 * 1000000ull)
/* A handshake under way is replaced by another from its address only once this old. */
#define RESTART_US 1000000ull
/* Hints: a restarted server's consoles need one each, not a stream. */
#define HINT_RATE 200
#define HINT_SOURCE_RATE 5

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

static void forget_key(gnutls_datum_t *key)
{
	if (key->data) {
		explicit_bzero(key->data, key->size);
		gnutls_free(key->data);
		*key = (gnutls_datum_t){ 0 };
	}
}

void slim_sec_forget_cookie_keys(struct slim_sec_server *srv)
{
	forget_key(&srv->cookie_key[0]);
	forget_key(&srv->cookie_key[1]);
}

void slim_sec_rotate_cookie_key(struct slim_sec_server *srv, uint64_t now_us)
{
	if (srv->cookie_key[0].data && now_us - srv->cookie_rotated_us < COOKIE_ROTATE_US) {
		return;
	}
	gnutls_datum_t fresh;
	if (gnutls_key_generate(&fresh, GNUTLS_COOKIE_KEY_SIZE) != 0) {
		return; /* the old key goes on serving */
	}
	forget_key(&srv->cookie_key[1]);
	srv->cookie_key[1] = srv->cookie_key[0];
	srv->cookie_key[0] = fresh;
	srv->cookie_rotated_us = now_us;
}

/*
 * The cookie first, before anything a spoofed flood could have spent: a
 * valid one proves that the sender receives at its address. Without one
 * the sender is answered a HelloVerifyRequest, at a rate, and false said.
 */
static bool cookie_valid(struct slim_sec_server *srv, const uint8_t *buf, size_t len,
		const struct addr_key *key, const struct sockaddr *from, socklen_t from_len,
		uint64_t now_us, gnutls_dtls_prestate_st *prestate)
{
	slim_sec_rotate_cookie_key(srv, now_us);
	bool valid = false;
	/* the key before the last rotation still opens cookies it handed out */
	for (int i = 0; i < 2 && !valid && srv->cookie_key[i].data; i++) {
		memset(prestate, 0, sizeof(*prestate));
		valid = gnutls_dtls_cookie_verify(&srv->cookie_key[i], (void *)key, sizeof(*key),
			(void *)buf, len, prestate) == 0;
	}
	if (valid) {
		return true;
	}
	/*
	 * The answers to unproven addresses have a rate in all and none per
	 * source: a HelloVerifyRequest is no larger than what came, and a
	 * rate per source would be spent by a flood in a console's name
	 * before the console's own ClientHello, which needs its cookie.
	 */
	if (!take(&srv->hello_all, srv->cfg.hello_rate, now_us)) {
		srv->stats.rate_limited++;
		return false;
	}
	struct unverified u = { srv, from, from_len, len };
	memset(prestate, 0, sizeof(*prestate));
	gnutls_dtls_cookie_send(&srv->cookie_key[0], (void *)key, sizeof(*key), prestate,
		&u, unverified_push);
	return false;
}

/*
 * Whether a handshake may begin for a ClientHello with a valid cookie and
 * this random, `conn` being the address's handshake under way (or NULL);
 * room is made for it within the bounds.
 */
static bool may_begin(struct slim_sec_server *srv, const struct addr_key *key,
		struct slim_sec_conn *conn, const uint8_t *random, uint64_t now_us)
{
	/*
	 * A cookie holds for a minute or two, so a ClientHello recorded on the
	 * wire may come again from its address: it must neither end the
	 * handshake a console has under way (one younger than RESTART_US stays,
	 * which also holds an address to one handshake begun a second) nor
	 * begin one for the connection the address has.
	 */
	struct slim_sec_conn *live = slim_sec_table_find(srv, key, true);
	if ((conn && now_us - conn->started_us < RESTART_US) ||
			(live && memcmp(live->client_random, random, 32) == 0)) {
		srv->stats.half_open_full++;
		return false;
	}
	if (conn) {
		slim_sec_conn_end(conn, NULL, false); /* the client started over */
	}
	unsigned from_source;
	struct slim_sec_conn *oldest;
	unsigned all = slim_sec_table_count_half_open(srv, key, &from_source, &oldest);
	if (from_source >= srv->cfg.max_per_source) {
		srv->stats.half_open_full++;
		return false;
	}
	if (all >= srv->cfg.max_half_open && oldest) {
		/*
		 * The oldest makes room, rather than the newest being turned away:
		 * a console's handshake needs a few milliseconds, and keeping it
		 * out would take more valid cookies a millisecond than the rates
		 * above let through.
		 */
		srv->stats.half_open_full++;
		slim_sec_conn_end(oldest, NULL, false);
	}
	return true;
}

/*
 * The cookie proves this address sent the ClientHello it answers: the
 * same one without the cookie. That counts towards what it may be sent,
 * as QUIC counts a client's padded Initial (a certificate flight is ~440
 * bytes, more than three of these ClientHellos alone).
 */
static void count_cookie_exchange(struct slim_sec_conn *conn, const uint8_t *buf, size_t len,
		size_t sid_at)
{
	size_t cookie_at = sid_at + 1 + (len > sid_at ? buf[sid_at] : 0);
	size_t cookie_len = cookie_at < len ? buf[cookie_at] : 0;
	conn->bytes_in = len > cookie_len + 1 ? len - cookie_len - 1 : 0;
	/* and its HelloVerifyRequest: record and handshake headers, version, the cookie */
	conn->bytes_out = SLIM_DTLS_HEADER + 12 + 2 + 1 + cookie_len;
}

void slim_sec_client_hello(struct slim_sec_server *srv, const uint8_t *buf, size_t len,
		const struct addr_key *key, const struct sockaddr *from, socklen_t from_len,
		uint64_t now_us)
{
	gnutls_dtls_prestate_st prestate;
	if (!cookie_valid(srv, buf, len, key, from, from_len, now_us, &prestate)) {
		return;
	}
	/* record header, handshake header (12), client_version (2), then the random */
	const size_t random_at = SLIM_DTLS_HEADER + 12 + 2;
	if (len < random_at + 32) {
		slim_sec_drop(srv, key, "a ClientHello too short to be one");
		return;
	}
	struct slim_sec_conn *conn = slim_sec_table_find(srv, key, false);
	if (conn && memcmp(conn->client_random, buf + random_at, 32) == 0) {
		slim_sec_conn_feed(srv, conn, buf, len, now_us); /* the client sent it again */
		return;
	}
	if (!may_begin(srv, key, conn, buf + random_at, now_us)) {
		return;
	}
	conn = slim_sec_table_add(srv, key, from, from_len, now_us);
	if (!conn) {
		return;
	}
	memcpy(conn->client_random, buf + random_at, 32);
	if (!slim_sec_conn_setup(srv, conn, &prestate)) {
		slim_sec_conn_end(conn, NULL, false);
		return;
	}
	count_cookie_exchange(conn, buf, len, random_at + 32);
	slim_sec_conn_feed(srv, conn, buf, len, now_us);
}

void slim_sec_send_hint(struct slim_sec_server *srv, size_t len, const struct addr_key *key,
		const struct sockaddr *from, socklen_t from_len, uint64_t now_us)
{
	uint32_t source = slim_sec_addr_hash(srv, key, false) % SOURCE_BUCKETS;
	if (len < SLIM_SEC_HINT_LEN) {
		slim_sec_drop(srv, key, "a record too short to answer");
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
