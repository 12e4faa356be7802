/*
 * The screen a console shows while it has no server picture: a few lines
 * of text ("connecting to HOST:PORT...", "HOST:PORT is busy: ...") centred
 * on a dark background, drawn into the shadow framebuffer with the
 * built-in font. Nothing of it needs keeping: the server repaints the
 * whole screen when the association starts.
 */
#ifndef SLIM_CONSOLE_STATUS_SCREEN_H
#define SLIM_CONSOLE_STATUS_SCREEN_H

#include <stddef.h>
#include "backend.h"
#include "slim-pixels.h"

#define SLIM_STATUS_BACKGROUND 0x1d232bu
#define SLIM_STATUS_FOREGROUND 0xdfe5ecu
#define SLIM_STATUS_MAX_SCALE 3

/*
 * Paints the whole framebuffer: the background, and `lines` centred, at
 * the largest scale up to SLIM_STATUS_MAX_SCALE at which all of them fit.
 * Letters are shown in upper case, characters the font lacks as '?', and
 * a line too long for the screen even at scale 1 is cut.
 */
void slim_status_screen_draw(const struct slim_fb *fb, const char *const *lines, size_t n_lines);

/* Draws, then presents the whole screen through `backend` (NULL: draws only). */
void slim_status_screen_show(const struct slim_fb *fb, struct slim_console_backend *backend,
		const char *const *lines, size_t n_lines);

#endif
