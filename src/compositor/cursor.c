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
#include "cursor.h"
#include "link.h"
#include "shell.h"
#include "slim-alloc.h"

struct slim_cursor {
	struct slim_link *link;
	struct slim_link *mirror; /* a second console watching (shadow.c), or NULL */
	struct slim_shell *shell; /* where the pointer is, and whether a grab holds it */
	struct wlr_xcursor_manager *xcursors;
	struct wlr_surface *surface; /* set by the client under the pointer */
	int32_t hot_x, hot_y;
	bool from_client;
	const char *theme_name; /* the theme's image shown, while not from_client */
	uint32_t scale;         /* of the head the pointer is on: the theme's image is this big */
	struct wl_listener request, commit, destroy;
};

/* To the session's console, and to a console watching it. */
static void send_image(struct slim_cursor *cursor, const uint32_t *argb, uint32_t w,
		uint32_t h, uint32_t hot_x, uint32_t hot_y)
{
	slim_link_cursor_image(cursor->link, argb, w, h, hot_x, hot_y);
	if (cursor->mirror) {
		slim_link_cursor_image(cursor->mirror, argb, w, h, hot_x, hot_y);
	}
}

static void forget_client_cursor(struct slim_cursor *cursor)
{
	wl_list_remove(&cursor->commit.link);
	wl_list_remove(&cursor->destroy.link);
	wl_list_init(&cursor->commit.link);
	wl_list_init(&cursor->destroy.link);
	cursor->surface = NULL;
	cursor->from_client = false;
}

void cursor_set_theme(struct slim_cursor *cursor, const char *name)
{
	forget_client_cursor(cursor);
	/* the theme at the pointer's head's scale: 48 pixels on a scale 2 head */
	uint32_t scale = slim_shell_pointer_scale(cursor->shell);
	cursor->theme_name = name;
	cursor->scale = scale;
	wlr_xcursor_manager_load(cursor->xcursors, (float)scale);
	struct wlr_xcursor *xcursor = wlr_xcursor_manager_get_xcursor(cursor->xcursors, name,
		(float)scale);
	if (!xcursor || xcursor->image_count == 0) {
		return;
	}
	struct wlr_xcursor_image *img = xcursor->images[0];
	send_image(cursor, (const uint32_t *)img->buffer, img->width, img->height,
		img->hotspot_x, img->hotspot_y);
	cursor_moved(cursor);
}

/* The client's cursor surface, as it is now: its buffer's pixels, if it has one. */
static void send_client_cursor(struct slim_cursor *cursor)
{
	struct wlr_surface *surface = cursor->surface;
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
		/* the hotspot is in the surface's units; the image in its buffer's */
		int32_t scale = surface->current.scale > 0 ? surface->current.scale : 1;
		send_image(cursor, px, w, h,
			(uint32_t)(cursor->hot_x > 0 ? cursor->hot_x * scale : 0),
			(uint32_t)(cursor->hot_y > 0 ? cursor->hot_y * scale : 0));
	}
	wlr_buffer_end_data_ptr_access(buffer);
}

static void handle_commit(struct wl_listener *listener, void *data)
{
	struct slim_cursor *cursor = wl_container_of(listener, cursor, commit);
	struct wlr_surface *surface = cursor->surface;
	/* A hotspot moved by the client moves with its buffer's offset. */
	cursor->hot_x = geo_coord((int64_t)cursor->hot_x - surface->current.dx);
	cursor->hot_y = geo_coord((int64_t)cursor->hot_y - surface->current.dy);
	send_client_cursor(cursor);
}

static void handle_destroy(struct wl_listener *listener, void *data)
{
	struct slim_cursor *cursor = wl_container_of(listener, cursor, destroy);
	forget_client_cursor(cursor);
}

static void handle_request(struct wl_listener *listener, void *data)
{
	struct slim_cursor *cursor = wl_container_of(listener, cursor, request);
	struct wlr_seat_pointer_request_set_cursor_event *event = data;
	/* Only the client under the pointer decides what the pointer looks like. */
	if (event->seat_client != cursor->shell->seat->pointer_state.focused_client) {
		return;
	}
	forget_client_cursor(cursor);
	cursor->from_client = true;
	cursor->hot_x = geo_coord(event->hotspot_x);
	cursor->hot_y = geo_coord(event->hotspot_y);
	if (!event->surface) {
		cursor_moved(cursor); /* hidden */
		return;
	}
	cursor->surface = event->surface;
	wl_signal_add(&event->surface->events.commit, &cursor->commit);
	wl_signal_add(&event->surface->events.destroy, &cursor->destroy);
	send_client_cursor(cursor);
	cursor_moved(cursor);
}

struct slim_cursor *cursor_create(struct slim_link *link, struct slim_shell *shell)
{
	struct slim_cursor *cursor = slim_znew(struct slim_cursor);
	cursor->link = link;
	cursor->shell = shell;
	cursor->xcursors = wlr_xcursor_manager_create(getenv("XCURSOR_THEME"), 24);
	if (!cursor->xcursors || !wlr_xcursor_manager_load(cursor->xcursors, 1)) {
		wlr_log(WLR_ERROR, "cannot load a cursor theme");
		if (cursor->xcursors) {
			wlr_xcursor_manager_destroy(cursor->xcursors);
		}
		free(cursor);
		return NULL;
	}
	cursor->commit.notify = handle_commit;
	wl_list_init(&cursor->commit.link);
	cursor->destroy.notify = handle_destroy;
	wl_list_init(&cursor->destroy.link);
	cursor->request.notify = handle_request;
	wl_signal_add(&shell->seat->events.request_set_cursor, &cursor->request);
	return cursor;
}

void cursor_destroy(struct slim_cursor *cursor)
{
	if (!cursor) {
		return;
	}
	wl_list_remove(&cursor->request.link);
	wl_list_remove(&cursor->commit.link);
	wl_list_remove(&cursor->destroy.link);
	wlr_xcursor_manager_destroy(cursor->xcursors);
	free(cursor);
}

void cursor_moved(struct slim_cursor *cursor)
{
	struct slim_shell *shell = cursor->shell;
	/* onto a head of another scale: the theme's image of that size */
	if (!cursor->from_client && cursor->theme_name &&
			slim_shell_pointer_scale(shell) != cursor->scale) {
		cursor_set_theme(cursor, cursor->theme_name); /* which moves it too */
		return;
	}
	bool visible = !cursor->from_client || cursor->surface;
	double x, y;
	slim_shell_pointer_on_screen(shell, &x, &y);
	bool with_frame = shell->grab.mode != SLIM_GRAB_NONE;
	slim_link_cursor_pos(cursor->link, (int32_t)x, (int32_t)y, visible, with_frame);
	if (cursor->mirror) {
		slim_link_cursor_pos(cursor->mirror, (int32_t)x, (int32_t)y, visible, with_frame);
	}
}

void cursor_resend(struct slim_cursor *cursor)
{
	if (cursor->from_client && cursor->surface) {
		send_client_cursor(cursor);
		cursor_moved(cursor);
	} else {
		cursor_set_theme(cursor, "left_ptr");
	}
}

void cursor_set_mirror(struct slim_cursor *cursor, struct slim_link *mirror)
{
	cursor->mirror = mirror;
	if (mirror) {
		cursor_resend(cursor);
	}
}
