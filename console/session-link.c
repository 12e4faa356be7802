#define _GNU_SOURCE /* NI_MAXHOST, NI_MAXSERV, explicit_bzero */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "assoc.h"
#include "session-link.h"
#include "slim-hex.h"
#include "slim-clock.h"
#include "slim-log.h"

struct slim_console_link {
	struct slim_assoc *assoc; /* the socket, handshake, HELLO, PING and card life cycle */
	char *server;
	enum slim_sec_mode mode;
	uint16_t mtu;
	char *pairing_key;
	struct slim_console_core *core;
	char id[SLIM_CONSOLE_ID_LEN + 1];
	const struct slim_console_link_listener *listener;
	void *listener_data;

	/* the endpoint, token and key of the last REDIRECT acted on */
	struct sockaddr_storage peer;
	socklen_t peer_len;
	bool has_token;
	uint8_t token[SLIM_ATTACH_TOKEN_LEN];
	uint8_t key[SLIM_SEC_KEY_LEN];

	uint64_t heard_us; /* the last authenticated datagram of the association */
	char peer_name[320]; /* the peer, for people */

	/* A refusal the core reported while it handled a datagram, acted on after. */
	bool refusal;
	uint16_t refusal_reason;
	char refusal_text[SLIM_REFUSE_TEXT_MAX + 1];
};

static void assoc_connecting(void *data, const char *why)
{
	struct slim_console_link *link = data;
	if (link->listener && link->listener->connecting) {
		link->listener->connecting(link->listener_data, why);
	}
}

static void assoc_send_hello(void *data, uint32_t id)
{
	struct slim_console_link *link = data;
	slim_console_core_hello(link->core, link->id, id);
}

static void assoc_send_ping(void *data)
{
	struct slim_console_link *link = data;
	slim_console_core_ping(link->core);
}

static void assoc_attached(void *data, uint32_t id)
{
	struct slim_console_link *link = data;
	if (link->listener && link->listener->attached) {
		link->listener->attached(link->listener_data, id);
	}
}

static bool assoc_send_card(void *data, const struct slim_wire_card *card)
{
	struct slim_console_link *link = data;
	return slim_console_core_send_card(link->core, card);
}

/* The attach's key from the REDIRECT, or the standalone session's pairing key. */
static bool assoc_security(void *data, struct slim_sec_client_config *config, char *why,
		size_t why_len)
{
	struct slim_console_link *link = data;
	config->mode = link->mode;
	config->mtu = link->mtu;
	if (link->mode == SLIM_SEC_CLEAR) {
		return true;
	}
	if (link->has_token) {
		slim_hex_encode(config->psk_identity, link->token, sizeof(link->token));
		memcpy(config->psk, link->key, sizeof(config->psk));
		return true;
	}
	snprintf(config->psk_identity, sizeof(config->psk_identity), "%s",
		SLIM_SEC_PAIRING_IDENTITY);
	if (!link->pairing_key) {
		snprintf(why, why_len, "no pairing key (--pairing-key FILE)");
		return false;
	}
	/* read anew for every connection: the session may have made a new one */
	return slim_sec_key_file_load(link->pairing_key, false, config->psk, why, why_len);
}

static void handle_datagram(struct slim_console_link *link, const uint8_t *buf, size_t len,
		uint64_t arrived_us);

static void assoc_datagram(void *data, const uint8_t *buf, size_t len, uint64_t arrived_us)
{
	struct slim_console_link *link = data;
	link->heard_us = arrived_us;
	handle_datagram(link, buf, len, arrived_us);
}

static const char *assoc_peer(void *data)
{
	struct slim_console_link *link = data;
	snprintf(link->peer_name, sizeof(link->peer_name), "the session at %s",
		link->server ? link->server : "?");
	return link->peer_name;
}

static const struct slim_assoc_impl assoc_impl = {
	.connecting = assoc_connecting,
	.security = assoc_security,
	.datagram = assoc_datagram,
	.send_hello = assoc_send_hello,
	.send_ping = assoc_send_ping,
	.attached = assoc_attached,
	.send_card = assoc_send_card,
	.peer = assoc_peer,
};

struct slim_console_link *slim_console_link_create(const char *server,
		const struct slim_console_link_config *config,
		char *err, size_t err_len)
{
	struct slim_console_link *link = calloc(1, sizeof(*link));
	if (!link) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	link->mode = config->mode;
	link->mtu = config->mtu;
	if (config->pairing_key && !(link->pairing_key = strdup(config->pairing_key))) {
		snprintf(err, err_len, "out of memory");
		slim_console_link_destroy(link);
		return NULL;
	}
	/* no server: no endpoint (IDLE) until a REDIRECT names one */
	int fd = -1;
	if (server) {
		fd = slim_udp_connect("--server", server, NULL, err, err_len);
		if (fd < 0) {
			slim_console_link_destroy(link);
			return NULL;
		}
		link->server = strdup(server);
	}
	link->assoc = slim_assoc_create("link", fd, &assoc_impl, link);
	if (!link->assoc || (server && !link->server)) {
		snprintf(err, err_len, "out of memory");
		slim_console_link_destroy(link);
		return NULL;
	}
	return link;
}

void slim_console_link_destroy(struct slim_console_link *link)
{
	if (!link) {
		return;
	}
	if (link->core) {
		slim_console_core_set_events(link->core, NULL, NULL);
	}
	slim_assoc_destroy(link->assoc);
	explicit_bzero(link->key, sizeof(link->key));
	free(link->pairing_key);
	free(link->server);
	free(link);
}

int slim_console_link_fd(const struct slim_console_link *link)
{
	return slim_assoc_fd(link->assoc);
}

enum slim_console_link_state slim_console_link_state(const struct slim_console_link *link)
{
	switch (slim_assoc_state(link->assoc)) {
	case SLIM_ASSOC_CONNECTING:
		return SLIM_LINK_CONNECTING;
	case SLIM_ASSOC_ATTACHED:
		return SLIM_LINK_ATTACHED;
	case SLIM_ASSOC_BUSY:
		return SLIM_LINK_BUSY;
	case SLIM_ASSOC_IDLE:
		break;
	}
	return SLIM_LINK_IDLE;
}

const char *slim_console_link_server(const struct slim_console_link *link)
{
	return link->server;
}

uint64_t slim_console_link_heard_us(const struct slim_console_link *link)
{
	return link->heard_us;
}

void slim_console_link_send(void *data, const uint8_t *buf, size_t len)
{
	struct slim_console_link *link = data;
	slim_assoc_send(link->assoc, buf, len);
}

void slim_console_link_send_card(struct slim_console_link *link, const struct slim_wire_card *card)
{
	slim_assoc_send_card(link->assoc, card);
}

void slim_console_link_request_repaint(struct slim_console_link *link)
{
	if (link->core && slim_assoc_state(link->assoc) == SLIM_ASSOC_ATTACHED) {
		slim_log(SLIM_LOG_DEBUG, "link: HELLO again for a repaint, association %08x",
			slim_assoc_id(link->assoc));
		slim_console_core_request_repaint(link->core, link->id);
	}
}

void slim_console_link_reassociate(struct slim_console_link *link, const char *why)
{
	/* before a REDIRECT (--manager) there is no server to tell yet */
	if (link->core && slim_assoc_fd(link->assoc) >= 0) {
		slim_assoc_connect(link->assoc, why, slim_now_us());
	}
}

static void on_refused(void *data, uint16_t reason, const char *text, size_t len)
{
	struct slim_console_link *link = data;
	link->refusal = true;
	link->refusal_reason = reason;
	/* the server's words, kept to one line nobody's terminal obeys */
	size_t n = len < SLIM_REFUSE_TEXT_MAX ? len : SLIM_REFUSE_TEXT_MAX;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)text[i];
		link->refusal_text[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	link->refusal_text[n] = '\0';
}

static void on_presented(void *data, uint32_t frame, uint64_t applied_us)
{
	struct slim_console_link *link = data;
	if (link->listener && link->listener->presented) {
		link->listener->presented(link->listener_data, frame, applied_us);
	}
}

static void on_audio(void *data, const struct slim_cmd *cmd, bool again, uint64_t time_us)
{
	struct slim_console_link *link = data;
	if (link->listener && link->listener->audio) {
		link->listener->audio(link->listener_data, cmd, again, time_us);
	}
}

static const struct slim_console_events core_events = {
	.refused = on_refused,
	.presented = on_presented,
	.audio = on_audio,
};

void slim_console_link_start(struct slim_console_link *link, struct slim_console_core *core,
		const char *id, const struct slim_console_link_listener *listener, void *data)
{
	link->core = core;
	snprintf(link->id, sizeof(link->id), "%s", id);
	link->listener = listener;
	link->listener_data = data;
	slim_console_core_set_events(core, &core_events, link);
	if (slim_assoc_fd(link->assoc) >= 0) {
		slim_assoc_connect(link->assoc, NULL, slim_now_us());
	}
}

/* "HOST:PORT", or "[ADDR]:PORT" for IPv6, of a numeric address. */
static char *endpoint_name(const struct sockaddr *addr, socklen_t len)
{
	char host[NI_MAXHOST], port[NI_MAXSERV], name[NI_MAXHOST + NI_MAXSERV + 4];
	if (getnameinfo(addr, len, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		return NULL;
	}
	snprintf(name, sizeof(name), addr->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s",
		host, port);
	return strdup(name);
}

bool slim_console_link_redirect(struct slim_console_link *link, const struct sockaddr *addr,
		socklen_t len,
		const uint8_t token[SLIM_ATTACH_TOKEN_LEN], const uint8_t key[SLIM_SEC_KEY_LEN])
{
	bool same_peer = slim_assoc_fd(link->assoc) >= 0 && len == link->peer_len &&
		memcmp(addr, &link->peer, len) == 0;
	if (same_peer && link->has_token && memcmp(token, link->token, sizeof(link->token)) == 0) {
		return false; /* the manager repeats itself until the compositor hears us */
	}
	if (!same_peer) {
		char *name = endpoint_name(addr, len);
		int fd = name && len <= sizeof(link->peer) ? slim_udp_connect_addr(addr, len, NULL) : -1;
		if (fd < 0) {
			slim_log(SLIM_LOG_ERROR, "link: cannot open a socket to %s: %s",
				name ? name : "the redirect's endpoint", strerror(errno));
			free(name);
			return false;
		}
		slim_assoc_set_fd(link->assoc, fd);
		free(link->server);
		link->server = name;
		memcpy(&link->peer, addr, len);
		link->peer_len = len;
	}
	link->has_token = true;
	memcpy(link->token, token, sizeof(link->token));
	memcpy(link->key, key, sizeof(link->key));
	slim_console_core_set_token(link->core, token);
	/* a new association: the compositor checks the token on this HELLO */
	slim_assoc_connect(link->assoc, NULL, slim_now_us());
	return true;
}

static void handle_refusal(struct slim_console_link *link, uint64_t now_us)
{
	if (link->listener && link->listener->refused) {
		link->listener->refused(link->listener_data, link->refusal_reason,
			link->refusal_text);
	}
	switch (link->refusal_reason) {
	case SLIM_REFUSE_BUSY:
	case SLIM_REFUSE_TOO_LARGE:
		/* until the seat is free, or (too large) asking now and then is all it can do */
		slim_assoc_busy(link->assoc, now_us);
		break;
	case SLIM_REFUSE_UNKNOWN:
		slim_assoc_restart(link->assoc, "the server forgot this console", now_us);
		break;
	default:
		/* a reason this version does not know: nothing to act on */
		break;
	}
}

/*
 * Whether a datagram of our association says the server serves us: all
 * but a refusal (the core's test for one: a REFUSE alone in its datagram).
 */
static bool serves_us(const struct slim_console_link *link, const uint8_t *buf, size_t len)
{
	const struct slim_fb *fb = slim_console_core_fb(link->core);
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	if (slim_reader_init(&r, &hdr, buf, len, false, (uint16_t)fb->width,
			(uint16_t)fb->height) != SLIM_OK || hdr.assoc != slim_assoc_id(link->assoc)) {
		return false;
	}
	return hdr.count != 1 || slim_reader_next(&r, &cmd) != SLIM_OK ||
		cmd.type != SLIM_CMD_REFUSE;
}

/* Hands one datagram to the core and follows what it says about the association. */
static void handle_datagram(struct slim_console_link *link, const uint8_t *buf, size_t len,
		uint64_t arrived_us)
{
	/*
	 * Attached before the core applies it, so that "attached" comes before
	 * the frame it brings. Whatever it holds, the HELLO got through.
	 */
	if (slim_assoc_state(link->assoc) != SLIM_ASSOC_ATTACHED && serves_us(link, buf, len)) {
		slim_assoc_heard(link->assoc, arrived_us);
	}
	link->refusal = false;
	slim_console_core_receive_at(link->core, buf, len, arrived_us);
	if (link->refusal) {
		link->refusal = false;
		handle_refusal(link, arrived_us);
	}
}

void slim_console_link_dispatch(struct slim_console_link *link)
{
	slim_assoc_dispatch(link->assoc);
}

/* Input goes to a server that serves us; otherwise only the keys held follow it. */
bool slim_console_link_send_input(struct slim_console_link *link,
		const struct slim_wire_input *ev, size_t n)
{
	if (!link->core) {
		return false;
	}
	if (slim_assoc_state(link->assoc) != SLIM_ASSOC_ATTACHED) {
		slim_console_core_track_input(link->core, ev, n);
		return false;
	}
	return slim_console_core_send_input(link->core, ev, n);
}

void slim_console_link_tick(struct slim_console_link *link, uint64_t now_us)
{
	slim_assoc_tick(link->assoc, now_us);
	/* input retransmissions and the held keys' keepalive, for a server that listens */
	if (link->core && slim_assoc_state(link->assoc) == SLIM_ASSOC_ATTACHED) {
		slim_console_core_tick(link->core, now_us);
	}
}

int slim_console_link_timeout_ms(const struct slim_console_link *link, uint64_t now_us)
{
	int ms = slim_assoc_timeout_ms(link->assoc, now_us);
	if (link->core && slim_assoc_state(link->assoc) == SLIM_ASSOC_ATTACHED) {
		int input = slim_console_core_timeout_ms(link->core, now_us);
		ms = ms < 0 || (input >= 0 && input < ms) ? input : ms;
	}
	return ms;
}
