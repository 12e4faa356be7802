/*
 * The DRM backend's bookkeeping between its two scanout buffers, without a
 * device: two plain arrays stand in for the buffers, drawn only where the
 * bookkeeping says and compared with the shadow framebuffer after every
 * flip. Flips that are still pending skip frames, as on a real display.
 */
#include <stdlib.h>
#include <string.h>
#include "drm-damage.h"
#include "test-util.h"

#define W 96
#define H 64

struct screen {
	struct slim_drm_damage d;
	uint32_t shadow[W * H];
	uint32_t bufs[2][W * H];
	uint64_t copied; /* pixels copied into the buffers */
};

static void screen_init(struct screen *s)
{
	memset(s, 0, sizeof(*s));
	slim_drm_damage_init(&s->d, 0, 0, W, H);
	/* what the buffers hold at first is unknown: say so with garbage */
	for (size_t i = 0; i < W * H; i++) {
		s->bufs[0][i] = 0xdead0000u | (uint32_t)i;
		s->bufs[1][i] = 0xbeef0000u | (uint32_t)i;
	}
}

/* The shadow changes in `r` and the frame reports it. */
static void frame(struct screen *s, struct slim_rect r, uint32_t color)
{
	for (uint32_t y = r.y; y < (uint32_t)r.y + r.h && y < H; y++) {
		for (uint32_t x = r.x; x < (uint32_t)r.x + r.w && x < W; x++) {
			s->shadow[y * W + x] = color;
		}
	}
	slim_drm_damage_add(&s->d, &r, 1);
}

/* What present() does when no flip is pending: draw the back buffer, flip. */
static void draw_and_flip(struct screen *s)
{
	int n;
	const pixman_box32_t *boxes = pixman_region32_rectangles(
		(pixman_region32_t *)slim_drm_damage_back(&s->d), &n);
	uint32_t *buf = s->bufs[s->d.back];
	for (int i = 0; i < n; i++) {
		for (int32_t y = boxes[i].y1; y < boxes[i].y2; y++) {
			memcpy(buf + y * W + boxes[i].x1, s->shadow + y * W + boxes[i].x1,
				(size_t)(boxes[i].x2 - boxes[i].x1) * 4);
			s->copied += (uint64_t)(boxes[i].x2 - boxes[i].x1);
		}
	}
	int shown = s->d.back;
	slim_drm_damage_drawn(&s->d);
	assert_false(slim_drm_damage_back_stale(&s->d));
	slim_drm_damage_flipped(&s->d);
	/* what goes on screen is the whole picture, not just this frame's part */
	assert_memory_equal(s->bufs[shown], s->shadow, sizeof(s->shadow));
}

static uint32_t region_area(const pixman_region32_t *r)
{
	int n;
	const pixman_box32_t *b = pixman_region32_rectangles((pixman_region32_t *)r, &n);
	uint32_t area = 0;
	for (int i = 0; i < n; i++) {
		area += (uint32_t)((b[i].x2 - b[i].x1) * (b[i].y2 - b[i].y1));
	}
	return area;
}

static void test_starts_stale_everywhere(void **state)
{
	struct screen *s = malloc(sizeof(*s));
	screen_init(s);
	assert_true(slim_drm_damage_back_stale(&s->d));
	assert_int_equal(region_area(slim_drm_damage_back(&s->d)), W * H);
	/* the first two flips draw both buffers whole, even with no damage */
	draw_and_flip(s);
	assert_int_equal(region_area(slim_drm_damage_back(&s->d)), W * H);
	draw_and_flip(s);
	assert_false(slim_drm_damage_back_stale(&s->d));
	slim_drm_damage_finish(&s->d);
	free(s);
}

/* The back buffer gets this frame's damage plus what it missed last time, no more. */
static void test_back_buffer_catches_up(void **state)
{
	struct screen *s = malloc(sizeof(*s));
	screen_init(s);
	draw_and_flip(s);
	draw_and_flip(s);
	frame(s, (struct slim_rect){ 0, 0, 10, 10 }, 1);
	assert_int_equal(region_area(slim_drm_damage_back(&s->d)), 100);
	draw_and_flip(s);
	frame(s, (struct slim_rect){ 50, 20, 4, 5 }, 2);
	/* this buffer missed the 10x10 square too */
	assert_int_equal(region_area(slim_drm_damage_back(&s->d)), 100 + 20);
	s->copied = 0;
	draw_and_flip(s);
	assert_int_equal(s->copied, 120);
	frame(s, (struct slim_rect){ 0, 0, 10, 10 }, 3);
	/* overlapping damage is copied once */
	assert_int_equal(region_area(slim_drm_damage_back(&s->d)), 100 + 20);
	slim_drm_damage_finish(&s->d);
	free(s);
}

/* Frames while a flip is pending coalesce: one draw covers them all. */
static void test_pending_flip_coalesces(void **state)
{
	struct screen *s = malloc(sizeof(*s));
	screen_init(s);
	draw_and_flip(s);
	draw_and_flip(s);
	for (uint16_t i = 0; i < 8; i++) {
		frame(s, (struct slim_rect){ (uint16_t)(i * 8), 0, 8, 8 }, 10 + i);
	}
	assert_int_equal(region_area(slim_drm_damage_back(&s->d)), 8 * 64);
	draw_and_flip(s);
	draw_and_flip(s);
	slim_drm_damage_finish(&s->d);
	free(s);
}

/* Off-screen parts of a rectangle are nobody's business. */
static void test_clipped_to_screen(void **state)
{
	struct screen *s = malloc(sizeof(*s));
	screen_init(s);
	draw_and_flip(s);
	draw_and_flip(s);
	struct slim_rect r = { W - 4, H - 2, 100, 100 };
	slim_drm_damage_add(&s->d, &r, 1);
	assert_int_equal(region_area(slim_drm_damage_back(&s->d)), 4 * 2);
	slim_drm_damage_add(&s->d, NULL, 0);
	assert_int_equal(region_area(slim_drm_damage_back(&s->d)), 4 * 2);
	slim_drm_damage_finish(&s->d);
	free(s);
}

/* After a VT switch neither buffer can be trusted. */
static void test_add_all(void **state)
{
	struct screen *s = malloc(sizeof(*s));
	screen_init(s);
	draw_and_flip(s);
	draw_and_flip(s);
	memset(s->bufs, 0x55, sizeof(s->bufs)); /* somebody else drew meanwhile */
	slim_drm_damage_add_all(&s->d);
	draw_and_flip(s);
	draw_and_flip(s);
	slim_drm_damage_finish(&s->d);
	free(s);
}

/*
 * Two heads side by side, each with its own bookkeeping over its part of
 * the screen: a damage across both is split between them, each keeps its
 * part in the screen's coordinates, and what lies on neither is no one's.
 */
static void test_heads_split_damage(void **state)
{
	struct slim_drm_damage left, right;
	slim_drm_damage_init(&left, 0, 0, 40, 30);
	slim_drm_damage_init(&right, 40, 0, 20, 10);
	assert_int_equal(region_area(slim_drm_damage_back(&right)), 20 * 10);
	pixman_box32_t *box = pixman_region32_extents(
		(pixman_region32_t *)slim_drm_damage_back(&right));
	assert_int_equal(box->x1, 40);
	for (int i = 0; i < 2; i++) {
		slim_drm_damage_drawn(&left);
		slim_drm_damage_flipped(&left);
		slim_drm_damage_drawn(&right);
		slim_drm_damage_flipped(&right);
	}
	/* 30..50 x 5..15: 10x10 on the left, 10x5 on the right, 10x5 in the gap below it */
	struct slim_rect r = { 30, 5, 20, 10 };
	slim_drm_damage_add(&left, &r, 1);
	slim_drm_damage_add(&right, &r, 1);
	assert_int_equal(region_area(slim_drm_damage_back(&left)), 10 * 10);
	assert_int_equal(region_area(slim_drm_damage_back(&right)), 10 * 5);
	box = pixman_region32_extents((pixman_region32_t *)slim_drm_damage_back(&right));
	assert_int_equal(box->x1, 40);
	assert_int_equal(box->y1, 5);
	assert_int_equal(box->x2, 50);
	assert_int_equal(box->y2, 10);
	slim_drm_damage_add_all(&right);
	assert_int_equal(region_area(slim_drm_damage_back(&right)), 20 * 10);
	slim_drm_damage_finish(&left);
	slim_drm_damage_finish(&right);
}

/* Random frames, many rectangles each, random flip pacing: every flip shows the shadow. */
static void test_random_against_shadow(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 0xd4a3);
	struct screen *s = malloc(sizeof(*s));
	screen_init(s);
	for (int f = 0; f < 2000; f++) {
		size_t n = test_rand_range(&rng, 0, 80);
		struct slim_rect rects[80];
		for (size_t i = 0; i < n; i++) {
			uint16_t x = (uint16_t)test_rand_below(&rng, W);
			uint16_t y = (uint16_t)test_rand_below(&rng, H);
			rects[i] = (struct slim_rect){ x, y,
				(uint16_t)test_rand_range(&rng, 1, W - x),
				(uint16_t)test_rand_range(&rng, 1, H - y) };
			for (uint32_t yy = y; yy < (uint32_t)y + rects[i].h; yy++) {
				for (uint32_t xx = x; xx < (uint32_t)x + rects[i].w; xx++) {
					s->shadow[yy * W + xx] = test_rand(&rng);
				}
			}
		}
		slim_drm_damage_add(&s->d, rects, n);
		/* a third of the frames find the last flip still pending */
		if (test_rand_below(&rng, 3) != 0) {
			draw_and_flip(s);
		}
	}
	draw_and_flip(s);
	draw_and_flip(s);
	assert_memory_equal(s->bufs[0], s->shadow, sizeof(s->shadow));
	assert_memory_equal(s->bufs[1], s->shadow, sizeof(s->shadow));
	slim_drm_damage_finish(&s->d);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_starts_stale_everywhere),
		cmocka_unit_test(test_back_buffer_catches_up),
		cmocka_unit_test(test_pending_flip_coalesces),
		cmocka_unit_test(test_heads_split_damage),
		cmocka_unit_test(test_clipped_to_screen),
		cmocka_unit_test(test_add_all),
		cmocka_unit_test(test_random_against_shadow),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
