/*
 * The desktop under every window: one solid pixel, drawn the size of the
 * screen.
 *
 * Two reasons for a buffer node. With a second node always on the output,
 * wlroots 0.15 never scans a client buffer out directly, so every frame is
 * rendered into a buffer the encoder can read. And it is a buffer, not a
 * wlr_scene_rect: 0.15's pixman renderer draws a rect by allocating and
 * filling an image of the rect's full size on every frame (3.7 MB at
 * 1280x720, half a millisecond), whereas a buffer is composited only where
 * damaged. The buffer is one pixel, which renderer.c repeats: a picture the
 * screen's size cost every session 8 MB at 1920x1080 for one colour. It is
 * drawn one pixel wider and taller than the screen: a node exactly the
 * screen's size would itself be taken for a buffer to scan out.
 */
#include <wlr/types/wlr_buffer.h>
#include <wlr/types/wlr_scene.h>
#include "background.h"
#include "pixel-buffer.h"

#define BACKGROUND 0xff334050u

bool background_set_size(struct wlr_scene_buffer **background, struct wlr_scene *scene,
		struct background_cache *cache, uint32_t width, uint32_t height)
{
	if (!cache->pixel) {
		struct slim_pixel_buffer *solid = slim_pixel_buffer_create(1, 1);
		if (!solid) {
			return false;
		}
		solid->px[0] = BACKGROUND;
		/* the cache's lock; the maker lets go: it goes with the last lock */
		wlr_buffer_lock(&solid->base);
		wlr_buffer_drop(&solid->base);
		cache->pixel = &solid->base;
	}
	/* the scene takes a reference of its own */
	if (!*background && !(*background = wlr_scene_buffer_create(&scene->node, cache->pixel))) {
		return false;
	}
	wlr_scene_buffer_set_dest_size(*background, (int)width + 1, (int)height + 1);
	wlr_scene_node_lower_to_bottom(&(*background)->node);
	return true;
}

void background_cache_finish(struct background_cache *cache)
{
	if (cache->pixel) {
		wlr_buffer_unlock(cache->pixel);
	}
	*cache = (struct background_cache){ 0 };
}
