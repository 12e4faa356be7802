/*
 * wlr-foreign-toplevel-management: the windows, for task bars and docks.
 * A mapped view has a handle with its title and app id, and says whether it
 * is focused, maximized or fullscreen; a task bar may ask to focus, close,
 * maximize or fullscreen it, which goes the way a click would.
 *
 * Titles follow the window, but at most once per TITLE_INTERVAL_MS: a
 * program may rename its window in a loop (an X11 one changes WM_NAME as
 * fast as the X server takes it), and passing each name on would be an
 * unbounded stream of events to every task bar, filling a slow reader's
 * buffer until libwayland disconnects it. The first change goes out at
 * once; later ones within the interval fold into the latest, sent when it
 * ends, so the last title always arrives.
 */
#include <stdlib.h>
#include <wlr/types/wlr_foreign_toplevel_management_v1.h>
#include <wlr/types/wlr_output.h>
#include <wlr/util/log.h>
#include "shell-internal.h"

#define TITLE_INTERVAL_MS 100

struct slim_toplevel {
	struct slim_view *view;
	struct wlr_foreign_toplevel_handle_v1 *handle;
	struct wl_listener activate, close, maximize, fullscreen;
	struct wl_event_source *title_timer;
	bool title_waiting; /* a title was sent less than an interval ago */
	bool title_pending; /* and it has changed since */
};

static void send_title(struct slim_toplevel *t)
{
	const char *title = t->view->impl->title ? t->view->impl->title(t->view) : NULL;
	wlr_foreign_toplevel_handle_v1_set_title(t->handle, title ? title : "");
}

static int handle_title_timer(void *data)
{
	struct slim_toplevel *t = data;
	t->title_waiting = t->title_pending;
	if (t->title_pending) {
		t->title_pending = false;
		send_title(t);
		wl_event_source_timer_update(t->title_timer, TITLE_INTERVAL_MS);
	}
	return 0;
}

void toplevel_list_title_changed(struct slim_view *view)
{
	struct slim_toplevel *t = view->toplevel;
	if (!t) {
		return; /* not mapped: toplevel_list_add reads the title */
	}
	if (t->title_waiting) {
		t->title_pending = true;
		return;
	}
	send_title(t);
	if (t->title_timer) {
		t->title_waiting = true;
		wl_event_source_timer_update(t->title_timer, TITLE_INTERVAL_MS);
	}
}

static void handle_activate(struct wl_listener *listener, void *data)
{
	struct slim_toplevel *t = wl_container_of(listener, t, activate);
	view_focus(t->view, t->view->impl->surface(t->view));
}

static void handle_close(struct wl_listener *listener, void *data)
{
	struct slim_toplevel *t = wl_container_of(listener, t, close);
	if (t->view->impl->close) {
		t->view->impl->close(t->view);
	}
}

static void handle_maximize(struct wl_listener *listener, void *data)
{
	struct slim_toplevel *t = wl_container_of(listener, t, maximize);
	struct wlr_foreign_toplevel_handle_v1_maximized_event *event = data;
	view_set_state(t->view, event->maximized, t->view->fullscreen);
}

static void handle_fullscreen(struct wl_listener *listener, void *data)
{
	struct slim_toplevel *t = wl_container_of(listener, t, fullscreen);
	struct wlr_foreign_toplevel_handle_v1_fullscreen_event *event = data;
	view_set_state(t->view, t->view->maximized, event->fullscreen);
}

void toplevel_list_add(struct slim_view *view)
{
	struct slim_shell *shell = view->shell;
	struct slim_toplevel *t = calloc(1, sizeof(*t));
	struct wlr_foreign_toplevel_handle_v1 *handle = t ?
		wlr_foreign_toplevel_handle_v1_create(shell->toplevels) : NULL;
	if (!handle) {
		free(t);
		wlr_log(WLR_ERROR, "out of memory: a window missing from task bars");
		return;
	}
	t->view = view;
	t->handle = handle;
	view->toplevel = t;
	/* without a timer (no memory) titles go out as they change, unthrottled */
	t->title_timer = wl_event_loop_add_timer(wl_display_get_event_loop(shell->display),
		handle_title_timer, t);
	const char *app_id = view->impl->app_id ? view->impl->app_id(view) : NULL;
	send_title(t);
	wlr_foreign_toplevel_handle_v1_set_app_id(handle, app_id ? app_id : "");
	if (shell->output) {
		wlr_foreign_toplevel_handle_v1_output_enter(handle, shell->output);
	}
	t->activate.notify = handle_activate;
	wl_signal_add(&handle->events.request_activate, &t->activate);
	t->close.notify = handle_close;
	wl_signal_add(&handle->events.request_close, &t->close);
	t->maximize.notify = handle_maximize;
	wl_signal_add(&handle->events.request_maximize, &t->maximize);
	t->fullscreen.notify = handle_fullscreen;
	wl_signal_add(&handle->events.request_fullscreen, &t->fullscreen);
	toplevel_list_update(view);
}

void toplevel_list_update(struct slim_view *view)
{
	struct slim_toplevel *t = view->toplevel;
	if (t) {
		wlr_foreign_toplevel_handle_v1_set_activated(t->handle, view->shell->focused == view);
		wlr_foreign_toplevel_handle_v1_set_maximized(t->handle, view->maximized);
		wlr_foreign_toplevel_handle_v1_set_fullscreen(t->handle, view->fullscreen);
	}
}

void toplevel_list_remove(struct slim_view *view)
{
	struct slim_toplevel *t = view->toplevel;
	if (!t) {
		return;
	}
	wl_list_remove(&t->activate.link);
	wl_list_remove(&t->close.link);
	wl_list_remove(&t->maximize.link);
	wl_list_remove(&t->fullscreen.link);
	if (t->title_timer) {
		wl_event_source_remove(t->title_timer);
	}
	wlr_foreign_toplevel_handle_v1_destroy(t->handle);
	free(t);
	view->toplevel = NULL;
}
