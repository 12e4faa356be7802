/*
 * The server's H.264 encoder for one picture stream: VA-API on a render
 * node that offers H.264 encoding, else x264 in software, both through
 * libavcodec. One picture in, one access unit out (no B pictures, no
 * look-ahead), Annex B, with SPS and PPS before every key picture.
 *
 * Rate control is a bit rate with a VBV buffer of about two pictures, so
 * that no picture (a key picture included) bursts far past the link's
 * share; slim_h264_encoder_set_bitrate follows the link as it changes.
 * The software encoder's preset is chosen from the measured encode time
 * against the picture interval.
 */
#ifndef SLIM_H264_ENCODER_H
#define SLIM_H264_ENCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum slim_h264_device {
	SLIM_H264_AUTO,     /* VA-API if a render node encodes H.264, else software */
	SLIM_H264_SOFTWARE, /* x264 */
	SLIM_H264_VAAPI,    /* VA-API only: creating fails without it */
};

struct slim_h264_config {
	uint16_t width, height; /* even, at least 16 */
	uint32_t fps;           /* the pictures' expected rate, 1..240 */
	uint64_t bitrate_bps;
	enum slim_h264_device device;
	const char *render_node; /* NULL: the first that encodes H.264 */
	uint8_t max_profile;     /* the console's (profile_idc); 0: high */
	/* software only: this x264 preset, kept; NULL: chosen from the encode time */
	const char *x264_preset;
	/*
	 * software, chosen: the preset to start from (the one an encoder before
	 * it settled on), NULL: by the picture's size
	 */
	const char *x264_start;
};

/* A picture in: 4:2:0, 8 bits, width x height samples (chroma halved, rounded up). */
struct slim_h264_planes {
	const uint8_t *y, *u, *v;
	size_t y_stride, c_stride;
};

/* An access unit out, valid until the next call on the encoder. */
struct slim_h264_au {
	const uint8_t *data;
	size_t size;
	bool key;
};

struct slim_h264_encoder_info {
	const char *kind;   /* "vaapi" or "software" */
	const char *device; /* the render node, or the x264 preset */
	const char *why;    /* why this one: "no render node encodes H.264", ... */
	uint64_t bitrate_bps;
	uint64_t pictures, bytes;
	double encode_ms_p50, encode_ms_p99; /* over the last pictures */
};

struct slim_h264_encoder;

struct slim_h264_encoder *slim_h264_encoder_create(const struct slim_h264_config *config);
void slim_h264_encoder_destroy(struct slim_h264_encoder *enc);
/*
 * Encodes one picture taken at pts_us. `key`: this one must decode alone
 * (a new console, or one that lost what the stream needs). False on an
 * encoder error (logged at a limited rate); out is then unset.
 */
bool slim_h264_encode(struct slim_h264_encoder *enc, const struct slim_h264_planes *in,
		uint64_t pts_us, bool key, struct slim_h264_au *out);
void slim_h264_encoder_set_bitrate(struct slim_h264_encoder *enc, uint64_t bitrate_bps);
void slim_h264_encoder_info(const struct slim_h264_encoder *enc,
		struct slim_h264_encoder_info *info);

/*
 * The render node that encodes H.264 (VA-API, a VAEntrypointEncSlice or
 * EncSliceLP of an H.264 profile), into `node`; false and `why` when none.
 */
bool slim_h264_vaapi_find(char *node, size_t node_len, const char **why);

#endif
