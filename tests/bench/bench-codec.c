/*
 * The cost of each display command on the console, in the shape of SLIM's
 * Table 5 (seeds/000, "Sun Ray 1 protocol processing costs"): a startup
 * cost per command and a cost per pixel.
 *
 * Every command goes through slim_console_core_receive, so decoding,
 * validation, LZ4 expansion and damage tracking are included. For each
 * command and size, a datagram holding k commands of n pixels each is fed
 * to the console over and over (with increasing sequence numbers, as the
 * console applies nothing twice); the cost of an empty datagram is taken
 * off and the rest divided by k. cost = startup + n * per_pixel is then
 * fitted by least squares, weighted by 1/cost^2 so that small commands
 * (which carry the startup cost) count as much as large ones (which carry
 * the per-pixel cost). CSCS is counted per output pixel.
 *
 * One core, nothing pinned, CLOCK_MONOTONIC, median of several repetitions
 * after a warm-up. The whole run takes well under a minute.
 *
 * The DRM column is the console's other cost for each command's pixels:
 * copying the damage into the KMS scanout buffer. It needs a display, so
 * the VM test (tests/vm, `meson test --suite vm`) measures it under QEMU's
 * software emulation and leaves it in drm-present.json, which this reads
 * ($SLIM_DRM_PRESENT_JSON overrides where); "-" when it was not measured.
 *
 *   bench-codec [--json] [--quick] [--verbose]
 */
#include <lz4.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "console-core.h"
#include "encoder.h"

#define SCREEN_W 1920
#define SCREEN_H 1080
#define BENCH_ASSOC 0x5eed
#define DGRAM_MAX SLIM_MAX_MTU
#define MAX_PER_DGRAM 16
#define MAX_SIZES 12
#define MAX_REPS 15

/* What the console's startup and per-pixel costs should stay within. */
#define TARGET_STARTUP_NS 300.0

enum content {
	CONTENT_TEXT,
	CONTENT_UI,
	CONTENT_PHOTO,
	CONTENT_COUNT,
};

static const char *const content_names[CONTENT_COUNT] = {
	[CONTENT_TEXT] = "text",
	[CONTENT_UI] = "ui",
	[CONTENT_PHOTO] = "photo",
};

enum bench_cmd {
	CMD_FILL,
	CMD_SET_XRGB,
	CMD_SET_RGB888,
	CMD_SET_LZ4,
	CMD_BITMAP,
	CMD_COPY,
	CMD_CSCS8,
	CMD_CSCS4,
	CMD_PALETTE,
	CMD_CACHE_DRAW,
	CMD_COUNT,
};

struct sample {
	uint64_t pixels;   /* per command */
	uint32_t commands; /* in the datagram */
	double ns;         /* per command, the datagram's own cost taken off */
};

struct cmd_result {
	double startup_ns, ns_per_pixel;
	double fit_r2;
	double wire_bytes_per_pixel; /* at the largest size, command header included */
	size_t n_samples;
	struct sample samples[MAX_SIZES];
};

struct encoder_result {
	bool measured;
	double mb_per_s;    /* MB (10^6 bytes) of XRGB8888 framebuffer encoded a second */
	double compression; /* raw 24-bit pixels / bytes on the wire */
};

/* copying damage into the scanout buffer, from the VM test */
struct drm_present {
	bool measured;
	double startup_ns, ns_per_pixel;
};

struct results {
	bool quick;
	struct drm_present drm;
	double datagram_ns; /* an empty datagram: header, association, sequence window */
	struct cmd_result cmd[CMD_COUNT];
	struct encoder_result encoder[CONTENT_COUNT];
};

struct rng {
	uint64_t s;
};

struct bench {
	bool quick, verbose;
	double rep_ns; /* length of one timed repetition */
	int reps;

	struct slim_console_backend *backend;
	struct slim_console_core *core;
	uint32_t seq;

	struct slim_fb images[CONTENT_COUNT]; /* SCREEN_W x SCREEN_H sources */
	struct rng rng;
	uint8_t *buf;     /* the datagram being measured */
	uint8_t *scratch; /* pixels before compression */
	uint8_t *lz4;
};

/* Puts one command of size `side` into the datagram; false if it does not fit. */
typedef bool (*put_fn)(struct bench *b, struct slim_writer *w, uint32_t side);

struct cmd_spec {
	const char *key;  /* JSON key prefix */
	const char *name; /* table row */
	put_fn put;
	uint32_t sides[MAX_SIZES]; /* square sides (CSCS: of the source), 0-terminated */
	/* SLIM Table 5 */
	double sunray_startup_ns, sunray_ns_per_pixel;
	const char *sunray_note;
	double target_ns_per_pixel;
	bool per_output_pixel;
};

static uint64_t rng_next(struct rng *r)
{
	/* splitmix64 */
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rng_below(struct rng *r, uint32_t n)
{
	return (uint32_t)(rng_next(r) % n);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "bench-codec: %s\n", what);
	exit(1);
}

static void *xmalloc(size_t size)
{
	void *p = malloc(size);
	if (!p) {
		die("out of memory");
	}
	return p;
}

/*
 * Synthetic screen content, SCREEN_W x SCREEN_H: terminal-like text (two
 * colours), a desktop with windows (flat areas, gradients, borders, icons,
 * anti-aliased text) and a photo (smooth gradients and sensor noise).
 */

#define GLYPH_W 8
#define GLYPH_H 16
#define GLYPHS 64

static uint8_t glyphs[GLYPHS][GLYPH_H]; /* one byte a row, most significant bit leftmost */

static void make_glyphs(struct rng *r)
{
	for (int g = 0; g < GLYPHS; g++) {
		uint8_t stem = (uint8_t)(0x40 >> rng_below(r, 6));
		for (int y = 3; y < 13; y++) {
			uint8_t bits = (uint8_t)(rng_next(r) & rng_next(r) & 0x7e);
			glyphs[g][y] = (uint8_t)(bits | (y > 4 ? stem : 0));
		}
	}
}

static void fb_fill_clipped(const struct slim_fb *fb, int32_t x, int32_t y, int32_t w,
		int32_t h, uint32_t color)
{
	int32_t x2 = x + w, y2 = y + h;
	x = x < 0 ? 0 : x;
	y = y < 0 ? 0 : y;
	x2 = x2 > (int32_t)fb->width ? (int32_t)fb->width : x2;
	y2 = y2 > (int32_t)fb->height ? (int32_t)fb->height : y2;
	for (int32_t j = y; j < y2; j++) {
		uint32_t *row = slim_fb_row(fb, (uint32_t)x, (uint32_t)j);
		for (int32_t i = 0; i < x2 - x; i++) {
			row[i] = color;
		}
	}
}

static uint32_t mix(uint32_t a, uint32_t b)
{
	return ((a >> 1) & 0x7f7f7f) + ((b >> 1) & 0x7f7f7f);
}

/* Glyph `g` at (x, y); with `aa`, the pixel right of a stroke is half fg, half bg. */
static void draw_glyph(const struct slim_fb *fb, int32_t x, int32_t y, int g,
		uint32_t fg, uint32_t bg, bool aa)
{
	for (int j = 0; j < GLYPH_H; j++) {
		if (y + j < 0 || y + j >= (int32_t)fb->height) {
			continue;
		}
		uint32_t bits = glyphs[g][j];
		for (int i = 0; i < GLYPH_W; i++) {
			if (x + i < 0 || x + i >= (int32_t)fb->width) {
				continue;
			}
			uint32_t *p = slim_fb_row(fb, (uint32_t)(x + i), (uint32_t)(y + j));
			if (bits & (0x80u >> i)) {
				*p = fg;
			} else if (aa && i > 0 && (bits & (0x80u >> (i - 1)))) {
				*p = mix(fg, bg);
			}
		}
	}
}

/* Lines of words of random glyphs, ragged right, over the area's background. */
static void draw_text(const struct slim_fb *fb, struct rng *r, int32_t x, int32_t y,
		int32_t w, int32_t h, uint32_t fg, uint32_t bg, bool aa)
{
	int32_t cols = w / GLYPH_W;
	for (int32_t line = 0; (line + 1) * GLYPH_H <= h; line++) {
		if (rng_below(r, 8) == 0) {
			continue; /* paragraph break */
		}
		int32_t len = cols / 2 + (int32_t)rng_below(r, (uint32_t)(cols / 2 + 1));
		int32_t col = 0;
		while (col < len) {
			int32_t word = 2 + (int32_t)rng_below(r, 8);
			for (int32_t k = 0; k < word && col < len; k++, col++) {
				draw_glyph(fb, x + col * GLYPH_W, y + line * GLYPH_H,
					(int)rng_below(r, GLYPHS), fg, bg, aa);
			}
			col++;
		}
	}
}

static void synth_text(const struct slim_fb *fb, struct rng *r)
{
	fb_fill_clipped(fb, 0, 0, (int32_t)fb->width, (int32_t)fb->height, 0xffffff);
	draw_text(fb, r, 4, 2, (int32_t)fb->width - 8, (int32_t)fb->height - 4,
		0x000000, 0xffffff, false);
}

static void synth_ui(const struct slim_fb *fb, struct rng *r)
{
	fb_fill_clipped(fb, 0, 0, (int32_t)fb->width, (int32_t)fb->height, 0x2e3440);
	for (int n = 0; n < 6; n++) {
		int32_t w = 400 + (int32_t)rng_below(r, 700), h = 300 + (int32_t)rng_below(r, 500);
		int32_t x = (int32_t)rng_below(r, fb->width - 200) - 100;
		int32_t y = (int32_t)rng_below(r, fb->height - 150);
		fb_fill_clipped(fb, x - 1, y - 1, w + 2, h + 2, 0x4c566a);
		/* title bar: a vertical gradient and the title */
		for (int32_t j = 0; j < 28; j++) {
			uint32_t c = 0x5e81ac - (uint32_t)(j / 4) * 0x020304;
			fb_fill_clipped(fb, x, y + j, w, 1, c);
		}
		draw_text(fb, r, x + w / 3, y + 6, w / 4, GLYPH_H, 0xffffff, 0x5a7aa4, true);
		fb_fill_clipped(fb, x, y + 28, w, h - 28, 0xeceff4);
		/* toolbar: buttons with icons */
		fb_fill_clipped(fb, x, y + 28, w, 36, 0xd8dee9);
		for (int32_t k = 0; k < 8 && 8 + k * 32 + 24 < w; k++) {
			int32_t bx = x + 8 + k * 32, by = y + 34;
			fb_fill_clipped(fb, bx, by, 24, 24, 0xa0a8b8);
			fb_fill_clipped(fb, bx + 1, by + 1, 22, 22, 0xf0f2f6);
			uint32_t icon = (uint32_t)rng_next(r) & 0xffffff;
			for (int32_t j = 0; j < 16; j++) {
				fb_fill_clipped(fb, bx + 4 + (j & 3), by + 4 + j, 8 - (j & 3) * 2, 1,
					icon ^ (uint32_t)(j * 0x080808));
			}
		}
		/* sidebar list and the document */
		fb_fill_clipped(fb, x, y + 64, 160, h - 64, 0xe5e9f0);
		draw_text(fb, r, x + 8, y + 72, 144, h - 80, 0x3b4252, 0xe5e9f0, true);
		fb_fill_clipped(fb, x + 168, y + 72, w - 176, h - 80, 0xffffff);
		draw_text(fb, r, x + 176, y + 80, w - 192, h - 96, 0x2e3440, 0xffffff, true);
	}
}

static uint8_t clamp8(int v)
{
	return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

static void synth_photo(const struct slim_fb *fb, struct rng *r)
{
	uint32_t w = fb->width, h = fb->height;
	int16_t *cx = xmalloc(3 * w * sizeof(*cx)), *cy = xmalloc(3 * h * sizeof(*cy));
	int16_t *cd = xmalloc(3 * (w + h) * sizeof(*cd));
	for (int c = 0; c < 3; c++) {
		double f1 = 0.002 + 0.001 * c, f2 = 0.003 + 0.002 * c, f3 = 0.01 + 0.005 * c;
		for (uint32_t i = 0; i < w; i++) {
			cx[c * w + i] = (int16_t)(60 * sin(i * f1 + c));
		}
		for (uint32_t i = 0; i < h; i++) {
			cy[c * h + i] = (int16_t)(50 * cos(i * f2 + 2 * c));
		}
		for (uint32_t i = 0; i < w + h; i++) {
			cd[c * (w + h) + i] = (int16_t)(20 * sin(i * f3));
		}
	}
	for (uint32_t y = 0; y < h; y++) {
		uint32_t *row = slim_fb_row(fb, 0, y);
		for (uint32_t x = 0; x < w; x++) {
			uint64_t noise = rng_next(r);
			uint32_t px = 0;
			for (int c = 0; c < 3; c++) {
				int v = 128 + cx[c * w + x] + cy[c * h + y] + cd[c * (w + h) + x + y] +
					(int)((noise >> (8 * c)) & 15) - 8;
				px |= (uint32_t)clamp8(v) << (8 * c);
			}
			row[x] = px;
		}
	}
	free(cx);
	free(cy);
	free(cd);
}

static struct slim_fb image_create(enum content kind, uint64_t seed)
{
	struct slim_fb fb = {
		.px = xmalloc((size_t)SCREEN_W * SCREEN_H * 4),
		.width = SCREEN_W, .height = SCREEN_H, .stride = SCREEN_W,
	};
	struct rng r = { seed };
	switch (kind) {
	case CONTENT_TEXT:
		synth_text(&fb, &r);
		break;
	case CONTENT_UI:
		synth_ui(&fb, &r);
		break;
	case CONTENT_PHOTO:
	case CONTENT_COUNT:
		synth_photo(&fb, &r);
		break;
	}
	return fb;
}

/* A random position for a w x h rectangle on the screen. */
static struct slim_rect place(struct bench *b, uint32_t w, uint32_t h)
{
	return (struct slim_rect){
		(uint16_t)rng_below(&b->rng, SCREEN_W - w + 1),
		(uint16_t)rng_below(&b->rng, SCREEN_H - h + 1),
		(uint16_t)w, (uint16_t)h,
	};
}

static struct slim_wire_rect wire_rect(struct slim_rect r)
{
	return (struct slim_wire_rect){ r.x, r.y, r.w, r.h };
}

static bool put_fill(struct bench *b, struct slim_writer *w, uint32_t side)
{
	uint32_t color = (uint32_t)rng_next(&b->rng) & 0xffffff;
	return slim_put_fill(w, place(b, side, side), color);
}

/* `side` x `side` pixels of `image` at the rectangle's own position, packed. */
static size_t copy_pixels(struct bench *b, enum content image, struct slim_rect r,
		bool rgb888)
{
	const struct slim_fb *fb = &b->images[image];
	uint8_t *out = b->scratch;
	for (uint32_t y = 0; y < r.h; y++) {
		const uint32_t *row = slim_fb_row(fb, r.x, r.y + y);
		for (uint32_t x = 0; x < r.w; x++) {
			if (rgb888) {
				*out++ = (uint8_t)row[x];
				*out++ = (uint8_t)(row[x] >> 8);
				*out++ = (uint8_t)(row[x] >> 16);
			} else {
				memcpy(out, &row[x], 4);
				out += 4;
			}
		}
	}
	return (size_t)(out - b->scratch);
}

static bool put_set(struct bench *b, struct slim_writer *w, uint32_t side, uint8_t flags,
		enum content image)
{
	struct slim_rect r = place(b, side, side);
	size_t raw = copy_pixels(b, image, r, flags & SLIM_SET_RGB888);
	const uint8_t *payload = b->scratch;
	size_t len = raw;
	if (flags & SLIM_SET_LZ4) {
		int n = LZ4_compress_default((const char *)b->scratch, (char *)b->lz4, (int)raw,
			LZ4_compressBound((int)raw));
		if (n <= 0) {
			die("LZ4 compression failed");
		}
		payload = b->lz4;
		len = (size_t)n;
	}
	struct slim_wire_set s = { .r = wire_rect(r) };
	uint8_t *body = slim_writer_add(w, SLIM_CMD_SET, flags, sizeof(s) + len);
	if (!body) {
		return false;
	}
	memcpy(body, &s, sizeof(s));
	memcpy(body + sizeof(s), payload, len);
	return true;
}

static bool put_set_xrgb(struct bench *b, struct slim_writer *w, uint32_t side)
{
	return put_set(b, w, side, 0, CONTENT_PHOTO);
}

static bool put_set_rgb888(struct bench *b, struct slim_writer *w, uint32_t side)
{
	return put_set(b, w, side, SLIM_SET_RGB888, CONTENT_PHOTO);
}

static bool put_set_lz4(struct bench *b, struct slim_writer *w, uint32_t side)
{
	return put_set(b, w, side, SLIM_SET_RGB888 | SLIM_SET_LZ4, CONTENT_UI);
}

/* Text: the glyphs' pixels are the set bits. */
static bool put_bitmap(struct bench *b, struct slim_writer *w, uint32_t side)
{
	struct slim_rect r = place(b, side, side);
	size_t stride = (side + 7) / 8;
	struct slim_wire_bitmap bm = { .r = wire_rect(r), .fg = 0x000000, .bg = 0xffffff };
	uint8_t *body = slim_writer_add(w, SLIM_CMD_BITMAP, 0, sizeof(bm) + stride * side);
	if (!body) {
		return false;
	}
	memcpy(body, &bm, sizeof(bm));
	uint8_t *bits = body + sizeof(bm);
	memset(bits, 0, stride * side);
	const struct slim_fb *text = &b->images[CONTENT_TEXT];
	for (uint32_t y = 0; y < side; y++) {
		const uint32_t *row = slim_fb_row(text, r.x, r.y + y);
		for (uint32_t x = 0; x < side; x++) {
			if ((row[x] & 0xffffff) != 0xffffff) {
				bits[y * stride + x / 8] |= (uint8_t)(0x80 >> (x % 8));
			}
		}
	}
	return true;
}

static bool put_copy(struct bench *b, struct slim_writer *w, uint32_t side)
{
	struct slim_rect src = place(b, side, side), dst = place(b, side, side);
	return slim_put_copy(w, src, dst.x, dst.y);
}

/* A side x side photo as YUV 4:2:0, shown at twice its size. */
static bool put_cscs(struct bench *b, struct slim_writer *w, uint32_t side, uint8_t depth)
{
	size_t ys, cs;
	size_t len = slim_cscs_payload_len((uint16_t)side, (uint16_t)side, depth, &ys, &cs);
	struct slim_rect dst = place(b, 2 * side, 2 * side);
	struct slim_wire_cscs c = {
		.src_w = (uint16_t)side, .src_h = (uint16_t)side,
		.dst = wire_rect(dst),
		.psrc = { 0, 0, (uint16_t)side, (uint16_t)side },
		.pdst = wire_rect(dst),
	};
	uint8_t *body = slim_writer_add(w, SLIM_CMD_CSCS, depth, sizeof(c) + len);
	if (!body) {
		return false;
	}
	memcpy(body, &c, sizeof(c));
	uint8_t *yp = body + sizeof(c), *up = yp + ys * side, *vp = up + cs * ((side + 1) / 2);
	memset(yp, 0, len);
	const struct slim_fb *photo = &b->images[CONTENT_PHOTO];
	struct slim_rect at = place(b, side, side);
	bool d4 = depth == SLIM_CSCS_DEPTH4;
	for (uint32_t y = 0; y < side; y++) {
		const uint32_t *row = slim_fb_row(photo, at.x, at.y + y);
		for (uint32_t x = 0; x < side; x++) {
			uint8_t luma = (uint8_t)(row[x] >> 8);
			if (d4) {
				yp[y * ys + x / 2] |= (uint8_t)((luma >> 4) << ((x & 1) ? 0 : 4));
			} else {
				yp[y * ys + x] = luma;
			}
			if ((x & 1) || (y & 1)) {
				continue;
			}
			uint8_t u = (uint8_t)row[x], v = (uint8_t)(row[x] >> 16);
			uint32_t cx = x / 2, cy = y / 2;
			if (d4) {
				int shift = (cx & 1) ? 0 : 4;
				up[cy * cs + cx / 2] |= (uint8_t)((u >> 4) << shift);
				vp[cy * cs + cx / 2] |= (uint8_t)((v >> 4) << shift);
			} else {
				up[cy * cs + cx] = u;
				vp[cy * cs + cx] = v;
			}
		}
	}
	return true;
}

static bool put_cscs8(struct bench *b, struct slim_writer *w, uint32_t side)
{
	return put_cscs(b, w, side, SLIM_CSCS_DEPTH8);
}

static bool put_cscs4(struct bench *b, struct slim_writer *w, uint32_t side)
{
	return put_cscs(b, w, side, SLIM_CSCS_DEPTH4);
}

/* Anti-aliased text's kind of tile: 8 colours in runs of 1 to 12 pixels. */
static bool put_palette(struct bench *b, struct slim_writer *w, uint32_t side)
{
	struct slim_rect r = place(b, side, side);
	size_t n = (size_t)side * side;
	uint8_t runs[2 * 256 * 256];
	size_t len = 0;
	for (size_t i = 0; i < n;) {
		size_t run = 1 + rng_next(&b->rng) % 12;
		run = run < n - i ? run : n - i;
		uint8_t v = (uint8_t)(rng_next(&b->rng) % 8);
		runs[len++] = run == 1 ? v : (uint8_t)(v | 0x80);
		if (run > 1) {
			runs[len++] = (uint8_t)(run - 1);
		}
		i += run;
	}
	struct slim_wire_palette p = { .r = wire_rect(r), .colors = 8 };
	uint8_t *body = slim_writer_add(w, SLIM_CMD_PALETTE, SLIM_PALETTE_RLE,
		sizeof(p) + 3 * 8 + len);
	if (!body) {
		return false;
	}
	memcpy(body, &p, sizeof(p));
	for (int i = 0; i < 8; i++) {
		memset(body + sizeof(p) + 3 * i, i * 32, 3);
	}
	memcpy(body + sizeof(p) + 3 * 8, runs, len);
	return true;
}

/* A tile the console keeps: slot `side`, stored by bench_command first. */
static bool put_cache_draw(struct bench *b, struct slim_writer *w, uint32_t side)
{
	struct slim_wire_cache c = { .slot = (uint16_t)side,
		.r = wire_rect(place(b, side, side)) };
	uint8_t *body = slim_writer_add(w, SLIM_CMD_CACHE_DRAW, 0, sizeof(c));
	if (body) {
		memcpy(body, &c, sizeof(c));
	}
	return body != NULL;
}

static const struct cmd_spec specs[CMD_COUNT] = {
	[CMD_FILL] = {
		"fill", "FILL", put_fill,
		{ 1, 2, 4, 8, 16, 32, 64, 128, 256 },
		5000, 2, NULL, 1, false,
	},
	[CMD_SET_XRGB] = {
		"set_xrgb", "SET (XRGB8888 raw)", put_set_xrgb,
		{ 1, 2, 4, 8, 16, 32, 48, 63 },
		5000, 270, "3-byte SET", 1, false,
	},
	[CMD_SET_RGB888] = {
		"set_rgb888", "SET (RGB888 raw)", put_set_rgb888,
		{ 1, 2, 4, 8, 16, 32, 48, 64, 80 },
		5000, 270, NULL, 1, false,
	},
	[CMD_SET_LZ4] = {
		"set_lz4_rgb888", "SET (LZ4 RGB888, UI)", put_set_lz4,
		{ 1, 2, 4, 8, 16, 32, 64, 128, 256 },
		0, 0, "no LZ4", 1, false,
	},
	[CMD_BITMAP] = {
		"bitmap", "BITMAP", put_bitmap,
		{ 1, 2, 4, 8, 16, 32, 64, 128, 256 },
		11080, 22, NULL, 2, false,
	},
	[CMD_COPY] = {
		"copy", "COPY", put_copy,
		{ 1, 2, 4, 8, 16, 32, 64, 128, 256 },
		5000, 10, NULL, 1, false,
	},
	[CMD_CSCS8] = {
		"cscs8_2x", "CSCS depth 8 (12 bpp), 2x", put_cscs8,
		{ 2, 4, 8, 16, 32, 64, 128, 200 },
		24000, 193, "12 bpp", 3, true,
	},
	[CMD_CSCS4] = {
		"cscs4_2x", "CSCS depth 4 (6 bpp), 2x", put_cscs4,
		{ 2, 4, 8, 16, 32, 64, 128, 256 },
		24000, 150, "5 bpp", 3, true,
	},
	[CMD_PALETTE] = {
		"palette_runs", "PALETTE (8 colours, runs)", put_palette,
		{ 1, 2, 4, 8, 16, 32, 64, 128, 256 },
		0, 0, "no palette", 1, false,
	},
	[CMD_CACHE_DRAW] = {
		"cache_draw", "CACHE_DRAW", put_cache_draw,
		{ 1, 2, 4, 8, 16, 32 },
		0, 0, "no cache", 1, false,
	},
};

static void patch_seq(uint8_t *buf, uint32_t seq)
{
	memcpy(buf + offsetof(struct slim_wire_dgram, seq), &seq, sizeof(seq));
}

/* Feeds the datagram `iters` times; returns the time taken in ns. */
static double run(struct bench *b, uint8_t *buf, size_t len, uint64_t iters)
{
	const struct slim_console_stats *stats = slim_console_core_stats(b->core);
	uint64_t applied = stats->applied;
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < iters; i++) {
		patch_seq(buf, ++b->seq);
		if (slim_console_core_receive(b->core, buf, len) != SLIM_OK) {
			die("the console rejected a datagram");
		}
	}
	uint64_t t1 = now_ns();
	if (stats->applied - applied != iters) {
		die("the console did not apply every datagram");
	}
	return (double)(t1 - t0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return v[n / 2];
}

/* ns a datagram: the median of the repetitions, after a warm-up. */
static double measure(struct bench *b, uint8_t *buf, size_t len)
{
	uint64_t iters = 1;
	double t;
	while ((t = run(b, buf, len, iters)) < b->rep_ns / 10) {
		iters *= 4;
	}
	iters = (uint64_t)ceil((double)iters * b->rep_ns / t);
	run(b, buf, len, iters);
	double samples[MAX_REPS];
	for (int r = 0; r < b->reps; r++) {
		samples[r] = run(b, buf, len, iters) / (double)iters;
	}
	return median(samples, b->reps);
}

/*
 * cost = a + b * pixels, by least squares weighted by 1/cost^2, i.e.
 * minimising relative errors.
 */
static void fit(struct cmd_result *res)
{
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (size_t i = 0; i < res->n_samples; i++) {
		double x = (double)res->samples[i].pixels, y = res->samples[i].ns;
		double w = 1 / (y > 1 ? y * y : 1);
		sw += w;
		sx += w * x;
		sy += w * y;
		sxx += w * x * x;
		sxy += w * x * y;
	}
	double det = sw * sxx - sx * sx;
	res->ns_per_pixel = det != 0 ? (sw * sxy - sx * sy) / det : 0;
	res->startup_ns = (sy - res->ns_per_pixel * sx) / sw;
	/* R^2 of the fit on the plain data, for judging the linear model */
	double mean = 0, ss_tot = 0, ss_res = 0;
	for (size_t i = 0; i < res->n_samples; i++) {
		mean += res->samples[i].ns / (double)res->n_samples;
	}
	for (size_t i = 0; i < res->n_samples; i++) {
		const struct sample *s = &res->samples[i];
		double e = s->ns - (res->startup_ns + res->ns_per_pixel * (double)s->pixels);
		ss_res += e * e;
		ss_tot += (s->ns - mean) * (s->ns - mean);
	}
	res->fit_r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
}

static size_t build(struct bench *b, const struct cmd_spec *spec, uint32_t side,
		uint32_t *commands)
{
	struct slim_writer w;
	slim_writer_init(&w, b->buf, DGRAM_MAX, BENCH_ASSOC, false);
	uint32_t k = 0;
	while (k < MAX_PER_DGRAM && spec->put(b, &w, side)) {
		k++;
	}
	if (k == 0) {
		die("a command does not fit in a datagram");
	}
	*commands = k;
	return slim_writer_finish(&w, 0, 0);
}

static void bench_command(struct bench *b, enum bench_cmd which, struct results *res)
{
	const struct cmd_spec *spec = &specs[which];
	struct cmd_result *out = &res->cmd[which];
	for (size_t i = 0; i < MAX_SIZES && spec->sides[i] != 0; i++) {
		uint32_t side = spec->sides[i], k;
		if (which == CMD_CACHE_DRAW) {
			/* the slot this size draws, kept by a datagram of its own */
			struct slim_writer w;
			slim_writer_init(&w, b->buf, DGRAM_MAX, BENCH_ASSOC, false);
			struct slim_wire_cache c = { .slot = (uint16_t)side,
				.r = wire_rect(place(b, side, side)) };
			memcpy(slim_writer_add(&w, SLIM_CMD_CACHE_STORE, 0, sizeof(c)), &c, sizeof(c));
			size_t store = slim_writer_finish(&w, 0, 0);
			run(b, b->buf, store, 1);
		}
		size_t len = build(b, spec, side, &k);
		double ns = (measure(b, b->buf, len) - res->datagram_ns) / k;
		uint64_t pixels = (uint64_t)side * side * (spec->per_output_pixel ? 4 : 1);
		out->samples[out->n_samples++] = (struct sample){ pixels, k, ns };
		out->wire_bytes_per_pixel =
			(double)(len - sizeof(struct slim_wire_dgram)) / k / (double)pixels;
		if (b->verbose) {
			fprintf(stderr, "%-28s %8llu px x %2u: %10.1f ns/command\n", spec->name,
				(unsigned long long)pixels, k, ns);
		}
	}
	fit(out);
}

static void bench_console(struct bench *b, struct results *res)
{
	struct slim_writer w;
	slim_writer_init(&w, b->buf, DGRAM_MAX, BENCH_ASSOC, false);
	size_t len = slim_writer_finish(&w, 0, 0);
	res->datagram_ns = measure(b, b->buf, len);
	for (int i = 0; i < CMD_COUNT; i++) {
		bench_command(b, (enum bench_cmd)i, res);
	}
}

static void count_bytes(void *data, const uint8_t *buf, size_t len)
{
	*(uint64_t *)data += len;
}

/*
 * The server half: how fast the encoder turns a fully damaged 1920x1080
 * framebuffer into datagrams (MB/s of XRGB8888 framebuffer), and how many
 * bytes it sends against raw 24-bit pixels. Frames alternate between two
 * different pictures of the same kind, so every pixel has changed; LZ4,
 * RGB888 and scroll detection on, as the compositor runs it.
 */
static void bench_encoder(struct bench *b, struct results *res)
{
	struct slim_encoder_config cfg = {
		.assoc = BENCH_ASSOC, .lz4 = true, .rgb888 = true, .detect_scroll = true,
	};
	pixman_region32_t damage;
	pixman_region32_init_rect(&damage, 0, 0, SCREEN_W, SCREEN_H);
	int frames = b->quick ? 2 : 8;
	for (int k = 0; k < CONTENT_COUNT; k++) {
		struct slim_fb alt = image_create((enum content)k, 2000 + (uint64_t)k);
		const struct slim_fb *pictures[2] = { &b->images[k], &alt };
		uint64_t bytes = 0;
		struct slim_encoder *enc = slim_encoder_create(SCREEN_W, SCREEN_H, &cfg,
			count_bytes, &bytes);
		if (!enc) {
			die("cannot create the encoder");
		}
		struct slim_frame frame = { .fb = pictures[1], .damage = &damage };
		slim_encoder_frame(enc, &frame); /* the first frame repaints everything */
		double ns[MAX_REPS];
		uint64_t sent = 0;
		for (int r = 0; r < b->reps; r++) {
			bytes = 0;
			uint64_t t0 = now_ns();
			for (int i = 0; i < frames; i++) {
				frame.fb = pictures[i & 1];
				slim_encoder_frame(enc, &frame);
			}
			ns[r] = (double)(now_ns() - t0);
			sent = bytes;
		}
		double t = median(ns, b->reps);
		double pixels = (double)frames * SCREEN_W * SCREEN_H;
		res->encoder[k] = (struct encoder_result){
			.measured = true,
			.mb_per_s = pixels * 4 / t * 1e3,
			.compression = pixels * 3 / (double)sent,
		};
		slim_encoder_destroy(enc);
		free(alt.px);
	}
	pixman_region32_fini(&damage);
}

/* The two numbers of drm-present.json, which the VM test writes. */
static struct drm_present read_drm_present(void)
{
	struct drm_present p = { 0 };
	const char *path = getenv("SLIM_DRM_PRESENT_JSON");
#ifdef SLIM_DRM_PRESENT_JSON
	if (!path) {
		path = SLIM_DRM_PRESENT_JSON;
	}
#endif
	FILE *f = path ? fopen(path, "r") : NULL;
	if (!f) {
		return p;
	}
	char text[4096];
	size_t len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';
	const char *startup = strstr(text, "\"startup_ns\":");
	const char *per_px = strstr(text, "\"per_pixel_ns\":");
	if (startup && per_px) {
		p.startup_ns = strtod(startup + strlen("\"startup_ns\":"), NULL);
		p.ns_per_pixel = strtod(per_px + strlen("\"per_pixel_ns\":"), NULL);
		p.measured = true;
	}
	return p;
}

static bool meets(double value, double target)
{
	return value <= target;
}

static void print_table(const struct results *res)
{
	printf("Console protocol processing costs (cf. SLIM Table 5)%s\n",
		res->quick ? " -- quick run, numbers are rough" : "");
	printf("one core, %dx%d framebuffer, through slim_console_core_receive;\n"
		"cost of a command = startup + pixels x per-pixel (CSCS: output pixels)\n\n",
		SCREEN_W, SCREEN_H);
	printf("%-28s %19s   %19s   %8s   %19s   %19s\n", "", "Sun Ray 1", "slimland", "wire",
		"DRM present (emul.)", "target");
	printf("%-28s %9s %9s   %9s %9s   %8s   %9s %9s   %9s %9s\n", "command", "startup",
		"per px", "startup", "per px", "B/px", "startup", "per px", "startup", "per px");
	/* the same for every command: what its damage costs to put on a KMS display */
	char drm[64];
	if (res->drm.measured) {
		snprintf(drm, sizeof(drm), "%6.0f ns %6.2f ns", res->drm.startup_ns,
			res->drm.ns_per_pixel);
	} else {
		snprintf(drm, sizeof(drm), "%9s %9s", "-", "-");
	}
	bool all = true;
	for (int i = 0; i < CMD_COUNT; i++) {
		const struct cmd_spec *spec = &specs[i];
		const struct cmd_result *c = &res->cmd[i];
		char sunray[64];
		if (spec->sunray_startup_ns > 0) {
			snprintf(sunray, sizeof(sunray), "%6.0f ns %6.0f ns", spec->sunray_startup_ns,
				spec->sunray_ns_per_pixel);
		} else {
			snprintf(sunray, sizeof(sunray), "%9s %9s", "-", "-");
		}
		bool ok = meets(c->startup_ns, TARGET_STARTUP_NS) &&
			meets(c->ns_per_pixel, spec->target_ns_per_pixel);
		all = all && ok;
		char note[64] = "";
		if (spec->sunray_note) {
			snprintf(note, sizeof(note), "  (Sun Ray: %s)", spec->sunray_note);
		}
		printf("%-28s %s   %6.0f ns %6.2f ns   %8.4f   %s   %6.0f ns %6.0f ns  %-6s%s\n",
			spec->name, sunray, c->startup_ns, c->ns_per_pixel,
			c->wire_bytes_per_pixel, drm, TARGET_STARTUP_NS, spec->target_ns_per_pixel,
			ok ? "ok" : "MISSED", note);
	}
	printf("%-28s %19s   %6.0f ns\n", "datagram (header, sequence)", "",
		res->datagram_ns);
	printf("\ntargets %s\n", all ? "met" : "MISSED");
	printf("DRM present: copying the damage into the KMS scanout buffer, %s\n",
		res->drm.measured ? "measured by the VM test under QEMU software emulation "
		"(a real machine is faster)" : "not measured (meson test --suite vm measures it)");

	bool any = false;
	for (int i = 0; i < CONTENT_COUNT; i++) {
		any = any || res->encoder[i].measured;
	}
	if (!any) {
		return;
	}
	printf("\nEncoder, %dx%d, one core\n", SCREEN_W, SCREEN_H);
	printf("%-10s %12s %22s\n", "content", "MB/s", "vs raw 24-bit pixels");
	for (int i = 0; i < CONTENT_COUNT; i++) {
		const struct encoder_result *e = &res->encoder[i];
		if (e->measured) {
			printf("%-10s %12.1f %21.1fx\n", content_names[i], e->mb_per_s,
				e->compression);
		}
	}
}

static void print_json(const struct results *res)
{
	printf("{\"quick\": %s, \"framebuffer_width_px\": %d, \"framebuffer_height_px\": %d",
		res->quick ? "true" : "false", SCREEN_W, SCREEN_H);
	printf(", \"datagram_overhead_ns\": %.1f", res->datagram_ns);
	bool all = true;
	for (int i = 0; i < CMD_COUNT; i++) {
		const struct cmd_spec *spec = &specs[i];
		const struct cmd_result *c = &res->cmd[i];
		const char *px = spec->per_output_pixel ? "output_pixel" : "pixel";
		printf(", \"%s_startup_ns\": %.1f", spec->key, c->startup_ns);
		printf(", \"%s_ns_per_%s\": %.4f", spec->key, px, c->ns_per_pixel);
		printf(", \"%s_wire_bytes_per_%s\": %.4f", spec->key, px, c->wire_bytes_per_pixel);
		printf(", \"%s_fit_r2\": %.4f", spec->key, c->fit_r2);
		if (spec->sunray_startup_ns > 0) {
			printf(", \"%s_sunray_startup_ns\": %.0f", spec->key, spec->sunray_startup_ns);
			printf(", \"%s_sunray_ns_per_pixel\": %.0f", spec->key,
				spec->sunray_ns_per_pixel);
		}
		printf(", \"%s_target_ns_per_%s\": %.1f", spec->key, px, spec->target_ns_per_pixel);
		all = all && meets(c->startup_ns, TARGET_STARTUP_NS) &&
			meets(c->ns_per_pixel, spec->target_ns_per_pixel);
	}
	printf(", \"target_startup_ns\": %.1f, \"targets_met\": %s", TARGET_STARTUP_NS,
		all ? "true" : "false");
	if (res->drm.measured) {
		printf(", \"drm_present_startup_ns\": %.1f, \"drm_present_ns_per_pixel\": %.4f"
			", \"drm_present_emulated\": true", res->drm.startup_ns, res->drm.ns_per_pixel);
	} else {
		printf(", \"drm_present_startup_ns\": null, \"drm_present_ns_per_pixel\": null");
	}
	for (int i = 0; i < CONTENT_COUNT; i++) {
		const struct encoder_result *e = &res->encoder[i];
		if (e->measured) {
			printf(", \"encoder_%s_mb_per_s\": %.2f", content_names[i], e->mb_per_s);
			printf(", \"encoder_%s_compression_ratio\": %.3f", content_names[i],
				e->compression);
		}
	}
	printf("}\n");
}

static void no_send(void *data, const uint8_t *buf, size_t len)
{
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--json] [--quick] [--verbose]\n"
		"  --json     one JSON object instead of the table\n"
		"  --quick    few iterations: checks that it runs, numbers are rough\n"
		"  --verbose  every measurement, on stderr\n", prog);
}

int main(int argc, char *argv[])
{
	bool json = false;
	struct bench b = { .rep_ns = 10e6, .reps = 9, .rng = { 42 } };
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--quick") == 0) {
			b.quick = true;
			b.rep_ns = 0.2e6;
			b.reps = 3;
		} else if (strcmp(argv[i], "--verbose") == 0) {
			b.verbose = true;
		} else {
			usage(argv[0]);
			return strcmp(argv[i], "--help") == 0 ? 0 : 2;
		}
	}

	make_glyphs(&b.rng);
	for (int i = 0; i < CONTENT_COUNT; i++) {
		b.images[i] = image_create((enum content)i, 1000 + (uint64_t)i);
	}
	b.buf = xmalloc(DGRAM_MAX);
	b.scratch = xmalloc((size_t)SLIM_MAX_PIECE_PIXELS * 4);
	b.lz4 = xmalloc((size_t)LZ4_compressBound(SLIM_MAX_PIECE_PIXELS * 4));
	b.backend = slim_headless_backend_create();
	b.core = slim_console_core_create(SCREEN_W, SCREEN_H, SLIM_DEFAULT_MTU, b.backend,
		no_send, NULL);
	if (!b.backend || !b.core) {
		die("cannot create the console");
	}
	slim_console_core_hello(b.core, "bench", BENCH_ASSOC);

	struct results res = { .quick = b.quick, .drm = read_drm_present() };
	bench_console(&b, &res);
	bench_encoder(&b, &res);

	if (json) {
		print_json(&res);
	} else {
		print_table(&res);
	}

	slim_console_core_destroy(b.core);
	b.backend->impl->destroy(b.backend);
	for (int i = 0; i < CONTENT_COUNT; i++) {
		free(b.images[i].px);
	}
	free(b.buf);
	free(b.scratch);
	free(b.lz4);
	return 0;
}
