#include <inttypes.h>
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "slim-log.h"
#include "test-util.h"

#define DEFAULT_SEED UINT64_C(0x5eed51a7c0de2024)

uint64_t test_seed(void)
{
	static bool done;
	static uint64_t seed;
	if (!done) {
		const char *env = getenv("SLIM_TEST_SEED");
		seed = env && *env ? strtoull(env, NULL, 0) : DEFAULT_SEED;
		done = true;
	}
	return seed;
}

void test_rng_init(struct test_rng *rng, uint64_t salt)
{
	/* splitmix64 of seed and salt, so that no state is ever 0 */
	uint64_t z = test_seed() + salt * UINT64_C(0x9e3779b97f4a7c15) +
		UINT64_C(0x9e3779b97f4a7c15);
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	z ^= z >> 31;
	rng->s = z ? z : 1;
}

uint32_t test_rand(struct test_rng *rng)
{
	/* xorshift64* */
	uint64_t x = rng->s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng->s = x;
	return (uint32_t)((x * UINT64_C(0x2545f4914f6cdd1d)) >> 32);
}

uint32_t test_rand_below(struct test_rng *rng, uint32_t n)
{
	return (uint32_t)(((uint64_t)test_rand(rng) * n) >> 32);
}

uint32_t test_rand_range(struct test_rng *rng, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(((uint64_t)test_rand(rng) * ((uint64_t)hi - lo + 1)) >> 32);
}

void test_rand_bytes(struct test_rng *rng, void *buf, size_t len)
{
	uint8_t *p = buf;
	for (size_t i = 0; i < len; i++) {
		p[i] = (uint8_t)test_rand(rng);
	}
}

unsigned long test_log_messages;

static void count_log(enum slim_log_level level, const char *fmt, va_list args)
{
	test_log_messages++;
}

void test_quiet_logs(void)
{
	slim_log_init(SLIM_LOG_DEBUG, count_log);
}

int test_report(int failed)
{
	if (failed) {
		fprintf(stderr, "random seed: SLIM_TEST_SEED=%#" PRIx64 "\n", test_seed());
	}
	return failed;
}

struct slim_fb test_fb_create(uint32_t width, uint32_t height, struct test_rng *rng)
{
	size_t stride = width + 3;
	struct slim_fb fb = {
		.px = malloc(stride * height * 4),
		.width = width,
		.height = height,
		.stride = stride,
	};
	assert_non_null(fb.px);
	if (rng) {
		test_rand_bytes(rng, fb.px, stride * height * 4);
	} else {
		memset(fb.px, 0, stride * height * 4);
	}
	return fb;
}

struct slim_fb test_fb_clone(const struct slim_fb *fb)
{
	struct slim_fb c = *fb;
	c.px = malloc(fb->stride * fb->height * 4);
	assert_non_null(c.px);
	memcpy(c.px, fb->px, fb->stride * fb->height * 4);
	return c;
}

void test_fb_destroy(struct slim_fb *fb)
{
	free(fb->px);
	fb->px = NULL;
}

void test_fb_assert_equal(const struct slim_fb *a, const struct slim_fb *b)
{
	assert_int_equal(a->width, b->width);
	assert_int_equal(a->height, b->height);
	for (uint32_t y = 0; y < a->height; y++) {
		const uint32_t *ra = slim_fb_row(a, 0, y), *rb = slim_fb_row(b, 0, y);
		for (uint32_t x = 0; x < a->width; x++) {
			if (ra[x] != rb[x]) {
				fail_msg("pixel (%u, %u): %#010x != %#010x", x, y, ra[x], rb[x]);
			}
		}
	}
}

struct test_sink *test_sink_create(void)
{
	struct test_sink *sink = calloc(1, sizeof(*sink));
	assert_non_null(sink);
	return sink;
}

void test_sink_send(void *data, const uint8_t *buf, size_t len)
{
	struct test_sink *sink = data;
	assert_true(len <= SLIM_MAX_MTU);
	if (sink->n < TEST_SINK_MAX) {
		memcpy(sink->buf[sink->n], buf, len);
		sink->len[sink->n] = len;
	}
	sink->n++;
}

void test_sink_clear(struct test_sink *sink)
{
	sink->n = 0;
}

static void random_pixels(struct test_rng *rng, uint8_t *out, size_t len, bool compressible)
{
	if (!compressible) {
		test_rand_bytes(rng, out, len);
		return;
	}
	/* runs of one byte pattern, as in flat user interfaces */
	size_t i = 0;
	while (i < len) {
		uint8_t v = (uint8_t)test_rand(rng);
		size_t run = test_rand_range(rng, 1, 64);
		for (; run > 0 && i < len; run--, i++) {
			out[i] = v;
		}
	}
}

uint8_t *test_put_set(struct slim_writer *w, struct slim_rect r, uint8_t flags,
		struct test_rng *rng, uint8_t *raw)
{
	size_t raw_len = slim_set_raw_len(r, flags);
	uint8_t *px = malloc(raw_len ? raw_len : 1);
	assert_non_null(px);
	random_pixels(rng, px, raw_len, flags & SLIM_SET_LZ4);
	if (raw) {
		memcpy(raw, px, raw_len);
	}
	const uint8_t *payload = px;
	size_t payload_len = raw_len;
	char *packed = NULL;
	if (flags & SLIM_SET_LZ4) {
		int bound = LZ4_compressBound((int)raw_len);
		packed = malloc((size_t)bound);
		assert_non_null(packed);
		int n = LZ4_compress_default((const char *)px, packed, (int)raw_len, bound);
		assert_true(n > 0);
		payload = (const uint8_t *)packed;
		payload_len = (size_t)n;
	}
	struct slim_wire_set s = { .r = { r.x, r.y, r.w, r.h } };
	uint8_t *body = slim_writer_add(w, SLIM_CMD_SET, flags, sizeof(s) + payload_len);
	if (body) {
		memcpy(body, &s, sizeof(s));
		memcpy(body + sizeof(s), payload, payload_len);
	}
	free(packed);
	free(px);
	return body;
}

uint8_t *test_put_bitmap(struct slim_writer *w, struct slim_rect r, uint32_t fg,
		uint32_t bg, struct test_rng *rng)
{
	size_t bits = ((size_t)r.w + 7) / 8 * r.h;
	struct slim_wire_bitmap b = { .r = { r.x, r.y, r.w, r.h }, .fg = fg, .bg = bg };
	uint8_t *body = slim_writer_add(w, SLIM_CMD_BITMAP, 0, sizeof(b) + bits);
	if (body) {
		memcpy(body, &b, sizeof(b));
		test_rand_bytes(rng, body + sizeof(b), bits);
	}
	return body;
}

uint8_t *test_put_palette(struct slim_writer *w, struct slim_rect r, unsigned colors,
		bool rle, struct test_rng *rng)
{
	size_t n = (size_t)r.w * r.h;
	uint8_t *data = malloc(2 * n + 16);
	assert_non_null(data);
	size_t len = 0;
	if (rle) {
		for (size_t i = 0; i < n;) {
			size_t run = test_rand_range(rng, 1, 300);
			run = run < n - i ? run : n - i;
			uint8_t v = (uint8_t)test_rand_below(rng, colors);
			i += run;
			if (run == 1) {
				data[len++] = v;
				continue;
			}
			data[len++] = v | 0x80;
			for (run--; run >= 255; run -= 255) {
				data[len++] = 255;
			}
			data[len++] = (uint8_t)run;
		}
	} else {
		unsigned bits = slim_palette_bits(colors);
		size_t stride = ((size_t)r.w * bits + 7) / 8;
		len = stride * r.h;
		memset(data, 0, len);
		for (uint32_t y = 0; y < r.h; y++) {
			for (uint32_t x = 0; x < r.w; x++) {
				size_t bit = (size_t)x * bits;
				data[y * stride + bit / 8] |= (uint8_t)(test_rand_below(rng, colors)
					<< (8 - bits - bit % 8));
			}
		}
	}
	struct slim_wire_palette p = { .r = { r.x, r.y, r.w, r.h }, .colors = (uint8_t)colors };
	uint8_t *body = slim_writer_add(w, SLIM_CMD_PALETTE, rle ? SLIM_PALETTE_RLE : 0,
		sizeof(p) + 3 * (size_t)colors + len);
	if (body) {
		memcpy(body, &p, sizeof(p));
		test_rand_bytes(rng, body + sizeof(p), 3 * (size_t)colors);
		memcpy(body + sizeof(p) + 3 * (size_t)colors, data, len);
	}
	free(data);
	return body;
}

uint8_t *test_put_cscs(struct slim_writer *w, const struct slim_wire_cscs *c,
		uint8_t depth, struct test_rng *rng)
{
	size_t n = slim_cscs_payload_len(c->psrc.w, c->psrc.h, depth, NULL, NULL);
	uint8_t *body = slim_writer_add(w, SLIM_CMD_CSCS, depth, sizeof(*c) + n);
	if (body) {
		memcpy(body, c, sizeof(*c));
		test_rand_bytes(rng, body + sizeof(*c), n);
	}
	return body;
}

uint8_t *test_put_cursor_image(struct slim_writer *w,
		const struct slim_wire_cursor_image *h, struct test_rng *rng)
{
	size_t n = (size_t)h->w * h->rows * 4;
	uint8_t *body = slim_writer_add(w, SLIM_CMD_CURSOR_IMAGE, 0, sizeof(*h) + n);
	if (body) {
		memcpy(body, h, sizeof(*h));
		test_rand_bytes(rng, body + sizeof(*h), n);
	}
	return body;
}
