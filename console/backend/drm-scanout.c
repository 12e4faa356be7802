/*
 * The picture on the display: two dumb XRGB8888 buffers, the damage of
 * the shadow framebuffer copied into the one not on screen and flipped to
 * on vblank, a modeset where a flip cannot be had. Below the cursor and
 * the hot-plug, which call it; it calls only the buffers (drm-buffer.c).
 */
#include <drm_fourcc.h>
#include <errno.h>
#include <string.h>
#include <xf86drm.h>
#include "drm-internal.h"
#include "slim-clock.h"

bool drm_scanout_create(struct slim_drm_backend *drm)
{
	slim_drm_damage_init(&drm->scanout.damage, drm->width, drm->height);
	drm->scanout.has_damage = true;
	for (int i = 0; i < 2; i++) {
		if (!drm_buffer_create(drm, &drm->scanout.bufs[i], drm->width, drm->height,
				DRM_FORMAT_XRGB8888)) {
			return false;
		}
	}
	return true;
}

void drm_scanout_destroy(struct slim_drm_backend *drm)
{
	for (int i = 0; i < 2; i++) {
		drm_buffer_destroy(drm, &drm->scanout.bufs[i]);
	}
	if (drm->scanout.has_damage) {
		slim_drm_damage_finish(&drm->scanout.damage);
		drm->scanout.has_damage = false;
	}
}

bool drm_set_crtc(struct slim_drm_backend *drm)
{
	struct slim_drm_buffer *buf = &drm->scanout.bufs[drm->scanout.damage.back];
	if (drm->scanout.fb) {
		drm_copy_region(drm, buf, slim_drm_damage_back(&drm->scanout.damage));
		slim_drm_damage_drawn(&drm->scanout.damage);
	}
	if (drmModeSetCrtc(drm->fd, drm->crtc_id, buf->fb_id, 0, 0, &drm->connector_id, 1,
			&drm->mode) != 0) {
		return false;
	}
	slim_drm_damage_flipped(&drm->scanout.damage);
	return true;
}

/*
 * Brings the back buffer up to date and flips to it, unless a flip is
 * still pending: then the damage waits in both buffers' stale regions and
 * the flip event calls this again, so that any number of frames between
 * two vblanks cost one copy and one flip.
 */
void drm_update(struct slim_drm_backend *drm)
{
	if (!drm->active || drm->gone || drm->scanout.flip_pending || !drm->scanout.fb ||
			!slim_drm_damage_back_stale(&drm->scanout.damage)) {
		return;
	}
	struct slim_drm_buffer *buf = &drm->scanout.bufs[drm->scanout.damage.back];
	drm_copy_region(drm, buf, slim_drm_damage_back(&drm->scanout.damage));
	slim_drm_damage_drawn(&drm->scanout.damage);
	if (drmModePageFlip(drm->fd, drm->crtc_id, buf->fb_id, DRM_MODE_PAGE_FLIP_EVENT,
			(void *)drm->scanout.flip_generation) == 0) {
		drm->scanout.flip_pending = true;
		slim_drm_damage_flipped(&drm->scanout.damage);
		return;
	}
	int err = errno;
	if (drm_fatal_errno(err)) {
		drm_device_lost(drm, "page flip", err);
		return;
	}
	if (err == EACCES || err == EPERM) {
		/* no longer DRM master: the seat is going away; its enable redraws all */
		return;
	}
	/*
	 * A driver that refuses the flip (EINVAL, EBUSY) may still take a
	 * modeset: slower, but the picture gets there.
	 */
	if (slim_ratelimit(&drm->log_limit, slim_now_us())) {
		slim_log(SLIM_LOG_ERROR, "drm: page flip failed (%s), setting the CRTC instead",
			strerror(err));
	}
	if (drmModeSetCrtc(drm->fd, drm->crtc_id, buf->fb_id, 0, 0, &drm->connector_id, 1,
			&drm->mode) == 0) {
		slim_drm_damage_flipped(&drm->scanout.damage);
	} else if (drm_fatal_errno(errno)) {
		drm_device_lost(drm, "set CRTC", errno);
	}
}
