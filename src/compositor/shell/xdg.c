/*
 * xdg-shell: toplevels become views (view.c), popups are placed in their
 * parent's scene node and kept on the screen.
 */
#include <stdlib.h>
#include <wlr/types/wlr_scene.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_xdg_shell.h>
#include <wlr/util/log.h>
#include "shell-internal.h"

struct slim_xdg_view {
	struct slim_view base;
	struct wlr_xdg_surface *xdg;
	struct wl_listener map, unmap, destroy, commit;
	struct wl_listener request_move, request_resize, request_maximize, request_fullscreen;
	struct wl_listener set_title;
};

static struct slim_xdg_view *xdg_view(struct slim_view *view)
{
	return (struct slim_xdg_view *)view;
}

static struct wlr_surface *xdg_surface(struct slim_view *view)
{
	return xdg_view(view)->xdg->surface;
}

static struct wlr_box xdg_geometry(struct slim_view *view)
{
	struct wlr_box geo;
	wlr_xdg_surface_get_geometry(xdg_view(view)->xdg, &geo);
	return geo;
}

static void xdg_set_size(struct slim_view *view, uint32_t width, uint32_t height)
{
	wlr_xdg_toplevel_set_size(xdg_view(view)->xdg, width, height);
}

static void xdg_set_activated(struct slim_view *view, bool activated)
{
	wlr_xdg_toplevel_set_activated(xdg_view(view)->xdg, activated);
}

static void xdg_set_state(struct slim_view *view, bool maximized, bool fullscreen)
{
	wlr_xdg_toplevel_set_maximized(xdg_view(view)->xdg, maximized);
	wlr_xdg_toplevel_set_fullscreen(xdg_view(view)->xdg, fullscreen);
}

static void xdg_set_resizing(struct slim_view *view, bool resizing)
{
	wlr_xdg_toplevel_set_resizing(xdg_view(view)->xdg, resizing);
}

static pid_t xdg_pid(struct slim_view *view)
{
	pid_t pid;
	wl_client_get_credentials(xdg_view(view)->xdg->client->client, &pid, NULL, NULL);
	return pid;
}

static const char *xdg_title(struct slim_view *view)
{
	return xdg_view(view)->xdg->toplevel->title;
}

static const char *xdg_app_id(struct slim_view *view)
{
	return xdg_view(view)->xdg->toplevel->app_id;
}

static void xdg_close(struct slim_view *view)
{
	wlr_xdg_toplevel_send_close(xdg_view(view)->xdg);
}

static const struct slim_view_impl xdg_impl = {
	.surface = xdg_surface,
	.geometry = xdg_geometry,
	.set_size = xdg_set_size,
	.set_activated = xdg_set_activated,
	.set_state = xdg_set_state,
	.set_resizing = xdg_set_resizing,
	.pid = xdg_pid,
	.close = xdg_close,
	.title = xdg_title,
	.app_id = xdg_app_id,
};

static void handle_map(struct wl_listener *listener, void *data)
{
	struct slim_xdg_view *view = wl_container_of(listener, view, map);
	view_map(&view->base);
}

static void handle_unmap(struct wl_listener *listener, void *data)
{
	struct slim_xdg_view *view = wl_container_of(listener, view, unmap);
	view_unmap(&view->base);
}

/* A window the client resized: its title bar, if it has one, follows. */
static void handle_commit(struct wl_listener *listener, void *data)
{
	struct slim_xdg_view *view = wl_container_of(listener, view, commit);
	if (view->base.titlebar) {
		view_update_titlebar(&view->base);
	}
}

static void handle_destroy(struct wl_listener *listener, void *data)
{
	struct slim_xdg_view *view = wl_container_of(listener, view, destroy);
	view_finish(&view->base);
	/* its decoration, if it goes after it, finds no view here */
	view->xdg->data = NULL;
	wl_list_remove(&view->map.link);
	wl_list_remove(&view->unmap.link);
	wl_list_remove(&view->destroy.link);
	wl_list_remove(&view->commit.link);
	wl_list_remove(&view->request_move.link);
	wl_list_remove(&view->request_resize.link);
	wl_list_remove(&view->request_maximize.link);
	wl_list_remove(&view->request_fullscreen.link);
	wl_list_remove(&view->set_title.link);
	free(view);
}

static void handle_set_title(struct wl_listener *listener, void *data)
{
	struct slim_xdg_view *view = wl_container_of(listener, view, set_title);
	toplevel_list_title_changed(&view->base);
}

static void handle_request_move(struct wl_listener *listener, void *data)
{
	struct slim_xdg_view *view = wl_container_of(listener, view, request_move);
	struct wlr_xdg_toplevel_move_event *event = data;
	grab_request(&view->base, SLIM_GRAB_MOVE, 0, event->serial);
}

static void handle_request_resize(struct wl_listener *listener, void *data)
{
	struct slim_xdg_view *view = wl_container_of(listener, view, request_resize);
	struct wlr_xdg_toplevel_resize_event *event = data;
	grab_request(&view->base, SLIM_GRAB_RESIZE, event->edges, event->serial);
}

static void handle_request_maximize(struct wl_listener *listener, void *data)
{
	struct slim_xdg_view *view = wl_container_of(listener, view, request_maximize);
	view_set_state(&view->base, view->xdg->toplevel->requested.maximized,
		view->base.fullscreen);
	/* xdg-shell wants a configure in answer, even when nothing changes. */
	wlr_xdg_surface_schedule_configure(view->xdg);
}

static void handle_request_fullscreen(struct wl_listener *listener, void *data)
{
	struct slim_xdg_view *view = wl_container_of(listener, view, request_fullscreen);
	view_set_state(&view->base, view->base.maximized,
		view->xdg->toplevel->requested.fullscreen);
	wlr_xdg_surface_schedule_configure(view->xdg);
}

/* Popups: placed in their parent's scene node, kept on the screen. */
static void create_popup(struct slim_shell *shell, struct wlr_xdg_surface *xdg)
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
	/* the head the window is on, in the coordinates of the window's surface */
	struct slim_shell_head *head = shell_head_of_view(view);
	if (!head) {
		return;
	}
	struct wlr_box geo = view_geometry(view);
	struct wlr_box box = { head->box.x + geo.x - view->x, head->box.y + geo.y - view->y,
		head->box.width, head->box.height };
	wlr_xdg_popup_unconstrain_from_box(xdg->popup, &box);
}

void xdg_handle_new_surface(struct wl_listener *listener, void *data)
{
	struct slim_shell *shell = wl_container_of(listener, shell, new_xdg_surface);
	struct wlr_xdg_surface *xdg = data;
	if (xdg->role == WLR_XDG_SURFACE_ROLE_POPUP) {
		create_popup(shell, xdg);
		return;
	}
	if (xdg->role != WLR_XDG_SURFACE_ROLE_TOPLEVEL) {
		return;
	}
	struct slim_xdg_view *view = calloc(1, sizeof(*view));
	struct wlr_scene_node *node = view ?
		wlr_scene_xdg_surface_create(&shell->windows->node, xdg) : NULL;
	if (!node) {
		free(view);
		wl_resource_post_no_memory(xdg->resource);
		return;
	}
	view->xdg = xdg;
	view_init(&view->base, shell, &xdg_impl, node);
	xdg->data = node;

	view->map.notify = handle_map;
	wl_signal_add(&xdg->events.map, &view->map);
	view->unmap.notify = handle_unmap;
	wl_signal_add(&xdg->events.unmap, &view->unmap);
	view->destroy.notify = handle_destroy;
	wl_signal_add(&xdg->events.destroy, &view->destroy);
	view->commit.notify = handle_commit;
	wl_signal_add(&xdg->surface->events.commit, &view->commit);
	struct wlr_xdg_toplevel *toplevel = xdg->toplevel;
	view->request_move.notify = handle_request_move;
	wl_signal_add(&toplevel->events.request_move, &view->request_move);
	view->request_resize.notify = handle_request_resize;
	wl_signal_add(&toplevel->events.request_resize, &view->request_resize);
	view->request_maximize.notify = handle_request_maximize;
	wl_signal_add(&toplevel->events.request_maximize, &view->request_maximize);
	view->request_fullscreen.notify = handle_request_fullscreen;
	wl_signal_add(&toplevel->events.request_fullscreen, &view->request_fullscreen);
	view->set_title.notify = handle_set_title;
	wl_signal_add(&toplevel->events.set_title, &view->set_title);
	/*
	 * wlroots 0.15 announces a toplevel at its first commit: what it asked
	 * for before (set_maximized, set_fullscreen) came with no one listening,
	 * and is only in `requested`. The first configure must already say it.
	 */
	/* a decoration asked for before this commit, as with the states below */
	view_set_decorated(&view->base, protocols_wants_titlebar(shell->protocols, xdg));
	if (toplevel->requested.maximized || toplevel->requested.fullscreen) {
		view_set_state(&view->base, toplevel->requested.maximized,
			toplevel->requested.fullscreen);
	}
}
