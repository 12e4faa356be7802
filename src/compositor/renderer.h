/*
 * The pixman renderer, with viewport offsets and YUV wl_shm buffers
 * (renderer.c).
 */
#ifndef SLIM_RENDERER_H
#define SLIM_RENDERER_H

#include <stdbool.h>
#include <stdint.h>
#include "encoder.h"

struct wlr_buffer;
struct wlr_renderer;
struct wlr_texture;

struct wlr_renderer *renderer_create(void);
/* XRGB8888 pixels in memory as a wlr_buffer (the caller drops it); *px: its pixels. */
struct wlr_buffer *renderer_pixels_create(uint32_t width, uint32_t height, uint32_t **px);
/* A YUV client buffer's texture: its planes (4:2:0, depth 8; no dst) into img. */
bool renderer_texture_yuv(struct wlr_texture *texture, struct slim_yuv_image *img);

#endif
