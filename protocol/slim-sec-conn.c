/*
 * One connection of the secure server: GnuTLS set up for it, its handshake
 * run on as records come, its records read and handed to the user, its
 * bounds and its end. What it may send before its address is proven is
 * bounded here (three times what it received, as QUIC does).
 */
#define _GNU_SOURCE /* explicit_bzero */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "slim-sec-server-internal.h"

/* A half-open handshake sends at most this many times what it received. */
#define AMPLIFICATION 3

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

void slim_sec_conn_end(struct slim_sec_conn *conn, const char *why, bool tell)
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
		slim_sec_conn_end(oldest, "too many connections", true);
	}
}

void slim_sec_conn_established(struct slim_sec_server *srv, struct slim_sec_conn *conn)
{
	/* one established connection an address: a new handshake means a new console start */
	struct slim_sec_conn *old = slim_sec_table_find(srv, &conn->key, true);
	if (old) {
		slim_sec_conn_end(old, "replaced by a new connection from its address", true);
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

void slim_sec_conn_handshake(struct slim_sec_server *srv, struct slim_sec_conn *conn)
{
	int r = gnutls_handshake(conn->tls);
	if (r == 0) {
		if (srv->cert && !(conn->has_peer_key =
				slim_sec_peer_fingerprint(conn->tls, conn->peer_key))) {
			srv->stats.handshakes_failed++;
			slim_sec_log_limited(srv, &conn->key, "handshake without a client key");
			slim_sec_conn_end(conn, NULL, false);
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
		slim_sec_conn_established(srv, conn);
		return;
	}
	if (r != GNUTLS_E_AGAIN && r != GNUTLS_E_INTERRUPTED && gnutls_error_is_fatal(r)) {
		/* a fatal alert tells the console why (its address proved itself with the cookie) */
		gnutls_alert_send_appropriate(conn->tls, r);
		srv->stats.handshakes_failed++;
		char why[160];
		snprintf(why, sizeof(why), "handshake failed: %s", gnutls_strerror(r));
		slim_sec_log_limited(srv, &conn->key, why);
		slim_sec_conn_end(conn, NULL, false);
	}
}

void slim_sec_conn_feed(struct slim_sec_server *srv, struct slim_sec_conn *conn,
		const uint8_t *buf, size_t len, uint64_t now_us)
{
	conn->inbox.data = buf;
	conn->inbox.len = len;
	conn->bytes_in += len;
	conn->last_in_us = now_us;
	if (!conn->established) {
		slim_sec_conn_handshake(srv, conn);
	} else {
		ssize_t n = gnutls_record_recv(conn->tls, srv->out, sizeof(srv->out));
		if (n > 0) {
			srv->handler->datagram(srv->data, conn, srv->out, (size_t)n);
		} else if (n == 0) {
			conn->goodbye = true;
			slim_sec_conn_end(conn, "the client closed the connection", true);
		} else if (n != GNUTLS_E_AGAIN && gnutls_error_is_fatal((int)n)) {
			slim_sec_conn_end(conn, gnutls_strerror((int)n), true);
		} else {
			/* a replay, a duplicate, or a record that did not authenticate */
			srv->stats.records_rejected++;
		}
	}
	conn->inbox.data = NULL;
}

int slim_sec_psk_key(gnutls_session_t session, const gnutls_datum_t *user, gnutls_datum_t *key)
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
		slim_sec_log_limited(srv, &conn->key, "the pairing key without ECDHE");
		return -1;
	}
	uint8_t k[SLIM_SEC_KEY_LEN];
	if (!srv->cfg.psk_lookup(srv->data, identity, k)) {
		slim_sec_log_limited(srv, &conn->key, "a pre-shared key identity nobody expects");
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

bool slim_sec_conn_setup(struct slim_sec_server *srv, struct slim_sec_conn *conn,
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
	slim_sec_conn_end(conn, NULL, false);
	slim_sec_table_reap(conn->srv);
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
