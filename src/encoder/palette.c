/*
 * Tiles of a few colours: anti-aliased text and flat UI, which BITMAP's two
 * colours cannot take and LZ4 codes poorly (it finds no long repeats in a
 * glyph). A PALETTE sends the tile's colours once and an index a pixel,
 * packed at 1-8 bits or in runs, whichever is smaller.
 */
#include <string.h>
#include "encoder-internal.h"

static uint32_t slot_of(uint32_t color)
{
	return (color * 0x9e3779b1u) >> 23; /* the top 9 bits: PALETTE_HASH slots */
}

_Static_assert(PALETTE_HASH == 1 << 9, "slot_of gives 9 bits");

/* Forgets every colour: a new generation makes every slot empty. */
static void palette_clear(struct slim_encoder *enc)
{
	if (++enc->palette.gen == 0) {
		memset(enc->palette.hash, 0, sizeof(enc->palette.hash));
		enc->palette.gen = 1;
	}
}

static struct palette_slot *palette_find(struct slim_encoder *enc, uint32_t color)
{
	for (uint32_t i = slot_of(color);; i = (i + 1) % PALETTE_HASH) {
		struct palette_slot *s = &enc->palette.hash[i];
		if (s->gen != enc->palette.gen || s->color == color) {
			return s;
		}
	}
}

/*
 * zstd finds a glyph drawn twice in a datagram's raw pixels, not in two
 * tiles' indices into two different tables: on anti-aliased text (70-100
 * colours a tile) raw pixels then cost less. Measured on screens of foot
 * and gtk3-demo, 32 colours is where the table stops paying.
 */
#define PALETTE_MAX_ZSTD 32

/*
 * The tile's colours into enc->palette.colors, its indices into
 * enc->palette.index: how many, 0 if over max.
 */
static unsigned index_tile(struct slim_encoder *enc, const struct slim_fb *fb,
		struct slim_rect r, unsigned max)
{
	palette_clear(enc);
	unsigned n = 0;
	uint8_t *out = enc->palette.index;
	uint32_t last = 0;
	uint8_t last_index = 0;
	bool have_last = false;
	for (uint32_t y = 0; y < r.h; y++) {
		const uint32_t *row = slim_fb_row(fb, r.x, r.y + y);
		for (uint32_t x = 0; x < r.w; x++) {
			uint32_t c = pixel_rgb(row[x]);
			if (!have_last || c != last) {
				struct palette_slot *s = palette_find(enc, c);
				if (s->gen != enc->palette.gen) {
					if (n == max) {
						return 0;
					}
					*s = (struct palette_slot){ c, enc->palette.gen, (uint8_t)n };
					enc->palette.colors[n++] = c;
				}
				last = c;
				last_index = s->index;
				have_last = true;
			}
			*out++ = last_index;
		}
	}
	return n;
}

/* What the indices take in runs (SLIM_PALETTE_RLE). */
static size_t runs_len(const uint8_t *idx, size_t n)
{
	size_t len = 0;
	for (size_t i = 0; i < n;) {
		size_t run = 1;
		while (i + run < n && idx[i + run] == idx[i]) {
			run++;
		}
		len += run == 1 ? 1 : 1 + (run - 1) / 255 + 1;
		i += run;
	}
	return len;
}

static size_t put_runs(uint8_t *out, const uint8_t *idx, size_t n)
{
	uint8_t *p = out;
	for (size_t i = 0; i < n;) {
		size_t run = 1;
		while (i + run < n && idx[i + run] == idx[i]) {
			run++;
		}
		i += run;
		if (run == 1) {
			*p++ = idx[i - 1];
			continue;
		}
		*p++ = (uint8_t)(idx[i - 1] | 0x80);
		for (run--; run >= 255; run -= 255) {
			*p++ = 255;
		}
		*p++ = (uint8_t)run;
	}
	return (size_t)(p - out);
}

static size_t put_packed(uint8_t *out, const uint8_t *idx, struct slim_rect r,
		unsigned colors)
{
	unsigned bits = slim_palette_bits(colors);
	size_t stride = ((size_t)r.w * bits + 7) / 8;
	memset(out, 0, stride * r.h);
	for (uint32_t y = 0; y < r.h; y++) {
		uint8_t *row = out + y * stride;
		for (uint32_t x = 0; x < r.w; x++) {
			size_t bit = (size_t)x * bits;
			row[bit / 8] |= (uint8_t)(*idx++ << (8 - bits - bit % 8));
		}
	}
	return stride * r.h;
}

/* The PALETTE's body into enc->palette.body, indices packed or in runs; returns its length. */
static size_t put_body(struct slim_encoder *enc, struct slim_rect r, unsigned colors,
		uint8_t *flags)
{
	size_t n = (size_t)r.w * r.h;
	size_t packed = slim_palette_packed_len(r.w, r.h, colors);
	size_t runs = runs_len(enc->palette.index, n);
	struct slim_wire_palette w = {
		.r = { r.x, r.y, r.w, r.h }, .colors = (uint8_t)colors,
	};
	uint8_t *p = enc->palette.body;
	memcpy(p, &w, sizeof(w));
	p += sizeof(w);
	for (unsigned i = 0; i < colors; i++) {
		*p++ = (uint8_t)enc->palette.colors[i];
		*p++ = (uint8_t)(enc->palette.colors[i] >> 8);
		*p++ = (uint8_t)(enc->palette.colors[i] >> 16);
	}
	if (runs < packed) {
		*flags = SLIM_PALETTE_RLE;
		p += put_runs(p, enc->palette.index, n);
	} else {
		*flags = 0;
		p += put_packed(p, enc->palette.index, r, colors);
	}
	return (size_t)(p - enc->palette.body);
}

/*
 * Whether `len` bytes of PALETTE beat a SET. Up to 16 colours, 4 bits an
 * index against 24 or 32 a pixel: raw is the bar; LZ4 is only asked (it
 * costs as much again) when the indices take 8 bits.
 */
static bool cheaper(struct slim_encoder *enc, const struct slim_fb *fb, struct slim_rect t,
		size_t len, unsigned colors)
{
	if (colors <= 16) {
		return len < (size_t)t.w * t.h * (enc->cfg.rgb888 ? 3 : 4);
	}
	return len < set_cost(enc, fb, t);
}

bool send_palette(struct slim_encoder *enc, const struct slim_fb *fb, struct slim_rect t)
{
	unsigned colors = index_tile(enc, fb, t, enc->cfg.zstd ? PALETTE_MAX_ZSTD : SLIM_PALETTE_MAX);
	if (colors == 0) {
		return false;
	}
	uint8_t flags;
	size_t len = put_body(enc, t, colors, &flags);
	if (len > packer_max_body(&enc->packer) || !cheaper(enc, fb, t, len, colors)) {
		return false;
	}
	emit_palette(&enc->packer, flags, enc->palette.body, len);
	return true;
}
