/*
 * The screen the console draws itself while it has no server picture:
 * text in the middle, the background everywhere else, the whole screen
 * presented; and its font's few promises.
 */
#include <stdlib.h>
#include <string.h>
#include "slim-font.h"
#include "status-screen.h"
#include "test-util.h"

/* A backend that keeps the damage it was asked to present. */
struct rec_backend {
	struct slim_console_backend base;
	int frames;
	struct slim_rect damage[4];
	size_t n_damage;
};

static bool rec_init(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	return true;
}

static void rec_present(struct slim_console_backend *b, const struct slim_fb *fb,
		const struct slim_rect *damage, size_t n)
{
	struct rec_backend *r = (struct rec_backend *)b;
	r->frames++;
	assert_true(n <= 4);
	memcpy(r->damage, damage, n * sizeof(*damage));
	r->n_damage = n;
}

static bool rec_resize(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	return true;
}

static void rec_destroy(struct slim_console_backend *b)
{
}

static const struct slim_console_backend_impl rec_impl = {
	.name = "record",
	.init = rec_init,
	.present = rec_present,
	.resize = rec_resize,
	.destroy = rec_destroy,
};

static struct slim_fb make_fb(uint32_t width, uint32_t height)
{
	struct slim_fb fb = { .px = malloc((size_t)width * height * 4), .width = width,
		.height = height, .stride = width };
	assert_non_null(fb.px);
	/* anything but the background, to see that all of it is painted */
	for (size_t i = 0; i < (size_t)width * height; i++) {
		fb.px[i] = 0x123456;
	}
	return fb;
}

static size_t count_ink(const struct slim_fb *fb, uint32_t x0, uint32_t y0, uint32_t x1,
		uint32_t y1)
{
	size_t ink = 0;
	for (uint32_t y = y0; y < y1; y++) {
		for (uint32_t x = x0; x < x1; x++) {
			uint32_t p = *slim_fb_row(fb, x, y) & 0xffffff;
			if (p == SLIM_STATUS_FOREGROUND) {
				ink++;
			} else {
				assert_int_equal(p, SLIM_STATUS_BACKGROUND);
			}
		}
	}
	return ink;
}

static void test_connecting_screen(void **state)
{
	struct rec_backend rec = { .base.impl = &rec_impl };
	struct slim_fb fb = make_fb(1280, 720);
	const char *lines[] = { "connecting to 127.0.0.1:5555...", "connection refused" };
	slim_status_screen_show(&fb, &rec.base, lines, 2);

	/* one frame, the whole screen */
	assert_int_equal(rec.frames, 1);
	assert_int_equal(rec.n_damage, 1);
	assert_int_equal(rec.damage[0].x, 0);
	assert_int_equal(rec.damage[0].y, 0);
	assert_int_equal(rec.damage[0].w, 1280);
	assert_int_equal(rec.damage[0].h, 720);

	/* every pixel is ink or background; the ink is in a band across the middle */
	size_t all = count_ink(&fb, 0, 0, fb.width, fb.height);
	size_t middle = count_ink(&fb, 0, fb.height / 2 - 60, fb.width, fb.height / 2 + 60);
	assert_true(all > 500);
	assert_int_equal(middle, all);
	/* centred: as much ink left of the middle as right of it, give or take a glyph */
	size_t left = count_ink(&fb, 0, 0, fb.width / 2, fb.height);
	size_t right = all - left;
	assert_true(left > all / 3 && right > all / 3);
	/* scaled up (3x at this size): no ink within the top and bottom thirds */
	assert_int_equal(count_ink(&fb, 0, 0, fb.width, fb.height / 3), 0);
	free(fb.px);
}

/* A screen too small for the text: cut, never written past its edges. */
static void test_small_screen(void **state)
{
	struct slim_fb fb = make_fb(40, 12);
	const char *lines[] = { "connecting to a-very-long-host-name.example.org:5555..." };
	slim_status_screen_draw(&fb, lines, 1);
	assert_true(count_ink(&fb, 0, 0, fb.width, fb.height) > 0);
	free(fb.px);

	/* 1x1 and no lines at all: the background only */
	fb = make_fb(1, 1);
	slim_status_screen_draw(&fb, lines, 1);
	assert_true((fb.px[0] & 0xffffff) == SLIM_STATUS_BACKGROUND ||
		(fb.px[0] & 0xffffff) == SLIM_STATUS_FOREGROUND);
	slim_status_screen_draw(&fb, NULL, 0);
	assert_int_equal(fb.px[0] & 0xffffff, SLIM_STATUS_BACKGROUND);
	free(fb.px);
}

/* Lower case is drawn as upper case; what the font lacks, as '?'. */
static void test_case_and_unknown(void **state)
{
	struct slim_fb a = make_fb(200, 40), b = make_fb(200, 40);
	slim_status_screen_draw(&a, (const char *[]){ "busy: x~\x01" }, 1);
	slim_status_screen_draw(&b, (const char *[]){ "BUSY: X??" }, 1);
	assert_memory_equal(a.px, b.px, (size_t)200 * 40 * 4);
	free(a.px);
	free(b.px);
}

/* Every glyph is well formed, and all but the space have ink. */
static void test_font(void **state)
{
	for (int c = SLIM_FONT_FIRST; c <= SLIM_FONT_LAST; c++) {
		int ink = 0;
		for (int y = 0; y < SLIM_FONT_H; y++) {
			const char *row = slim_font_5x7[c - SLIM_FONT_FIRST][y];
			assert_int_equal(strlen(row), SLIM_FONT_W);
			for (int x = 0; x < SLIM_FONT_W; x++) {
				assert_true(row[x] == '#' || row[x] == '.');
				ink += row[x] == '#';
			}
		}
		if (c == ' ') {
			assert_int_equal(ink, 0);
		} else {
			assert_true(ink > 0);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connecting_screen),
		cmocka_unit_test(test_small_screen),
		cmocka_unit_test(test_case_and_unknown),
		cmocka_unit_test(test_font),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
