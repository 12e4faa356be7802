/*
 * The shell made and ended. The heads it places windows on are desk.c's,
 * told by the session.
 */
#include <stdlib.h>
#include <wlr/types/wlr_foreign_toplevel_management_v1.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_output_layout.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_xdg_shell.h>
#include <wlr/util/log.h>
#include "shell-internal.h"
#include "slim-alloc.h"

struct slim_shell *slim_shell_create(struct wl_display *display, struct wlr_backend *backend,
		struct wlr_scene *scene, struct wlr_output_layout *layout,
		struct wlr_compositor *compositor, const struct slim_shell_handler *handler,
		void *data)
{
	struct slim_shell *shell = slim_znew(struct slim_shell);
	shell->display = display;
	shell->scene = scene;
	shell->layout = layout;
	shell->handler = handler;
	shell->data = data;
	wl_list_init(&shell->views);
	/* slim_shell_destroy() removes these whether or not creation got that far */
	struct wl_listener *listeners[] = {
		&shell->new_xdg_surface, &shell->new_layer_surface,
	};
	for (size_t i = 0; i < sizeof(listeners) / sizeof(listeners[0]); i++) {
		wl_list_init(&listeners[i]->link);
	}
	if (!layers_init(shell)) {
		slim_shell_destroy(shell);
		return NULL;
	}
	struct wlr_xdg_shell *xdg_shell = wlr_xdg_shell_create(display);
	shell->seat = wlr_seat_create(display, "seat0");
	if (!xdg_shell || !shell->seat) {
		wlr_log(WLR_ERROR, "cannot create the shell or the seat");
		slim_shell_destroy(shell);
		return NULL;
	}
	shell->new_xdg_surface.notify = xdg_handle_new_surface;
	wl_signal_add(&xdg_shell->events.new_surface, &shell->new_xdg_surface);
	shell->protocols = protocols_create(shell);
	shell->constraints = constraints_create(shell);
	shell->virtual_input = virtual_input_create(shell);
	shell->text_inputs = text_inputs_create(shell);
	shell->toplevels = wlr_foreign_toplevel_manager_v1_create(display);
	if (!shell->protocols || !shell->constraints || !shell->virtual_input ||
			!shell->text_inputs || !shell->toplevels) {
		wlr_log(WLR_ERROR, "cannot create the Wayland globals");
		slim_shell_destroy(shell);
		return NULL;
	}
	/* without it X11 programs find no DISPLAY; Wayland ones do not care */
	shell->xwayland = xwayland_create(shell, compositor);
	shell->input = console_input_create(shell, backend);
	if (!shell->input) {
		slim_shell_destroy(shell);
		return NULL;
	}
	return shell;
}

void slim_shell_destroy(struct slim_shell *shell)
{
	if (!shell) {
		return;
	}
	xwayland_destroy(shell->xwayland);
	wl_display_destroy_clients(shell->display);
	wl_list_remove(&shell->new_xdg_surface.link);
	wl_list_remove(&shell->new_layer_surface.link);
	protocols_destroy(shell->protocols);
	constraints_destroy(shell->constraints);
	virtual_input_destroy(shell->virtual_input);
	text_inputs_destroy(shell->text_inputs);
	console_input_destroy(shell->input);
	free(shell);
}

const char *slim_shell_x11_display(const struct slim_shell *shell)
{
	return shell ? xwayland_display_name(shell->xwayland) : NULL;
}
