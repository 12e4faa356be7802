/*
 * Compressed pictures on the console: VIDEO fragments put back together
 * (slim-video.h), handed in order to the decoder the program gave
 * (console/video), and the decoded picture drawn into the framebuffer the
 * console keeps, scaled to its place as CSCS is (slim_fb_cscs), so that
 * COPY and repaints read what the screen shows.
 */
#ifndef SLIM_CORE_VIDEO_H
#define SLIM_CORE_VIDEO_H

#include <stdbool.h>
#include <stdint.h>
#include "slim-codec.h"
#include "slim-pixels.h"

/* A decoded picture: 4:2:0, 8 bits a sample. */
struct slim_console_picture {
	const uint8_t *y, *u, *v;
	size_t y_stride, c_stride;
	uint16_t width, height;
};

/* What decodes the console's compressed streams (console/video). */
struct slim_console_video_impl {
	/*
	 * One access unit of `stream`; `start`: the stream began again (a new
	 * encoder). True with *pic when a picture came out.
	 */
	bool (*decode)(void *data, uint8_t stream, const uint8_t *au, size_t size, bool start,
		struct slim_console_picture *pic);
};

struct slim_console_video_stats {
	uint64_t fragments, bytes;  /* VIDEO commands applied, and their bytes */
	uint64_t pictures;          /* decoded and drawn */
	uint64_t errors;            /* access units the decoder refused */
	uint64_t skipped;           /* pictures given up while waiting for a key picture */
	uint64_t key_requests;      /* VIDEO_RECOVER sent */
	uint16_t src_w, src_h, dst_w, dst_h; /* the last picture */
	/*
	 * The longest a playing stream went without a new picture since
	 * core_video_take_gap (a stream's first picture starts none): a
	 * freeze, loss's cost to the eye.
	 */
	uint64_t gap_max_us;
};

struct core_video;

struct core_video *core_video_create(void);
void core_video_destroy(struct core_video *cv);
/* A new association: every stream starts over. */
void core_video_reset(struct core_video *cv);
void core_video_set_impl(struct core_video *cv, const struct slim_console_video_impl *impl,
		void *data);
bool core_video_enabled(const struct core_video *cv);
/*
 * A VIDEO command: the pictures it completes are decoded and drawn into
 * fb; `damaged` is told each rectangle drawn.
 */
void core_video_apply(struct core_video *cv, const struct slim_fb *fb, const struct slim_cmd *cmd,
		uint64_t now_us, void (*damaged)(void *data, struct slim_rect r), void *data);
/* A stream that needs a key picture: VIDEO_RECOVER(stream, frame) is to be sent. */
bool core_video_wants_key(struct core_video *cv, uint64_t now_us, uint8_t *stream,
		uint32_t *frame);
const struct slim_console_video_stats *core_video_stats(const struct core_video *cv);
/* gap_max_us, which starts again from 0. */
uint64_t core_video_take_gap(struct core_video *cv);

#endif
