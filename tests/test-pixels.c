/*
 * The reference semantics of the display commands (slim-pixels.c) against
 * naive loops, and CSCS against the properties the protocol relies on.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "slim-pixels.h"
#include "test-util.h"

#define FB_W 61
#define FB_H 47

static size_t fb_bytes(const struct slim_fb *fb)
{
	return fb->stride * fb->height * 4;
}

/* Whole buffers, stride padding included: nothing outside may be written. */
static void assert_fb_identical(const struct slim_fb *a, const struct slim_fb *b)
{
	test_fb_assert_equal(a, b);
	assert_int_equal(a->stride, b->stride);
	assert_memory_equal(a->px, b->px, fb_bytes(a));
}

static struct slim_rect rand_rect(struct test_rng *rng, uint32_t width, uint32_t height)
{
	struct slim_rect r;
	r.x = (uint16_t)test_rand_below(rng, width);
	r.y = (uint16_t)test_rand_below(rng, height);
	r.w = (uint16_t)test_rand_range(rng, 1, width - r.x);
	r.h = (uint16_t)test_rand_range(rng, 1, height - r.y);
	return r;
}

static void test_fill(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 10);
	for (int trial = 0; trial < 500; trial++) {
		struct slim_fb fb = test_fb_create(FB_W, FB_H, &rng);
		struct slim_fb ref = test_fb_clone(&fb);
		struct slim_rect r = trial == 0 ? (struct slim_rect){ 0, 0, FB_W, FB_H } :
			rand_rect(&rng, FB_W, FB_H);
		uint32_t color = test_rand(&rng);
		slim_fb_fill(&fb, r, color);
		for (uint32_t y = r.y; y < (uint32_t)r.y + r.h; y++) {
			for (uint32_t x = r.x; x < (uint32_t)r.x + r.w; x++) {
				*slim_fb_row(&ref, x, y) = color | 0xff000000;
			}
		}
		assert_fb_identical(&fb, &ref);
		test_fb_destroy(&fb);
		test_fb_destroy(&ref);
	}
}

static void check_copy(struct test_rng *rng, struct slim_rect src, uint16_t dx, uint16_t dy)
{
	struct slim_fb fb = test_fb_create(FB_W, FB_H, rng);
	struct slim_fb ref = test_fb_clone(&fb);
	/* the source as it was, then written to the destination */
	uint32_t *tmp = malloc((size_t)src.w * src.h * 4);
	for (uint32_t y = 0; y < src.h; y++) {
		for (uint32_t x = 0; x < src.w; x++) {
			tmp[y * src.w + x] = *slim_fb_row(&ref, src.x + x, src.y + y);
		}
	}
	for (uint32_t y = 0; y < src.h; y++) {
		for (uint32_t x = 0; x < src.w; x++) {
			*slim_fb_row(&ref, dx + x, dy + y) = tmp[y * src.w + x];
		}
	}
	free(tmp);
	slim_fb_copy(&fb, src, dx, dy);
	assert_fb_identical(&fb, &ref);
	test_fb_destroy(&fb);
	test_fb_destroy(&ref);
}

static void test_copy_overlap(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 11);
	/* every direction of overlap, same row and same column included */
	struct slim_rect src = { 20, 15, 25, 18 };
	for (int oy = -4; oy <= 4; oy++) {
		for (int ox = -4; ox <= 4; ox++) {
			check_copy(&rng, src, (uint16_t)(src.x + ox), (uint16_t)(src.y + oy));
		}
	}
	/* one-row and one-column strips moving along themselves */
	for (int o = -5; o <= 5; o++) {
		check_copy(&rng, (struct slim_rect){ 10, 7, 40, 1 }, (uint16_t)(10 + o), 7);
		check_copy(&rng, (struct slim_rect){ 7, 10, 1, 30 }, 7, (uint16_t)(10 + o));
	}
	/* edge to edge */
	check_copy(&rng, (struct slim_rect){ 0, 0, FB_W - 1, FB_H }, 1, 0);
	check_copy(&rng, (struct slim_rect){ 1, 0, FB_W - 1, FB_H }, 0, 0);
	check_copy(&rng, (struct slim_rect){ 0, 0, FB_W, FB_H - 1 }, 0, 1);
	check_copy(&rng, (struct slim_rect){ 0, 1, FB_W, FB_H - 1 }, 0, 0);
}

static void test_copy_random(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 12);
	for (int trial = 0; trial < 2000; trial++) {
		struct slim_rect src = rand_rect(&rng, FB_W, FB_H);
		uint16_t dx, dy;
		if (trial % 2) {
			/* near the source, so that most overlap */
			int ox = (int)test_rand_below(&rng, 9) - 4, oy = (int)test_rand_below(&rng, 9) - 4;
			int x = src.x + ox, y = src.y + oy;
			x = x < 0 ? 0 : x + src.w > FB_W ? FB_W - src.w : x;
			y = y < 0 ? 0 : y + src.h > FB_H ? FB_H - src.h : y;
			dx = (uint16_t)x;
			dy = (uint16_t)y;
		} else {
			dx = (uint16_t)test_rand_below(&rng, FB_W - src.w + 1);
			dy = (uint16_t)test_rand_below(&rng, FB_H - src.h + 1);
		}
		check_copy(&rng, src, dx, dy);
	}
}

static void check_set(struct test_rng *rng, uint8_t flags)
{
	for (int trial = 0; trial < 500; trial++) {
		struct slim_fb fb = test_fb_create(FB_W, FB_H, rng);
		struct slim_fb ref = test_fb_clone(&fb);
		struct slim_rect r = rand_rect(rng, FB_W, FB_H);
		size_t bpp = (flags & SLIM_SET_RGB888) ? 3 : 4;
		size_t len = slim_set_raw_len(r, flags);
		assert_int_equal(len, (size_t)r.w * r.h * bpp);
		uint8_t *data = malloc(len);
		test_rand_bytes(rng, data, len);
		for (uint32_t y = 0; y < r.h; y++) {
			for (uint32_t x = 0; x < r.w; x++) {
				const uint8_t *p = data + ((size_t)y * r.w + x) * bpp;
				/* bytes B, G, R (, X) in memory order */
				uint32_t px = 0xff000000u | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
				*slim_fb_row(&ref, r.x + x, r.y + y) = px;
			}
		}
		slim_fb_set(&fb, r, data, flags);
		assert_fb_identical(&fb, &ref);
		free(data);
		test_fb_destroy(&fb);
		test_fb_destroy(&ref);
	}
}

static void test_set_xrgb(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 13);
	check_set(&rng, 0);
}

static void test_set_rgb888(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 14);
	check_set(&rng, SLIM_SET_RGB888);
}

static void test_bitmap(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 15);
	for (int trial = 0; trial < 1000; trial++) {
		struct slim_fb fb = test_fb_create(FB_W, FB_H, &rng);
		struct slim_fb ref = test_fb_clone(&fb);
		/* every width from 1 to 40 and then random ones */
		uint16_t w = trial < 40 ? (uint16_t)(trial + 1) : (uint16_t)test_rand_range(&rng, 1, FB_W);
		struct slim_rect r = {
			.x = (uint16_t)test_rand_below(&rng, FB_W - w + 1), .w = w,
		};
		r.y = (uint16_t)test_rand_below(&rng, FB_H);
		r.h = (uint16_t)test_rand_range(&rng, 1, FB_H - r.y);
		size_t stride = (w + 7u) / 8;
		uint8_t *bits = malloc(stride * r.h);
		/* padding bits at the end of each row are random too: they must be ignored */
		test_rand_bytes(&rng, bits, stride * r.h);
		uint32_t fg = test_rand(&rng), bg = test_rand(&rng);
		if (trial % 7 == 0) {
			fg = bg; /* one colour */
		}
		for (uint32_t y = 0; y < r.h; y++) {
			for (uint32_t x = 0; x < w; x++) {
				bool on = (bits[y * stride + x / 8] >> (7 - x % 8)) & 1;
				*slim_fb_row(&ref, r.x + x, r.y + y) = (on ? fg : bg) | 0xff000000;
			}
		}
		slim_fb_bitmap(&fb, r, fg, bg, bits);
		assert_fb_identical(&fb, &ref);
		free(bits);
		test_fb_destroy(&fb);
		test_fb_destroy(&ref);
	}
}

/*
 * CSCS.
 */

struct yuv {
	uint16_t w, h, cw, ch;
	uint8_t *y, *u, *v; /* packed planes: w x h, cw x ch, cw x ch */
};

static struct yuv yuv_create(uint16_t w, uint16_t h)
{
	struct yuv img = { .w = w, .h = h, .cw = (uint16_t)((w + 1) / 2), .ch = (uint16_t)((h + 1) / 2) };
	img.y = malloc((size_t)w * h);
	img.u = malloc((size_t)img.cw * img.ch);
	img.v = malloc((size_t)img.cw * img.ch);
	assert_non_null(img.y);
	assert_non_null(img.u);
	assert_non_null(img.v);
	return img;
}

static void yuv_random(struct yuv *img, struct test_rng *rng)
{
	test_rand_bytes(rng, img->y, (size_t)img->w * img->h);
	test_rand_bytes(rng, img->u, (size_t)img->cw * img->ch);
	test_rand_bytes(rng, img->v, (size_t)img->cw * img->ch);
}

/* Samples that fit in 4 bits: n * 17, which depth 4 expands back exactly. */
static void yuv_random4(struct yuv *img, struct test_rng *rng)
{
	yuv_random(img, rng);
	for (size_t i = 0; i < (size_t)img->w * img->h; i++) {
		img->y[i] = (uint8_t)((img->y[i] >> 4) * 17);
	}
	for (size_t i = 0; i < (size_t)img->cw * img->ch; i++) {
		img->u[i] = (uint8_t)((img->u[i] >> 4) * 17);
		img->v[i] = (uint8_t)((img->v[i] >> 4) * 17);
	}
}

/* A smooth picture, as video is: neighbours differ by a few levels. */
static void yuv_smooth(struct yuv *img, double phase)
{
	for (uint32_t y = 0; y < img->h; y++) {
		for (uint32_t x = 0; x < img->w; x++) {
			double v = 126 + 90 * sin(x * 0.11 + phase) * cos(y * 0.07 - phase);
			img->y[y * img->w + x] = (uint8_t)lround(v);
		}
	}
	for (uint32_t y = 0; y < img->ch; y++) {
		for (uint32_t x = 0; x < img->cw; x++) {
			img->u[y * img->cw + x] = (uint8_t)lround(128 + 100 * sin(x * 0.13 + y * 0.09 + phase));
			img->v[y * img->cw + x] = (uint8_t)lround(128 + 100 * cos(x * 0.08 - y * 0.15 + phase));
		}
	}
}

static void yuv_destroy(struct yuv *img)
{
	free(img->y);
	free(img->u);
	free(img->v);
}

static void put_sample(uint8_t *row, uint32_t i, uint8_t depth, uint8_t v)
{
	if (depth == SLIM_CSCS_DEPTH4) {
		/* two samples a byte, the first in the high nibble */
		uint8_t n = v >> 4;
		row[i / 2] |= (i & 1) ? n : (uint8_t)(n << 4);
	} else {
		row[i] = v;
	}
}

/*
 * Cuts the samples of `psrc` out of the image, laid out as a CSCS payload
 * is on the wire, and describes the piece as slim_reader_next would.
 * Free *payload afterwards.
 */
static struct slim_cscs cut_piece(const struct yuv *img, struct slim_rect dst,
		struct slim_rect psrc, struct slim_rect pdst, uint8_t depth, uint8_t **payload)
{
	/* what the codec would accept */
	assert_true(psrc.x % 2 == 0 && psrc.y % 2 == 0);
	assert_true(psrc.w > 0 && psrc.h > 0);
	assert_true(psrc.x + psrc.w <= img->w && psrc.y + psrc.h <= img->h);
	assert_true(pdst.x >= dst.x && pdst.y >= dst.y);
	assert_true(pdst.x + pdst.w <= dst.x + dst.w && pdst.y + pdst.h <= dst.y + dst.h);
	assert_true((size_t)psrc.w * psrc.h <= SLIM_MAX_PIECE_PIXELS);

	size_t ys, cs;
	size_t len = slim_cscs_payload_len(psrc.w, psrc.h, depth, &ys, &cs);
	uint8_t *p = calloc(1, len);
	assert_non_null(p);
	uint32_t pcw = (psrc.w + 1u) / 2, pch = (psrc.h + 1u) / 2;
	uint32_t cx = psrc.x / 2u, cy = psrc.y / 2u;
	uint8_t *yp = p, *up = p + ys * psrc.h, *vp = up + cs * pch;
	assert_ptr_equal(vp + cs * pch, p + len);
	for (uint32_t r = 0; r < psrc.h; r++) {
		for (uint32_t i = 0; i < psrc.w; i++) {
			put_sample(yp + r * ys, i, depth, img->y[(psrc.y + r) * img->w + psrc.x + i]);
		}
	}
	for (uint32_t r = 0; r < pch; r++) {
		for (uint32_t i = 0; i < pcw; i++) {
			size_t k = (cy + r) * img->cw + cx + i;
			put_sample(up + r * cs, i, depth, img->u[k]);
			put_sample(vp + r * cs, i, depth, img->v[k]);
		}
	}
	*payload = p;
	return (struct slim_cscs){
		.src_w = img->w, .src_h = img->h,
		.dst = dst, .psrc = psrc, .pdst = pdst, .depth = depth,
		.y = yp, .u = up, .v = vp, .y_stride = ys, .c_stride = cs,
	};
}

/* Paints a piece; returns nothing, frees the payload. */
static void paint_piece(const struct slim_fb *fb, struct slim_cscs_scratch *s,
		const struct yuv *img, struct slim_rect dst, struct slim_rect psrc,
		struct slim_rect pdst, uint8_t depth)
{
	uint8_t *payload;
	struct slim_cscs c = cut_piece(img, dst, psrc, pdst, depth, &payload);
	slim_fb_cscs(fb, &c, s);
	free(payload);
}

static void paint_whole(const struct slim_fb *fb, struct slim_cscs_scratch *s,
		const struct yuv *img, struct slim_rect dst, uint8_t depth)
{
	paint_piece(fb, s, img, dst, (struct slim_rect){ 0, 0, img->w, img->h }, dst, depth);
}

static int channel(uint32_t px, int shift)
{
	return (int)((px >> shift) & 0xff);
}

/* (a) Without scaling, luma passes through untouched: each pixel is exactly slim_yuv_to_xrgb. */
static void test_cscs_identity(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 20);
	struct slim_cscs_scratch *s = slim_cscs_scratch_create();
	assert_non_null(s);
	static const uint8_t chroma[][2] = {
		{ 128, 128 }, { 0, 0 }, { 255, 255 }, { 0, 255 }, { 255, 0 }, { 16, 240 }, { 90, 200 },
	};
	static const uint16_t sizes[][2] = { { 37, 23 }, { 64, 48 }, { 1, 1 }, { 2, 3 }, { 99, 5 } };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		for (size_t c = 0; c < sizeof(chroma) / sizeof(chroma[0]); c++) {
			struct yuv img = yuv_create(sizes[k][0], sizes[k][1]);
			yuv_random(&img, &rng);
			/* chroma constant, so that its interpolation is exact too */
			memset(img.u, chroma[c][0], (size_t)img.cw * img.ch);
			memset(img.v, chroma[c][1], (size_t)img.cw * img.ch);
			struct slim_fb fb = test_fb_create(128, 64, &rng);
			struct slim_fb ref = test_fb_clone(&fb);
			struct slim_rect dst = { 5, 7, img.w, img.h };
			paint_whole(&fb, s, &img, dst, SLIM_CSCS_DEPTH8);
			for (uint32_t y = 0; y < img.h; y++) {
				for (uint32_t x = 0; x < img.w; x++) {
					*slim_fb_row(&ref, dst.x + x, dst.y + y) =
						slim_yuv_to_xrgb(img.y[y * img.w + x], chroma[c][0], chroma[c][1]);
				}
			}
			assert_fb_identical(&fb, &ref);

			/* and so does any piece of it */
			struct slim_rect psrc = { 0, 0, img.w, img.h };
			if (img.w > 4 && img.h > 4) {
				psrc = (struct slim_rect){ 2, 2, (uint16_t)(img.w - 3), (uint16_t)(img.h - 3) };
			}
			struct slim_rect pdst = { (uint16_t)(dst.x + psrc.x), (uint16_t)(dst.y + psrc.y),
				psrc.w, psrc.h };
			test_rand_bytes(&rng, fb.px, fb_bytes(&fb));
			memcpy(ref.px, fb.px, fb_bytes(&fb));
			paint_piece(&fb, s, &img, dst, psrc, pdst, SLIM_CSCS_DEPTH8);
			for (uint32_t y = psrc.y; y < (uint32_t)psrc.y + psrc.h; y++) {
				for (uint32_t x = psrc.x; x < (uint32_t)psrc.x + psrc.w; x++) {
					*slim_fb_row(&ref, dst.x + x, dst.y + y) =
						slim_yuv_to_xrgb(img.y[y * img.w + x], chroma[c][0], chroma[c][1]);
				}
			}
			assert_fb_identical(&fb, &ref);
			test_fb_destroy(&fb);
			test_fb_destroy(&ref);
			yuv_destroy(&img);
		}
	}
	slim_cscs_scratch_destroy(s);
}

/* BT.601 limited range, in floating point. */
static void bt601(double y, double u, double v, double rgb[3])
{
	double c = 255.0 / 219.0 * (y - 16), d = u - 128, e = v - 128;
	rgb[0] = c + 255.0 / 224.0 * 1.402 * e;
	rgb[1] = c - 255.0 / 224.0 * (1.772 * 0.114 / 0.587) * d -
		255.0 / 224.0 * (1.402 * 0.299 / 0.587) * e;
	rgb[2] = c + 255.0 / 224.0 * 1.772 * d;
}

static int round_clamp(double v)
{
	long r = lround(v);
	return r < 0 ? 0 : r > 255 ? 255 : (int)r;
}

static void test_yuv_to_xrgb(void **state)
{
	int worst = 0;
	for (int y = 0; y < 256; y++) {
		for (int u = 0; u < 256; u++) {
			for (int v = 0; v < 256; v++) {
				uint32_t px = slim_yuv_to_xrgb(y, u, v);
				assert_int_equal(px >> 24, 0xff);
				double rgb[3];
				bt601(y, u, v, rgb);
				for (int k = 0; k < 3; k++) {
					int d = abs(channel(px, 16 - 8 * k) - round_clamp(rgb[k]));
					worst = d > worst ? d : worst;
				}
			}
		}
	}
	assert_in_range(worst, 0, 1);
	/* the fixed points of the range */
	assert_int_equal(slim_yuv_to_xrgb(16, 128, 128), 0xff000000);
	assert_int_equal(slim_yuv_to_xrgb(235, 128, 128), 0xffffffff);
	assert_int_equal(slim_yuv_to_xrgb(0, 128, 128), 0xff000000);
	assert_int_equal(slim_yuv_to_xrgb(255, 128, 128), 0xffffffff);
}

/*
 * The conversion as the protocol specifies it, pixel by pixel with no
 * tables and no caching: source position (i + 0.5) * src / dst - 0.5 in
 * 16.16, clamped to the image, 7-bit weights, horizontal then vertical.
 */
static void spec_axis(uint32_t i, uint32_t src, uint32_t dst, int *a, int *b, int *f)
{
	int64_t s = (int64_t)(2 * i + 1) * src * 32768 / dst - 32768;
	int64_t max = (int64_t)(src - 1) << 16;
	s = s < 0 ? 0 : s > max ? max : s;
	*a = (int)(s >> 16);
	*b = *a + 1 < (int)src ? *a + 1 : *a;
	*f = (int)((s >> 9) & 0x7f);
}

static int spec_sample(const uint8_t *p, uint32_t w, uint32_t h, uint32_t dw, uint32_t dh,
		uint32_t i, uint32_t j)
{
	int x0, x1, fx, y0, y1, fy;
	spec_axis(i, w, dw, &x0, &x1, &fx);
	spec_axis(j, h, dh, &y0, &y1, &fy);
	int top = p[y0 * w + x0] * (128 - fx) + p[y0 * w + x1] * fx;
	int bot = p[y1 * w + x0] * (128 - fx) + p[y1 * w + x1] * fx;
	return (top * (128 - fy) + bot * fy + 8192) >> 14;
}

static uint32_t spec_pixel(const struct yuv *img, struct slim_rect dst, uint32_t i, uint32_t j)
{
	int y = spec_sample(img->y, img->w, img->h, dst.w, dst.h, i, j);
	int u = spec_sample(img->u, img->cw, img->ch, dst.w, dst.h, i, j);
	int v = spec_sample(img->v, img->cw, img->ch, dst.w, dst.h, i, j);
	return slim_yuv_to_xrgb(y, u, v);
}

static const uint16_t scale_cases[][4] = {
	/* src w, h, dst w, h */
	{ 40, 30, 80, 60 },   /* 2x up */
	{ 80, 60, 40, 30 },   /* 2x down */
	{ 37, 23, 100, 61 },  /* odd, up by a fraction */
	{ 101, 77, 33, 50 },  /* down across, up along */
	{ 64, 48, 64, 48 },   /* 1:1 */
	{ 1, 1, 17, 9 },
	{ 3, 2, 200, 1 },
	{ 250, 200, 7, 5 },
	{ 255, 3, 256, 127 },
};

/* Exactly the specified arithmetic, at every scale. */
static void test_cscs_spec(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 21);
	struct slim_cscs_scratch *s = slim_cscs_scratch_create();
	for (size_t k = 0; k < sizeof(scale_cases) / sizeof(scale_cases[0]); k++) {
		struct yuv img = yuv_create(scale_cases[k][0], scale_cases[k][1]);
		yuv_random(&img, &rng);
		struct slim_rect dst = { 3, 2, scale_cases[k][2], scale_cases[k][3] };
		struct slim_fb fb = test_fb_create(dst.x + dst.w + 2, dst.y + dst.h + 1, &rng);
		struct slim_fb ref = test_fb_clone(&fb);
		paint_whole(&fb, s, &img, dst, SLIM_CSCS_DEPTH8);
		for (uint32_t j = 0; j < dst.h; j++) {
			for (uint32_t i = 0; i < dst.w; i++) {
				*slim_fb_row(&ref, dst.x + i, dst.y + j) = spec_pixel(&img, dst, i, j);
			}
		}
		assert_fb_identical(&fb, &ref);
		test_fb_destroy(&fb);
		test_fb_destroy(&ref);
		yuv_destroy(&img);
	}
	slim_cscs_scratch_destroy(s);
}

/* Bilinear scaling in floating point, at the positions the protocol specifies. */
static double bilinear(const uint8_t *p, uint32_t w, uint32_t h, double sx, double sy)
{
	sx = sx < 0 ? 0 : sx > w - 1 ? w - 1 : sx;
	sy = sy < 0 ? 0 : sy > h - 1 ? h - 1 : sy;
	uint32_t x0 = (uint32_t)sx, y0 = (uint32_t)sy;
	uint32_t x1 = x0 + 1 < w ? x0 + 1 : x0, y1 = y0 + 1 < h ? y0 + 1 : y0;
	double fx = sx - x0, fy = sy - y0;
	double top = p[y0 * w + x0] * (1 - fx) + p[y0 * w + x1] * fx;
	double bot = p[y1 * w + x0] * (1 - fx) + p[y1 * w + x1] * fx;
	return top * (1 - fy) + bot * fy;
}

static double src_pos(uint32_t i, uint32_t src, uint32_t dst)
{
	return (i + 0.5) * src / dst - 0.5;
}

/*
 * (b) Against floating-point bilinear scaling and BT.601 on smooth
 * pictures: at most 2 levels off in any channel, and less than half a
 * level on average.
 */
#define CSCS_TOLERANCE 2

static void test_cscs_float(void **state)
{
	struct slim_cscs_scratch *s = slim_cscs_scratch_create();
	for (size_t k = 0; k < sizeof(scale_cases) / sizeof(scale_cases[0]); k++) {
		struct yuv img = yuv_create(scale_cases[k][0], scale_cases[k][1]);
		yuv_smooth(&img, 0.3 * (double)k);
		struct slim_rect dst = { 1, 1, scale_cases[k][2], scale_cases[k][3] };
		struct slim_fb fb = test_fb_create(dst.x + dst.w, dst.y + dst.h, NULL);
		paint_whole(&fb, s, &img, dst, SLIM_CSCS_DEPTH8);
		int worst = 0;
		double sum = 0;
		for (uint32_t j = 0; j < dst.h; j++) {
			for (uint32_t i = 0; i < dst.w; i++) {
				double y = bilinear(img.y, img.w, img.h, src_pos(i, img.w, dst.w),
					src_pos(j, img.h, dst.h));
				double u = bilinear(img.u, img.cw, img.ch, src_pos(i, img.cw, dst.w),
					src_pos(j, img.ch, dst.h));
				double v = bilinear(img.v, img.cw, img.ch, src_pos(i, img.cw, dst.w),
					src_pos(j, img.ch, dst.h));
				double rgb[3];
				bt601(y, u, v, rgb);
				uint32_t px = *slim_fb_row(&fb, dst.x + i, dst.y + j);
				assert_int_equal(px >> 24, 0xff);
				for (int c = 0; c < 3; c++) {
					int d = abs(channel(px, 16 - 8 * c) - round_clamp(rgb[c]));
					if (d > CSCS_TOLERANCE) {
						fail_msg("case %zu pixel (%u, %u) channel %d: %d off", k, i, j, c, d);
					}
					worst = d > worst ? d : worst;
					sum += d;
				}
			}
		}
		double mean = sum / (3.0 * dst.w * dst.h);
		if (mean >= 0.5) {
			fail_msg("case %zu: mean error %.3f", k, mean);
		}
		print_message("%ux%u -> %ux%u: max error %d, mean %.3f\n", img.w, img.h,
			dst.w, dst.h, worst, mean);
		test_fb_destroy(&fb);
		yuv_destroy(&img);
	}
	slim_cscs_scratch_destroy(s);
}

/*
 * The luma samples [*lo, *lo + *n) that destination indices [i0, i1] need,
 * luma and chroma, with a margin of one sample, the start even.
 */
static void needed(uint32_t i0, uint32_t i1, uint32_t src, uint32_t dst,
		uint16_t *lo, uint16_t *n)
{
	uint32_t csrc = (src + 1) / 2;
	double a = floor(src_pos(i0, src, dst)), b = floor(src_pos(i1, src, dst)) + 1;
	double ca = floor(src_pos(i0, csrc, dst)), cb = floor(src_pos(i1, csrc, dst)) + 1;
	double first = fmin(a, 2 * ca) - 1, last = fmax(b, 2 * cb + 1) + 1;
	int f = first < 0 ? 0 : (int)first;
	int l = last > src - 1 ? (int)src - 1 : (int)last;
	f &= ~1;
	*lo = (uint16_t)f;
	*n = (uint16_t)(l - f + 1);
}

/* Random cuts of [0, n) into at most `max` parts; returns the number of parts. */
static size_t random_cuts(struct test_rng *rng, uint32_t n, uint32_t *cuts, size_t max)
{
	size_t parts = test_rand_range(rng, 1, (uint32_t)max);
	cuts[0] = 0;
	for (size_t i = 1; i < parts; i++) {
		cuts[i] = test_rand_below(rng, n);
	}
	/* sort, then drop empty parts */
	for (size_t i = 1; i < parts; i++) {
		for (size_t j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
			uint32_t t = cuts[j];
			cuts[j] = cuts[j - 1];
			cuts[j - 1] = t;
		}
	}
	size_t m = 1;
	for (size_t i = 1; i < parts; i++) {
		if (cuts[i] != cuts[m - 1]) {
			cuts[m++] = cuts[i];
		}
	}
	cuts[m] = n;
	return m;
}

/*
 * (c) Self-containment: an image sent as pieces, each carrying the samples
 * its screen pixels need, paints exactly what the whole image does.
 */
static void check_split(struct test_rng *rng, struct slim_cscs_scratch *s,
		const struct yuv *img, struct slim_rect dst, uint8_t depth)
{
	struct slim_fb whole = test_fb_create(dst.x + dst.w + 1, dst.y + dst.h + 1, rng);
	struct slim_fb pieces = test_fb_clone(&whole);
	paint_whole(&whole, s, img, dst, depth);

	uint32_t xs[9], ys[9];
	size_t nx = random_cuts(rng, dst.w, xs, 8), ny = random_cuts(rng, dst.h, ys, 8);
	for (size_t j = 0; j < ny; j++) {
		for (size_t i = 0; i < nx; i++) {
			struct slim_rect pdst = {
				(uint16_t)(dst.x + xs[i]), (uint16_t)(dst.y + ys[j]),
				(uint16_t)(xs[i + 1] - xs[i]), (uint16_t)(ys[j + 1] - ys[j]),
			};
			struct slim_rect psrc;
			needed(xs[i], xs[i + 1] - 1, img->w, dst.w, &psrc.x, &psrc.w);
			needed(ys[j], ys[j + 1] - 1, img->h, dst.h, &psrc.y, &psrc.h);
			paint_piece(&pieces, s, img, dst, psrc, pdst, depth);
		}
	}
	assert_fb_identical(&pieces, &whole);
	test_fb_destroy(&whole);
	test_fb_destroy(&pieces);
}

static void test_cscs_split(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 22);
	struct slim_cscs_scratch *s = slim_cscs_scratch_create();
	for (size_t k = 0; k < sizeof(scale_cases) / sizeof(scale_cases[0]); k++) {
		struct yuv img = yuv_create(scale_cases[k][0], scale_cases[k][1]);
		for (int round = 0; round < 8; round++) {
			uint8_t depth = round % 2 ? SLIM_CSCS_DEPTH4 : SLIM_CSCS_DEPTH8;
			/* noise: the hardest case for exactness */
			yuv_random(&img, &rng);
			struct slim_rect dst = { (uint16_t)test_rand_below(&rng, 5),
				(uint16_t)test_rand_below(&rng, 5), scale_cases[k][2], scale_cases[k][3] };
			check_split(&rng, s, &img, dst, depth);
		}
		yuv_destroy(&img);
	}
	slim_cscs_scratch_destroy(s);
}

/* A piece painted alone only writes its pdst, and the rest of the whole image is untouched. */
static void test_cscs_piece_bounds(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 23);
	struct slim_cscs_scratch *s = slim_cscs_scratch_create();
	struct yuv img = yuv_create(50, 40);
	yuv_random(&img, &rng);
	struct slim_rect dst = { 10, 10, 120, 90 };
	struct slim_fb fb = test_fb_create(140, 110, &rng);
	struct slim_fb ref = test_fb_clone(&fb);
	struct slim_fb whole = test_fb_clone(&fb);
	paint_whole(&whole, s, &img, dst, SLIM_CSCS_DEPTH8);
	struct slim_rect pdst = { 40, 30, 33, 21 };
	struct slim_rect psrc;
	needed(pdst.x - dst.x, pdst.x - dst.x + pdst.w - 1u, img.w, dst.w, &psrc.x, &psrc.w);
	needed(pdst.y - dst.y, pdst.y - dst.y + pdst.h - 1u, img.h, dst.h, &psrc.y, &psrc.h);
	paint_piece(&fb, s, &img, dst, psrc, pdst, SLIM_CSCS_DEPTH8);
	for (uint32_t y = pdst.y; y < (uint32_t)pdst.y + pdst.h; y++) {
		for (uint32_t x = pdst.x; x < (uint32_t)pdst.x + pdst.w; x++) {
			*slim_fb_row(&ref, x, y) = *slim_fb_row(&whole, x, y);
		}
	}
	assert_fb_identical(&fb, &ref);
	test_fb_destroy(&fb);
	test_fb_destroy(&ref);
	test_fb_destroy(&whole);
	yuv_destroy(&img);
	slim_cscs_scratch_destroy(s);
}

/* (d) Depth 4: each nibble n expands to n * 17, exactly as an 8-bit sample of that value. */
static void test_cscs_depth4(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 24);
	struct slim_cscs_scratch *s = slim_cscs_scratch_create();
	for (size_t k = 0; k < sizeof(scale_cases) / sizeof(scale_cases[0]); k++) {
		struct yuv img = yuv_create(scale_cases[k][0], scale_cases[k][1]);
		yuv_random4(&img, &rng);
		struct slim_rect dst = { 2, 1, scale_cases[k][2], scale_cases[k][3] };
		struct slim_fb fb8 = test_fb_create(dst.x + dst.w, dst.y + dst.h, &rng);
		struct slim_fb fb4 = test_fb_clone(&fb8);
		paint_whole(&fb8, s, &img, dst, SLIM_CSCS_DEPTH8);
		paint_whole(&fb4, s, &img, dst, SLIM_CSCS_DEPTH4);
		assert_fb_identical(&fb4, &fb8);

		/* pieces with odd widths and odd chroma offsets pack their own rows */
		for (int round = 0; round < 20; round++) {
			struct slim_rect psrc;
			psrc.x = (uint16_t)(test_rand_below(&rng, (img.w + 1u) / 2) * 2);
			psrc.y = (uint16_t)(test_rand_below(&rng, (img.h + 1u) / 2) * 2);
			psrc.w = (uint16_t)test_rand_range(&rng, 1, img.w - psrc.x);
			psrc.h = (uint16_t)test_rand_range(&rng, 1, img.h - psrc.y);
			struct slim_rect pdst = rand_rect(&rng, dst.w, dst.h);
			pdst.x = (uint16_t)(pdst.x + dst.x);
			pdst.y = (uint16_t)(pdst.y + dst.y);
			paint_piece(&fb8, s, &img, dst, psrc, pdst, SLIM_CSCS_DEPTH8);
			paint_piece(&fb4, s, &img, dst, psrc, pdst, SLIM_CSCS_DEPTH4);
			assert_fb_identical(&fb4, &fb8);
		}
		test_fb_destroy(&fb8);
		test_fb_destroy(&fb4);
		yuv_destroy(&img);
	}

	/* and the nibble order: high nibble first */
	struct yuv img = yuv_create(2, 1);
	img.y[0] = 0x11;
	img.y[1] = 0xee;
	img.u[0] = img.v[0] = 0x88;
	uint8_t *payload;
	struct slim_rect r = { 0, 0, 2, 1 };
	struct slim_cscs c = cut_piece(&img, r, r, r, SLIM_CSCS_DEPTH4, &payload);
	assert_int_equal(payload[0], 0x1e);
	assert_int_equal(payload[1], 0x80);
	assert_int_equal(payload[2], 0x80);
	struct slim_fb fb = test_fb_create(2, 1, NULL);
	slim_fb_cscs(&fb, &c, s);
	assert_int_equal(fb.px[0], slim_yuv_to_xrgb(0x11, 0x88, 0x88));
	assert_int_equal(fb.px[1], slim_yuv_to_xrgb(0xee, 0x88, 0x88));
	free(payload);
	test_fb_destroy(&fb);
	yuv_destroy(&img);
	slim_cscs_scratch_destroy(s);
}

/* The largest piece and the widest screen the scratch memory is sized for. */
static void test_cscs_limits(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 25);
	struct slim_cscs_scratch *s = slim_cscs_scratch_create();
	static const uint16_t shapes[][4] = {
		{ 256, 256, 512, 256 }, { 8192, 8, 8192, 8 }, { 8, 8192, 16, 4096 },
		{ 255, 257, 510, 257 }, { 4096, 16, 8192, 3 },
	};
	for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
		struct yuv img = yuv_create(shapes[k][0], shapes[k][1]);
		yuv_random4(&img, &rng);
		struct slim_rect dst = { 0, 0, shapes[k][2], shapes[k][3] };
		struct slim_fb fb8 = test_fb_create(dst.w, dst.h, NULL);
		struct slim_fb fb4 = test_fb_create(dst.w, dst.h, NULL);
		paint_whole(&fb8, s, &img, dst, SLIM_CSCS_DEPTH8);
		paint_whole(&fb4, s, &img, dst, SLIM_CSCS_DEPTH4);
		assert_fb_identical(&fb4, &fb8);
		/* spot checks against the specified arithmetic */
		for (int i = 0; i < 500; i++) {
			uint32_t x = test_rand_below(&rng, dst.w), y = test_rand_below(&rng, dst.h);
			assert_int_equal(*slim_fb_row(&fb8, x, y), spec_pixel(&img, dst, x, y));
		}
		test_fb_destroy(&fb8);
		test_fb_destroy(&fb4);
		yuv_destroy(&img);
	}
	slim_cscs_scratch_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fill),
		cmocka_unit_test(test_copy_overlap),
		cmocka_unit_test(test_copy_random),
		cmocka_unit_test(test_set_xrgb),
		cmocka_unit_test(test_set_rgb888),
		cmocka_unit_test(test_bitmap),
		cmocka_unit_test(test_yuv_to_xrgb),
		cmocka_unit_test(test_cscs_identity),
		cmocka_unit_test(test_cscs_spec),
		cmocka_unit_test(test_cscs_float),
		cmocka_unit_test(test_cscs_split),
		cmocka_unit_test(test_cscs_piece_bounds),
		cmocka_unit_test(test_cscs_depth4),
		cmocka_unit_test(test_cscs_limits),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
