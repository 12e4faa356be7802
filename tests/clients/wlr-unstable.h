/*
 * The client side of three wlroots protocols that slim-misuse uses and
 * Debian ships no XML for (they live with wlroots): wlr-layer-shell
 * (version 1 of its requests), virtual-keyboard-unstable-v1 and
 * wlr-foreign-toplevel-management (version 1), described by hand, names,
 * signatures and opcodes as the protocols define them.
 */
#ifndef SLIM_TEST_WLR_UNSTABLE_H
#define SLIM_TEST_WLR_UNSTABLE_H

#include <wayland-client.h>

extern const struct wl_interface zwlr_layer_shell_v1_interface;
extern const struct wl_interface zwlr_layer_surface_v1_interface;
extern const struct wl_interface zwp_virtual_keyboard_manager_v1_interface;
extern const struct wl_interface zwp_virtual_keyboard_v1_interface;

enum { LAYER_SHELL_GET_LAYER_SURFACE };
enum {
	LAYER_SURFACE_SET_SIZE, LAYER_SURFACE_SET_ANCHOR, LAYER_SURFACE_SET_EXCLUSIVE_ZONE,
	LAYER_SURFACE_SET_MARGIN, LAYER_SURFACE_SET_KEYBOARD_INTERACTIVITY,
	LAYER_SURFACE_GET_POPUP, LAYER_SURFACE_ACK_CONFIGURE, LAYER_SURFACE_DESTROY,
};

/* zwlr_layer_surface_v1 events, in order */
struct layer_surface_listener {
	void (*configure)(void *data, struct wl_proxy *ls, uint32_t serial, uint32_t width,
		uint32_t height);
	void (*closed)(void *data, struct wl_proxy *ls);
};
enum { LAYER_SURFACE_ERROR_INVALID_SIZE = 1 }; /* zwlr_layer_surface_v1.error */
enum { LAYER_TOP = 2 };

enum { VIRTUAL_KEYBOARD_MANAGER_CREATE };
enum { VIRTUAL_KEYBOARD_KEYMAP, VIRTUAL_KEYBOARD_KEY };
enum { VIRTUAL_KEYBOARD_ERROR_NO_KEYMAP = 0 };

extern const struct wl_interface zwlr_foreign_toplevel_manager_v1_interface;
extern const struct wl_interface zwlr_foreign_toplevel_handle_v1_interface;

/* zwlr_foreign_toplevel_manager_v1 events, in order */
struct foreign_toplevel_manager_listener {
	void (*toplevel)(void *data, struct wl_proxy *manager, struct wl_proxy *handle);
	void (*finished)(void *data, struct wl_proxy *manager);
};

/* zwlr_foreign_toplevel_handle_v1 events of version 1, in order */
struct foreign_toplevel_handle_listener {
	void (*title)(void *data, struct wl_proxy *handle, const char *title);
	void (*app_id)(void *data, struct wl_proxy *handle, const char *app_id);
	void (*output_enter)(void *data, struct wl_proxy *handle, struct wl_output *output);
	void (*output_leave)(void *data, struct wl_proxy *handle, struct wl_output *output);
	void (*state)(void *data, struct wl_proxy *handle, struct wl_array *state);
	void (*done)(void *data, struct wl_proxy *handle);
	void (*closed)(void *data, struct wl_proxy *handle);
};
enum { FOREIGN_TOPLEVEL_HANDLE_DESTROY = 7 };

#endif
