/*
 * The console's H.264 decoder: VA-API when its GPU decodes H.264, else
 * libavcodec's software decoder with a bounded number of threads. One
 * access unit in, at most one picture out (no reordering: the server
 * sends no B pictures), as 4:2:0 planes in memory.
 */
#ifndef SLIM_H264_DECODER_H
#define SLIM_H264_DECODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-proto.h"

/* A decoded picture, valid until the next call on the decoder. */
struct slim_h264_picture {
	const uint8_t *y, *u, *v;
	size_t y_stride, c_stride;
	uint16_t width, height;
};

struct slim_h264_decoder_info {
	const char *kind; /* "vaapi" or "software" */
	uint64_t pictures, errors;
	double decode_ms_p50, decode_ms_p99;
};

struct slim_h264_decoder;

/* threads: at most this many (1..4); try_vaapi: use the GPU when it decodes H.264. */
struct slim_h264_decoder *slim_h264_decoder_create(int threads, bool try_vaapi);
void slim_h264_decoder_destroy(struct slim_h264_decoder *dec);
/* A new stream (SLIM_VIDEO_START): what was decoded before is forgotten. */
void slim_h264_decoder_reset(struct slim_h264_decoder *dec);
/*
 * Decodes one access unit. True with *pic set when a picture came out;
 * false on a decoding error (counted, logged at a limited rate) or when
 * none did. A stream of garbage never crashes it and bounds its memory.
 */
bool slim_h264_decode(struct slim_h264_decoder *dec, const uint8_t *data, size_t size,
		struct slim_h264_picture *pic);
void slim_h264_decoder_info(const struct slim_h264_decoder *dec,
		struct slim_h264_decoder_info *info);
/* What this console announces in HELLO for H.264 (software: high, 4096x2304, 60). */
void slim_h264_decoder_caps(bool try_vaapi, struct slim_wire_codec *codec);

#endif
