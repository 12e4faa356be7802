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
 *
 * A terminal scrolling as fast as it can redraws like a video too. What it
 * shows tells them apart: text and user interfaces are made of few colours
 * (foot scrolling: 62 among 4096 samples, gtk3-demo: 121), pictures of many
 * (a fractal zoom: 623, a game: 2292). A surface found by measure whose
 * picture has fewer than VIDEO_MIN_COLOURS is vetoed: not video, and not
 * looked at again for VIDEO_VETO_US. A client's word, or YUV buffers, need
 * no such test.
 */
#ifndef SLIM_VIDEO_DETECT_H
#define SLIM_VIDEO_DETECT_H

#include <stdbool.h>
#include <stdint.h>
#include "slim-pixels.h"

#define VIDEO_MIN_SIDE 96
#define VIDEO_STREAK 20
#define VIDEO_GAP_US 200000
#define VIDEO_IDLE_US 150000
#define VIDEO_MIN_COLOURS 256
#define VIDEO_VETO_US 1000000
/* the most frames a second the compositor sends (output.c's pacing) */
#define VIDEO_MAX_FPS 120

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
	uint64_t veto_until_us;
};

/*
 * A commit of a surface of w x h that redrew `damaged` of its pixels.
 * Returns true when the surface became video.
 */
bool slim_video_detect_commit(struct slim_video_detect *d, uint64_t now_us,
		uint32_t w, uint32_t h, uint64_t damaged);

/* Not video after all (its picture says so): no more for VIDEO_VETO_US. */
void slim_video_detect_veto(struct slim_video_detect *d, uint64_t now_us);

/* Distinct colours among (at most) 64 x 64 samples spread over `box` of fb. */
uint32_t slim_video_colours(const struct slim_fb *fb, struct slim_rect box);

/*
 * The client waits for the compositor's frame callback: a pause that is
 * the compositor's (a slow link, a busy machine), not the video's.
 */
void slim_video_detect_waiting(struct slim_video_detect *d, uint64_t now_us);
/* Returns true when the surface stopped being video (no big commit for VIDEO_IDLE_US). */
bool slim_video_detect_expire(struct slim_video_detect *d, uint64_t now_us);

/* Microseconds until slim_video_detect_expire would end the video (0: now). */
uint64_t slim_video_detect_until_expiry(const struct slim_video_detect *d, uint64_t now_us);

/*
 * Frames a second the surface has been drawing, from its commits, at most
 * VIDEO_MAX_FPS (a burst of commits is not sent faster); 0 if not known.
 */
uint32_t slim_video_detect_fps(const struct slim_video_detect *d);

#endif
