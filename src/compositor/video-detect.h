/*
 * Which surfaces show moving pictures, decided from what they commit (no
 * wlroots). A surface is video when its client says so (wp_content_type_v1
 * "video" or "game") or when it behaves like it: most of its area redrawn,
 * again and again, less than VIDEO_GAP_US apart, VIDEO_STREAK times in a
 * row (SPICE's rule), and it is at least VIDEO_MIN_SIDE on both sides. A
 * blinking cursor, a spinner or a progress bar redraws a small part of its
 * surface, or too few times, and is never video.
 *
 * Video ends VIDEO_IDLE_US after the last such commit: a paused or ended
 * video, or one that went back to small updates, is then repainted exactly.
 */
#ifndef SLIM_VIDEO_DETECT_H
#define SLIM_VIDEO_DETECT_H

#include <stdbool.h>
#include <stdint.h>

#define VIDEO_MIN_SIDE 96
#define VIDEO_STREAK 20
#define VIDEO_GAP_US 200000
#define VIDEO_IDLE_US 150000

enum slim_content_hint {
	SLIM_CONTENT_NONE,
	SLIM_CONTENT_PHOTO,
	SLIM_CONTENT_VIDEO,
	SLIM_CONTENT_GAME,
};

struct slim_video_detect {
	enum slim_content_hint hint;
	bool active;
	uint32_t streak;
	uint64_t last_us;     /* the last commit that redrew most of the surface */
	uint64_t interval_us; /* smoothed time between such commits */
};

/*
 * A commit of a surface of w x h that redrew `damaged` of its pixels.
 * Returns true when the surface became video.
 */
bool slim_video_detect_commit(struct slim_video_detect *d, uint64_t now_us,
		uint32_t w, uint32_t h, uint64_t damaged);

/* Returns true when the surface stopped being video (no big commit for VIDEO_IDLE_US). */
bool slim_video_detect_expire(struct slim_video_detect *d, uint64_t now_us);

/* Microseconds until slim_video_detect_expire would end the video (0: now). */
uint64_t slim_video_detect_until_expiry(const struct slim_video_detect *d, uint64_t now_us);

/* Frames a second the surface has been drawing, from its commits; 0 if not known. */
uint32_t slim_video_detect_fps(const struct slim_video_detect *d);

#endif
