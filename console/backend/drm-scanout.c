/*
 * The picture on the heads: each has two dumb XRGB8888 buffers, the
 * damage of its rectangle of the shadow framebuffer copied into the one
 * not on screen and flipped to on its CRTC's vblank, a modeset where a
 * flip cannot be had. Each head flips on its own: a flip pending on one
 * holds only that one. Below the cursor and the hot-plug, which call it;
 * it calls only the buffers (drm-buffer.c).
 */
#include <drm_fourcc.h>
#include <errno.h>
#include <string.h>
#include <xf86drm.h>
#include "drm-internal.h"
#include "slim-clock.h"

/* A flip event's user data: the generation it was queued in and the head's index. */
static uintptr_t flip_data(const struct slim_drm_backend *drm, uint32_t index)
{
	return drm->flip_generation * DRM_MAX_HEADS + index;
}

bool drm_scanout_create(struct slim_drm_backend *drm)
{
	for (uint32_t i = 0; i < drm->n_heads; i++) {
		struct drm_head *h = &drm->heads[i];
		slim_drm_damage_init(&h->scanout.damage, (int32_t)h->desc.x, (int32_t)h->desc.y,
			h->desc.width, h->desc.height);
		h->scanout.has_damage = true;
		for (int b = 0; b < 2; b++) {
			if (!drm_buffer_create(drm, &h->scanout.bufs[b], h->desc.width,
					h->desc.height, DRM_FORMAT_XRGB8888)) {
				return false;
			}
		}
	}
	return true;
}

void drm_scanout_destroy(struct slim_drm_backend *drm)
{
	for (uint32_t i = 0; i < drm->n_heads; i++) {
		struct drm_scanout *s = &drm->heads[i].scanout;
		for (int b = 0; b < 2; b++) {
			drm_buffer_destroy(drm, &s->bufs[b]);
		}
		if (s->has_damage) {
			slim_drm_damage_finish(&s->damage);
			s->has_damage = false;
		}
		s->flip_pending = false;
	}
}

void drm_damage(struct slim_drm_backend *drm, const struct slim_rect *rects, size_t n)
{
	for (uint32_t i = 0; i < drm->n_heads; i++) {
		slim_drm_damage_add(&drm->heads[i].scanout.damage, rects, n);
	}
}

void drm_scanout_reset(struct slim_drm_backend *drm)
{
	drm->flip_generation++;
	for (uint32_t i = 0; i < drm->n_heads; i++) {
		drm->heads[i].scanout.flip_pending = false;
		slim_drm_damage_add_all(&drm->heads[i].scanout.damage);
	}
}

/* The back buffer, brought up to date from the shadow: the one to show next. */
static struct slim_drm_buffer *draw_back(struct slim_drm_backend *drm, struct drm_head *h)
{
	struct slim_drm_buffer *buf = &h->scanout.bufs[h->scanout.damage.back];
	if (drm->fb) {
		drm_copy_region(drm, h, buf, slim_drm_damage_back(&h->scanout.damage));
		slim_drm_damage_drawn(&h->scanout.damage);
	}
	return buf;
}

static bool set_crtc(struct slim_drm_backend *drm, struct drm_head *h,
		const struct slim_drm_buffer *buf)
{
	if (drmModeSetCrtc(drm->fd, h->crtc_id, buf->fb_id, 0, 0, &h->connector_id, 1,
			&h->mode) != 0) {
		return false;
	}
	slim_drm_damage_flipped(&h->scanout.damage);
	return true;
}

bool drm_set_crtcs(struct slim_drm_backend *drm)
{
	for (uint32_t i = 0; i < drm->n_heads; i++) {
		struct drm_head *h = &drm->heads[i];
		if (!set_crtc(drm, h, draw_back(drm, h))) {
			return false;
		}
	}
	return true;
}

void drm_flip_done(struct slim_drm_backend *drm, uint64_t data)
{
	uint32_t index = (uint32_t)(data % DRM_MAX_HEADS);
	if (data / DRM_MAX_HEADS == drm->flip_generation && index < drm->n_heads) {
		drm->heads[index].scanout.flip_pending = false;
	}
}

/* A flip the driver refused: said (rate-limited), and a modeset in its place. */
static void flip_failed(struct slim_drm_backend *drm, struct drm_head *h,
		const struct slim_drm_buffer *buf, int err)
{
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
		slim_log(SLIM_LOG_ERROR, "drm: page flip on %s failed (%s), setting the CRTC "
			"instead", h->desc.name, strerror(err));
	}
	if (!set_crtc(drm, h, buf) && drm_fatal_errno(errno)) {
		drm_device_lost(drm, "set CRTC", errno);
	}
}

/*
 * Brings a head's back buffer up to date and flips to it, unless its flip
 * is still pending: then the damage waits in both buffers' stale regions
 * and the flip event calls this again, so that any number of frames
 * between two vblanks cost one copy and one flip per head.
 */
static void update_head(struct slim_drm_backend *drm, uint32_t index)
{
	struct drm_head *h = &drm->heads[index];
	if (h->scanout.flip_pending || !slim_drm_damage_back_stale(&h->scanout.damage)) {
		return;
	}
	struct slim_drm_buffer *buf = draw_back(drm, h);
	if (drmModePageFlip(drm->fd, h->crtc_id, buf->fb_id, DRM_MODE_PAGE_FLIP_EVENT,
			(void *)flip_data(drm, index)) == 0) {
		h->scanout.flip_pending = true;
		slim_drm_damage_flipped(&h->scanout.damage);
		return;
	}
	flip_failed(drm, h, buf, errno);
}

void drm_update(struct slim_drm_backend *drm)
{
	for (uint32_t i = 0; i < drm->n_heads && drm->active && !drm->gone && drm->fb; i++) {
		update_head(drm, i);
	}
}
