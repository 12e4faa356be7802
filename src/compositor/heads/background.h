/* The desktop under every window (background.c). */
#ifndef SLIM_BACKGROUND_H
#define SLIM_BACKGROUND_H

#include <stdbool.h>
#include <stdint.h>

struct wlr_scene;
struct wlr_scene_buffer;

struct wlr_buffer;

/* The background's one pixel, shared by every head. */
struct background_cache {
	struct wlr_buffer *pixel; /* locked by the cache */
};

/*
 * *background width x height (made if NULL, its pixel from `cache`, made
 * on first use) at the bottom of `scene`; false if it cannot be had.
 */
bool background_set_size(struct wlr_scene_buffer **background, struct wlr_scene *scene,
		struct background_cache *cache, uint32_t width, uint32_t height);
/* Lets the cache's pixel go (the scene's nodes keep theirs). */
void background_cache_finish(struct background_cache *cache);

#endif
