/*
 * The link made and ended, its socket and the secure layer on it, and
 * what comes in: a HELLO goes to link-attach.c, the attached console's
 * datagrams are handled here (its input in link-input.c, its sound in
 * link-sound.c), and frames whose ACK does not come are repaired.
 */
#define _GNU_SOURCE /* explicit_bzero */
#include <errno.h>
#include <gnutls/crypto.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "link-internal.h"
#include "slim-hex.h"
#include "slim-net.h"

/* Unanswered frame timeouts after which an attached console is taken for gone. */
#define LINK_MAX_TIMEOUTS 8

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
	if (sendto(link->wire.fd, buf, len, MSG_DONTWAIT, to, to_len) == (ssize_t)len) {
		link->wire.bytes_sent += len;
	}
}

void link_refuse(struct slim_link *link, struct slim_sec_conn *conn, uint32_t assoc,
		uint16_t reason, const char *text)
{
	uint8_t buf[256];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), assoc, false);
	slim_put_refuse(&w, reason, text);
	size_t len = slim_writer_finish(&w, 0, slim_now_us());
	slim_sec_conn_send(conn, buf, len);
}

void link_log_limited(struct slim_link *link, const char *what, const char *why)
{
	if (slim_ratelimit(&link->log_limit, slim_now_us())) {
		slim_log(SLIM_LOG_ERROR, "link: %s: %s", what, why);
	}
}

/*
 * A standalone session acts on no card; the log says a card came, and
 * which one as a short hash: a token unlocks sessions, so it never
 * reaches a log.
 */
static void log_card(struct slim_link *link, const struct slim_cmd *cmd)
{
	uint8_t digest[32];
	char short_hash[9] = "-";
	size_t len = cmd->card.len < SLIM_CARD_TOKEN_MAX ? cmd->card.len : SLIM_CARD_TOKEN_MAX;
	if (len > 0 && gnutls_hash_fast(GNUTLS_DIG_SHA256, cmd->card.token, len, digest) == 0) {
		slim_hex_encode(short_hash, digest, 4);
	}
	if (slim_ratelimit(&link->log_limit, slim_now_us())) {
		slim_log(SLIM_LOG_INFO, "link: card %s on console %s: kind %u, token hash %s",
			cmd->card.event == SLIM_CARD_INSERTED ? "inserted" : "removed",
			link->console.console_id, cmd->card.kind, short_hash);
	}
}

static void handle_other(void *data, const struct slim_cmd *cmd)
{
	struct slim_link *link = data;
	if (cmd->type == SLIM_CMD_ACK) {
		link_pace_acked(link, cmd);
	} else if (cmd->type == SLIM_CMD_NACK) {
		for (size_t i = 0; i < cmd->nack.count; i++) {
			struct slim_wire_seq_range r;
			slim_nack_get(cmd, i, &r);
			slim_pacer_lost(link->pace.pacer, r.first, r.last, slim_now_us());
		}
	} else if (cmd->type == SLIM_CMD_INPUT) {
		/* each event once, in order, at once: the keystroke path waits for nothing */
		link_input_command(link, cmd);
		link_pace_input(link);
	} else if (cmd->type == SLIM_CMD_HELD) {
		link_input_command(link, cmd);
	} else if (cmd->type == SLIM_CMD_VIDEO_RECOVER) {
		link->handler->video_recover(link->data, cmd->video_recover.stream);
	} else if (cmd->type == SLIM_CMD_MIC || cmd->type == SLIM_CMD_AUDIO_REPORT) {
		link_sound_command(link, cmd);
	} else if (cmd->type == SLIM_CMD_CARD) {
		log_card(link, cmd);
	}
	/* PING: hearing from the console is all it is for. HELLO: see below. */
}

/* A datagram from the attached console, in its association. */
static void from_console(struct slim_link *link, const uint8_t *buf, size_t len)
{
	link->console.last_heard_us = slim_now_us();
	link->console.timeouts = 0;
	link->sound.mic_seen = false;
	uint32_t in_flight = slim_encoder_frames_in_flight(link->enc);
	link_input_transition(link, LINK_DATAGRAM_IN);
	enum slim_error err = slim_encoder_receive(link->enc, buf, len, handle_other, link);
	link_input_transition(link, LINK_DATAGRAM_DONE);
	if (err != SLIM_OK) {
		return;
	}
	/* input's answer does not wait for what it drops (slim_link_ready) */
	bool held = link->input.seen && slim_pacer_stats(link->pace.pacer)->backlog_datagrams > 0;
	if (slim_encoder_needs_frame(link->enc) || held ||
			(in_flight >= LINK_MAX_IN_FLIGHT &&
			slim_encoder_frames_in_flight(link->enc) < LINK_MAX_IN_FLIGHT)) {
		link->handler->want_frame(link->data);
	}
	if (slim_encoder_frames_in_flight(link->enc) == 0) {
		wl_event_source_timer_update(link->pace.ack_timer, 0);
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
		link_log_limited(link, "bad datagram", slim_error_str(err));
		return;
	}
	bool ours = link->console.attached && conn == link->console.conn &&
		hdr.assoc == link->console.assoc;
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
		link_attach(link, conn, hdr.assoc, &cmd);
		return;
	}
	if (ours) {
		link->wire.console_us = hdr.time_us;
		from_console(link, buf, len);
		return;
	}
	/* An association we do not know, most likely of a console of ours before a restart. */
	link_refuse(link, conn, hdr.assoc, SLIM_REFUSE_UNKNOWN, "unknown association: say HELLO");
}

static void arm_sec_timer(struct slim_link *link)
{
	int ms = slim_sec_server_timeout_ms(link->wire.sec, slim_now_us());
	/* 0 disarms a wl timer: what is due now runs a millisecond later */
	wl_event_source_timer_update(link->wire.timer, ms < 0 ? 0 : ms == 0 ? 1 : ms);
}

static int handle_readable(int fd, uint32_t mask, void *data)
{
	struct slim_link *link = data;
	struct link_wire *wire = &link->wire;
	for (int n = 0; n < 256; n++) {
		struct sockaddr_storage from;
		socklen_t from_len = sizeof(from);
		ssize_t len = slim_net_recv(fd, wire->buf, sizeof(wire->buf), MSG_DONTWAIT,
			(struct sockaddr *)&from, &from_len, &wire->arrived_us);
		if (len < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				link_log_limited(link, "recvmsg", strerror(errno));
			}
			break;
		}
		slim_sec_server_receive(wire->sec, wire->buf, (size_t)len, (struct sockaddr *)&from,
			from_len, slim_now_us());
	}
	arm_sec_timer(link);
	return 0;
}

static int handle_sec_timer(void *data)
{
	struct slim_link *link = data;
	slim_sec_server_tick(link->wire.sec, slim_now_us());
	arm_sec_timer(link);
	return 0;
}

static void handle_sec_datagram(void *data, struct slim_sec_conn *conn, const uint8_t *buf,
		size_t len)
{
	handle_datagram(data, conn, buf, len);
}

static const struct slim_sec_server_handler sec_handler = {
	.datagram = handle_sec_datagram,
	.closed = link_handle_conn_closed,
};

/* No ACK in time: whatever is unconfirmed is lost, and the next frame repairs it. */
static int handle_ack_timeout(void *data)
{
	struct slim_link *link = data;
	if (!link->console.attached || slim_encoder_frames_in_flight(link->enc) == 0) {
		return 0;
	}
	if (++link->console.timeouts >= LINK_MAX_TIMEOUTS &&
			slim_now_us() - link->console.last_heard_us > LINK_SILENCE_US / 4) {
		slim_link_detach(link, "no answer");
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

/* The socket, its secure layer, and the link's timers. */
static bool open_wire(struct slim_link *link, struct wl_event_loop *loop,
		const struct slim_link_config *config)
{
	struct slim_sec_server_config sec_config = {
		.mode = config->mode,
		.psk_lookup = link_psk_lookup,
		.max_conns = LINK_MAX_CONNS,
		.max_half_open = LINK_MAX_HALF_OPEN,
		.idle_ms = LINK_CONN_IDLE_MS,
	};
	char err[256];
	link->wire.sec = slim_sec_server_create(&sec_config, &sec_handler, link, send_to_wire, link,
		err, sizeof(err));
	if (!link->wire.sec) {
		slim_log(SLIM_LOG_ERROR, "link: %s", err);
		return false;
	}
	link->wire.fd = open_socket(config->listen, config->mode);
	if (link->wire.fd < 0) {
		return false;
	}
	link->wire.readable = wl_event_loop_add_fd(loop, link->wire.fd, WL_EVENT_READABLE,
		handle_readable, link);
	link->wire.timer = wl_event_loop_add_timer(loop, handle_sec_timer, link);
	link->pace.ack_timer = wl_event_loop_add_timer(loop, handle_ack_timeout, link);
	link->pace.timer = wl_event_loop_add_timer(loop, link_handle_pace_timer, link);
	link->pace.report_timer = wl_event_loop_add_timer(loop, link_handle_report_timer, link);
	link->input.ack_timer = wl_event_loop_add_timer(loop, link_handle_input_ack_timeout, link);
	link->input.held_timer = wl_event_loop_add_timer(loop, link_handle_held_timeout, link);
	link->spare_timer = wl_event_loop_add_timer(loop, link_handle_spare_timeout, link);
	return link->wire.readable && link->wire.timer && link->pace.ack_timer &&
		link->pace.timer && link->pace.report_timer && link->input.ack_timer &&
		link->input.held_timer && link->spare_timer;
}

struct slim_link *slim_link_create(struct wl_event_loop *loop, const struct slim_link_config *config,
		const struct slim_link_handler *handler, void *data)
{
	struct slim_link *link = calloc(1, sizeof(*link));
	if (!link) {
		return NULL;
	}
	link->wire.fd = -1;
	link->handler = handler;
	link->data = data;
	link->keys.managed = config->managed;
	memcpy(link->keys.pairing_key, config->pairing_key, sizeof(link->keys.pairing_key));
	link->sound.codec = config->audio_codec ? config->audio_codec : SLIM_AUDIO_OPUS;
	link->sound.bitrate = config->audio_bitrate ? config->audio_bitrate : 64000;
	link->log_limit = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	link->pace.pacer = slim_pacer_create(link_send_paced, link);
	if (!link->pace.pacer || !open_wire(link, loop, config)) {
		slim_link_destroy(link);
		return NULL;
	}
	slim_log(SLIM_LOG_INFO, "link: listening on %s (port %u, %s)%s", config->listen,
		slim_link_port(link), config->mode == SLIM_SEC_CLEAR ? "in clear" : "DTLS",
		config->managed ? ", managed" : "");
	return link;
}

static void remove_source(struct wl_event_source *source)
{
	if (source) {
		wl_event_source_remove(source);
	}
}

void slim_link_destroy(struct slim_link *link)
{
	if (!link) {
		return;
	}
	remove_source(link->wire.readable);
	remove_source(link->wire.timer);
	remove_source(link->pace.ack_timer);
	remove_source(link->pace.timer);
	remove_source(link->pace.report_timer);
	remove_source(link->input.ack_timer);
	remove_source(link->input.held_timer);
	remove_source(link->spare_timer);
	slim_encoder_destroy(link->enc);
	slim_encoder_destroy(link->spare);
	slim_pacer_destroy(link->pace.pacer);
	link_sound_stop(link);
	slim_sec_server_destroy(link->wire.sec);
	if (link->wire.fd >= 0) {
		close(link->wire.fd);
	}
	explicit_bzero(link->keys.pairing_key, sizeof(link->keys.pairing_key));
	explicit_bzero(link->console.key, sizeof(link->console.key));
	explicit_bzero(link->keys.expected, sizeof(link->keys.expected));
	free(link);
}

struct slim_encoder *slim_link_encoder(struct slim_link *link)
{
	return link->console.attached ? link->enc : NULL;
}

void slim_link_cursor_image(struct slim_link *link, const uint32_t *argb, uint32_t w,
		uint32_t h, uint32_t hot_x, uint32_t hot_y)
{
	if (link->console.attached &&
			slim_encoder_cursor_image(link->enc, argb, w, h, hot_x, hot_y)) {
		slim_encoder_flush_cursor(link->enc);
	}
}

void slim_link_resized(struct slim_link *link, uint32_t width, uint32_t height)
{
	if (link->console.attached) {
		slim_encoder_resize(link->enc, width, height);
		link->handler->want_frame(link->data);
	}
}

uint64_t slim_link_bytes_sent(const struct slim_link *link)
{
	return link->wire.bytes_sent;
}

uint16_t slim_link_port(const struct slim_link *link)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);
	if (getsockname(link->wire.fd, (struct sockaddr *)&addr, &len) != 0) {
		return 0;
	}
	if (addr.ss_family == AF_INET6) {
		return ntohs(((struct sockaddr_in6 *)&addr)->sin6_port);
	}
	return ntohs(((struct sockaddr_in *)&addr)->sin_port);
}
