#include <stdlib.h>
#include "drm-damage.h"

void slim_drm_damage_init(struct slim_drm_damage *d, int32_t x, int32_t y, uint32_t width,
		uint32_t height)
{
	d->x = x;
	d->y = y;
	d->width = width;
	d->height = height;
	d->back = 0;
	for (int i = 0; i < 2; i++) {
		pixman_region32_init_rect(&d->stale[i], x, y, width, height);
	}
}

void slim_drm_damage_finish(struct slim_drm_damage *d)
{
	for (int i = 0; i < 2; i++) {
		pixman_region32_fini(&d->stale[i]);
	}
}

void slim_drm_damage_add(struct slim_drm_damage *d, const struct slim_rect *rects, size_t n)
{
	if (n == 0) {
		return;
	}
	pixman_box32_t stack[64];
	pixman_box32_t *boxes = stack;
	if (n > sizeof(stack) / sizeof(stack[0])) {
		boxes = malloc(n * sizeof(*boxes));
	}
	pixman_region32_t add;
	if (boxes) {
		for (size_t i = 0; i < n; i++) {
			boxes[i] = (pixman_box32_t){ rects[i].x, rects[i].y,
				rects[i].x + rects[i].w, rects[i].y + rects[i].h };
		}
		pixman_region32_init_rects(&add, boxes, (int)n);
	} else {
		/* out of memory: the bounds cover it all, at the cost of more copying */
		pixman_region32_init(&add);
		for (size_t i = 0; i < n; i++) {
			pixman_region32_union_rect(&add, &add, rects[i].x, rects[i].y,
				rects[i].w, rects[i].h);
		}
	}
	if (boxes != stack) {
		free(boxes);
	}
	/* another head's damage is not this one's; a stray rectangle stays harmless */
	pixman_region32_intersect_rect(&add, &add, d->x, d->y, d->width, d->height);
	for (int i = 0; i < 2; i++) {
		pixman_region32_union(&d->stale[i], &d->stale[i], &add);
	}
	pixman_region32_fini(&add);
}

void slim_drm_damage_add_all(struct slim_drm_damage *d)
{
	for (int i = 0; i < 2; i++) {
		pixman_region32_fini(&d->stale[i]);
		pixman_region32_init_rect(&d->stale[i], d->x, d->y, d->width, d->height);
	}
}

const pixman_region32_t *slim_drm_damage_back(const struct slim_drm_damage *d)
{
	return &d->stale[d->back];
}

bool slim_drm_damage_back_stale(const struct slim_drm_damage *d)
{
	return pixman_region32_not_empty((pixman_region32_t *)&d->stale[d->back]);
}

void slim_drm_damage_drawn(struct slim_drm_damage *d)
{
	pixman_region32_clear(&d->stale[d->back]);
}

void slim_drm_damage_flipped(struct slim_drm_damage *d)
{
	d->back ^= 1;
}
