/*
 * What the shell's files call of each other. Nothing above the shell
 * includes it (but the wlcs module, which reaches in to place windows).
 */
#ifndef SLIM_SHELL_INTERNAL_H
#define SLIM_SHELL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <wayland-server-core.h>
#include <wlr/util/box.h>
#include "shell.h"

struct wlr_backend;
struct wlr_input_device;
struct wlr_keyboard;
struct wlr_scene_node;
struct wlr_surface;
struct wlr_xdg_surface;
struct slim_toplevel;
struct slim_decoration;

/* What a kind of window (xdg.c, xwayland.c) does for view.c. */
struct slim_view_impl {
	struct wlr_surface *(*surface)(struct slim_view *view);
	/* the window's own box (no shadows): its size, and where it starts in its surface */
	struct wlr_box (*geometry)(struct slim_view *view);
	void (*set_size)(struct slim_view *view, uint32_t width, uint32_t height);
	void (*set_activated)(struct slim_view *view, bool activated);
	void (*set_state)(struct slim_view *view, bool maximized, bool fullscreen);
	void (*set_resizing)(struct slim_view *view, bool resizing);
	/* the process to put first while it has the keyboard (the cgroup policy) */
	pid_t (*pid)(struct slim_view *view);
	/* optional: the view's node went to view->x, view->y */
	void (*moved)(struct slim_view *view);
	/* asks the client to close the window */
	void (*close)(struct slim_view *view);
	/* what task bars show; may be NULL */
	const char *(*title)(struct slim_view *view);
	const char *(*app_id)(struct slim_view *view);
};

/* A window; embedded in its kind's own struct. */
struct slim_view {
	struct wl_list link; /* slim_shell.views, topmost first */
	struct slim_shell *shell;
	const struct slim_view_impl *impl;
	struct wlr_scene_node *node; /* node->data is the view */
	int32_t x, y;
	bool mapped;
	/* where the view was before it was maximized or made fullscreen */
	struct wlr_box saved;
	bool maximized, fullscreen;
	/* the title bar slimland draws for a client that asked for one, or NULL */
	struct slim_decoration *titlebar;
	struct slim_toplevel *toplevel; /* in task bars while mapped (toplevel-list.c) */
};

/* Height of a title bar slimland draws. */
#define VIEW_TITLEBAR_H 24

/* decoration.c: a title bar in `parent`'s node, above its origin; node->data is `data`. */
struct slim_decoration *decoration_create(struct wlr_scene_node *parent, void *data);
void decoration_destroy(struct slim_decoration *deco);
/* Drawn again if the width or title changed; shown or hidden. */
void decoration_update(struct slim_decoration *deco, int32_t width, const char *title,
		bool enabled);

/* toplevel-list.c */
void toplevel_list_add(struct slim_view *view);
/* Its focus, maximized and fullscreen states, again. */
void toplevel_list_update(struct slim_view *view);
void toplevel_list_remove(struct slim_view *view);
/* Its title changed: task bars hear of it, at most once a tenth of a second. */
void toplevel_list_title_changed(struct slim_view *view);

/* desk.c */
/* The head whose layout box holds (x, y), or else the nearest; NULL: no head yet. */
struct slim_shell_head *shell_head_at(struct slim_shell *shell, double x, double y);
/* The head the view's centre is on (or nearest). */
struct slim_shell_head *shell_head_of_view(struct slim_view *view);
/* The head showing `output`, or NULL. */
struct slim_shell_head *shell_head_of_output(struct slim_shell *shell, struct wlr_output *output);
/* `box` (a window, `top` its title bar's height) moved and shrunk into `area`. */
struct wlr_box constrain_box(struct wlr_box area, struct wlr_box box, int32_t top);

/* layer.c */
bool layers_init(struct slim_shell *shell);
/* Places every layer surface again, and each head's usable area (a head or a surface changed). */
void layers_arrange(struct slim_shell *shell);
/* Panels on an output that is gone go to the primary head. */
void layers_rehome(struct slim_shell *shell);

/* virtual-input.c */
struct slim_virtual_input *virtual_input_create(struct slim_shell *shell);
void virtual_input_destroy(struct slim_virtual_input *virtual_input);

/* text-input.c */
struct slim_text_inputs *text_inputs_create(struct slim_shell *shell);
void text_inputs_destroy(struct slim_text_inputs *text_inputs);
/* The console's keys, to the input method's keyboard grab: true if one took them. */
bool text_inputs_key(struct slim_text_inputs *text_inputs, uint32_t time_msec,
		uint32_t keycode, uint32_t state);
bool text_inputs_modifiers(struct slim_text_inputs *text_inputs, struct wlr_keyboard *keyboard);

/* constraints.c */
struct slim_constraints *constraints_create(struct slim_shell *shell);
void constraints_destroy(struct slim_constraints *constraints);
/* The pointer entered `surface` (or none): its constraint, if any, takes hold. */
void constraints_pointer_focus(struct slim_constraints *constraints, struct wlr_surface *surface);
/*
 * The pointer moves by (dx, dy) to (*x, *y): relative motion goes out, and a
 * constraint holds the position back; true if it did.
 */
bool constraints_move(struct slim_constraints *constraints, double *x, double *y,
		double dx, double dy);

/* protocols.c */
struct slim_protocols *protocols_create(struct slim_shell *shell);
void protocols_destroy(struct slim_protocols *protocols);
/* Input from the console: the session is not idle. */
void protocols_activity(struct slim_protocols *protocols);
void protocols_focus_changed(struct slim_protocols *protocols, struct wlr_surface *focused);
/* The toplevel asked for a title bar drawn by slimland (xdg-decoration). */
bool protocols_wants_titlebar(const struct slim_protocols *protocols,
		struct wlr_xdg_surface *xdg);
/* The focused client asked for the compositor's key bindings. */
bool protocols_shortcuts_inhibited(const struct slim_protocols *protocols);

/* view.c */
void view_init(struct slim_view *view, struct slim_shell *shell,
		const struct slim_view_impl *impl, struct wlr_scene_node *node);
void view_map(struct slim_view *view);
void view_unmap(struct slim_view *view);
/* The view is going: no grab, focus or list keeps it. */
void view_finish(struct slim_view *view);
/* Its window geometry, what the client said, clamped (geometry.h). */
struct wlr_box view_geometry(struct slim_view *view);
/* Where it is and its size. */
struct wlr_box view_box(struct slim_view *view);
void view_set_state(struct slim_view *view, bool maximized, bool fullscreen);
/* Its title bar follows the window's width and title (after a commit or a new title). */
void view_update_titlebar(struct slim_view *view);
/* A title bar above the view (the client asked for server-side decorations), or none. */
void view_set_decorated(struct slim_view *view, bool decorated);
/* The mapped view whose (toplevel) surface this is, or NULL. */
struct slim_view *view_of_surface(struct slim_shell *shell, struct wlr_surface *surface);
/* Its title bar was clicked, x from the window's left edge: closes, or starts a move. */
void view_titlebar_click(struct slim_view *view, double x);
/* The view under (x, y); *surface NULL when that is its title bar. */
struct slim_view *view_at(struct slim_shell *shell, double x, double y,
		struct wlr_surface **surface, double *sx, double *sy);
void view_focus(struct slim_view *view, struct wlr_surface *surface);
void view_move_to(struct slim_view *view, int32_t x, int32_t y);
void view_cycle(struct slim_shell *shell);
/* A maximized or fullscreen view fills its head (what panels leave, if maximized). */
void view_fit_output(struct slim_view *view);
/*
 * The view at (width x height) kept within its head's usable area:
 * moved, and told a size if it must change (always, if `answer`).
 */
void view_constrain(struct slim_view *view, int32_t width, int32_t height, bool answer);
/* Maximized and fullscreen windows follow their head's size. */
void views_fit_output(struct slim_shell *shell);
/* Windows on no head (theirs is gone) move onto the nearest one. */
void views_rescue(struct slim_shell *shell);

/* xdg.c */
void xdg_handle_new_surface(struct wl_listener *listener, void *data);
/* A popup's node in `parent`'s, the popup kept on its head; false if out of memory. */
bool xdg_popup_create(struct slim_shell *shell, struct wlr_xdg_surface *xdg,
		struct wlr_scene_node *parent);

/* xwayland.c: NULL when Xwayland cannot be had (X11 clients then find no DISPLAY) */
struct slim_xwayland *xwayland_create(struct slim_shell *shell,
		struct wlr_compositor *compositor);
void xwayland_destroy(struct slim_xwayland *xwayland);
/* The DISPLAY X11 clients use, or NULL. */
const char *xwayland_display_name(const struct slim_xwayland *xwayland);

/* grab.c */
void grab_begin(struct slim_view *view, enum slim_grab_mode mode, uint32_t edges);
/* The same, asked for by the client: only with a valid serial of a press on it. */
void grab_request(struct slim_view *view, enum slim_grab_mode mode, uint32_t edges,
		uint32_t serial);
/* Returns true if a grab took the motion. */
bool grab_motion(struct slim_shell *shell);
void grab_end(struct slim_shell *shell);

/* console-input.c */
struct slim_console_input *console_input_create(struct slim_shell *shell,
		struct wlr_backend *backend);
void console_input_destroy(struct slim_console_input *input);
/* The console's keyboard: the seat's again after a virtual keyboard's keys. */
struct wlr_input_device *console_input_keyboard(const struct slim_console_input *input);
/* keymap.c: the console keyboard's keymap, chosen at each attach */
struct slim_keymap;
struct slim_desk;
struct wlr_event_keyboard_key;
/* Sets the session's own keymap (XKB_DEFAULT_*) on `keyboard`; NULL if it does not compile. */
struct slim_keymap *keymap_create(struct wl_event_loop *loop, struct wlr_keyboard *keyboard);
void keymap_destroy(struct slim_keymap *km);
/* A console attached: its keymap, or the user's, from now on (or in a moment: held keys). */
void keymap_attached(struct slim_keymap *km, const char *console_id,
		const struct slim_desk *desk);
/* True if `key` waits for the keymap being compiled (typed when it is there). */
bool keymap_hold_key(struct slim_keymap *km, const struct wlr_event_keyboard_key *key);

/* keymap-cache.c: compiled keymaps by their names, compiled off the loop */
struct slim_keymap_cache;
struct slim_keyboard;
struct xkb_keymap;
/* ready(data): a compile is done (ask again for what keymap_cache_get had not). */
struct slim_keymap_cache *keymap_cache_create(struct wl_event_loop *loop,
		void (*ready)(void *data), void *data);
void keymap_cache_destroy(struct slim_keymap_cache *cache);
struct xkb_keymap *keymap_cache_get(struct slim_keymap_cache *cache,
		const struct slim_keyboard *names);

/* Re-evaluates what is under the pointer (after views moved or appeared). */
void input_pointer_refresh(struct slim_shell *shell, uint32_t time_msec);

#endif
