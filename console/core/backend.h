/*
 * Where a console's pixels go. The core keeps the shadow framebuffer in
 * RAM and hands each finished frame's damaged rectangles to a backend,
 * which copies them to wherever the user looks (a KMS scanout buffer, a
 * window, or nowhere at all for tests). A backend never reads pixels back
 * from its own buffers: the shadow framebuffer is the only copy it needs.
 */
#ifndef SLIM_CONSOLE_BACKEND_H
#define SLIM_CONSOLE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-pixels.h"

struct slim_console_backend;

struct slim_console_cursor {
	const uint32_t *pixels; /* ARGB8888 premultiplied, w * h */
	uint32_t w, h, hot_x, hot_y;
	int32_t x, y; /* hotspot on the screen */
	bool visible;
};

struct slim_console_backend_impl {
	const char *name;
	bool (*init)(struct slim_console_backend *backend, uint32_t width, uint32_t height);
	void (*present)(struct slim_console_backend *backend, const struct slim_fb *fb,
		const struct slim_rect *damage, size_t n_damage);
	bool (*resize)(struct slim_console_backend *backend, uint32_t width, uint32_t height);
	void (*destroy)(struct slim_console_backend *backend);
	/* optional: the pointer, drawn by the backend over the picture */
	void (*cursor)(struct slim_console_backend *backend,
		const struct slim_console_cursor *cursor);
	/*
	 * optional: a descriptor the program's poll loop watches for the
	 * backend (-1: none now), and what to do when it is readable (a DRM
	 * page-flip event, for one).
	 */
	int (*fd)(struct slim_console_backend *backend);
	void (*dispatch)(struct slim_console_backend *backend);
};

struct slim_console_backend {
	const struct slim_console_backend_impl *impl;
};

/*
 * Where a backend with input devices of its own (a window) sends what the
 * user does, so that it needs to know nothing of the network: the program
 * stamps nothing, checks the association and sends INPUT.
 */
struct slim_console_input_sink {
	/* events already stamped; pointer events closed by a FRAME */
	void (*send)(void *data, const struct slim_wire_input *ev, size_t n);
	/* optional: the user asked the console to end (closed its window) */
	void (*closed)(void *data);
	void *data;
};

/* Keeps the picture in RAM only; counts what it was asked to present. */
struct slim_headless_backend {
	struct slim_console_backend base;
	uint32_t width, height;
	uint64_t frames, pixels_presented;
};

struct slim_console_backend *slim_headless_backend_create(void);

/* Writes the framebuffer as an 8-bit RGB PNG. */
bool slim_png_write(const char *path, const struct slim_fb *fb);

#endif
