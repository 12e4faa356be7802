/* XRGB8888 pixels in memory as a wlr_buffer, read through its data pointer. */
#include <drm_fourcc.h>
#include <stdlib.h>
#include "pixel-buffer.h"
#include "slim-font.h"

static void pixels_destroy(struct wlr_buffer *buffer)
{
	struct slim_pixel_buffer *p = wl_container_of(buffer, p, base);
	free(p->px);
	free(p);
}

static bool pixels_begin(struct wlr_buffer *buffer, uint32_t flags, void **data,
		uint32_t *format, size_t *stride)
{
	struct slim_pixel_buffer *p = wl_container_of(buffer, p, base);
	*data = p->px;
	*format = DRM_FORMAT_XRGB8888;
	*stride = (size_t)buffer->width * 4;
	return true;
}

static void pixels_end(struct wlr_buffer *buffer)
{
}

static const struct wlr_buffer_impl pixels_impl = {
	.destroy = pixels_destroy,
	.begin_data_ptr_access = pixels_begin,
	.end_data_ptr_access = pixels_end,
};

struct slim_pixel_buffer *slim_pixel_buffer_create(uint32_t width, uint32_t height)
{
	struct slim_pixel_buffer *p = calloc(1, sizeof(*p));
	uint32_t *px = malloc((size_t)width * height * 4);
	if (!p || !px) {
		free(p);
		free(px);
		return NULL;
	}
	p->px = px;
	wlr_buffer_init(&p->base, &pixels_impl, (int)width, (int)height);
	return p;
}

void slim_pixel_buffer_fill(struct slim_pixel_buffer *p, int32_t x, int32_t y, int32_t w,
		int32_t h, uint32_t colour)
{
	int32_t width = p->base.width, height = p->base.height;
	for (int32_t row = y < 0 ? 0 : y; row < y + h && row < height; row++) {
		for (int32_t col = x < 0 ? 0 : x; col < x + w && col < width; col++) {
			p->px[(size_t)row * width + col] = colour;
		}
	}
}

void slim_pixel_buffer_text(struct slim_pixel_buffer *p, int32_t x, int32_t y, int32_t scale,
		int32_t max_x, uint32_t colour, const char *text)
{
	for (const char *c = text; *c && x + SLIM_FONT_W * scale <= max_x; c++) {
		const char (*rows)[SLIM_FONT_W + 1] = slim_font_glyph(*c);
		for (int32_t gy = 0; gy < SLIM_FONT_H; gy++) {
			for (int32_t gx = 0; gx < SLIM_FONT_W; gx++) {
				if (rows[gy][gx] == '#') {
					slim_pixel_buffer_fill(p, x + gx * scale, y + gy * scale, scale,
						scale, colour);
				}
			}
		}
		x += SLIM_FONT_CELL_W * scale;
	}
}
