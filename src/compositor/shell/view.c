/*
 * Windows, whatever made them (xdg.c: Wayland toplevels; xwayland.c: X11
 * windows): stacking, focus, placement, maximize and fullscreen. Click to
 * focus and raise; maximize and fullscreen fill the console's screen and
 * follow it when it changes size; a key cycles through windows. When a
 * window moves, the session is told (window_moved): its encoder sends the
 * move as a COPY hint, so the console moves pixels it already has instead
 * of receiving them again. Focus is told too: the cgroup policy puts the
 * focused client first.
 */
#include <stdlib.h>
#include <wlr/types/wlr_scene.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/util/log.h>
#include "geometry.h"
#include "shell-internal.h"

struct wlr_box view_geometry(struct slim_view *view)
{
	return geo_box(view->impl->geometry(view));
}

struct wlr_box view_box(struct slim_view *view)
{
	struct wlr_box geo = view_geometry(view);
	return (struct wlr_box){ view->x, view->y, geo.width, geo.height };
}

/* Tells the session, whose encoder sends it as a COPY hint. */
static void note_move(struct slim_view *view, int32_t dx, int32_t dy)
{
	struct wlr_box geo = view_geometry(view);
	struct wlr_surface *surface = view->impl->surface(view);
	/* The whole surface, shadows and all: that is what moved on screen. */
	struct wlr_box box = geo_box((struct wlr_box){ view->x - geo.x, view->y - geo.y,
		surface->current.width, surface->current.height });
	if (box.width > 0 && box.height > 0) {
		view->shell->handler->window_moved(view->shell->data, box, dx, dy);
	}
}

void view_move_to(struct slim_view *view, int32_t x, int32_t y)
{
	if (x == view->x && y == view->y) {
		return;
	}
	if (view->mapped) {
		note_move(view, x - view->x, y - view->y);
	}
	view->x = x;
	view->y = y;
	/* the node puts the window geometry's corner at its origin */
	wlr_scene_node_set_position(view->node, x, y);
	if (view->impl->moved) {
		view->impl->moved(view);
	}
}

void view_focus(struct slim_view *view, struct wlr_surface *surface)
{
	if (!view) {
		return;
	}
	struct slim_shell *shell = view->shell;
	struct wlr_seat *seat = shell->seat;
	struct wlr_surface *target = view->impl->surface(view);
	if (shell->focused == view && seat->keyboard_state.focused_surface == target) {
		return;
	}
	struct slim_view *previous = shell->focused;
	if (previous && previous != view) {
		previous->impl->set_activated(previous, false);
	}
	shell->focused = view;
	if (previous && previous != view) {
		toplevel_list_update(previous);
	}
	toplevel_list_update(view);
	wlr_scene_node_raise_to_top(view->node);
	wl_list_remove(&view->link);
	wl_list_insert(&shell->views, &view->link);
	view->impl->set_activated(view, true);
	shell->handler->focus(shell->data, view->impl->pid(view));
	struct wlr_keyboard *kb = wlr_seat_get_keyboard(seat);
	if (kb) {
		wlr_seat_keyboard_notify_enter(seat, target, kb->keycodes, kb->num_keycodes,
			&kb->modifiers);
	}
	protocols_focus_changed(shell->protocols, target);
}

struct slim_view *view_at(struct slim_shell *shell, double x, double y,
		struct wlr_surface **surface, double *sx, double *sy)
{
	struct wlr_scene_node *node = wlr_scene_node_at(&shell->scene->node, x, y, sx, sy);
	*surface = NULL;
	if (node && node->type == WLR_SCENE_NODE_RECT && node->data) {
		return node->data; /* a title bar */
	}
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
void view_cycle(struct slim_shell *shell)
{
	if (wl_list_length(&shell->views) < 2) {
		return;
	}
	struct slim_view *last = wl_container_of(shell->views.prev, last, link);
	view_focus(last, last->impl->surface(last));
}

void view_update_titlebar(struct slim_view *view)
{
	if (view->titlebar) {
		struct wlr_box geo = view_geometry(view);
		wlr_scene_rect_set_size(view->titlebar, geo.width, VIEW_TITLEBAR_H);
		wlr_scene_node_set_position(&view->close_button->node,
			geo.width - VIEW_TITLEBAR_H + 4, 4);
		wlr_scene_node_set_enabled(&view->titlebar->node, !view->fullscreen);
	}
}

/* Its head, whole (fullscreen) or what the panels leave of it (maximized). */
static void fill_output(struct slim_view *view)
{
	struct slim_shell_head *head = shell_head_of_view(view);
	if (!head) {
		return; /* no head yet: the session's first one places it */
	}
	/* a maximized window keeps its title bar on the screen */
	if (view->fullscreen) {
		view_move_to(view, head->box.x, head->box.y);
		view->impl->set_size(view, (uint32_t)head->box.width, (uint32_t)head->box.height);
		return;
	}
	/* maximized: what the panels leave, the title bar (if any) in it */
	struct wlr_box area = head->usable;
	int32_t top = view->titlebar ? VIEW_TITLEBAR_H : 0;
	view_move_to(view, area.x, area.y + top);
	view->impl->set_size(view, (uint32_t)area.width,
		(uint32_t)geo_clamp((int64_t)area.height - top, 1, area.height));
}

void view_set_decorated(struct slim_view *view, bool decorated)
{
	if (decorated == (view->titlebar != NULL)) {
		return;
	}
	if (!decorated) {
		wlr_scene_node_destroy(&view->titlebar->node); /* the button with it */
		view->titlebar = view->close_button = NULL;
		return;
	}
	static const float colour[4] = { 0.25f, 0.31f, 0.40f, 1.0f };
	static const float close_colour[4] = { 0.75f, 0.30f, 0.25f, 1.0f };
	view->titlebar = wlr_scene_rect_create(view->node, 1, VIEW_TITLEBAR_H, colour);
	view->close_button = view->titlebar ? wlr_scene_rect_create(&view->titlebar->node,
		VIEW_TITLEBAR_H - 8, VIEW_TITLEBAR_H - 8, close_colour) : NULL;
	if (!view->close_button) {
		wlr_scene_node_destroy(view->titlebar ? &view->titlebar->node : NULL);
		view->titlebar = NULL;
		return; /* undecorated, then */
	}
	view->titlebar->node.data = view;
	view->close_button->node.data = view;
	wlr_scene_node_set_position(&view->titlebar->node, 0, -VIEW_TITLEBAR_H);
	view_update_titlebar(view);
}

void view_titlebar_click(struct slim_view *view, double x)
{
	struct wlr_box geo = view_geometry(view);
	if (x >= geo.width - VIEW_TITLEBAR_H && view->impl->close) {
		view->impl->close(view);
		return;
	}
	grab_begin(view, SLIM_GRAB_MOVE, 0);
}

struct slim_view *view_of_surface(struct slim_shell *shell, struct wlr_surface *surface)
{
	struct slim_view *view;
	wl_list_for_each(view, &shell->views, link) {
		if (view->impl->surface(view) == surface) {
			return view;
		}
	}
	return NULL;
}

void views_fit_output(struct slim_shell *shell)
{
	struct slim_view *view;
	wl_list_for_each(view, &shell->views, link) {
		if (view->maximized || view->fullscreen) {
			fill_output(view);
		}
	}
}

void views_rescue(struct slim_shell *shell)
{
	struct slim_view *view;
	wl_list_for_each(view, &shell->views, link) {
		struct wlr_box box = view_box(view);
		struct slim_shell_head *head = shell_head_of_view(view);
		if (!head || wlr_box_intersection(&(struct wlr_box){ 0 }, &box, &head->box)) {
			continue;
		}
		/* its head is gone: onto the nearest, top left of what panels leave */
		wlr_log(WLR_INFO, "shell: a window moves to %s, its head gone", head->output->name);
		int32_t top = view->titlebar ? VIEW_TITLEBAR_H : 0;
		view_move_to(view, head->usable.x, head->usable.y + top);
		view->saved.x = head->usable.x;
		view->saved.y = head->usable.y + top;
	}
}

void view_set_state(struct slim_view *view, bool maximized, bool fullscreen)
{
	bool was = view->maximized || view->fullscreen;
	bool will = maximized || fullscreen;
	if (will && !was) {
		view->saved = view_box(view);
	}
	view->maximized = maximized;
	view->fullscreen = fullscreen;
	view->impl->set_state(view, maximized, fullscreen);
	view_update_titlebar(view);
	toplevel_list_update(view);
	if (will) {
		fill_output(view);
	} else if (was) {
		view_move_to(view, view->saved.x, view->saved.y);
		view->impl->set_size(view, (uint32_t)view->saved.width, (uint32_t)view->saved.height);
	}
}

void view_init(struct slim_view *view, struct slim_shell *shell,
		const struct slim_view_impl *impl, struct wlr_scene_node *node)
{
	view->shell = shell;
	view->impl = impl;
	view->node = node;
	node->data = view;
	wl_list_init(&view->link);
}

void view_map(struct slim_view *view)
{
	struct slim_shell *shell = view->shell;
	/* New windows cascade from the top left of what panels leave, clear of its edges. */
	int n = wl_list_length(&shell->views);
	/* on the head with the pointer */
	struct slim_shell_head *head = shell_head_at(shell, shell->pointer_x, shell->pointer_y);
	struct wlr_box box = view_box(view), area = head ? head->usable : (struct wlr_box){ 0 };
	int32_t top = view->titlebar ? VIEW_TITLEBAR_H : 0;
	int32_t x = 32 + 32 * (n % 8), y = 32 + 32 * (n % 8) + top;
	if (x + box.width > area.width) {
		x = box.width < area.width ? (area.width - box.width) / 2 : 0;
	}
	if (y + box.height > area.height) {
		y = box.height + top < area.height ? (area.height - box.height + top) / 2 : top;
	}
	x += area.x;
	y += area.y;
	if (!view->maximized && !view->fullscreen) {
		view_move_to(view, x, y);
	} else if (head) {
		/* asked for before it mapped: on the pointer's head, not where it was made */
		view_move_to(view, head->box.x, head->box.y);
		fill_output(view);
	}
	view_update_titlebar(view);
	/* Mapped only now: placing a new window is no move for the console to copy. */
	view->mapped = true;
	wl_list_insert(&shell->views, &view->link);
	toplevel_list_add(view);
	view_focus(view, view->impl->surface(view));
	input_pointer_refresh(shell, 0);
}

/* Unmapped or gone: no grab, focus or list keeps it; focus goes to the next window down. */
void view_unmap(struct slim_view *view)
{
	struct slim_shell *shell = view->shell;
	bool was_mapped = view->mapped;
	view->mapped = false;
	toplevel_list_remove(view);
	if (shell->grab.view == view) {
		grab_end(shell);
	}
	wl_list_remove(&view->link);
	wl_list_init(&view->link);
	if (shell->focused == view) {
		shell->focused = NULL;
		if (!wl_list_empty(&shell->views)) {
			struct slim_view *next = wl_container_of(shell->views.next, next, link);
			view_focus(next, next->impl->surface(next));
		} else {
			wlr_seat_keyboard_clear_focus(shell->seat);
		}
	}
	if (was_mapped) {
		input_pointer_refresh(shell, 0);
	}
}

void view_finish(struct slim_view *view)
{
	view_unmap(view);
	wl_list_remove(&view->link);
}
