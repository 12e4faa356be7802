/*
 * The pixman renderer, with two things wlroots 0.15's lacks:
 *
 * - The source rectangle's offset. Its render_subtexture_with_matrix
 *   scales by the source box's size but starts at the texture's corner,
 *   so a wp_viewporter crop showed the wrong part of the buffer. The
 *   offset is folded into the matrix before the call.
 * - YUV wl_shm buffers (NV12, I420, YUYV). Such a buffer's texture is an
 *   XRGB picture of it for the server's own framebuffer (what grim reads),
 *   converted as the console converts CSCS, plus a copy of its planes as
 *   4:2:0, which video.c sends as they are when the client shows video.
 *
 * Everything else goes to the pixman renderer unchanged. Its functions are
 * called through its impl: the public wrappers would check its own
 * `rendering` flag, which is ours to keep.
 */
#include <drm_fourcc.h>
#include <stdlib.h>
#include <string.h>
#include <wlr/render/interface.h>
#include <wlr/render/pixman.h>
#include <wlr/types/wlr_buffer.h>
#include <wlr/types/wlr_matrix.h>
#include <wlr/util/box.h>
#include <wlr/util/log.h>
#include "pixel-buffer.h"
#include "renderer.h"
#include "yuv-shm.h"

struct slim_renderer {
	struct wlr_renderer base;
	struct wlr_renderer *inner;
	uint32_t *formats;
	size_t n_formats;
};

struct slim_yuv_texture {
	struct wlr_texture base;
	struct slim_renderer *renderer;
	struct wlr_texture *inner;
	struct slim_pixel_buffer *pixels; /* XRGB, for the pixman texture that draws it */
	struct slim_shm_yuv layout;
	uint8_t *planes; /* 4:2:0, as slim_shm_yuv_to_planes writes them */
};

static const struct wlr_renderer_impl renderer_impl;
static const struct wlr_texture_impl yuv_texture_impl;

static struct slim_renderer *renderer_from(struct wlr_renderer *r)
{
	return (struct slim_renderer *)r;
}

static struct wlr_renderer *inner_of(struct wlr_renderer *r)
{
	return renderer_from(r)->inner;
}

/* --- YUV textures */

static struct slim_yuv_texture *yuv_texture_from(struct wlr_texture *t)
{
	return t && t->impl == &yuv_texture_impl ? (struct slim_yuv_texture *)t : NULL;
}

static void yuv_convert(struct slim_yuv_texture *t, const uint8_t *data, uint32_t y0,
		uint32_t y1)
{
	y0 &= ~1u;
	slim_shm_yuv_to_xrgb(&t->layout, data, y0, y1, t->pixels->px, t->layout.width);
	slim_shm_yuv_to_planes(&t->layout, data, y0, y1, t->planes);
}

static bool yuv_is_opaque(struct wlr_texture *texture)
{
	return true;
}

/* Damage of the next buffer of the same size and format: its rows again. */
static bool yuv_write_pixels(struct wlr_texture *texture, uint32_t stride, uint32_t width,
		uint32_t height, uint32_t src_x, uint32_t src_y, uint32_t dst_x, uint32_t dst_y,
		const void *data)
{
	struct slim_yuv_texture *t = yuv_texture_from(texture);
	if (stride != t->layout.stride || src_y != dst_y || src_y + height > t->layout.height) {
		return false; /* a buffer laid out otherwise gets a texture of its own */
	}
	yuv_convert(t, data, src_y, src_y + height);
	return true;
}

static void yuv_destroy(struct wlr_texture *texture)
{
	struct slim_yuv_texture *t = yuv_texture_from(texture);
	wlr_texture_destroy(t->inner);
	if (t->pixels) {
		wlr_buffer_drop(&t->pixels->base);
	}
	free(t->planes);
	free(t);
}

static const struct wlr_texture_impl yuv_texture_impl = {
	.is_opaque = yuv_is_opaque,
	.write_pixels = yuv_write_pixels,
	.destroy = yuv_destroy,
};

static struct wlr_texture *yuv_texture_create(struct slim_renderer *r, const uint8_t *data,
		const struct slim_shm_yuv *layout)
{
	struct slim_yuv_texture *t = calloc(1, sizeof(*t));
	if (!t) {
		return NULL;
	}
	wlr_texture_init(&t->base, &yuv_texture_impl, layout->width, layout->height);
	t->renderer = r;
	t->layout = *layout;
	t->pixels = slim_pixel_buffer_create(layout->width, layout->height);
	t->planes = malloc(slim_shm_yuv_planes_size(layout));
	if (!t->pixels || !t->planes) {
		yuv_destroy(&t->base);
		return NULL;
	}
	yuv_convert(t, data, 0, layout->height);
	t->inner = r->inner->impl->texture_from_buffer(r->inner, &t->pixels->base);
	if (!t->inner) {
		yuv_destroy(&t->base);
		return NULL;
	}
	return &t->base;
}

bool renderer_texture_yuv(struct wlr_texture *texture, struct slim_yuv_image *img)
{
	struct slim_yuv_texture *t = yuv_texture_from(texture);
	if (!t) {
		return false;
	}
	size_t cw = (t->layout.width + 1u) / 2, ch = (t->layout.height + 1u) / 2;
	*img = (struct slim_yuv_image){
		.y = t->planes, .u = t->planes + (size_t)t->layout.width * t->layout.height,
		.y_stride = t->layout.width, .c_stride = cw,
		.width = (uint16_t)t->layout.width, .height = (uint16_t)t->layout.height,
		.depth = SLIM_CSCS_DEPTH8,
	};
	img->v = img->u + cw * ch;
	return true;
}

/* --- the renderer */

/*
 * The pixman renderer's texture; one of a single pixel repeats, so that
 * it draws as one colour at any size (background.c's, a client's scaled
 * through wp_viewporter) rather than fading to nothing past its centre.
 */
static struct wlr_texture *inner_texture(struct slim_renderer *r, struct wlr_buffer *buffer)
{
	struct wlr_texture *texture = r->inner->impl->texture_from_buffer(r->inner, buffer);
	if (texture && buffer->width == 1 && buffer->height == 1 &&
			wlr_texture_is_pixman(texture)) {
		pixman_image_set_repeat(wlr_pixman_texture_get_image(texture), PIXMAN_REPEAT_NORMAL);
	}
	return texture;
}

static struct wlr_texture *texture_from_buffer(struct wlr_renderer *wlr, struct wlr_buffer *buffer)
{
	struct slim_renderer *r = renderer_from(wlr);
	void *data;
	uint32_t format;
	size_t stride;
	if (!wlr_buffer_begin_data_ptr_access(buffer, WLR_BUFFER_DATA_PTR_ACCESS_READ, &data,
			&format, &stride)) {
		return inner_texture(r, buffer);
	}
	struct wlr_texture *texture = NULL;
	if (slim_shm_yuv_format(format)) {
		struct slim_shm_yuv layout;
		const char *why;
		/* protocol-check.c refused such buffers already; this is the last line */
		if (slim_shm_yuv_layout(&layout, format, buffer->width, buffer->height,
				(int32_t)stride, &why)) {
			texture = yuv_texture_create(r, data, &layout);
		} else {
			wlr_log(WLR_ERROR, "YUV buffer %dx%d: %s", buffer->width, buffer->height, why);
		}
		wlr_buffer_end_data_ptr_access(buffer);
		return texture;
	}
	wlr_buffer_end_data_ptr_access(buffer);
	return inner_texture(r, buffer);
}

static bool render_subtexture_with_matrix(struct wlr_renderer *wlr, struct wlr_texture *texture,
		const struct wlr_fbox *box, const float matrix[static 9], float alpha)
{
	struct slim_yuv_texture *yuv = yuv_texture_from(texture);
	struct wlr_renderer *inner = inner_of(wlr);
	float m[9];
	memcpy(m, matrix, sizeof(m));
	if (box->x != 0 || box->y != 0) {
		/*
		 * pixman maps the texture through matrix * scale(1 / w, 1 / h)
		 * from its corner; start it at (x, y) instead.
		 */
		wlr_matrix_scale(m, 1.0f / (float)box->width, 1.0f / (float)box->height);
		wlr_matrix_translate(m, (float)-box->x, (float)-box->y);
		wlr_matrix_scale(m, (float)box->width, (float)box->height);
	}
	return inner->impl->render_subtexture_with_matrix(inner, yuv ? yuv->inner : texture,
		box, m, alpha);
}

static bool bind_buffer(struct wlr_renderer *wlr, struct wlr_buffer *buffer)
{
	return inner_of(wlr)->impl->bind_buffer(inner_of(wlr), buffer);
}

static void begin(struct wlr_renderer *wlr, uint32_t width, uint32_t height)
{
	inner_of(wlr)->impl->begin(inner_of(wlr), width, height);
}

static void end(struct wlr_renderer *wlr)
{
	if (inner_of(wlr)->impl->end) {
		inner_of(wlr)->impl->end(inner_of(wlr));
	}
}

static void clear(struct wlr_renderer *wlr, const float color[static 4])
{
	inner_of(wlr)->impl->clear(inner_of(wlr), color);
}

static void scissor(struct wlr_renderer *wlr, struct wlr_box *box)
{
	inner_of(wlr)->impl->scissor(inner_of(wlr), box);
}

static void render_quad_with_matrix(struct wlr_renderer *wlr, const float color[static 4],
		const float matrix[static 9])
{
	inner_of(wlr)->impl->render_quad_with_matrix(inner_of(wlr), color, matrix);
}

static const uint32_t *get_shm_texture_formats(struct wlr_renderer *wlr, size_t *len)
{
	*len = renderer_from(wlr)->n_formats;
	return renderer_from(wlr)->formats;
}

static const struct wlr_drm_format_set *get_render_formats(struct wlr_renderer *wlr)
{
	return inner_of(wlr)->impl->get_render_formats(inner_of(wlr));
}

static uint32_t preferred_read_format(struct wlr_renderer *wlr)
{
	return inner_of(wlr)->impl->preferred_read_format(inner_of(wlr));
}

static bool read_pixels(struct wlr_renderer *wlr, uint32_t fmt, uint32_t *flags,
		uint32_t stride, uint32_t width, uint32_t height, uint32_t src_x, uint32_t src_y,
		uint32_t dst_x, uint32_t dst_y, void *data)
{
	return inner_of(wlr)->impl->read_pixels(inner_of(wlr), fmt, flags, stride, width, height,
		src_x, src_y, dst_x, dst_y, data);
}

static uint32_t get_render_buffer_caps(struct wlr_renderer *wlr)
{
	return inner_of(wlr)->impl->get_render_buffer_caps(inner_of(wlr));
}

static void destroy(struct wlr_renderer *wlr)
{
	struct slim_renderer *r = renderer_from(wlr);
	wlr_renderer_destroy(r->inner);
	free(r->formats);
	free(r);
}

static const struct wlr_renderer_impl renderer_impl = {
	.bind_buffer = bind_buffer,
	.begin = begin,
	.end = end,
	.clear = clear,
	.scissor = scissor,
	.render_subtexture_with_matrix = render_subtexture_with_matrix,
	.render_quad_with_matrix = render_quad_with_matrix,
	.get_shm_texture_formats = get_shm_texture_formats,
	.get_render_formats = get_render_formats,
	.preferred_read_format = preferred_read_format,
	.read_pixels = read_pixels,
	.destroy = destroy,
	.get_render_buffer_caps = get_render_buffer_caps,
	.texture_from_buffer = texture_from_buffer,
};

struct wlr_renderer *renderer_create(void)
{
	static const uint32_t yuv[] = { SLIM_SHM_NV12, SLIM_SHM_I420, SLIM_SHM_YUYV };
	struct slim_renderer *r = calloc(1, sizeof(*r));
	if (!r) {
		return NULL;
	}
	r->inner = wlr_pixman_renderer_create();
	size_t n = 0;
	const uint32_t *formats = r->inner ?
		r->inner->impl->get_shm_texture_formats(r->inner, &n) : NULL;
	r->formats = calloc(n + 3, sizeof(*r->formats));
	if (!r->inner || !r->formats) {
		if (r->inner) {
			wlr_renderer_destroy(r->inner);
		}
		free(r->formats);
		free(r);
		return NULL;
	}
	memcpy(r->formats, formats, n * sizeof(*formats));
	memcpy(r->formats + n, yuv, sizeof(yuv));
	r->n_formats = n + 3;
	wlr_renderer_init(&r->base, &renderer_impl);
	return &r->base;
}
