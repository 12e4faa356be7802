/*
 * What the files of the secure transport's server share among themselves:
 *
 *   slim-sec-server.c     the server: the order a datagram is looked at,
 *                         timers, the clear transport
 *   slim-sec-admission.c  who may start a handshake: cookies, rates,
 *                         bounds on half-open handshakes, hints
 *   slim-sec-conn.c       one connection: its handshake, its records, its end
 *   slim-sec-table.c      the connections by address, and what is said of
 *                         an address at a limited rate
 */
#ifndef SLIM_SEC_SERVER_INTERNAL_H
#define SLIM_SEC_SERVER_INTERNAL_H

#include <gnutls/dtls.h>
#include <netinet/in.h>
#include "slim-log.h"
#include "slim-sec-internal.h"

#define HASH_BUCKETS 1024
#define SOURCE_BUCKETS 256

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

/* slim-sec-table.c */

/* The key of an address; false for a family that is neither IPv4 nor IPv6. */
bool slim_sec_addr_key(const struct sockaddr *sa, socklen_t len, struct addr_key *key);
/* FNV-1a of the key, salted; with_port false: of the IP address alone. */
uint32_t slim_sec_addr_hash(const struct slim_sec_server *srv, const struct addr_key *key,
		bool with_port);
/* The live connection of this address, established or half-open. */
struct slim_sec_conn *slim_sec_table_find(struct slim_sec_server *srv,
		const struct addr_key *key, bool established);
/* A half-open connection; NULL without memory. */
struct slim_sec_conn *slim_sec_table_add(struct slim_sec_server *srv, const struct addr_key *key,
		const struct sockaddr *from, socklen_t from_len, uint64_t now_us);
/* Frees what was closed, once no callback can still hold it. */
void slim_sec_table_reap(struct slim_sec_server *srv);
/* Frees every connection, ended or not. */
void slim_sec_table_finish(struct slim_sec_server *srv);
/*
 * Handshakes under way in all and from `key`'s address; `oldest` the one
 * started first (from anywhere).
 */
unsigned slim_sec_table_count_half_open(const struct slim_sec_server *srv,
		const struct addr_key *key, unsigned *same_source_count,
		struct slim_sec_conn **oldest);
/* Says `what` of an address, at a limited rate. */
void slim_sec_log_limited(struct slim_sec_server *srv, const struct addr_key *key,
		const char *what);
/* Not ours to read: counted, and said at a limited rate. */
void slim_sec_drop(struct slim_sec_server *srv, const struct addr_key *key, const char *why);

/* slim-sec-conn.c */

/* GnuTLS for a half-open connection, from the ClientHello's cookie state. */
bool slim_sec_conn_setup(struct slim_sec_server *srv, struct slim_sec_conn *conn,
		gnutls_dtls_prestate_st *prestate);
/* PSK: the key for the identity the client names, from the user. */
int slim_sec_psk_key(gnutls_session_t session, const gnutls_datum_t *user, gnutls_datum_t *key);
/* One record: to the handshake under way, or read and handed to the user. */
void slim_sec_conn_feed(struct slim_sec_server *srv, struct slim_sec_conn *conn,
		const uint8_t *buf, size_t len, uint64_t now_us);
/* Runs the handshake on; sends the last flight again when its timer ran out. */
void slim_sec_conn_handshake(struct slim_sec_server *srv, struct slim_sec_conn *conn);
/* The handshake is done (or, in clear, the address spoke): the user is told. */
void slim_sec_conn_established(struct slim_sec_server *srv, struct slim_sec_conn *conn);
/* Ends a connection: told to the user unless the user asked for it. */
void slim_sec_conn_end(struct slim_sec_conn *conn, const char *why, bool tell);

/* slim-sec-admission.c */

/* A fresh cookie key once a minute; the one before still opens what it handed out. */
void slim_sec_rotate_cookie_key(struct slim_sec_server *srv, uint64_t now_us);
/* Both keys wiped and freed. */
void slim_sec_forget_cookie_keys(struct slim_sec_server *srv);
void slim_sec_client_hello(struct slim_sec_server *srv, const uint8_t *buf, size_t len,
		const struct addr_key *key, const struct sockaddr *from, socklen_t from_len,
		uint64_t now_us);
/* An encrypted record nobody here knows: the "forgotten" hint, at a limited rate. */
void slim_sec_send_hint(struct slim_sec_server *srv, size_t len, const struct addr_key *key,
		const struct sockaddr *from, socklen_t from_len, uint64_t now_us);

#endif
