/*
 * Reading slim datagrams (slim-codec.h): every length, bound and
 * rectangle of a command is checked before a caller sees it, so that no
 * caller can be led outside its buffers by what arrives.
 */
#include <string.h>
#include "slim-codec.h"
#include "slim-desk.h"

static const char *const error_names[SLIM_ERR_COUNT] = {
	[SLIM_OK] = "ok",
	[SLIM_ERR_SHORT] = "truncated datagram",
	[SLIM_ERR_MAGIC] = "bad magic",
	[SLIM_ERR_VERSION] = "unsupported version",
	[SLIM_ERR_DIRECTION] = "wrong direction",
	[SLIM_ERR_ASSOC] = "unknown association",
	[SLIM_ERR_TRAILING] = "trailing bytes",
	[SLIM_ERR_UNKNOWN] = "unknown command",
	[SLIM_ERR_LENGTH] = "bad command length",
	[SLIM_ERR_RECT] = "rectangle off screen",
	[SLIM_ERR_FIELD] = "field out of range",
	[SLIM_ERR_LZ4] = "corrupt compressed data",
	[SLIM_ERR_PALETTE] = "bad palette indices",
	[SLIM_ERR_ZSTD] = "corrupt compressed datagram",
	[SLIM_ERR_CACHE] = "cache slot missing",
	[SLIM_ERR_HISTORY] = "dictionary datagrams missing",
};

const char *slim_error_str(enum slim_error err)
{
	if ((unsigned)err >= SLIM_ERR_COUNT) {
		return "unknown error";
	}
	return error_names[err];
}

enum slim_error slim_reader_init(struct slim_reader *r, struct slim_dgram *hdr,
		const uint8_t *buf, size_t len, bool upstream,
		uint16_t width, uint16_t height)
{
	struct slim_wire_dgram w;
	if (len < sizeof(w)) {
		return SLIM_ERR_SHORT;
	}
	memcpy(&w, buf, sizeof(w));
	if (w.magic != SLIM_MAGIC) {
		return SLIM_ERR_MAGIC;
	}
	if (w.version != SLIM_VERSION) {
		return SLIM_ERR_VERSION;
	}
	if (!!(w.flags & SLIM_DGRAM_UPSTREAM) != upstream) {
		return SLIM_ERR_DIRECTION;
	}
	*hdr = (struct slim_dgram){
		.flags = w.flags, .count = w.count, .assoc = w.assoc,
		.seq = w.seq, .time_us = w.time_us,
	};
	r->p = buf + sizeof(w);
	r->end = buf + len;
	r->left = w.count;
	r->width = width;
	r->height = height;
	r->upstream = upstream;
	return SLIM_OK;
}

static struct slim_rect rect_from_wire(struct slim_wire_rect w)
{
	return (struct slim_rect){ w.x, w.y, w.w, w.h };
}

static bool rect_within(struct slim_rect r, uint32_t width, uint32_t height)
{
	return r.w > 0 && r.h > 0 && (uint32_t)r.x + r.w <= width &&
		(uint32_t)r.y + r.h <= height;
}

static bool rect_contains(struct slim_rect outer, struct slim_rect in)
{
	return in.x >= outer.x && in.y >= outer.y &&
		(uint32_t)in.x + in.w <= (uint32_t)outer.x + outer.w &&
		(uint32_t)in.y + in.h <= (uint32_t)outer.y + outer.h;
}

static enum slim_error decode_set(const struct slim_reader *r, struct slim_cmd *cmd,
		const uint8_t *body, size_t len)
{
	struct slim_wire_set s;
	if (len < sizeof(s) + 1 || (cmd->flags & ~(SLIM_SET_LZ4 | SLIM_SET_RGB888))) {
		return len < sizeof(s) + 1 ? SLIM_ERR_LENGTH : SLIM_ERR_FIELD;
	}
	memcpy(&s, body, sizeof(s));
	cmd->set.r = rect_from_wire(s.r);
	if (!rect_within(cmd->set.r, r->width, r->height)) {
		return SLIM_ERR_RECT;
	}
	if ((size_t)cmd->set.r.w * cmd->set.r.h > SLIM_MAX_PIECE_PIXELS) {
		return SLIM_ERR_FIELD;
	}
	cmd->set.data = body + sizeof(s);
	cmd->set.len = len - sizeof(s);
	if (!(cmd->flags & SLIM_SET_LZ4) &&
			cmd->set.len != slim_set_raw_len(cmd->set.r, cmd->flags)) {
		return SLIM_ERR_LENGTH;
	}
	return SLIM_OK;
}

/* Packed indices: with a table whose size is not a power of two, an index can point past it. */
static bool packed_indices_valid(const struct slim_palette *pal)
{
	unsigned bits = slim_palette_bits(pal->colors);
	if (pal->colors == 1u << bits) {
		return true;
	}
	size_t stride = ((size_t)pal->r.w * bits + 7) / 8;
	for (uint32_t y = 0; y < pal->r.h; y++) {
		const uint8_t *row = pal->data + y * stride;
		for (uint32_t x = 0; x < pal->r.w; x++) {
			size_t bit = (size_t)x * bits;
			unsigned v = (row[bit / 8] >> (8 - bits - bit % 8)) & ((1u << bits) - 1);
			if (v >= pal->colors) {
				return false;
			}
		}
	}
	return true;
}

/* Runs: every index within the table, the rectangle covered exactly, no byte left over. */
static bool runs_valid(const struct slim_palette *pal)
{
	uint64_t left = (uint64_t)pal->r.w * pal->r.h;
	const uint8_t *p = pal->data, *end = pal->data + pal->len;
	while (p < end) {
		uint8_t v = *p++;
		if ((v & 0x7f) >= pal->colors) {
			return false;
		}
		uint64_t run = 1;
		if (v & 0x80) {
			uint8_t b;
			do {
				if (p == end) {
					return false;
				}
				b = *p++;
				run += b;
			} while (b == 255 && run <= left);
		}
		if (run > left) {
			return false;
		}
		left -= run;
	}
	return left == 0;
}

static enum slim_error decode_palette(const struct slim_reader *r, struct slim_cmd *cmd,
		const uint8_t *body, size_t len)
{
	struct slim_wire_palette w;
	if (len < sizeof(w)) {
		return SLIM_ERR_LENGTH;
	}
	memcpy(&w, body, sizeof(w));
	struct slim_palette *pal = &cmd->palette;
	pal->r = rect_from_wire(w.r);
	if ((cmd->flags & ~SLIM_PALETTE_RLE) || w.colors == 0 || w.colors > SLIM_PALETTE_MAX) {
		return SLIM_ERR_FIELD;
	}
	if (!rect_within(pal->r, r->width, r->height)) {
		return SLIM_ERR_RECT;
	}
	if ((size_t)pal->r.w * pal->r.h > SLIM_MAX_PIECE_PIXELS) {
		return SLIM_ERR_FIELD;
	}
	size_t table = (size_t)w.colors * 3;
	if (len - sizeof(w) < table) {
		return SLIM_ERR_LENGTH;
	}
	pal->colors = w.colors;
	pal->table = body + sizeof(w);
	pal->data = body + sizeof(w) + table;
	pal->len = len - sizeof(w) - table;
	if (cmd->flags & SLIM_PALETTE_RLE) {
		return runs_valid(pal) ? SLIM_OK : SLIM_ERR_PALETTE;
	}
	if (pal->len != slim_palette_packed_len(pal->r.w, pal->r.h, pal->colors)) {
		return SLIM_ERR_LENGTH;
	}
	return packed_indices_valid(pal) ? SLIM_OK : SLIM_ERR_PALETTE;
}

/*
 * A fragment is checked alone: its bytes lie inside the access unit it
 * names, and where it paints lies on the screen and inside where the
 * picture goes. Whether fragments agree with each other is the
 * depacketiser's (slim-video.c).
 */
static enum slim_error decode_video(const struct slim_reader *r, struct slim_cmd *cmd,
		const uint8_t *body, size_t len)
{
	struct slim_wire_video *h = &cmd->video.hdr;
	if (len <= sizeof(*h)) {
		return SLIM_ERR_LENGTH;
	}
	memcpy(h, body, sizeof(*h));
	cmd->video.data = body + sizeof(*h);
	cmd->video.len = len - sizeof(*h);
	if (h->stream >= SLIM_VIDEO_STREAMS || h->codec != SLIM_CODEC_H264 ||
			h->frags == 0 || h->frags > SLIM_VIDEO_MAX_FRAGS || h->frag >= h->frags ||
			h->width < 2 || h->height < 2 || h->width > SLIM_MAX_DIM ||
			h->height > SLIM_MAX_DIM || h->size > SLIM_VIDEO_MAX_PICTURE ||
			h->offset > h->size || cmd->video.len > h->size - h->offset) {
		return SLIM_ERR_FIELD;
	}
	struct slim_rect dst = rect_from_wire(h->dst), clip = rect_from_wire(h->clip);
	if (dst.w == 0 || dst.h == 0 || !rect_within(clip, r->width, r->height) ||
			!rect_contains(dst, clip)) {
		return SLIM_ERR_RECT;
	}
	return SLIM_OK;
}

static enum slim_error decode_cscs(const struct slim_reader *r, struct slim_cmd *cmd,
		const uint8_t *body, size_t len)
{
	struct slim_wire_cscs c;
	if (len < sizeof(c)) {
		return SLIM_ERR_LENGTH;
	}
	memcpy(&c, body, sizeof(c));
	struct slim_cscs *o = &cmd->cscs;
	o->src_w = c.src_w;
	o->src_h = c.src_h;
	o->dst = rect_from_wire(c.dst);
	o->psrc = rect_from_wire(c.psrc);
	o->pdst = rect_from_wire(c.pdst);
	o->depth = cmd->flags & SLIM_CSCS_DEPTH_MASK;
	if ((cmd->flags & ~SLIM_CSCS_DEPTH_MASK) || o->depth > SLIM_CSCS_DEPTH4 ||
			c.src_w == 0 || c.src_h == 0 ||
			c.src_w > SLIM_MAX_DIM || c.src_h > SLIM_MAX_DIM ||
			o->dst.w == 0 || o->dst.h == 0 ||
			!rect_within(o->psrc, c.src_w, c.src_h) ||
			(o->psrc.x & 1) || (o->psrc.y & 1) ||
			(size_t)o->psrc.w * o->psrc.h > SLIM_MAX_PIECE_PIXELS) {
		return SLIM_ERR_FIELD;
	}
	if (!rect_within(o->pdst, r->width, r->height) || !rect_contains(o->dst, o->pdst)) {
		return SLIM_ERR_RECT;
	}
	if ((size_t)o->pdst.w * o->pdst.h > SLIM_MAX_CSCS_PIXELS) {
		return SLIM_ERR_FIELD;
	}
	size_t need = slim_cscs_payload_len(o->psrc.w, o->psrc.h, o->depth,
		&o->y_stride, &o->c_stride);
	if (len - sizeof(c) != need) {
		return SLIM_ERR_LENGTH;
	}
	size_t ch = ((size_t)o->psrc.h + 1) / 2;
	o->y = body + sizeof(c);
	o->u = o->y + o->y_stride * o->psrc.h;
	o->v = o->u + o->c_stride * ch;
	return SLIM_OK;
}

/*
 * What any AUDIO or MIC must be; what a player supports (a rate, a
 * channel count, a codec's payload) is the player's to check and count.
 */
static enum slim_error decode_audio(struct slim_cmd *cmd, const uint8_t *body, size_t len)
{
	if (len <= sizeof(cmd->audio.hdr) || len - sizeof(cmd->audio.hdr) >
			SLIM_AUDIO_MAX_WIRE_PAYLOAD) {
		return SLIM_ERR_LENGTH;
	}
	memcpy(&cmd->audio.hdr, body, sizeof(cmd->audio.hdr));
	uint8_t halves = SLIM_AUDIO_FIRST_HALF | SLIM_AUDIO_SECOND_HALF;
	if ((cmd->flags & ~halves) || (cmd->flags & halves) == halves) {
		return SLIM_ERR_FIELD;
	}
	cmd->audio.data = body + sizeof(cmd->audio.hdr);
	cmd->audio.len = len - sizeof(cmd->audio.hdr);
	return SLIM_OK;
}

static enum slim_error decode_downstream(const struct slim_reader *r,
		struct slim_cmd *cmd, const uint8_t *body, size_t len)
{
	switch (cmd->type) {
	case SLIM_CMD_AUDIO:
		return decode_audio(cmd, body, len);
	case SLIM_CMD_FILL: {
		struct slim_wire_fill f;
		if (len != sizeof(f)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&f, body, sizeof(f));
		cmd->fill.r = rect_from_wire(f.r);
		cmd->fill.color = f.color;
		return rect_within(cmd->fill.r, r->width, r->height) ? SLIM_OK : SLIM_ERR_RECT;
	}
	case SLIM_CMD_SET:
		return decode_set(r, cmd, body, len);
	case SLIM_CMD_BITMAP: {
		struct slim_wire_bitmap b;
		if (len < sizeof(b)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&b, body, sizeof(b));
		cmd->bitmap.r = rect_from_wire(b.r);
		cmd->bitmap.fg = b.fg;
		cmd->bitmap.bg = b.bg;
		cmd->bitmap.bits = body + sizeof(b);
		if (!rect_within(cmd->bitmap.r, r->width, r->height)) {
			return SLIM_ERR_RECT;
		}
		size_t need = (size_t)(cmd->bitmap.r.w + 7) / 8 * cmd->bitmap.r.h;
		return len - sizeof(b) == need ? SLIM_OK : SLIM_ERR_LENGTH;
	}
	case SLIM_CMD_COPY: {
		struct slim_wire_copy c;
		if (len != sizeof(c)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&c, body, sizeof(c));
		cmd->copy.src = rect_from_wire(c.src);
		cmd->copy.dx = c.dx;
		cmd->copy.dy = c.dy;
		struct slim_rect dst = { c.dx, c.dy, c.src.w, c.src.h };
		return rect_within(cmd->copy.src, r->width, r->height) &&
			rect_within(dst, r->width, r->height) ? SLIM_OK : SLIM_ERR_RECT;
	}
	case SLIM_CMD_CSCS:
		return decode_cscs(r, cmd, body, len);
	case SLIM_CMD_VIDEO:
		return decode_video(r, cmd, body, len);
	case SLIM_CMD_PALETTE:
		return decode_palette(r, cmd, body, len);
	case SLIM_CMD_CACHE_STORE:
	case SLIM_CMD_CACHE_DRAW: {
		struct slim_wire_cache c;
		if (len != sizeof(c)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&c, body, sizeof(c));
		cmd->cache.slot = c.slot;
		cmd->cache.r = rect_from_wire(c.r);
		if (!rect_within(cmd->cache.r, r->width, r->height)) {
			return SLIM_ERR_RECT;
		}
		return c.slot < SLIM_CACHE_SLOTS &&
			(size_t)c.r.w * c.r.h <= SLIM_CACHE_SLOT_PIXELS ? SLIM_OK : SLIM_ERR_FIELD;
	}
	case SLIM_CMD_CURSOR_IMAGE: {
		struct slim_wire_cursor_image *h = &cmd->cursor_image.hdr;
		if (len < sizeof(*h)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(h, body, sizeof(*h));
		if (h->w == 0 || h->h == 0 || h->w > SLIM_CURSOR_MAX || h->h > SLIM_CURSOR_MAX ||
				h->hot_x >= h->w || h->hot_y >= h->h || h->rows == 0 ||
				(uint32_t)h->row + h->rows > h->h) {
			return SLIM_ERR_FIELD;
		}
		cmd->cursor_image.pixels = body + sizeof(*h);
		return len - sizeof(*h) == (size_t)h->w * h->rows * 4 ? SLIM_OK : SLIM_ERR_LENGTH;
	}
	case SLIM_CMD_CURSOR_POS:
		if (len != sizeof(cmd->cursor_pos)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&cmd->cursor_pos, body, len);
		return SLIM_OK;
	case SLIM_CMD_FRAME_END:
		if (len != sizeof(cmd->frame_end)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&cmd->frame_end, body, len);
		return SLIM_OK;
	case SLIM_CMD_INPUT_ACK:
		if (len != sizeof(cmd->input_ack)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&cmd->input_ack, body, len);
		return SLIM_OK;
	case SLIM_CMD_REDIRECT:
		if (len != sizeof(cmd->redirect)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&cmd->redirect, body, len);
		return (cmd->redirect.family == 4 || cmd->redirect.family == 6) &&
			cmd->redirect.port != 0 ? SLIM_OK : SLIM_ERR_FIELD;
	case SLIM_CMD_MOVE:
		if (len != sizeof(cmd->move)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&cmd->move, body, len);
		return (cmd->move.family == 4 || cmd->move.family == 6) &&
			cmd->move.port != 0 ? SLIM_OK : SLIM_ERR_FIELD;
	case SLIM_CMD_REFUSE: {
		struct slim_wire_refuse f;
		if (len < sizeof(f) || len > sizeof(f) + SLIM_REFUSE_TEXT_MAX) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&f, body, sizeof(f));
		cmd->refuse.reason = f.reason;
		cmd->refuse.text = (const char *)body + sizeof(f);
		cmd->refuse.len = len - sizeof(f);
		return SLIM_OK;
	}
	default:
		return SLIM_ERR_UNKNOWN;
	}
}

/*
 * The fixed part, then in this order what the caps say follows: the video
 * budget, the heads, the keyboard, the unreached manager's key, the codecs; then the
 * token, if any.
 */
static enum slim_error decode_hello(struct slim_cmd *cmd, const uint8_t *body, size_t len)
{
	if (len < sizeof(cmd->hello)) {
		return SLIM_ERR_LENGTH;
	}
	memcpy(&cmd->hello, body, sizeof(cmd->hello));
	const uint8_t *p = body + sizeof(cmd->hello), *end = body + len;
	uint32_t caps = cmd->hello.caps;
	cmd->video_mbit = 0;
	if (caps & SLIM_CAP_VIDEO_BUDGET) {
		if (end - p < (ptrdiff_t)sizeof(cmd->video_mbit)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&cmd->video_mbit, p, sizeof(cmd->video_mbit));
		p += sizeof(cmd->video_mbit);
	}
	cmd->heads = NULL;
	cmd->n_heads = 0;
	if (caps & SLIM_CAP_HEADS) {
		struct slim_wire_heads h;
		if (end - p < (ptrdiff_t)sizeof(h)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&h, p, sizeof(h));
		p += sizeof(h);
		if (h.count < 1 || h.count > SLIM_MAX_HEADS) {
			return SLIM_ERR_FIELD;
		}
		size_t n = (size_t)h.count * sizeof(struct slim_wire_head);
		if ((size_t)(end - p) < n) {
			return SLIM_ERR_LENGTH;
		}
		cmd->heads = p;
		cmd->n_heads = h.count;
		p += n;
	}
	cmd->keyboard = NULL;
	if (caps & SLIM_CAP_KEYBOARD) {
		if (end - p < (ptrdiff_t)sizeof(struct slim_wire_keyboard)) {
			return SLIM_ERR_LENGTH;
		}
		cmd->keyboard = p;
		p += sizeof(struct slim_wire_keyboard);
	}
	cmd->unreached = NULL;
	if (caps & SLIM_CAP_UNREACHED) {
		if (end - p < SLIM_UNREACHED_LEN) {
			return SLIM_ERR_LENGTH;
		}
		cmd->unreached = p;
		p += SLIM_UNREACHED_LEN;
	}
	cmd->codecs = NULL;
	cmd->n_codecs = 0;
	if (caps & SLIM_CAP_CODECS) {
		struct slim_wire_codecs c;
		if (end - p < (ptrdiff_t)sizeof(c)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&c, p, sizeof(c));
		p += sizeof(c);
		if (c.count < 1 || c.count > SLIM_MAX_CODECS) {
			return SLIM_ERR_FIELD;
		}
		size_t n = (size_t)c.count * sizeof(struct slim_wire_codec);
		if ((size_t)(end - p) < n) {
			return SLIM_ERR_LENGTH;
		}
		cmd->codecs = p;
		cmd->n_codecs = c.count;
		p += n;
	}
	if (end - p != 0 && end - p != SLIM_ATTACH_TOKEN_LEN) {
		return SLIM_ERR_LENGTH;
	}
	cmd->has_token = end - p == SLIM_ATTACH_TOKEN_LEN;
	if (cmd->has_token) {
		memcpy(cmd->token, p, SLIM_ATTACH_TOKEN_LEN);
	}
	if (cmd->hello.width == 0 || cmd->hello.height == 0 ||
			cmd->hello.width > SLIM_MAX_DIM || cmd->hello.height > SLIM_MAX_DIM ||
			cmd->hello.mtu < SLIM_MIN_MTU || cmd->hello.mtu > SLIM_MAX_MTU) {
		return SLIM_ERR_FIELD;
	}
	if (cmd->heads && !slim_desk_heads_valid(cmd->heads, cmd->n_heads,
			cmd->hello.width, cmd->hello.height)) {
		return SLIM_ERR_FIELD;
	}
	return SLIM_OK;
}

static enum slim_error decode_upstream(struct slim_cmd *cmd, const uint8_t *body, size_t len)
{
	switch (cmd->type) {
	case SLIM_CMD_MIC:
		return decode_audio(cmd, body, len);
	case SLIM_CMD_VIDEO_RECOVER:
		if (len != sizeof(cmd->video_recover)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&cmd->video_recover, body, len);
		return cmd->video_recover.stream < SLIM_VIDEO_STREAMS ? SLIM_OK : SLIM_ERR_FIELD;
	case SLIM_CMD_AUDIO_REPORT:
		if (len != sizeof(cmd->audio_report)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&cmd->audio_report, body, len);
		return SLIM_OK;
	case SLIM_CMD_HELLO:
		return decode_hello(cmd, body, len);
	case SLIM_CMD_INPUT: {
		struct slim_wire_input_hdr h;
		if (len < sizeof(h) + sizeof(struct slim_wire_input) ||
				(len - sizeof(h)) % sizeof(struct slim_wire_input)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&h, body, sizeof(h));
		cmd->input.first = h.first;
		cmd->input.events = body + sizeof(h);
		cmd->input.count = (len - sizeof(h)) / sizeof(struct slim_wire_input);
		return SLIM_OK;
	}
	case SLIM_CMD_HELD: {
		struct slim_wire_held h;
		if (len < sizeof(h)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&h, body, sizeof(h));
		if (h.count > SLIM_HELD_MAX) {
			return SLIM_ERR_FIELD;
		}
		if (len != sizeof(h) + (size_t)h.count * sizeof(uint16_t)) {
			return SLIM_ERR_LENGTH;
		}
		cmd->held.next = h.next;
		cmd->held.codes = body + sizeof(h);
		cmd->held.count = h.count;
		return SLIM_OK;
	}
	case SLIM_CMD_PING:
		return len == 0 ? SLIM_OK : SLIM_ERR_LENGTH;
	case SLIM_CMD_CARD:
		if (len != sizeof(cmd->card)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&cmd->card, body, len);
		if (cmd->card.event > SLIM_CARD_INSERTED ||
				(cmd->card.event == SLIM_CARD_INSERTED &&
				(cmd->card.kind < SLIM_CARD_UID || cmd->card.kind > SLIM_CARD_ATR_HASH ||
				cmd->card.len == 0 || cmd->card.len > SLIM_CARD_TOKEN_MAX))) {
			return SLIM_ERR_FIELD;
		}
		return SLIM_OK;
	case SLIM_CMD_ACK:
		if (len != sizeof(cmd->ack)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&cmd->ack, body, len);
		return SLIM_OK;
	case SLIM_CMD_NACK: {
		struct slim_wire_nack n;
		if (len < sizeof(n)) {
			return SLIM_ERR_LENGTH;
		}
		memcpy(&n, body, sizeof(n));
		if (n.count > SLIM_NACK_MAX_RANGES || (n.flags & ~SLIM_NACK_REPAINT)) {
			return SLIM_ERR_FIELD;
		}
		if (len != sizeof(n) + (size_t)n.count * sizeof(struct slim_wire_seq_range)) {
			return SLIM_ERR_LENGTH;
		}
		cmd->nack.ranges = body + sizeof(n);
		cmd->nack.count = n.count;
		cmd->nack.flags = n.flags;
		for (size_t i = 0; i < n.count; i++) {
			struct slim_wire_seq_range range;
			slim_nack_get(cmd, i, &range);
			if (range.first > range.last) {
				return SLIM_ERR_FIELD;
			}
		}
		return SLIM_OK;
	}
	default:
		return SLIM_ERR_UNKNOWN;
	}
}

enum slim_error slim_reader_next(struct slim_reader *r, struct slim_cmd *cmd)
{
	if (r->left == 0) {
		cmd->type = 0;
		return r->p == r->end ? SLIM_OK : SLIM_ERR_TRAILING;
	}
	struct slim_wire_cmd hdr;
	if ((size_t)(r->end - r->p) < sizeof(hdr)) {
		return SLIM_ERR_SHORT;
	}
	memcpy(&hdr, r->p, sizeof(hdr));
	const uint8_t *body = r->p + sizeof(hdr);
	if ((size_t)(r->end - body) < hdr.len) {
		return SLIM_ERR_SHORT;
	}
	if (!!(hdr.type & 0x80) != r->upstream) {
		return SLIM_ERR_DIRECTION;
	}
	cmd->type = hdr.type;
	cmd->flags = hdr.flags;
	enum slim_error err = r->upstream ? decode_upstream(cmd, body, hdr.len)
		: decode_downstream(r, cmd, body, hdr.len);
	if (err != SLIM_OK) {
		return err;
	}
	r->p = body + hdr.len;
	r->left--;
	return SLIM_OK;
}

uint8_t slim_reader_peek_type(const struct slim_reader *r)
{
	if (r->left == 0 || (size_t)(r->end - r->p) < sizeof(struct slim_wire_cmd)) {
		return 0;
	}
	return r->p[0]; /* slim_wire_cmd.type */
}

void slim_input_get(const struct slim_cmd *cmd, size_t i, struct slim_wire_input *ev)
{
	memcpy(ev, cmd->input.events + i * sizeof(*ev), sizeof(*ev));
}

uint16_t slim_held_get(const struct slim_cmd *cmd, size_t i)
{
	uint16_t code;
	memcpy(&code, cmd->held.codes + i * sizeof(code), sizeof(code));
	return code;
}

void slim_nack_get(const struct slim_cmd *cmd, size_t i, struct slim_wire_seq_range *range)
{
	memcpy(range, cmd->nack.ranges + i * sizeof(*range), sizeof(*range));
}
