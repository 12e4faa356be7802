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
#include <drm_fourcc.h>
#include <stdlib.h>
#include <wlr/types/wlr_buffer.h>
#include <wlr/types/wlr_scene.h>
#include "server.h"

#define BACKGROUND 0xff334050u

struct solid_buffer {
	struct wlr_buffer base;
	uint32_t *px;
};

static void solid_destroy(struct wlr_buffer *buffer)
{
	struct solid_buffer *solid = wl_container_of(buffer, solid, base);
	free(solid->px);
	free(solid);
}

static bool solid_begin(struct wlr_buffer *buffer, uint32_t flags, void **data,
		uint32_t *format, size_t *stride)
{
	struct solid_buffer *solid = wl_container_of(buffer, solid, base);
	*data = solid->px;
	*format = DRM_FORMAT_XRGB8888;
	*stride = (size_t)buffer->width * 4;
	return true;
}

static void solid_end(struct wlr_buffer *buffer)
{
}

static const struct wlr_buffer_impl solid_impl = {
	.destroy = solid_destroy,
	.begin_data_ptr_access = solid_begin,
	.end_data_ptr_access = solid_end,
};

bool background_set_size(struct slim_server *server, uint32_t width, uint32_t height)
{
	width++;
	height++;
	struct solid_buffer *solid = calloc(1, sizeof(*solid));
	uint32_t *px = malloc((size_t)width * height * 4);
	if (!solid || !px) {
		free(solid);
		free(px);
		return false;
	}
	for (size_t i = 0; i < (size_t)width * height; i++) {
		px[i] = BACKGROUND;
	}
	solid->px = px;
	wlr_buffer_init(&solid->base, &solid_impl, (int)width, (int)height);
	if (server->background) {
		wlr_scene_node_destroy(&server->background->node);
	}
	server->background = wlr_scene_buffer_create(&server->scene->node, &solid->base);
	/* The scene holds its own reference. */
	wlr_buffer_drop(&solid->base);
	if (!server->background) {
		return false;
	}
	wlr_scene_node_lower_to_bottom(&server->background->node);
	return true;
}
