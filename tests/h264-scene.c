#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include "h264-scene.h"

bool h264_scene_init(struct h264_scene *s, uint16_t width, uint16_t height)
{
	size_t luma = (size_t)width * height;
	*s = (struct h264_scene){ .width = width, .height = height, .y = malloc(luma * 3 / 2) };
	s->u = s->y + luma;
	s->v = s->u + luma / 4;
	return s->y != NULL;
}

void h264_scene_finish(struct h264_scene *s)
{
	free(s->y);
	s->y = NULL;
}

/* A fixed pseudo-glyph: 6x10 cells of on/off bits chosen from the character's index. */
static bool glyph_on(unsigned ch, unsigned gx, unsigned gy)
{
	uint32_t h = (ch * 2654435761u) ^ (gy * 40503u) ^ (gx * 9176u);
	h ^= h >> 15;
	return gx < 5 && gy > 1 && gy < 9 && (h & 3) == 0;
}

void h264_scene_draw(struct h264_scene *s, unsigned n)
{
	unsigned w = s->width, h = s->height;
	for (unsigned r = 0; r < h; r++) {
		for (unsigned c = 0; c < w; c++) {
			/* gradient, two bars moving at 7 and 3 px a picture */
			unsigned v = 40 + (c + r) * 120 / (w + h);
			if ((c + 7 * n) % w < w / 16 || (r + 3 * n) % h < h / 20) {
				v = 200;
			}
			/* text in the middle half, a line scrolling by one row every other picture */
			if (r > h / 4 && r < 3 * h / 4 && c > w / 8 && c < 7 * w / 8) {
				unsigned tr = r + n / 2;
				unsigned ch = (c / 6) + (tr / 10) * 131;
				v = glyph_on(ch, c % 6, tr % 10) ? 16 : 235;
			}
			s->y[r * w + c] = (uint8_t)v;
		}
	}
	for (unsigned r = 0; r < h / 2; r++) {
		for (unsigned c = 0; c < w / 2; c++) {
			s->u[r * (w / 2) + c] = (uint8_t)(128 + (int)(c * 64 / (w / 2)) - 32);
			s->v[r * (w / 2) + c] = (uint8_t)(128 + (int)((r + n) % (h / 2) * 64 / (h / 2)) - 32);
		}
	}
}

double h264_scene_psnr_y(const struct h264_scene *s, const uint8_t *y, size_t stride)
{
	double sse = 0;
	for (unsigned r = 0; r < s->height; r++) {
		for (unsigned c = 0; c < s->width; c++) {
			double d = (double)s->y[r * s->width + c] - y[r * stride + c];
			sse += d * d;
		}
	}
	double mse = sse / ((double)s->width * s->height);
	return mse == 0 ? 99.0 : 10.0 * log10(255.0 * 255.0 / mse);
}

size_t h264_nal_types(const uint8_t *data, size_t size, uint8_t *types, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i + 3 < size && n < max; i++) {
		if (data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1) {
			types[n++] = data[i + 3] & 0x1f;
			i += 2;
		}
	}
	return n;
}
