/*
 * Interactive move and resize: started by a client's request (a drag on
 * its title bar) or by the modifier plus a drag anywhere in a window, and
 * ended by releasing the button.
 */
#include <wlr/types/wlr_seat.h>
#include <wlr/util/edges.h>
#include "shell-internal.h"

void grab_begin(struct slim_view *view, enum slim_grab_mode mode, uint32_t edges)
{
	struct slim_shell *shell = view->shell;
	if (view->fullscreen || !view->mapped) {
		return;
	}
	struct wlr_box geo = view_geometry(view);
	shell->grab = (struct slim_grab){
		.mode = mode,
		.view = view,
		.start_x = shell->pointer_x,
		.start_y = shell->pointer_y,
		.start_box = { view->x, view->y, geo.width, geo.height },
		.edges = edges,
	};
	if (mode == SLIM_GRAB_RESIZE) {
		view->impl->set_resizing(view, true);
	}
}

/*
 * A client's own request (a drag on its title bar): only while the button
 * that pressed on it is down, as tinywl checks, so that a client cannot
 * grab the pointer whenever it likes.
 */
void grab_request(struct slim_view *view, enum slim_grab_mode mode, uint32_t edges,
		uint32_t serial)
{
	struct wlr_seat *seat = view->shell->seat;
	struct wlr_surface *focus = seat->pointer_state.focused_surface;
	if (!focus || wlr_surface_get_root_surface(focus) != view->impl->surface(view) ||
			!wlr_seat_validate_pointer_grab_serial(seat, focus, serial)) {
		return;
	}
	grab_begin(view, mode, edges);
}

void grab_end(struct slim_shell *shell)
{
	struct slim_grab *grab = &shell->grab;
	if (grab->mode == SLIM_GRAB_RESIZE && grab->view) {
		grab->view->impl->set_resizing(grab->view, false);
	}
	*grab = (struct slim_grab){ .mode = SLIM_GRAB_NONE };
}

static void grab_resize(struct slim_shell *shell)
{
	struct slim_grab *grab = &shell->grab;
	int32_t dx = (int32_t)(shell->pointer_x - grab->start_x);
	int32_t dy = (int32_t)(shell->pointer_y - grab->start_y);
	struct wlr_box b = grab->start_box;
	int32_t left = b.x, right = b.x + b.width, top = b.y, bottom = b.y + b.height;
	if (grab->edges & WLR_EDGE_LEFT) {
		left = left + dx < right - 1 ? left + dx : right - 1;
	} else if (grab->edges & WLR_EDGE_RIGHT) {
		right = right + dx > left + 1 ? right + dx : left + 1;
	}
	if (grab->edges & WLR_EDGE_TOP) {
		top = top + dy < bottom - 1 ? top + dy : bottom - 1;
	} else if (grab->edges & WLR_EDGE_BOTTOM) {
		bottom = bottom + dy > top + 1 ? bottom + dy : top + 1;
	}
	struct slim_view *view = grab->view;
	view_move_to(view, left, top);
	view->impl->set_size(view, (uint32_t)(right - left), (uint32_t)(bottom - top));
}

bool grab_motion(struct slim_shell *shell)
{
	struct slim_grab *grab = &shell->grab;
	switch (grab->mode) {
	case SLIM_GRAB_MOVE:
		view_move_to(grab->view,
			grab->start_box.x + (int32_t)(shell->pointer_x - grab->start_x),
			grab->start_box.y + (int32_t)(shell->pointer_y - grab->start_y));
		return true;
	case SLIM_GRAB_RESIZE:
		grab_resize(shell);
		return true;
	default:
		return false;
	}
}
