/*
 * Buffers whose memory is kept for the next of their size (see the
 * header). At most POOL_BYTES are kept; a buffer of another size takes
 * memory from the kernel as before. The allocator itself lives until its
 * last buffer has gone, as wlroots may drop it first.
 */
#include <drm_fourcc.h>
#include <stdlib.h>
#include <wlr/render/allocator.h>
#include <wlr/render/drm_format_set.h>
#include <wlr/types/wlr_buffer.h>
#include <wlr/util/log.h>
#include "pixel-allocator.h"

/* Enough for two 1920x1080 outputs' two buffers each, or one 4K output's. */
#define POOL_BYTES (64u << 20)

struct block {
	struct wl_list link; /* slim_pixel_allocator.blocks */
	size_t size;
	void *px;
};

struct slim_pixel_allocator {
	struct wlr_allocator base;
	struct wl_list blocks; /* kept for the next buffer of their size, newest first */
	size_t kept;
	size_t live;     /* buffers not yet gone */
	bool destroyed;  /* wlroots let go of it: it goes with its last buffer */
};

struct pool_buffer {
	struct wlr_buffer base;
	struct slim_pixel_allocator *alloc;
	void *px;
	size_t size;
	uint32_t format;
};

static const struct wlr_buffer_impl buffer_impl;

static void free_blocks(struct slim_pixel_allocator *a)
{
	struct block *b, *tmp;
	wl_list_for_each_safe(b, tmp, &a->blocks, link) {
		wl_list_remove(&b->link);
		free(b->px);
		free(b);
	}
	a->kept = 0;
}

static void maybe_free(struct slim_pixel_allocator *a)
{
	if (a->destroyed && a->live == 0) {
		free_blocks(a);
		free(a);
	}
}

/* Its memory kept for the next buffer of its size, if there is room. */
static void buffer_destroy(struct wlr_buffer *wlr)
{
	struct pool_buffer *buf = wl_container_of(wlr, buf, base);
	struct slim_pixel_allocator *a = buf->alloc;
	struct block *b = NULL;
	if (!a->destroyed && a->kept + buf->size <= POOL_BYTES) {
		b = malloc(sizeof(*b));
	}
	if (b) {
		*b = (struct block){ .size = buf->size, .px = buf->px };
		wl_list_insert(&a->blocks, &b->link);
		a->kept += buf->size;
	} else {
		free(buf->px);
	}
	free(buf);
	a->live--;
	maybe_free(a);
}

static bool buffer_begin(struct wlr_buffer *wlr, uint32_t flags, void **data, uint32_t *format,
		size_t *stride)
{
	struct pool_buffer *buf = wl_container_of(wlr, buf, base);
	*data = buf->px;
	*format = buf->format;
	*stride = (size_t)wlr->width * 4;
	return true;
}

static void buffer_end(struct wlr_buffer *wlr)
{
}

static const struct wlr_buffer_impl buffer_impl = {
	.destroy = buffer_destroy,
	.begin_data_ptr_access = buffer_begin,
	.end_data_ptr_access = buffer_end,
};

/* A kept block of exactly `size` bytes, taken out of the pool; NULL if none. */
static void *take_block(struct slim_pixel_allocator *a, size_t size)
{
	struct block *b;
	wl_list_for_each(b, &a->blocks, link) {
		if (b->size == size) {
			void *px = b->px;
			wl_list_remove(&b->link);
			a->kept -= size;
			free(b);
			return px;
		}
	}
	return NULL;
}

static struct wlr_buffer *allocator_create_buffer(struct wlr_allocator *alloc, int width,
		int height, const struct wlr_drm_format *format)
{
	struct slim_pixel_allocator *a = wl_container_of(alloc, a, base);
	if (format->format != DRM_FORMAT_XRGB8888 && format->format != DRM_FORMAT_ARGB8888) {
		wlr_log(WLR_ERROR, "no %dx%d buffer of format 0x%08x: only XRGB and ARGB",
			width, height, format->format);
		return NULL;
	}
	if (width <= 0 || height <= 0) {
		return NULL;
	}
	size_t size = (size_t)width * (size_t)height * 4;
	struct pool_buffer *buf = calloc(1, sizeof(*buf));
	void *px = buf ? take_block(a, size) : NULL;
	px = px ? px : buf ? malloc(size) : NULL;
	if (!px) {
		free(buf);
		return NULL;
	}
	buf->alloc = a;
	buf->px = px;
	buf->size = size;
	buf->format = format->format;
	wlr_buffer_init(&buf->base, &buffer_impl, width, height);
	a->live++;
	return &buf->base;
}

static void allocator_destroy(struct wlr_allocator *alloc)
{
	struct slim_pixel_allocator *a = wl_container_of(alloc, a, base);
	free_blocks(a);
	a->destroyed = true;
	maybe_free(a);
}

static const struct wlr_allocator_interface allocator_impl = {
	.create_buffer = allocator_create_buffer,
	.destroy = allocator_destroy,
};

void slim_pixel_allocator_trim(struct wlr_allocator *alloc)
{
	if (alloc) {
		struct slim_pixel_allocator *a = wl_container_of(alloc, a, base);
		free_blocks(a);
	}
}

struct wlr_allocator *slim_pixel_allocator_create(void)
{
	struct slim_pixel_allocator *a = calloc(1, sizeof(*a));
	if (!a) {
		return NULL;
	}
	wl_list_init(&a->blocks);
	wlr_allocator_init(&a->base, &allocator_impl, WLR_BUFFER_CAP_DATA_PTR);
	return &a->base;
}
