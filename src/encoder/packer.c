/*
 * Batches commands into datagrams. Every command is applied to the model
 * of the console as it is written, with the console's own functions, and
 * the area it paints is noted against its datagram's sequence number for
 * loss recovery.
 */
#include <stdlib.h>
#include <string.h>
#include "encoder-internal.h"

/*
 * With zstd, a datagram is filled with more commands than it can carry
 * raw: as many as the last datagrams' ratio says will fit once compressed
 * (kept a little short), within these bounds.
 */
#define BUDGET_MAX_MTUS 8
#define BUDGET_START_MTUS 3

bool packer_init(struct slim_packer *p, uint16_t mtu, uint32_t assoc, bool zstd,
		bool history)
{
	size_t cap = mtu;
	if (zstd) {
		cap = (size_t)mtu * BUDGET_MAX_MTUS;
		cap = cap < SLIM_ZSTD_MAX_DGRAM ? cap : SLIM_ZSTD_MAX_DGRAM;
		p->zstd = slim_zstd_create();
		p->zbuf = malloc(mtu);
		p->history = history ? slim_history_create() : NULL;
	}
	p->buf = malloc(cap);
	p->cscs = slim_cscs_scratch_create();
	if (!p->buf || !p->cscs || (zstd && (!p->zstd || !p->zbuf)) ||
			(zstd && history && !p->history)) {
		packer_finish(p);
		return false;
	}
	p->mtu = mtu;
	p->cap = cap;
	p->budget = zstd ? (size_t)mtu * BUDGET_START_MTUS : mtu;
	p->budget = p->budget < cap ? p->budget : cap;
	slim_writer_init(&p->w, p->buf, p->budget, assoc, false);
	p->next_seq = 1;
	return true;
}

void packer_finish(struct slim_packer *p)
{
	free(p->buf);
	p->buf = NULL;
	free(p->zbuf);
	p->zbuf = NULL;
	slim_zstd_destroy(p->zstd);
	p->zstd = NULL;
	slim_history_destroy(p->history);
	p->history = NULL;
	slim_cscs_scratch_destroy(p->cscs);
	p->cscs = NULL;
}

void packer_reset(struct slim_packer *p)
{
	if (p->history) {
		slim_history_reset(p->history);
		slim_zstd_use_history(p->zstd, p->history, 0, 0);
	}
}

void packer_distrust_history(struct slim_packer *p)
{
	p->dict.floor = p->rec->last_sent;
	p->dict.confirmed = 0; /* choose again */
}

size_t packer_max_body(const struct slim_packer *p)
{
	return p->mtu - sizeof(struct slim_wire_dgram) - sizeof(struct slim_wire_cmd);
}

/* What INPUT_ACK takes in a datagram, header included. */
#define INPUT_ACK_BYTES (sizeof(struct slim_wire_cmd) + sizeof(struct slim_wire_input_ack))

size_t packer_room(const struct slim_packer *p)
{
	size_t room = slim_writer_room(&p->w);
	room = room < packer_max_body(p) ? room : packer_max_body(p);
	/* a pending INPUT_ACK will go first in a datagram started now */
	if (p->w.count == 0 && p->input_ack.pending) {
		room = room > INPUT_ACK_BYTES ? room - INPUT_ACK_BYTES : 0;
	}
	return room;
}

/*
 * The dictionary of the datagrams compressed next: the newest run of
 * datagrams the console confirmed, which both sides still keep (the
 * console kept all it applied that the server still keeps), at most
 * SLIM_HISTORY_DICT_MAX bytes. A frame's later datagrams may also name
 * the frame's earlier ones, confirmed or not, as a VNC server's zlib
 * stream refers to what it sent a moment ago: the second datagram of a
 * screenful of text then costs the glyphs the first did not have (a third
 * off `seq 1 4000` in foot). Such a chain holds at most CHAIN_DGRAMS
 * datagrams: a loss costs at most the rest of its chain, each datagram
 * that named the lost one being rejected and repainted as lost.
 */
#define HISTORY_LOOKBACK 256
#define CHAIN_DGRAMS 8

/*
 * A link that loses pays for chains in repaints (3.5 more datagrams a
 * loss in a long frame): none while it lost one of the last CHAIN_QUIET.
 */
#define CHAIN_QUIET 256

void packer_network_lost(struct slim_packer *p)
{
	p->dict.chain_after = p->next_seq + CHAIN_QUIET;
}

/*
 * Names the newest run from `s` down of datagrams confirmed or, from
 * `chain` on (0: none), sent in this frame.
 */
static void use_run(struct slim_packer *p, uint32_t s, uint32_t chain)
{
	const struct slim_recovery *rec = p->rec;
	uint32_t first = 0, last = 0;
	size_t total = 0;
	for (int k = 0; k < HISTORY_LOOKBACK && s != 0 && (int32_t)(s - p->dict.floor) > 0;
			k++, s--) {
		const struct seq_record *r = &rec->records[s % REC_RING];
		size_t len = slim_history_len(p->history, s);
		bool named = (chain != 0 && (int32_t)(s - chain) >= 0) ||
			(r->seq == s && r->state == REC_CONFIRMED);
		if (!named || len == 0) {
			if (last) {
				break;
			}
			continue;
		}
		if (total + len > SLIM_HISTORY_DICT_MAX) {
			break;
		}
		last = last ? last : s;
		first = s;
		total += len;
	}
	/* what the ring has written over since goes unnamed (the console may have too) */
	p->dict.first = slim_zstd_use_history(p->zstd, p->history, first, last) ? first : 0;
}

/*
 * The first datagram of the chain p->seq belongs to, 0 when it starts one
 * (a frame's first, every CHAIN_DGRAMS-th) or none may be made.
 */
static uint32_t chain_start(const struct slim_packer *p)
{
	if (!p->frame.active || p->frame.first == 0 || (int32_t)(p->seq - p->dict.chain_after) < 0) {
		return 0;
	}
	uint32_t k = p->seq - p->frame.first;
	uint32_t from = p->frame.first + k / CHAIN_DGRAMS * CHAIN_DGRAMS;
	return from != p->seq ? from : 0;
}

static void choose_history(struct slim_packer *p, bool chain)
{
	const struct slim_recovery *rec = p->rec;
	if (!p->history) {
		return;
	}
	uint32_t from = chain ? chain_start(p) : 0;
	if (from != 0) {
		use_run(p, p->seq - 1, from);
		p->dict.chained = true;
		return;
	}
	/* the confirmed run is chosen again only when a confirmation came */
	if (!p->dict.chained && rec->confirmed == p->dict.confirmed &&
			(p->dict.first == 0 || slim_history_has(p->history, p->dict.first))) {
		return;
	}
	p->dict.chained = false;
	p->dict.confirmed = rec->confirmed;
	use_run(p, rec->confirmed, 0);
}

/*
 * Compresses the datagram of `len` raw bytes into p->zbuf: strongly and
 * chained while the frame has spent less than FRAME_STRONG_US compressing
 * (a menu's 10 datagrams, a screenful of text), fast and with the
 * confirmed run after that (a whole screen of UI: each chained datagram
 * digests a dictionary of its own, 0.1-0.2 ms). Outside a frame (a pointer
 * or an INPUT_ACK alone) strongly, so that the next frame finds the
 * confirmed run digested at its effort. Returns its length, 0 when it goes
 * raw.
 */
#define FRAME_STRONG_US 2000

static size_t deflate(struct slim_packer *p, size_t len)
{
	uint64_t start = slim_now_us();
	bool strong = !p->frame.active || p->frame.zstd_us < FRAME_STRONG_US;
	choose_history(p, strong);
	size_t z = slim_zstd_deflate(p->zstd, strong ? SLIM_ZSTD_STRONG : SLIM_ZSTD_FAST,
		p->buf, len, p->zbuf, p->mtu);
	if (p->frame.active) {
		p->frame.zstd_us += slim_now_us() - start;
	}
	return z;
}

void packer_begin_frame(struct slim_packer *p)
{
	p->frame = (struct packer_frame){ .active = true };
}

void packer_end_frame(struct slim_packer *p)
{
	p->frame.active = false;
}

/* A datagram's commands, as the console will keep them if it applies it. */
static void remember(struct slim_packer *p, uint32_t seq, size_t raw_len)
{
	if (p->history) {
		slim_history_add(p->history, seq, p->buf + sizeof(struct slim_wire_dgram),
			raw_len - sizeof(struct slim_wire_dgram));
	}
}

static void send_dgram(struct slim_packer *p, const uint8_t *buf, size_t len)
{
	p->send(p->send_data, buf, len);
	p->stats->datagrams++;
	p->stats->bytes += len;
}

/* Sends the datagram of `raw` bytes compressed into `z` bytes of p->zbuf, or raw (z 0). */
static void send_made(struct slim_packer *p, size_t raw, size_t z)
{
	if (z == 0) {
		send_dgram(p, p->buf, raw);
		return;
	}
	send_dgram(p, p->zbuf, z);
	p->stats->compressed++;
	p->stats->with_history += p->dict.first != 0;
	p->stats->chained += p->dict.first != 0 && p->dict.chained;
}

static void begin_dgram(struct slim_packer *p)
{
	p->seq = p->next_seq++;
	if (p->frame.active && p->frame.first == 0) {
		p->frame.first = p->seq;
	}
	if (p->next_seq == 0) {
		p->next_seq = 1; /* 0 means "nothing yet" to the console */
	}
	recovery_begin_dgram(p->rec, p->seq);
}

static void empty(struct slim_packer *p)
{
	slim_writer_reset(&p->w);
	p->w.mtu = p->budget;
	p->incompressible = false;
}

/* The next datagram is filled to what this one's ratio says fits, a tenth short. */
static void learn_ratio(struct slim_packer *p, size_t raw, size_t sent)
{
	size_t hdr = sizeof(struct slim_wire_dgram);
	size_t fits = hdr + (p->mtu - hdr) * (raw - hdr) / (sent - hdr) * 9 / 10;
	fits = fits > p->mtu ? fits : p->mtu;
	fits = fits < p->cap ? fits : p->cap;
	p->budget = (3 * p->budget + fits) / 4;
}

/* Notes what a command moved from datagram `from` to p->seq paints, as its emit_* did. */
static void renote(struct slim_packer *p, uint32_t from, uint8_t type, const uint8_t *body)
{
	struct slim_wire_rect r;
	struct slim_wire_copy c;
	struct slim_wire_cscs cs;
	switch (type) {
	case SLIM_CMD_FILL:
	case SLIM_CMD_SET:
	case SLIM_CMD_BITMAP:
	case SLIM_CMD_PALETTE:
		memcpy(&r, body, sizeof(r)); /* each body starts with its rectangle */
		recovery_note(p->rec, p->seq, (struct slim_rect){ r.x, r.y, r.w, r.h });
		break;
	case SLIM_CMD_COPY:
		memcpy(&c, body, sizeof(c));
		struct slim_rect src = { c.src.x, c.src.y, c.src.w, c.src.h };
		recovery_note(p->rec, p->seq, (struct slim_rect){ c.dx, c.dy, src.w, src.h });
		recovery_note_copy(p->rec, p->seq, src, c.dx, c.dy);
		break;
	case SLIM_CMD_CSCS:
		memcpy(&cs, body, sizeof(cs));
		recovery_note(p->rec, p->seq,
			(struct slim_rect){ cs.pdst.x, cs.pdst.y, cs.pdst.w, cs.pdst.h });
		break;
	case SLIM_CMD_CURSOR_IMAGE:
	case SLIM_CMD_CURSOR_POS:
		p->rec->records[p->seq % REC_RING].cursor = true;
		break;
	case SLIM_CMD_CACHE_STORE:
	case SLIM_CMD_CACHE_DRAW: {
		struct slim_wire_cache k;
		memcpy(&k, body, sizeof(k));
		if (type == SLIM_CMD_CACHE_DRAW) {
			recovery_note(p->rec, p->seq, (struct slim_rect){ k.r.x, k.r.y, k.r.w, k.r.h });
		} else {
			cache_moved(p->rec->cache, k.slot, from, p->seq);
		}
		break;
	}
	}
}

/*
 * Sends the first commands of a datagram that does not fit even
 * compressed, and moves the rest to a new datagram. They are in the model
 * already; what they paint is noted again under the new number (the old
 * one keeps its notes too: if it is lost, a little more is repainted).
 */
static void send_part(struct slim_packer *p, size_t len)
{
	size_t hdr = sizeof(struct slim_wire_dgram);
	size_t target = (len - hdr) * 3 / 4;
	for (;;) {
		/* the longest run of whole commands within target bytes, at least one */
		size_t end = hdr, before = hdr;
		uint16_t k = 0;
		while (k < p->w.count) {
			struct slim_wire_cmd c;
			memcpy(&c, p->buf + end, sizeof(c));
			size_t next = end + sizeof(c) + c.len;
			if (k > 0 && next - hdr > target) {
				break;
			}
			before = end;
			end = next;
			k++;
		}
		/*
		 * A CACHE_STORE keeps what the command before it painted: the two
		 * stay in one datagram (emit_cache_store's caller made sure they
		 * fit one raw).
		 */
		if (k < p->w.count && p->buf[end] == SLIM_CMD_CACHE_STORE) {
			if (k > 1) {
				end = before;
				k--;
			} else {
				end += sizeof(struct slim_wire_cmd) + sizeof(struct slim_wire_cache);
				k++;
			}
		}
		struct slim_writer part = p->w;
		part.len = end;
		part.count = k;
		slim_writer_finish(&part, p->seq, slim_now_us());
		size_t z = deflate(p, end);
		if (z == 0 && end > p->mtu) {
			target = (end - hdr) * 3 / 4;
			continue;
		}
		remember(p, p->seq, end);
		send_made(p, end, z); /* one command always fits raw */
		p->stats->split++;
		memmove(p->buf + hdr, p->buf + end, len - end);
		p->w.len = hdr + len - end;
		p->w.count = (uint16_t)(p->w.count - k);
		p->budget = (p->budget * 3 / 4 > p->mtu) ? p->budget * 3 / 4 : p->mtu;
		uint32_t from = p->seq;
		begin_dgram(p);
		for (size_t off = hdr; off < p->w.len;) {
			struct slim_wire_cmd c;
			memcpy(&c, p->buf + off, sizeof(c));
			renote(p, from, c.type, p->buf + off + sizeof(c));
			off += sizeof(c) + c.len;
		}
		return;
	}
}

void packer_flush(struct slim_packer *p)
{
	while (p->w.count > 0) {
		size_t len = slim_writer_finish(&p->w, p->seq, slim_now_us());
		size_t z = 0;
		if (p->zstd && !p->incompressible) {
			z = deflate(p, len);
		}
		if (z == 0 && len > p->mtu) {
			send_part(p, len);
			continue;
		}
		/* the console keeps what it expands to */
		remember(p, p->seq, len);
		if (z && len > p->mtu) {
			learn_ratio(p, len, z);
		}
		send_made(p, len, z);
		empty(p);
	}
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
		begin_dgram(p);
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
	struct slim_wire_input_ack ack = { .next = p->input_ack.next };
	uint8_t *body = add(p, SLIM_CMD_INPUT_ACK, 0, sizeof(ack));
	if (!body) {
		abort(); /* an empty datagram of SLIM_MIN_MTU holds it */
	}
	memcpy(body, &ack, sizeof(ack));
	p->input_ack.pending = false;
	/* it paints nothing: recovery has nothing to note for it */
	count(p, SLIM_STAT_OTHER, sizeof(ack), 0);
}

/* Reserves a command, starting a new datagram when this one is full. */
static uint8_t *reserve(struct slim_packer *p, uint8_t type, uint8_t flags, size_t len)
{
	/*
	 * LZ4, YUV samples and compressed video gain little from zstd for what it costs: a
	 * datagram that carries them goes raw, no longer than the MTU.
	 */
	if (p->zstd && (type == SLIM_CMD_CSCS || type == SLIM_CMD_VIDEO ||
			(type == SLIM_CMD_SET && (flags & SLIM_SET_LZ4)))) {
		if (p->w.len + sizeof(struct slim_wire_cmd) + len > p->mtu) {
			packer_flush(p);
		}
		p->w.mtu = p->mtu;
		p->incompressible = true;
	}
	if (p->w.count == 0 && p->input_ack.pending) {
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
	p->last_cmd = sizeof(struct slim_wire_cmd) + len;
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
	video_out_copied(p->video, src, (int32_t)dx - src.x, (int32_t)dy - src.y);
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

void emit_palette(struct slim_packer *p, uint8_t flags, const uint8_t *body, size_t len)
{
	uint8_t *out = reserve(p, SLIM_CMD_PALETTE, flags, len);
	memcpy(out, body, len);
	struct slim_wire_palette w;
	memcpy(&w, body, sizeof(w));
	size_t table = (size_t)w.colors * 3;
	struct slim_palette pal = {
		.r = { w.r.x, w.r.y, w.r.w, w.r.h }, .colors = w.colors,
		.table = out + sizeof(w), .data = out + sizeof(w) + table,
		.len = len - sizeof(w) - table,
	};
	slim_fb_palette(p->model, &pal, flags);
	recovery_note(p->rec, p->seq, pal.r);
	count(p, SLIM_STAT_PALETTE, len, (uint64_t)pal.r.w * pal.r.h);
}

void emit_cache_draw(struct slim_packer *p, uint16_t slot, struct slim_rect r,
		const struct slim_fb *fb)
{
	struct slim_wire_cache c = { .slot = slot, .r = wire_rect(r) };
	uint8_t *body = reserve(p, SLIM_CMD_CACHE_DRAW, 0, sizeof(c));
	memcpy(body, &c, sizeof(c));
	/* the slot holds these very pixels: their hashes are equal */
	for (uint32_t y = 0; y < r.h; y++) {
		memcpy(slim_fb_row(p->model, r.x, r.y + y), slim_fb_row(fb, r.x, r.y + y),
			(size_t)r.w * 4);
	}
	recovery_note(p->rec, p->seq, r);
	count(p, SLIM_STAT_CACHE_DRAW, sizeof(c), (uint64_t)r.w * r.h);
}

void emit_cache_store(struct slim_packer *p, uint16_t slot, struct slim_rect r)
{
	struct slim_wire_cache c = { .slot = slot, .r = wire_rect(r) };
	uint8_t *body = reserve(p, SLIM_CMD_CACHE_STORE, 0, sizeof(c));
	memcpy(body, &c, sizeof(c));
	p->stats->cache_stores++;
	count(p, SLIM_STAT_OTHER, sizeof(c), 0);
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
	p->input_ack.next = next;
	p->input_ack.pending = true;
}

bool packer_flush_input_ack(struct slim_packer *p)
{
	if (!p->input_ack.pending) {
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

void emit_video(struct slim_packer *p, uint8_t flags, const struct slim_wire_video *hdr,
		const uint8_t *data, size_t len)
{
	uint8_t *body = reserve(p, SLIM_CMD_VIDEO, flags, sizeof(*hdr) + len);
	memcpy(body, hdr, sizeof(*hdr));
	memcpy(body + sizeof(*hdr), data, len);
	/* what it paints is the picture's once whole: encode_pictures marks it unknown */
	count(p, SLIM_STAT_VIDEO, sizeof(*hdr) + len, 0);
}
