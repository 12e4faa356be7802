/*
 * The console's end of a secure association: one DTLS client connection
 * at a time, fed the datagrams of a connected socket. GnuTLS reads from
 * and writes to this object (pull/push), never from a socket, so the
 * caller keeps its socket and its poll loop.
 */
#define _GNU_SOURCE /* explicit_bzero */
#include <errno.h>
#include <gnutls/dtls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "slim-codec.h"
#include "slim-log.h"
#include "slim-sec-internal.h"

/*
 * A handshake not done by then has failed. DTLS drops what does not
 * authenticate without a word, so a wrong key looks like silence: a LAN
 * answers in milliseconds, and four flights go in this time (0.25, 0.5,
 * 1, 2 s apart).
 */
#define HANDSHAKE_US 5000000ull
#define NO_ANSWER "no answer to the handshake in 5 s (the server is down or cannot be " \
	"reached from here, or does not take this console's key)"

enum client_state {
	CLIENT_IDLE,
	CLIENT_HANDSHAKE,
	CLIENT_ESTABLISHED,
	CLIENT_FAILED,
};

struct slim_sec_client {
	slim_sec_send_fn send;
	void *send_data;
	struct slim_sec_client_config cfg;
	enum client_state state;
	gnutls_session_t tls;
	gnutls_certificate_credentials_t cert;
	gnutls_psk_client_credentials_t psk;
	struct slim_sec_inbox inbox;
	uint64_t deadline_us;
	char error[256];
	uint8_t out[SLIM_SEC_MAX_RECORD + 64];
};

static ssize_t push(gnutls_transport_ptr_t ptr, const void *buf, size_t len)
{
	struct slim_sec_client *c = ptr;
	c->send(c->send_data, buf, len);
	return (ssize_t)len; /* UDP: what the kernel drops is lost on the wire */
}

struct slim_sec_client *slim_sec_client_create(slim_sec_send_fn send, void *send_data)
{
	struct slim_sec_client *c = calloc(1, sizeof(*c));
	if (c) {
		c->send = send;
		c->send_data = send_data;
	}
	return c;
}

void slim_sec_client_stop(struct slim_sec_client *c)
{
	if (c->tls) {
		gnutls_deinit(c->tls);
		c->tls = NULL;
	}
	if (c->cert) {
		gnutls_certificate_free_credentials(c->cert);
		c->cert = NULL;
	}
	if (c->psk) {
		gnutls_psk_free_client_credentials(c->psk);
		c->psk = NULL;
	}
	explicit_bzero(c->cfg.psk, sizeof(c->cfg.psk));
	c->state = CLIENT_IDLE;
	c->inbox.data = NULL;
}

void slim_sec_client_goodbye(struct slim_sec_client *c)
{
	if (c->state == CLIENT_ESTABLISHED && c->tls) {
		/* one alert record, sent now: no answer is waited for */
		gnutls_bye(c->tls, GNUTLS_SHUT_WR);
	}
}

void slim_sec_client_destroy(struct slim_sec_client *c)
{
	if (!c) {
		return;
	}
	slim_sec_client_stop(c);
	free(c);
}

bool slim_sec_client_established(const struct slim_sec_client *c)
{
	return c->state == CLIENT_ESTABLISHED;
}

const char *slim_sec_client_error(const struct slim_sec_client *c)
{
	return c->error;
}

static enum slim_sec_event fail(struct slim_sec_client *c, const char *why)
{
	if (why && c->error[0] == '\0') {
		snprintf(c->error, sizeof(c->error), "%s", why);
	}
	if (c->tls) {
		gnutls_deinit(c->tls);
		c->tls = NULL;
	}
	c->state = CLIENT_FAILED;
	return SLIM_SEC_FAILED;
}

/* The server's raw key, judged by whoever configured us (pinning). */
static int verify_server(gnutls_session_t session)
{
	struct slim_sec_client *c = gnutls_session_get_ptr(session);
	uint8_t fp[SLIM_SEC_FINGERPRINT_LEN];
	if (!slim_sec_peer_fingerprint(session, fp)) {
		snprintf(c->error, sizeof(c->error), "the server presented no key");
		return GNUTLS_E_CERTIFICATE_ERROR;
	}
	const char *why = c->cfg.check_server(c->cfg.check_data, fp);
	if (why) {
		snprintf(c->error, sizeof(c->error), "%s", why);
		return GNUTLS_E_CERTIFICATE_ERROR;
	}
	return 0;
}

/* What a failed handshake means to the person at the console. */
static const char *handshake_error(struct slim_sec_client *c, int r)
{
	if (r == GNUTLS_E_FATAL_ALERT_RECEIVED) {
		switch (gnutls_alert_get(c->tls)) {
		case GNUTLS_A_UNKNOWN_PSK_IDENTITY:
			return c->cfg.identity ? "the server refused this console's key" :
				"the session does not know this key (a stale pairing key or attach token)";
		case GNUTLS_A_DECRYPT_ERROR:
		case GNUTLS_A_BAD_RECORD_MAC:
			return "the keys do not match (a wrong pairing key?)";
		default:
			return gnutls_alert_get_name(gnutls_alert_get(c->tls));
		}
	}
	switch (r) {
	case GNUTLS_E_DECRYPTION_FAILED:
	case GNUTLS_E_MAC_VERIFY_FAILED:
		return "the keys do not match (a wrong pairing key?)";
	case GNUTLS_E_TIMEDOUT:
		return NO_ANSWER;
	case GNUTLS_E_CERTIFICATE_ERROR:
		return "the server's key was refused";
	default:
		return gnutls_strerror(r);
	}
}

/* Runs the handshake as far as what arrived allows. */
static enum slim_sec_event step(struct slim_sec_client *c)
{
	int r = gnutls_handshake(c->tls);
	if (r == 0) {
		c->state = CLIENT_ESTABLISHED;
		c->error[0] = '\0';
		slim_log(SLIM_LOG_DEBUG, "secure: handshake done: %s",
			gnutls_cipher_get_name(gnutls_cipher_get(c->tls)));
		return SLIM_SEC_ESTABLISHED;
	}
	if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED || !gnutls_error_is_fatal(r)) {
		return SLIM_SEC_NOTHING;
	}
	return fail(c, handshake_error(c, r));
}

static bool setup(struct slim_sec_client *c)
{
	unsigned flags = GNUTLS_CLIENT | GNUTLS_DATAGRAM | GNUTLS_NONBLOCK | GNUTLS_NO_TICKETS;
	bool certs = c->cfg.identity != NULL;
	if (certs) {
		flags |= GNUTLS_ENABLE_RAWPK;
		if (!slim_sec_identity_credentials(c->cfg.identity, &c->cert)) {
			return false;
		}
	} else {
		gnutls_datum_t user = {
			.data = (unsigned char *)c->cfg.psk_identity,
			.size = (unsigned)strlen(c->cfg.psk_identity),
		};
		gnutls_datum_t key = { .data = c->cfg.psk, .size = sizeof(c->cfg.psk) };
		if (gnutls_psk_allocate_client_credentials(&c->psk) != 0 ||
				gnutls_psk_set_client_credentials2(c->psk, &user, &key,
					GNUTLS_PSK_KEY_RAW) != 0) {
			return false;
		}
	}
	const char *priority = certs ? SLIM_SEC_PRIORITY_CERT :
		strcmp(c->cfg.psk_identity, SLIM_SEC_PAIRING_IDENTITY) == 0 ?
		SLIM_SEC_PRIORITY_PAIRING : SLIM_SEC_PRIORITY_ATTACH;
	if (gnutls_init(&c->tls, flags) != 0 ||
			gnutls_priority_set_direct(c->tls, priority, NULL) != 0 ||
			gnutls_credentials_set(c->tls, certs ? GNUTLS_CRD_CERTIFICATE : GNUTLS_CRD_PSK,
				certs ? (void *)c->cert : (void *)c->psk) != 0) {
		return false;
	}
	if (certs) {
		gnutls_session_set_verify_function(c->tls, verify_server);
	}
	gnutls_session_set_ptr(c->tls, c);
	slim_sec_inbox_attach(&c->inbox, c->tls, push, c);
	gnutls_dtls_set_mtu(c->tls, c->cfg.mtu ? c->cfg.mtu : SLIM_DEFAULT_MTU);
	gnutls_dtls_set_timeouts(c->tls, SLIM_SEC_RETRANSMIT_MS, HANDSHAKE_US / 1000);
	return true;
}

bool slim_sec_client_start(struct slim_sec_client *c, const struct slim_sec_client_config *config,
		uint64_t now_us)
{
	slim_sec_client_stop(c);
	c->cfg = *config;
	c->error[0] = '\0';
	if (c->cfg.mode == SLIM_SEC_CLEAR) {
		c->state = CLIENT_ESTABLISHED;
		return true;
	}
	if ((c->cfg.identity != NULL) != (c->cfg.check_server != NULL)) {
		snprintf(c->error, sizeof(c->error), "a key without a judge of the server's");
		fail(c, NULL);
		return false;
	}
	if (!setup(c)) {
		snprintf(c->error, sizeof(c->error), "cannot set up DTLS (out of memory?)");
		slim_sec_client_stop(c);
		c->state = CLIENT_FAILED;
		return false;
	}
	c->state = CLIENT_HANDSHAKE;
	c->deadline_us = now_us + HANDSHAKE_US;
	/* the ClientHello goes now */
	return step(c) != SLIM_SEC_FAILED;
}

bool slim_sec_client_send(struct slim_sec_client *c, const uint8_t *buf, size_t len)
{
	if (c->state != CLIENT_ESTABLISHED) {
		return false;
	}
	if (c->cfg.mode == SLIM_SEC_CLEAR) {
		c->send(c->send_data, buf, len);
		return true;
	}
	return gnutls_record_send(c->tls, buf, len) == (ssize_t)len;
}

static bool is_clear_slim(const uint8_t *in, size_t len)
{
	uint32_t magic;
	if (len < sizeof(magic)) {
		return false;
	}
	memcpy(&magic, in, sizeof(magic));
	return magic == SLIM_MAGIC;
}

enum slim_sec_event slim_sec_client_receive(struct slim_sec_client *c, const uint8_t *in,
		size_t len, const uint8_t **out, size_t *out_len)
{
	if (c->state == CLIENT_IDLE || c->state == CLIENT_FAILED) {
		return SLIM_SEC_NOTHING;
	}
	if (c->cfg.mode == SLIM_SEC_CLEAR) {
		if (!is_clear_slim(in, len)) {
			return SLIM_SEC_NOTHING;
		}
		*out = in;
		*out_len = len;
		return SLIM_SEC_DATA;
	}
	if (is_clear_slim(in, len)) {
		/* unauthenticated: only ever a hint, and only worth one once we are connected */
		return c->state == CLIENT_ESTABLISHED && slim_sec_is_hint(in, len) ?
			SLIM_SEC_FORGOTTEN : SLIM_SEC_NOTHING;
	}
	/*
	 * Epoch 0 is the unprotected handshake: once established nothing of it
	 * is needed, and only a forger would send it.
	 */
	if (len < SLIM_DTLS_HEADER ||
			(c->state == CLIENT_ESTABLISHED && slim_dtls_epoch(in) == 0)) {
		return SLIM_SEC_NOTHING;
	}
	c->inbox.data = in;
	c->inbox.len = len;
	enum slim_sec_event ev = SLIM_SEC_NOTHING;
	if (c->state == CLIENT_HANDSHAKE) {
		ev = step(c);
	} else {
		ssize_t n = gnutls_record_recv(c->tls, c->out, sizeof(c->out));
		if (n > 0) {
			*out = c->out;
			*out_len = (size_t)n;
			ev = SLIM_SEC_DATA;
		} else if (n == 0 || (n != GNUTLS_E_AGAIN && gnutls_error_is_fatal((int)n))) {
			/* close_notify, or a fatal alert: authenticated either way */
			snprintf(c->error, sizeof(c->error), "%s", n == 0 ?
				"the other end ended the connection" : gnutls_strerror((int)n));
			fail(c, NULL);
			ev = SLIM_SEC_CLOSED;
		}
	}
	c->inbox.data = NULL;
	return ev;
}

enum slim_sec_event slim_sec_client_tick(struct slim_sec_client *c, uint64_t now_us)
{
	if (c->state != CLIENT_HANDSHAKE) {
		return SLIM_SEC_NOTHING;
	}
	if (now_us >= c->deadline_us) {
		return fail(c, NO_ANSWER);
	}
	if (gnutls_dtls_get_timeout(c->tls) == 0) {
		/* nothing to read: GnuTLS sends its last flight again */
		return step(c);
	}
	return SLIM_SEC_NOTHING;
}

int slim_sec_client_timeout_ms(const struct slim_sec_client *c, uint64_t now_us)
{
	if (c->state != CLIENT_HANDSHAKE) {
		return -1;
	}
	uint64_t left_ms = now_us >= c->deadline_us ? 0 : (c->deadline_us - now_us + 999) / 1000;
	unsigned retransmit = gnutls_dtls_get_timeout(c->tls);
	return (int)(retransmit < left_ms ? retransmit : left_ms);
}
