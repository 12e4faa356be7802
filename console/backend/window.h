/*
 * --output window: the console's screen in SDL2 windows on a desktop
 * (X11 or Wayland, as SDL finds it), for a workstation that shows a
 * session next to its own: a window per head (--size WxH,WxH), each
 * showing its head's rectangle of the screen. A window may be resized at
 * will: its head keeps the size it announced in HELLO and is scaled
 * into the window with its aspect kept. Keyboard and pointer go to the
 * server through the input sink (a pointer over a head's window is at
 * that head's place on the screen); the server's cursor is drawn over the
 * picture and follows the local pointer at once.
 *
 * SDL's event queue is no file descriptor. The backend's fd hook gives
 * the loop the display connection's socket when SDL tells which it is
 * (X11, Wayland); the loop calls its dispatch hook after every pass, not
 * only when the socket is readable, because drawing may read events into
 * the display library's own queue where no poll() sees them, and sleeps
 * at most slim_window_backend_timeout_ms (short when there is no socket,
 * so that SDL is pumped regularly). Closing any of the windows calls the
 * sink's `closed`.
 */
#ifndef SLIM_CONSOLE_WINDOW_H
#define SLIM_CONSOLE_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include "backend.h"
#include "slim-desk.h"

/*
 * Connects to the desktop; the windows, one for each of `desk`'s heads,
 * open when the core sizes the backend (a size other than their bounds
 * makes one head of it). NULL with a one-line reason in `err` when there
 * is no display.
 */
struct slim_console_backend *slim_window_backend_create(const char *title,
		const struct slim_desk *desk, const struct slim_console_input_sink *sink,
		char *err, size_t err_len);

/* The longest the loop may sleep before the next dispatch, in ms. */
int slim_window_backend_timeout_ms(struct slim_console_backend *backend);

#endif
