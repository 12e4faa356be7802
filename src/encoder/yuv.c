/*
 * The server's half of CSCS: a part of the framebuffer turned into YUV
 * 4:2:0 (BT.601 limited range, as the console's slim_yuv_to_xrgb expects),
 * at the resolution a bandwidth budget allows. A smaller source is made by
 * averaging each sample's whole footprint (a box filter), which keeps fine
 * detail from aliasing; the console scales back up bilinearly.
 *
 * Memory grows with the largest image seen and is then reused, so a
 * playing video allocates nothing per frame.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "encoder.h"

/*
 * Bits a source sample costs on the wire, measured: 12 at depth 8, plus the
 * samples pieces share at their edges for the bilinear filter, plus headers.
 */
#define BITS_PER_SAMPLE 16.4
/* A source sample stands for at most 16 x 16 pixels: the sums stay in 16 bits. */
#define MAX_SHRINK 16

static bool reserve(struct slim_yuv_planes *p, size_t size)
{
	if (p->size >= size) {
		return true;
	}
	uint8_t *data = realloc(p->data, size);
	if (!data) {
		return false;
	}
	p->data = data;
	p->size = size;
	return true;
}

void slim_yuv_planes_finish(struct slim_yuv_planes *p)
{
	free(p->data);
	*p = (struct slim_yuv_planes){ 0 };
}

static inline uint8_t luma(uint32_t r, uint32_t g, uint32_t b)
{
	return (uint8_t)(((66 * r + 129 * g + 25 * b + 128) >> 8) + 16);
}

/* Offset by 128 << 8 so that the sums stay positive. */
static inline uint8_t chroma_u(uint32_t r, uint32_t g, uint32_t b)
{
	return (uint8_t)((32896 + 112 * b - 38 * r - 74 * g) >> 8);
}

static inline uint8_t chroma_v(uint32_t r, uint32_t g, uint32_t b)
{
	return (uint8_t)((32896 + 112 * r - 94 * g - 18 * b) >> 8);
}

#define R(p) (((p) >> 16) & 0xff)
#define G(p) (((p) >> 8) & 0xff)
#define B(p) ((p) & 0xff)

/* Two rows of XRGB pixels (the second may be the first again) to Y, U and V. */
static void convert_rows(const uint32_t *s0, const uint32_t *s1, uint32_t w, uint8_t *y0,
		uint8_t *y1, uint8_t *u, uint8_t *v)
{
	for (uint32_t i = 0; i < w; i++) {
		y0[i] = luma(R(s0[i]), G(s0[i]), B(s0[i]));
		y1[i] = luma(R(s1[i]), G(s1[i]), B(s1[i]));
	}
	for (uint32_t i = 0; i < w / 2; i++) {
		uint32_t a = s0[2 * i], b = s0[2 * i + 1], c = s1[2 * i], d = s1[2 * i + 1];
		uint32_t r = (R(a) + R(b) + R(c) + R(d) + 2) >> 2;
		uint32_t g = (G(a) + G(b) + G(c) + G(d) + 2) >> 2;
		uint32_t bl = (B(a) + B(b) + B(c) + B(d) + 2) >> 2;
		u[i] = chroma_u(r, g, bl);
		v[i] = chroma_v(r, g, bl);
	}
	if (w & 1) {
		uint32_t a = s0[w - 1], c = s1[w - 1];
		uint32_t r = (R(a) + R(c) + 1) >> 1, g = (G(a) + G(c) + 1) >> 1;
		uint32_t bl = (B(a) + B(c) + 1) >> 1;
		u[w / 2] = chroma_u(r, g, bl);
		v[w / 2] = chroma_v(r, g, bl);
	}
}

/*
 * Box-filters `box` of fb down to dw x dh XRGB pixels in `out`, separably:
 * the source rows of each output row are summed per column, red and blue
 * in the two 16-bit halves of one word, green in another (loops the
 * compiler vectorizes), then each output pixel sums its columns. A
 * footprint holds at most 256 pixels (MAX_SHRINK on each axis), so no half
 * overflows.
 */
static void downscale(const struct slim_fb *fb, struct slim_rect box, uint32_t dw,
		uint32_t dh, uint32_t *out, uint32_t *rb, uint32_t *g, uint32_t *xs)
{
	/* 65536 / n, rounded, for every footprint size */
	static uint32_t recip[MAX_SHRINK * MAX_SHRINK + 1];
	if (recip[1] == 0) {
		for (uint32_t n = 1; n <= MAX_SHRINK * MAX_SHRINK; n++) {
			recip[n] = (65536 + n / 2) / n;
		}
	}
	for (uint32_t i = 0; i <= dw; i++) {
		xs[i] = i * box.w / dw;
	}
	for (uint32_t j = 0; j < dh; j++) {
		uint32_t sy0 = j * box.h / dh, sy1 = (j + 1) * box.h / dh;
		memset(rb, 0, (size_t)box.w * sizeof(*rb));
		memset(g, 0, (size_t)box.w * sizeof(*g));
		for (uint32_t sy = sy0; sy < sy1; sy++) {
			const uint32_t *row = slim_fb_row(fb, box.x, box.y + sy);
			for (uint32_t x = 0; x < box.w; x++) {
				rb[x] += row[x] & 0xff00ff;
				g[x] += (row[x] >> 8) & 0xff;
			}
		}
		uint32_t *o = out + (size_t)j * dw;
		for (uint32_t i = 0; i < dw; i++) {
			uint32_t srb = 0, sg = 0;
			for (uint32_t x = xs[i]; x < xs[i + 1]; x++) {
				srb += rb[x];
				sg += g[x];
			}
			uint32_t k = recip[(xs[i + 1] - xs[i]) * (sy1 - sy0)];
			uint32_t r = ((srb >> 16) * k + 32768) >> 16;
			uint32_t b = ((srb & 0xffff) * k + 32768) >> 16;
			uint32_t gg = (sg * k + 32768) >> 16;
			o[i] = (r > 255 ? 255 : r) << 16 | (gg > 255 ? 255 : gg) << 8 | (b > 255 ? 255 : b);
		}
	}
}

bool slim_yuv_from_fb(struct slim_yuv_image *img, struct slim_yuv_planes *planes,
		const struct slim_fb *fb, struct slim_rect box, uint16_t w, uint16_t h)
{
	if (w == 0 || h == 0 || w > box.w || h > box.h || box.x + box.w > fb->width ||
			box.y + box.h > fb->height) {
		return false;
	}
	/* no footprint over MAX_SHRINK x MAX_SHRINK */
	w = (uint16_t)(w * MAX_SHRINK >= box.w ? w : (box.w + MAX_SHRINK - 1) / MAX_SHRINK);
	h = (uint16_t)(h * MAX_SHRINK >= box.h ? h : (box.h + MAX_SHRINK - 1) / MAX_SHRINK);
	size_t cw = (w + 1u) / 2, ch = (h + 1u) / 2;
	size_t yuv = (size_t)w * h + 2 * cw * ch;
	bool scaled = w != box.w || h != box.h;
	/* a scaled image goes through w x h XRGB pixels, two rows of sums, a column table */
	size_t extra = scaled ? ((size_t)w * h + (size_t)box.w * 2 + w + 1) * 4 : 0;
	if (!reserve(planes, yuv + extra + 4)) {
		return false;
	}
	uint8_t *y = planes->data, *u = y + (size_t)w * h, *v = u + cw * ch;
	struct slim_fb src = *fb;
	uint32_t x0 = box.x, y0 = box.y;
	if (scaled) {
		/* 4-aligned for the XRGB pixels */
		uintptr_t at = ((uintptr_t)(v + cw * ch) + 3) & ~(uintptr_t)3;
		uint32_t *px = (uint32_t *)at, *rb = px + (size_t)w * h;
		downscale(fb, box, w, h, px, rb, rb + box.w, rb + 2 * (size_t)box.w);
		src = (struct slim_fb){ .px = px, .width = w, .height = h, .stride = w };
		x0 = y0 = 0;
	}
	for (uint32_t j = 0; j < h; j += 2) {
		const uint32_t *s0 = slim_fb_row(&src, x0, y0 + j);
		const uint32_t *s1 = j + 1 < h ? slim_fb_row(&src, x0, y0 + j + 1) : s0;
		uint8_t *ly1 = j + 1 < h ? y + (size_t)(j + 1) * w : y + (size_t)j * w;
		convert_rows(s0, s1, w, y + (size_t)j * w, ly1, u + (j / 2) * cw, v + (j / 2) * cw);
	}
	*img = (struct slim_yuv_image){
		.y = y, .u = u, .v = v, .y_stride = w, .c_stride = cw,
		.width = w, .height = h, .dst = box, .depth = SLIM_CSCS_DEPTH8,
	};
	return true;
}

uint64_t slim_yuv_bps(uint64_t samples_per_s)
{
	return (uint64_t)((double)samples_per_s * BITS_PER_SAMPLE);
}

void slim_yuv_fit(uint64_t bits_per_s, uint32_t fps, uint32_t box_w, uint32_t box_h,
		uint16_t *w, uint16_t *h)
{
	double samples = (double)bits_per_s / ((fps ? fps : 60) * BITS_PER_SAMPLE);
	double s = sqrt(samples / ((double)box_w * box_h));
	s = s < 1.0 ? s : 1.0;
	uint32_t sw = (uint32_t)(box_w * s), sh = (uint32_t)(box_h * s);
	*w = (uint16_t)(sw >= 2 ? sw : box_w < 2 ? box_w : 2);
	*h = (uint16_t)(sh >= 2 ? sh : box_h < 2 ? box_h : 2);
}
