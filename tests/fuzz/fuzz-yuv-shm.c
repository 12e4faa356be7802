/*
 * libFuzzer target: YUV wl_shm buffers as a client lays them out
 * (src/compositor/media/yuv-shm.c). The first 13 bytes are the client's claims:
 * a format (0 NV12, 1 I420, 2 YUYV, else any 32-bit code), width, height
 * (16 bits each, signed) and stride (32 bits, signed); the rest is the
 * buffer. Whatever slim_shm_yuv_layout accepts, and fits the bytes given,
 * converts to XRGB and to planes without reading past `size` bytes.
 */
#include <stdlib.h>
#include <string.h>
#include "fuzz-common.h"
#include "yuv-shm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 13) {
		return 0;
	}
	static const uint32_t formats[] = { SLIM_SHM_NV12, SLIM_SHM_I420, SLIM_SHM_YUYV };
	uint32_t format;
	memcpy(&format, data + 1, 4);
	if (data[0] < 3) {
		format = formats[data[0]];
	}
	int16_t w, h;
	int32_t stride;
	memcpy(&w, data + 5, 2);
	memcpy(&h, data + 7, 2);
	memcpy(&stride, data + 9, 4);
	const uint8_t *pixels = data + 13;
	size_t len = size - 13;
	struct slim_shm_yuv l;
	const char *why;
	if (!slim_shm_yuv_layout(&l, format, w, h, stride, &why)) {
		if (!why) {
			abort(); /* a refusal says why */
		}
		return 0;
	}
	if (l.size > len || (size_t)l.width * l.height > 1u << 20) {
		return 0; /* the pool check refuses what does not fit */
	}
	/* exactly l.size bytes, so that a read past them is caught */
	uint8_t *buf = malloc(l.size);
	memcpy(buf, pixels, l.size);
	uint32_t *xrgb = malloc((size_t)l.width * l.height * 4);
	uint8_t *planes = malloc(slim_shm_yuv_planes_size(&l));
	slim_shm_yuv_to_xrgb(&l, buf, 0, l.height, xrgb, l.width);
	slim_shm_yuv_to_planes(&l, buf, 0, l.height, planes);
	/* and in row bands, as damage comes */
	uint32_t y0 = (l.height / 3) & ~1u;
	slim_shm_yuv_to_xrgb(&l, buf, y0, l.height, xrgb, l.width);
	slim_shm_yuv_to_planes(&l, buf, y0, y0 + 2, planes);
	free(planes);
	free(xrgb);
	free(buf);
	return 0;
}
