/*
 * --output drm: the backend itself, which owns the parts. The frames go
 * to the scanout buffers (drm-scanout.c) and the pointer to the cursor
 * plane (drm-cursor.c); the seat takes the device away on a VT switch and
 * gives it back; a monitor plugged in or out sets the heads up again
 * (drm-hotplug.c).
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
	 * handler would need the backend: the flip's user data is the head
	 * and the generation it was queued in, and a flip queued before a VT
	 * switch must not end the wait for one queued after it.
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
			drm_flip_done(drm, vb.user_data);
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
	/* Whatever was on screen meanwhile, no buffer holds our picture. */
	drm_scanout_reset(drm);
	drm->active = true;
	if (!drm_set_crtcs(drm)) {
		if (drm_fatal_errno(errno)) {
			drm_device_lost(drm, "set CRTC", errno);
			return;
		}
		slim_log(SLIM_LOG_ERROR, "drm: cannot set the modes again (%s); "
			"waiting for the next switch", strerror(errno));
		drm->active = false;
		return;
	}
	drm_cursor_reset(drm);
	if (drm->hotplug.reprobe) {
		/* a monitor changed while the seat was away */
		drm->hotplug.reprobe = false;
		if (drm_reprobe(drm)) {
			return; /* new heads: the new association repaints everything */
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
		const uint32_t *width, const uint32_t *height, size_t n,
		const struct slim_drm_listener *listener, void *data, char *err, size_t err_len)
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
	for (size_t i = 0; i < n && i < DRM_MAX_HEADS; i++) {
		drm->asked.width[i] = width[i];
		drm->asked.height[i] = height[i];
		drm->asked.n = (uint32_t)i + 1;
	}
	if (!drm_open_display(drm, err, err_len)) {
		free(drm);
		return NULL;
	}
	drm_save_crtcs(drm);
	if (!drm_scanout_create(drm)) {
		snprintf(err, err_len, "%s: cannot create the scanout buffers (%ux%u): %s",
			drm->path, drm->width, drm->height, strerror(errno));
		goto fail;
	}
	if (!drm_cursor_setup(drm)) {
		snprintf(err, err_len, "out of memory");
		goto fail;
	}
	drm->active = true;
	if (!drm_set_crtcs(drm)) {
		snprintf(err, err_len, "%s: cannot set the heads' modes: %s", drm->path,
			strerror(errno));
		drm->active = false;
		goto fail;
	}
	if (!slim_seat_add_listener(seat, &seat_listener, drm)) {
		snprintf(err, err_len, "too many seat listeners");
		goto fail;
	}
	drm_hotplug_init(drm);
	char what[64];
	snprintf(what, sizeof(what), "%s,", drm->path);
	drm_log_heads(drm, what);
	return &drm->base;
fail:
	drm->base.impl->destroy(&drm->base);
	return NULL;
}

void slim_drm_backend_desk(const struct slim_console_backend *b, struct slim_desk *desk)
{
	drm_desk((const struct slim_drm_backend *)b, desk);
}

/* -- the backend interface */

static bool drm_init(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	struct slim_drm_backend *drm = drm_from(b);
	/* the screen is the heads' bounds: the program asks the core for exactly that */
	return width == drm->width && height == drm->height;
}

static void drm_present(struct slim_console_backend *b, const struct slim_fb *fb,
		const struct slim_rect *damage, size_t n)
{
	struct slim_drm_backend *drm = drm_from(b);
	if (fb->width != drm->width || fb->height != drm->height) {
		return;
	}
	drm->fb = fb;
	drm_damage(drm, damage, n);
	drm_update(drm);
}

static bool drm_resize(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	/* the screen's size is the heads'; nothing else fits on them */
	struct slim_drm_backend *drm = drm_from(b);
	return width == drm->width && height == drm->height;
}

static void drm_destroy(struct slim_console_backend *b)
{
	struct slim_drm_backend *drm = drm_from(b);
	slim_seat_remove_listener(drm->seat, drm);
	if (drm->fd >= 0 && drm->active && !drm->gone) {
		for (uint32_t i = 0; i < drm->n_heads; i++) {
			drmModeSetCursor(drm->fd, drm->heads[i].crtc_id, 0, 0, 0);
		}
	}
	/* the screens back to the text console they came from */
	drm_restore_crtcs(drm);
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

