/*
 * Dumb buffers: the scanout and cursor memory, written and never read.
 * The copies from the shadow framebuffer draw the software cursor, where
 * there is one, over the picture as they go.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <xf86drm.h>
#include "drm-internal.h"

bool drm_buffer_create(struct slim_drm_backend *drm, struct slim_drm_buffer *buf,
		uint32_t width, uint32_t height, uint32_t format)
{
	*buf = (struct slim_drm_buffer){ 0 };
	if (drmModeCreateDumbBuffer(drm->fd, width, height, 32, 0, &buf->handle,
			&buf->pitch, &buf->size) != 0) {
		return false;
	}
	uint32_t handles[4] = { buf->handle }, pitches[4] = { buf->pitch }, offsets[4] = { 0 };
	uint64_t offset;
	if (drmModeAddFB2(drm->fd, width, height, format, handles, pitches, offsets,
			&buf->fb_id, 0) != 0 ||
			drmModeMapDumbBuffer(drm->fd, buf->handle, &offset) != 0) {
		goto fail;
	}
	buf->map = mmap(NULL, buf->size, PROT_WRITE, MAP_SHARED, drm->fd, (off_t)offset);
	if (buf->map == MAP_FAILED) {
		buf->map = NULL;
		goto fail;
	}
	/* black: what the shadow framebuffer holds before the server's first frame */
	memset(buf->map, 0, buf->size);
	return true;
fail:
	if (buf->fb_id) {
		drmModeRmFB(drm->fd, buf->fb_id);
	}
	drmModeDestroyDumbBuffer(drm->fd, buf->handle);
	*buf = (struct slim_drm_buffer){ 0 };
	return false;
}

void drm_buffer_destroy(struct slim_drm_backend *drm, struct slim_drm_buffer *buf)
{
	if (buf->map) {
		munmap(buf->map, buf->size);
	}
	if (buf->fb_id) {
		drmModeRmFB(drm->fd, buf->fb_id);
	}
	if (buf->handle) {
		drmModeDestroyDumbBuffer(drm->fd, buf->handle);
	}
	*buf = (struct slim_drm_buffer){ 0 };
}

/* The buffer's byte for pixel x,y of the screen, the buffer's top left being at ox,oy. */
static inline uint8_t *buffer_at(const struct slim_drm_buffer *buf, int32_t ox, int32_t oy,
		int32_t x, int32_t y)
{
	return buf->map + (size_t)(y - oy) * buf->pitch + (size_t)(x - ox) * 4;
}

/* Row by row from the shadow: the scanout buffer is only ever written. */
void drm_copy_box(const struct slim_drm_buffer *buf, int32_t x, int32_t y,
		const struct slim_fb *fb, const pixman_box32_t *box)
{
	size_t bytes = (size_t)(box->x2 - box->x1) * 4;
	for (int32_t row = box->y1; row < box->y2; row++) {
		memcpy(buffer_at(buf, x, y, box->x1, row),
			fb->px + (size_t)row * fb->stride + box->x1, bytes);
	}
}

/* x / 255 rounded to nearest, exactly, for x up to 255 * 255 */
static inline uint32_t div255(uint32_t x)
{
	x += 128;
	return (x + (x >> 8)) >> 8;
}

/* One channel of premultiplied `over`; an invalid (not premultiplied) pixel saturates. */
static inline uint32_t over_channel(uint32_t cursor, uint32_t shadow, uint32_t shift,
		uint32_t inv_alpha)
{
	uint32_t v = ((cursor >> shift) & 0xff) + div255(((shadow >> shift) & 0xff) * inv_alpha);
	return (v > 255 ? 255 : v) << shift;
}

/* The cursor's premultiplied ARGB over the shadow's XRGB, `n` pixels. */
static void blend_row(uint32_t *out, const uint32_t *shadow, const uint32_t *cursor, int32_t n)
{
	for (int32_t i = 0; i < n; i++) {
		uint32_t c = cursor[i], s = shadow[i];
		if (c == 0) {
			out[i] = s;
			continue;
		}
		uint32_t inv = 255 - (c >> 24);
		out[i] = 0xff000000u | over_channel(c, s, 16, inv) | over_channel(c, s, 8, inv) |
			over_channel(c, s, 0, inv);
	}
}

/*
 * A box of the shadow with the software cursor over it where they meet:
 * the blended pixels are made in RAM and written once, like the rest, so
 * that the scanout buffer is still only written, never read.
 */
static void copy_box_with_cursor(struct slim_drm_backend *drm, int32_t ox, int32_t oy,
		const struct slim_drm_buffer *buf, const pixman_box32_t *box)
{
	const struct slim_fb *fb = drm->fb;
	const pixman_box32_t *cur = &drm->cursor.soft_box;
	int32_t x1 = box->x1 > cur->x1 ? box->x1 : cur->x1;
	int32_t x2 = box->x2 < cur->x2 ? box->x2 : cur->x2;
	uint32_t row[SLIM_CURSOR_MAX];
	for (int32_t y = box->y1; y < box->y2; y++) {
		const uint32_t *src = fb->px + (size_t)y * fb->stride;
		if (y < cur->y1 || y >= cur->y2 || x1 >= x2) {
			memcpy(buffer_at(buf, ox, oy, box->x1, y), src + box->x1,
				(size_t)(box->x2 - box->x1) * 4);
			continue;
		}
		size_t at = (size_t)(y - drm->cursor.soft_y) * drm->cursor.w +
			(size_t)(x1 - drm->cursor.soft_x);
		const uint32_t *image = drm->cursor.image + at;
		blend_row(row, src + x1, image, x2 - x1);
		memcpy(buffer_at(buf, ox, oy, box->x1, y), src + box->x1,
			(size_t)(x1 - box->x1) * 4);
		memcpy(buffer_at(buf, ox, oy, x1, y), row, (size_t)(x2 - x1) * 4);
		memcpy(buffer_at(buf, ox, oy, x2, y), src + x2, (size_t)(box->x2 - x2) * 4);
	}
}

static bool boxes_meet(const pixman_box32_t *a, const pixman_box32_t *b)
{
	return a->x1 < b->x2 && b->x1 < a->x2 && a->y1 < b->y2 && b->y1 < a->y2;
}

void drm_copy_region(struct slim_drm_backend *drm, const struct drm_head *head,
		const struct slim_drm_buffer *buf, const pixman_region32_t *region)
{
	const struct slim_fb *fb = drm->fb;
	int32_t ox = (int32_t)head->desc.x, oy = (int32_t)head->desc.y;
	int n;
	const pixman_box32_t *boxes = pixman_region32_rectangles(
		(pixman_region32_t *)region, &n);
	const pixman_box32_t *cur = &drm->cursor.soft_box;
	if (!drm->cursor.soft || cur->x1 >= cur->x2) {
		for (int i = 0; i < n; i++) {
			drm_copy_box(buf, ox, oy, fb, &boxes[i]);
		}
		return;
	}
	for (int i = 0; i < n; i++) {
		if (boxes_meet(&boxes[i], cur)) {
			copy_box_with_cursor(drm, ox, oy, buf, &boxes[i]);
		} else {
			drm_copy_box(buf, ox, oy, fb, &boxes[i]);
		}
	}
}

/* -- failures */

void drm_device_lost(struct slim_drm_backend *drm, const char *what, int err)
{
	if (drm->gone) {
		return;
	}
	drm->gone = true;
	drm->active = false;
	char why[160];
	snprintf(why, sizeof(why), "%s: %s: %s", drm->path, what, strerror(err));
	if (drm->listener && drm->listener->lost) {
		drm->listener->lost(drm->listener_data, why);
	}
}

/* Errors that say the device itself is gone, not that this call was refused. */
bool drm_fatal_errno(int err)
{
	return err == ENODEV || err == EIO || err == ENXIO;
}
