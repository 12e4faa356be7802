/*
 * Writing slim datagrams (slim-codec.h): commands batched into one
 * datagram of at most the writer's mtu, the header written last.
 */
#include <string.h>
#include "slim-codec.h"
#include "slim-desk.h"

void slim_writer_init(struct slim_writer *w, uint8_t *buf, size_t mtu,
		uint32_t assoc, bool upstream)
{
	w->buf = buf;
	w->mtu = mtu;
	w->assoc = assoc;
	w->flags = upstream ? SLIM_DGRAM_UPSTREAM : 0;
	slim_writer_reset(w);
}

void slim_writer_reset(struct slim_writer *w)
{
	w->len = sizeof(struct slim_wire_dgram);
	w->count = 0;
}

size_t slim_writer_room(const struct slim_writer *w)
{
	size_t used = w->len + sizeof(struct slim_wire_cmd);
	return used < w->mtu ? w->mtu - used : 0;
}

uint8_t *slim_writer_add(struct slim_writer *w, uint8_t type, uint8_t flags,
		size_t body_len)
{
	/* The header must fit too: a room of 0 does not tell whether it does. */
	if (body_len > UINT16_MAX ||
			w->len + sizeof(struct slim_wire_cmd) + body_len > w->mtu ||
			w->count == UINT16_MAX) {
		return NULL;
	}
	struct slim_wire_cmd hdr = { .type = type, .flags = flags, .len = (uint16_t)body_len };
	memcpy(w->buf + w->len, &hdr, sizeof(hdr));
	uint8_t *body = w->buf + w->len + sizeof(hdr);
	w->len += sizeof(hdr) + body_len;
	w->count++;
	return body;
}

void slim_writer_shrink_last(struct slim_writer *w, uint8_t *body, size_t used)
{
	struct slim_wire_cmd hdr;
	uint8_t *h = body - sizeof(hdr);
	memcpy(&hdr, h, sizeof(hdr));
	hdr.len = (uint16_t)used;
	memcpy(h, &hdr, sizeof(hdr));
	w->len = (size_t)(body - w->buf) + used;
}

size_t slim_writer_finish(struct slim_writer *w, uint32_t seq, uint64_t time_us)
{
	struct slim_wire_dgram hdr = {
		.magic = SLIM_MAGIC,
		.version = SLIM_VERSION,
		.flags = w->flags,
		.count = w->count,
		.assoc = w->assoc,
		.seq = seq,
		.time_us = time_us,
	};
	memcpy(w->buf, &hdr, sizeof(hdr));
	return w->len;
}

static bool put(struct slim_writer *w, uint8_t type, uint8_t flags,
		const void *body, size_t len)
{
	uint8_t *p = slim_writer_add(w, type, flags, len);
	if (!p) {
		return false;
	}
	memcpy(p, body, len);
	return true;
}

static struct slim_wire_rect wire_rect(struct slim_rect r)
{
	return (struct slim_wire_rect){ r.x, r.y, r.w, r.h };
}

bool slim_put_fill(struct slim_writer *w, struct slim_rect r, uint32_t color)
{
	struct slim_wire_fill f = { .r = wire_rect(r), .color = color };
	return put(w, SLIM_CMD_FILL, 0, &f, sizeof(f));
}

bool slim_put_copy(struct slim_writer *w, struct slim_rect src, uint16_t dx, uint16_t dy)
{
	struct slim_wire_copy c = { .src = wire_rect(src), .dx = dx, .dy = dy };
	return put(w, SLIM_CMD_COPY, 0, &c, sizeof(c));
}

bool slim_put_cursor_pos(struct slim_writer *w, int16_t x, int16_t y, bool visible)
{
	struct slim_wire_cursor_pos c = { .x = x, .y = y, .visible = visible };
	return put(w, SLIM_CMD_CURSOR_POS, 0, &c, sizeof(c));
}

bool slim_put_frame_end(struct slim_writer *w, const struct slim_wire_frame_end *fe)
{
	return put(w, SLIM_CMD_FRAME_END, 0, fe, sizeof(*fe));
}

bool slim_put_hello_ext(struct slim_writer *w, const struct slim_wire_hello *hello,
		const struct slim_hello_parts *parts)
{
	struct slim_wire_hello h = *hello;
	const struct slim_desk *desk = parts->desk;
	bool keyboard = desk && desk->has_keyboard;
	size_t n_codecs = parts->n_codecs < SLIM_MAX_CODECS ? parts->n_codecs : SLIM_MAX_CODECS;
	h.caps &= ~(uint32_t)(SLIM_CAP_VIDEO_BUDGET | SLIM_CAP_HEADS | SLIM_CAP_KEYBOARD |
		SLIM_CAP_UNREACHED | SLIM_CAP_CODECS);
	h.caps |= (parts->video_mbit ? SLIM_CAP_VIDEO_BUDGET : 0) |
		(desk ? SLIM_CAP_HEADS : 0) | (keyboard ? SLIM_CAP_KEYBOARD : 0) |
		(parts->unreached ? SLIM_CAP_UNREACHED : 0) | (n_codecs ? SLIM_CAP_CODECS : 0);
	if (desk) {
		h.version = SLIM_HELLO_VERSION;
	}
	size_t n_heads = desk ? desk->n_heads : 0;
	size_t len = sizeof(h) + (parts->video_mbit ? sizeof(parts->video_mbit) : 0) +
		(desk ? sizeof(struct slim_wire_heads) + n_heads * sizeof(struct slim_wire_head) : 0) +
		(keyboard ? sizeof(struct slim_wire_keyboard) : 0) +
		(parts->unreached ? SLIM_UNREACHED_LEN : 0) +
		(n_codecs ? sizeof(struct slim_wire_codecs) + n_codecs * sizeof(struct slim_wire_codec) : 0) +
		(parts->token ? SLIM_ATTACH_TOKEN_LEN : 0);
	uint8_t *p = slim_writer_add(w, SLIM_CMD_HELLO, 0, len);
	if (!p) {
		return false;
	}
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	if (parts->video_mbit) {
		memcpy(p, &parts->video_mbit, sizeof(parts->video_mbit));
		p += sizeof(parts->video_mbit);
	}
	if (desk) {
		struct slim_wire_heads heads = { .count = (uint8_t)n_heads };
		memcpy(p, &heads, sizeof(heads));
		p += sizeof(heads);
		for (size_t i = 0; i < n_heads; i++) {
			struct slim_wire_head head;
			slim_desk_head_to_wire(&desk->heads[i], &head);
			memcpy(p, &head, sizeof(head));
			p += sizeof(head);
		}
	}
	if (keyboard) {
		struct slim_wire_keyboard kb;
		slim_desk_keyboard_to_wire(&desk->keyboard, &kb);
		memcpy(p, &kb, sizeof(kb));
		p += sizeof(kb);
	}
	if (parts->unreached) {
		memcpy(p, parts->unreached, SLIM_UNREACHED_LEN);
		p += SLIM_UNREACHED_LEN;
	}
	if (n_codecs) {
		struct slim_wire_codecs c = { .count = (uint8_t)n_codecs };
		memcpy(p, &c, sizeof(c));
		p += sizeof(c);
		memcpy(p, parts->codecs, n_codecs * sizeof(*parts->codecs));
		p += n_codecs * sizeof(*parts->codecs);
	}
	if (parts->token) {
		memcpy(p, parts->token, SLIM_ATTACH_TOKEN_LEN);
	}
	return true;
}

bool slim_put_hello(struct slim_writer *w, const struct slim_wire_hello *hello)
{
	return slim_put_hello_ext(w, hello, &(struct slim_hello_parts){ 0 });
}

bool slim_put_hello_token(struct slim_writer *w, const struct slim_wire_hello *hello,
		const uint8_t token[SLIM_ATTACH_TOKEN_LEN])
{
	return slim_put_hello_ext(w, hello, &(struct slim_hello_parts){ .token = token });
}

bool slim_put_redirect(struct slim_writer *w, const struct slim_wire_redirect *redirect)
{
	return put(w, SLIM_CMD_REDIRECT, 0, redirect, sizeof(*redirect));
}

bool slim_put_move(struct slim_writer *w, const struct slim_wire_move *move)
{
	return put(w, SLIM_CMD_MOVE, 0, move, sizeof(*move));
}

bool slim_put_input(struct slim_writer *w, uint32_t first, const struct slim_wire_input *events,
		size_t n)
{
	struct slim_wire_input_hdr hdr = { .first = first };
	/* n is bounded before it is multiplied: the product must not wrap */
	if (n == 0 || n > UINT16_MAX / sizeof(*events)) {
		return false;
	}
	uint8_t *p = slim_writer_add(w, SLIM_CMD_INPUT, 0, sizeof(hdr) + n * sizeof(*events));
	if (!p) {
		return false;
	}
	memcpy(p, &hdr, sizeof(hdr));
	memcpy(p + sizeof(hdr), events, n * sizeof(*events));
	return true;
}

bool slim_put_held(struct slim_writer *w, uint32_t next, const uint16_t *codes, size_t n)
{
	if (n > SLIM_HELD_MAX) {
		return false;
	}
	struct slim_wire_held hdr = { .next = next, .count = (uint16_t)n };
	uint8_t *p = slim_writer_add(w, SLIM_CMD_HELD, 0, sizeof(hdr) + n * sizeof(*codes));
	if (!p) {
		return false;
	}
	memcpy(p, &hdr, sizeof(hdr));
	if (n > 0) {
		memcpy(p + sizeof(hdr), codes, n * sizeof(*codes));
	}
	return true;
}

bool slim_put_input_ack(struct slim_writer *w, uint32_t next)
{
	struct slim_wire_input_ack ack = { .next = next };
	return put(w, SLIM_CMD_INPUT_ACK, 0, &ack, sizeof(ack));
}

bool slim_put_ack(struct slim_writer *w, const struct slim_wire_ack *ack)
{
	return put(w, SLIM_CMD_ACK, 0, ack, sizeof(*ack));
}

bool slim_put_nack(struct slim_writer *w, const struct slim_wire_seq_range *ranges,
		size_t n, uint16_t flags)
{
	if (n > SLIM_NACK_MAX_RANGES) {
		return false;
	}
	struct slim_wire_nack hdr = { .count = (uint16_t)n, .flags = flags };
	uint8_t *p = slim_writer_add(w, SLIM_CMD_NACK, 0, sizeof(hdr) + n * sizeof(*ranges));
	if (!p) {
		return false;
	}
	memcpy(p, &hdr, sizeof(hdr));
	if (n > 0) {
		memcpy(p + sizeof(hdr), ranges, n * sizeof(*ranges));
	}
	return true;
}

bool slim_put_refuse(struct slim_writer *w, uint16_t reason, const char *text)
{
	size_t len = strlen(text);
	len = len < SLIM_REFUSE_TEXT_MAX ? len : SLIM_REFUSE_TEXT_MAX;
	struct slim_wire_refuse hdr = { .reason = reason };
	uint8_t *p = slim_writer_add(w, SLIM_CMD_REFUSE, 0, sizeof(hdr) + len);
	if (!p) {
		return false;
	}
	memcpy(p, &hdr, sizeof(hdr));
	memcpy(p + sizeof(hdr), text, len);
	return true;
}

_Static_assert(SLIM_MAX_SCREEN_PIXELS == 16588800u, "SLIM_REFUSE_TOO_LARGE_TEXT names it");

bool slim_screen_fits(uint32_t width, uint32_t height)
{
	return width > 0 && height > 0 && width <= SLIM_MAX_DIM && height <= SLIM_MAX_DIM &&
		(uint64_t)width * height <= SLIM_MAX_SCREEN_PIXELS;
}

bool slim_put_card(struct slim_writer *w, const struct slim_wire_card *card)
{
	return put(w, SLIM_CMD_CARD, 0, card, sizeof(*card));
}

bool slim_put_audio(struct slim_writer *w, bool upstream, uint8_t flags,
		const struct slim_wire_audio *hdr, const uint8_t *payload, size_t len)
{
	if (len == 0 || len > SLIM_AUDIO_MAX_WIRE_PAYLOAD) {
		return false;
	}
	uint8_t *p = slim_writer_add(w, upstream ? SLIM_CMD_MIC : SLIM_CMD_AUDIO, flags,
		sizeof(*hdr) + len);
	if (!p) {
		return false;
	}
	memcpy(p, hdr, sizeof(*hdr));
	memcpy(p + sizeof(*hdr), payload, len);
	return true;
}

bool slim_put_audio_report(struct slim_writer *w, const struct slim_wire_audio_report *report)
{
	return put(w, SLIM_CMD_AUDIO_REPORT, 0, report, sizeof(*report));
}

bool slim_put_ping(struct slim_writer *w)
{
	return slim_writer_add(w, SLIM_CMD_PING, 0, 0) != NULL;
}

size_t slim_cscs_payload_len(uint16_t w, uint16_t h, uint8_t depth,
		size_t *y_stride, size_t *c_stride)
{
	size_t cw = ((size_t)w + 1) / 2, ch = ((size_t)h + 1) / 2;
	size_t ys = depth == SLIM_CSCS_DEPTH4 ? ((size_t)w + 1) / 2 : w;
	size_t cs = depth == SLIM_CSCS_DEPTH4 ? (cw + 1) / 2 : cw;
	if (y_stride) {
		*y_stride = ys;
	}
	if (c_stride) {
		*c_stride = cs;
	}
	return ys * h + 2 * cs * ch;
}

bool slim_put_video(struct slim_writer *w, uint8_t flags, const struct slim_wire_video *hdr,
		const uint8_t *data, size_t len)
{
	uint8_t *p = slim_writer_add(w, SLIM_CMD_VIDEO, flags, sizeof(*hdr) + len);
	if (!p) {
		return false;
	}
	memcpy(p, hdr, sizeof(*hdr));
	memcpy(p + sizeof(*hdr), data, len);
	return true;
}

bool slim_put_video_recover(struct slim_writer *w, uint8_t stream, uint32_t frame)
{
	struct slim_wire_video_recover r = { .stream = stream, .frame = frame };
	return put(w, SLIM_CMD_VIDEO_RECOVER, 0, &r, sizeof(r));
}
