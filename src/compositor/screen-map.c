/*
 * Layout and screen coordinates of a head (screen-map.h). Pure arithmetic:
 * the maps come from the console's HELLO, already bounded (slim-desk.h),
 * so every product here fits in 64 bits with room to spare.
 */
#include <math.h>
#include "screen-map.h"

void slim_screen_map_layout_box(const struct slim_screen_map *map, int32_t *x, int32_t *y,
		int32_t *width, int32_t *height)
{
	*x = map->x;
	*y = map->y;
	*width = (int32_t)(map->width / map->scale);
	*height = (int32_t)(map->height / map->scale);
}

void slim_screen_map_to_screen(const struct slim_screen_map *map, double lx, double ly,
		double *sx, double *sy)
{
	*sx = map->x + (lx - map->x) * map->scale;
	*sy = map->y + (ly - map->y) * map->scale;
}

void slim_screen_map_to_layout(const struct slim_screen_map *map, double sx, double sy,
		double *lx, double *ly)
{
	*lx = map->x + (sx - map->x) / map->scale;
	*ly = map->y + (sy - map->y) / map->scale;
}

/* How far (sx, sy) is outside the head, as a squared distance: 0 inside. */
static double distance2(const struct slim_screen_map *m, double sx, double sy)
{
	double x2 = (double)m->x + m->width, y2 = (double)m->y + m->height;
	double dx = sx < m->x ? m->x - sx : sx >= x2 ? sx - x2 + 1 : 0;
	double dy = sy < m->y ? m->y - sy : sy >= y2 ? sy - y2 + 1 : 0;
	return dx * dx + dy * dy;
}

const struct slim_screen_map *slim_screen_map_at(const struct slim_screen_map *maps,
		size_t n, double sx, double sy)
{
	const struct slim_screen_map *best = NULL;
	double best_d = INFINITY;
	for (size_t i = 0; i < n; i++) {
		double d = distance2(&maps[i], sx, sy);
		if (d < best_d) {
			best = &maps[i];
			best_d = d;
		}
	}
	return best;
}

void slim_screen_map_region_to_screen(const struct slim_screen_map *map,
		const pixman_region32_t *in, pixman_region32_t *out)
{
	int32_t lx, ly, lw, lh;
	slim_screen_map_layout_box(map, &lx, &ly, &lw, &lh);
	pixman_region32_t clipped;
	pixman_region32_init(&clipped);
	pixman_region32_intersect_rect(&clipped, (pixman_region32_t *)in, lx, ly,
		(unsigned)lw, (unsigned)lh);
	if (map->scale == 1) {
		pixman_region32_copy(out, &clipped);
	} else {
		int n;
		const pixman_box32_t *b = pixman_region32_rectangles(&clipped, &n);
		pixman_region32_clear(out);
		for (int i = 0; i < n; i++) {
			int32_t s = (int32_t)map->scale;
			pixman_region32_union_rect(out, out, map->x + (b[i].x1 - map->x) * s,
				map->y + (b[i].y1 - map->y) * s, (unsigned)((b[i].x2 - b[i].x1) * s),
				(unsigned)((b[i].y2 - b[i].y1) * s));
		}
	}
	pixman_region32_fini(&clipped);
}

void slim_screen_map_region_to_buffer(const struct slim_screen_map *map,
		const pixman_region32_t *in, pixman_region32_t *out)
{
	pixman_region32_intersect_rect(out, (pixman_region32_t *)in, map->x, map->y,
		map->width, map->height);
	pixman_region32_translate(out, -map->x, -map->y);
}
