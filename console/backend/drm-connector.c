/*
 * What a connector's monitor is, for HELLO: the connector's name as the
 * kernel's sysfs and other compositors spell it (type and number:
 * "HDMI-A-1", "Virtual-2"), its physical size, the exact refresh rate of
 * its mode, and make and model from the EDID the monitor sent (read by
 * edid.c, which trusts none of it).
 */
#include <stdio.h>
#include <string.h>
#include <xf86drm.h>
#include "drm-internal.h"
#include "edid.h"

/* The mode's refresh in mHz from its timings: vrefresh is rounded to a whole Hz. */
static uint32_t refresh_mhz(const drmModeModeInfo *m)
{
	uint64_t total = (uint64_t)m->htotal * m->vtotal;
	if (total == 0) {
		return m->vrefresh * 1000u;
	}
	/* clock is in kHz: frames per second are clock * 1000 / total */
	uint64_t mhz = ((uint64_t)m->clock * 1000000u + total / 2) / total;
	if (m->flags & DRM_MODE_FLAG_INTERLACE) {
		mhz *= 2;
	}
	if (m->flags & DRM_MODE_FLAG_DBLSCAN) {
		mhz /= 2;
	}
	if (m->vscan > 1) {
		mhz /= m->vscan;
	}
	return mhz > UINT32_MAX ? 0 : (uint32_t)mhz;
}

/* The connector's EDID property, parsed; false if it has none or it is no EDID. */
static bool read_edid(int fd, const drmModeConnector *conn, struct slim_edid *edid)
{
	bool ok = false;
	drmModeObjectProperties *props = drmModeObjectGetProperties(fd, conn->connector_id,
		DRM_MODE_OBJECT_CONNECTOR);
	for (uint32_t i = 0; props && i < props->count_props && !ok; i++) {
		drmModePropertyRes *prop = drmModeGetProperty(fd, props->props[i]);
		if (prop && strcmp(prop->name, "EDID") == 0 && props->prop_values[i]) {
			drmModePropertyBlobRes *blob = drmModeGetPropertyBlob(fd,
				(uint32_t)props->prop_values[i]);
			if (blob) {
				ok = slim_edid_parse(blob->data, blob->length, edid);
				drmModeFreePropertyBlob(blob);
			}
		}
		drmModeFreeProperty(prop);
	}
	drmModeFreeObjectProperties(props);
	return ok;
}

void drm_describe_head(int fd, const drmModeConnector *conn, const drmModeModeInfo *mode,
		struct slim_head *desc)
{
	*desc = (struct slim_head){
		.width = mode->hdisplay,
		.height = mode->vdisplay,
		/* HELLO takes up to SLIM_MAX_HEAD_MM; more is a monitor's nonsense */
		.mm_width = conn->mmWidth <= SLIM_MAX_HEAD_MM ? conn->mmWidth : 0,
		.mm_height = conn->mmHeight <= SLIM_MAX_HEAD_MM ? conn->mmHeight : 0,
		.refresh_mhz = refresh_mhz(mode),
	};
	const char *type = drmModeGetConnectorTypeName(conn->connector_type);
	snprintf(desc->name, sizeof(desc->name), "%s-%u", type ? type : "Unknown",
		conn->connector_type_id);
	struct slim_edid edid;
	if (read_edid(fd, conn, &edid)) {
		snprintf(desc->make, sizeof(desc->make), "%s", edid.make);
		snprintf(desc->model, sizeof(desc->model), "%s", edid.model);
	}
}
