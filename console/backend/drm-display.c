/*
 * Choosing the heads, as drm-howto's modeset.c chooses one: the first
 * card with a connected connector, and on it every connected connector
 * with a mode (the asked size, else the preferred one) and a CRTC of its
 * own its encoders can drive, left to right in the card's order.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>
#include "drm-internal.h"
#include "slim-clock.h"
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

/*
 * A CRTC for the connector that no head before it took (`used`, a mask of
 * indices in res->crtcs): the one its encoder drives now, else any free
 * one its encoders can drive. 0 if there is none.
 */
static uint32_t pick_crtc(int fd, const drmModeRes *res, const drmModeConnector *conn,
		uint32_t *used)
{
	drmModeEncoder *enc = conn->encoder_id ? drmModeGetEncoder(fd, conn->encoder_id) : NULL;
	for (int j = 0; enc && enc->crtc_id && j < res->count_crtcs && j < 32; j++) {
		if (res->crtcs[j] == enc->crtc_id && !(*used & (1u << j))) {
			*used |= 1u << j;
			drmModeFreeEncoder(enc);
			return res->crtcs[j];
		}
	}
	drmModeFreeEncoder(enc);
	for (int i = 0; i < conn->count_encoders; i++) {
		enc = drmModeGetEncoder(fd, conn->encoders[i]);
		if (!enc) {
			continue;
		}
		for (int j = 0; j < res->count_crtcs && j < 32; j++) {
			if ((enc->possible_crtcs & (1u << j)) && !(*used & (1u << j))) {
				*used |= 1u << j;
				drmModeFreeEncoder(enc);
				return res->crtcs[j];
			}
		}
		drmModeFreeEncoder(enc);
	}
	return 0;
}

/*
 * The connector as the next head, right of the others (at x), if it has a
 * mode that fits, a CRTC and room on the screen; `*why` says what it
 * lacked otherwise.
 */
static bool pick_head(struct slim_drm_backend *drm, const drmModeRes *res,
		const drmModeConnector *conn, uint32_t index, uint32_t x, uint32_t height,
		uint32_t *used, struct drm_head *head, const char **why)
{
	bool asked = index < drm->asked.n;
	const drmModeModeInfo *mode = pick_mode(conn, asked ? drm->asked.width[index] : 0,
		asked ? drm->asked.height[index] : 0);
	if (!mode) {
		*why = "no usable mode";
		return false;
	}
	uint32_t w = x + mode->hdisplay, h = height > mode->vdisplay ? height : mode->vdisplay;
	if (w > SLIM_MAX_DIM || !slim_screen_fits(w, h)) {
		*why = "no room on the screen";
		return false;
	}
	uint32_t crtc = pick_crtc(drm->fd, res, conn, used);
	if (!crtc) {
		*why = "no free CRTC";
		return false;
	}
	*head = (struct drm_head){ .connector_id = conn->connector_id, .crtc_id = crtc,
		.mode = *mode };
	drm_describe_head(drm->fd, conn, mode, &head->desc);
	head->desc.x = x;
	head->desc.primary = index == 0;
	return true;
}

bool drm_pick_heads(struct slim_drm_backend *drm, struct drm_head *heads, uint32_t *n,
		char *why, size_t why_len)
{
	*n = 0;
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
	bool connected = false;
	uint32_t used = 0, x = 0, height = 0;
	for (int i = 0; i < res->count_connectors && *n < DRM_MAX_HEADS; i++) {
		drmModeConnector *conn = drmModeGetConnector(drm->fd, res->connectors[i]);
		if (!conn) {
			continue;
		}
		const char *lack = NULL;
		if (conn->connection == DRM_MODE_CONNECTED && conn->count_modes > 0) {
			connected = true;
			if (pick_head(drm, res, conn, *n, x, height, &used, &heads[*n], &lack)) {
				x += heads[*n].desc.width;
				height = height > heads[*n].desc.height ? height : heads[*n].desc.height;
				(*n)++;
			} else if (slim_ratelimit(&drm->log_limit, slim_now_us())) {
				slim_log(SLIM_LOG_INFO, "drm: connector %u left dark: %s",
					conn->connector_id, lack);
			}
		}
		drmModeFreeConnector(conn);
	}
	drmModeFreeResources(res);
	if (*n == 0) {
		snprintf(why, why_len, connected ? "no usable mode or CRTC for the display" :
			"no display connected");
	}
	return *n > 0;
}

void drm_use_heads(struct slim_drm_backend *drm, const struct drm_head *heads, uint32_t n)
{
	drm->n_heads = n;
	drm->width = drm->height = 0;
	for (uint32_t i = 0; i < n; i++) {
		drm->heads[i] = heads[i];
		const struct slim_head *d = &heads[i].desc;
		drm->width = d->x + d->width > drm->width ? d->x + d->width : drm->width;
		drm->height = d->height > drm->height ? d->height : drm->height;
	}
}

void drm_desk(const struct slim_drm_backend *drm, struct slim_desk *desk)
{
	*desk = (struct slim_desk){ .n_heads = drm->n_heads };
	for (uint32_t i = 0; i < drm->n_heads; i++) {
		desk->heads[i] = drm->heads[i].desc;
	}
}

int drm_head_at(const struct slim_drm_backend *drm, int32_t x, int32_t y)
{
	for (uint32_t i = 0; i < drm->n_heads; i++) {
		const struct slim_head *d = &drm->heads[i].desc;
		if (x >= (int32_t)d->x && x < (int32_t)(d->x + d->width) &&
				y >= (int32_t)d->y && y < (int32_t)(d->y + d->height)) {
			return (int)i;
		}
	}
	return -1;
}

void drm_log_heads(const struct slim_drm_backend *drm, const char *what)
{
	slim_log(SLIM_LOG_INFO, "drm: %s %ux%u, %u head%s", what, drm->width, drm->height,
		drm->n_heads, drm->n_heads == 1 ? "" : "s");
	for (uint32_t i = 0; i < drm->n_heads; i++) {
		const struct drm_head *h = &drm->heads[i];
		slim_log(SLIM_LOG_INFO, "drm: head %s: %ux%u at %u,%u, %u.%03u Hz, %ux%u mm, "
			"'%s' '%s', connector %u, CRTC %u", h->desc.name, h->desc.width,
			h->desc.height, h->desc.x, h->desc.y, h->desc.refresh_mhz / 1000,
			h->desc.refresh_mhz % 1000, h->desc.mm_width, h->desc.mm_height,
			h->desc.make, h->desc.model, h->connector_id, h->crtc_id);
	}
}

void drm_save_crtcs(struct slim_drm_backend *drm)
{
	for (uint32_t i = 0; i < drm->n_heads && drm->n_saved < DRM_MAX_HEADS; i++) {
		drmModeCrtc *crtc = drmModeGetCrtc(drm->fd, drm->heads[i].crtc_id);
		if (crtc) {
			drm->saved_connector[drm->n_saved] = drm->heads[i].connector_id;
			drm->saved[drm->n_saved++] = crtc;
		}
	}
}

/* Gives each screen back to the text console it came from. */
void drm_restore_crtcs(struct slim_drm_backend *drm)
{
	for (uint32_t i = 0; i < drm->n_saved; i++) {
		drmModeCrtc *c = drm->saved[i];
		if (drm->fd >= 0 && drm->active && !drm->gone && c->mode_valid) {
			drmModeSetCrtc(drm->fd, c->crtc_id, c->buffer_id, c->x, c->y,
				&drm->saved_connector[i], 1, &c->mode);
		}
		drmModeFreeCrtc(c);
	}
	drm->n_saved = 0;
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
bool drm_open_display(struct slim_drm_backend *drm, char *err, size_t err_len)
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
		struct drm_head heads[DRM_MAX_HEADS];
		uint32_t n;
		if (drm_pick_heads(drm, heads, &n, card_why, sizeof(card_why))) {
			drm_use_heads(drm, heads, n);
			return true;
		}
		snprintf(why, sizeof(why), "%s: %s", path, card_why);
		drm_close_device(drm);
	}
	snprintf(err, err_len, "%s", why);
	return false;
}
