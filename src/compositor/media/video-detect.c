#include <string.h>
#include "video-detect.h"

static bool hinted(const struct slim_video_detect *d)
{
	return d->hint == SLIM_CONTENT_VIDEO || d->hint == SLIM_CONTENT_GAME;
}

bool slim_video_detect_commit(struct slim_video_detect *d, uint64_t now_us,
		uint32_t w, uint32_t h, uint64_t damaged)
{
	uint64_t area = (uint64_t)w * h;
	/* "Most": at least half of it, which a scrolling video overlay or subtitles keep. */
	bool big = w >= VIDEO_MIN_SIDE && h >= VIDEO_MIN_SIDE && damaged * 2 >= area;
	if (!big) {
		/* a small update breaks a streak but does not end a video: the timer does */
		d->streak = 0;
		return false;
	}
	uint64_t gap = now_us - d->last_us;
	if (d->last_us != 0 && gap < VIDEO_GAP_US) {
		d->streak = d->streak < VIDEO_STREAK ? d->streak + 1 : VIDEO_STREAK;
		/* smoothed over about 8 frames: a late frame does not halve the rate */
		d->interval_us = d->interval_us ? (d->interval_us * 7 + gap) / 8 : gap;
	} else {
		d->streak = 0;
		d->interval_us = 0;
	}
	d->last_us = now_us;
	if (d->active || d->hint == SLIM_CONTENT_PHOTO) {
		return false;
	}
	if (hinted(d) || (d->streak >= VIDEO_STREAK && now_us >= d->veto_until_us)) {
		d->active = true;
		return true;
	}
	return false;
}

uint64_t slim_video_detect_until_expiry(const struct slim_video_detect *d, uint64_t now_us)
{
	uint64_t since = now_us - d->last_us;
	return since >= VIDEO_IDLE_US ? 0 : VIDEO_IDLE_US - since;
}

void slim_video_detect_waiting(struct slim_video_detect *d, uint64_t now_us)
{
	if (d->active) {
		d->last_us = now_us;
	}
}

bool slim_video_detect_expire(struct slim_video_detect *d, uint64_t now_us)
{
	if (!d->active || slim_video_detect_until_expiry(d, now_us) > 0) {
		return false;
	}
	d->active = false;
	d->streak = 0;
	d->interval_us = 0;
	return true;
}

uint32_t slim_video_detect_fps(const struct slim_video_detect *d)
{
	if (d->interval_us == 0) {
		return 0;
	}
	uint64_t fps = (1000000 + d->interval_us / 2) / d->interval_us;
	return fps < VIDEO_MAX_FPS ? (uint32_t)fps : VIDEO_MAX_FPS;
}

void slim_video_detect_veto(struct slim_video_detect *d, uint64_t now_us)
{
	d->active = false;
	d->streak = 0;
	d->interval_us = 0;
	d->veto_until_us = now_us + VIDEO_VETO_US;
}

uint32_t slim_video_colours(const struct slim_fb *fb, struct slim_rect box)
{
	enum { GRID = 64, SLOTS = 8192 }; /* a hash set twice the samples */
	uint32_t set[SLOTS];
	bool used[SLOTS];
	memset(used, 0, sizeof(used));
	uint32_t nx = box.w < GRID ? box.w : GRID, ny = box.h < GRID ? box.h : GRID, n = 0;
	for (uint32_t j = 0; j < ny; j++) {
		for (uint32_t i = 0; i < nx; i++) {
			uint32_t c = *slim_fb_row(fb, box.x + i * box.w / nx,
				box.y + j * box.h / ny) & 0xffffff;
			uint32_t k = (c * 2654435761u) >> 19;
			while (used[k] && set[k] != c) {
				k = (k + 1) & (SLOTS - 1);
			}
			if (!used[k]) {
				used[k] = true;
				set[k] = c;
				n++;
			}
		}
	}
	return n;
}
