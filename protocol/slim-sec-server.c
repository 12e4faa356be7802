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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "slim-sec-server-internal.h"

/* ---- clear transport: every address a connection, for loopback benchmarks ---- */

static void clear_receive(struct slim_sec_server *srv, const uint8_t *buf, size_t len,
		const struct addr_key *key, const struct sockaddr *from, socklen_t from_len,
		uint64_t now_us)
{
	uint32_t magic;
	if (len < sizeof(magic) || (memcpy(&magic, buf, sizeof(magic)), magic != SLIM_MAGIC)) {
		slim_sec_drop(srv, key, "not a slim datagram");
		return;
	}
	struct slim_sec_conn *conn = slim_sec_table_find(srv, key, true);
	if (!conn) {
		conn = slim_sec_table_add(srv, key, from, from_len, now_us);
		if (!conn) {
			return;
		}
		slim_sec_conn_established(srv, conn);
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
		gnutls_psk_set_server_credentials_function2(srv->psk, slim_sec_psk_key);
	}
	if (gnutls_priority_init(&srv->priority, srv->cert ? SLIM_SEC_PRIORITY_CERT :
			SLIM_SEC_PRIORITY_PSK_SERVER, NULL) != 0) {
		snprintf(err, err_len, "GnuTLS refuses the priorities");
		goto fail;
	}
	slim_sec_rotate_cookie_key(srv, slim_now_us());
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
		slim_sec_conn_end(srv->conns[i], NULL, false);
	}
	slim_sec_table_finish(srv);
	slim_sec_forget_cookie_keys(srv);
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
	if ((size_t)from_len > sizeof(struct sockaddr_storage) ||
			!slim_sec_addr_key(from, from_len, &key)) {
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
		slim_sec_drop(srv, &key, magic == SLIM_MAGIC ? "a datagram in clear (this server wants DTLS)" :
			"too short for a DTLS record");
		goto out;
	}
	uint8_t type = buf[0];
	uint16_t epoch = slim_dtls_epoch(buf);
	if (type == SLIM_DTLS_HANDSHAKE && epoch == 0 && buf[SLIM_DTLS_HEADER] == SLIM_DTLS_CLIENT_HELLO) {
		slim_sec_client_hello(srv, buf, len, &key, from, from_len, now_us);
		goto out;
	}
	/* the handshake's records go to a handshake under way, the rest to the connection */
	bool handshake = type == SLIM_DTLS_HANDSHAKE || type == SLIM_DTLS_CHANGE_CIPHER_SPEC ||
		epoch == 0;
	struct slim_sec_conn *conn = slim_sec_table_find(srv, &key, !handshake);
	if (!conn) {
		conn = slim_sec_table_find(srv, &key, handshake);
	}
	if (conn) {
		slim_sec_conn_feed(srv, conn, buf, len, now_us);
	} else if (type == SLIM_DTLS_APPLICATION_DATA && epoch != 0) {
		slim_sec_send_hint(srv, len, &key, from, from_len, now_us);
	} else {
		slim_sec_drop(srv, &key, "a record of no connection");
	}
out:
	srv->busy--;
	slim_sec_table_reap(srv);
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
				slim_sec_conn_end(conn, "silent", true);
			}
		} else if (now_us - conn->started_us >= srv->cfg.handshake_ms * 1000ull) {
			srv->stats.handshakes_failed++;
			slim_sec_conn_end(conn, NULL, false);
		} else if (gnutls_dtls_get_timeout(conn->tls) == 0) {
			slim_sec_conn_handshake(srv, conn); /* sends the last flight again */
		}
	}
	srv->busy--;
	slim_sec_table_reap(srv);
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

