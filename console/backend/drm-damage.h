/*
 * What each of the two scanout buffers lacks. The shadow framebuffer in
 * RAM is the picture; each scanout buffer is a copy of it that is stale
 * wherever the picture changed since that buffer was last drawn. Drawing
 * a buffer means copying its stale area from the shadow (and nothing
 * more: scanout memory may be write-combined, so it is written in as few
 * bytes as possible and never read). A frame's damage makes both buffers
 * stale there; the back buffer is then brought up to date and flipped,
 * and the other one keeps what it missed until its own turn. After any
 * two flips both buffers equal the shadow.
 *
 * A display of several heads keeps one of these per head, over the
 * head's rectangle of the screen: its regions are in the screen's
 * coordinates, and a damage elsewhere on the screen is none of its
 * business.
 *
 * No device here: the bookkeeping is unit-tested on its own.
 */
#ifndef SLIM_DRM_DAMAGE_H
#define SLIM_DRM_DAMAGE_H

#include <pixman.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-pixels.h"

struct slim_drm_damage {
	int32_t x, y; /* the head's place on the screen */
	uint32_t width, height;
	pixman_region32_t stale[2];
	int back; /* the buffer drawn next: 0 or 1 */
};

/*
 * A head of width x height at x,y on the screen. Both buffers start stale
 * everywhere: what they hold is unknown.
 */
void slim_drm_damage_init(struct slim_drm_damage *d, int32_t x, int32_t y, uint32_t width,
		uint32_t height);
void slim_drm_damage_finish(struct slim_drm_damage *d);

/* The shadow changed in these rectangles (clipped to the head). */
void slim_drm_damage_add(struct slim_drm_damage *d, const struct slim_rect *rects, size_t n);
/* Neither buffer can be trusted (the seat came back, the CRTC was reset). */
void slim_drm_damage_add_all(struct slim_drm_damage *d);

/* What must be copied into the back buffer before it is shown. */
const pixman_region32_t *slim_drm_damage_back(const struct slim_drm_damage *d);
bool slim_drm_damage_back_stale(const struct slim_drm_damage *d);
/* The back buffer was brought up to date: nothing is stale in it any more. */
void slim_drm_damage_drawn(struct slim_drm_damage *d);
/* The back buffer went on screen; the other one is the back buffer now. */
void slim_drm_damage_flipped(struct slim_drm_damage *d);

#endif
