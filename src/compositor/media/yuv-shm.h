/*
 * YUV pixels from wl_shm clients (no wlroots): NV12, I420 (DRM's YUV420)
 * and YUYV, laid out in their buffer as GStreamer and the DRM formats do:
 * the planes one after the other from the buffer's start, the chroma
 * planes' rows ceil(height / 2) of them, I420's chroma rows ceil(stride / 2)
 * bytes long, NV12's as long as the luma's.
 *
 * slim_shm_yuv_layout is the one place a client's claims are checked: a
 * buffer it accepts can be read whole within `size` bytes.
 */
#ifndef SLIM_YUV_SHM_H
#define SLIM_YUV_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* DRM fourccs, as wl_shm uses them for these formats */
#define SLIM_SHM_NV12 0x3231564eu /* 'NV12' */
#define SLIM_SHM_I420 0x32315559u /* 'YU12', DRM_FORMAT_YUV420 */
#define SLIM_SHM_YUYV 0x56595559u /* 'YUYV' */

struct slim_shm_yuv {
	uint32_t format, width, height;
	size_t stride;  /* of the first plane, bytes */
	size_t size;    /* bytes the whole buffer needs */
};

/* Is `format` one of ours? */
bool slim_shm_yuv_format(uint32_t format);

/*
 * Checks a buffer's format, size and stride and says how many bytes it
 * needs; false (and `why`) if the stride is too short or the sizes overflow.
 */
bool slim_shm_yuv_layout(struct slim_shm_yuv *l, uint32_t format, int32_t width,
		int32_t height, int32_t stride, const char **why);

/*
 * Rows [y0, y1) of the picture as XRGB8888 (BT.601 limited range, as CSCS),
 * into `out` (row y at out + y * out_stride pixels). y0 and y1 even, or the
 * picture's end.
 */
void slim_shm_yuv_to_xrgb(const struct slim_shm_yuv *l, const uint8_t *data,
		uint32_t y0, uint32_t y1, uint32_t *out, size_t out_stride);

/*
 * Rows [y0, y1) (y0 even) of the picture into three planes of 4:2:0 (Y:
 * width x height, U and V: ceil(width / 2) x ceil(height / 2), packed
 * rows) in `planes`, which holds slim_shm_yuv_planes_size bytes. YUYV's
 * chroma is averaged over row pairs.
 */
size_t slim_shm_yuv_planes_size(const struct slim_shm_yuv *l);
void slim_shm_yuv_to_planes(const struct slim_shm_yuv *l, const uint8_t *data,
		uint32_t y0, uint32_t y1, uint8_t *planes);

#endif
