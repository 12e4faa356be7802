/*
 * Monitors plugged in, unplugged or swapped for one with another mode.
 * The kernel says so with a "change" uevent of the DRM device (HOTPLUG=1),
 * which udev passes on once its rules have run. The display is then
 * chosen again as at the start; when the mode's size changed, the scanout
 * buffers are made anew and the program is told, so that it says HELLO
 * with the new size and the session follows.
 */
#include <errno.h>
#include <libudev.h>
#include <string.h>
#include <sys/stat.h>
#include "drm-internal.h"

void drm_hotplug_init(struct slim_drm_backend *drm)
{
	struct stat st;
	if (fstat(drm->fd, &st) == 0) {
		drm->hotplug.devnum = st.st_rdev;
		drm->hotplug.udev = udev_new();
	}
	if (drm->hotplug.udev) {
		drm->hotplug.monitor = udev_monitor_new_from_netlink(drm->hotplug.udev, "udev");
	}
	if (!drm->hotplug.monitor ||
			udev_monitor_filter_add_match_subsystem_devtype(drm->hotplug.monitor, "drm",
				"drm_minor") < 0 ||
			udev_monitor_enable_receiving(drm->hotplug.monitor) < 0) {
		slim_log(SLIM_LOG_ERROR, "drm: no udev monitor (%s); a monitor plugged in "
			"later goes unnoticed", strerror(errno));
		drm_hotplug_finish(drm);
	}
}

void drm_hotplug_finish(struct slim_drm_backend *drm)
{
	/* both take NULL */
	drm->hotplug.monitor = udev_monitor_unref(drm->hotplug.monitor);
	drm->hotplug.udev = udev_unref(drm->hotplug.udev);
}

/* New scanout buffers for the mode's size; false (errno set) if there are none. */
static bool resize_scanout(struct slim_drm_backend *drm)
{
	drm_scanout_destroy(drm);
	drm->width = drm->mode.hdisplay;
	drm->height = drm->mode.vdisplay;
	/* The program's screen keeps the old size until it is told: nothing to show yet. */
	drm->scanout.fb = NULL;
	double max_x = drm->width - 1, max_y = drm->height - 1;
	drm->cursor.pointer_x = drm->cursor.pointer_x > max_x ? max_x : drm->cursor.pointer_x;
	drm->cursor.pointer_y = drm->cursor.pointer_y > max_y ? max_y : drm->cursor.pointer_y;
	return drm_scanout_create(drm);
}

bool drm_reprobe(struct slim_drm_backend *drm)
{
	if (drm->gone) {
		return false;
	}
	if (!drm->active) {
		/* the seat is away: probing waits for it, like everything else */
		if (!drm->hotplug.reprobe) {
			slim_log(SLIM_LOG_INFO, "drm: the display changed while the seat is away; "
				"looking at it when the seat is back");
		}
		drm->hotplug.reprobe = true;
		return false;
	}
	uint32_t old_crtc = drm->crtc_id, old_connector = drm->connector_id;
	drmModeModeInfo old_mode = drm->mode;
	char why[128];
	if (!drm_pick_display(drm, drm->hotplug.asked_width, drm->hotplug.asked_height, why,
			sizeof(why))) {
		slim_log(SLIM_LOG_INFO, "drm: %s: %s; the picture comes back with a display",
			drm->path, why);
		return false;
	}
	if (drm->crtc_id == old_crtc && drm->connector_id == old_connector &&
			memcmp(&drm->mode, &old_mode, sizeof(old_mode)) == 0) {
		return false;
	}
	bool resized = drm->mode.hdisplay != drm->width || drm->mode.vdisplay != drm->height;
	slim_log(SLIM_LOG_INFO, "drm: the display changed: %ux%u@%u on connector %u, CRTC %u",
		drm->mode.hdisplay, drm->mode.vdisplay, drm->mode.vrefresh, drm->connector_id,
		drm->crtc_id);
	if (old_crtc != drm->crtc_id) {
		drmModeSetCrtc(drm->fd, old_crtc, 0, 0, 0, NULL, 0, NULL);
	}
	/* a flip queued for the old setup must not end the wait for a new one */
	drm->scanout.flip_pending = false;
	drm->scanout.flip_generation++;
	drm->cursor.shown = false;
	if (resized && !resize_scanout(drm)) {
		drm_device_lost(drm, "scanout buffers for the new mode", errno);
		return false;
	}
	slim_drm_damage_add_all(&drm->scanout.damage);
	if (!drm_set_crtc(drm)) {
		if (drm_fatal_errno(errno)) {
			drm_device_lost(drm, "set CRTC", errno);
			return false;
		}
		slim_log(SLIM_LOG_ERROR, "drm: cannot set %ux%u@%u (%s); waiting for another "
			"display", drm->mode.hdisplay, drm->mode.vdisplay, drm->mode.vrefresh,
			strerror(errno));
	}
	drm_cursor_show(drm);
	if (resized && drm->listener && drm->listener->resized) {
		drm->listener->resized(drm->listener_data, drm->width, drm->height);
	}
	return resized;
}

int slim_drm_backend_hotplug_fd(struct slim_console_backend *b)
{
	struct slim_drm_backend *drm = drm_from(b);
	return drm->hotplug.monitor && !drm->gone ? udev_monitor_get_fd(drm->hotplug.monitor) : -1;
}

void slim_drm_backend_hotplug_dispatch(struct slim_console_backend *b)
{
	struct slim_drm_backend *drm = drm_from(b);
	bool ours = false;
	struct udev_device *dev;
	/* the socket does not block: read all there is, probe once */
	while ((dev = udev_monitor_receive_device(drm->hotplug.monitor))) {
		const char *hotplug = udev_device_get_property_value(dev, "HOTPLUG");
		if (udev_device_get_devnum(dev) == drm->hotplug.devnum && hotplug &&
				strcmp(hotplug, "1") == 0) {
			ours = true;
		}
		udev_device_unref(dev);
	}
	if (ours) {
		drm_reprobe(drm);
	}
}
