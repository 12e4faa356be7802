/*
 * What the files of --output drm share: the backend's state and the
 * helpers each part calls in another. (The public header is not called
 * drm.h: that name is libdrm's.) From the top down: drm-output.c owns the
 * backend (its interface, the seat), drm-hotplug.c follows monitors
 * plugged in or out, drm-cursor.c shows the pointer, drm-scanout.c the
 * picture, drm-display.c chooses a connector, mode and CRTC, drm-buffer.c
 * makes dumb buffers and copies damage into them; drm-bench.c times the
 * copies. A part calls only those below it.
 */
#ifndef SLIM_CONSOLE_DRM_INTERNAL_H
#define SLIM_CONSOLE_DRM_INTERNAL_H

#include <pixman.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <libudev.h>
#include <xf86drmMode.h>
#include "drm-damage.h"
#include "drm-backend.h"
#include "slim-log.h"

struct slim_drm_buffer {
	uint32_t handle, fb_id, pitch;
	uint64_t size;
	uint8_t *map; /* write-only: possibly write-combined, never read */
};

/* The picture (drm-scanout.c): two buffers, the back one brought up to date and flipped to. */
struct drm_scanout {
	struct slim_drm_buffer bufs[2];
	struct slim_drm_damage damage;
	bool has_damage; /* damage is initialised */
	const struct slim_fb *fb; /* the core's shadow framebuffer, once presented */
	bool flip_pending; /* buffers are not touched until its event */
	/* Flip events queued before a VT switch carry an older generation. */
	uintptr_t flip_generation;
};

/* The pointer (drm-cursor.c). */
struct drm_cursor {
	/* Hardware cursor: two buffers, so a new image never tears. */
	struct slim_drm_buffer bufs[2];
	int front;
	uint32_t size;
	bool ok;       /* the cursor plane works on this device */
	bool shown;    /* an image is set on the plane */
	bool visible;  /* the server wants it shown */
	uint32_t w, h, hot_x, hot_y;
	uint32_t *image; /* SLIM_CURSOR_MAX², what is on the plane */
	double pointer_x, pointer_y; /* the hotspot on the screen */
	/*
	 * Software cursor, where the display has no cursor plane: the copies
	 * from the shadow draw the image over it, at soft_x/y (its top left,
	 * possibly off the screen), in soft_box (that clipped to the screen;
	 * empty when hidden). Each change damages the old and the new box, so
	 * that both scanout buffers follow.
	 */
	bool soft;
	int32_t soft_x, soft_y;
	pixman_box32_t soft_box;
};

/* Monitors plugged in or out (drm-hotplug.c): udev's change events of the DRM device. */
struct drm_hotplug {
	struct udev *udev;
	struct udev_monitor *monitor;
	dev_t devnum;
	uint32_t asked_width, asked_height; /* --size, 0: the preferred mode */
	bool reprobe; /* a hot-plug came while the seat was away */
};

struct slim_drm_backend {
	struct slim_console_backend base;
	struct slim_seat *seat;
	const struct slim_drm_listener *listener;
	void *listener_data;

	/* the device and the display on it (drm-display.c) */
	int fd, device_id;
	char path[32];
	uint32_t connector_id, crtc_id;
	drmModeModeInfo mode;
	drmModeCrtc *saved_crtc; /* what was on screen before: the text console */
	uint32_t width, height;

	bool active; /* the seat is ours and the CRTC is set */
	bool gone;   /* the device failed for good */
	struct drm_scanout scanout;
	struct drm_cursor cursor;
	struct drm_hotplug hotplug;

	struct slim_ratelimit log_limit;
};

static inline struct slim_drm_backend *drm_from(struct slim_console_backend *b)
{
	return (struct slim_drm_backend *)b;
}

/* -- drm-buffer.c */

/* A dumb buffer of `format` with a framebuffer id, mapped, cleared to black. */
bool drm_buffer_create(struct slim_drm_backend *drm, struct slim_drm_buffer *buf,
		uint32_t width, uint32_t height, uint32_t format);
void drm_buffer_destroy(struct slim_drm_backend *drm, struct slim_drm_buffer *buf);
/* Copies a box of `fb` into the buffer. */
void drm_copy_box(const struct slim_drm_buffer *buf, const struct slim_fb *fb,
		const pixman_box32_t *box);
/*
 * Draws the region of the buffer from the shadow framebuffer (drm->fb),
 * with the software cursor blended in where there is one.
 */
void drm_copy_region(struct slim_drm_backend *drm, const struct slim_drm_buffer *buf,
		const pixman_region32_t *region);
/* The device failed for good: said once through the listener. */
void drm_device_lost(struct slim_drm_backend *drm, const char *what, int err);
/* Whether errno says the device itself is gone, not that a call was refused. */
bool drm_fatal_errno(int err);

/* -- drm-scanout.c */

/* Brings the back buffer up to date and flips to it, when it may. */
void drm_update(struct slim_drm_backend *drm);
/* Draws what the back buffer lacks and shows it with a synchronous modeset. */
bool drm_set_crtc(struct slim_drm_backend *drm);
/* The two scanout buffers and their damage, at drm->width x drm->height. */
bool drm_scanout_create(struct slim_drm_backend *drm);
void drm_scanout_destroy(struct slim_drm_backend *drm);

/* -- drm-hotplug.c */

/* Listens for monitors plugged in or out; without udev it says so once. */
void drm_hotplug_init(struct slim_drm_backend *drm);
void drm_hotplug_finish(struct slim_drm_backend *drm);
/*
 * Chooses the display again (later, if the seat is away): a new mode gets
 * new buffers and the listener's resized(). True if the size changed.
 */
bool drm_reprobe(struct slim_drm_backend *drm);

/* -- drm-display.c */

/* Opens the first card with a connected display; `err` says why none would do. */
bool drm_open_display(struct slim_drm_backend *drm, uint32_t width, uint32_t height,
		char *err, size_t err_len);
/* Fills in connector, mode and CRTC from the open device; `why` if there is none. */
bool drm_pick_display(struct slim_drm_backend *drm, uint32_t width, uint32_t height,
		char *why, size_t why_len);
void drm_close_device(struct slim_drm_backend *drm);

/* -- drm-cursor.c */

/* The cursor plane's buffers; false only when out of memory. */
bool drm_cursor_setup(struct slim_drm_backend *drm);
/* Puts the kept image on the plane, or hides it; moves it to the pointer. */
void drm_cursor_show(struct slim_drm_backend *drm);
void drm_cursor_move(struct slim_drm_backend *drm);
/* The backend's cursor hook: the server's CURSOR_IMAGE and CURSOR_POS. */
void drm_cursor_set(struct slim_console_backend *b, const struct slim_console_cursor *c);

#endif
