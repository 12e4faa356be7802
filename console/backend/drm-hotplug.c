/*
 * Monitors plugged in, unplugged or swapped for one with another mode.
 * The kernel says so with a "change" uevent of the DRM device (HOTPLUG=1),
 * which udev passes on once its rules have run. The heads are then
 * chosen again as at the start; when they changed (a monitor more or
 * less, another mode), every head's scanout buffers are made anew and the
 * program is told, so that it says HELLO with the new heads and the
 * session follows. The last monitor unplugged changes nothing: the
 * console waits for one.
 */
#include <errno.h>
#include <libudev.h>
#include <string.h>
#include <sys/stat.h>
#include <xf86drm.h>
#include "drm-internal.h"
#include "slim-clock.h"

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

/* Whether `heads` are the heads driven now: the same connectors, CRTCs and modes. */
static bool same_heads(const struct slim_drm_backend *drm, const struct drm_head *heads,
		uint32_t n)
{
	if (n != drm->n_heads) {
		return false;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct drm_head *a = &drm->heads[i], *b = &heads[i];
		if (a->connector_id != b->connector_id || a->crtc_id != b->crtc_id ||
				memcmp(&a->mode, &b->mode, sizeof(a->mode)) != 0) {
			return false;
		}
	}
	return true;
}

/* Whether HELLO says the same of both: places, modes, names. */
static bool same_descs(const struct slim_drm_backend *drm, const struct drm_head *heads,
		uint32_t n)
{
	if (n != drm->n_heads) {
		return false;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (memcmp(&drm->heads[i].desc, &heads[i].desc, sizeof(heads[i].desc)) != 0) {
			return false;
		}
	}
	return true;
}

/* The CRTCs of the heads gone dark: none of `heads` uses them. */
static void disable_unused(struct slim_drm_backend *drm, const struct drm_head *heads,
		uint32_t n)
{
	for (uint32_t i = 0; i < drm->n_heads; i++) {
		bool used = false;
		for (uint32_t j = 0; j < n; j++) {
			used |= heads[j].crtc_id == drm->heads[i].crtc_id;
		}
		if (!used && drmModeSetCrtc(drm->fd, drm->heads[i].crtc_id, 0, 0, 0, NULL, 0,
				NULL) != 0 && slim_ratelimit(&drm->log_limit, slim_now_us())) {
			slim_log(SLIM_LOG_ERROR, "drm: cannot turn off CRTC %u: %s",
				drm->heads[i].crtc_id, strerror(errno));
		}
	}
}

/* The new heads set up, in place of the old: buffers, modes, the pointer. */
static bool take_heads(struct slim_drm_backend *drm, const struct drm_head *heads,
		uint32_t n, bool told)
{
	disable_unused(drm, heads, n);
	drm_scanout_destroy(drm);
	drm_use_heads(drm, heads, n);
	if (told) {
		/* The program's screen keeps the old heads until it is told: nothing to show yet. */
		drm->fb = NULL;
	}
	if (!drm_scanout_create(drm)) {
		drm_device_lost(drm, "scanout buffers for the new heads", errno);
		return false;
	}
	drm_scanout_reset(drm);
	if (!drm_set_crtcs(drm)) {
		if (drm_fatal_errno(errno)) {
			drm_device_lost(drm, "set CRTC", errno);
			return false;
		}
		slim_log(SLIM_LOG_ERROR, "drm: cannot set the new heads' modes (%s); waiting for "
			"another display", strerror(errno));
	}
	drm_cursor_reset(drm);
	return true;
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
	struct drm_head heads[DRM_MAX_HEADS];
	uint32_t n;
	char why[128];
	if (!drm_pick_heads(drm, heads, &n, why, sizeof(why))) {
		/* the last monitor unplugged: the console waits for one, as it was */
		slim_log(SLIM_LOG_INFO, "drm: %s: %s; the picture comes back with a display",
			drm->path, why);
		return false;
	}
	if (same_heads(drm, heads, n)) {
		return false;
	}
	bool told = !same_descs(drm, heads, n);
	if (!take_heads(drm, heads, n, told)) {
		return false;
	}
	drm_log_heads(drm, "the display changed:");
	if (told && drm->listener && drm->listener->heads) {
		struct slim_desk desk;
		drm_desk(drm, &desk);
		drm->listener->heads(drm->listener_data, &desk);
	}
	return told;
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
