/*
 * Batches commands into datagrams. Every command is applied to the model
 * of the console as it is written, with the console's own functions, and
 * the area it paints is noted against its datagram's sequence number for
 * loss recovery.
 */
#include <stdlib.h>
#include <string.h>
#include "encoder-internal.h"

bool packer_init(struct slim_packer *p, uint16_t mtu, uint32_t assoc)
{
	p->buf = malloc(mtu);
	p->cscs = slim_cscs_scratch_create();
	if (!p->buf || !p->cscs) {
		packer_finish(p);
		return false;
	}
	slim_writer_init(&p->w, p->buf, mtu, assoc, false);
	p->next_seq = 1;
	return true;
}

void packer_finish(struct slim_packer *p)
{
	free(p->buf);
	p->buf = NULL;
	slim_cscs_scratch_destroy(p->cscs);
	p->cscs = NULL;
}

size_t packer_max_body(const struct slim_packer *p)
{
	return p->w.mtu - sizeof(struct slim_wire_dgram) - sizeof(struct slim_wire_cmd);
}

/* What INPUT_ACK takes in a datagram, header included. */
#define INPUT_ACK_BYTES (sizeof(struct slim_wire_cmd) + sizeof(struct slim_wire_input_ack))

size_t packer_room(const struct slim_packer *p)
{
	size_t room = slim_writer_room(&p->w);
	/* a pending INPUT_ACK will go first in a datagram started now */
	if (p->w.count == 0 && p->input_ack_pending) {
		room = room > INPUT_ACK_BYTES ? room - INPUT_ACK_BYTES : 0;
	}
	return room;
}

void packer_flush(struct slim_packer *p)
{
	if (p->w.count == 0) {
		return;
	}
	size_t len = slim_writer_finish(&p->w, p->seq, slim_now_us());
	p->send(p->send_data, p->buf, len);
	p->stats->datagrams++;
	p->stats->bytes += len;
	slim_writer_reset(&p->w);
}

static void count(struct slim_packer *p, enum slim_stat_kind kind, size_t body,
		uint64_t pixels)
{
	p->stats->commands[kind]++;
	p->stats->cmd_bytes[kind] += body + sizeof(struct slim_wire_cmd);
	p->stats->cmd_pixels[kind] += pixels;
}

/* Adds a command to this datagram; the first one gives the datagram its number. */
static uint8_t *add(struct slim_packer *p, uint8_t type, uint8_t flags, size_t len)
{
	uint8_t *body = slim_writer_add(&p->w, type, flags, len);
	if (body && p->w.count == 1) {
		p->seq = p->next_seq++;
		if (p->next_seq == 0) {
			p->next_seq = 1; /* 0 means "nothing yet" to the console */
		}
		recovery_begin_dgram(p->rec, p->seq);
	}
	return body;
}

/*
 * The pending INPUT_ACK, into an empty datagram. Only now does it get a
 * number: between the encoder's calls no datagram is half made, so the
 * loss recovery never hears of one that has not gone yet.
 */
static void put_input_ack(struct slim_packer *p)
{
	struct slim_wire_input_ack ack = { .next = p->input_ack_next };
	uint8_t *body = add(p, SLIM_CMD_INPUT_ACK, 0, sizeof(ack));
	if (!body) {
		abort(); /* an empty datagram of SLIM_MIN_MTU holds it */
	}
	memcpy(body, &ack, sizeof(ack));
	p->input_ack_pending = false;
	/* it paints nothing: recovery has nothing to note for it */
	count(p, SLIM_STAT_OTHER, sizeof(ack), 0);
}

/* Reserves a command, starting a new datagram when this one is full. */
static uint8_t *reserve(struct slim_packer *p, uint8_t type, uint8_t flags, size_t len)
{
	if (p->w.count == 0 && p->input_ack_pending) {
		put_input_ack(p);
	}
	uint8_t *body = add(p, type, flags, len);
	if (!body) {
		/* (a piece sized for an empty datagram leaves the acknowledgement alone) */
		packer_flush(p);
		body = add(p, type, flags, len);
	}
	if (!body) {
		abort(); /* callers size every command to fit an empty datagram */
	}
	p->commands++;
	return body;
}

static struct slim_wire_rect wire_rect(struct slim_rect r)
{
	return (struct slim_wire_rect){ r.x, r.y, r.w, r.h };
}

void emit_fill(struct slim_packer *p, struct slim_rect r, uint32_t color)
{
	struct slim_wire_fill f = { .r = wire_rect(r), .color = color | SLIM_OPAQUE };
	uint8_t *body = reserve(p, SLIM_CMD_FILL, 0, sizeof(f));
	memcpy(body, &f, sizeof(f));
	slim_fb_fill(p->model, r, f.color);
	recovery_note(p->rec, p->seq, r);
	count(p, SLIM_STAT_FILL, sizeof(f), (uint64_t)r.w * r.h);
}

void emit_copy(struct slim_packer *p, struct slim_rect src, uint16_t dx, uint16_t dy)
{
	struct slim_wire_copy c = { .src = wire_rect(src), .dx = dx, .dy = dy };
	uint8_t *body = reserve(p, SLIM_CMD_COPY, 0, sizeof(c));
	memcpy(body, &c, sizeof(c));
	slim_fb_copy(p->model, src, dx, dy);
	recovery_note(p->rec, p->seq, (struct slim_rect){ dx, dy, src.w, src.h });
	recovery_note_copy(p->rec, p->seq, src, dx, dy);
	count(p, SLIM_STAT_COPY, sizeof(c), (uint64_t)src.w * src.h);
}

void emit_bitmap(struct slim_packer *p, struct slim_rect r, uint32_t fg, uint32_t bg,
		const uint8_t *bits)
{
	size_t n = ((size_t)r.w + 7) / 8 * r.h;
	struct slim_wire_bitmap b = { .r = wire_rect(r), .fg = fg, .bg = bg };
	uint8_t *body = reserve(p, SLIM_CMD_BITMAP, 0, sizeof(b) + n);
	memcpy(body, &b, sizeof(b));
	memcpy(body + sizeof(b), bits, n);
	slim_fb_bitmap(p->model, r, fg, bg, bits);
	recovery_note(p->rec, p->seq, r);
	count(p, SLIM_STAT_BITMAP, sizeof(b) + n, (uint64_t)r.w * r.h);
}

void emit_set(struct slim_packer *p, struct slim_rect r, uint8_t flags,
		const uint8_t *raw, const uint8_t *data, size_t len)
{
	struct slim_wire_set s = { .r = wire_rect(r) };
	uint8_t *body = reserve(p, SLIM_CMD_SET, flags, sizeof(s) + len);
	memcpy(body, &s, sizeof(s));
	memcpy(body + sizeof(s), data, len);
	slim_fb_set(p->model, r, raw, flags & SLIM_SET_RGB888);
	recovery_note(p->rec, p->seq, r);
	bool lz4 = flags & SLIM_SET_LZ4;
	count(p, lz4 ? SLIM_STAT_SET_LZ4 : SLIM_STAT_SET, sizeof(s) + len, (uint64_t)r.w * r.h);
}

uint8_t *emit_cscs_begin(struct slim_packer *p, const struct slim_wire_cscs *hdr,
		uint8_t depth, size_t payload)
{
	uint8_t *body = reserve(p, SLIM_CMD_CSCS, depth, sizeof(*hdr) + payload);
	memcpy(body, hdr, sizeof(*hdr));
	return body + sizeof(*hdr);
}

void emit_cscs_commit(struct slim_packer *p, const uint8_t *payload, uint8_t depth,
		bool model)
{
	struct slim_wire_cscs h;
	memcpy(&h, payload - sizeof(h), sizeof(h));
	struct slim_cscs c = {
		.src_w = h.src_w, .src_h = h.src_h, .depth = depth,
		.dst = { h.dst.x, h.dst.y, h.dst.w, h.dst.h },
		.psrc = { h.psrc.x, h.psrc.y, h.psrc.w, h.psrc.h },
		.pdst = { h.pdst.x, h.pdst.y, h.pdst.w, h.pdst.h },
	};
	size_t len = slim_cscs_payload_len(c.psrc.w, c.psrc.h, depth, &c.y_stride, &c.c_stride);
	c.y = payload;
	c.u = c.y + c.y_stride * c.psrc.h;
	c.v = c.u + c.c_stride * (((size_t)c.psrc.h + 1) / 2);
	if (model) {
		slim_fb_cscs(p->model, &c, p->cscs);
	}
	recovery_note(p->rec, p->seq, c.pdst);
	count(p, SLIM_STAT_CSCS, sizeof(h) + len, (uint64_t)c.pdst.w * c.pdst.h);
}

void emit_cursor_image(struct slim_packer *p, const struct slim_wire_cursor_image *hdr,
		const uint32_t *rows)
{
	size_t len = (size_t)hdr->w * hdr->rows * 4;
	uint8_t *body = reserve(p, SLIM_CMD_CURSOR_IMAGE, 0, sizeof(*hdr) + len);
	memcpy(body, hdr, sizeof(*hdr));
	memcpy(body + sizeof(*hdr), rows, len);
	p->rec->records[p->seq % REC_RING].cursor = true;
	count(p, SLIM_STAT_OTHER, sizeof(*hdr) + len, 0);
}

void emit_cursor_pos(struct slim_packer *p, int16_t x, int16_t y, bool visible)
{
	struct slim_wire_cursor_pos c = { .x = x, .y = y, .visible = visible };
	uint8_t *body = reserve(p, SLIM_CMD_CURSOR_POS, 0, sizeof(c));
	memcpy(body, &c, sizeof(c));
	p->rec->records[p->seq % REC_RING].cursor = true;
	count(p, SLIM_STAT_OTHER, sizeof(c), 0);
}

void packer_input_ack(struct slim_packer *p, uint32_t next)
{
	p->input_ack_next = next;
	p->input_ack_pending = true;
}

bool packer_flush_input_ack(struct slim_packer *p)
{
	if (!p->input_ack_pending) {
		return false;
	}
	packer_flush(p); /* nothing is half made between the encoder's calls; if it were */
	put_input_ack(p);
	packer_flush(p);
	return true;
}

void emit_frame_end(struct slim_packer *p, const struct slim_wire_frame_end *fe)
{
	uint8_t *body = reserve(p, SLIM_CMD_FRAME_END, 0, sizeof(*fe));
	memcpy(body, fe, sizeof(*fe));
	count(p, SLIM_STAT_OTHER, sizeof(*fe), 0);
}
