/*
 * --output drm: the backend itself, which owns the parts. The frames go
 * to the scanout buffers (drm-scanout.c) and the pointer to the cursor
 * plane (drm-cursor.c); the seat takes the device away on a VT switch and
 * gives it back; a monitor plugged in with another mode sets the display
 * up again (drm-hotplug.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>
#include "drm-internal.h"

static const struct slim_console_backend_impl drm_impl;

bool slim_drm_backend_is(const struct slim_console_backend *b)
{
	return b && b->impl == &drm_impl;
}

static void drm_dispatch(struct slim_console_backend *b)
{
	struct slim_drm_backend *drm = drm_from(b);
	if (drm->gone) {
		return;
	}
	/*
	 * The events are read here rather than through drmHandleEvent, whose
	 * handler would need the backend: the flip's user data is the
	 * generation it was queued in, and a flip queued before a VT switch
	 * must not end the wait for one queued after it.
	 */
	char buf[1024];
	ssize_t len = read(drm->fd, buf, sizeof(buf));
	if (len < 0) {
		if (errno != EAGAIN && errno != EINTR && drm_fatal_errno(errno)) {
			drm_device_lost(drm, "reading events", errno);
		}
		return;
	}
	for (ssize_t i = 0; i + (ssize_t)sizeof(struct drm_event) <= len;) {
		struct drm_event ev;
		memcpy(&ev, buf + i, sizeof(ev));
		if (ev.length < sizeof(ev) || i + (ssize_t)ev.length > len) {
			break;
		}
		if (ev.type == DRM_EVENT_FLIP_COMPLETE && ev.length >= sizeof(struct drm_event_vblank)) {
			struct drm_event_vblank vb;
			memcpy(&vb, buf + i, sizeof(vb));
			if ((uintptr_t)vb.user_data == drm->scanout.flip_generation) {
				drm->scanout.flip_pending = false;
			}
		}
		i += ev.length;
	}
	drm_update(drm);
}

static int drm_fd(struct slim_console_backend *b)
{
	struct slim_drm_backend *drm = drm_from(b);
	return drm->gone ? -1 : drm->fd;
}

/* -- the seat */

static void seat_disable(void *data)
{
	struct slim_drm_backend *drm = data;
	/*
	 * The seat manager takes DRM master away after this returns: stop
	 * touching the device. Frames keep arriving and keep the shadow
	 * framebuffer current; they are only not shown.
	 */
	drm->active = false;
}

static void seat_enable(void *data)
{
	struct slim_drm_backend *drm = data;
	if (drm->gone) {
		return;
	}
	/* Whatever was on screen meanwhile, neither buffer holds our picture. */
	drm->scanout.flip_pending = false;
	drm->scanout.flip_generation++;
	drm->cursor.shown = false;
	slim_drm_damage_add_all(&drm->scanout.damage);
	drm->active = true;
	if (!drm_set_crtc(drm)) {
		if (drm_fatal_errno(errno)) {
			drm_device_lost(drm, "set CRTC", errno);
			return;
		}
		slim_log(SLIM_LOG_ERROR, "drm: cannot set the mode again (%s); "
			"waiting for the next switch", strerror(errno));
		drm->active = false;
		return;
	}
	drm_cursor_show(drm);
	if (drm->hotplug.reprobe) {
		/* a monitor changed while the seat was away */
		drm->hotplug.reprobe = false;
		if (drm_reprobe(drm)) {
			return; /* resized: the new association repaints everything */
		}
	}
	if (drm->listener && drm->listener->repaint) {
		drm->listener->repaint(drm->listener_data);
	}
}

static const struct slim_seat_listener seat_listener = {
	.enable = seat_enable,
	.disable = seat_disable,
};


struct slim_console_backend *slim_drm_backend_create(struct slim_seat *seat,
		uint32_t width, uint32_t height, const struct slim_drm_listener *listener,
		void *data, char *err, size_t err_len)
{
	struct slim_drm_backend *drm = calloc(1, sizeof(*drm));
	if (!drm) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	drm->base.impl = &drm_impl;
	drm->seat = seat;
	drm->listener = listener;
	drm->listener_data = data;
	drm->fd = -1;
	drm->log_limit = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	drm->hotplug.asked_width = width;
	drm->hotplug.asked_height = height;
	if (!drm_open_display(drm, width, height, err, err_len)) {
		free(drm);
		return NULL;
	}
	drm->width = drm->mode.hdisplay;
	drm->height = drm->mode.vdisplay;
	drm->saved_crtc = drmModeGetCrtc(drm->fd, drm->crtc_id);
	if (!drm_scanout_create(drm)) {
		snprintf(err, err_len, "%s: cannot create a %ux%u scanout buffer: %s",
			drm->path, drm->width, drm->height, strerror(errno));
		goto fail;
	}
	if (!drm_cursor_setup(drm)) {
		snprintf(err, err_len, "out of memory");
		goto fail;
	}
	drm->active = true;
	if (!drm_set_crtc(drm)) {
		snprintf(err, err_len, "%s: cannot set mode %ux%u@%u: %s", drm->path, drm->width,
			drm->height, drm->mode.vrefresh, strerror(errno));
		drm->active = false;
		goto fail;
	}
	if (!slim_seat_add_listener(seat, &seat_listener, drm)) {
		snprintf(err, err_len, "too many seat listeners");
		goto fail;
	}
	drm_hotplug_init(drm);
	slim_log(SLIM_LOG_INFO, "drm: %s, %ux%u@%u on connector %u, CRTC %u", drm->path,
		drm->width, drm->height, drm->mode.vrefresh, drm->connector_id, drm->crtc_id);
	return &drm->base;
fail:
	drm->base.impl->destroy(&drm->base);
	return NULL;
}

void slim_drm_backend_size(const struct slim_console_backend *b, uint32_t *width,
		uint32_t *height)
{
	const struct slim_drm_backend *drm = (const struct slim_drm_backend *)b;
	*width = drm->width;
	*height = drm->height;
}

/* -- the backend interface */

static bool drm_init(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	struct slim_drm_backend *drm = drm_from(b);
	/* the screen is the mode's size: the program asks the core for exactly that */
	return width == drm->width && height == drm->height;
}

static void drm_present(struct slim_console_backend *b, const struct slim_fb *fb,
		const struct slim_rect *damage, size_t n)
{
	struct slim_drm_backend *drm = drm_from(b);
	if (fb->width != drm->width || fb->height != drm->height) {
		return;
	}
	drm->scanout.fb = fb;
	slim_drm_damage_add(&drm->scanout.damage, damage, n);
	drm_update(drm);
}

static bool drm_resize(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	/* a display's size is its mode's; nothing else fits on it */
	struct slim_drm_backend *drm = drm_from(b);
	return width == drm->width && height == drm->height;
}

static void drm_destroy(struct slim_console_backend *b)
{
	struct slim_drm_backend *drm = drm_from(b);
	slim_seat_remove_listener(drm->seat, drm);
	if (drm->fd >= 0 && drm->active && !drm->gone) {
		drmModeSetCursor(drm->fd, drm->crtc_id, 0, 0, 0);
		/* give the screen back to the text console it came from */
		if (drm->saved_crtc && drm->saved_crtc->mode_valid) {
			drmModeSetCrtc(drm->fd, drm->saved_crtc->crtc_id, drm->saved_crtc->buffer_id,
				drm->saved_crtc->x, drm->saved_crtc->y, &drm->connector_id, 1,
				&drm->saved_crtc->mode);
		}
	}
	drmModeFreeCrtc(drm->saved_crtc);
	drm_hotplug_finish(drm);
	if (drm->fd >= 0) {
		drm_scanout_destroy(drm);
		for (int i = 0; i < 2; i++) {
			drm_buffer_destroy(drm, &drm->cursor.bufs[i]);
		}
	}
	drm_close_device(drm);
	free(drm->cursor.image);
	free(drm);
}

static const struct slim_console_backend_impl drm_impl = {
	.name = "drm",
	.init = drm_init,
	.present = drm_present,
	.resize = drm_resize,
	.destroy = drm_destroy,
	.cursor = drm_cursor_set,
	.fd = drm_fd,
	.dispatch = drm_dispatch,
};

