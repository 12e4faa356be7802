/*
 * What the files of --output drm share: the backend's state and the
 * helpers each part calls in another. (The public header is not called
 * drm.h: that name is libdrm's.) From the top down: drm-output.c owns the
 * backend (its interface, the seat), drm-hotplug.c follows monitors
 * plugged in or out, drm-cursor.c shows the pointer, drm-scanout.c the
 * picture on each head, drm-display.c chooses the heads (a connector, a
 * mode and a CRTC each), drm-connector.c says what a connector's monitor
 * is (name, size, refresh, EDID), drm-buffer.c makes dumb buffers and
 * copies damage into them; drm-bench.c times the copies. A part calls only
 * those below it.
 *
 * Every connected connector is a head, with a CRTC and two scanout
 * buffers of its own: one head's pending flip never holds another's
 * picture, and any driver that can light two monitors can do it this way
 * (one large buffer scanned out at each CRTC's offset would need a driver
 * that takes offsets and buffers wider than its largest mode, and one
 * flip would hold both heads). The heads are laid out left to right in
 * the device's connector order, top edges aligned: the console's screen
 * is their bounding box, and each head's buffers are copies of its
 * rectangle of the core's shadow framebuffer.
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
#include "slim-desk.h"
#include "slim-log.h"

struct slim_drm_buffer {
	uint32_t handle, fb_id, pitch;
	uint64_t size;
	uint8_t *map; /* write-only: possibly write-combined, never read */
};

/* A head's picture (drm-scanout.c): two buffers, the back one brought up to date and flipped to. */
struct drm_scanout {
	struct slim_drm_buffer bufs[2];
	struct slim_drm_damage damage; /* over the head's rectangle of the screen */
	bool has_damage; /* damage is initialised */
	bool flip_pending; /* buffers are not touched until its event */
};

/* One monitor: a connector, the CRTC that drives it, its mode and its picture. */
struct drm_head {
	uint32_t connector_id, crtc_id;
	drmModeModeInfo mode;
	struct slim_head desc; /* its place on the screen and what HELLO says of it */
	struct drm_scanout scanout;
	bool cursor_shown; /* the pointer's image is on this CRTC's cursor plane */
};

/* The most heads a console drives: as many as HELLO may name. */
#define DRM_MAX_HEADS SLIM_MAX_HEADS

/* The pointer (drm-cursor.c). */
struct drm_cursor {
	/* Hardware cursor: two buffers, so a new image never tears. */
	struct slim_drm_buffer bufs[2];
	int front;
	uint32_t size;
	bool ok;       /* the cursor plane works on this device */
	bool shown;    /* the image is in the front buffer, for the pointer's head's plane */
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
	bool reprobe; /* a hot-plug came while the seat was away */
};

/* The modes asked for (--size), head by head; past n, or 0x0: the preferred mode. */
struct drm_asked {
	uint32_t n;
	uint32_t width[DRM_MAX_HEADS], height[DRM_MAX_HEADS];
};

struct slim_drm_backend {
	struct slim_console_backend base;
	struct slim_seat *seat;
	const struct slim_drm_listener *listener;
	void *listener_data;

	/* the device and the heads on it (drm-display.c) */
	int fd, device_id;
	char path[32];
	struct drm_asked asked;
	uint32_t n_heads;
	struct drm_head heads[DRM_MAX_HEADS];
	uint32_t width, height; /* the screen: the heads' bounding box */
	/* What was on each CRTC before (the text console), given back at the end. */
	uint32_t n_saved;
	drmModeCrtc *saved[DRM_MAX_HEADS];
	uint32_t saved_connector[DRM_MAX_HEADS];

	bool active; /* the seat is ours and the CRTCs are set */
	bool gone;   /* the device failed for good */
	const struct slim_fb *fb; /* the core's shadow framebuffer, once presented */
	/*
	 * A flip event's user data is this with the head's index: events queued
	 * before a VT switch or a new set of heads carry an older one.
	 */
	uintptr_t flip_generation;
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
/* Copies a box of `fb` into the buffer, whose top left is x,y of `fb`. */
void drm_copy_box(const struct slim_drm_buffer *buf, int32_t x, int32_t y,
		const struct slim_fb *fb, const pixman_box32_t *box);
/*
 * Draws the region (in the screen's coordinates) of a head's buffer from
 * the shadow framebuffer (drm->fb), with the software cursor blended in
 * where there is one.
 */
void drm_copy_region(struct slim_drm_backend *drm, const struct drm_head *head,
		const struct slim_drm_buffer *buf, const pixman_region32_t *region);
/* The device failed for good: said once through the listener. */
void drm_device_lost(struct slim_drm_backend *drm, const char *what, int err);
/* Whether errno says the device itself is gone, not that a call was refused. */
bool drm_fatal_errno(int err);

/* -- drm-scanout.c */

/* Brings each head's back buffer up to date and flips to it, when it may. */
void drm_update(struct slim_drm_backend *drm);
/* The shadow changed in these rectangles of the screen: each head takes its part. */
void drm_damage(struct slim_drm_backend *drm, const struct slim_rect *rects, size_t n);
/*
 * No buffer of any head holds our picture any more (the seat came back,
 * the heads changed): all stale, and flips queued so far are forgotten.
 */
void drm_scanout_reset(struct slim_drm_backend *drm);
/*
 * Draws what each head's back buffer lacks and shows it with a synchronous
 * modeset; false (errno set) at the first head that fails.
 */
bool drm_set_crtcs(struct slim_drm_backend *drm);
/* A head's flip completed: `data` is the event's user data. */
void drm_flip_done(struct slim_drm_backend *drm, uint64_t data);
/* Each head's two scanout buffers and their damage; false (errno set) if one fails. */
bool drm_scanout_create(struct slim_drm_backend *drm);
void drm_scanout_destroy(struct slim_drm_backend *drm);

/* -- drm-hotplug.c */

/* Listens for monitors plugged in or out; without udev it says so once. */
void drm_hotplug_init(struct slim_drm_backend *drm);
void drm_hotplug_finish(struct slim_drm_backend *drm);
/*
 * Chooses the heads again (later, if the seat is away): new heads get new
 * buffers and the listener's heads(). True if the listener was told.
 */
bool drm_reprobe(struct slim_drm_backend *drm);

/* -- drm-display.c */

/* Opens the first card with a connected display and takes its heads; `err` says why none would do. */
bool drm_open_display(struct slim_drm_backend *drm, char *err, size_t err_len);
/*
 * The heads the open device has now, laid out, in `heads` (n of them, up
 * to DRM_MAX_HEADS; their scanouts empty); false with `why` if none.
 */
bool drm_pick_heads(struct slim_drm_backend *drm, struct drm_head *heads, uint32_t *n,
		char *why, size_t why_len);
/* Takes `n` picked heads as the backend's (their scanouts not made yet). */
void drm_use_heads(struct slim_drm_backend *drm, const struct drm_head *heads, uint32_t n);
/* Keeps what each head's CRTC showed before, to give it back at the end. */
void drm_save_crtcs(struct slim_drm_backend *drm);
void drm_restore_crtcs(struct slim_drm_backend *drm);
/* The heads as HELLO says them. */
void drm_desk(const struct slim_drm_backend *drm, struct slim_desk *desk);
/* Says the heads, after `what` ("/dev/dri/card0,"). */
void drm_log_heads(const struct slim_drm_backend *drm, const char *what);
/* The head whose rectangle holds the point, else -1. */
int drm_head_at(const struct slim_drm_backend *drm, int32_t x, int32_t y);
void drm_close_device(struct slim_drm_backend *drm);

/* -- drm-connector.c */

/*
 * What a connected connector's monitor is: its name ("HDMI-A-1"),
 * physical size, refresh rate of `mode`, make and model from its EDID.
 * The place on the screen is left to the caller.
 */
void drm_describe_head(int fd, const drmModeConnector *conn, const drmModeModeInfo *mode,
		struct slim_head *desc);

/* -- drm-cursor.c */

/* The cursor plane's buffers; false only when out of memory. */
bool drm_cursor_setup(struct slim_drm_backend *drm);
/* Puts the kept image on the plane, or hides it; moves it to the pointer. */
void drm_cursor_show(struct slim_drm_backend *drm);
void drm_cursor_move(struct slim_drm_backend *drm);
/* The planes' state is unknown (the seat came back, the heads changed): shown again. */
void drm_cursor_reset(struct slim_drm_backend *drm);
/* The pointer kept on the screen, and off the gaps below the lower heads. */
void drm_cursor_clamp(struct slim_drm_backend *drm);
/* The backend's cursor hook: the server's CURSOR_IMAGE and CURSOR_POS. */
void drm_cursor_set(struct slim_console_backend *b, const struct slim_console_cursor *c);

#endif
