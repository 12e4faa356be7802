#include <string.h>
#include "slim-font.h"
#include "status-screen.h"

/* Keeps text off the screen's edges. */
#define MARGIN_CELLS 2

/* One scale x scale block of ink per set bit, clipped to the screen. */
static void draw_char(const struct slim_fb *fb, uint32_t x0, uint32_t y0, uint32_t scale, char c)
{
	const char (*rows)[SLIM_FONT_W + 1] = slim_font_glyph(c);
	for (uint32_t gy = 0; gy < SLIM_FONT_H; gy++) {
		for (uint32_t gx = 0; gx < SLIM_FONT_W; gx++) {
			uint32_t x = x0 + gx * scale, y = y0 + gy * scale;
			if (rows[gy][gx] != '#' || x >= fb->width || y >= fb->height) {
				continue;
			}
			uint32_t w = fb->width - x < scale ? fb->width - x : scale;
			uint32_t h = fb->height - y < scale ? fb->height - y : scale;
			/* as every picture's pixels are: opaque */
			slim_fb_fill(fb, (struct slim_rect){ (uint16_t)x, (uint16_t)y, (uint16_t)w,
				(uint16_t)h }, SLIM_STATUS_FOREGROUND);
		}
	}
}

void slim_status_screen_draw(const struct slim_fb *fb, const char *const *lines, size_t n_lines)
{
	slim_fb_fill(fb, (struct slim_rect){ 0, 0, (uint16_t)fb->width, (uint16_t)fb->height },
		SLIM_STATUS_BACKGROUND);
	size_t longest = 0;
	for (size_t i = 0; i < n_lines; i++) {
		size_t len = strlen(lines[i]);
		longest = len > longest ? len : longest;
	}
	if (longest == 0) {
		return;
	}
	/* The largest scale at which every line fits, margins included; at least 1. */
	uint32_t scale = SLIM_STATUS_MAX_SCALE;
	while (scale > 1 && ((longest + 2 * MARGIN_CELLS) * SLIM_FONT_CELL_W * scale > fb->width ||
			n_lines * SLIM_FONT_CELL_H * scale > fb->height)) {
		scale--;
	}
	uint32_t cell_w = SLIM_FONT_CELL_W * scale, cell_h = SLIM_FONT_CELL_H * scale;
	/* A line is as tall as its glyphs: the gap below the last one is not centred. */
	uint32_t text_h = (uint32_t)n_lines * cell_h - (SLIM_FONT_CELL_H - SLIM_FONT_H) * scale;
	uint32_t y = fb->height > text_h ? (fb->height - text_h) / 2 : 0;
	for (size_t i = 0; i < n_lines && y < fb->height; i++, y += cell_h) {
		size_t len = strlen(lines[i]);
		size_t fit = fb->width / cell_w;
		len = len < fit ? len : fit;
		if (len == 0) {
			continue;
		}
		uint32_t line_w = (uint32_t)len * cell_w - (SLIM_FONT_CELL_W - SLIM_FONT_W) * scale;
		uint32_t x = fb->width > line_w ? (fb->width - line_w) / 2 : 0;
		for (size_t j = 0; j < len; j++) {
			draw_char(fb, x + (uint32_t)j * cell_w, y, scale, lines[i][j]);
		}
	}
}

void slim_status_screen_show(const struct slim_fb *fb, struct slim_console_backend *backend,
		const char *const *lines, size_t n_lines)
{
	slim_status_screen_draw(fb, lines, n_lines);
	if (backend) {
		struct slim_rect all = { 0, 0, (uint16_t)fb->width, (uint16_t)fb->height };
		backend->impl->present(backend, fb, &all, 1);
	}
}
