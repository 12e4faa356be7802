/*
 * The secure transport: every association between a console and a server
 * (the session manager, a compositor) is a DTLS 1.2 connection (RFC 6347,
 * through GnuTLS), and every slim datagram travels as exactly one DTLS
 * record. Loss, reordering and SLIM's repair from the current framebuffer
 * (slim-protocol.md §6) work as before; the layer never retransmits a
 * record, only handshake flights, as DTLS itself does.
 *
 * Two kinds of proof:
 *   - certificates: raw ECDSA P-256 public keys (RFC 7250), for the control
 *     association between a console and the session manager; a console's id
 *     is derived from its key, and the console pins the manager's;
 *   - a pre-shared key: the display association between a console and a
 *     compositor, with a per-attach key the manager hands to both over
 *     authenticated channels (PSK, AES-128-GCM), or a standalone session's
 *     pairing key (ECDHE-PSK; the suites are in slim-sec-internal.h).
 *
 * What a server does for a sender that has not proved its address is
 * stateless and never larger than what it received: a ClientHello without
 * a valid cookie gets a HelloVerifyRequest (44 bytes), a record for a
 * connection the server does not have gets, at a limited rate, a 32-byte
 * cleartext "forgotten" hint. The cookie is checked before any rate that
 * others could spend, so a flood in a client's name never delays its
 * ClientHello with a valid cookie. State (a half-open handshake) exists
 * only after a valid cookie, within per-address, per-source and global
 * bounds, and what it sends is held to three times what it received (as
 * QUIC does). Established connections the user vouches for
 * (slim_sec_conn_admit) have a bound of their own that the others never
 * reach into.
 *
 * `SLIM_SEC_CLEAR` carries the datagrams unprotected through the same
 * interface: for benchmarks comparing both, on loopback only
 * (slim_sec_clear_allowed).
 *
 * No event loop here: the programs call *_tick when *_timeout_ms says.
 */
#ifndef SLIM_SECURE_H
#define SLIM_SECURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "slim-proto.h"

enum slim_sec_mode {
	SLIM_SEC_DTLS,
	SLIM_SEC_CLEAR, /* no protection at all: loopback benchmarks and tests */
};

/* SHA-256 of a key's DER SubjectPublicKeyInfo. */
#define SLIM_SEC_FINGERPRINT_LEN 32
/* Per-attach and pairing keys. */
#define SLIM_SEC_KEY_LEN 32
/* The longest PSK identity (an attach token in hex, or the pairing name). */
#define SLIM_SEC_PSK_IDENTITY_MAX 64
/* The PSK identity of a standalone session's pairing key. */
#define SLIM_SEC_PAIRING_IDENTITY "slimland-pairing"
/*
 * Bytes a record adds to a datagram (13 header, 8 explicit nonce, 16 tag at
 * most for the suites allowed), rounded up: a console announces its MTU
 * less this, so that a record still fits a UDP payload of the MTU.
 */
#define SLIM_SEC_OVERHEAD 64
/* The most plaintext one (D)TLS record carries. */
#define SLIM_SEC_MAX_RECORD 16384

typedef void (*slim_sec_send_fn)(void *data, const uint8_t *buf, size_t len);
typedef void (*slim_sec_send_to_fn)(void *data, const uint8_t *buf, size_t len,
		const struct sockaddr *to, socklen_t to_len);

/* "dtls" or "clear" into *mode; false for anything else. */
bool slim_sec_mode_parse(const char *text, enum slim_sec_mode *mode);
const char *slim_sec_mode_name(enum slim_sec_mode mode);
/* Clear transport is for loopback only: whether `addr` is a loopback address. */
bool slim_sec_clear_allowed(const struct sockaddr *addr);

/* ---- keys (slim-sec-keys.c) ---- */

/* A long-term ECDSA P-256 key pair: a console's, or the session manager's. */
struct slim_sec_identity;

/*
 * Reads the PEM private key at `path`; with `create`, makes a new one there
 * first if there is none (mode 0600, written atomically, its directory made
 * 0700). A key file readable by others is refused: it is no secret any more.
 * NULL with a one-line reason in `err`.
 */
struct slim_sec_identity *slim_sec_identity_load(const char *path, bool create,
		char *err, size_t err_len);
/* The same from PEM text in memory (tests, fuzzers). */
struct slim_sec_identity *slim_sec_identity_from_pem(const char *pem, size_t len,
		char *err, size_t err_len);
void slim_sec_identity_destroy(struct slim_sec_identity *id);
const uint8_t *slim_sec_identity_fingerprint(const struct slim_sec_identity *id);

/* 64 lowercase hex digits and a NUL. */
void slim_sec_fingerprint_hex(const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN], char out[65]);
/* "sha256:HEX" or HEX (64 digits, any case); false for anything else. */
bool slim_sec_fingerprint_parse(const char *text, uint8_t fp[SLIM_SEC_FINGERPRINT_LEN]);
/*
 * A console's id: the first 16 bytes of its key's fingerprint in lowercase
 * hex, exactly SLIM_CONSOLE_ID_LEN characters. Only the key's holder can
 * complete a handshake with it, so nobody else can claim the id.
 */
void slim_sec_fingerprint_id(const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN],
		char out[SLIM_CONSOLE_ID_LEN + 1]);
/* Whether `text` has the form of such an id (32 lowercase hex digits). */
bool slim_sec_id_valid(const char *text);

/*
 * A secret key file: 64 hex digits and an optional newline (a pairing key).
 * With `create`, a missing file is made with a new random key (mode 0600).
 * A file readable by others is refused.
 */
bool slim_sec_key_file_load(const char *path, bool create, uint8_t key[SLIM_SEC_KEY_LEN],
		char *err, size_t err_len);
/* The key file's text (64 hex digits, then optionally "\n"); false otherwise. */
bool slim_sec_key_parse(const char *text, size_t len, uint8_t key[SLIM_SEC_KEY_LEN]);
/* Random bytes from the kernel; false only if it has none to give. */
bool slim_sec_random(void *buf, size_t len);

/* ---- the client: one connection over a connected socket (slim-sec-client.c) ---- */

struct slim_sec_client_config {
	enum slim_sec_mode mode;
	/*
	 * Certificates: our key, and the judge of the server's: NULL to accept
	 * it, else why not (shown to the user). Both or neither.
	 */
	const struct slim_sec_identity *identity;
	const char *(*check_server)(void *data, const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN]);
	void *check_data;
	/* Otherwise a pre-shared key and its identity. */
	char psk_identity[SLIM_SEC_PSK_IDENTITY_MAX + 1];
	uint8_t psk[SLIM_SEC_KEY_LEN];
	/* The largest UDP payload to send (handshake fragments, records). */
	uint16_t mtu;
};

enum slim_sec_event {
	SLIM_SEC_NOTHING,     /* consumed: a handshake step, a replay, a forgery */
	SLIM_SEC_ESTABLISHED, /* the handshake completed: datagrams may go */
	SLIM_SEC_DATA,        /* an authenticated datagram */
	SLIM_SEC_FAILED,      /* the handshake failed (slim_sec_client_error) */
	SLIM_SEC_FORGOTTEN,   /* a cleartext hint: the server has no such connection */
	SLIM_SEC_CLOSED,      /* the server closed the connection */
};

struct slim_sec_client;

struct slim_sec_client *slim_sec_client_create(slim_sec_send_fn send, void *send_data);
void slim_sec_client_destroy(struct slim_sec_client *c);

/*
 * A new connection with `config` (copied), forgetting the one before: the
 * first handshake flight goes at once. Clear: established at once. False
 * (and slim_sec_client_error) if it cannot be begun.
 */
bool slim_sec_client_start(struct slim_sec_client *c, const struct slim_sec_client_config *config,
		uint64_t now_us);
/* Forgets the connection; nothing goes out until the next start. */
void slim_sec_client_stop(struct slim_sec_client *c);
/*
 * The console is going: over DTLS an established connection's close_notify
 * tells the server at once (slim_sec_conn_goodbye). Nothing in clear.
 */
void slim_sec_client_goodbye(struct slim_sec_client *c);
bool slim_sec_client_established(const struct slim_sec_client *c);

/* One datagram as one record; false (nothing sent) unless established. */
bool slim_sec_client_send(struct slim_sec_client *c, const uint8_t *buf, size_t len);
/*
 * One datagram from the socket. SLIM_SEC_DATA: *out and *out_len hold the
 * authenticated datagram until the next call.
 */
enum slim_sec_event slim_sec_client_receive(struct slim_sec_client *c, const uint8_t *in,
		size_t len, const uint8_t **out, size_t *out_len);
/* Handshake retransmissions and its deadline; SLIM_SEC_FAILED when it ran out. */
enum slim_sec_event slim_sec_client_tick(struct slim_sec_client *c, uint64_t now_us);
/* Milliseconds until slim_sec_client_tick has work; -1 for none. */
int slim_sec_client_timeout_ms(const struct slim_sec_client *c, uint64_t now_us);
/* Why the last handshake failed, for people; "" if it did not. */
const char *slim_sec_client_error(const struct slim_sec_client *c);

/* ---- the server: many peers on one socket (slim-sec-server.c and its parts) ---- */

struct slim_sec_server_config {
	enum slim_sec_mode mode;
	/* Certificates: our key; every client must present one of its own. */
	const struct slim_sec_identity *identity;
	/*
	 * Otherwise pre-shared keys: the key for a client's PSK identity, or
	 * false (the handshake fails). Called during the handshake.
	 */
	bool (*psk_lookup)(void *data, const char *identity, uint8_t key[SLIM_SEC_KEY_LEN]);
	/* Bounds; 0 takes the default in brackets. */
	unsigned max_conns;       /* established connections (admitted ones) [64] */
	/*
	 * Established connections not admitted (slim_sec_conn_admit), which
	 * make room among themselves only; 0: every connection is admitted
	 * once established.
	 */
	unsigned max_unadmitted;
	unsigned max_half_open;   /* handshakes under way [16] */
	unsigned max_per_source;  /* ... from one IP address [4] */
	unsigned hello_rate;      /* cookies sent a second, in all [20000] */
	uint32_t idle_ms;         /* a connection heard nothing from for this long ends [30000] */
	uint32_t handshake_ms;    /* a handshake not done by then ends [10000] */
};

/* Counters, for logs, slimlandctl and the attack tests. */
struct slim_sec_stats {
	uint64_t datagrams;        /* received */
	uint64_t dropped;          /* not a record of ours: short, cleartext, unknown */
	uint64_t rate_limited;     /* ClientHellos without a valid cookie over the rate */
	uint64_t cookies_sent;     /* HelloVerifyRequests */
	uint64_t hints_sent;       /* "forgotten" hints */
	uint64_t unverified_bytes; /* sent to addresses without a valid cookie */
	/* handshakes turned away (per source, or one under way from the address) or evicted */
	uint64_t half_open_full;
	uint64_t amplification;    /* handshake bytes not sent: over 3x what came */
	uint64_t handshakes;       /* completed */
	uint64_t handshakes_failed;
	uint64_t records_rejected; /* failed to authenticate, replays */
	uint32_t half_open, conns; /* now */
};

struct slim_sec_conn;

struct slim_sec_server_handler {
	/* A client proved itself (admit it here if it is known); its datagrams follow. */
	void (*established)(void *data, struct slim_sec_conn *conn);
	void (*datagram)(void *data, struct slim_sec_conn *conn, const uint8_t *buf, size_t len);
	/*
	 * The connection ends (the client closed it, it went idle, another
	 * connection from its address replaced it): forget it. Not called for
	 * slim_sec_conn_close.
	 */
	void (*closed)(void *data, struct slim_sec_conn *conn, const char *why);
};

struct slim_sec_server;

/* NULL with a one-line reason in `err`. */
struct slim_sec_server *slim_sec_server_create(const struct slim_sec_server_config *config,
		const struct slim_sec_server_handler *handler, void *data,
		slim_sec_send_to_fn send_to, void *send_data, char *err, size_t err_len);
/* Ends every connection (closed() is not called). NULL is a no-op. */
void slim_sec_server_destroy(struct slim_sec_server *srv);

/* One datagram as the socket gave it. Callbacks run from inside. */
void slim_sec_server_receive(struct slim_sec_server *srv, const uint8_t *buf, size_t len,
		const struct sockaddr *from, socklen_t from_len, uint64_t now_us);
void slim_sec_server_tick(struct slim_sec_server *srv, uint64_t now_us);
int slim_sec_server_timeout_ms(const struct slim_sec_server *srv, uint64_t now_us);
const struct slim_sec_stats *slim_sec_server_stats(const struct slim_sec_server *srv);
enum slim_sec_mode slim_sec_server_mode(const struct slim_sec_server *srv);

/* One datagram as one record to the client; false if it could not go. */
bool slim_sec_conn_send(struct slim_sec_conn *conn, const uint8_t *buf, size_t len);
/*
 * The user vouches for the connection's client (an enrolled console): from
 * now on only another admitted connection can make it end for room.
 */
void slim_sec_conn_admit(struct slim_sec_conn *conn);
/* Ends the connection, telling the client (an authenticated close_notify). */
void slim_sec_conn_close(struct slim_sec_conn *conn);
const struct sockaddr *slim_sec_conn_address(const struct slim_sec_conn *conn, socklen_t *len);
/* Certificates: the client's key; NULL otherwise. */
const uint8_t *slim_sec_conn_peer_key(const struct slim_sec_conn *conn);
/* Pre-shared key: the identity the client used; "" otherwise. */
const char *slim_sec_conn_psk_identity(const struct slim_sec_conn *conn);
/* In closed(): whether the client ended it with its authenticated close_notify. */
bool slim_sec_conn_goodbye(const struct slim_sec_conn *conn);
void slim_sec_conn_set_user(struct slim_sec_conn *conn, void *user);
void *slim_sec_conn_user(const struct slim_sec_conn *conn);

#endif
