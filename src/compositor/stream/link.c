#define _GNU_SOURCE /* explicit_bzero */
#include <errno.h>
#include <gnutls/crypto.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "link-internal.h"
#include "slim-hex.h"
#include "slim-net.h"

/* The pacer's view of the link goes to the session manager at most this often. */
#define LINK_REPORT_US 2000000ull
/* A console we have not heard from for this long may be replaced by another. */
#define LINK_SILENCE_US (10 * 1000000ull)
/* Unanswered frame timeouts after which an attached console is taken for gone. */
#define LINK_MAX_TIMEOUTS 8
#define LINK_MTU SLIM_DEFAULT_MTU
/*
 * An INPUT_ACK waits this long for a frame or cursor datagram to take it
 * along (a keystroke's frame usually goes sooner), then goes alone. Well
 * under the console's shortest retransmission timeout (30 ms).
 */
#define LINK_INPUT_ACK_MS 5
/*
 * ... or this long when a frame is on its way with the pointer (a window
 * dragged: the console's next refresh), still well under.
 */
#define LINK_INPUT_ACK_FRAME_MS 15
/* A console that holds keys and is silent this long is taken to have let go. */
#define LINK_HELD_SILENCE_MS 1000

/* A compositor serves one console and briefly its successor: few connections. */
#define LINK_MAX_CONNS 8
#define LINK_MAX_HALF_OPEN 8
/* A connection that never said a good HELLO is dropped after this long. */
#define LINK_CONN_IDLE_MS 30000

/* The secure layer's way out: every byte this session sends goes here. */
static void send_to_wire(void *data, const uint8_t *buf, size_t len, const struct sockaddr *to,
		socklen_t to_len)
{
	struct slim_link *link = data;
	if (sendto(link->fd, buf, len, MSG_DONTWAIT, to, to_len) == (ssize_t)len) {
		link->bytes_sent += len;
	}
}

/* Outside any sequence: on the connection that asked, in its association. */
static void refuse(struct slim_link *link, struct slim_sec_conn *conn, uint32_t assoc,
		uint16_t reason, const char *text)
{
	uint8_t buf[256];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), assoc, false);
	slim_put_refuse(&w, reason, text);
	size_t len = slim_writer_finish(&w, 0, slim_now_us());
	slim_sec_conn_send(conn, buf, len);
}

static void log_limited(struct slim_link *link, const char *what, const char *why)
{
	if (slim_ratelimit(&link->log_limit, slim_now_us())) {
		slim_log(SLIM_LOG_ERROR, "link: %s: %s", what, why);
	}
}

static void apply_input(void *data, const struct slim_wire_input *ev)
{
	struct slim_link *link = data;
	link->handler->input(link->data, ev);
}

/* Whatever the console held is let go: it will never send the releases. */
static void release_held(struct slim_link *link)
{
	slim_input_seq_release_all(&link->input, apply_input, link);
}

static void detach(struct slim_link *link, const char *why)
{
	if (!link->attached) {
		return;
	}
	slim_log(SLIM_LOG_INFO, "link: console %s detached: %s", link->console_id, why);
	release_held(link);
	link->attached = false;
	link->has_token = false;
	explicit_bzero(link->key, sizeof(link->key));
	if (link->conn) {
		/* its close_notify tells the console, which starts again if it wants */
		slim_sec_conn_close(link->conn);
		link->conn = NULL;
	}
	slim_encoder_destroy(link->spare);
	link->spare = link->enc;
	link->enc = NULL;
	slim_audio_encoder_destroy(link->audio_enc);
	link->audio_enc = NULL;
	slim_pacer_reset(link->pacer);
	wl_event_source_timer_update(link->ack_timer, 0);
	wl_event_source_timer_update(link->pace_timer, 0);
	link->handler->detached(link->data, link->console_id);
}

/* The slot of a token the manager told us to expect for this console, or -1. */
static int find_expected(const struct slim_link *link, const struct slim_cmd *cmd)
{
	if (!cmd->has_token) {
		return -1;
	}
	for (int i = 0; i < LINK_MAX_EXPECTED; i++) {
		const struct slim_expected *e = &link->expected[i];
		if (e->valid && memcmp(e->token, cmd->token, sizeof(e->token)) == 0 &&
				memcmp(e->console_id, cmd->hello.console_id, sizeof(e->console_id)) == 0) {
			return i;
		}
	}
	return -1;
}

/*
 * Whether the HELLO's token is the one the connection proved itself with:
 * in DTLS, the token is the pre-shared key's identity, so a token seen on
 * the wire is worth nothing without the key.
 */
static bool token_matches_connection(const struct slim_link *link,
		const struct slim_sec_conn *conn, const struct slim_cmd *cmd)
{
	if (slim_sec_server_mode(link->sec) == SLIM_SEC_CLEAR) {
		return true;
	}
	char hex[2 * SLIM_ATTACH_TOKEN_LEN + 1];
	slim_hex_encode(hex, cmd->token, sizeof(cmd->token));
	return strcmp(hex, slim_sec_conn_psk_identity(conn)) == 0;
}

static void attach(struct slim_link *link, struct slim_sec_conn *conn, uint32_t assoc,
		const struct slim_cmd *cmd)
{
	const struct slim_wire_hello *hello = &cmd->hello;
	char id[SLIM_CONSOLE_ID_LEN + 1] = { 0 };
	memcpy(id, hello->console_id, SLIM_CONSOLE_ID_LEN);
	uint64_t now = slim_now_us();
	bool same = link->attached && strcmp(id, link->console_id) == 0;
	bool silent = now - link->last_heard_us > LINK_SILENCE_US;
	int expected = link->managed ? find_expected(link, cmd) : -1;
	bool renewal = same && cmd->has_token && link->has_token &&
		memcmp(cmd->token, link->token, sizeof(link->token)) == 0;
	if (link->managed && ((expected < 0 && !renewal) ||
			!token_matches_connection(link, conn, cmd))) {
		/* Only the session manager decides who sees this session. */
		log_limited(link, id, cmd->has_token ? "refused: a token not expected (or used)" :
			"refused: HELLO without a token");
		refuse(link, conn, assoc, SLIM_REFUSE_BUSY, "this session is not yours to show");
		return;
	}
	if (!slim_screen_fits(hello->width, hello->height)) {
		/* before anything changes: the console attached (if any) goes on */
		log_limited(link, id, "refused: " SLIM_REFUSE_TOO_LARGE_TEXT);
		refuse(link, conn, assoc, SLIM_REFUSE_TOO_LARGE, SLIM_REFUSE_TOO_LARGE_TEXT);
		return;
	}
	if (!link->managed && link->attached && !same && !silent) {
		char text[128];
		snprintf(text, sizeof(text), "this session already has a console (%s)",
			link->console_id);
		refuse(link, conn, assoc, SLIM_REFUSE_BUSY, text);
		log_limited(link, id, "refused: another console is attached");
		return;
	}
	if (link->attached && !same) {
		/* managed: the manager is showing the old console something else */
		detach(link, "replaced by a new console");
	}
	struct slim_encoder_config cfg = {
		.mtu = hello->mtu < LINK_MTU ? hello->mtu : LINK_MTU,
		.assoc = assoc,
		.lz4 = hello->caps & SLIM_CAP_LZ4,
		.rgb888 = hello->caps & SLIM_CAP_RGB888,
		.cscs = hello->caps & SLIM_CAP_CSCS,
		.palette = hello->caps & SLIM_CAP_PALETTE,
		.zstd = hello->caps & SLIM_CAP_ZSTD,
		.cache = hello->caps & SLIM_CAP_CACHE,
		.history = hello->caps & SLIM_CAP_HISTORY,
		.detect_scroll = true,
	};
	struct slim_encoder *enc = slim_encoder_create_from(link->spare, hello->width,
		hello->height, &cfg, link_send_to_peer, link);
	link->spare = NULL;
	if (!enc) {
		log_limited(link, id, "cannot create an encoder for this console");
		return;
	}
	slim_encoder_destroy(link->enc);
	link->enc = enc;
	if (expected >= 0) {
		struct slim_expected *e = &link->expected[expected];
		e->valid = false; /* once */
		link->has_token = true;
		memcpy(link->token, cmd->token, sizeof(link->token));
		memcpy(link->key, e->key, sizeof(link->key));
		explicit_bzero(e->key, sizeof(e->key));
	}
	if (link->conn && link->conn != conn) {
		/* the console's old connection: its new one carries on */
		slim_sec_conn_close(link->conn);
	}
	link->conn = conn;
	link->assoc = assoc;
	/* a new association: its link is learnt again, and nothing of the old one waits */
	slim_pacer_reset(link->pacer);
	wl_event_source_timer_update(link->pace_timer, 0);
	link->reported_us = 0;
	link->answer_pending = false;
	link->exact_bps = link->exact_bytes = 0;
	link->exact_since_us = now;
	link->video_mbit = cmd->video_mbit;
	link->mtu = cfg.mtu;
	link->ack_delay = hello->caps & SLIM_CAP_ACK_DELAY;
	/* a stream of its own for each association: the console's buffer starts over */
	slim_audio_encoder_destroy(link->audio_enc);
	link->audio_enc = NULL;
	memset(&link->audio_report, 0, sizeof(link->audio_report));
	slim_audio_sender_reset(&link->audio_sender);
	if (hello->caps & SLIM_CAP_AUDIO) {
		link->audio_enc = slim_audio_encoder_create(link->audio_codec, 2,
			link->audio_bitrate, 10);
		if (!link->audio_enc) {
			log_limited(link, id, "cannot create an audio encoder: no sound");
		}
	}
	/* a new association numbers its input from 1, and holds nothing yet */
	release_held(link);
	slim_input_seq_reset(&link->input, 1);
	link->attached = true;
	link->last_heard_us = now;
	link->timeouts = 0;
	memcpy(link->console_id, id, sizeof(id));
	slim_log(SLIM_LOG_INFO, "link: console %s attached, %ux%u, association %08x",
		id, hello->width, hello->height, assoc);
	link->handler->attached(link->data, link->console_id, hello->width, hello->height);
}

static void handle_other(void *data, const struct slim_cmd *cmd)
{
	struct slim_link *link = data;
	if (cmd->type == SLIM_CMD_ACK) {
		/*
		 * The encoder has taken it; the pacer learns the link from it,
		 * timed from its arrival: a compositor busy rendering reads late.
		 */
		uint64_t at = link->arrived_us, now = slim_now_us();
		uint64_t rtt = cmd->ack.echo_us && cmd->ack.echo_us <= at ? at - cmd->ack.echo_us : 0;
		slim_pacer_acked(link->pacer, cmd->ack.highest_seq, rtt, now);
		/* at an ACK, not a timer: an idle session reports nothing and wakes for nothing */
		if (!link->reported_us || now - link->reported_us >= LINK_REPORT_US) {
			link->reported_us = now;
			link->handler->link_report(link->data);
		}
	} else if (cmd->type == SLIM_CMD_NACK) {
		for (size_t i = 0; i < cmd->nack.count; i++) {
			struct slim_wire_seq_range r;
			slim_nack_get(cmd, i, &r);
			slim_pacer_lost(link->pacer, r.first, r.last, slim_now_us());
		}
	} else if (cmd->type == SLIM_CMD_INPUT) {
		/* each event once, in order, at once: the keystroke path waits for nothing */
		slim_input_seq_input(&link->input, cmd, apply_input, link);
		link->input_seen = true;
		link->answer_pending = true;
		link->input_us = slim_now_us();
	} else if (cmd->type == SLIM_CMD_HELD) {
		slim_input_seq_held(&link->input, cmd, apply_input, link);
		link->input_seen = true;
	} else if (cmd->type == SLIM_CMD_MIC) {
		/* the datagram's first is the packet, any after it copies of earlier ones */
		struct slim_audio_packet p;
		slim_audio_packet_from_cmd(cmd, &p);
		link->handler->microphone(link->data, &p, link->mic_seen);
		link->mic_seen = true;
	} else if (cmd->type == SLIM_CMD_AUDIO_REPORT) {
		link->audio_report = cmd->audio_report;
		link->handler->audio_report(link->data);
	} else if (cmd->type == SLIM_CMD_CARD) {
		/*
		 * A standalone session acts on no card; the log says a card came,
		 * and which one as a short hash: a token unlocks sessions, so it
		 * never reaches a log.
		 */
		uint8_t digest[32];
		char short_hash[9] = "-";
		size_t len = cmd->card.len < SLIM_CARD_TOKEN_MAX ? cmd->card.len : SLIM_CARD_TOKEN_MAX;
		if (len > 0 && gnutls_hash_fast(GNUTLS_DIG_SHA256, cmd->card.token, len, digest) == 0) {
			slim_hex_encode(short_hash, digest, 4);
		}
		if (slim_ratelimit(&link->log_limit, slim_now_us())) {
			slim_log(SLIM_LOG_INFO, "link: card %s on console %s: kind %u, token hash %s",
				cmd->card.event == SLIM_CARD_INSERTED ? "inserted" : "removed",
				link->console_id, cmd->card.kind, short_hash);
		}
	}
	/* PING: hearing from the console is all it is for. HELLO: see below. */
}

/*
 * After a datagram with INPUT or HELD: the console learns where we are,
 * even if nothing was new (our last acknowledgement may have been lost),
 * with the next datagram we send or, failing one, soon after alone.
 */
static void acknowledge_input(struct slim_link *link)
{
	slim_encoder_input_ack(link->enc, slim_input_seq_next(&link->input));
	if (!link->input_ack_armed) {
		link->input_ack_armed = true;
		wl_event_source_timer_update(link->input_ack_timer,
			link->pointer_in_frame ? LINK_INPUT_ACK_FRAME_MS : LINK_INPUT_ACK_MS);
	}
	if (slim_input_seq_held_count(&link->input) > 0 && !link->held_timer_armed) {
		link->held_timer_armed = true;
		wl_event_source_timer_update(link->held_timer, LINK_HELD_SILENCE_MS);
	}
}

static int handle_input_ack_timeout(void *data)
{
	struct slim_link *link = data;
	link->input_ack_armed = false;
	if (link->attached) {
		/* a pointer that waited for a frame in vain goes too, with the INPUT_ACK */
		slim_encoder_flush_cursor(link->enc);
		slim_encoder_flush_input_ack(link->enc);
	}
	return 0;
}

/*
 * Keys held and a silent console: it died or lost its network with a key
 * down, and a client would autorepeat the key for ever. Its keepalives
 * come every 250 ms while it holds anything.
 */
static int handle_held_timeout(void *data)
{
	struct slim_link *link = data;
	link->held_timer_armed = false;
	size_t held = slim_input_seq_held_count(&link->input);
	if (!link->attached || held == 0) {
		return 0;
	}
	uint64_t silent_ms = (slim_now_us() - link->last_heard_us) / 1000;
	if (silent_ms < LINK_HELD_SILENCE_MS) {
		link->held_timer_armed = true;
		wl_event_source_timer_update(link->held_timer,
			(int)(LINK_HELD_SILENCE_MS - silent_ms));
		return 0;
	}
	slim_log(SLIM_LOG_INFO, "link: console %s silent for %llu ms with %zu keys or buttons "
		"down: released", link->console_id, (unsigned long long)silent_ms, held);
	/* the numbers go on: a console that comes back carries on where it was */
	release_held(link);
	return 0;
}

/* A datagram from the attached console, in its association. */
static void from_console(struct slim_link *link, const uint8_t *buf, size_t len)
{
	link->last_heard_us = slim_now_us();
	link->timeouts = 0;
	link->input_seen = false;
	link->mic_seen = false;
	uint32_t in_flight = slim_encoder_frames_in_flight(link->enc);
	link->receiving = true;
	link->pointer_in_frame = false;
	enum slim_error err = slim_encoder_receive(link->enc, buf, len, handle_other, link);
	link->receiving = false;
	if (err != SLIM_OK) {
		return;
	}
	if (link->input_seen) {
		acknowledge_input(link);
	}
	if (link->cursor_moved) {
		link->cursor_moved = false;
		slim_encoder_flush_cursor(link->enc);
	}
	/* input's answer does not wait for what it drops (slim_link_ready) */
	bool held = link->input_seen && slim_pacer_stats(link->pacer)->backlog_datagrams > 0;
	if (slim_encoder_needs_frame(link->enc) || held ||
			(in_flight >= LINK_MAX_IN_FLIGHT &&
			slim_encoder_frames_in_flight(link->enc) < LINK_MAX_IN_FLIGHT)) {
		link->handler->want_frame(link->data);
	}
	if (slim_encoder_frames_in_flight(link->enc) == 0) {
		wl_event_source_timer_update(link->ack_timer, 0);
	}
}

/* An authenticated datagram from one of the connections. */
static void handle_datagram(struct slim_link *link, struct slim_sec_conn *conn,
		const uint8_t *buf, size_t len)
{
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	enum slim_error err = slim_reader_init(&r, &hdr, buf, len, true, 0, 0);
	if (err != SLIM_OK) {
		log_limited(link, "bad datagram", slim_error_str(err));
		return;
	}
	bool ours = link->attached && conn == link->conn && hdr.assoc == link->assoc;
	/* A HELLO (alone in its datagram) starts or renews an association. */
	if (hdr.count == 1 && slim_reader_next(&r, &cmd) == SLIM_OK &&
			cmd.type == SLIM_CMD_HELLO && slim_reader_next(&r, &cmd) == SLIM_OK) {
		if (ours) {
			/* The console lost our picture: repaint, no renegotiation. */
			slim_encoder_repaint(link->enc);
			link->handler->want_frame(link->data);
			return;
		}
		struct slim_reader again;
		slim_reader_init(&again, &hdr, buf, len, true, 0, 0);
		slim_reader_next(&again, &cmd);
		attach(link, conn, hdr.assoc, &cmd);
		return;
	}
	if (ours) {
		from_console(link, buf, len);
		return;
	}
	/* An association we do not know, most likely of a console of ours before a restart. */
	refuse(link, conn, hdr.assoc, SLIM_REFUSE_UNKNOWN, "unknown association: say HELLO");
}

static void arm_sec_timer(struct slim_link *link)
{
	int ms = slim_sec_server_timeout_ms(link->sec, slim_now_us());
	/* 0 disarms a wl timer: what is due now runs a millisecond later */
	wl_event_source_timer_update(link->sec_timer, ms < 0 ? 0 : ms == 0 ? 1 : ms);
}

static int handle_readable(int fd, uint32_t mask, void *data)
{
	struct slim_link *link = data;
	for (int n = 0; n < 256; n++) {
		struct sockaddr_storage from;
		socklen_t from_len = sizeof(from);
		ssize_t len = slim_net_recv(fd, link->buf, sizeof(link->buf), MSG_DONTWAIT,
			(struct sockaddr *)&from, &from_len, &link->arrived_us);
		if (len < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				log_limited(link, "recvmsg", strerror(errno));
			}
			break;
		}
		slim_sec_server_receive(link->sec, link->buf, (size_t)len, (struct sockaddr *)&from,
			from_len, slim_now_us());
	}
	arm_sec_timer(link);
	return 0;
}

static int handle_sec_timer(void *data)
{
	struct slim_link *link = data;
	slim_sec_server_tick(link->sec, slim_now_us());
	arm_sec_timer(link);
	return 0;
}

static void handle_sec_datagram(void *data, struct slim_sec_conn *conn, const uint8_t *buf,
		size_t len)
{
	handle_datagram(data, conn, buf, len);
}

static void handle_sec_closed(void *data, struct slim_sec_conn *conn, const char *why)
{
	struct slim_link *link = data;
	if (conn != link->conn) {
		return;
	}
	if (slim_sec_conn_goodbye(conn)) {
		/* the console quit: the session is free for the next one at once */
		link->conn = NULL; /* closed already */
		detach(link, "the console said goodbye");
		return;
	}
	/*
	 * Kept attached: a console renewing its association (a new handshake
	 * from its address replaced this connection) says HELLO on the new one
	 * in a moment; a console that went away falls silent, and the ACK
	 * timeouts detach it.
	 */
	slim_log(SLIM_LOG_INFO, "link: console %s: connection closed: %s", link->console_id, why);
	link->conn = NULL;
}

static const struct slim_sec_server_handler sec_handler = {
	.datagram = handle_sec_datagram,
	.closed = handle_sec_closed,
};

/* A console's pre-shared key: the pairing key, or an attach's from the manager. */
static bool psk_lookup(void *data, const char *identity, uint8_t key[SLIM_SEC_KEY_LEN])
{
	struct slim_link *link = data;
	if (!link->managed) {
		if (strcmp(identity, SLIM_SEC_PAIRING_IDENTITY) != 0) {
			return false;
		}
		memcpy(key, link->pairing_key, SLIM_SEC_KEY_LEN);
		return true;
	}
	uint8_t token[SLIM_ATTACH_TOKEN_LEN];
	if (!slim_hex_decode(token, sizeof(token), identity)) {
		return false;
	}
	/* the attached console renewing its association (a new screen size) */
	if (link->attached && link->has_token && memcmp(token, link->token, sizeof(token)) == 0) {
		memcpy(key, link->key, SLIM_SEC_KEY_LEN);
		return true;
	}
	for (int i = 0; i < LINK_MAX_EXPECTED; i++) {
		const struct slim_expected *e = &link->expected[i];
		if (e->valid && memcmp(e->token, token, sizeof(token)) == 0) {
			memcpy(key, e->key, SLIM_SEC_KEY_LEN);
			return true;
		}
	}
	return false;
}

/* No ACK in time: whatever is unconfirmed is lost, and the next frame repairs it. */
static int handle_ack_timeout(void *data)
{
	struct slim_link *link = data;
	if (!link->attached || slim_encoder_frames_in_flight(link->enc) == 0) {
		return 0;
	}
	if (++link->timeouts >= LINK_MAX_TIMEOUTS &&
			slim_now_us() - link->last_heard_us > LINK_SILENCE_US / 4) {
		detach(link, "no answer");
		return 0;
	}
	/* what never left is dropped rather than counted lost and sent anyway */
	link_drop_backlog(link);
	slim_encoder_timeout(link->enc);
	link->handler->want_frame(link->data);
	return 0;
}

static int open_socket(const char *listen, enum slim_sec_mode mode)
{
	char host[256];
	const char *colon = strrchr(listen, ':');
	if (!colon || colon == listen || (size_t)(colon - listen) >= sizeof(host)) {
		slim_log(SLIM_LOG_ERROR, "link: --listen wants ADDRESS:PORT, not '%s'", listen);
		return -1;
	}
	char *end;
	unsigned long port = strtoul(colon + 1, &end, 10);
	/* 0: any free port, reported on the control socket (--managed) */
	if (*end || end == colon + 1 || port > 65535) {
		slim_log(SLIM_LOG_ERROR, "link: --listen wants a port from 0 to 65535, not '%s'",
			colon + 1);
		return -1;
	}
	memcpy(host, listen, (size_t)(colon - listen));
	host[colon - listen] = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM, .ai_flags = AI_PASSIVE };
	struct addrinfo *res;
	int gai = getaddrinfo(host, colon + 1, &hints, &res);
	if (gai != 0) {
		slim_log(SLIM_LOG_ERROR, "link: %s: %s", listen, gai_strerror(gai));
		return -1;
	}
	if (mode == SLIM_SEC_CLEAR && !slim_sec_clear_allowed(res->ai_addr)) {
		slim_log(SLIM_LOG_ERROR, "link: --transport clear listens on loopback only, not %s",
			listen);
		freeaddrinfo(res);
		return -1;
	}
	int fd = socket(res->ai_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0) {
		slim_log(SLIM_LOG_ERROR, "link: cannot listen on %s: %s", listen, strerror(errno));
		if (fd >= 0) {
			close(fd);
		}
		freeaddrinfo(res);
		return -1;
	}
	freeaddrinfo(res);
	/* A whole frame may leave at once; let the kernel queue it. */
	int size = 8 << 20;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	slim_net_stamp_arrivals(fd);
	return fd;
}

struct slim_link *slim_link_create(struct wl_event_loop *loop, const struct slim_link_config *config,
		const struct slim_link_handler *handler, void *data)
{
	struct slim_link *link = calloc(1, sizeof(*link));
	if (!link) {
		return NULL;
	}
	link->fd = -1;
	link->handler = handler;
	link->data = data;
	link->managed = config->managed;
	link->audio_codec = config->audio_codec ? config->audio_codec : SLIM_AUDIO_OPUS;
	link->audio_bitrate = config->audio_bitrate ? config->audio_bitrate : 64000;
	memcpy(link->pairing_key, config->pairing_key, sizeof(link->pairing_key));
	link->log_limit = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	link->pacer = slim_pacer_create(link_send_paced, link);
	if (!link->pacer) {
		slim_link_destroy(link);
		return NULL;
	}
	struct slim_sec_server_config sec_config = {
		.mode = config->mode,
		.psk_lookup = psk_lookup,
		.max_conns = LINK_MAX_CONNS,
		.max_half_open = LINK_MAX_HALF_OPEN,
		.idle_ms = LINK_CONN_IDLE_MS,
	};
	char err[256];
	link->sec = slim_sec_server_create(&sec_config, &sec_handler, link, send_to_wire, link,
		err, sizeof(err));
	if (!link->sec) {
		slim_log(SLIM_LOG_ERROR, "link: %s", err);
		slim_link_destroy(link);
		return NULL;
	}
	link->fd = open_socket(config->listen, config->mode);
	if (link->fd < 0) {
		slim_link_destroy(link);
		return NULL;
	}
	link->readable = wl_event_loop_add_fd(loop, link->fd, WL_EVENT_READABLE,
		handle_readable, link);
	link->ack_timer = wl_event_loop_add_timer(loop, handle_ack_timeout, link);
	link->sec_timer = wl_event_loop_add_timer(loop, handle_sec_timer, link);
	link->input_ack_timer = wl_event_loop_add_timer(loop, handle_input_ack_timeout, link);
	link->held_timer = wl_event_loop_add_timer(loop, handle_held_timeout, link);
	link->pace_timer = wl_event_loop_add_timer(loop, link_handle_pace_timer, link);
	if (!link->readable || !link->ack_timer || !link->sec_timer || !link->input_ack_timer ||
			!link->held_timer || !link->pace_timer) {
		slim_link_destroy(link);
		return NULL;
	}
	slim_log(SLIM_LOG_INFO, "link: listening on %s (port %u, %s)%s", config->listen,
		slim_link_port(link), config->mode == SLIM_SEC_CLEAR ? "in clear" : "DTLS",
		config->managed ? ", managed" : "");
	return link;
}

void slim_link_destroy(struct slim_link *link)
{
	if (!link) {
		return;
	}
	if (link->readable) {
		wl_event_source_remove(link->readable);
	}
	if (link->ack_timer) {
		wl_event_source_remove(link->ack_timer);
	}
	if (link->sec_timer) {
		wl_event_source_remove(link->sec_timer);
	}
	if (link->input_ack_timer) {
		wl_event_source_remove(link->input_ack_timer);
	}
	if (link->held_timer) {
		wl_event_source_remove(link->held_timer);
	}
	if (link->pace_timer) {
		wl_event_source_remove(link->pace_timer);
	}
	slim_encoder_destroy(link->enc);
	slim_encoder_destroy(link->spare);
	slim_pacer_destroy(link->pacer);
	slim_audio_encoder_destroy(link->audio_enc);
	slim_sec_server_destroy(link->sec);
	if (link->fd >= 0) {
		close(link->fd);
	}
	explicit_bzero(link->pairing_key, sizeof(link->pairing_key));
	explicit_bzero(link->key, sizeof(link->key));
	explicit_bzero(link->expected, sizeof(link->expected));
	free(link);
}

struct slim_encoder *slim_link_encoder(struct slim_link *link)
{
	return link->attached ? link->enc : NULL;
}

void slim_link_cursor_image(struct slim_link *link, const uint32_t *argb, uint32_t w,
		uint32_t h, uint32_t hot_x, uint32_t hot_y)
{
	if (link->attached && slim_encoder_cursor_image(link->enc, argb, w, h, hot_x, hot_y)) {
		slim_encoder_flush_cursor(link->enc);
	}
}

void slim_link_cursor_pos(struct slim_link *link, int32_t x, int32_t y, bool visible,
		bool with_frame)
{
	if (link->attached) {
		slim_encoder_cursor_pos(link->enc, x, y, visible);
		if (with_frame && link->receiving) {
			/* the INPUT_ACK's timer sends it if no frame came by then */
			link->pointer_in_frame = true;
			link->handler->want_frame(link->data);
		} else if (link->receiving) {
			link->cursor_moved = true; /* from_console sends it */
		} else {
			slim_encoder_flush_cursor(link->enc);
		}
	}
}

void slim_link_resized(struct slim_link *link, uint32_t width, uint32_t height)
{
	if (link->attached) {
		slim_encoder_resize(link->enc, width, height);
		link->handler->want_frame(link->data);
	}
}

void slim_link_send_audio(struct slim_link *link, const int16_t *pcm)
{
	if (!link->attached || !link->audio_enc || !link->conn) {
		return;
	}
	uint8_t out[SLIM_AUDIO_MAX_WIRE_PAYLOAD];
	struct slim_audio_packet p;
	if (slim_audio_encode(link->audio_enc, pcm, out, sizeof(out), &p) < 0) {
		log_limited(link, link->console_id, "audio: a frame did not encode");
		return;
	}
	slim_audio_send(&link->audio_sender, &p, false, link->assoc, link->mtu, slim_now_us(),
		link_send_to_peer, link);
}

const char *slim_link_console_id(const struct slim_link *link)
{
	return link->attached ? link->console_id : NULL;
}

void slim_link_audio_stats(const struct slim_link *link, struct slim_link_audio_stats *stats)
{
	const struct slim_wire_audio_report *r = &link->audio_report;
	*stats = (struct slim_link_audio_stats){
		.codec = link->audio_codec,
		.bitrate = link->audio_codec == SLIM_AUDIO_PCM ?
			SLIM_AUDIO_RATE * 2 * 16 : link->audio_bitrate,
		.depth_ms = r->depth_ms,
		.received = r->received, .repaired = r->repaired, .lost = r->lost,
	};
}

uint64_t slim_link_bytes_sent(const struct slim_link *link)
{
	return link->bytes_sent;
}

uint16_t slim_link_port(const struct slim_link *link)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);
	if (getsockname(link->fd, (struct sockaddr *)&addr, &len) != 0) {
		return 0;
	}
	if (addr.ss_family == AF_INET6) {
		return ntohs(((struct sockaddr_in6 *)&addr)->sin6_port);
	}
	return ntohs(((struct sockaddr_in *)&addr)->sin_port);
}

void slim_link_expect(struct slim_link *link, const uint8_t token[SLIM_ATTACH_TOKEN_LEN],
		const char console_id[SLIM_CONSOLE_ID_LEN], const uint8_t key[SLIM_SEC_KEY_LEN])
{
	/* a free slot, else the oldest token: a manager that forgot one moved on */
	size_t slot = link->next_expected;
	for (size_t i = 0; i < LINK_MAX_EXPECTED; i++) {
		if (!link->expected[i].valid) {
			slot = i;
			break;
		}
	}
	if (slot == link->next_expected) {
		link->next_expected = (link->next_expected + 1) % LINK_MAX_EXPECTED;
	}
	struct slim_expected *e = &link->expected[slot];
	e->valid = true;
	memcpy(e->token, token, sizeof(e->token));
	memcpy(e->console_id, console_id, sizeof(e->console_id));
	memcpy(e->key, key, sizeof(e->key));
}

void slim_link_detach(struct slim_link *link, const char *why)
{
	detach(link, why);
}
