/*
 * Who may attach and the console attached: a HELLO admitted or refused,
 * the association it starts, and the console let go. Standalone, the
 * first console to pair is this session's, and another is refused until
 * it has been silent a while; managed, only a console with a token the
 * manager said to expect attaches, once, replacing whichever is attached.
 */
#define _GNU_SOURCE /* explicit_bzero */
#include <stdio.h>
#include <string.h>
#include "link-internal.h"
#include "slim-hex.h"

#define LINK_MTU SLIM_DEFAULT_MTU
/* How long a detached session keeps the last console's encoder for the next one. */
#define LINK_SPARE_MS 5000

void slim_link_detach(struct slim_link *link, const char *why)
{
	struct link_console *c = &link->console;
	if (!c->attached) {
		return;
	}
	slim_log(SLIM_LOG_INFO, "link: console %s detached: %s", c->console_id, why);
	link_input_release(link);
	c->attached = false;
	explicit_bzero(c->key, sizeof(c->key));
	if (c->conn) {
		/* its close_notify tells the console, which starts again if it wants */
		slim_sec_conn_close(c->conn);
		c->conn = NULL;
	}
	slim_encoder_destroy(link->spare);
	link->spare = link->enc;
	link->enc = NULL;
	wl_event_source_timer_update(link->spare_timer, LINK_SPARE_MS);
	link_sound_stop(link);
	link_pace_stop(link);
	link->handler->detached(link->data, c->console_id);
}

/* The slot of a token the manager told us to expect for this console, or -1. */
static int find_expected(const struct slim_link *link, const struct slim_cmd *cmd)
{
	if (!cmd->has_token) {
		return -1;
	}
	for (int i = 0; i < LINK_MAX_EXPECTED; i++) {
		const struct slim_expected *e = &link->keys.expected[i];
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
	if (slim_sec_server_mode(link->wire.sec) == SLIM_SEC_CLEAR) {
		return true;
	}
	char hex[2 * SLIM_ATTACH_TOKEN_LEN + 1];
	slim_hex_encode(hex, cmd->token, sizeof(cmd->token));
	return strcmp(hex, slim_sec_conn_psk_identity(conn)) == 0;
}

/*
 * Managed: whether the manager said to expect this HELLO, or it renews
 * the attached console's association (`same`: it is that console).
 */
static bool manager_expects(const struct slim_link *link, const struct slim_sec_conn *conn,
		const struct slim_cmd *cmd, bool same, int expected)
{
	bool renewal = same && cmd->has_token &&
		memcmp(cmd->token, link->console.token, sizeof(cmd->token)) == 0;
	return (expected >= 0 || renewal) && token_matches_connection(link, conn, cmd);
}

/*
 * Whether the HELLO may attach; if not, the console is told why before
 * anything changes: the console attached, if any, goes on.
 */
static bool admit(struct slim_link *link, struct slim_sec_conn *conn, uint32_t assoc,
		const struct slim_cmd *cmd, const char *id, bool same, int expected, uint64_t now)
{
	const struct slim_wire_hello *hello = &cmd->hello;
	if (link->keys.managed && !manager_expects(link, conn, cmd, same, expected)) {
		/* Only the session manager decides who sees this session. */
		link_log_limited(link, id, cmd->has_token ?
			"refused: a token not expected (or used)" : "refused: HELLO without a token");
		link_refuse(link, conn, assoc, SLIM_REFUSE_BUSY, "this session is not yours to show");
		return false;
	}
	if (!slim_screen_fits(hello->width, hello->height)) {
		link_log_limited(link, id, "refused: " SLIM_REFUSE_TOO_LARGE_TEXT);
		link_refuse(link, conn, assoc, SLIM_REFUSE_TOO_LARGE, SLIM_REFUSE_TOO_LARGE_TEXT);
		return false;
	}
	bool silent = now - link->console.last_heard_us > LINK_SILENCE_US;
	if (!link->keys.managed && link->console.attached && !same && !silent) {
		char text[128];
		snprintf(text, sizeof(text), "this session already has a console (%s)",
			link->console.console_id);
		link_refuse(link, conn, assoc, SLIM_REFUSE_BUSY, text);
		link_log_limited(link, id, "refused: another console is attached");
		return false;
	}
	return true;
}

/* An encoder for what the console's HELLO says it decodes, in the last one's memory if it fits. */
static struct slim_encoder *create_encoder(struct slim_link *link,
		const struct slim_wire_hello *hello, uint32_t assoc, uint16_t mtu)
{
	struct slim_encoder_config cfg = {
		.mtu = mtu,
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
	wl_event_source_timer_update(link->spare_timer, 0);
	return enc;
}

int link_handle_spare_timeout(void *data)
{
	struct slim_link *link = data;
	if (link->spare) {
		slim_encoder_destroy(link->spare);
		link->spare = NULL;
		slim_log(SLIM_LOG_INFO, "link: no console for %d s: the last one's model of its "
			"screen freed", LINK_SPARE_MS / 1000);
		if (link->handler->released) {
			link->handler->released(link->data);
		}
	}
	return 0;
}

/* Managed: the token is used up; its key stays, for the association's renewals. */
static void take_token(struct slim_link *link, int expected, const struct slim_cmd *cmd)
{
	struct slim_expected *e = &link->keys.expected[expected];
	e->valid = false; /* once */
	memcpy(link->console.token, cmd->token, sizeof(link->console.token));
	memcpy(link->console.key, e->key, sizeof(link->console.key));
	explicit_bzero(e->key, sizeof(e->key));
}

static void take_connection(struct slim_link *link, struct slim_sec_conn *conn, uint32_t assoc)
{
	struct link_console *c = &link->console;
	if (c->conn && c->conn != conn) {
		/* the console's old connection: its new one carries on */
		slim_sec_conn_close(c->conn);
	}
	c->conn = conn;
	c->assoc = assoc;
}

/*
 * What the console says it decodes of H.264, checked: limits past what
 * the wire allows are cut to them, a codec that can show nothing is none.
 */
static void take_codecs(struct slim_link *link, const struct slim_cmd *cmd, const char *id)
{
	struct link_console *c = &link->console;
	c->has_h264 = false;
	for (uint8_t i = 0; i < cmd->n_codecs; i++) {
		struct slim_wire_codec k;
		memcpy(&k, cmd->codecs + (size_t)i * sizeof(k), sizeof(k));
		if (k.codec != SLIM_CODEC_H264) {
			continue;
		}
		if (k.max_width < 16 || k.max_height < 16 || k.max_fps == 0) {
			link_log_limited(link, id, "announces H.264 it cannot show: CSCS only");
			continue;
		}
		k.max_width = k.max_width < SLIM_MAX_DIM ? k.max_width : SLIM_MAX_DIM;
		k.max_height = k.max_height < SLIM_MAX_DIM ? k.max_height : SLIM_MAX_DIM;
		k.max_fps = k.max_fps < SLIM_VIDEO_MAX_FPS ? k.max_fps : SLIM_VIDEO_MAX_FPS;
		c->h264 = k;
		c->has_h264 = true;
	}
}

const struct slim_wire_codec *slim_link_h264(const struct slim_link *link)
{
	return link->console.attached && link->console.has_h264 ? &link->console.h264 : NULL;
}

/* Nothing of the console's last association goes on into this one. */
static void start_association(struct slim_link *link, const struct slim_cmd *cmd,
		const char *id, uint16_t mtu, uint64_t now)
{
	link_pace_restart(link, now); /* its link is learnt again */
	link->console.video_mbit = cmd->video_mbit;
	link->console.mtu = mtu;
	link->console.ack_delay = cmd->hello.caps & SLIM_CAP_ACK_DELAY;
	take_codecs(link, cmd, id);
	link_sound_restart(link, cmd->hello.caps, id); /* a stream of its own */
	link_input_restart(link); /* numbered from 1, nothing held */
}

void link_attach(struct slim_link *link, struct slim_sec_conn *conn, uint32_t assoc,
		const struct slim_cmd *cmd)
{
	struct link_console *c = &link->console;
	const struct slim_wire_hello *hello = &cmd->hello;
	char id[SLIM_CONSOLE_ID_LEN + 1] = { 0 };
	memcpy(id, hello->console_id, SLIM_CONSOLE_ID_LEN);
	uint64_t now = slim_now_us();
	bool same = c->attached && strcmp(id, c->console_id) == 0;
	int expected = link->keys.managed ? find_expected(link, cmd) : -1;
	if (!admit(link, conn, assoc, cmd, id, same, expected, now)) {
		return;
	}
	if (c->attached && !same) {
		/* managed: the manager is showing the old console something else */
		slim_link_detach(link, "replaced by a new console");
	}
	uint16_t mtu = hello->mtu < LINK_MTU ? hello->mtu : LINK_MTU;
	struct slim_encoder *enc = create_encoder(link, hello, assoc, mtu);
	if (!enc) {
		link_log_limited(link, id, "cannot create an encoder for this console");
		return;
	}
	slim_encoder_destroy(link->enc);
	link->enc = enc;
	if (expected >= 0) {
		take_token(link, expected, cmd);
	}
	take_connection(link, conn, assoc);
	start_association(link, cmd, id, mtu, now);
	c->attached = true;
	c->last_heard_us = now;
	c->timeouts = 0;
	memcpy(c->console_id, id, sizeof(id));
	struct slim_desk desk;
	slim_desk_from_wire(&desk, hello->width, hello->height, cmd->heads, cmd->n_heads,
		cmd->keyboard);
	slim_log(SLIM_LOG_INFO, "link: console %s attached, %ux%u in %u head%s, association %08x",
		id, hello->width, hello->height, desk.n_heads, desk.n_heads == 1 ? "" : "s", assoc);
	link->handler->attached(link->data, c->console_id, &desk);
}

void link_handle_conn_closed(void *data, struct slim_sec_conn *conn, const char *why)
{
	struct slim_link *link = data;
	if (conn != link->console.conn) {
		return;
	}
	if (slim_sec_conn_goodbye(conn)) {
		/* the console quit: the session is free for the next one at once */
		link->console.conn = NULL; /* closed already */
		slim_link_detach(link, "the console said goodbye");
		return;
	}
	/*
	 * Kept attached: a console renewing its association (a new handshake
	 * from its address replaced this connection) says HELLO on the new one
	 * in a moment; a console that went away falls silent, and the ACK
	 * timeouts detach it.
	 */
	slim_log(SLIM_LOG_INFO, "link: console %s: connection closed: %s",
		link->console.console_id, why);
	link->console.conn = NULL;
}

bool link_psk_lookup(void *data, const char *identity, uint8_t key[SLIM_SEC_KEY_LEN])
{
	struct slim_link *link = data;
	if (!link->keys.managed) {
		if (strcmp(identity, SLIM_SEC_PAIRING_IDENTITY) != 0) {
			return false;
		}
		memcpy(key, link->keys.pairing_key, SLIM_SEC_KEY_LEN);
		return true;
	}
	uint8_t token[SLIM_ATTACH_TOKEN_LEN];
	if (!slim_hex_decode(token, sizeof(token), identity)) {
		return false;
	}
	/* the attached console renewing its association (a new screen size) */
	if (link->console.attached && memcmp(token, link->console.token, sizeof(token)) == 0) {
		memcpy(key, link->console.key, SLIM_SEC_KEY_LEN);
		return true;
	}
	for (int i = 0; i < LINK_MAX_EXPECTED; i++) {
		const struct slim_expected *e = &link->keys.expected[i];
		if (e->valid && memcmp(e->token, token, sizeof(token)) == 0) {
			memcpy(key, e->key, SLIM_SEC_KEY_LEN);
			return true;
		}
	}
	return false;
}

void slim_link_expect(struct slim_link *link, const uint8_t token[SLIM_ATTACH_TOKEN_LEN],
		const char console_id[SLIM_CONSOLE_ID_LEN], const uint8_t key[SLIM_SEC_KEY_LEN])
{
	struct link_keys *k = &link->keys;
	/* a free slot, else the oldest token: a manager that forgot one moved on */
	size_t slot = k->next_expected;
	for (size_t i = 0; i < LINK_MAX_EXPECTED; i++) {
		if (!k->expected[i].valid) {
			slot = i;
			break;
		}
	}
	if (slot == k->next_expected) {
		k->next_expected = (k->next_expected + 1) % LINK_MAX_EXPECTED;
	}
	struct slim_expected *e = &k->expected[slot];
	e->valid = true;
	memcpy(e->token, token, sizeof(e->token));
	memcpy(e->console_id, console_id, sizeof(e->console_id));
	memcpy(e->key, key, sizeof(e->key));
}

const char *slim_link_console_id(const struct slim_link *link)
{
	return link->console.attached ? link->console.console_id : NULL;
}
