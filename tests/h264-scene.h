/*
 * A synthetic moving scene in I420 for the H.264 tests and benchmark: a
 * gradient, bars that move, and lines of text-like high-contrast glyphs
 * (the edges a desktop is made of), with what to measure the result by.
 */
#ifndef SLIM_TEST_H264_SCENE_H
#define SLIM_TEST_H264_SCENE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct h264_scene {
	uint16_t width, height;
	uint8_t *y, *u, *v; /* one buffer; strides width and width / 2 */
};

/* false when out of memory */
bool h264_scene_init(struct h264_scene *s, uint16_t width, uint16_t height);
void h264_scene_finish(struct h264_scene *s);
/* Draws picture n of the scene. */
void h264_scene_draw(struct h264_scene *s, unsigned n);
/* PSNR of the luma plane `y` (stride `stride`) against the scene's, in dB. */
double h264_scene_psnr_y(const struct h264_scene *s, const uint8_t *y, size_t stride);
/* The NAL unit types of an Annex B access unit, in order; returns how many (up to max). */
size_t h264_nal_types(const uint8_t *data, size_t size, uint8_t *types, size_t max);

#endif
