/* XRGB8888 pixels in memory as a wlr_buffer, read through its data pointer. */
#include <drm_fourcc.h>
#include <stdlib.h>
#include "pixel-buffer.h"

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
