#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include "backend.h"

bool slim_png_write(const char *path, const struct slim_fb *fb)
{
	FILE *f = fopen(path, "wb");
	if (!f) {
		return false;
	}
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png ? png_create_info_struct(png) : NULL;
	uint8_t *row = malloc((size_t)fb->width * 3);
	bool ok = false;
	if (!png || !info || !row || setjmp(png_jmpbuf(png))) {
		goto out;
	}
	png_init_io(png, f);
	png_set_IHDR(png, info, fb->width, fb->height, 8, PNG_COLOR_TYPE_RGB,
		PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_set_compression_level(png, 1);
	png_write_info(png, info);
	for (uint32_t y = 0; y < fb->height; y++) {
		const uint32_t *src = slim_fb_row(fb, 0, y);
		for (uint32_t x = 0; x < fb->width; x++) {
			row[3 * x] = (uint8_t)(src[x] >> 16);
			row[3 * x + 1] = (uint8_t)(src[x] >> 8);
			row[3 * x + 2] = (uint8_t)src[x];
		}
		png_write_row(png, row);
	}
	png_write_end(png, NULL);
	ok = true;
out:
	png_destroy_write_struct(&png, &info);
	free(row);
	return fclose(f) == 0 && ok;
}
