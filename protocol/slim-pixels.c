#include <stdlib.h>
#include <string.h>
#include "slim-pixels.h"

void slim_fb_fill(const struct slim_fb *fb, struct slim_rect r, uint32_t color)
{
	color |= SLIM_OPAQUE;
	for (uint32_t y = 0; y < r.h; y++) {
		uint32_t *row = slim_fb_row(fb, r.x, r.y + y);
		for (uint32_t x = 0; x < r.w; x++) {
			row[x] = color;
		}
	}
}

void slim_fb_copy(const struct slim_fb *fb, struct slim_rect src, uint16_t dx, uint16_t dy)
{
	size_t bytes = (size_t)src.w * 4;
	if (dy > src.y) {
		/* Moving down: walk bottom-up so no source row is overwritten first. */
		for (uint32_t y = src.h; y-- > 0;) {
			memmove(slim_fb_row(fb, dx, dy + y), slim_fb_row(fb, src.x, src.y + y), bytes);
		}
	} else {
		for (uint32_t y = 0; y < src.h; y++) {
			memmove(slim_fb_row(fb, dx, dy + y), slim_fb_row(fb, src.x, src.y + y), bytes);
		}
	}
}

void slim_fb_set(const struct slim_fb *fb, struct slim_rect r, const uint8_t *data,
		uint8_t flags)
{
	if (flags & SLIM_SET_RGB888) {
		for (uint32_t y = 0; y < r.h; y++) {
			uint32_t *row = slim_fb_row(fb, r.x, r.y + y);
			const uint8_t *p = data + (size_t)y * r.w * 3;
			uint32_t x = 0;
			/* Four pixels from three words: B0G0R0B1 G1R1B2G2 R2B3G3R3. */
			for (; x + 4 <= r.w; x += 4, p += 12) {
				uint32_t w[3];
				memcpy(w, p, sizeof(w));
				row[x] = SLIM_OPAQUE | w[0];
				row[x + 1] = SLIM_OPAQUE | w[0] >> 24 | w[1] << 8;
				row[x + 2] = SLIM_OPAQUE | w[1] >> 16 | w[2] << 16;
				row[x + 3] = SLIM_OPAQUE | w[2] >> 8;
			}
			for (; x < r.w; x++, p += 3) {
				row[x] = SLIM_OPAQUE | p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
			}
		}
		return;
	}
	for (uint32_t y = 0; y < r.h; y++) {
		uint32_t *row = slim_fb_row(fb, r.x, r.y + y);
		memcpy(row, data + (size_t)y * r.w * 4, (size_t)r.w * 4);
		for (uint32_t x = 0; x < r.w; x++) {
			row[x] |= SLIM_OPAQUE;
		}
	}
}

void slim_fb_bitmap(const struct slim_fb *fb, struct slim_rect r, uint32_t fg,
		uint32_t bg, const uint8_t *bits)
{
	bg |= SLIM_OPAQUE;
	uint32_t diff = (fg | SLIM_OPAQUE) ^ bg;
	size_t stride = ((size_t)r.w + 7) / 8;
	for (uint32_t y = 0; y < r.h; y++) {
		uint32_t *row = slim_fb_row(fb, r.x, r.y + y);
		const uint8_t *b = bits + y * stride;
		uint32_t x = 0;
		for (; x + 8 <= r.w; x += 8) {
			uint32_t byte = b[x / 8];
			for (uint32_t k = 0; k < 8; k++) {
				row[x + k] = bg ^ (diff & -((byte >> (7 - k)) & 1));
			}
		}
		for (; x < r.w; x++) {
			uint32_t bit = (b[x / 8] >> (7 - x % 8)) & 1;
			row[x] = bg ^ (diff & -bit);
		}
	}
}

void slim_fb_palette(const struct slim_fb *fb, const struct slim_palette *pal, uint8_t flags)
{
	uint32_t colors[SLIM_PALETTE_MAX];
	for (unsigned i = 0; i < pal->colors; i++) {
		const uint8_t *c = pal->table + 3 * i;
		colors[i] = SLIM_OPAQUE | c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16;
	}
	struct slim_rect r = pal->r;
	if (!(flags & SLIM_PALETTE_RLE)) {
		unsigned bits = slim_palette_bits(pal->colors), mask = (1u << bits) - 1;
		size_t stride = ((size_t)r.w * bits + 7) / 8;
		for (uint32_t y = 0; y < r.h; y++) {
			const uint8_t *in = pal->data + y * stride;
			uint32_t *row = slim_fb_row(fb, r.x, r.y + y);
			for (uint32_t x = 0; x < r.w; x++) {
				size_t bit = (size_t)x * bits;
				row[x] = colors[(in[bit / 8] >> (8 - bits - bit % 8)) & mask];
			}
		}
		return;
	}
	/* runs cross rows: x and y walk the rectangle in raster order */
	const uint8_t *p = pal->data, *end = pal->data + pal->len;
	uint32_t x = 0, y = 0;
	while (p < end) {
		uint8_t v = *p++;
		uint32_t color = colors[v & 0x7f];
		size_t run = 1;
		if (v & 0x80) {
			uint8_t b;
			do {
				b = *p++;
				run += b;
			} while (b == 255);
		}
		while (run > 0) {
			uint32_t *row = slim_fb_row(fb, r.x, r.y + y);
			uint32_t n = r.w - x < run ? r.w - x : (uint32_t)run;
			for (uint32_t i = 0; i < n; i++) {
				row[x + i] = color;
			}
			run -= n;
			x += n;
			if (x == r.w) {
				x = 0;
				y++;
			}
		}
	}
}

/*
 * CSCS: YUV 4:2:0 to RGB with bilinear scaling, in integer arithmetic so
 * that every implementation produces the same pixels (slim-protocol.md,
 * "CSCS"). Rows are first interpolated horizontally, then vertically; the
 * horizontally interpolated rows are cached, since with upscaling several
 * screen rows use the same pair of source rows.
 *
 * The arithmetic is chosen to fit 16-bit SIMD lanes: 7-bit filter weights,
 * and a conversion whose intermediate sums stay within int16 (or saturate
 * only where the result clamps anyway). The SSE2 path below and the scalar
 * path produce identical pixels.
 */
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define CSCS_MAX_W SLIM_MAX_DIM

struct row_cache {
	int32_t tag[2];
	int16_t *buf[2];
};

struct slim_cscs_scratch {
	/* per destination column: source sample indices and weights */
	int32_t lx0[CSCS_MAX_W], lx1[CSCS_MAX_W], cx0[CSCS_MAX_W], cx1[CSCS_MAX_W];
	int16_t lfx[CSCS_MAX_W], cfx[CSCS_MAX_W];
	int16_t rows[6][CSCS_MAX_W];
	struct row_cache y, u, v;
	/* 4-bit planes unpacked to 8 bits */
	uint8_t planes[SLIM_MAX_PIECE_PIXELS + 2 * (SLIM_MAX_PIECE_PIXELS / 2 + 2)];
};

struct slim_cscs_scratch *slim_cscs_scratch_create(void)
{
	struct slim_cscs_scratch *s = calloc(1, sizeof(*s));
	if (!s) {
		return NULL;
	}
	struct row_cache *caches[3] = { &s->y, &s->u, &s->v };
	for (int k = 0; k < 3; k++) {
		caches[k]->buf[0] = s->rows[2 * k];
		caches[k]->buf[1] = s->rows[2 * k + 1];
	}
	return s;
}

void slim_cscs_scratch_destroy(struct slim_cscs_scratch *s)
{
	free(s);
}

static inline int clamp8(int v)
{
	return v < 0 ? 0 : v > 255 ? 255 : v;
}

/*
 * BT.601 limited range: 1.164 (Y - 16) as Y * 257 * 19003 / 65536 - 1192
 * in units of 1/64, chroma coefficients in 1/64 too.
 */
uint32_t slim_yuv_to_xrgb(int y, int u, int v)
{
	int yy = (int)(((uint32_t)y * 257u * 19003u) >> 16) - 1192;
	int d = u - 128, e = v - 128;
	int r = clamp8((yy + 102 * e + 32) >> 6);
	int g = clamp8((yy - 25 * d - 52 * e + 32) >> 6);
	int b = clamp8((yy + 129 * d + 32) >> 6);
	return SLIM_OPAQUE | (uint32_t)r << 16 | (uint32_t)g << 8 | (uint32_t)b;
}

/*
 * The source position of destination index i (0 at the destination's
 * edge) is (i + 0.5) * src / dst - 0.5, in 16.16 fixed point:
 * s(i) = floor((2i + 1) * src * 32768 / dst) - 32768, clamped to
 * [0, (src - 1) << 16]. It reads samples s >> 16 and the next (clamped to
 * the image), weighted by the 7-bit fraction (s >> 9) & 127, and clamped
 * again to the samples the piece carries, [lo, hi].
 */
struct axis_map {
	uint64_t q, r, step_q, step_r, dst;
	int64_t max;
	int32_t src, lo, hi;
};

static void axis_begin(struct axis_map *m, uint32_t i, uint32_t src, uint32_t dst,
		int32_t lo, int32_t hi)
{
	uint64_t num = (uint64_t)(2 * i + 1) * src * 32768;
	uint64_t step = (uint64_t)2 * src * 32768;
	*m = (struct axis_map){
		.q = num / dst, .r = num % dst, .step_q = step / dst, .step_r = step % dst,
		.dst = dst, .max = (int64_t)(src - 1) << 16, .src = (int32_t)src, .lo = lo, .hi = hi,
	};
}

/* Maps the current index, then advances to the next one (no division). */
static void axis_next(struct axis_map *m, int32_t *i0, int32_t *i1, int16_t *frac)
{
	int64_t s = (int64_t)m->q - 32768;
	s = s < 0 ? 0 : s > m->max ? m->max : s;
	int32_t a = (int32_t)(s >> 16);
	int32_t b = a + 1 < m->src ? a + 1 : a;
	*frac = (int16_t)((s >> 9) & 127);
	*i0 = a < m->lo ? m->lo : a > m->hi ? m->hi : a;
	*i1 = b < m->lo ? m->lo : b > m->hi ? m->hi : b;
	m->q += m->step_q;
	m->r += m->step_r;
	if (m->r >= m->dst) {
		m->r -= m->dst;
		m->q++;
	}
}

static void map_one(uint32_t i, uint32_t src, uint32_t dst, int32_t lo, int32_t hi,
		int32_t *i0, int32_t *i1, int16_t *frac)
{
	struct axis_map m;
	axis_begin(&m, i, src, dst, lo, hi);
	axis_next(&m, i0, i1, frac);
}

void slim_cscs_span(uint32_t d0, uint32_t d1, uint32_t src, uint32_t dst,
		uint32_t *first, uint32_t *last)
{
	int32_t a0, a1, b0, b1;
	int16_t f;
	int32_t hi = (int32_t)src - 1;
	map_one(d0, src, dst, 0, hi, &a0, &a1, &f);
	map_one(d1 - 1, src, dst, 0, hi, &b0, &b1, &f);
	*first = (uint32_t)a0;
	*last = (uint32_t)b1;
}

static void unpack4(uint8_t *out, const uint8_t *in, size_t in_stride, uint32_t w, uint32_t h)
{
	for (uint32_t y = 0; y < h; y++) {
		const uint8_t *row = in + y * in_stride;
		for (uint32_t x = 0; x < w; x++) {
			uint8_t b = row[x / 2];
			out[(size_t)y * w + x] = (uint8_t)(((x & 1) ? b & 0xf : b >> 4) * 17);
		}
	}
}

/* Horizontal pass: 128 x the sample, 0..32640. */
static void hrow(int16_t *out, const uint8_t *src, const int32_t *x0, const int32_t *x1,
		const int16_t *fx, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		out[i] = (int16_t)(src[x0[i]] * (128 - fx[i]) + src[x1[i]] * fx[i]);
	}
}

/* Returns the horizontally interpolated source row `r`, computing it if needed. */
static const int16_t *cached_row(struct row_cache *c, int32_t r, int32_t keep,
		const uint8_t *plane, size_t stride, const int32_t *x0, const int32_t *x1,
		const int16_t *fx, uint32_t n)
{
	for (int k = 0; k < 2; k++) {
		if (c->tag[k] == r) {
			return c->buf[k];
		}
	}
	int k = c->tag[0] == keep ? 1 : 0;
	hrow(c->buf[k], plane + (size_t)r * stride, x0, x1, fx, n);
	c->tag[k] = r;
	return c->buf[k];
}

/* Vertical pass: the sample, 0..255. */
static inline int vlerp(const int16_t *a, const int16_t *b, int f, uint32_t i)
{
	return (a[i] * (128 - f) + b[i] * f + 8192) >> 14;
}

#ifdef __SSE2__
static inline __m128i vlerp8(const int16_t *a, const int16_t *b, __m128i w)
{
	const __m128i round = _mm_set1_epi32(8192);
	__m128i va = _mm_loadu_si128((const __m128i *)a);
	__m128i vb = _mm_loadu_si128((const __m128i *)b);
	__m128i lo = _mm_madd_epi16(_mm_unpacklo_epi16(va, vb), w);
	__m128i hi = _mm_madd_epi16(_mm_unpackhi_epi16(va, vb), w);
	lo = _mm_srai_epi32(_mm_add_epi32(lo, round), 14);
	hi = _mm_srai_epi32(_mm_add_epi32(hi, round), 14);
	return _mm_packs_epi32(lo, hi);
}

static inline __m128i weights(int f)
{
	return _mm_set1_epi32((int)((uint32_t)f << 16 | (uint32_t)(128 - f)));
}

/* Eight pixels of slim_yuv_to_xrgb, in int16 lanes. */
static void convert8(uint32_t *out, __m128i y, __m128i u, __m128i v)
{
	const __m128i c128 = _mm_set1_epi16(128), c32 = _mm_set1_epi16(32);
	__m128i yy = _mm_sub_epi16(_mm_mulhi_epu16(_mm_or_si128(_mm_slli_epi16(y, 8), y),
		_mm_set1_epi16(19003)), _mm_set1_epi16(1192));
	__m128i d = _mm_sub_epi16(u, c128), e = _mm_sub_epi16(v, c128);
	__m128i r = _mm_adds_epi16(yy, _mm_mullo_epi16(e, _mm_set1_epi16(102)));
	__m128i g = _mm_adds_epi16(yy, _mm_add_epi16(_mm_mullo_epi16(d, _mm_set1_epi16(-25)),
		_mm_mullo_epi16(e, _mm_set1_epi16(-52))));
	__m128i b = _mm_adds_epi16(yy, _mm_mullo_epi16(d, _mm_set1_epi16(129)));
	r = _mm_srai_epi16(_mm_adds_epi16(r, c32), 6);
	g = _mm_srai_epi16(_mm_adds_epi16(g, c32), 6);
	b = _mm_srai_epi16(_mm_adds_epi16(b, c32), 6);
	__m128i r8 = _mm_packus_epi16(r, r), g8 = _mm_packus_epi16(g, g);
	__m128i b8 = _mm_packus_epi16(b, b);
	__m128i bg = _mm_unpacklo_epi8(b8, g8);
	__m128i ra = _mm_unpacklo_epi8(r8, _mm_set1_epi8(-1));
	_mm_storeu_si128((__m128i *)out, _mm_unpacklo_epi16(bg, ra));
	_mm_storeu_si128((__m128i *)(out + 4), _mm_unpackhi_epi16(bg, ra));
}
#endif

struct cscs_rows {
	const int16_t *ya, *yb, *ua, *ub, *va, *vb;
	int fy, cfy;
};

static void convert_row(uint32_t *row, const struct cscs_rows *r, uint32_t n)
{
	uint32_t i = 0;
#ifdef __SSE2__
	__m128i wy = weights(r->fy), wc = weights(r->cfy);
	for (; i + 8 <= n; i += 8) {
		convert8(row + i, vlerp8(r->ya + i, r->yb + i, wy),
			vlerp8(r->ua + i, r->ub + i, wc), vlerp8(r->va + i, r->vb + i, wc));
	}
#endif
	for (; i < n; i++) {
		row[i] = slim_yuv_to_xrgb(vlerp(r->ya, r->yb, r->fy, i),
			vlerp(r->ua, r->ub, r->cfy, i), vlerp(r->va, r->vb, r->cfy, i));
	}
}

void slim_fb_cscs(const struct slim_fb *fb, const struct slim_cscs *c,
		struct slim_cscs_scratch *s)
{
	const struct slim_rect p = c->psrc, q = c->pdst;
	uint32_t cw = (c->src_w + 1u) / 2, ch = (c->src_h + 1u) / 2;
	/* The piece's chroma samples: its even-aligned luma samples, halved. */
	int32_t cxlo = p.x / 2, cylo = p.y / 2;
	int32_t cxhi = (p.x + p.w + 1) / 2 - 1, cyhi = (p.y + p.h + 1) / 2 - 1;
	uint32_t pcw = (uint32_t)(cxhi - cxlo + 1), pch = (uint32_t)(cyhi - cylo + 1);

	const uint8_t *yp = c->y, *up = c->u, *vp = c->v;
	size_t ys = c->y_stride, cs = c->c_stride;
	if (c->depth == SLIM_CSCS_DEPTH4) {
		uint8_t *out = s->planes;
		unpack4(out, c->y, c->y_stride, p.w, p.h);
		yp = out;
		out += (size_t)p.w * p.h;
		unpack4(out, c->u, c->c_stride, pcw, pch);
		up = out;
		out += (size_t)pcw * pch;
		unpack4(out, c->v, c->c_stride, pcw, pch);
		vp = out;
		ys = p.w;
		cs = pcw;
	}

	/* Column tables, relative to the piece's first sample. */
	struct axis_map lm, cm;
	axis_begin(&lm, q.x - c->dst.x, c->src_w, c->dst.w, p.x, p.x + p.w - 1);
	axis_begin(&cm, q.x - c->dst.x, cw, c->dst.w, cxlo, cxhi);
	for (uint32_t i = 0; i < q.w; i++) {
		axis_next(&lm, &s->lx0[i], &s->lx1[i], &s->lfx[i]);
		axis_next(&cm, &s->cx0[i], &s->cx1[i], &s->cfx[i]);
		s->lx0[i] -= p.x;
		s->lx1[i] -= p.x;
		s->cx0[i] -= cxlo;
		s->cx1[i] -= cxlo;
	}
	s->y.tag[0] = s->y.tag[1] = s->u.tag[0] = s->u.tag[1] = -1;
	s->v.tag[0] = s->v.tag[1] = -1;

	axis_begin(&lm, q.y - c->dst.y, c->src_h, c->dst.h, p.y, p.y + p.h - 1);
	axis_begin(&cm, q.y - c->dst.y, ch, c->dst.h, cylo, cyhi);
	for (uint32_t j = 0; j < q.h; j++) {
		int32_t y0, y1, c0, c1;
		int16_t fy, cfy;
		axis_next(&lm, &y0, &y1, &fy);
		axis_next(&cm, &c0, &c1, &cfy);
		y0 -= p.y;
		y1 -= p.y;
		c0 -= cylo;
		c1 -= cylo;
		struct cscs_rows r = {
			.ya = cached_row(&s->y, y0, y1, yp, ys, s->lx0, s->lx1, s->lfx, q.w),
			.yb = cached_row(&s->y, y1, y0, yp, ys, s->lx0, s->lx1, s->lfx, q.w),
			.ua = cached_row(&s->u, c0, c1, up, cs, s->cx0, s->cx1, s->cfx, q.w),
			.ub = cached_row(&s->u, c1, c0, up, cs, s->cx0, s->cx1, s->cfx, q.w),
			.va = cached_row(&s->v, c0, c1, vp, cs, s->cx0, s->cx1, s->cfx, q.w),
			.vb = cached_row(&s->v, c1, c0, vp, cs, s->cx0, s->cx1, s->cfx, q.w),
			.fy = fy, .cfy = cfy,
		};
		convert_row(slim_fb_row(fb, q.x, q.y + j), &r, q.w);
	}
}
