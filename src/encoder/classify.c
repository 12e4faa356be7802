/*
 * The encoder's hot path: a damaged rectangle is cut into tiles, each tile
 * is shrunk to the bounds of what really differs from the console's model
 * (clients over-report damage), and what is left is sent as the cheapest
 * command that reproduces it exactly: one colour -> FILL, two -> BITMAP,
 * up to 127 -> PALETTE (palette.c) when that is smaller than SET, else SET,
 * LZ4-compressed when that is smaller.
 */
#include <string.h>
#include "encoder-internal.h"

/* Written so that the compiler vectorises it: OR the differences, mask once. */
static bool rows_equal(const uint32_t *a, const uint32_t *b, uint32_t n)
{
	uint32_t acc = 0;
	for (uint32_t i = 0; i < n; i++) {
		acc |= a[i] ^ b[i];
	}
	return pixel_rgb(acc) == 0;
}

/* Shrinks *t to the bounds of what differs; false when nothing does. */
static bool refine(const struct slim_fb *fb, const struct slim_fb *model, struct slim_rect *t)
{
	int32_t first = -1, last = -1;
	uint32_t left = t->w, right = 0;
	for (uint32_t y = 0; y < t->h; y++) {
		const uint32_t *a = slim_fb_row(fb, t->x, t->y + y);
		const uint32_t *b = slim_fb_row(model, t->x, t->y + y);
		if (rows_equal(a, b, t->w)) {
			continue;
		}
		if (first < 0) {
			first = (int32_t)y;
		}
		last = (int32_t)y;
		uint32_t l = 0;
		while (l < left && pixel_rgb(a[l] ^ b[l]) == 0) {
			l++;
		}
		left = l;
		uint32_t r = t->w;
		while (r > right && pixel_rgb(a[r - 1] ^ b[r - 1]) == 0) {
			r--;
		}
		right = r;
	}
	if (first < 0) {
		return false;
	}
	*t = (struct slim_rect){ (uint16_t)(t->x + left), (uint16_t)(t->y + first),
		(uint16_t)(right - left), (uint16_t)(last - first + 1) };
	return true;
}

static bool uniform(const struct slim_fb *fb, struct slim_rect r, uint32_t color)
{
	for (uint32_t y = 0; y < r.h; y++) {
		const uint32_t *row = slim_fb_row(fb, r.x, r.y + y);
		uint32_t acc = 0;
		for (uint32_t x = 0; x < r.w; x++) {
			acc |= row[x] ^ color;
		}
		if (pixel_rgb(acc) != 0) {
			return false;
		}
	}
	return true;
}

/*
 * Builds the BITMAP of a two-colour area: bit set where the pixel is not
 * `bg`. Returns false at the first third colour.
 */
static bool two_colours(const struct slim_fb *fb, struct slim_rect r, uint32_t bg,
		uint32_t *fg, uint8_t *bits)
{
	size_t stride = ((size_t)r.w + 7) / 8;
	memset(bits, 0, stride * r.h);
	bool have_fg = false;
	for (uint32_t y = 0; y < r.h; y++) {
		const uint32_t *row = slim_fb_row(fb, r.x, r.y + y);
		uint8_t *b = bits + y * stride;
		for (uint32_t x = 0; x < r.w; x++) {
			uint32_t p = pixel_rgb(row[x]);
			if (p == bg) {
				continue;
			}
			if (!have_fg) {
				*fg = p;
				have_fg = true;
			} else if (p != *fg) {
				return false;
			}
			b[x / 8] |= (uint8_t)(0x80 >> (x % 8));
		}
	}
	return true;
}

void flush_fill(struct slim_encoder *enc)
{
	if (enc->fill.pending) {
		emit_fill(&enc->packer, enc->fill.rect, enc->fill.color);
		enc->fill.pending = false;
	}
}

/*
 * FILLs of neighbouring tiles with one colour become one command: side by
 * side in a row, or one under the other (the strip a moved window
 * uncovers, tile row after tile row; the tiles between are disjoint from
 * it, so the FILL may go after them).
 */
static void queue_fill(struct slim_encoder *enc, struct slim_rect r, uint32_t color)
{
	struct slim_rect *f = &enc->fill.rect;
	if (enc->fill.pending && enc->fill.color == color && f->y == r.y && f->h == r.h &&
			f->x + f->w == r.x) {
		f->w = (uint16_t)(f->w + r.w);
		return;
	}
	if (enc->fill.pending && enc->fill.color == color && f->x == r.x && f->w == r.w &&
			f->y + f->h == r.y) {
		f->h = (uint16_t)(f->h + r.h);
		return;
	}
	flush_fill(enc);
	enc->fill.pending = true;
	enc->fill.rect = r;
	enc->fill.color = color;
}

static void pack_pixels(const struct slim_fb *fb, struct slim_rect r, bool rgb888,
		uint8_t *out)
{
	for (uint32_t y = 0; y < r.h; y++) {
		const uint32_t *row = slim_fb_row(fb, r.x, r.y + y);
		if (rgb888) {
			for (uint32_t x = 0; x < r.w; x++) {
				out[0] = (uint8_t)row[x];
				out[1] = (uint8_t)(row[x] >> 8);
				out[2] = (uint8_t)(row[x] >> 16);
				out += 3;
			}
		} else {
			memcpy(out, row, (size_t)r.w * 4);
			out += (size_t)r.w * 4;
		}
	}
}

/*
 * Sends the tile's pixels as SET pieces that each fit one datagram. LZ4
 * is asked how many bytes it can fit in the room left: when that is more
 * rows than raw pixels would be, those rows go compressed.
 */
static void send_pixels(struct slim_encoder *enc, const struct slim_fb *fb, struct slim_rect r)
{
	struct slim_packer *p = &enc->packer;
	uint8_t flags = enc->cfg.rgb888 ? SLIM_SET_RGB888 : 0;
	size_t row_bytes = (size_t)r.w * (enc->cfg.rgb888 ? 3 : 4);
	size_t max_room = packer_max_body(p) - sizeof(struct slim_wire_set);
	pack_pixels(fb, r, enc->cfg.rgb888, enc->tile.pack);

	for (uint32_t y = 0; y < r.h;) {
		size_t room = packer_room(p);
		room = room > sizeof(struct slim_wire_set) ? room - sizeof(struct slim_wire_set) : 0;
		if (room < row_bytes || room < max_room / 4) {
			packer_flush(p);
			room = max_room;
		}
		const uint8_t *src = enc->tile.pack + y * row_bytes;
		uint32_t rows_left = r.h - y;
		uint32_t raw_rows = (uint32_t)(room / row_bytes);
		raw_rows = raw_rows < rows_left ? raw_rows : rows_left;
		uint32_t rows = raw_rows;
		const uint8_t *data = src;
		size_t len = rows * row_bytes;
		uint8_t f = flags;
		if (enc->cfg.lz4) {
			int whole = (int)(rows_left * row_bytes);
			int consumed = whole;
			int n = LZ4_compress_destSize((const char *)src, (char *)enc->tile.lz4,
				&consumed, (int)room);
			uint32_t lz_rows = (uint32_t)consumed / (uint32_t)row_bytes;
			bool use = false;
			if (consumed == whole && n > 0 && n < whole) {
				rows = rows_left;
				use = true;
			} else if (lz_rows > raw_rows) {
				n = LZ4_compress_default((const char *)src, (char *)enc->tile.lz4,
					(int)(lz_rows * row_bytes), (int)room);
				if (n > 0) {
					rows = lz_rows;
					use = true;
				}
			}
			if (use) {
				data = enc->tile.lz4;
				len = (size_t)n;
				f |= SLIM_SET_LZ4;
			}
		}
		struct slim_rect piece = { r.x, (uint16_t)(r.y + y), r.w, (uint16_t)rows };
		emit_set(p, piece, f, src, data, len);
		y += rows;
	}
}

/*
 * What a SET of the tile would cost at best: a PALETTE of more than 16
 * colours (8 bits an index) can lose to LZ4 on smooth content.
 */
size_t set_cost(struct slim_encoder *enc, const struct slim_fb *fb, struct slim_rect t)
{
	size_t raw = (size_t)t.w * t.h * (enc->cfg.rgb888 ? 3 : 4);
	if (!enc->cfg.lz4) {
		return raw;
	}
	pack_pixels(fb, t, enc->cfg.rgb888, enc->tile.pack);
	int n = LZ4_compress_default((const char *)enc->tile.pack, (char *)enc->tile.lz4,
		(int)raw, (int)sizeof(enc->tile.lz4));
	return n > 0 && (size_t)n < raw ? (size_t)n : raw;
}

/* A tile of more than one colour, as the cheapest command that paints it exactly. */
static void send_tile_pixels(struct slim_encoder *enc, const struct slim_fb *fb,
		struct slim_rect t, uint32_t bg)
{
	uint32_t fg = 0;
	if (two_colours(fb, t, bg, &fg, enc->tile.bits)) {
		emit_bitmap(&enc->packer, t, fg | SLIM_OPAQUE, bg | SLIM_OPAQUE, enc->tile.bits);
		return;
	}
	if (enc->cfg.palette && send_palette(enc, fb, t)) {
		return;
	}
	send_pixels(enc, fb, t);
}

/* Smaller tiles cost hardly more sent than drawn from the cache. */
#define CACHE_MIN_PIXELS 64

/*
 * After a tile went out as one command: keeps it in the console's cache
 * (when it was sent before), in the same datagram, so that the store
 * copies exactly what that command painted.
 */
static void keep_tile(struct slim_encoder *enc, struct slim_rect t, const uint8_t *hash)
{
	struct slim_packer *p = &enc->packer;
	size_t store = sizeof(struct slim_wire_cmd) + sizeof(struct slim_wire_cache);
	/* the two must fit one datagram raw, as packer.c's split keeps them */
	if (p->last_cmd + store > packer_max_body(p) + sizeof(struct slim_wire_cmd) ||
			packer_room(p) < sizeof(struct slim_wire_cache)) {
		return;
	}
	int slot = cache_store(enc->cache, hash, t, p->seq);
	if (slot >= 0) {
		emit_cache_store(p, (uint16_t)slot, t);
	}
}

/* forced: t is being repaired, so the cache is not trusted for it */
static void send_tile(struct slim_encoder *enc, const struct slim_fb *fb, struct slim_rect t,
		bool forced)
{
	uint32_t bg = pixel_rgb(*slim_fb_row(fb, t.x, t.y));
	if (uniform(fb, t, bg)) {
		queue_fill(enc, t, bg);
		return;
	}
	uint8_t hash[CACHE_HASH_BYTES];
	bool keep = false;
	size_t pixels = (size_t)t.w * t.h;
	if (enc->cache && pixels >= CACHE_MIN_PIXELS && pixels <= SLIM_CACHE_SLOT_PIXELS) {
		int slot = cache_lookup(enc->cache, fb, t, hash);
		if (slot >= 0 && !forced) {
			emit_cache_draw(&enc->packer, (uint16_t)slot, t, fb);
			return;
		}
		keep = slot == CACHE_MISS && cache_admit(enc->cache, hash);
	}
	uint64_t commands = enc->packer.commands;
	send_tile_pixels(enc, fb, t, bg);
	if (keep && enc->packer.commands == commands + 1) {
		keep_tile(enc, t, hash);
	}
}

void encode_rect(struct slim_encoder *enc, const struct slim_fb *fb, struct slim_rect r,
		bool forced)
{
	uint32_t y_end = (uint32_t)r.y + r.h, x_end = (uint32_t)r.x + r.w;
	for (uint32_t ty = r.y - r.y % TILE_H; ty < y_end; ty += TILE_H) {
		for (uint32_t tx = r.x - r.x % TILE_W; tx < x_end; tx += TILE_W) {
			struct slim_rect tile = { (uint16_t)tx, (uint16_t)ty, TILE_W, TILE_H }, t;
			if (!rect_intersect(tile, r, &t)) {
				continue;
			}
			if (!forced && !refine(fb, &enc->model, &t)) {
				continue;
			}
			enc->stats.changed_pixels += (uint64_t)t.w * t.h;
			send_tile(enc, fb, t, forced);
		}
	}
	flush_fill(enc);
}
