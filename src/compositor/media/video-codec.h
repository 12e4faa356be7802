/*
 * The session's compressed video streams (video-codec.c): which video
 * surfaces go to the console as H.264 rather than CSCS, each with an
 * encoder of its own (src/codec), at most SLIM_VIDEO_STREAMS of them.
 * No wlroots: surfaces are keys.
 */
#ifndef SLIM_VIDEO_CODEC_H
#define SLIM_VIDEO_CODEC_H

#include <stdbool.h>
#include <stdint.h>
#include "encoder.h"
#include "h264-encoder.h"

struct video_codec;

struct video_codec_stream_info {
	bool active;
	struct slim_h264_encoder_info enc;
	uint16_t width, height;
};

struct video_codec *video_codec_create(enum slim_h264_device device);
void video_codec_destroy(struct video_codec *vc);
/*
 * What the attached console decodes (NULL: no codec, or no console): every
 * stream starts again, with a key picture.
 */
void video_codec_console(struct video_codec *vc, const struct slim_wire_codec *h264);
/* Whether the console decodes H.264 at all. */
bool video_codec_usable(const struct video_codec *vc);
/*
 * The coded size for a video of `box` at `fps` within bitrate_bps: the box
 * (even, within the console's limits), smaller when the bits would not
 * keep its quality. False when it is no case for a codec (too small).
 */
bool video_codec_size(const struct video_codec *vc, struct slim_rect box, uint32_t fps,
		uint64_t bitrate_bps, uint16_t *w, uint16_t *h);
/*
 * The picture of surface `key`, `img` (4:2:0 samples of its size, shown
 * over img->dst), encoded into *pic. False when no stream is free, or the
 * encoder failed: the caller sends CSCS.
 */
bool video_codec_encode(struct video_codec *vc, const void *key, const struct slim_yuv_image *img,
		uint32_t fps, uint64_t bitrate_bps, uint64_t now_us, struct slim_video_picture *pic);
/* Surface `key` is no video any more (or gone): its stream ends. */
void video_codec_forget(struct video_codec *vc, const void *key);
/* The console lost what stream `stream` needs: its next picture is a key picture. */
void video_codec_recover(struct video_codec *vc, uint8_t stream);
/* Streams that ended since the last call (bit n: stream n). */
uint8_t video_codec_take_ended(struct video_codec *vc);
void video_codec_info(const struct video_codec *vc, uint8_t stream,
		struct video_codec_stream_info *info);

#endif
