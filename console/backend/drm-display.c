/*
 * Choosing a display, as drm-howto's modeset.c does: the first card with
 * a connected connector, a mode for it (the asked size, else the
 * preferred one), and a CRTC its encoders can drive.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>
#include "drm-internal.h"
#include "slim-codec.h"

#define MAX_CARDS 16

bool slim_drm_device_present(void)
{
	for (int i = 0; i < MAX_CARDS; i++) {
		char path[32];
		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		if (access(path, F_OK) == 0) {
			return true;
		}
	}
	return false;
}

/* A mode a server serves: an 8K monitor is driven at a smaller mode it has. */
static bool mode_fits(const drmModeModeInfo *m)
{
	return slim_screen_fits(m->hdisplay, m->vdisplay);
}

/* The asked size if the display has it, else its preferred mode, else its first. */
static const drmModeModeInfo *pick_mode(const drmModeConnector *conn, uint32_t width,
		uint32_t height)
{
	const drmModeModeInfo *preferred = NULL, *first = NULL;
	for (int i = 0; i < conn->count_modes; i++) {
		const drmModeModeInfo *m = &conn->modes[i];
		if (!mode_fits(m)) {
			continue;
		}
		if (width && m->hdisplay == width && m->vdisplay == height) {
			return m;
		}
		if (!preferred && (m->type & DRM_MODE_TYPE_PREFERRED)) {
			preferred = m;
		}
		if (!first) {
			first = m;
		}
	}
	if (width && (preferred || first)) {
		slim_log(SLIM_LOG_INFO, "drm: the display has no %ux%u mode; using its %s mode",
			width, height, preferred ? "preferred" : "first");
	}
	return preferred ? preferred : first;
}

/* A CRTC for the connector: the one its encoder drives now, else any free one. */
static bool pick_crtc(struct slim_drm_backend *drm, drmModeRes *res, drmModeConnector *conn)
{
	if (conn->encoder_id) {
		drmModeEncoder *enc = drmModeGetEncoder(drm->fd, conn->encoder_id);
		if (enc && enc->crtc_id) {
			drm->crtc_id = enc->crtc_id;
			drmModeFreeEncoder(enc);
			return true;
		}
		drmModeFreeEncoder(enc);
	}
	for (int i = 0; i < conn->count_encoders; i++) {
		drmModeEncoder *enc = drmModeGetEncoder(drm->fd, conn->encoders[i]);
		if (!enc) {
			continue;
		}
		for (int j = 0; j < res->count_crtcs; j++) {
			if (enc->possible_crtcs & (1u << j)) {
				drm->crtc_id = res->crtcs[j];
				drmModeFreeEncoder(enc);
				return true;
			}
		}
		drmModeFreeEncoder(enc);
	}
	return false;
}

/*
 * Whether the open device drives a connected display we can use; fills
 * in the connector, mode and CRTC. `why` says what was missing.
 */
bool drm_pick_display(struct slim_drm_backend *drm, uint32_t width, uint32_t height,
		char *why, size_t why_len)
{
	uint64_t dumb = 0;
	if (drmGetCap(drm->fd, DRM_CAP_DUMB_BUFFER, &dumb) != 0 || !dumb) {
		snprintf(why, why_len, "no dumb buffers");
		return false;
	}
	drmModeRes *res = drmModeGetResources(drm->fd);
	if (!res) {
		snprintf(why, why_len, "not a KMS device (%s)", strerror(errno));
		return false;
	}
	bool found = false, connected = false;
	for (int i = 0; i < res->count_connectors && !found; i++) {
		drmModeConnector *conn = drmModeGetConnector(drm->fd, res->connectors[i]);
		if (!conn) {
			continue;
		}
		if (conn->connection == DRM_MODE_CONNECTED && conn->count_modes > 0) {
			connected = true;
			const drmModeModeInfo *mode = pick_mode(conn, width, height);
			if (mode && pick_crtc(drm, res, conn)) {
				drm->connector_id = conn->connector_id;
				drm->mode = *mode;
				found = true;
			}
		}
		drmModeFreeConnector(conn);
	}
	drmModeFreeResources(res);
	if (!found) {
		snprintf(why, why_len, connected ? "no usable mode or CRTC for the display" :
			"no display connected");
	}
	return found;
}

void drm_close_device(struct slim_drm_backend *drm)
{
	if (drm->fd >= 0) {
		slim_seat_close_device(drm->seat, drm->device_id);
		close(drm->fd);
		drm->fd = -1;
	}
}

/* The first card with a connected display; `err` says why none would do. */
bool drm_open_display(struct slim_drm_backend *drm, uint32_t width, uint32_t height,
		char *err, size_t err_len)
{
	char why[256] = "no DRM device (/dev/dri/card*)";
	for (int i = 0; i < MAX_CARDS; i++) {
		char path[32];
		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		if (access(path, F_OK) != 0) {
			continue;
		}
		drm->fd = slim_seat_open_device(drm->seat, path, &drm->device_id);
		if (drm->fd < 0) {
			snprintf(why, sizeof(why), "%s: cannot open it: %s", path, strerror(errno));
			continue;
		}
		snprintf(drm->path, sizeof(drm->path), "%s", path);
		char card_why[128];
		if (drm_pick_display(drm, width, height, card_why, sizeof(card_why))) {
			return true;
		}
		snprintf(why, sizeof(why), "%s: %s", path, card_why);
		drm_close_device(drm);
	}
	snprintf(err, err_len, "%s", why);
	return false;
}
