/* The desktop under every window (background.c). */
#ifndef SLIM_BACKGROUND_H
#define SLIM_BACKGROUND_H

#include <stdbool.h>
#include <stdint.h>

struct wlr_scene;
struct wlr_scene_buffer;

struct wlr_buffer;

/*
 * The last sizes' pictures, kept: heads of one size share one, and a
 * console that comes back finds its sizes made (megabytes of fresh memory
 * to fill otherwise, at some 20 us a page fault in a virtual machine).
 */
#define BACKGROUND_CACHED 2
struct background_cache {
	struct {
		uint32_t width, height;
		struct wlr_buffer *buffer; /* locked by the cache */
	} entries[BACKGROUND_CACHED];
};

/*
 * *background made anew, width x height, at the bottom of `scene` (the old
 * one, if any, gone), its picture from `cache` if it has one that size;
 * false if it cannot be had.
 */
bool background_set_size(struct wlr_scene_buffer **background, struct wlr_scene *scene,
		struct background_cache *cache, uint32_t width, uint32_t height);
/* Lets the cache's pictures go (the scene's nodes keep theirs). */
void background_cache_finish(struct background_cache *cache);

#endif
