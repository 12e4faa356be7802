/*
 * The small protocols everyday clients ask for, each with what makes it
 * mean something here:
 *
 *   xdg-decoration, KDE server-decoration  clients draw their own frames,
 *                     and slimland draws none, unless a client asks: then a
 *                     plain title bar to drag the window by (SDL asks, and
 *                     without a libdecor plugin loses its window otherwise)
 *   idle-inhibit, KDE idle  the console's input is activity; a client that
 *                     inhibits idle (a playing video) keeps the session awake,
 *                     and both are told to the session manager (`active`,
 *                     `inhibit`), whose reauth = idle:N counts from them
 *   xdg-activation    a client brings a window up with a token it was given
 *   keyboard-shortcuts-inhibit  the focused client that asks (a remote
 *                     desktop viewer, a game) gets Alt+Tab and the rest
 *   the clipboard     the selection and the primary selection a client sets
 *                     (the seat checks its serial)
 */
#include <stdlib.h>
#include <wlr/types/wlr_idle.h>
#include <wlr/types/wlr_idle_inhibit_v1.h>
#include <wlr/types/wlr_keyboard_shortcuts_inhibit_v1.h>
#include <wlr/types/wlr_data_device.h>
#include <wlr/types/wlr_primary_selection.h>
#include <wlr/types/wlr_scene.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_server_decoration.h>
#include <wlr/types/wlr_xdg_activation_v1.h>
#include <wlr/types/wlr_xdg_decoration_v1.h>
#include <wlr/util/log.h>
#include "shell-internal.h"

struct slim_protocols {
	struct slim_shell *shell;
	struct wl_list decorations; /* watch.link */
	struct wlr_idle *idle;
	struct wlr_keyboard_shortcuts_inhibit_manager_v1 *shortcuts_inhibit;
	int inhibitors;
	struct wl_listener new_decoration, new_idle_inhibitor, request_activate;
	struct wl_listener new_shortcuts_inhibitor;
	struct wl_listener request_set_selection, request_set_primary_selection;
};

/* A listener on an object's event and one on its end, freed at its end. */
struct watch {
	struct slim_protocols *p;
	void *object;
	struct wl_listener event, destroy;
	struct wl_list link; /* in a list of its kind, or alone */
};

static void watch_free(struct watch *w)
{
	wl_list_remove(&w->link);
	wl_list_remove(&w->event.link);
	wl_list_remove(&w->destroy.link);
	free(w);
}

static struct watch *watch_new(struct slim_protocols *p, void *object, struct wl_signal *event,
		wl_notify_func_t on_event, struct wl_signal *destroy, wl_notify_func_t on_destroy)
{
	struct watch *w = calloc(1, sizeof(*w));
	if (!w) {
		wlr_log(WLR_ERROR, "out of memory");
		return NULL;
	}
	w->p = p;
	w->object = object;
	wl_list_init(&w->link);
	w->event.notify = on_event;
	wl_list_init(&w->event.link);
	if (event) {
		wl_signal_add(event, &w->event);
	}
	w->destroy.notify = on_destroy;
	wl_signal_add(destroy, &w->destroy);
	return w;
}

/* --- decorations: the client's own, unless it asks for ours */

static bool wants_server_side(const struct wlr_xdg_toplevel_decoration_v1 *deco)
{
	return deco->requested_mode == WLR_XDG_TOPLEVEL_DECORATION_V1_MODE_SERVER_SIDE;
}

/* The view, once wlroots announced the toplevel (xdg.c sets xdg->data then). */
static struct slim_view *decorated_view(struct wlr_xdg_toplevel_decoration_v1 *deco)
{
	struct wlr_scene_node *node = deco->surface->data;
	return deco->surface->role == WLR_XDG_SURFACE_ROLE_TOPLEVEL && node ? node->data : NULL;
}

static void handle_decoration_mode(struct wl_listener *listener, void *data)
{
	struct watch *w = wl_container_of(listener, w, event);
	struct wlr_xdg_toplevel_decoration_v1 *deco = w->object;
	wlr_xdg_toplevel_decoration_v1_set_mode(deco, wants_server_side(deco) ?
		WLR_XDG_TOPLEVEL_DECORATION_V1_MODE_SERVER_SIDE :
		WLR_XDG_TOPLEVEL_DECORATION_V1_MODE_CLIENT_SIDE);
	struct slim_view *view = decorated_view(deco);
	if (view) {
		view_set_decorated(view, wants_server_side(deco));
	}
}

static void handle_decoration_destroy(struct wl_listener *listener, void *data)
{
	struct watch *w = wl_container_of(listener, w, destroy);
	struct slim_view *view = decorated_view(w->object);
	if (view) {
		view_set_decorated(view, false);
	}
	watch_free(w);
}

static void handle_new_decoration(struct wl_listener *listener, void *data)
{
	struct slim_protocols *p = wl_container_of(listener, p, new_decoration);
	struct wlr_xdg_toplevel_decoration_v1 *deco = data;
	struct watch *w = watch_new(p, deco, &deco->events.request_mode, handle_decoration_mode,
		&deco->events.destroy, handle_decoration_destroy);
	if (w) {
		wl_list_insert(&p->decorations, &w->link);
		handle_decoration_mode(&w->event, NULL);
	}
}

bool protocols_wants_titlebar(const struct slim_protocols *p, struct wlr_xdg_surface *xdg)
{
	struct watch *w;
	wl_list_for_each(w, &p->decorations, link) {
		struct wlr_xdg_toplevel_decoration_v1 *deco = w->object;
		if (deco->surface == xdg) {
			return wants_server_side(deco);
		}
	}
	return false;
}

/* --- idle */

static void set_inhibitors(struct slim_protocols *p, int delta)
{
	p->inhibitors += delta;
	wlr_idle_set_enabled(p->idle, p->shell->seat, p->inhibitors == 0);
	p->shell->handler->idle_inhibited(p->shell->data, p->inhibitors > 0);
	wlr_log(WLR_INFO, "idle: %s (%d inhibitor%s)", p->inhibitors ? "inhibited" : "allowed",
		p->inhibitors, p->inhibitors == 1 ? "" : "s");
}

static void handle_idle_inhibitor_destroy(struct wl_listener *listener, void *data)
{
	struct watch *w = wl_container_of(listener, w, destroy);
	set_inhibitors(w->p, -1);
	watch_free(w);
}

static void handle_new_idle_inhibitor(struct wl_listener *listener, void *data)
{
	struct slim_protocols *p = wl_container_of(listener, p, new_idle_inhibitor);
	struct wlr_idle_inhibitor_v1 *inhibitor = data;
	if (watch_new(p, inhibitor, NULL, NULL, &inhibitor->events.destroy,
			handle_idle_inhibitor_destroy)) {
		set_inhibitors(p, +1);
	}
}

void protocols_activity(struct slim_protocols *p)
{
	wlr_idle_notify_activity(p->idle, p->shell->seat);
	p->shell->handler->activity(p->shell->data);
}

/* --- activation */

static void handle_request_activate(struct wl_listener *listener, void *data)
{
	struct slim_protocols *p = wl_container_of(listener, p, request_activate);
	struct wlr_xdg_activation_v1_request_activate_event *event = data;
	/* the views list holds mapped windows only */
	view_focus(view_of_surface(p->shell, event->surface), event->surface);
}

/* --- keyboard shortcuts: the focused client's, if it asks */

static void handle_new_shortcuts_inhibitor(struct wl_listener *listener, void *data)
{
	struct slim_protocols *p = wl_container_of(listener, p, new_shortcuts_inhibitor);
	struct wlr_keyboard_shortcuts_inhibitor_v1 *inhibitor = data;
	if (inhibitor->surface == p->shell->seat->keyboard_state.focused_surface) {
		wlr_keyboard_shortcuts_inhibitor_v1_activate(inhibitor);
	}
}

void protocols_focus_changed(struct slim_protocols *p, struct wlr_surface *focused)
{
	struct wlr_keyboard_shortcuts_inhibitor_v1 *inhibitor;
	wl_list_for_each(inhibitor, &p->shortcuts_inhibit->inhibitors, link) {
		if (inhibitor->surface == focused && !inhibitor->active) {
			wlr_keyboard_shortcuts_inhibitor_v1_activate(inhibitor);
		} else if (inhibitor->surface != focused && inhibitor->active) {
			wlr_keyboard_shortcuts_inhibitor_v1_deactivate(inhibitor);
		}
	}
}

bool protocols_shortcuts_inhibited(const struct slim_protocols *p)
{
	struct wlr_keyboard_shortcuts_inhibitor_v1 *inhibitor;
	wl_list_for_each(inhibitor, &p->shortcuts_inhibit->inhibitors, link) {
		if (inhibitor->active) {
			return true;
		}
	}
	return false;
}

/* --- the clipboard */

static void handle_request_set_selection(struct wl_listener *listener, void *data)
{
	struct slim_protocols *p = wl_container_of(listener, p, request_set_selection);
	struct wlr_seat_request_set_selection_event *event = data;
	wlr_seat_set_selection(p->shell->seat, event->source, event->serial);
}

static void handle_request_set_primary_selection(struct wl_listener *listener, void *data)
{
	struct slim_protocols *p = wl_container_of(listener, p, request_set_primary_selection);
	struct wlr_seat_request_set_primary_selection_event *event = data;
	wlr_seat_set_primary_selection(p->shell->seat, event->source, event->serial);
}

struct slim_protocols *protocols_create(struct slim_shell *shell)
{
	struct slim_protocols *p = calloc(1, sizeof(*p));
	if (!p) {
		return NULL;
	}
	p->shell = shell;
	wl_list_init(&p->decorations);
	struct wl_display *d = shell->display;
	struct wlr_xdg_decoration_manager_v1 *deco = wlr_xdg_decoration_manager_v1_create(d);
	struct wlr_server_decoration_manager *kde_deco = wlr_server_decoration_manager_create(d);
	struct wlr_idle_inhibit_manager_v1 *inhibit = wlr_idle_inhibit_v1_create(d);
	struct wlr_xdg_activation_v1 *activation = wlr_xdg_activation_v1_create(d);
	p->idle = wlr_idle_create(d);
	p->shortcuts_inhibit = wlr_keyboard_shortcuts_inhibit_v1_create(d);
	if (!deco || !kde_deco || !inhibit || !activation || !p->idle || !p->shortcuts_inhibit) {
		free(p);
		return NULL;
	}
	wlr_server_decoration_manager_set_default_mode(kde_deco,
		WLR_SERVER_DECORATION_MANAGER_MODE_CLIENT);
	p->new_decoration.notify = handle_new_decoration;
	wl_signal_add(&deco->events.new_toplevel_decoration, &p->new_decoration);
	p->new_idle_inhibitor.notify = handle_new_idle_inhibitor;
	wl_signal_add(&inhibit->events.new_inhibitor, &p->new_idle_inhibitor);
	p->request_activate.notify = handle_request_activate;
	wl_signal_add(&activation->events.request_activate, &p->request_activate);
	p->new_shortcuts_inhibitor.notify = handle_new_shortcuts_inhibitor;
	wl_signal_add(&p->shortcuts_inhibit->events.new_inhibitor, &p->new_shortcuts_inhibitor);
	p->request_set_selection.notify = handle_request_set_selection;
	wl_signal_add(&shell->seat->events.request_set_selection, &p->request_set_selection);
	p->request_set_primary_selection.notify = handle_request_set_primary_selection;
	wl_signal_add(&shell->seat->events.request_set_primary_selection,
		&p->request_set_primary_selection);
	return p;
}

/* After the clients are gone (their objects' listeners went with them), before the display. */
void protocols_destroy(struct slim_protocols *p)
{
	if (!p) {
		return;
	}
	wl_list_remove(&p->new_decoration.link);
	wl_list_remove(&p->new_idle_inhibitor.link);
	wl_list_remove(&p->request_activate.link);
	wl_list_remove(&p->new_shortcuts_inhibitor.link);
	wl_list_remove(&p->request_set_selection.link);
	wl_list_remove(&p->request_set_primary_selection.link);
	free(p);
}
