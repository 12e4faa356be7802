/*
 * A video surface whose visible part is one rectangle goes to a console
 * that decodes H.264 as H.264: a stream of its own, numbered 0..3, with
 * an encoder kept while the surface plays and is the same size. The
 * encoder's bit rate follows the video's share of the link at every
 * picture; a new size means a new encoder and a key picture that starts
 * the stream again (SLIM_VIDEO_START). A console that lost what a stream
 * needs says so (VIDEO_RECOVER) and gets a key picture.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "slim-clock.h"
#include "slim-log.h"
#include "video-codec.h"

/*
 * Bits a pixel a picture keeps clean content at about 38 dB (x264's
 * superfast, measured): 5.5 Mbit/s for 1280x720 at 60.
 */
#define BITS_PER_PIXEL 0.10
/* Smaller than this a side, a video goes as CSCS: a codec gains little there. */
#define MIN_SIDE 64
/* Below this share of what the full size wants, the picture is coded smaller. */
#define SHRINK_BELOW 0.5
#define MIN_BITRATE 200000
/*
 * A surface whose encoder had to be made anew this many times within
 * RESIZE_WINDOW_US (a client that changes its size every frame) goes as
 * CSCS for RESIZE_PENALTY_US: an encoder costs milliseconds to open.
 */
#define RESIZE_MAX 4
#define RESIZE_WINDOW_US 2000000
#define RESIZE_PENALTY_US 5000000

struct codec_stream {
	const void *key;      /* the surface; NULL: free */
	struct slim_h264_encoder *enc;
	uint16_t width, height;
	uint32_t fps;
	uint32_t frame;       /* the next picture's number */
	bool start;           /* the next picture starts the stream on the console */
	bool key_wanted;
	uint64_t bitrate;
	uint32_t opened;       /* encoders made since opened_us */
	uint64_t opened_us;
	uint64_t cscs_until_us; /* resized too often: CSCS until then */
};

struct video_codec {
	enum slim_h264_device device;
	bool usable;
	struct slim_wire_codec h264; /* the console's limits */
	struct codec_stream streams[SLIM_VIDEO_STREAMS];
	uint8_t ended;
	/*
	 * The x264 preset the last software encoder settled on: a new one
	 * (a video started again, or resized) starts there rather than
	 * learning this machine's speed again at the cost of slow pictures.
	 */
	char preset[16];
	struct slim_ratelimit log_limit;
};

struct video_codec *video_codec_create(enum slim_h264_device device)
{
	struct video_codec *vc = calloc(1, sizeof(*vc));
	if (!vc) {
		return NULL;
	}
	vc->device = device;
	vc->log_limit = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	return vc;
}

/* What the stream's encoder learnt of the machine, for the next one. */
static void keep_preset(struct video_codec *vc, const struct codec_stream *s)
{
	struct slim_h264_encoder_info info;
	if (s->enc) {
		slim_h264_encoder_info(s->enc, &info);
		if (strcmp(info.kind, "software") == 0) {
			snprintf(vc->preset, sizeof(vc->preset), "%s", info.device);
		}
	}
}

static void end_stream(struct video_codec *vc, uint8_t i)
{
	struct codec_stream *s = &vc->streams[i];
	keep_preset(vc, s);
	if (s->key) {
		vc->ended |= (uint8_t)(1u << i);
	}
	slim_h264_encoder_destroy(s->enc);
	*s = (struct codec_stream){ 0 };
}

void video_codec_destroy(struct video_codec *vc)
{
	if (!vc) {
		return;
	}
	for (uint8_t i = 0; i < SLIM_VIDEO_STREAMS; i++) {
		end_stream(vc, i);
	}
	free(vc);
}

void video_codec_console(struct video_codec *vc, const struct slim_wire_codec *h264)
{
	vc->usable = h264 && h264->codec == SLIM_CODEC_H264 && h264->max_width >= MIN_SIDE &&
		h264->max_height >= MIN_SIDE && h264->max_fps > 0;
	if (vc->usable) {
		vc->h264 = *h264;
	}
	/* a new console's decoders know nothing: each stream starts again */
	for (uint8_t i = 0; i < SLIM_VIDEO_STREAMS; i++) {
		struct codec_stream *s = &vc->streams[i];
		if (!vc->usable) {
			end_stream(vc, i);
		} else if (s->key) {
			s->start = true;
			s->frame = 0;
		}
	}
}

bool video_codec_usable(const struct video_codec *vc)
{
	return vc->usable;
}

static uint64_t wanted_bps(uint32_t w, uint32_t h, uint32_t fps)
{
	return (uint64_t)(BITS_PER_PIXEL * w * h * (fps ? fps : 60));
}

bool video_codec_size(const struct video_codec *vc, struct slim_rect box, uint32_t fps,
		uint64_t bitrate_bps, uint16_t *w, uint16_t *h)
{
	if (!vc->usable || box.w < MIN_SIDE || box.h < MIN_SIDE) {
		return false;
	}
	double s = 1.0;
	uint64_t want = wanted_bps(box.w, box.h, fps);
	if (bitrate_bps && (double)bitrate_bps < SHRINK_BELOW * (double)want) {
		s = sqrt((double)bitrate_bps / (SHRINK_BELOW * (double)want));
	}
	/* the console's largest picture */
	double fit = fmin((double)vc->h264.max_width / box.w, (double)vc->h264.max_height / box.h);
	s = fmin(s, fit);
	uint32_t cw = (uint32_t)(box.w * s) & ~1u, ch = (uint32_t)(box.h * s) & ~1u;
	if (cw < MIN_SIDE || ch < MIN_SIDE) {
		return false;
	}
	*w = (uint16_t)cw;
	*h = (uint16_t)ch;
	return true;
}

/* The key's stream, or a free one for it; NULL when all are taken. */
static struct codec_stream *find_stream(struct video_codec *vc, const void *key, uint8_t *index)
{
	struct codec_stream *free_one = NULL;
	for (uint8_t i = 0; i < SLIM_VIDEO_STREAMS; i++) {
		if (vc->streams[i].key == key) {
			*index = i;
			return &vc->streams[i];
		}
		if (!vc->streams[i].key && !free_one) {
			free_one = &vc->streams[i];
			*index = i;
		}
	}
	if (free_one) {
		/* a stream number used before: the console's decoder starts over */
		*free_one = (struct codec_stream){ .key = key, .start = true };
	}
	return free_one;
}

static bool open_encoder(struct video_codec *vc, struct codec_stream *s, uint16_t w, uint16_t h,
		uint32_t fps, uint64_t bitrate)
{
	keep_preset(vc, s);
	slim_h264_encoder_destroy(s->enc);
	struct slim_h264_config cfg = {
		.width = w, .height = h, .fps = fps, .bitrate_bps = bitrate,
		.device = vc->device, .max_profile = vc->h264.profile,
		.x264_start = vc->preset[0] ? vc->preset : NULL,
	};
	s->enc = slim_h264_encoder_create(&cfg);
	if (!s->enc) {
		return false;
	}
	s->width = w;
	s->height = h;
	s->fps = fps;
	s->bitrate = bitrate;
	s->start = true;
	s->frame = 0; /* the encoder said what it chose, and why */
	return true;
}

/* One more encoder for the stream: false (and CSCS for a while) when it resizes too often. */
static bool too_often(struct video_codec *vc, struct codec_stream *s, uint64_t now_us)
{
	if (now_us - s->opened_us > RESIZE_WINDOW_US) {
		s->opened = 0;
		s->opened_us = now_us;
	}
	if (++s->opened <= RESIZE_MAX) {
		return false;
	}
	s->cscs_until_us = now_us + RESIZE_PENALTY_US;
	s->opened = 0;
	keep_preset(vc, s);
	slim_h264_encoder_destroy(s->enc);
	s->enc = NULL;
	if (slim_ratelimit(&vc->log_limit, now_us)) {
		slim_log(SLIM_LOG_INFO, "video: a surface changes size every few pictures: "
			"CSCS for it for %d s", RESIZE_PENALTY_US / 1000000);
	}
	return true;
}

bool video_codec_encode(struct video_codec *vc, const void *key, const struct slim_yuv_image *img,
		uint32_t fps, uint64_t bitrate_bps, uint64_t now_us, struct slim_video_picture *pic)
{
	uint8_t index;
	struct codec_stream *s = vc->usable ? find_stream(vc, key, &index) : NULL;
	if (!s || img->depth != SLIM_CSCS_DEPTH8) {
		return false;
	}
	if (now_us < s->cscs_until_us) {
		return false;
	}
	fps = fps ? fps : 60;
	fps = fps < vc->h264.max_fps ? fps : vc->h264.max_fps;
	uint64_t want = wanted_bps(img->width, img->height, fps);
	uint64_t bitrate = bitrate_bps && bitrate_bps < want ? bitrate_bps : want;
	bitrate = bitrate > MIN_BITRATE ? bitrate : MIN_BITRATE;
	bool reopen = !s->enc || s->width != img->width || s->height != img->height;
	if (reopen && too_often(vc, s, now_us)) {
		return false;
	}
	if (reopen && !open_encoder(vc, s, img->width, img->height, fps, bitrate)) {
		if (slim_ratelimit(&vc->log_limit, now_us)) {
			slim_log(SLIM_LOG_ERROR, "video: no H.264 encoder for %ux%u: CSCS",
				img->width, img->height);
		}
		end_stream(vc, index);
		return false;
	}
	/* the link's share moved by more than a tenth: the encoder follows */
	if (bitrate * 10 < s->bitrate * 9 || bitrate * 10 > s->bitrate * 11) {
		slim_h264_encoder_set_bitrate(s->enc, bitrate);
		s->bitrate = bitrate;
	}
	struct slim_h264_planes in = {
		.y = img->y, .u = img->u, .v = img->v,
		.y_stride = img->y_stride, .c_stride = img->c_stride,
	};
	struct slim_h264_au au;
	if (!slim_h264_encode(s->enc, &in, now_us, s->start || s->key_wanted, &au)) {
		return false;
	}
	*pic = (struct slim_video_picture){
		.stream = index,
		.flags = (uint8_t)((au.key ? SLIM_VIDEO_KEY : 0) | (s->start ? SLIM_VIDEO_START : 0)),
		.width = s->width, .height = s->height, .frame = s->frame++,
		.dst = img->dst, .clip = img->dst, .data = au.data, .size = au.size,
	};
	s->start = false;
	s->key_wanted = s->key_wanted && !au.key;
	return true;
}

void video_codec_forget(struct video_codec *vc, const void *key)
{
	for (uint8_t i = 0; i < SLIM_VIDEO_STREAMS; i++) {
		if (vc->streams[i].key == key) {
			end_stream(vc, i);
		}
	}
}

void video_codec_recover(struct video_codec *vc, uint8_t stream)
{
	if (stream < SLIM_VIDEO_STREAMS && vc->streams[stream].key) {
		vc->streams[stream].key_wanted = true;
	}
}

uint8_t video_codec_take_ended(struct video_codec *vc)
{
	uint8_t ended = vc->ended;
	vc->ended = 0;
	return ended;
}

void video_codec_info(const struct video_codec *vc, uint8_t stream,
		struct video_codec_stream_info *info)
{
	*info = (struct video_codec_stream_info){ 0 };
	if (stream >= SLIM_VIDEO_STREAMS || !vc->streams[stream].enc) {
		return;
	}
	const struct codec_stream *s = &vc->streams[stream];
	info->active = true;
	info->width = s->width;
	info->height = s->height;
	slim_h264_encoder_info(s->enc, &info->enc);
}
