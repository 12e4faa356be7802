#include <stdlib.h>
#include "backend.h"

static struct slim_headless_backend *headless_from(struct slim_console_backend *b)
{
	return (struct slim_headless_backend *)b;
}

static bool headless_init(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	struct slim_headless_backend *h = headless_from(b);
	h->width = width;
	h->height = height;
	return true;
}

static void headless_present(struct slim_console_backend *b, const struct slim_fb *fb,
		const struct slim_rect *damage, size_t n)
{
	struct slim_headless_backend *h = headless_from(b);
	h->frames++;
	for (size_t i = 0; i < n; i++) {
		h->pixels_presented += (uint64_t)damage[i].w * damage[i].h;
	}
}

static bool headless_resize(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	return headless_init(b, width, height);
}

static void headless_destroy(struct slim_console_backend *b)
{
	free(headless_from(b));
}

static const struct slim_console_backend_impl headless_impl = {
	.name = "headless",
	.init = headless_init,
	.present = headless_present,
	.resize = headless_resize,
	.destroy = headless_destroy,
};

struct slim_console_backend *slim_headless_backend_create(void)
{
	struct slim_headless_backend *h = calloc(1, sizeof(*h));
	if (!h) {
		return NULL;
	}
	h->base.impl = &headless_impl;
	return &h->base;
}
