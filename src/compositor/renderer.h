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
/* A YUV client buffer's texture: its planes (4:2:0, depth 8; no dst) into img. */
bool renderer_texture_yuv(struct wlr_texture *texture, struct slim_yuv_image *img);

#endif
