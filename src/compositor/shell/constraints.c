/*
 * Pointer lock and confinement (pointer-constraints) and relative motion
 * (relative-pointer), for games and 3D programs that capture the mouse.
 * A constraint is active while its surface has the pointer. Locked, the
 * pointer stays where it is and the client gets only relative motion;
 * confined, the pointer stays inside the surface. Every motion from the
 * console also goes out as relative motion: what the console says it
 * moved, or the difference between two absolute positions.
 */
#include <stdlib.h>
#include <wlr/types/wlr_pointer_constraints_v1.h>
#include <wlr/types/wlr_relative_pointer_v1.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/util/log.h>
#include "shell-internal.h"
#include "slim-alloc.h"
#include "slim-log.h"

struct slim_constraints {
	struct slim_shell *shell;
	struct wlr_pointer_constraints_v1 *manager;
	struct wlr_relative_pointer_manager_v1 *relative;
	struct wlr_pointer_constraint_v1 *active;
	struct wl_listener new_constraint, active_destroy;
};

static void deactivate(struct slim_constraints *c)
{
	if (c->active) {
		wlr_pointer_constraint_v1_send_deactivated(c->active);
		wl_list_remove(&c->active_destroy.link);
		wl_list_init(&c->active_destroy.link);
		c->active = NULL;
	}
}

static void handle_active_destroy(struct wl_listener *listener, void *data)
{
	struct slim_constraints *c = wl_container_of(listener, c, active_destroy);
	wl_list_remove(&c->active_destroy.link);
	wl_list_init(&c->active_destroy.link);
	c->active = NULL;
}

static void activate(struct slim_constraints *c, struct wlr_pointer_constraint_v1 *constraint)
{
	if (c->active == constraint) {
		return;
	}
	deactivate(c);
	if (!constraint) {
		return;
	}
	c->active = constraint;
	wl_signal_add(&constraint->events.destroy, &c->active_destroy);
	wlr_pointer_constraint_v1_send_activated(constraint);
}

void constraints_pointer_focus(struct slim_constraints *c, struct wlr_surface *surface)
{
	activate(c, surface ? wlr_pointer_constraints_v1_constraint_for_surface(c->manager,
		surface, c->shell->seat) : NULL);
}

static void handle_new_constraint(struct wl_listener *listener, void *data)
{
	struct slim_constraints *c = wl_container_of(listener, c, new_constraint);
	struct wlr_pointer_constraint_v1 *constraint = data;
	if (constraint->surface == c->shell->seat->pointer_state.focused_surface) {
		activate(c, constraint);
	}
}

bool constraints_move(struct slim_constraints *c, double *x, double *y, double dx, double dy)
{
	struct slim_shell *shell = c->shell;
	wlr_relative_pointer_manager_v1_send_relative_motion(c->relative, shell->seat,
		(uint64_t)slim_now_us(), dx, dy, dx, dy);
	if (!c->active) {
		return false;
	}
	if (c->active->type == WLR_POINTER_CONSTRAINT_V1_LOCKED) {
		*x = shell->pointer_x;
		*y = shell->pointer_y;
		return true;
	}
	/* confined: inside the surface, where it is on the screen */
	struct slim_view *view;
	wl_list_for_each(view, &shell->views, link) {
		struct wlr_surface *s = view->impl->surface(view);
		if (view->mapped && s == wlr_surface_get_root_surface(c->active->surface)) {
			struct wlr_box geo = view_geometry(view);
			double x0 = view->x - geo.x, y0 = view->y - geo.y;
			double x1 = x0 + s->current.width - 1, y1 = y0 + s->current.height - 1;
			*x = *x < x0 ? x0 : *x > x1 ? x1 : *x;
			*y = *y < y0 ? y0 : *y > y1 ? y1 : *y;
			return true;
		}
	}
	return false;
}

struct slim_constraints *constraints_create(struct slim_shell *shell)
{
	struct slim_constraints *c = slim_znew(struct slim_constraints);
	c->shell = shell;
	c->manager = wlr_pointer_constraints_v1_create(shell->display);
	c->relative = wlr_relative_pointer_manager_v1_create(shell->display);
	if (!c->manager || !c->relative) {
		free(c);
		return NULL;
	}
	wl_list_init(&c->active_destroy.link);
	c->active_destroy.notify = handle_active_destroy;
	c->new_constraint.notify = handle_new_constraint;
	wl_signal_add(&c->manager->events.new_constraint, &c->new_constraint);
	return c;
}

void constraints_destroy(struct slim_constraints *c)
{
	if (!c) {
		return;
	}
	wl_list_remove(&c->new_constraint.link);
	wl_list_remove(&c->active_destroy.link);
	free(c);
}
