#include <stdlib.h>
#include <string.h>
#include "core-video.h"
#include "slim-log.h"
#include "slim-video.h"

struct core_video {
	struct slim_video_depack *depack;
	struct slim_cscs_scratch *scratch;
	const struct slim_console_video_impl *impl;
	void *impl_data;
	uint64_t drawn_us[SLIM_VIDEO_STREAMS]; /* each stream's last picture; 0: none yet */
	struct slim_console_video_stats stats;
};

struct core_video *core_video_create(void)
{
	struct core_video *cv = calloc(1, sizeof(*cv));
	if (!cv) {
		return NULL;
	}
	cv->depack = slim_video_depack_create();
	cv->scratch = slim_cscs_scratch_create();
	if (!cv->depack || !cv->scratch) {
		core_video_destroy(cv);
		return NULL;
	}
	return cv;
}

void core_video_destroy(struct core_video *cv)
{
	if (!cv) {
		return;
	}
	slim_video_depack_destroy(cv->depack);
	slim_cscs_scratch_destroy(cv->scratch);
	free(cv);
}

void core_video_reset(struct core_video *cv)
{
	slim_video_depack_reset(cv->depack);
	memset(cv->drawn_us, 0, sizeof(cv->drawn_us));
}

void core_video_set_impl(struct core_video *cv, const struct slim_console_video_impl *impl,
		void *data)
{
	cv->impl = impl;
	cv->impl_data = data;
	slim_video_depack_reset(cv->depack);
}

bool core_video_enabled(const struct core_video *cv)
{
	return cv->impl != NULL;
}

/* The decoded picture over its place: the whole picture scaled to dst, clip of it painted. */
static void draw(struct core_video *cv, const struct slim_fb *fb, const struct slim_video_au *au,
		const struct slim_console_picture *pic)
{
	struct slim_cscs c = {
		.src_w = pic->width, .src_h = pic->height, .dst = au->dst,
		.psrc = { 0, 0, pic->width, pic->height }, .pdst = au->clip,
		.depth = SLIM_CSCS_DEPTH8, .y = pic->y, .u = pic->u, .v = pic->v,
		.y_stride = pic->y_stride, .c_stride = pic->c_stride,
	};
	slim_fb_cscs(fb, &c, cv->scratch);
	cv->stats.src_w = pic->width;
	cv->stats.src_h = pic->height;
	cv->stats.dst_w = au->dst.w;
	cv->stats.dst_h = au->dst.h;
}

void core_video_apply(struct core_video *cv, const struct slim_fb *fb, const struct slim_cmd *cmd,
		uint64_t now_us, void (*damaged)(void *data, struct slim_rect r), void *data)
{
	if (!cv->impl) {
		return; /* announced no codec: a server that sends one anyway is ignored */
	}
	cv->stats.fragments++;
	cv->stats.bytes += cmd->video.len;
	slim_video_depack_push(cv->depack, cmd, now_us);
	struct slim_video_au au;
	while (slim_video_depack_pop(cv->depack, &au, now_us)) {
		struct slim_console_picture pic;
		bool start = au.flags & SLIM_VIDEO_START;
		if (!cv->impl->decode(cv->impl_data, au.stream, au.data, au.size, start, &pic)) {
			/* what follows refers to what did not decode: a key picture, please */
			cv->stats.errors++;
			slim_video_depack_broken(cv->depack, au.stream, au.frame);
			continue;
		}
		/* the picture the server encoded is its size; anything else is not drawn */
		if (pic.width != au.width || pic.height != au.height) {
			cv->stats.errors++;
			slim_video_depack_broken(cv->depack, au.stream, au.frame);
			continue;
		}
		draw(cv, fb, &au, &pic);
		cv->stats.pictures++;
		uint64_t *last = &cv->drawn_us[au.stream];
		if (*last && !start && now_us - *last > cv->stats.gap_max_us) {
			cv->stats.gap_max_us = now_us - *last;
		}
		*last = now_us;
		damaged(data, au.clip);
	}
	cv->stats.skipped = slim_video_depack_stats(cv->depack)->skipped;
}

bool core_video_wants_key(struct core_video *cv, uint64_t now_us, uint8_t *stream,
		uint32_t *frame)
{
	if (!cv->impl || !slim_video_depack_wants_key(cv->depack, now_us, stream, frame)) {
		return false;
	}
	cv->stats.key_requests++;
	return true;
}

const struct slim_console_video_stats *core_video_stats(const struct core_video *cv)
{
	return &cv->stats;
}

uint64_t core_video_take_gap(struct core_video *cv)
{
	uint64_t gap = cv->stats.gap_max_us;
	cv->stats.gap_max_us = 0;
	return gap;
}
