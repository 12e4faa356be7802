/*
 * The pointer: the server's CURSOR_IMAGE on the cursor plane, in one of
 * two small ARGB buffers, moved at once by local input and corrected by
 * the server's CURSOR_POS. A display without a cursor plane (bochs, for
 * one) gets it drawn into the scanout buffers instead: the copies from
 * the shadow framebuffer blend it in (drm-buffer.c), and each move
 * damages where it was and where it goes.
 */
#include <drm_fourcc.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>
#include "drm-internal.h"

#define CURSOR_DEFAULT 64

/* -- software cursor */

/* Where the image goes now: its top left, and that clipped to the screen. */
static pixman_box32_t soft_box(const struct slim_drm_backend *drm, int32_t *x, int32_t *y)
{
	const struct drm_cursor *cur = &drm->cursor;
	*x = (int32_t)cur->pointer_x - (int32_t)cur->hot_x;
	*y = (int32_t)cur->pointer_y - (int32_t)cur->hot_y;
	if (!cur->visible || cur->w == 0) {
		return (pixman_box32_t){ 0 };
	}
	pixman_box32_t box = {
		*x < 0 ? 0 : *x,
		*y < 0 ? 0 : *y,
		*x + (int32_t)cur->w,
		*y + (int32_t)cur->h,
	};
	if (box.x2 > (int32_t)drm->width) {
		box.x2 = (int32_t)drm->width;
	}
	if (box.y2 > (int32_t)drm->height) {
		box.y2 = (int32_t)drm->height;
	}
	if (box.x1 >= box.x2 || box.y1 >= box.y2) {
		return (pixman_box32_t){ 0 };
	}
	return box;
}

/* The box as a damage rectangle in *r; 0 when it is empty, else 1. */
static size_t add_rect(struct slim_rect *r, const pixman_box32_t *b)
{
	if (b->x1 >= b->x2 || b->y1 >= b->y2) {
		return 0;
	}
	/* clipped to the screen: it fits the protocol's 16 bits */
	*r = (struct slim_rect){ (uint16_t)b->x1, (uint16_t)b->y1, (uint16_t)(b->x2 - b->x1),
		(uint16_t)(b->y2 - b->y1) };
	return 1;
}

/*
 * Follows the pointer (and a new image when `redraw`): the old and the
 * new place become stale in both scanout buffers, and the next copies
 * draw the cursor at the new one. Off the seat this only keeps the
 * damage; the seat's return redraws everything anyway.
 */
static void soft_update(struct slim_drm_backend *drm, bool redraw)
{
	int32_t x, y;
	pixman_box32_t box = soft_box(drm, &x, &y);
	pixman_box32_t old = drm->cursor.soft_box;
	if (!redraw && x == drm->cursor.soft_x && y == drm->cursor.soft_y &&
			memcmp(&box, &old, sizeof(box)) == 0) {
		return;
	}
	drm->cursor.soft_x = x;
	drm->cursor.soft_y = y;
	drm->cursor.soft_box = box;
	struct slim_rect rects[2];
	size_t n = 0;
	n += add_rect(&rects[n], &old);
	n += add_rect(&rects[n], &box);
	drm_damage(drm, rects, n);
	drm_update(drm);
}

/* No cursor plane after all: the pointer is drawn from now on, for good. */
static void use_software(struct slim_drm_backend *drm, const char *why)
{
	if (drm->cursor.soft) {
		return;
	}
	slim_log(SLIM_LOG_INFO, "drm: %s; drawing the pointer in software", why);
	drm->cursor.soft = true;
	drm->cursor.ok = false;
	drm->cursor.shown = false;
	for (uint32_t i = 0; i < drm->n_heads; i++) {
		drm->heads[i].cursor_shown = false;
	}
	drm->cursor.soft_box = (pixman_box32_t){ 0 };
	if (drm->fd >= 0) {
		for (int i = 0; i < 2; i++) {
			drm_buffer_destroy(drm, &drm->cursor.bufs[i]);
		}
	}
	soft_update(drm, true);
}

/*
 * A cursor call failed. Only ENODEV and EIO say the device is gone
 * (ENXIO, fatal elsewhere, is what a driver without a cursor plane
 * answers here); EACCES and EPERM say we are not DRM master just now (a
 * VT switch), and the seat's return shows the cursor again. Anything
 * else means the plane cannot show it.
 */
static void cursor_failed(struct slim_drm_backend *drm, const char *what, int err)
{
	if (err == ENODEV || err == EIO) {
		drm_device_lost(drm, what, err);
	} else if (err != EACCES && err != EPERM) {
		char why[96];
		snprintf(why, sizeof(why), "no cursor plane (%s)", strerror(err));
		use_software(drm, why);
	}
}

/* -- hardware cursor */

/* The front image on head h's cursor plane, its hotspot at the pointer; false once said. */
static bool plane_show(struct slim_drm_backend *drm, struct drm_head *h, bool new_image)
{
	struct drm_cursor *cur = &drm->cursor;
	if (new_image || !h->cursor_shown) {
		const struct slim_drm_buffer *buf = &cur->bufs[cur->front];
		if (drmModeSetCursor2(drm->fd, h->crtc_id, buf->handle, cur->size, cur->size,
				(int32_t)cur->hot_x, (int32_t)cur->hot_y) != 0 &&
				drmModeSetCursor(drm->fd, h->crtc_id, buf->handle, cur->size,
				cur->size) != 0) {
			cursor_failed(drm, "set cursor", errno);
			return false;
		}
		h->cursor_shown = true;
	}
	/* the plane's place is in the CRTC's own pixels */
	int x = (int)cur->pointer_x - (int)h->desc.x - (int)cur->hot_x;
	int y = (int)cur->pointer_y - (int)h->desc.y - (int)cur->hot_y;
	if (drmModeMoveCursor(drm->fd, h->crtc_id, x, y) != 0) {
		cursor_failed(drm, "move cursor", errno);
		return false;
	}
	return true;
}

static bool plane_hide(struct slim_drm_backend *drm, struct drm_head *h)
{
	if (h->cursor_shown) {
		if (drmModeSetCursor(drm->fd, h->crtc_id, 0, 0, 0) != 0) {
			cursor_failed(drm, "hide cursor", errno);
			return false;
		}
		h->cursor_shown = false;
	}
	return true;
}

/*
 * The pointer on the plane of the head its hotspot is on, and on no
 * other: a pointer crossing from one monitor to the next moves from one
 * CRTC's plane to the other's.
 */
static void planes_place(struct slim_drm_backend *drm, bool new_image)
{
	int at = drm->cursor.shown ? drm_head_at(drm, (int32_t)drm->cursor.pointer_x,
		(int32_t)drm->cursor.pointer_y) : -1;
	for (uint32_t i = 0; i < drm->n_heads && drm->cursor.ok; i++) {
		struct drm_head *h = &drm->heads[i];
		bool was = h->cursor_shown;
		if (!((int)i == at ? plane_show(drm, h, new_image) : plane_hide(drm, h))) {
			return;
		}
		if ((int)i == at && !was) {
			slim_log(SLIM_LOG_DEBUG, "drm: the pointer is on %s's cursor plane",
				h->desc.name);
		}
	}
}

void drm_cursor_move(struct slim_drm_backend *drm)
{
	if (drm->cursor.soft) {
		soft_update(drm, false);
		return;
	}
	if (!drm->active || !drm->cursor.ok) {
		return;
	}
	planes_place(drm, false);
}

/* Puts the kept image on the plane (into the buffer not on screen) or hides it. */
void drm_cursor_show(struct slim_drm_backend *drm)
{
	struct drm_cursor *cur = &drm->cursor;
	if (cur->soft) {
		soft_update(drm, true);
		return;
	}
	if (!drm->active || !cur->ok) {
		return;
	}
	cur->shown = cur->visible && cur->w > 0;
	if (!cur->shown) {
		planes_place(drm, false);
		return;
	}
	int next = cur->front ^ 1;
	struct slim_drm_buffer *buf = &cur->bufs[next];
	/* Larger images are cut: the hotspot is at the top left of every theme's. */
	uint32_t w = cur->w < cur->size ? cur->w : cur->size;
	uint32_t h = cur->h < cur->size ? cur->h : cur->size;
	/* whole rows, transparent past the image: one pass of writes, no reads */
	uint32_t row[SLIM_CURSOR_MAX];
	for (uint32_t y = 0; y < cur->size; y++) {
		memset(row, 0, cur->size * 4);
		if (y < h) {
			memcpy(row, cur->image + (size_t)y * cur->w, w * 4);
		}
		memcpy(buf->map + (size_t)y * buf->pitch, row, cur->size * 4);
	}
	cur->front = next;
	planes_place(drm, true);
}

void drm_cursor_reset(struct slim_drm_backend *drm)
{
	/* what each plane shows is unknown: hidden wherever the pointer is not */
	for (uint32_t i = 0; i < drm->n_heads; i++) {
		drm->heads[i].cursor_shown = !drm->cursor.soft && drm->cursor.ok;
	}
	drm->cursor.soft_box = (pixman_box32_t){ 0 };
	drm_cursor_clamp(drm);
	drm_cursor_show(drm);
}

void drm_cursor_set(struct slim_console_backend *b, const struct slim_console_cursor *c)
{
	struct slim_drm_backend *drm = drm_from(b);
	struct drm_cursor *cur = &drm->cursor;
	bool changed = c->visible != cur->visible;
	if (c->pixels && c->w > 0 && c->h > 0 && c->w <= SLIM_CURSOR_MAX &&
			c->h <= SLIM_CURSOR_MAX) {
		size_t bytes = (size_t)c->w * c->h * 4;
		if (c->w != cur->w || c->h != cur->h || c->hot_x != cur->hot_x ||
				c->hot_y != cur->hot_y || memcmp(c->pixels, cur->image, bytes) != 0) {
			memcpy(cur->image, c->pixels, bytes);
			cur->w = c->w;
			cur->h = c->h;
			cur->hot_x = c->hot_x;
			cur->hot_y = c->hot_y;
			changed = true;
			slim_log(SLIM_LOG_DEBUG, "drm: cursor image %ux%u, hotspot %u,%u",
				c->w, c->h, c->hot_x, c->hot_y);
		}
	}
	cur->visible = c->visible;
	cur->pointer_x = c->x;
	cur->pointer_y = c->y;
	slim_log(SLIM_LOG_DEBUG, "drm: cursor at %d,%d (server)%s", c->x, c->y,
		c->visible ? "" : " hidden");
	if (changed) {
		drm_cursor_show(drm);
	} else {
		drm_cursor_move(drm);
	}
}

void drm_cursor_clamp(struct slim_drm_backend *drm)
{
	/* the server clamps to the screen the same way: the hotspot stays on it */
	double max_x = drm->width - 1, max_y = drm->height - 1;
	double x = drm->cursor.pointer_x, y = drm->cursor.pointer_y;
	x = x < 0 ? 0 : x > max_x ? max_x : x;
	y = y < 0 ? 0 : y > max_y ? max_y : y;
	/* below a head lower than its neighbour is no monitor: onto its bottom row */
	for (uint32_t i = 0; i < drm->n_heads; i++) {
		const struct slim_head *d = &drm->heads[i].desc;
		if (x >= d->x && x < d->x + d->width && y > d->y + d->height - 1) {
			y = d->y + d->height - 1;
		}
	}
	drm->cursor.pointer_x = x;
	drm->cursor.pointer_y = y;
}

void slim_drm_backend_move_pointer(struct slim_console_backend *b, double x, double y,
		bool relative)
{
	struct slim_drm_backend *drm = drm_from(b);
	if (relative) {
		x += drm->cursor.pointer_x;
		y += drm->cursor.pointer_y;
	}
	drm->cursor.pointer_x = x;
	drm->cursor.pointer_y = y;
	drm_cursor_clamp(drm);
	slim_log(SLIM_LOG_DEBUG, "drm: cursor at %d,%d (local)", (int)drm->cursor.pointer_x,
		(int)drm->cursor.pointer_y);
	drm_cursor_move(drm);
}

/*
 * Whether the CRTC has a cursor plane, by asking it to hide the cursor:
 * DRM_CAP_CURSOR_WIDTH says nothing (the core answers 64 for any
 * driver), while the cursor call itself fails where there is no plane.
 * False with `err` when it has none; true also when the answer is not
 * known yet (not DRM master): the first real call decides then.
 */
static bool probe_plane(struct slim_drm_backend *drm, int *err)
{
	/* one driver for every CRTC: the first head's answers for all */
	if (drmModeSetCursor(drm->fd, drm->heads[0].crtc_id, 0, 0, 0) == 0) {
		return true;
	}
	*err = errno;
	return *err == EACCES || *err == EPERM || *err == ENODEV || *err == EIO;
}

bool drm_cursor_setup(struct slim_drm_backend *drm)
{
	if (!drm->cursor.image) {
		drm->cursor.image = calloc((size_t)SLIM_CURSOR_MAX * SLIM_CURSOR_MAX, 4);
		if (!drm->cursor.image) {
			return false;
		}
	}
	if (drm->cursor.soft) {
		return true;
	}
	int err = 0;
	if (!probe_plane(drm, &err)) {
		char why[96];
		snprintf(why, sizeof(why), "no cursor plane (%s)", strerror(err));
		use_software(drm, why);
		return true;
	}
	uint64_t size = CURSOR_DEFAULT;
	if (drmGetCap(drm->fd, DRM_CAP_CURSOR_WIDTH, &size) != 0 || size == 0) {
		size = CURSOR_DEFAULT;
	}
	drm->cursor.size = size > SLIM_CURSOR_MAX ? SLIM_CURSOR_MAX : (uint32_t)size;
	for (int i = 0; i < 2; i++) {
		if (!drm_buffer_create(drm, &drm->cursor.bufs[i], drm->cursor.size, drm->cursor.size,
				DRM_FORMAT_ARGB8888)) {
			char why[96];
			snprintf(why, sizeof(why), "no cursor buffer (%s)", strerror(errno));
			use_software(drm, why);
			return true;
		}
	}
	drm->cursor.ok = true;
	slim_log(SLIM_LOG_INFO, "drm: the pointer is on the cursor plane (%ux%u)",
		drm->cursor.size, drm->cursor.size);
	return true;
}
