/*
 * The pointer is drawn by the console, on its cursor plane, so that moving
 * it costs no round trip and never damages the picture. The server only
 * tells it what the pointer looks like: the theme's image over the desktop,
 * or the surface the client under the pointer set, read from its buffer
 * whenever the client commits a new one.
 */
#include <drm_fourcc.h>
#include <stdlib.h>
#include <wlr/types/wlr_buffer.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_surface.h>
#include <wlr/types/wlr_xcursor_manager.h>
#include <wlr/util/log.h>
#include <wlr/xcursor.h>
#include "geometry.h"
#include "server.h"

bool cursor_init(struct slim_server *server)
{
	server->xcursors = wlr_xcursor_manager_create(getenv("XCURSOR_THEME"), 24);
	if (!server->xcursors || !wlr_xcursor_manager_load(server->xcursors, 1)) {
		wlr_log(WLR_ERROR, "cannot load a cursor theme");
		return false;
	}
	return true;
}

void cursor_finish(struct slim_server *server)
{
	wl_list_remove(&server->cursor_commit.link);
	wl_list_remove(&server->cursor_destroy.link);
	wl_list_init(&server->cursor_commit.link);
	wl_list_init(&server->cursor_destroy.link);
	wlr_xcursor_manager_destroy(server->xcursors);
	server->xcursors = NULL;
}

static void forget_client_cursor(struct slim_server *server)
{
	wl_list_remove(&server->cursor_commit.link);
	wl_list_remove(&server->cursor_destroy.link);
	wl_list_init(&server->cursor_commit.link);
	wl_list_init(&server->cursor_destroy.link);
	server->cursor_surface = NULL;
	server->cursor_from_client = false;
}

void cursor_set_theme(struct slim_server *server, const char *name)
{
	forget_client_cursor(server);
	struct wlr_xcursor *xcursor = wlr_xcursor_manager_get_xcursor(server->xcursors, name, 1);
	if (!xcursor || xcursor->image_count == 0) {
		return;
	}
	struct wlr_xcursor_image *img = xcursor->images[0];
	slim_link_cursor_image(server->link, (const uint32_t *)img->buffer, img->width,
		img->height, img->hotspot_x, img->hotspot_y);
	cursor_moved(server);
}

/* The client's cursor surface, as it is now: its buffer's pixels, if it has one. */
static void send_client_cursor(struct slim_server *server)
{
	struct wlr_surface *surface = server->cursor_surface;
	struct wlr_buffer *buffer = surface->buffer ? surface->buffer->source : NULL;
	void *ptr;
	uint32_t format;
	size_t stride;
	if (!buffer || !wlr_buffer_begin_data_ptr_access(buffer,
			WLR_BUFFER_DATA_PTR_ACCESS_READ, &ptr, &format, &stride)) {
		return;
	}
	uint32_t w = (uint32_t)buffer->width, h = (uint32_t)buffer->height;
	if (w <= SLIM_CURSOR_MAX && h <= SLIM_CURSOR_MAX &&
			(format == DRM_FORMAT_ARGB8888 || format == DRM_FORMAT_XRGB8888)) {
		static uint32_t px[SLIM_CURSOR_MAX * SLIM_CURSOR_MAX];
		uint32_t alpha = format == DRM_FORMAT_XRGB8888 ? 0xff000000u : 0;
		for (uint32_t y = 0; y < h; y++) {
			const uint32_t *row = (const uint32_t *)((const uint8_t *)ptr + y * stride);
			for (uint32_t x = 0; x < w; x++) {
				px[y * w + x] = row[x] | alpha;
			}
		}
		slim_link_cursor_image(server->link, px, w, h,
			(uint32_t)(server->cursor_hot_x > 0 ? server->cursor_hot_x : 0),
			(uint32_t)(server->cursor_hot_y > 0 ? server->cursor_hot_y : 0));
	}
	wlr_buffer_end_data_ptr_access(buffer);
}

static void handle_cursor_commit(struct wl_listener *listener, void *data)
{
	struct slim_server *server = wl_container_of(listener, server, cursor_commit);
	struct wlr_surface *surface = server->cursor_surface;
	/* A hotspot moved by the client moves with its buffer's offset. */
	server->cursor_hot_x = geo_coord((int64_t)server->cursor_hot_x - surface->current.dx);
	server->cursor_hot_y = geo_coord((int64_t)server->cursor_hot_y - surface->current.dy);
	send_client_cursor(server);
}

static void handle_cursor_destroy(struct wl_listener *listener, void *data)
{
	struct slim_server *server = wl_container_of(listener, server, cursor_destroy);
	forget_client_cursor(server);
}

void cursor_handle_request(struct wl_listener *listener, void *data)
{
	struct slim_server *server = wl_container_of(listener, server, request_cursor);
	struct wlr_seat_pointer_request_set_cursor_event *event = data;
	/* Only the client under the pointer decides what the pointer looks like. */
	if (event->seat_client != server->seat->pointer_state.focused_client) {
		return;
	}
	forget_client_cursor(server);
	server->cursor_from_client = true;
	server->cursor_hot_x = geo_coord(event->hotspot_x);
	server->cursor_hot_y = geo_coord(event->hotspot_y);
	if (!event->surface) {
		cursor_moved(server); /* hidden */
		return;
	}
	server->cursor_surface = event->surface;
	server->cursor_commit.notify = handle_cursor_commit;
	wl_signal_add(&event->surface->events.commit, &server->cursor_commit);
	server->cursor_destroy.notify = handle_cursor_destroy;
	wl_signal_add(&event->surface->events.destroy, &server->cursor_destroy);
	send_client_cursor(server);
	cursor_moved(server);
}

void cursor_moved(struct slim_server *server)
{
	bool visible = !server->cursor_from_client || server->cursor_surface;
	slim_link_cursor_pos(server->link, (int32_t)server->pointer_x,
		(int32_t)server->pointer_y, visible, server->grab.mode != SLIM_GRAB_NONE);
}

void cursor_resend(struct slim_server *server)
{
	if (server->cursor_from_client && server->cursor_surface) {
		send_client_cursor(server);
		cursor_moved(server);
	} else {
		cursor_set_theme(server, "left_ptr");
	}
}
