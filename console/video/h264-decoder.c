/*
 * The console's H.264 decoder (h264-decoder.h): libavcodec's "h264" with
 * slice threads only (frame threads would hold each picture back by one)
 * and low delay, so that every access unit comes out as it goes in.
 */
#include <libavcodec/avcodec.h>
#include <libavutil/hwcontext.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "h264-decoder.h"
#include "slim-clock.h"
#include "slim-log.h"
#include "slim-times.h"
#include "vaapi-device.h"

struct slim_h264_decoder {
	int threads;
	AVBufferRef *hw_device; /* NULL: software */
	AVCodecContext *ctx;
	AVPacket *pkt;
	AVFrame *frame, *sw_frame;
	uint8_t *in; /* the access unit, padded as libavcodec's bit readers need */
	size_t in_cap;
	uint8_t *planes; /* I420 made from a GPU's NV12 */
	size_t planes_cap;
	uint64_t pictures, errors;
	struct slim_times times;
	struct slim_ratelimit log_limit;
};

/* The GPU's surfaces where offered; else what the software decoder offers first. */
static enum AVPixelFormat get_format(AVCodecContext *ctx, const enum AVPixelFormat *fmts)
{
	for (const enum AVPixelFormat *f = fmts; *f != AV_PIX_FMT_NONE; f++) {
		if (*f == AV_PIX_FMT_VAAPI && ctx->hw_device_ctx) {
			return *f;
		}
	}
	return fmts[0];
}

static bool open_codec(struct slim_h264_decoder *dec)
{
	const AVCodec *codec = avcodec_find_decoder(AV_CODEC_ID_H264);
	dec->ctx = codec ? avcodec_alloc_context3(codec) : NULL;
	if (!dec->ctx) {
		return false;
	}
	dec->ctx->thread_count = dec->threads;
	dec->ctx->thread_type = FF_THREAD_SLICE;
	dec->ctx->flags |= AV_CODEC_FLAG_LOW_DELAY;
	dec->ctx->flags2 |= AV_CODEC_FLAG2_FAST;
	/* what a stream may make us allocate: the largest screen's picture */
	dec->ctx->max_pixels = SLIM_MAX_SCREEN_PIXELS;
	if (dec->hw_device) {
		dec->ctx->hw_device_ctx = av_buffer_ref(dec->hw_device);
		dec->ctx->get_format = get_format;
	}
	return avcodec_open2(dec->ctx, codec, NULL) == 0;
}

struct slim_h264_decoder *slim_h264_decoder_create(int threads, bool try_vaapi)
{
	av_log_set_level(AV_LOG_ERROR);
	av_log_set_callback(slim_log_av);
	struct slim_h264_decoder *dec = calloc(1, sizeof(*dec));
	if (!dec) {
		return NULL;
	}
	dec->threads = threads < 1 ? 1 : threads > 4 ? 4 : threads;
	dec->log_limit = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	if (try_vaapi) {
		dec->hw_device = slim_vaapi_h264_decode_device();
	}
	if (!(dec->pkt = av_packet_alloc()) || !(dec->frame = av_frame_alloc()) ||
			!(dec->sw_frame = av_frame_alloc()) || !open_codec(dec)) {
		slim_log(SLIM_LOG_ERROR, "h264: the decoder does not open");
		slim_h264_decoder_destroy(dec);
		return NULL;
	}
	slim_log(SLIM_LOG_INFO, "h264: decoding with %s", dec->hw_device ? "vaapi" :
		"software");
	return dec;
}

void slim_h264_decoder_destroy(struct slim_h264_decoder *dec)
{
	if (!dec) {
		return;
	}
	avcodec_free_context(&dec->ctx);
	av_packet_free(&dec->pkt);
	av_frame_free(&dec->frame);
	av_frame_free(&dec->sw_frame);
	av_buffer_unref(&dec->hw_device);
	free(dec->in);
	free(dec->planes);
	free(dec);
}

void slim_h264_decoder_reset(struct slim_h264_decoder *dec)
{
	avcodec_flush_buffers(dec->ctx);
}

static bool fail(struct slim_h264_decoder *dec, const char *what, int err)
{
	dec->errors++;
	if (slim_ratelimit(&dec->log_limit, slim_now_us())) {
		char text[AV_ERROR_MAX_STRING_SIZE] = "";
		if (err) {
			av_strerror(err, text, sizeof(text));
		}
		slim_log(SLIM_LOG_ERROR, "h264: %s%s%s", what, err ? ": " : "", text);
	}
	return false;
}

static bool grow(uint8_t **buf, size_t *cap, size_t size)
{
	if (size <= *cap) {
		return true;
	}
	uint8_t *p = realloc(*buf, size);
	if (!p) {
		return false;
	}
	*buf = p;
	*cap = size;
	return true;
}

/* The decoded frame as I420 planes: in place for yuv420p, NV12 split into our buffer. */
static bool to_picture(struct slim_h264_decoder *dec, const AVFrame *f,
		struct slim_h264_picture *pic)
{
	*pic = (struct slim_h264_picture){ .width = (uint16_t)f->width, .height = (uint16_t)f->height };
	if (f->format == AV_PIX_FMT_YUV420P || f->format == AV_PIX_FMT_YUVJ420P) {
		pic->y = f->data[0];
		pic->u = f->data[1];
		pic->v = f->data[2];
		pic->y_stride = (size_t)f->linesize[0];
		pic->c_stride = (size_t)f->linesize[1];
		return f->linesize[1] == f->linesize[2];
	}
	if (f->format != AV_PIX_FMT_NV12) {
		return false;
	}
	size_t w = (size_t)f->width, h = (size_t)f->height;
	size_t cw = (w + 1) / 2, ch = (h + 1) / 2;
	if (!grow(&dec->planes, &dec->planes_cap, w * h + 2 * cw * ch)) {
		return false;
	}
	uint8_t *y = dec->planes, *u = y + w * h, *v = u + cw * ch;
	for (size_t r = 0; r < h; r++) {
		memcpy(y + r * w, f->data[0] + r * (size_t)f->linesize[0], w);
	}
	for (size_t r = 0; r < ch; r++) {
		const uint8_t *uv = f->data[1] + r * (size_t)f->linesize[1];
		for (size_t x = 0; x < cw; x++) {
			u[r * cw + x] = uv[2 * x];
			v[r * cw + x] = uv[2 * x + 1];
		}
	}
	*pic = (struct slim_h264_picture){ .y = y, .u = u, .v = v, .y_stride = w,
		.c_stride = cw, .width = (uint16_t)w, .height = (uint16_t)h };
	return true;
}

bool slim_h264_decode(struct slim_h264_decoder *dec, const uint8_t *data, size_t size,
		struct slim_h264_picture *pic)
{
	if (size == 0 || size > INT_MAX - AV_INPUT_BUFFER_PADDING_SIZE ||
			!grow(&dec->in, &dec->in_cap, size + AV_INPUT_BUFFER_PADDING_SIZE)) {
		return fail(dec, "access unit refused", 0);
	}
	memcpy(dec->in, data, size);
	memset(dec->in + size, 0, AV_INPUT_BUFFER_PADDING_SIZE);
	dec->pkt->data = dec->in;
	dec->pkt->size = (int)size;

	uint64_t t0 = slim_now_ns();
	av_frame_unref(dec->frame);
	av_frame_unref(dec->sw_frame);
	int ret = avcodec_send_packet(dec->ctx, dec->pkt);
	if (ret == AVERROR(EAGAIN)) {
		/* a picture nobody took: dropped, then this unit goes in */
		avcodec_receive_frame(dec->ctx, dec->frame);
		av_frame_unref(dec->frame);
		ret = avcodec_send_packet(dec->ctx, dec->pkt);
	}
	if (ret < 0) {
		return fail(dec, "access unit does not decode", ret);
	}
	ret = avcodec_receive_frame(dec->ctx, dec->frame);
	if (ret == AVERROR(EAGAIN)) {
		return false; /* parameter sets alone, or a picture still missing its references */
	}
	if (ret < 0) {
		return fail(dec, "no picture", ret);
	}
	AVFrame *f = dec->frame;
	if (f->decode_error_flags || (f->flags & AV_FRAME_FLAG_CORRUPT)) {
		return fail(dec, "picture decoded with errors", 0);
	}
	if (f->width > SLIM_MAX_DIM || f->height > SLIM_MAX_DIM) {
		return fail(dec, "picture over the largest size", 0);
	}
	if (f->format == AV_PIX_FMT_VAAPI) {
		ret = av_hwframe_transfer_data(dec->sw_frame, f, 0);
		if (ret < 0) {
			return fail(dec, "picture does not leave the GPU", ret);
		}
		f = dec->sw_frame;
	}
	if (!to_picture(dec, f, pic)) {
		return fail(dec, "unsupported picture format (not 4:2:0, 8 bits)", 0);
	}
	slim_times_add(&dec->times, slim_now_ns() - t0);
	dec->pictures++;
	return true;
}

void slim_h264_decoder_info(const struct slim_h264_decoder *dec,
		struct slim_h264_decoder_info *info)
{
	*info = (struct slim_h264_decoder_info){
		.kind = dec->hw_device ? "vaapi" : "software",
		.pictures = dec->pictures,
		.errors = dec->errors,
		.decode_ms_p50 = slim_times_quantile(&dec->times, SLIM_TIMES, 0.5),
		.decode_ms_p99 = slim_times_quantile(&dec->times, SLIM_TIMES, 0.99),
	};
}

void slim_h264_decoder_caps(bool try_vaapi, struct slim_wire_codec *codec)
{
	AVBufferRef *gpu = try_vaapi ? slim_vaapi_h264_decode_device() : NULL;
	*codec = (struct slim_wire_codec){
		.codec = SLIM_CODEC_H264,
		.profile = 100,
		.level = 51,
		.flags = gpu ? SLIM_CODEC_HARDWARE : 0,
		.max_width = 4096,
		.max_height = 2304,
		.max_fps = 60,
	};
	av_buffer_unref(&gpu);
}
