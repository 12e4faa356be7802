/*
 * The desktop under every window: one solid buffer the size of the screen.
 *
 * Two reasons for it. With a second node always on the output, wlroots 0.15
 * never scans a client buffer out directly, so every frame is rendered into
 * a buffer the encoder can read. And it is a buffer, not a wlr_scene_rect:
 * 0.15's pixman renderer draws a rect by allocating and filling an image of
 * the rect's full size on every frame (3.7 MB at 1280x720, half a
 * millisecond), whereas a buffer is composited only where damaged. It is
 * one pixel wider and taller than the screen: a node exactly the screen's
 * size would itself be taken for a buffer to scan out.
 */
#include <string.h>
#include <wlr/types/wlr_buffer.h>
#include <wlr/types/wlr_scene.h>
#include "background.h"
#include "pixel-buffer.h"

#define BACKGROUND 0xff334050u

/* The cache's picture of that size, or a new one put in the oldest's place. */
static struct wlr_buffer *picture(struct background_cache *cache, uint32_t width,
		uint32_t height)
{
	for (size_t i = 0; i < BACKGROUND_CACHED; i++) {
		if (cache->entries[i].buffer && cache->entries[i].width == width &&
				cache->entries[i].height == height) {
			return cache->entries[i].buffer;
		}
	}
	struct slim_pixel_buffer *solid = slim_pixel_buffer_create(width, height);
	if (!solid) {
		return NULL;
	}
	for (size_t i = 0; i < (size_t)width * height; i++) {
		solid->px[i] = BACKGROUND;
	}
	if (cache->entries[BACKGROUND_CACHED - 1].buffer) {
		wlr_buffer_unlock(cache->entries[BACKGROUND_CACHED - 1].buffer);
	}
	memmove(&cache->entries[1], &cache->entries[0],
		(BACKGROUND_CACHED - 1) * sizeof(cache->entries[0]));
	/* the cache's lock; the maker lets go: it goes with the last lock */
	wlr_buffer_lock(&solid->base);
	wlr_buffer_drop(&solid->base);
	cache->entries[0].width = width;
	cache->entries[0].height = height;
	cache->entries[0].buffer = &solid->base;
	return &solid->base;
}

bool background_set_size(struct wlr_scene_buffer **background, struct wlr_scene *scene,
		struct background_cache *cache, uint32_t width, uint32_t height)
{
	struct wlr_buffer *solid = picture(cache, width + 1, height + 1);
	if (!solid) {
		return false;
	}
	if (*background) {
		wlr_scene_node_destroy(&(*background)->node);
	}
	/* the scene takes a reference of its own */
	*background = wlr_scene_buffer_create(&scene->node, solid);
	if (!*background) {
		return false;
	}
	wlr_scene_node_lower_to_bottom(&(*background)->node);
	return true;
}

void background_cache_finish(struct background_cache *cache)
{
	for (size_t i = 0; i < BACKGROUND_CACHED; i++) {
		if (cache->entries[i].buffer) {
			wlr_buffer_unlock(cache->entries[i].buffer);
		}
	}
	*cache = (struct background_cache){ 0 };
}
