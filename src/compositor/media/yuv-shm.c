#include "yuv-shm.h"
#include "slim-pixels.h"

bool slim_shm_yuv_format(uint32_t format)
{
	return format == SLIM_SHM_NV12 || format == SLIM_SHM_I420 || format == SLIM_SHM_YUYV;
}

static size_t half(size_t n)
{
	return (n + 1) / 2;
}

bool slim_shm_yuv_layout(struct slim_shm_yuv *l, uint32_t format, int32_t width,
		int32_t height, int32_t stride, const char **why)
{
	*why = NULL;
	if (!slim_shm_yuv_format(format)) {
		*why = "not a YUV format";
		return false;
	}
	if (width <= 0 || height <= 0 || stride <= 0) {
		*why = "sizes and stride must be positive";
		return false;
	}
	size_t w = (size_t)width, h = (size_t)height, s = (size_t)stride;
	/* 32-bit sizes: nothing below overflows a 64-bit size_t */
	/* YUYV: 4 bytes a pixel pair; NV12: its chroma rows hold a U, V pair for each */
	size_t min_stride = format == SLIM_SHM_YUYV ? 4 * half(w) :
		format == SLIM_SHM_NV12 ? 2 * half(w) : w;
	if (s < min_stride) {
		*why = "stride shorter than a row";
		return false;
	}
	size_t size = s * h;
	if (format == SLIM_SHM_NV12) {
		size += s * half(h);
	} else if (format == SLIM_SHM_I420) {
		size += 2 * half(s) * half(h);
	}
	if (size > INT32_MAX) {
		*why = "buffer larger than a pool can be";
		return false;
	}
	*l = (struct slim_shm_yuv){ format, (uint32_t)w, (uint32_t)h, s, size };
	return true;
}

/* The chroma of pixel pair x / 2 of row y. */
static void chroma(const struct slim_shm_yuv *l, const uint8_t *data, uint32_t x, uint32_t y,
		int *u, int *v)
{
	size_t s = l->stride, cy = y / 2, cx = x / 2;
	const uint8_t *c = data + s * l->height;
	if (l->format == SLIM_SHM_NV12) {
		*u = c[cy * s + 2 * cx];
		*v = c[cy * s + 2 * cx + 1];
	} else if (l->format == SLIM_SHM_I420) {
		size_t cs = half(s);
		*u = c[cy * cs + cx];
		*v = c[cs * half(l->height) + cy * cs + cx];
	} else {
		const uint8_t *p = data + (size_t)y * s + 4 * cx;
		*u = p[1];
		*v = p[3];
	}
}

static int luma(const struct slim_shm_yuv *l, const uint8_t *data, uint32_t x, uint32_t y)
{
	if (l->format == SLIM_SHM_YUYV) {
		return data[(size_t)y * l->stride + 2 * x];
	}
	return data[(size_t)y * l->stride + x];
}

void slim_shm_yuv_to_xrgb(const struct slim_shm_yuv *l, const uint8_t *data,
		uint32_t y0, uint32_t y1, uint32_t *out, size_t out_stride)
{
	for (uint32_t y = y0; y < y1 && y < l->height; y++) {
		uint32_t *row = out + (size_t)y * out_stride;
		for (uint32_t x = 0; x < l->width; x += 2) {
			int u, v;
			chroma(l, data, x, y, &u, &v);
			row[x] = slim_yuv_to_xrgb(luma(l, data, x, y), u, v);
			if (x + 1 < l->width) {
				row[x + 1] = slim_yuv_to_xrgb(luma(l, data, x + 1, y), u, v);
			}
		}
	}
}

size_t slim_shm_yuv_planes_size(const struct slim_shm_yuv *l)
{
	return (size_t)l->width * l->height + 2 * half(l->width) * half(l->height);
}

void slim_shm_yuv_to_planes(const struct slim_shm_yuv *l, const uint8_t *data,
		uint32_t y0, uint32_t y1, uint8_t *planes)
{
	size_t cw = half(l->width), ch = half(l->height);
	uint8_t *yp = planes, *up = planes + (size_t)l->width * l->height, *vp = up + cw * ch;
	y1 = y1 < l->height ? y1 : l->height;
	for (uint32_t y = y0; y < y1; y++) {
		for (uint32_t x = 0; x < l->width; x++) {
			yp[(size_t)y * l->width + x] = (uint8_t)luma(l, data, x, y);
		}
	}
	for (uint32_t cy = y0 / 2; cy < half(y1) && cy < ch; cy++) {
		for (uint32_t cx = 0; cx < cw; cx++) {
			int u, v;
			chroma(l, data, 2 * cx, 2 * cy, &u, &v);
			if (l->format == SLIM_SHM_YUYV && 2 * cy + 1 < l->height) {
				int u2, v2;
				chroma(l, data, 2 * cx, 2 * cy + 1, &u2, &v2);
				u = (u + u2 + 1) / 2;
				v = (v + v2 + 1) / 2;
			}
			up[cy * cw + cx] = (uint8_t)u;
			vp[cy * cw + cx] = (uint8_t)v;
		}
	}
}
