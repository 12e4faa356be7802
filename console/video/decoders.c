#include <stdlib.h>
#include "decoders.h"
#include "slim-proto.h"

/* Threads a stream's decoder may use: the console has other work (input, sound). */
#define DECODER_THREADS 2

struct console_decoders {
	bool try_vaapi;
	struct slim_h264_decoder *dec[SLIM_VIDEO_STREAMS];
};

struct console_decoders *console_decoders_create(bool try_vaapi)
{
	struct console_decoders *cd = calloc(1, sizeof(*cd));
	if (cd) {
		cd->try_vaapi = try_vaapi;
	}
	return cd;
}

void console_decoders_destroy(struct console_decoders *cd)
{
	if (!cd) {
		return;
	}
	for (int i = 0; i < SLIM_VIDEO_STREAMS; i++) {
		slim_h264_decoder_destroy(cd->dec[i]);
	}
	free(cd);
}

static bool decode(void *data, uint8_t stream, const uint8_t *au, size_t size, bool start,
		struct slim_console_picture *out)
{
	struct console_decoders *cd = data;
	if (stream >= SLIM_VIDEO_STREAMS) {
		return false;
	}
	if (!cd->dec[stream]) {
		cd->dec[stream] = slim_h264_decoder_create(DECODER_THREADS, cd->try_vaapi);
		if (!cd->dec[stream]) {
			return false;
		}
	} else if (start) {
		slim_h264_decoder_reset(cd->dec[stream]);
	}
	struct slim_h264_picture pic;
	if (!slim_h264_decode(cd->dec[stream], au, size, &pic)) {
		return false;
	}
	*out = (struct slim_console_picture){
		.y = pic.y, .u = pic.u, .v = pic.v, .y_stride = pic.y_stride,
		.c_stride = pic.c_stride, .width = pic.width, .height = pic.height,
	};
	return true;
}

const struct slim_console_video_impl console_decoders_impl = {
	.decode = decode,
};

void console_decoders_caps(const struct console_decoders *cd, struct slim_wire_codec *codec)
{
	slim_h264_decoder_caps(cd->try_vaapi, codec);
}

void console_decoders_info(const struct console_decoders *cd, struct slim_h264_decoder_info *info)
{
	*info = (struct slim_h264_decoder_info){ .kind = "none" };
	for (int i = 0; i < SLIM_VIDEO_STREAMS; i++) {
		if (!cd->dec[i]) {
			continue;
		}
		struct slim_h264_decoder_info d;
		slim_h264_decoder_info(cd->dec[i], &d);
		info->kind = d.kind;
		info->pictures += d.pictures;
		info->errors += d.errors;
		info->decode_ms_p50 = d.decode_ms_p50 > info->decode_ms_p50 ?
			d.decode_ms_p50 : info->decode_ms_p50;
		info->decode_ms_p99 = d.decode_ms_p99 > info->decode_ms_p99 ?
			d.decode_ms_p99 : info->decode_ms_p99;
	}
}
