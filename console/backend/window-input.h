/*
 * What the window backend does with input, without a window: SDL
 * scancodes to the evdev key codes the protocol carries, and the
 * letterbox that fits the console's screen into a window of any size
 * (and maps pointer positions back through it). SDL headers only, so
 * that unit tests need no display.
 */
#ifndef SLIM_CONSOLE_WINDOW_INPUT_H
#define SLIM_CONSOLE_WINDOW_INPUT_H

#include <stdint.h>

/* The evdev KEY_* code of an SDL_Scancode; 0 (KEY_RESERVED) for keys the table lacks. */
uint16_t slim_evdev_from_sdl_scancode(int scancode);

/* Where the picture goes in the window, in the window's (or output's) pixels. */
struct slim_letterbox {
	int32_t x, y, w, h;
};

/*
 * A `width` x `height` picture scaled to fit `area_w` x `area_h` with its
 * aspect kept, centred, the rest left for bars.
 */
struct slim_letterbox slim_letterbox_fit(uint32_t area_w, uint32_t area_h,
		uint32_t width, uint32_t height);

/*
 * A point of the area (a pointer position) on the picture, in 1/256 pixel
 * as MOTION_ABS wants it, clamped to the picture: a pointer on a bar is at
 * the picture's edge.
 */
void slim_letterbox_to_picture(const struct slim_letterbox *lb, uint32_t width,
		uint32_t height, double area_x, double area_y, int32_t *x256, int32_t *y256);

#endif
