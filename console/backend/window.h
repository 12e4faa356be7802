/*
 * --output window: the console's screen in an SDL2 window on a desktop
 * (X11 or Wayland, as SDL finds it), for a workstation that shows a
 * session next to its own. The window may be resized at will: the
 * console's screen keeps the size it announced in HELLO and is scaled
 * into the window with its aspect kept. Keyboard and pointer go to the
 * server through the input sink; the server's cursor is drawn over the
 * picture and follows the local pointer at once.
 *
 * SDL's event queue is no file descriptor. The backend's fd hook gives
 * the loop the display connection's socket when SDL tells which it is
 * (X11, Wayland); the loop calls its dispatch hook after every pass, not
 * only when the socket is readable, because drawing may read events into
 * the display library's own queue where no poll() sees them, and sleeps
 * at most slim_window_backend_timeout_ms (short when there is no socket,
 * so that SDL is pumped regularly). Closing the window calls the sink's
 * `closed`.
 */
#ifndef SLIM_CONSOLE_WINDOW_H
#define SLIM_CONSOLE_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include "backend.h"

/*
 * Connects to the desktop; the window opens when the core sizes the
 * backend. NULL with a one-line reason in `err` when there is no display.
 */
struct slim_console_backend *slim_window_backend_create(const char *title,
		const struct slim_console_input_sink *sink, char *err, size_t err_len);

/* The longest the loop may sleep before the next dispatch, in ms. */
int slim_window_backend_timeout_ms(struct slim_console_backend *backend);

#endif
