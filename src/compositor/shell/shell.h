/*
 * The window manager, as the session sees it: windows of every kind and the
 * panels around them, the seat (the console's keyboard and pointer, and
 * virtual ones), and the protocols clients speak to them.
 *
 * The session (server.c) makes the shell with what it needs and is told
 * what it cares about through slim_shell_handler; the shell includes
 * nothing of the session's and calls none of it. The session tells it the
 * console's heads (slim_shell_set_heads) whenever they change: windows
 * and panels are placed again, and those on a head that is gone move to
 * one that remains.
 */
#ifndef SLIM_SHELL_H
#define SLIM_SHELL_H

#include <stdbool.h>
#include <sys/types.h>
#include <wayland-server-core.h>
#include <wlr/util/box.h>
#include "screen-map.h"
#include "slim-proto.h"

struct wlr_backend;
struct wlr_compositor;
struct wlr_output;
struct wlr_output_layout;
struct wlr_scene;
struct wlr_scene_tree;
struct wlr_seat;
struct wlr_foreign_toplevel_manager_v1;
struct slim_view;
struct slim_console_input;
struct slim_xwayland;
struct slim_protocols;
struct slim_constraints;
struct slim_text_inputs;
struct slim_virtual_input;
struct slim_desk;

/* What the shell tells the session. */
struct slim_shell_handler {
	/* The keyboard went to a window of process `pid` (0: unknown). */
	void (*focus)(void *data, pid_t pid);
	/* Xwayland runs, as process `pid`: it draws every X11 window. */
	void (*xwayland_ready)(void *data, pid_t pid);
	/* A window's pixels on screen, `box`, moved by (dx, dy). */
	void (*window_moved)(void *data, struct wlr_box box, int32_t dx, int32_t dy);
	/*
	 * The pointer moved: slim_shell.pointer_x and pointer_y; while
	 * slim_shell.grab.mode is not SLIM_GRAB_NONE, a window moves with it.
	 */
	void (*pointer_moved)(void *data);
	/* The pointer is over no client's surface: the theme's image `name` shows. */
	void (*cursor_theme)(void *data, const char *name);
	/* Input from the console: the session is not idle. */
	void (*activity)(void *data);
	/* A client keeps the session from going idle (a playing video), or none does now. */
	void (*idle_inhibited)(void *data, bool inhibited);
};

enum slim_grab_mode {
	SLIM_GRAB_NONE,
	SLIM_GRAB_MOVE,
	SLIM_GRAB_RESIZE,
};

/* An interactive move or resize (grab.c). */
struct slim_grab {
	enum slim_grab_mode mode;
	struct slim_view *view;
	double start_x, start_y; /* pointer at the start */
	struct wlr_box start_box;
	uint32_t edges;
};

/* A head of the console, as the shell places windows on it (desk.c). */
struct slim_shell_head {
	struct wlr_output *output;
	struct slim_screen_map map;
	struct wlr_box box;    /* in the layout */
	struct wlr_box usable; /* the box less the panels' exclusive zones */
};

/* What the shell's files share: 28 fields, the scene's trees and one object a protocol. */
struct slim_shell {
	struct wl_display *display;
	struct wlr_scene *scene;
	struct wlr_output_layout *layout;
	/* the primary head's output: the greeter and panels that name none show there */
	struct wlr_output *output;
	struct slim_shell_head heads[SLIM_MAX_HEADS];
	size_t n_heads;
	const struct slim_shell_handler *handler;
	void *data;

	/* the scene, bottom up: background, layers 0 and 1, windows, layers 2 and 3 */
	struct wlr_scene_tree *layers[4], *windows;
	struct wl_list layer_surfaces;
	struct wl_list views; /* slim_view.link, topmost first */
	struct slim_view *focused; /* the view with the keyboard */

	struct wlr_seat *seat;
	/* the pointer, in layout coordinates */
	double pointer_x, pointer_y;
	struct slim_grab grab;
	struct slim_console_input *input;
	struct slim_xwayland *xwayland;
	struct slim_protocols *protocols;
	struct slim_constraints *constraints;
	struct slim_text_inputs *text_inputs;
	struct slim_virtual_input *virtual_input;
	struct wlr_foreign_toplevel_manager_v1 *toplevels;

	struct wl_listener new_xdg_surface, new_layer_surface;
};

/*
 * The shell's globals on `display`, its trees in `scene`, the console's
 * keyboard on the headless `backend`, Xwayland (lazy) on `compositor`.
 * NULL if any cannot be had (said in the log).
 */
struct slim_shell *slim_shell_create(struct wl_display *display, struct wlr_backend *backend,
		struct wlr_scene *scene, struct wlr_output_layout *layout,
		struct wlr_compositor *compositor, const struct slim_shell_handler *handler,
		void *data);
/*
 * Ends the clients too: Xwayland first (its client going would start it
 * again), then every client, whose objects the shell listens to.
 */
void slim_shell_destroy(struct slim_shell *shell);
/*
 * A console attached with `desk`: its keyboard's keymap (or the user's own
 * choice) from now on.
 */
void slim_shell_console_attached(struct slim_shell *shell, const char *console_id,
		const struct slim_desk *desk);
/*
 * The console's heads are `maps` (in `layout`, an output each), the primary
 * one's output `primary`: panels, maximized and fullscreen windows are
 * placed again; windows and panels on a head that is gone move to one that
 * remains; the pointer, if on none, goes to the primary head.
 */
void slim_shell_set_heads(struct slim_shell *shell, const struct slim_screen_map *maps,
		size_t n, struct wlr_output *primary);
/* Where the pointer is on the console's screen (device pixels). */
void slim_shell_pointer_on_screen(const struct slim_shell *shell, double *x, double *y);
/* The scale of the head the pointer is on. */
uint32_t slim_shell_pointer_scale(const struct slim_shell *shell);
/* The console's keys and pointer, through the seat. */
void slim_shell_console_input(struct slim_shell *shell, const struct slim_wire_input *ev);
/* The DISPLAY X11 clients use, or NULL (no Xwayland: they find none). */
const char *slim_shell_x11_display(const struct slim_shell *shell);

#endif
