/*
 * A head of the console's screen as a wlr_output with no clock of its
 * own (screen.c, wlroots glue).
 */
#ifndef SLIM_SCREEN_H
#define SLIM_SCREEN_H

#include <stdint.h>
#include <wayland-server-core.h>

struct wlr_backend;
struct wlr_output;
struct slim_head;

/*
 * An output of `backend` (the headless one: its buffers and allocator)
 * that renders only when asked: no frame timer. Enabled, at the head's
 * size and refresh, with its name, make, model and physical size.
 */
struct wlr_output *screen_create(struct wlr_backend *backend, struct wl_display *display,
		const struct slim_head *head);
/* NULL is a no-op. */
void screen_destroy(struct wlr_output *output);
/*
 * The buffers it renders into, freed (megabytes a head) until it renders
 * again, when they are made anew and drawn whole: for a session no console
 * shows.
 */
void screen_release_buffers(struct wlr_output *output);

#endif
