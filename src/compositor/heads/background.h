/* The desktop under every window (background.c). */
#ifndef SLIM_BACKGROUND_H
#define SLIM_BACKGROUND_H

#include <stdbool.h>
#include <stdint.h>

struct wlr_scene;
struct wlr_scene_buffer;

/*
 * *background made anew, width x height, at the bottom of `scene` (the old
 * one, if any, gone); false if it cannot be had.
 */
bool background_set_size(struct wlr_scene_buffer **background, struct wlr_scene *scene,
		uint32_t width, uint32_t height);

#endif
