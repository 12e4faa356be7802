/*
 * What each display command does to a framebuffer: the reference semantics
 * of the protocol, in code. The console applies commands with these
 * functions, and the server's encoder applies the same functions to its
 * model of the console, so that both always agree to the last bit, lossy
 * CSCS included.
 *
 * Pixels are XRGB8888 in host order. The console's X byte is always 0xff;
 * the X byte of colours and pixels on the wire is ignored.
 *
 * Every rectangle handed to these functions has been validated against the
 * framebuffer (slim_reader_next does that for everything from the wire).
 */
#ifndef SLIM_PIXELS_H
#define SLIM_PIXELS_H

#include <stddef.h>
#include <stdint.h>
#include "slim-codec.h"

#define SLIM_OPAQUE 0xff000000u

struct slim_fb {
	uint32_t *px;
	uint32_t width, height;
	size_t stride; /* in pixels */
};

static inline uint32_t *slim_fb_row(const struct slim_fb *fb, uint32_t x, uint32_t y)
{
	return fb->px + (size_t)y * fb->stride + x;
}

void slim_fb_fill(const struct slim_fb *fb, struct slim_rect r, uint32_t color);
/* Overlapping source and destination behave as if the source were copied out first. */
void slim_fb_copy(const struct slim_fb *fb, struct slim_rect src, uint16_t dx, uint16_t dy);
/* `data` holds r.w * r.h pixels, packed rows, XRGB8888 or RGB888 (B, G, R) by `flags`. */
void slim_fb_set(const struct slim_fb *fb, struct slim_rect r, const uint8_t *data,
		uint8_t flags);
void slim_fb_bitmap(const struct slim_fb *fb, struct slim_rect r, uint32_t fg,
		uint32_t bg, const uint8_t *bits);
/* `pal` as slim_reader_next checked it; `flags` says packed or runs. */
void slim_fb_palette(const struct slim_fb *fb, const struct slim_palette *pal, uint8_t flags);

/* Working memory for slim_fb_cscs, allocated once for the largest piece. */
struct slim_cscs_scratch;
struct slim_cscs_scratch *slim_cscs_scratch_create(void);
void slim_cscs_scratch_destroy(struct slim_cscs_scratch *s);
void slim_fb_cscs(const struct slim_fb *fb, const struct slim_cscs *c,
		struct slim_cscs_scratch *s);

/*
 * The source samples [*first, *last] that destination indices [d0, d1) of
 * one CSCS axis read (src samples scaled to dst pixels). A sender cuts an
 * image into pieces that each carry these samples.
 */
void slim_cscs_span(uint32_t d0, uint32_t d1, uint32_t src, uint32_t dst,
		uint32_t *first, uint32_t *last);

/* BT.601 limited range, the conversion CSCS specifies. */
uint32_t slim_yuv_to_xrgb(int y, int u, int v);

#endif
