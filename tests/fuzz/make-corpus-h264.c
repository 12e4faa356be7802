/*
 * Writes fuzz-h264's seed corpus: short streams of real access units from
 * the server's encoder (x264), in fuzz-h264.c's format, so that the fuzzer
 * starts inside the decoder's slice parsing rather than at its start codes.
 *
 *   make-corpus-h264 tests/fuzz/corpus/h264
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "h264-encoder.h"

static bool write_stream(const char *dir, const char *name, uint16_t width, uint16_t height,
		uint8_t max_profile, unsigned pictures)
{
	struct slim_h264_config config = { .width = width, .height = height, .fps = 30,
		.bitrate_bps = 300000, .device = SLIM_H264_SOFTWARE, .max_profile = max_profile };
	struct slim_h264_encoder *enc = slim_h264_encoder_create(&config);
	size_t luma = (size_t)width * height, chroma = luma / 4;
	uint8_t *planes = malloc(luma + 2 * chroma);
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = enc && planes ? fopen(path, "wb") : NULL;
	bool ok = f != NULL;
	for (unsigned n = 0; ok && n < pictures; n++) {
		/* a diagonal gradient with a square moving across it */
		for (size_t i = 0; i < luma; i++) {
			size_t x = i % width, y = i / width;
			bool square = x - n * 4 < 16 && y - n * 2 < 16;
			planes[i] = square ? 235 : (uint8_t)(16 + (x + y) % 200);
		}
		memset(planes + luma, 100 + n, chroma);
		memset(planes + luma + chroma, 150 - n, chroma);
		struct slim_h264_planes in = { .y = planes, .u = planes + luma,
			.v = planes + luma + chroma, .y_stride = width, .c_stride = width / 2 };
		struct slim_h264_au au;
		ok = slim_h264_encode(enc, &in, n * 33333u, n == pictures - 1, &au) &&
			au.size <= 0x7fff;
		uint8_t word[2] = { (uint8_t)au.size, (uint8_t)(au.size >> 8) };
		ok = ok && fwrite(word, 1, 2, f) == 2 && fwrite(au.data, 1, au.size, f) == au.size;
	}
	if (f && fclose(f) != 0) {
		ok = false;
	}
	slim_h264_encoder_destroy(enc);
	free(planes);
	if (!ok) {
		fprintf(stderr, "make-corpus-h264: %s not written\n", path);
	}
	return ok;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: make-corpus-h264 DIR\n");
		return 2;
	}
	/* high, main and constrained baseline; the last picture of each a forced key */
	bool ok = write_stream(argv[1], "high-96x64", 96, 64, 100, 4);
	ok &= write_stream(argv[1], "main-64x48", 64, 48, 77, 3);
	ok &= write_stream(argv[1], "baseline-48x32", 48, 32, 66, 3);
	return ok ? 0 : 1;
}
