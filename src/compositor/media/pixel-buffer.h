/*
 * XRGB8888 pixels in memory as a wlr_buffer (pixel-buffer.c): what the shell
 * draws itself (title bars) and the session's renderer and desktop use.
 */
#ifndef SLIM_PIXEL_BUFFER_H
#define SLIM_PIXEL_BUFFER_H

#include <stdint.h>
#include <wlr/types/wlr_buffer.h>

struct slim_pixel_buffer {
	struct wlr_buffer base;
	uint32_t *px; /* width x height, rows packed */
};

/* Uninitialised pixels; NULL if memory cannot be had. wlr_buffer_drop() frees them. */
struct slim_pixel_buffer *slim_pixel_buffer_create(uint32_t width, uint32_t height);
/* A rectangle of one colour, cut to the buffer. */
void slim_pixel_buffer_fill(struct slim_pixel_buffer *p, int32_t x, int32_t y, int32_t w,
		int32_t h, uint32_t colour);
/*
 * `text` in slim-font.h's font at `scale`, its top left at x, y, up to
 * max_x (what does not fit whole is left out).
 */
void slim_pixel_buffer_text(struct slim_pixel_buffer *p, int32_t x, int32_t y, int32_t scale,
		int32_t max_x, uint32_t colour, const char *text);

#endif
