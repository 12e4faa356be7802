/*
 * --output drm: the console's picture on a KMS display, without a
 * compositor or a GPU driver of any kind, the way drm-howto's modeset.c
 * does it: every connected connector is a head, with its preferred mode,
 * a CRTC of its own, two dumb XRGB8888 scanout buffers flipped with
 * drmModePageFlip, and its CRTC's cursor plane for the pointer while it
 * is on that head (drawn into the picture where there is none). The heads
 * lie left to right in the connectors' order; the console's screen is
 * their bounding box. The device is opened through the seat, so the
 * console gives it up on a VT switch and takes it back after. A monitor
 * plugged in or out is set up anew, and the console says HELLO with its
 * new heads.
 */
#ifndef SLIM_CONSOLE_DRM_BACKEND_H
#define SLIM_CONSOLE_DRM_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "backend.h"
#include "slim-desk.h"
#include "seat.h"

struct slim_drm_listener {
	/*
	 * The seat came back and the screen was set up again. The picture is
	 * shown again from the shadow framebuffer at once; this asks the
	 * server to repaint as well.
	 */
	void (*repaint)(void *data);
	/* The display went away for good; the console goes on without it. */
	void (*lost)(void *data, const char *why);
	/*
	 * A monitor was plugged in or out, or one has another mode: the heads
	 * are `desk`'s now, and show nothing until the console's screen is
	 * their bounding box too.
	 */
	void (*heads)(void *data, const struct slim_desk *desk);
};

/* Whether this machine has a DRM device node at all (no device is opened). */
bool slim_drm_device_present(void);

/*
 * Finds a KMS device with a connected display and sets up its heads.
 * `width` and `height` (n of each) ask the first n heads for a mode of
 * that size (0, or past n: the monitor's preferred mode). On failure
 * returns NULL with a one-line reason in `err`.
 */
struct slim_console_backend *slim_drm_backend_create(struct slim_seat *seat,
		const uint32_t *width, const uint32_t *height, size_t n,
		const struct slim_drm_listener *listener, void *data, char *err, size_t err_len);
bool slim_drm_backend_is(const struct slim_console_backend *backend);

/* The heads: what the console says HELLO with (the screen is their bounds). */
void slim_drm_backend_desk(const struct slim_console_backend *backend,
		struct slim_desk *desk);

/*
 * Monitors plugged in or out: a udev monitor's socket (-1 without one),
 * and what to call when it is readable.
 */
int slim_drm_backend_hotplug_fd(struct slim_console_backend *backend);
void slim_drm_backend_hotplug_dispatch(struct slim_console_backend *backend);

/*
 * Moves the pointer on the screen at once, before the server hears of it
 * (its CURSOR_POS corrects the position after). Relative moves add to the
 * current position; positions are in pixels, clamped to the screen.
 */
void slim_drm_backend_move_pointer(struct slim_console_backend *backend,
		double x, double y, bool relative);

/*
 * --bench-present: times copying square damages of several sizes from a
 * shadow framebuffer into the scanout buffer, and prints
 * "present STARTUP_NS PER_PIXEL_NS" (least-squares fit) on `out`.
 */
bool slim_drm_backend_bench(struct slim_console_backend *backend, FILE *out);

#endif
