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
#include <wlr/types/wlr_buffer.h>
#include <wlr/types/wlr_scene.h>
#include "background.h"
#include "renderer.h"

#define BACKGROUND 0xff334050u

bool background_set_size(struct wlr_scene_buffer **background, struct wlr_scene *scene,
		uint32_t width, uint32_t height)
{
	width++;
	height++;
	uint32_t *px;
	struct wlr_buffer *solid = renderer_pixels_create(width, height, &px);
	if (!solid) {
		return false;
	}
	for (size_t i = 0; i < (size_t)width * height; i++) {
		px[i] = BACKGROUND;
	}
	if (*background) {
		wlr_scene_node_destroy(&(*background)->node);
	}
	*background = wlr_scene_buffer_create(&scene->node, solid);
	/* The scene holds its own reference. */
	wlr_buffer_drop(solid);
	if (!*background) {
		return false;
	}
	wlr_scene_node_lower_to_bottom(&(*background)->node);
	return true;
}
