/*
 * The server's H.264 encoder (h264-encoder.h): libavcodec's libx264 or
 * h264_vaapi, set up for one picture in and one access unit out.
 */
#include <libavcodec/avcodec.h>
#include <libavutil/hwcontext.h>
#include <libavutil/opt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "h264-encoder.h"
#include "slim-clock.h"
#include "slim-log.h"
#include "slim-proto.h"
#include "slim-times.h"

/* Encode times: info's p50/p99 over all kept (slim-times.h), the preset's p90 over the last PRESET_WINDOW. */
#define PRESET_WINDOW 60
/* A new preset is chosen at most this often, and only on its predecessor's full window. */
#define PRESET_HOLD_US 1000000
/* The key interval when nobody asks: long, the server asks for key pictures when needed. */
#define KEY_INTERVAL_S 10
#define MIN_BITRATE 64000
#define MAX_BITRATE 1000000000

/* Slowest first: an encoder that cannot keep up steps to the next. */
static const char *const presets[] = { "veryfast", "superfast", "ultrafast" };
#define N_PRESETS (sizeof(presets) / sizeof(presets[0]))

struct slim_h264_encoder {
	struct slim_h264_config cfg;
	bool vaapi;
	char node[64];
	char why[160];
	size_t preset; /* index into presets */
	bool preset_fixed; /* the configuration's, kept */
	AVCodecContext *ctx;
	AVBufferRef *hw_device, *hw_frames;
	AVFrame *frame; /* the picture as copied in: I420 for x264, NV12 to upload for VA-API */
	AVFrame *hw_frame;
	AVPacket *pkt; /* the last access unit, handed out until the next call */
	bool force_key;
	int64_t last_pts;
	uint64_t pictures, bytes;
	struct slim_times times;
	size_t since_preset; /* pictures encoded with the current preset */
	uint64_t preset_us;
	struct slim_ratelimit log_limit;
};

static uint64_t clamp_bitrate(uint64_t bps)
{
	return bps < MIN_BITRATE ? MIN_BITRATE : bps > MAX_BITRATE ? MAX_BITRATE : bps;
}

/*
 * Rate control: an average bit rate capped by a VBV of about two pictures,
 * so that a key picture asked for in the middle of the stream stays
 * bounded (it borrows from the next picture, not from the next second).
 */
static void set_rate(AVCodecContext *ctx, uint64_t bps, uint32_t fps)
{
	uint64_t vbv = bps * 2 / fps;
	ctx->bit_rate = (int64_t)bps;
	ctx->rc_max_rate = (int64_t)bps;
	ctx->rc_buffer_size = (int)(vbv < 2000 ? 2000 : vbv);
}

static const char *x264_profile(uint8_t max_profile)
{
	if (max_profile == 0 || max_profile >= 100) {
		return "high";
	}
	return max_profile >= 77 ? "main" : "baseline";
}

static int vaapi_profile(uint8_t max_profile)
{
	if (max_profile == 0 || max_profile >= 100) {
		return FF_PROFILE_H264_HIGH;
	}
	return max_profile >= 77 ? FF_PROFILE_H264_MAIN : FF_PROFILE_H264_CONSTRAINED_BASELINE;
}

static AVCodecContext *alloc_context(const struct slim_h264_encoder *enc, const char *name)
{
	const AVCodec *codec = avcodec_find_encoder_by_name(name);
	AVCodecContext *ctx = codec ? avcodec_alloc_context3(codec) : NULL;
	if (!ctx) {
		return NULL;
	}
	ctx->width = enc->cfg.width;
	ctx->height = enc->cfg.height;
	ctx->time_base = (AVRational){ 1, 1000000 };
	ctx->framerate = (AVRational){ (int)enc->cfg.fps, 1 };
	ctx->gop_size = (int)(enc->cfg.fps * KEY_INTERVAL_S);
	ctx->max_b_frames = 0;
	/* the planes are BT.601, limited range: the SPS's VUI says so */
	ctx->color_range = AVCOL_RANGE_MPEG;
	ctx->colorspace = AVCOL_SPC_SMPTE170M;
	ctx->color_primaries = AVCOL_PRI_SMPTE170M;
	ctx->color_trc = AVCOL_TRC_SMPTE170M;
	set_rate(ctx, enc->cfg.bitrate_bps, enc->cfg.fps);
	return ctx;
}

static AVCodecContext *open_x264(const struct slim_h264_encoder *enc)
{
	AVCodecContext *ctx = alloc_context(enc, "libx264");
	if (!ctx) {
		return NULL;
	}
	ctx->pix_fmt = AV_PIX_FMT_YUV420P;
	/* sliced threads add no delay; two, as a session's share of the CPU */
	ctx->thread_count = 2;
	ctx->thread_type = FF_THREAD_SLICE;
	AVDictionary *opts = NULL;
	av_dict_set(&opts, "preset", presets[enc->preset], 0);
	av_dict_set(&opts, "tune", "zerolatency", 0);
	av_dict_set(&opts, "profile", x264_profile(enc->cfg.max_profile), 0);
	/* a key picture asked for is an IDR, which a new console can start from */
	av_dict_set(&opts, "forced-idr", "1", 0);
	/* SPS and PPS before every IDR; no scene-cut IDRs the server did not ask for */
	av_dict_set(&opts, "x264-params", "repeat-headers=1:annexb=1:scenecut=0:rc-lookahead=0:sync-lookahead=0", 0);
	int ret = avcodec_open2(ctx, NULL, &opts);
	av_dict_free(&opts);
	if (ret < 0) {
		avcodec_free_context(&ctx);
	}
	return ctx;
}

static AVCodecContext *open_vaapi(struct slim_h264_encoder *enc)
{
	if (!enc->hw_device && av_hwdevice_ctx_create(&enc->hw_device, AV_HWDEVICE_TYPE_VAAPI,
			enc->node, NULL, 0) < 0) {
		return NULL;
	}
	if (!enc->hw_frames) {
		enc->hw_frames = av_hwframe_ctx_alloc(enc->hw_device);
		if (!enc->hw_frames) {
			return NULL;
		}
		AVHWFramesContext *fc = (AVHWFramesContext *)enc->hw_frames->data;
		fc->format = AV_PIX_FMT_VAAPI;
		fc->sw_format = AV_PIX_FMT_NV12;
		fc->width = enc->cfg.width;
		fc->height = enc->cfg.height;
		fc->initial_pool_size = 4;
		if (av_hwframe_ctx_init(enc->hw_frames) < 0) {
			av_buffer_unref(&enc->hw_frames);
			return NULL;
		}
	}
	AVCodecContext *ctx = alloc_context(enc, "h264_vaapi");
	if (!ctx) {
		return NULL;
	}
	ctx->pix_fmt = AV_PIX_FMT_VAAPI;
	ctx->hw_frames_ctx = av_buffer_ref(enc->hw_frames);
	ctx->profile = vaapi_profile(enc->cfg.max_profile);
	AVDictionary *opts = NULL;
	/* one picture in flight: the access unit comes out before the next goes in */
	av_dict_set(&opts, "async_depth", "1", 0);
	av_dict_set(&opts, "aud", "0", 0);
	int ret = ctx->hw_frames_ctx ? avcodec_open2(ctx, NULL, &opts) : -1;
	av_dict_free(&opts);
	if (ret < 0) {
		avcodec_free_context(&ctx);
	}
	return ctx;
}

/* The codec context and the frame the planes are copied into. */
static bool open_codec(struct slim_h264_encoder *enc)
{
	avcodec_free_context(&enc->ctx);
	av_frame_free(&enc->frame);
	enc->ctx = enc->vaapi ? open_vaapi(enc) : open_x264(enc);
	enc->frame = av_frame_alloc();
	if (!enc->ctx || !enc->frame) {
		return false;
	}
	enc->frame->format = enc->vaapi ? AV_PIX_FMT_NV12 : AV_PIX_FMT_YUV420P;
	enc->frame->width = enc->cfg.width;
	enc->frame->height = enc->cfg.height;
	enc->frame->color_range = AVCOL_RANGE_MPEG;
	enc->frame->colorspace = AVCOL_SPC_SMPTE170M;
	enc->since_preset = 0;
	enc->preset_us = slim_now_us();
	/* a new encoder starts with an IDR whatever is asked: say so in the AU */
	enc->force_key = true;
	return av_frame_get_buffer(enc->frame, 0) == 0;
}

static void log_choice(const struct slim_h264_encoder *enc)
{
	slim_log(SLIM_LOG_INFO, "h264: %ux%u at %u fps, %llu bit/s: %s %s (%s)",
		enc->cfg.width, enc->cfg.height, enc->cfg.fps,
		(unsigned long long)enc->cfg.bitrate_bps, enc->vaapi ? "vaapi" : "x264",
		enc->vaapi ? enc->node : presets[enc->preset], enc->why);
}

/* The preset of that name's index, N_PRESETS for none. */
static size_t preset_index(const char *name)
{
	size_t i = 0;
	while (i < N_PRESETS && strcmp(name, presets[i]) != 0) {
		i++;
	}
	return i;
}

static bool config_ok(const struct slim_h264_config *c)
{
	return c && c->width >= 16 && c->height >= 16 && c->width % 2 == 0 &&
		c->height % 2 == 0 && c->width <= SLIM_MAX_DIM && c->height <= SLIM_MAX_DIM &&
		c->fps >= 1 && c->fps <= 240 && c->bitrate_bps > 0 && c->device <= SLIM_H264_VAAPI &&
		(!c->x264_preset || preset_index(c->x264_preset) < N_PRESETS);
}

/* Whether VA-API is to be used, with why either way into enc->why. */
static bool choose_vaapi(struct slim_h264_encoder *enc)
{
	if (enc->cfg.device == SLIM_H264_SOFTWARE) {
		snprintf(enc->why, sizeof(enc->why), "software asked for");
		return false;
	}
	if (enc->cfg.render_node) {
		snprintf(enc->node, sizeof(enc->node), "%s", enc->cfg.render_node);
		snprintf(enc->why, sizeof(enc->why), "render node given");
		return true;
	}
	const char *why = NULL;
	bool found = slim_h264_vaapi_find(enc->node, sizeof(enc->node), &why);
	snprintf(enc->why, sizeof(enc->why), "%s", why);
	return found;
}

struct slim_h264_encoder *slim_h264_encoder_create(const struct slim_h264_config *config)
{
	if (!config_ok(config)) {
		slim_log(SLIM_LOG_ERROR, "h264: refused encoder configuration");
		return NULL;
	}
	av_log_set_level(AV_LOG_ERROR);
	av_log_set_callback(slim_log_av);
	struct slim_h264_encoder *enc = calloc(1, sizeof(*enc));
	if (!enc || !(enc->pkt = av_packet_alloc()) || !(enc->hw_frame = av_frame_alloc())) {
		slim_h264_encoder_destroy(enc);
		return NULL;
	}
	enc->cfg = *config;
	enc->cfg.render_node = NULL; /* not ours to keep */
	enc->cfg.x264_preset = NULL;
	enc->cfg.x264_start = NULL;
	enc->cfg.bitrate_bps = clamp_bitrate(config->bitrate_bps);
	enc->log_limit = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	enc->last_pts = INT64_MIN;
	/* a small picture leaves time for a slower, better preset */
	enc->preset = config->width * config->height <= 640 * 480 ? 0 : 1;
	enc->preset_fixed = config->x264_preset != NULL;
	if (enc->preset_fixed) {
		enc->preset = preset_index(config->x264_preset);
	} else if (config->x264_start && preset_index(config->x264_start) < N_PRESETS) {
		enc->preset = preset_index(config->x264_start);
	}

	enc->vaapi = choose_vaapi(enc);
	if (enc->vaapi && !open_codec(enc)) {
		char node[sizeof(enc->node)];
		snprintf(node, sizeof(node), "%s", enc->node);
		snprintf(enc->why, sizeof(enc->why), "%s: h264_vaapi does not open", node);
		enc->vaapi = false;
		av_buffer_unref(&enc->hw_frames);
		av_buffer_unref(&enc->hw_device);
	}
	if (!enc->vaapi && (config->device == SLIM_H264_VAAPI || !open_codec(enc))) {
		slim_log(SLIM_LOG_ERROR, "h264: no encoder for %ux%u: %s", config->width,
			config->height, config->device == SLIM_H264_VAAPI ? enc->why :
			"libx264 does not open");
		slim_h264_encoder_destroy(enc);
		return NULL;
	}
	log_choice(enc);
	return enc;
}

void slim_h264_encoder_destroy(struct slim_h264_encoder *enc)
{
	if (!enc) {
		return;
	}
	avcodec_free_context(&enc->ctx);
	av_frame_free(&enc->frame);
	av_frame_free(&enc->hw_frame);
	av_packet_free(&enc->pkt);
	av_buffer_unref(&enc->hw_frames);
	av_buffer_unref(&enc->hw_device);
	free(enc);
}

static void copy_plane(uint8_t *dst, size_t dst_stride, const uint8_t *src, size_t src_stride,
		size_t width, size_t height)
{
	for (size_t y = 0; y < height; y++) {
		memcpy(dst + y * dst_stride, src + y * src_stride, width);
	}
}

/* The caller's I420 into the frame: as it is for x264, U and V interleaved for VA-API. */
static void copy_in(struct slim_h264_encoder *enc, const struct slim_h264_planes *in)
{
	AVFrame *f = enc->frame;
	size_t w = enc->cfg.width, h = enc->cfg.height, cw = w / 2, ch = h / 2;
	copy_plane(f->data[0], (size_t)f->linesize[0], in->y, in->y_stride, w, h);
	if (!enc->vaapi) {
		copy_plane(f->data[1], (size_t)f->linesize[1], in->u, in->c_stride, cw, ch);
		copy_plane(f->data[2], (size_t)f->linesize[2], in->v, in->c_stride, cw, ch);
		return;
	}
	for (size_t y = 0; y < ch; y++) {
		uint8_t *uv = f->data[1] + y * (size_t)f->linesize[1];
		const uint8_t *u = in->u + y * in->c_stride, *v = in->v + y * in->c_stride;
		for (size_t x = 0; x < cw; x++) {
			uv[2 * x] = u[x];
			uv[2 * x + 1] = v[x];
		}
	}
}

/*
 * A software encoder whose p90 takes more than half the picture interval
 * leaves too little for the rest of the frame: it steps to a faster preset
 * (a new x264, so the next picture is key, as its AU says).
 */
static void maybe_step_preset(struct slim_h264_encoder *enc)
{
	uint64_t now = slim_now_us();
	if (enc->vaapi || enc->preset_fixed || enc->preset + 1 >= N_PRESETS ||
			enc->since_preset < PRESET_WINDOW || now - enc->preset_us < PRESET_HOLD_US) {
		return;
	}
	double p90 = slim_times_quantile(&enc->times, PRESET_WINDOW, 0.9);
	double budget_ms = 500.0 / enc->cfg.fps;
	if (p90 <= budget_ms) {
		return;
	}
	enc->preset++;
	snprintf(enc->why, sizeof(enc->why), "%s took %.1f ms (p90), over %.1f ms",
		presets[enc->preset - 1], p90, budget_ms);
	if (!open_codec(enc)) {
		slim_log(SLIM_LOG_ERROR, "h264: x264 %s does not open", presets[enc->preset]);
		return;
	}
	log_choice(enc);
}

static bool fail(struct slim_h264_encoder *enc, const char *what, int err)
{
	if (slim_ratelimit(&enc->log_limit, slim_now_us())) {
		char text[AV_ERROR_MAX_STRING_SIZE];
		av_strerror(err, text, sizeof(text));
		slim_log(SLIM_LOG_ERROR, "h264: %s: %s", what, text);
	}
	return false;
}

/* Sends the picture copied into enc->frame (uploaded first for VA-API). */
static int send_picture(struct slim_h264_encoder *enc)
{
	if (!enc->vaapi) {
		return avcodec_send_frame(enc->ctx, enc->frame);
	}
	int ret = av_hwframe_get_buffer(enc->hw_frames, enc->hw_frame, 0);
	if (ret == 0) {
		ret = av_hwframe_transfer_data(enc->hw_frame, enc->frame, 0);
	}
	if (ret == 0) {
		ret = av_frame_copy_props(enc->hw_frame, enc->frame);
	}
	if (ret == 0) {
		ret = avcodec_send_frame(enc->ctx, enc->hw_frame);
	}
	av_frame_unref(enc->hw_frame);
	return ret;
}

bool slim_h264_encode(struct slim_h264_encoder *enc, const struct slim_h264_planes *in,
		uint64_t pts_us, bool key, struct slim_h264_au *out)
{
	av_packet_unref(enc->pkt);
	if (!enc->ctx && !open_codec(enc)) {
		return fail(enc, "encoder does not open", AVERROR(ENOMEM));
	}
	int ret = av_frame_make_writable(enc->frame);
	if (ret < 0) {
		return fail(enc, "frame", ret);
	}
	copy_in(enc, in);
	/* x264 wants increasing timestamps: a repeated or earlier one is moved on */
	int64_t pts = pts_us > INT64_MAX ? INT64_MAX : (int64_t)pts_us;
	if (enc->last_pts != INT64_MIN && pts <= enc->last_pts) {
		pts = enc->last_pts + 1;
	}
	enc->frame->pts = pts;
	enc->frame->pict_type = key || enc->force_key ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;

	uint64_t t0 = slim_now_ns();
	ret = send_picture(enc);
	if (ret == 0) {
		ret = avcodec_receive_packet(enc->ctx, enc->pkt);
	}
	uint64_t t1 = slim_now_ns();
	if (ret < 0) {
		/* the codec's state is unknown: a new one, starting with a key picture */
		avcodec_free_context(&enc->ctx);
		return fail(enc, "encoding", ret);
	}
	enc->last_pts = pts;
	enc->force_key = false;
	slim_times_add(&enc->times, t1 - t0);
	enc->since_preset++;
	enc->pictures++;
	enc->bytes += (uint64_t)enc->pkt->size;
	*out = (struct slim_h264_au){ .data = enc->pkt->data, .size = (size_t)enc->pkt->size,
		.key = enc->pkt->flags & AV_PKT_FLAG_KEY };
	/* the packet's buffer is its own: a new codec context leaves it valid */
	maybe_step_preset(enc);
	return true;
}

void slim_h264_encoder_set_bitrate(struct slim_h264_encoder *enc, uint64_t bitrate_bps)
{
	bitrate_bps = clamp_bitrate(bitrate_bps);
	if (bitrate_bps == enc->cfg.bitrate_bps) {
		return;
	}
	enc->cfg.bitrate_bps = bitrate_bps;
	if (!enc->vaapi && enc->ctx) {
		/* libx264 reconfigures x264 when these change between pictures */
		set_rate(enc->ctx, bitrate_bps, enc->cfg.fps);
		return;
	}
	/* h264_vaapi keeps its rate: a new encoder, whose first picture is key */
	avcodec_free_context(&enc->ctx);
}

void slim_h264_encoder_info(const struct slim_h264_encoder *enc,
		struct slim_h264_encoder_info *info)
{
	*info = (struct slim_h264_encoder_info){
		.kind = enc->vaapi ? "vaapi" : "software",
		.device = enc->vaapi ? enc->node : presets[enc->preset],
		.why = enc->why,
		.bitrate_bps = enc->cfg.bitrate_bps,
		.pictures = enc->pictures,
		.bytes = enc->bytes,
		.encode_ms_p50 = slim_times_quantile(&enc->times, SLIM_TIMES, 0.5),
		.encode_ms_p99 = slim_times_quantile(&enc->times, SLIM_TIMES, 0.99),
	};
}
