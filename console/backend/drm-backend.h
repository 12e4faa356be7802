/*
 * --output drm: the console's picture on a KMS display, without a
 * compositor or a GPU driver of any kind, the way drm-howto's modeset.c
 * does it: a connected connector, its preferred mode, a CRTC, two dumb
 * XRGB8888 scanout buffers flipped with drmModePageFlip, and the cursor
 * plane for the pointer (drawn into the picture where there is none). The device is opened through the seat, so the
 * console gives it up on a VT switch and takes it back after. A monitor
 * plugged in with another mode is set up anew, and the console says HELLO
 * with its size.
 */
#ifndef SLIM_CONSOLE_DRM_BACKEND_H
#define SLIM_CONSOLE_DRM_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "backend.h"
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
	 * Another monitor, or the same with another mode, was plugged in: the
	 * screen is `width` x `height` now and shows nothing until the
	 * console's screen has that size too.
	 */
	void (*resized)(void *data, uint32_t width, uint32_t height);
};

/* Whether this machine has a DRM device node at all (no device is opened). */
bool slim_drm_device_present(void);

/*
 * Finds a KMS device with a connected display and sets it up. `width`
 * and `height` ask for a mode of that size (0: the display's preferred
 * mode). On failure returns NULL with a one-line reason in `err`.
 */
struct slim_console_backend *slim_drm_backend_create(struct slim_seat *seat,
		uint32_t width, uint32_t height, const struct slim_drm_listener *listener,
		void *data, char *err, size_t err_len);
bool slim_drm_backend_is(const struct slim_console_backend *backend);

/* The chosen mode: the size the console says HELLO with. */
void slim_drm_backend_size(const struct slim_console_backend *backend,
		uint32_t *width, uint32_t *height);

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
