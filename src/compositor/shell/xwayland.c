/*
 * X11 programs, through Xwayland. wlroots starts Xwayland lazily, when the
 * first X11 client connects to DISPLAY, so a session that never runs one
 * never pays for it. Managed X11 windows are views (view.c) like Wayland
 * toplevels: placed, focused, moved, resized, maximized and made
 * fullscreen the same way. Override-redirect windows (menus, tooltips) go
 * where X11 puts them, above everything, and never take the focus. A
 * managed window gets slimland's title bar unless its Motif hints say it
 * draws its own (xterm and xclock want one; GTK's client-side decorations
 * say no). wlroots' window manager bridges the clipboard and the primary
 * selection, whatever has the keyboard (see hold_selections).
 */
#include <stdlib.h>
#include <wlr/types/wlr_scene.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/util/log.h>
#include <wlr/xwayland.h>
#include "geometry.h"
#include "shell-internal.h"
#include "slim-alloc.h"

struct slim_xwayland {
	struct slim_shell *shell;
	struct wlr_xwayland *wlr;
	struct wl_list windows; /* slim_x11_view.link, newest first: the managed ones */
	struct wl_listener ready, new_surface;
};

struct slim_x11_view {
	struct slim_view base;
	struct slim_xwayland *xw;
	struct wl_list link; /* slim_xwayland.windows */
	struct wlr_xwayland_surface *xs;
	bool unmanaged;              /* override-redirect: no view, no focus */
	struct wlr_scene_node *content; /* the surface's, while mapped */
	struct wl_listener map, unmap, destroy, request_configure, request_move;
	struct wl_listener request_resize, request_maximize, request_fullscreen, request_activate;
	struct wl_listener set_geometry, set_title, set_decorations;
};

static struct slim_x11_view *x11_view(struct slim_view *view)
{
	return (struct slim_x11_view *)view;
}

static struct wlr_surface *x11_surface(struct slim_view *view)
{
	return x11_view(view)->xs->surface;
}

static struct wlr_box x11_geometry(struct slim_view *view)
{
	struct wlr_xwayland_surface *xs = x11_view(view)->xs;
	return (struct wlr_box){ 0, 0, xs->width, xs->height };
}

/* X11's geometry is 16-bit: a place and a size beyond it are clamped, not truncated. */
static void x11_set_size(struct slim_view *view, uint32_t width, uint32_t height)
{
	wlr_xwayland_surface_configure(x11_view(view)->xs,
		(int16_t)geo_clamp(view->x, INT16_MIN, INT16_MAX),
		(int16_t)geo_clamp(view->y, INT16_MIN, INT16_MAX),
		(uint16_t)geo_clamp(width, 1, UINT16_MAX), (uint16_t)geo_clamp(height, 1, UINT16_MAX));
	view_update_titlebar(view);
}

/* X11 clients place their menus from where they think they are. */
static void x11_moved(struct slim_view *view)
{
	struct wlr_xwayland_surface *xs = x11_view(view)->xs;
	x11_set_size(view, xs->width, xs->height);
}

static void x11_set_activated(struct slim_view *view, bool activated)
{
	struct wlr_xwayland_surface *xs = x11_view(view)->xs;
	/*
	 * Counted as focused already (for the selections' sake, see
	 * hold_selections) while it was not mapped: X11's input focus could
	 * not go to it then, and wlroots would not try again.
	 */
	wlr_xwayland_surface_activate(xs, false);
	wlr_xwayland_surface_activate(xs, activated);
	if (activated) {
		wlr_xwayland_surface_restack(xs, NULL, XCB_STACK_MODE_ABOVE);
	}
}

static void x11_set_state(struct slim_view *view, bool maximized, bool fullscreen)
{
	wlr_xwayland_surface_set_maximized(x11_view(view)->xs, maximized);
	wlr_xwayland_surface_set_fullscreen(x11_view(view)->xs, fullscreen);
}

static void x11_set_resizing(struct slim_view *view, bool resizing)
{
}

static pid_t x11_pid(struct slim_view *view)
{
	struct wlr_xwayland_surface *xs = x11_view(view)->xs;
	return xs->pid; /* _NET_WM_PID; 0 if the client says none: nothing moves */
}

static const char *x11_title(struct slim_view *view)
{
	return x11_view(view)->xs->title;
}

static const char *x11_app_id(struct slim_view *view)
{
	return x11_view(view)->xs->class;
}

static void x11_close(struct slim_view *view)
{
	wlr_xwayland_surface_close(x11_view(view)->xs);
}

static const struct slim_view_impl x11_impl = {
	.surface = x11_surface,
	.geometry = x11_geometry,
	.set_size = x11_set_size,
	.set_activated = x11_set_activated,
	.set_state = x11_set_state,
	.set_resizing = x11_set_resizing,
	.pid = x11_pid,
	.moved = x11_moved,
	.close = x11_close,
	.title = x11_title,
	.app_id = x11_app_id,
};

/*
 * A title bar unless its Motif hints keep the title to itself; a maximized
 * window gives the bar its share of the screen, or takes it back.
 */
static void x11_decorate(struct slim_x11_view *view)
{
	view_set_decorated(&view->base,
		!(view->xs->decorations & WLR_XWAYLAND_SURFACE_DECORATIONS_NO_TITLE));
	if (view->base.maximized) {
		view_fit_output(&view->base);
	}
}

/*
 * wlroots 0.15's window manager hands a selection between X11 and Wayland
 * only while it counts an X11 window as focused (its xwm->focus_surface,
 * checked in xwayland/selection/outgoing.c and incoming.c): `wl-copy foo;
 * xclip -o` fails while a Wayland window, or none, has the keyboard. X11
 * programs share selections freely among themselves anyway; so while no
 * X11 window has the keyboard, the newest unmapped X11 window (but
 * `going`) is counted as focused in X11 alone, the seat's keyboard staying
 * where it is (a mapped one would look focused). xclip's window, which
 * never maps, arrives just before its request for a selection, or just
 * before it offers one.
 */
static void hold_selections(struct slim_xwayland *xw, struct slim_x11_view *going)
{
	struct slim_view *focused = xw->shell->focused;
	if (focused && focused->impl == &x11_impl) {
		return; /* wlroots counts that one */
	}
	struct slim_x11_view *view;
	wl_list_for_each(view, &xw->windows, link) {
		if (view != going && !view->base.mapped) {
			wlr_xwayland_surface_activate(view->xs, true);
			return;
		}
	}
}

static void handle_map(struct wl_listener *listener, void *data)
{
	struct slim_x11_view *view = wl_container_of(listener, view, map);
	struct wlr_xwayland_surface *xs = view->xs;
	struct wlr_scene_node *node = view->base.node;
	view->content = wlr_scene_subsurface_tree_create(node, xs->surface);
	if (!view->content) {
		wlr_log(WLR_ERROR, "xwayland: out of memory for a window");
		return;
	}
	wlr_scene_node_set_enabled(node, true);
	if (view->unmanaged) {
		wlr_scene_node_set_position(node, xs->x, xs->y);
		wlr_scene_node_raise_to_top(node);
		return;
	}
	x11_decorate(view);
	view_map(&view->base);
}

static void handle_unmap(struct wl_listener *listener, void *data)
{
	struct slim_x11_view *view = wl_container_of(listener, view, unmap);
	if (!view->unmanaged) {
		view_unmap(&view->base);
	}
	wlr_scene_node_set_enabled(view->base.node, false);
	wlr_scene_node_destroy(view->content);
	view->content = NULL;
}

static void handle_destroy(struct wl_listener *listener, void *data)
{
	struct slim_x11_view *view = wl_container_of(listener, view, destroy);
	if (!view->unmanaged) {
		view_finish(&view->base);
		hold_selections(view->xw, view);
		wl_list_remove(&view->link);
	}
	struct wl_listener *listeners[] = {
		&view->map, &view->unmap, &view->destroy, &view->request_configure,
		&view->request_move, &view->request_resize, &view->request_maximize,
		&view->request_fullscreen, &view->request_activate, &view->set_geometry,
		&view->set_title, &view->set_decorations,
	};
	for (size_t i = 0; i < sizeof(listeners) / sizeof(listeners[0]); i++) {
		wl_list_remove(&listeners[i]->link);
	}
	wlr_scene_node_destroy(view->base.node);
	free(view);
}

static void handle_set_title(struct wl_listener *listener, void *data)
{
	struct slim_x11_view *view = wl_container_of(listener, view, set_title);
	toplevel_list_title_changed(&view->base);
	view_update_titlebar(&view->base);
}

/* Its Motif hints changed: a title bar comes or goes (the content stays where it is). */
static void handle_set_decorations(struct wl_listener *listener, void *data)
{
	struct slim_x11_view *view = wl_container_of(listener, view, set_decorations);
	if (!view->unmanaged && view->base.mapped) {
		x11_decorate(view);
	}
}

/*
 * A window asks for a place and a size: before it maps, what it asks (it is
 * placed as it maps); once mapped, the size, within its output's usable
 * area (maximized and fullscreen windows keep the screen's).
 */
static void handle_request_configure(struct wl_listener *listener, void *data)
{
	struct slim_x11_view *view = wl_container_of(listener, view, request_configure);
	struct wlr_xwayland_surface_configure_event *event = data;
	if (view->unmanaged || !view->base.mapped) {
		wlr_xwayland_surface_configure(view->xs, event->x, event->y, event->width,
			event->height);
		return;
	}
	view_constrain(&view->base, event->width, event->height, true);
}

/* Override-redirect windows say where they are. */
static void handle_set_geometry(struct wl_listener *listener, void *data)
{
	struct slim_x11_view *view = wl_container_of(listener, view, set_geometry);
	if (view->unmanaged) {
		wlr_scene_node_set_position(view->base.node, view->xs->x, view->xs->y);
	}
}

/* X11 says no serial: a move or resize is taken while a button is down on the window. */
static void x11_grab(struct slim_x11_view *view, enum slim_grab_mode mode, uint32_t edges)
{
	struct wlr_seat *seat = view->base.shell->seat;
	if (view->unmanaged || !view->xs->surface || seat->pointer_state.button_count == 0 ||
			seat->pointer_state.focused_surface != view->xs->surface) {
		return;
	}
	grab_begin(&view->base, mode, edges);
}

static void handle_request_move(struct wl_listener *listener, void *data)
{
	struct slim_x11_view *view = wl_container_of(listener, view, request_move);
	x11_grab(view, SLIM_GRAB_MOVE, 0);
}

static void handle_request_resize(struct wl_listener *listener, void *data)
{
	struct slim_x11_view *view = wl_container_of(listener, view, request_resize);
	struct wlr_xwayland_resize_event *event = data;
	x11_grab(view, SLIM_GRAB_RESIZE, event->edges);
}

static void handle_request_maximize(struct wl_listener *listener, void *data)
{
	struct slim_x11_view *view = wl_container_of(listener, view, request_maximize);
	if (!view->unmanaged) {
		view_set_state(&view->base, view->xs->maximized_horz || view->xs->maximized_vert,
			view->base.fullscreen);
	}
}

static void handle_request_fullscreen(struct wl_listener *listener, void *data)
{
	struct slim_x11_view *view = wl_container_of(listener, view, request_fullscreen);
	if (!view->unmanaged) {
		view_set_state(&view->base, view->base.maximized, view->xs->fullscreen);
	}
}

static void handle_request_activate(struct wl_listener *listener, void *data)
{
	struct slim_x11_view *view = wl_container_of(listener, view, request_activate);
	if (!view->unmanaged && view->base.mapped) {
		view_focus(&view->base, view->xs->surface);
	}
}

static void handle_new_surface(struct wl_listener *listener, void *data)
{
	struct slim_xwayland *xw = wl_container_of(listener, xw, new_surface);
	struct wlr_xwayland_surface *xs = data;
	struct slim_x11_view *view = calloc(1, sizeof(*view));
	struct wlr_scene_tree *tree = view ? wlr_scene_tree_create(&xw->shell->windows->node) : NULL;
	if (!tree) {
		free(view);
		wlr_log(WLR_ERROR, "xwayland: out of memory for a window");
		return;
	}
	view->xs = xs;
	view->xw = xw;
	view->unmanaged = xs->override_redirect;
	view_init(&view->base, xw->shell, &x11_impl, &tree->node);
	if (view->unmanaged) {
		view->base.node->data = NULL; /* the pointer goes to it; a click focuses nothing */
	}
	wlr_scene_node_set_enabled(view->base.node, false);
	struct {
		struct wl_listener *listener;
		struct wl_signal *signal;
		wl_notify_func_t notify;
	} hooks[] = {
		{ &view->map, &xs->events.map, handle_map },
		{ &view->unmap, &xs->events.unmap, handle_unmap },
		{ &view->destroy, &xs->events.destroy, handle_destroy },
		{ &view->request_configure, &xs->events.request_configure, handle_request_configure },
		{ &view->request_move, &xs->events.request_move, handle_request_move },
		{ &view->request_resize, &xs->events.request_resize, handle_request_resize },
		{ &view->request_maximize, &xs->events.request_maximize, handle_request_maximize },
		{ &view->request_fullscreen, &xs->events.request_fullscreen,
			handle_request_fullscreen },
		{ &view->request_activate, &xs->events.request_activate, handle_request_activate },
		{ &view->set_geometry, &xs->events.set_geometry, handle_set_geometry },
		{ &view->set_title, &xs->events.set_title, handle_set_title },
		{ &view->set_decorations, &xs->events.set_decorations, handle_set_decorations },
	};
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		hooks[i].listener->notify = hooks[i].notify;
		wl_signal_add(hooks[i].signal, hooks[i].listener);
	}
	if (!view->unmanaged) {
		wl_list_insert(&xw->windows, &view->link);
		hold_selections(xw, NULL);
	}
}

static void handle_ready(struct wl_listener *listener, void *data)
{
	struct slim_xwayland *xw = wl_container_of(listener, xw, ready);
	wlr_xwayland_set_seat(xw->wlr, xw->shell->seat);
	xw->shell->handler->xwayland_ready(xw->shell->data, xw->wlr->server->pid);
	wlr_log(WLR_INFO, "xwayland: ready on DISPLAY=%s", xw->wlr->display_name);
}

struct slim_xwayland *xwayland_create(struct slim_shell *shell,
		struct wlr_compositor *compositor)
{
	struct slim_xwayland *xw = slim_znew(struct slim_xwayland);
	xw->shell = shell;
	wl_list_init(&xw->windows);
	/* lazy: Xwayland runs only once an X11 client connects */
	xw->wlr = wlr_xwayland_create(shell->display, compositor, true);
	if (!xw->wlr) {
		wlr_log(WLR_ERROR, "xwayland: cannot be had; X11 programs will find no DISPLAY");
		free(xw);
		return NULL;
	}
	xw->ready.notify = handle_ready;
	wl_signal_add(&xw->wlr->events.ready, &xw->ready);
	xw->new_surface.notify = handle_new_surface;
	wl_signal_add(&xw->wlr->events.new_surface, &xw->new_surface);
	return xw;
}

/*
 * wlroots 0.15's wlr_xwayland_destroy() forgets its X11 window manager (its
 * struct, its xcb connection; later versions call xwm_destroy() there). It
 * happens once, as the compositor exits: the pointer kept here marks it as
 * wlroots' for the leak checker, where it would otherwise count as ours.
 */
static struct wlr_xwm *volatile xwm_left_by_wlroots __attribute__((used));

void xwayland_destroy(struct slim_xwayland *xw)
{
	if (!xw) {
		return;
	}
	wl_list_remove(&xw->ready.link);
	wl_list_remove(&xw->new_surface.link);
	xwm_left_by_wlroots = xw->wlr->xwm;
	wlr_xwayland_destroy(xw->wlr);
	free(xw);
}

const char *xwayland_display_name(const struct slim_xwayland *xw)
{
	return xw ? xw->wlr->display_name : NULL;
}
