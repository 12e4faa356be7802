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
	if (hinted(d) || d->streak >= VIDEO_STREAK) {
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
	return d->interval_us ? (uint32_t)((1000000 + d->interval_us / 2) / d->interval_us) : 0;
}
