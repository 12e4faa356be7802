/*
 * What the files of the secure transport share among themselves: GnuTLS
 * credentials from an identity, the priorities, the record layout.
 */
#ifndef SLIM_SEC_INTERNAL_H
#define SLIM_SEC_INTERNAL_H

#include <gnutls/gnutls.h>
#include "slim-secure.h"

/*
 * DTLS 1.2 only, AEAD only. Certificates are raw ECDSA P-256 keys (RFC
 * 7250) and nothing else, so no X.509 parsing is reachable from the
 * network; X25519 gives their connections forward secrecy.
 *
 * Pre-shared keys come in two kinds, and the client offers one suite for
 * each (the server takes both):
 *   - a per-attach key lives as long as one attach, reached both ends over
 *     connections that have forward secrecy, and is then forgotten: plain
 *     PSK with AES-128-GCM, which costs a fraction of ChaCha20-Poly1305 a
 *     byte wherever AES is in the CPU (bench-crypto);
 *   - a standalone session's pairing key lives in a file for months:
 *     ECDHE-PSK, so that whoever takes the file later cannot read what was
 *     recorded before, with ChaCha20-Poly1305, the one AEAD GnuTLS pairs
 *     with ECDHE-PSK in DTLS 1.2. The server refuses the pairing identity
 *     without ECDHE.
 */
#define SLIM_SEC_PRIORITY_CERT "NONE:+VERS-DTLS1.2:+ECDHE-ECDSA:+AES-128-GCM:" \
	"+CHACHA20-POLY1305:+AEAD:+GROUP-X25519:+SIGN-ECDSA-SHA256:" \
	"+COMP-NULL:+CTYPE-CLI-RAWPK:+CTYPE-SRV-RAWPK"
#define SLIM_SEC_PRIORITY_ATTACH "NONE:+VERS-DTLS1.2:+PSK:+AES-128-GCM:+AEAD:" \
	"+SIGN-ALL:+COMP-NULL"
#define SLIM_SEC_PRIORITY_PAIRING "NONE:+VERS-DTLS1.2:+ECDHE-PSK:+CHACHA20-POLY1305:" \
	"+AEAD:+GROUP-X25519:+SIGN-ALL:+COMP-NULL"
#define SLIM_SEC_PRIORITY_PSK_SERVER "NONE:+VERS-DTLS1.2:+PSK:+ECDHE-PSK:+AES-128-GCM:" \
	"+CHACHA20-POLY1305:+AEAD:+GROUP-X25519:+SIGN-ALL:+COMP-NULL"

/* DTLS record header (RFC 6347 §4.1). */
#define SLIM_DTLS_HEADER 13
enum slim_dtls_content {
	SLIM_DTLS_CHANGE_CIPHER_SPEC = 20,
	SLIM_DTLS_ALERT = 21,
	SLIM_DTLS_HANDSHAKE = 22,
	SLIM_DTLS_APPLICATION_DATA = 23,
};
#define SLIM_DTLS_CLIENT_HELLO 1

/* Handshake flights: first retransmission, and the whole handshake. */
#define SLIM_SEC_RETRANSMIT_MS 250

static inline uint16_t slim_dtls_epoch(const uint8_t *rec)
{
	return (uint16_t)(rec[3] << 8 | rec[4]);
}

/*
 * A certificate credential holding a copy of the identity's key as a raw
 * public key; the caller frees it with gnutls_certificate_free_credentials.
 */
bool slim_sec_identity_credentials(const struct slim_sec_identity *id,
		gnutls_certificate_credentials_t *out);
/* The SHA-256 fingerprint of the raw public key the peer presented. */
bool slim_sec_peer_fingerprint(gnutls_session_t session, uint8_t fp[SLIM_SEC_FINGERPRINT_LEN]);

/*
 * Whether a cleartext datagram is a server's "forgotten" hint: a slim REFUSE
 * UNKNOWN alone, in association 0 and outside the sequence. Writes one into
 * buf (SLIM_SEC_HINT_LEN bytes).
 */
#define SLIM_SEC_HINT_LEN 32
bool slim_sec_is_hint(const uint8_t *buf, size_t len);
size_t slim_sec_make_hint(uint8_t *buf, size_t size);

/*
 * The datagram being handed to GnuTLS: both ends feed it from memory (the
 * caller owns the socket) one datagram at a time, and its pull function
 * takes that datagram at most once, then says EAGAIN.
 */
struct slim_sec_inbox {
	gnutls_session_t tls;
	const uint8_t *data;
	size_t len;
};
/* GnuTLS reads from the inbox and writes through push(push_ptr). */
void slim_sec_inbox_attach(struct slim_sec_inbox *inbox, gnutls_session_t tls,
		gnutls_push_func push, void *push_ptr);

#endif
