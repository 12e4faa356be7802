/*
 * A head's place in the session's layout and on the console's screen
 * (src/compositor/screen-map.c): points and regions both ways, at scale 1
 * and 2, and which head a point of the screen is on.
 */
#include <stdlib.h>
#include "screen-map.h"
#include "test-util.h"

/* A 4K head at scale 2 on the left, a 1280x1024 one at scale 1 beside it. */
static const struct slim_screen_map maps[] = {
	{ .x = 0, .y = 0, .width = 3840, .height = 2160, .scale = 2 },
	{ .x = 3840, .y = 0, .width = 1280, .height = 1024, .scale = 1 },
};

static void test_points(void **state)
{
	int32_t x, y, w, h;
	slim_screen_map_layout_box(&maps[0], &x, &y, &w, &h);
	assert_int_equal(w, 1920);
	assert_int_equal(h, 1080);
	double sx, sy, lx, ly;
	slim_screen_map_to_screen(&maps[0], 100.5, 50, &sx, &sy);
	assert_true(sx == 201 && sy == 100);
	slim_screen_map_to_layout(&maps[0], 201, 100, &lx, &ly);
	assert_true(lx == 100.5 && ly == 50);
	/* the second head's top left is the same point in both */
	slim_screen_map_to_layout(&maps[1], 3840 + 10, 20, &lx, &ly);
	assert_true(lx == 3850 && ly == 20);
	/* a point in a head; in none (below the shorter head): the nearest; far off */
	assert_ptr_equal(slim_screen_map_at(maps, 2, 3839, 2159), &maps[0]);
	assert_ptr_equal(slim_screen_map_at(maps, 2, 3840, 0), &maps[1]);
	assert_ptr_equal(slim_screen_map_at(maps, 2, 4000, 1100), &maps[1]);
	assert_ptr_equal(slim_screen_map_at(maps, 2, 4000, 2000), &maps[0]);
	assert_ptr_equal(slim_screen_map_at(maps, 2, -100000, 5), &maps[0]);
	assert_null(slim_screen_map_at(maps, 0, 0, 0));
}

static void test_regions(void **state)
{
	pixman_region32_t in, out;
	pixman_region32_init_rect(&in, 10, 10, 20, 5);
	/* a layout rectangle on the scale 2 head: twice its size on the screen */
	pixman_region32_init(&out);
	slim_screen_map_region_to_screen(&maps[0], &in, &out);
	pixman_box32_t *e = pixman_region32_extents(&out);
	assert_true(e->x1 == 20 && e->y1 == 20 && e->x2 == 60 && e->y2 == 30);
	/* not on the other head at all */
	slim_screen_map_region_to_screen(&maps[1], &in, &out);
	assert_false(pixman_region32_not_empty(&out));
	/* the screen's damage, as the second head's own buffer sees it: clipped, moved */
	pixman_region32_fini(&in);
	pixman_region32_init_rect(&in, 3800, 1000, 100, 100);
	slim_screen_map_region_to_buffer(&maps[1], &in, &out);
	e = pixman_region32_extents(&out);
	assert_true(e->x1 == 0 && e->y1 == 1000 && e->x2 == 60 && e->y2 == 1024);
	pixman_region32_fini(&in);
	pixman_region32_fini(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_points),
		cmocka_unit_test(test_regions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
