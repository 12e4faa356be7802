/*
 * Where a head is, in the session's layout and on the console's screen
 * (screen-map.c, no wlroots). A head's top left has the same coordinates
 * in both; the layout counts logical pixels, the screen device pixels, so
 * inside a head of scale 2 the layout's one pixel is the screen's two.
 * With every head at scale 1 the two coordinates are one and the same.
 */
#ifndef SLIM_SCREEN_MAP_H
#define SLIM_SCREEN_MAP_H

#include <pixman.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct slim_screen_map {
	int32_t x, y;           /* top left, in both */
	uint32_t width, height; /* on the screen, device pixels */
	uint32_t scale;         /* 1..SLIM_MAX_SCALE */
};

/* Its box in the layout: width and height divided by the scale. */
void slim_screen_map_layout_box(const struct slim_screen_map *map, int32_t *x, int32_t *y,
		int32_t *width, int32_t *height);
/* A layout point to the screen (no clipping). */
void slim_screen_map_to_screen(const struct slim_screen_map *map, double lx, double ly,
		double *sx, double *sy);
/* A screen point to the layout (no clipping). */
void slim_screen_map_to_layout(const struct slim_screen_map *map, double sx, double sy,
		double *lx, double *ly);
/*
 * Of `n` heads, the one whose screen rectangle holds (sx, sy), or else the
 * nearest; NULL only if n is 0.
 */
const struct slim_screen_map *slim_screen_map_at(const struct slim_screen_map *maps,
		size_t n, double sx, double sy);
/* `in` (layout) as screen coordinates, clipped to the head: into `out`. */
void slim_screen_map_region_to_screen(const struct slim_screen_map *map,
		const pixman_region32_t *in, pixman_region32_t *out);
/* `in` (screen) as this head's output's buffer coordinates, clipped to it: into `out`. */
void slim_screen_map_region_to_buffer(const struct slim_screen_map *map,
		const pixman_region32_t *in, pixman_region32_t *out);

#endif
