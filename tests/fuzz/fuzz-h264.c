/*
 * libFuzzer target: compressed pictures as a network delivers them, into
 * the console's H.264 decoder (software, one thread). The input is a list
 * of access units, each after a 16-bit little-endian word: its low 15 bits
 * the unit's length (cut to what remains), its top bit a new stream
 * (SLIM_VIDEO_START) before it. Whatever comes, nothing crashes or leaks,
 * and a picture that comes out is within SLIM_MAX_DIM with every sample
 * readable.
 */
#include <stdlib.h>
#include <string.h>
#include "fuzz-common.h"
#include "h264-decoder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads every sample, so that a plane shorter than it claims is ASan's to catch. */
static void touch(const struct slim_h264_picture *pic)
{
	if (pic->width == 0 || pic->height == 0 || pic->width > SLIM_MAX_DIM ||
			pic->height > SLIM_MAX_DIM || pic->y_stride < pic->width ||
			pic->c_stride < (size_t)(pic->width + 1) / 2) {
		abort();
	}
	volatile uint8_t sum = 0;
	for (size_t r = 0; r < pic->height; r++) {
		sum += pic->y[r * pic->y_stride + pic->width - 1];
	}
	for (size_t r = 0; r < (size_t)(pic->height + 1) / 2; r++) {
		size_t last = r * pic->c_stride + (size_t)(pic->width + 1) / 2 - 1;
		sum += pic->u[last] + pic->v[last];
	}
	(void)sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool quiet;
	if (!quiet) {
		slim_log_init(SLIM_LOG_ERROR, fuzz_quiet_log);
		quiet = true;
	}
	struct slim_h264_decoder *dec = slim_h264_decoder_create(1, false);
	if (!dec) {
		abort();
	}
	size_t at = 0;
	while (size - at >= 2) {
		uint16_t word = (uint16_t)(data[at] | data[at + 1] << 8);
		at += 2;
		size_t len = word & 0x7fff;
		len = len < size - at ? len : size - at;
		if (word & 0x8000) {
			slim_h264_decoder_reset(dec);
		}
		/* an exact copy: reading past its end is ASan's to catch */
		uint8_t *au = malloc(len ? len : 1);
		memcpy(au, data + at, len);
		struct slim_h264_picture pic;
		if (slim_h264_decode(dec, au, len, &pic)) {
			touch(&pic);
		}
		free(au);
		at += len;
	}
	slim_h264_decoder_destroy(dec);
	return 0;
}
