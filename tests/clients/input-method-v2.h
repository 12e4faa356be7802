/*
 * The client side of input-method-unstable-v2 that slim-im uses. Debian
 * ships no XML for this protocol to generate it from (it lives with
 * wlroots), so the interfaces are described here by hand: names,
 * signatures and opcodes as the protocol defines them, version 1.
 */
#ifndef SLIM_TEST_INPUT_METHOD_V2_H
#define SLIM_TEST_INPUT_METHOD_V2_H

#include <stdint.h>
#include <wayland-client.h>

extern const struct wl_interface zwp_input_method_manager_v2_interface;
extern const struct wl_interface zwp_input_method_v2_interface;
extern const struct wl_interface zwp_input_popup_surface_v2_interface;
extern const struct wl_interface zwp_input_method_keyboard_grab_v2_interface;

/* zwp_input_method_manager_v2 requests */
enum { IM_MANAGER_GET_INPUT_METHOD, IM_MANAGER_DESTROY };
/* zwp_input_method_v2 requests */
enum {
	IM_COMMIT_STRING, IM_SET_PREEDIT_STRING, IM_DELETE_SURROUNDING_TEXT, IM_COMMIT,
	IM_GET_INPUT_POPUP_SURFACE, IM_GRAB_KEYBOARD, IM_DESTROY,
};
/* zwp_input_method_keyboard_grab_v2 requests */
enum { IM_GRAB_RELEASE };

/* zwp_input_method_v2 events, in order */
struct im_listener {
	void (*activate)(void *data, struct wl_proxy *im);
	void (*deactivate)(void *data, struct wl_proxy *im);
	void (*surrounding_text)(void *data, struct wl_proxy *im, const char *text,
		uint32_t cursor, uint32_t anchor);
	void (*text_change_cause)(void *data, struct wl_proxy *im, uint32_t cause);
	void (*content_type)(void *data, struct wl_proxy *im, uint32_t hint, uint32_t purpose);
	void (*done)(void *data, struct wl_proxy *im);
	void (*unavailable)(void *data, struct wl_proxy *im);
};

/* zwp_input_method_keyboard_grab_v2 events, in order */
struct im_grab_listener {
	void (*keymap)(void *data, struct wl_proxy *grab, uint32_t format, int32_t fd,
		uint32_t size);
	void (*key)(void *data, struct wl_proxy *grab, uint32_t serial, uint32_t time,
		uint32_t key, uint32_t state);
	void (*modifiers)(void *data, struct wl_proxy *grab, uint32_t serial, uint32_t depressed,
		uint32_t latched, uint32_t locked, uint32_t group);
	void (*repeat_info)(void *data, struct wl_proxy *grab, int32_t rate, int32_t delay);
};

#endif
