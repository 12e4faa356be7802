/*
 * Helpers shared by the unit tests: a reproducible random generator, test
 * framebuffers, and a sink that keeps the datagrams a console sends.
 *
 * Every generator is seeded from one seed, fixed by default and printed
 * when a test fails; SLIM_TEST_SEED=<number> reruns with another one.
 */
#ifndef SLIM_TEST_UTIL_H
#define SLIM_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "slim-codec.h"
#include "slim-pixels.h"
#include "slim-proto.h"

struct test_rng {
	uint64_t s;
};

uint64_t test_seed(void);
/* Each test seeds its own generator, so tests do not depend on their order. */
void test_rng_init(struct test_rng *rng, uint64_t salt);
uint32_t test_rand(struct test_rng *rng);
/* Uniform in [0, n); n > 0. */
uint32_t test_rand_below(struct test_rng *rng, uint32_t n);
/* Uniform in [lo, hi]. */
uint32_t test_rand_range(struct test_rng *rng, uint32_t lo, uint32_t hi);
void test_rand_bytes(struct test_rng *rng, void *buf, size_t len);

/* Counts log messages instead of printing them. */
void test_quiet_logs(void);
extern unsigned long test_log_messages;

/* Runs the group and prints the seed if anything failed. */
int test_report(int failed);

/* A framebuffer with a stride wider than its width, filled with noise. */
struct slim_fb test_fb_create(uint32_t width, uint32_t height, struct test_rng *rng);
struct slim_fb test_fb_clone(const struct slim_fb *fb);
void test_fb_destroy(struct slim_fb *fb);
/* Fails with the first differing pixel if the visible pixels differ. */
void test_fb_assert_equal(const struct slim_fb *a, const struct slim_fb *b);

/*
 * Valid downstream commands with random payloads, for the rectangles and
 * headers given. Each returns the command's body in the datagram, or NULL
 * if it did not fit. With SLIM_SET_LZ4 the pixels are compressible and
 * compressed; `raw`, if not NULL, receives the uncompressed pixels
 * (slim_set_raw_len bytes).
 */
uint8_t *test_put_set(struct slim_writer *w, struct slim_rect r, uint8_t flags,
		struct test_rng *rng, uint8_t *raw);
/*
 * A PALETTE of `colors` random entries and random valid indices, packed or
 * (rle) in runs of 1 to 300 pixels. Returns the body, NULL if it does not fit.
 */
uint8_t *test_put_palette(struct slim_writer *w, struct slim_rect r, unsigned colors,
		bool rle, struct test_rng *rng);
uint8_t *test_put_bitmap(struct slim_writer *w, struct slim_rect r, uint32_t fg,
		uint32_t bg, struct test_rng *rng);
uint8_t *test_put_cscs(struct slim_writer *w, const struct slim_wire_cscs *c,
		uint8_t depth, struct test_rng *rng);
uint8_t *test_put_cursor_image(struct slim_writer *w,
		const struct slim_wire_cursor_image *h, struct test_rng *rng);

/* Keeps what a console sends upstream. */
#define TEST_SINK_MAX 32

struct test_sink {
	size_t n; /* datagrams sent; the first TEST_SINK_MAX are kept */
	size_t len[TEST_SINK_MAX];
	uint8_t buf[TEST_SINK_MAX][SLIM_MAX_MTU];
};

struct test_sink *test_sink_create(void);
void test_sink_send(void *data, const uint8_t *buf, size_t len);
void test_sink_clear(struct test_sink *sink);

#endif
