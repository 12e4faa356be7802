/*
 * Windows: xdg toplevels and their popups in the scene. Click to focus and
 * raise; maximize and fullscreen fill the console's screen and follow it
 * when it changes size; a key cycles through windows. When a window moves,
 * the move is noted as a COPY hint, so the console moves pixels it already
 * has instead of receiving them again.
 */
#include <stdlib.h>
#include <wlr/types/wlr_scene.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_xdg_shell.h>
#include <wlr/util/log.h>
#include "server.h"

static struct wlr_box view_box(const struct slim_view *view)
{
	struct wlr_box geo;
	wlr_xdg_surface_get_geometry(view->xdg, &geo);
	return (struct wlr_box){ view->x, view->y, geo.width, geo.height };
}

/* Merges with the last hint when it moved the same pixels on. */
static void note_move(struct slim_server *server, const struct slim_view *view,
		int32_t dx, int32_t dy)
{
	struct wlr_box geo;
	wlr_xdg_surface_get_geometry(view->xdg, &geo);
	/* The whole surface, shadows and all: that is what moved on screen. */
	struct wlr_box box = { view->x - geo.x, view->y - geo.y,
		view->xdg->surface->current.width, view->xdg->surface->current.height };
	if (box.width <= 0 || box.height <= 0) {
		return;
	}
	if (server->n_moves > 0) {
		struct slim_move_hint *last = &server->moves[server->n_moves - 1];
		if (last->src.x + last->dx == box.x && last->src.y + last->dy == box.y &&
				last->src.w == box.width && last->src.h == box.height) {
			last->dx += dx;
			last->dy += dy;
			return;
		}
	}
	if (server->n_moves == sizeof(server->moves) / sizeof(server->moves[0])) {
		return; /* no hint: the pixels are simply sent */
	}
	if (box.x < 0 || box.y < 0) {
		return;
	}
	server->moves[server->n_moves++] = (struct slim_move_hint){
		.src = { (uint16_t)box.x, (uint16_t)box.y, (uint16_t)box.width,
			(uint16_t)box.height },
		.dx = dx, .dy = dy,
	};
}

void view_move_to(struct slim_view *view, int32_t x, int32_t y)
{
	if (x == view->x && y == view->y) {
		return;
	}
	if (view->mapped) {
		note_move(view->server, view, x - view->x, y - view->y);
	}
	view->x = x;
	view->y = y;
	/* The scene's xdg node already puts the window geometry's corner at its origin. */
	wlr_scene_node_set_position(view->node, x, y);
}

void view_focus(struct slim_view *view, struct wlr_surface *surface)
{
	if (!view) {
		return;
	}
	struct slim_server *server = view->server;
	struct wlr_seat *seat = server->seat;
	struct wlr_surface *prev = seat->keyboard_state.focused_surface;
	if (prev == view->xdg->surface) {
		return;
	}
	if (prev && wlr_surface_is_xdg_surface(prev)) {
		struct wlr_xdg_surface *previous = wlr_xdg_surface_from_wlr_surface(prev);
		if (previous->role == WLR_XDG_SURFACE_ROLE_TOPLEVEL) {
			wlr_xdg_toplevel_set_activated(previous, false);
		}
	}
	wlr_scene_node_raise_to_top(view->node);
	wl_list_remove(&view->link);
	wl_list_insert(&server->views, &view->link);
	wlr_xdg_toplevel_set_activated(view->xdg, true);
	pid_t pid;
	wl_client_get_credentials(view->xdg->client->client, &pid, NULL, NULL);
	slim_sched_focus(server->sched, pid);
	struct wlr_keyboard *kb = wlr_seat_get_keyboard(seat);
	if (kb) {
		wlr_seat_keyboard_notify_enter(seat, view->xdg->surface, kb->keycodes,
			kb->num_keycodes, &kb->modifiers);
	}
}

struct slim_view *view_at(struct slim_server *server, double x, double y,
		struct wlr_surface **surface, double *sx, double *sy)
{
	struct wlr_scene_node *node = wlr_scene_node_at(&server->scene->node, x, y, sx, sy);
	if (!node || node->type != WLR_SCENE_NODE_SURFACE) {
		return NULL;
	}
	*surface = wlr_scene_surface_from_node(node)->surface;
	while (node && !node->data) {
		node = node->parent;
	}
	return node ? node->data : NULL;
}

/* The bottom window comes to the top. */
void view_cycle(struct slim_server *server)
{
	if (wl_list_length(&server->views) < 2) {
		return;
	}
	struct slim_view *last = wl_container_of(server->views.prev, last, link);
	view_focus(last, last->xdg->surface);
}

static void fill_output(struct slim_view *view)
{
	struct slim_server *server = view->server;
	wlr_xdg_toplevel_set_size(view->xdg, server->width, server->height);
	view_move_to(view, 0, 0);
}

/* Maximized and fullscreen windows follow the screen's size. */
void views_fit_output(struct slim_server *server)
{
	struct slim_view *view;
	wl_list_for_each(view, &server->views, link) {
		if (view->maximized || view->fullscreen) {
			fill_output(view);
		}
	}
}

static void set_state(struct slim_view *view, bool maximized, bool fullscreen)
{
	bool was = view->maximized || view->fullscreen;
	bool will = maximized || fullscreen;
	if (will && !was) {
		view->saved = view_box(view);
	}
	view->maximized = maximized;
	view->fullscreen = fullscreen;
	wlr_xdg_toplevel_set_maximized(view->xdg, maximized);
	wlr_xdg_toplevel_set_fullscreen(view->xdg, fullscreen);
	if (will) {
		fill_output(view);
	} else if (was) {
		wlr_xdg_toplevel_set_size(view->xdg, (uint32_t)view->saved.width,
			(uint32_t)view->saved.height);
		view_move_to(view, view->saved.x, view->saved.y);
	}
}

static void handle_map(struct wl_listener *listener, void *data)
{
	struct slim_view *view = wl_container_of(listener, view, map);
	struct slim_server *server = view->server;
	/* New windows cascade from the top left, clear of the screen's edges. */
	int n = wl_list_length(&server->views);
	struct wlr_box box = view_box(view);
	int32_t x = 32 + 32 * (n % 8), y = 32 + 32 * (n % 8);
	if (x + box.width > (int32_t)server->width) {
		x = box.width < (int32_t)server->width ? ((int32_t)server->width - box.width) / 2 : 0;
	}
	if (y + box.height > (int32_t)server->height) {
		y = box.height < (int32_t)server->height ? ((int32_t)server->height - box.height) / 2 : 0;
	}
	if (!view->maximized && !view->fullscreen) {
		view_move_to(view, x, y);
	}
	/* Mapped only now: placing a new window is no move for the console to copy. */
	view->mapped = true;
	wl_list_insert(&server->views, &view->link);
	view_focus(view, view->xdg->surface);
	input_pointer_refresh(server, 0);
}

static void handle_unmap(struct wl_listener *listener, void *data)
{
	struct slim_view *view = wl_container_of(listener, view, unmap);
	struct slim_server *server = view->server;
	view->mapped = false;
	if (server->grab.view == view) {
		grab_end(server);
	}
	wl_list_remove(&view->link);
	wl_list_init(&view->link);
	/* Focus goes to the next window down. */
	if (!wl_list_empty(&server->views)) {
		struct slim_view *next = wl_container_of(server->views.next, next, link);
		view_focus(next, next->xdg->surface);
	} else {
		wlr_seat_keyboard_clear_focus(server->seat);
	}
	input_pointer_refresh(server, 0);
}

static void handle_destroy(struct wl_listener *listener, void *data)
{
	struct slim_view *view = wl_container_of(listener, view, destroy);
	/* a grab on a view is never left behind it (unmap ends it too, if it came) */
	if (view->server->grab.view == view) {
		grab_end(view->server);
	}
	wl_list_remove(&view->link);
	wl_list_remove(&view->map.link);
	wl_list_remove(&view->unmap.link);
	wl_list_remove(&view->destroy.link);
	wl_list_remove(&view->request_move.link);
	wl_list_remove(&view->request_resize.link);
	wl_list_remove(&view->request_maximize.link);
	wl_list_remove(&view->request_fullscreen.link);
	free(view);
}

static void handle_request_move(struct wl_listener *listener, void *data)
{
	struct slim_view *view = wl_container_of(listener, view, request_move);
	struct wlr_xdg_toplevel_move_event *event = data;
	grab_request(view, SLIM_GRAB_MOVE, 0, event->serial);
}

static void handle_request_resize(struct wl_listener *listener, void *data)
{
	struct slim_view *view = wl_container_of(listener, view, request_resize);
	struct wlr_xdg_toplevel_resize_event *event = data;
	grab_request(view, SLIM_GRAB_RESIZE, event->edges, event->serial);
}

static void handle_request_maximize(struct wl_listener *listener, void *data)
{
	struct slim_view *view = wl_container_of(listener, view, request_maximize);
	set_state(view, view->xdg->toplevel->requested.maximized, view->fullscreen);
	/* xdg-shell wants a configure in answer, even when nothing changes. */
	wlr_xdg_surface_schedule_configure(view->xdg);
}

static void handle_request_fullscreen(struct wl_listener *listener, void *data)
{
	struct slim_view *view = wl_container_of(listener, view, request_fullscreen);
	set_state(view, view->maximized, view->xdg->toplevel->requested.fullscreen);
	wlr_xdg_surface_schedule_configure(view->xdg);
}

/* Popups: placed in their parent's scene node, kept on the screen. */
static void create_popup(struct slim_server *server, struct wlr_xdg_surface *xdg)
{
	/*
	 * A popup without a parent: wlroots 0.15 has posted the protocol
	 * error already, and still announces the surface. Nothing to place.
	 */
	if (!xdg->popup->parent || !wlr_surface_is_xdg_surface(xdg->popup->parent)) {
		return;
	}
	struct wlr_xdg_surface *parent = wlr_xdg_surface_from_wlr_surface(xdg->popup->parent);
	if (!parent->data) {
		return; /* its parent has no place either */
	}
	xdg->data = wlr_scene_xdg_surface_create(parent->data, xdg);
	if (!xdg->data) {
		wl_resource_post_no_memory(xdg->resource);
		return;
	}
	/* wlroots wants the screen in the root toplevel's surface coordinates. */
	struct wlr_xdg_surface *root = parent;
	while (root->role == WLR_XDG_SURFACE_ROLE_POPUP) {
		root = wlr_xdg_surface_from_wlr_surface(root->popup->parent);
	}
	struct wlr_scene_node *node = root->data;
	struct slim_view *view = node ? node->data : NULL;
	if (!view) {
		return;
	}
	struct wlr_box geo;
	wlr_xdg_surface_get_geometry(root, &geo);
	struct wlr_box box = { geo.x - view->x, geo.y - view->y, (int)server->width,
		(int)server->height };
	wlr_xdg_popup_unconstrain_from_box(xdg->popup, &box);
}

void view_handle_new_xdg_surface(struct wl_listener *listener, void *data)
{
	struct slim_server *server = wl_container_of(listener, server, new_xdg_surface);
	struct wlr_xdg_surface *xdg = data;
	if (xdg->role == WLR_XDG_SURFACE_ROLE_POPUP) {
		create_popup(server, xdg);
		return;
	}
	if (xdg->role != WLR_XDG_SURFACE_ROLE_TOPLEVEL) {
		return;
	}
	struct slim_view *view = calloc(1, sizeof(*view));
	if (!view) {
		wl_resource_post_no_memory(xdg->resource);
		return;
	}
	view->server = server;
	view->xdg = xdg;
	view->node = wlr_scene_xdg_surface_create(&server->scene->node, xdg);
	if (!view->node) {
		free(view);
		wl_resource_post_no_memory(xdg->resource);
		return;
	}
	view->node->data = view;
	xdg->data = view->node;
	wl_list_init(&view->link);

	view->map.notify = handle_map;
	wl_signal_add(&xdg->events.map, &view->map);
	view->unmap.notify = handle_unmap;
	wl_signal_add(&xdg->events.unmap, &view->unmap);
	view->destroy.notify = handle_destroy;
	wl_signal_add(&xdg->events.destroy, &view->destroy);
	struct wlr_xdg_toplevel *toplevel = xdg->toplevel;
	view->request_move.notify = handle_request_move;
	wl_signal_add(&toplevel->events.request_move, &view->request_move);
	view->request_resize.notify = handle_request_resize;
	wl_signal_add(&toplevel->events.request_resize, &view->request_resize);
	view->request_maximize.notify = handle_request_maximize;
	wl_signal_add(&toplevel->events.request_maximize, &view->request_maximize);
	view->request_fullscreen.notify = handle_request_fullscreen;
	wl_signal_add(&toplevel->events.request_fullscreen, &view->request_fullscreen);
	/*
	 * wlroots 0.15 announces a toplevel at its first commit: what it asked
	 * for before (set_maximized, set_fullscreen) came with no one listening,
	 * and is only in `requested`. The first configure must already say it.
	 */
	if (toplevel->requested.maximized || toplevel->requested.fullscreen) {
		set_state(view, toplevel->requested.maximized, toplevel->requested.fullscreen);
	}
}
