/* input-method-unstable-v2, version 1, described by hand: see input-method-v2.h. */
#include <stddef.h>
#include "input-method-v2.h"

static const struct wl_interface *none[] = { NULL, NULL, NULL, NULL, NULL };
static const struct wl_interface *get_input_method_types[] = {
	&wl_seat_interface, &zwp_input_method_v2_interface,
};
static const struct wl_interface *get_popup_types[] = {
	&zwp_input_popup_surface_v2_interface, &wl_surface_interface,
};
static const struct wl_interface *grab_keyboard_types[] = {
	&zwp_input_method_keyboard_grab_v2_interface,
};

static const struct wl_message manager_requests[] = {
	{ "get_input_method", "on", get_input_method_types },
	{ "destroy", "", none },
};

const struct wl_interface zwp_input_method_manager_v2_interface = {
	"zwp_input_method_manager_v2", 1, 2, manager_requests, 0, NULL,
};

static const struct wl_message im_requests[] = {
	{ "commit_string", "s", none },
	{ "set_preedit_string", "sii", none },
	{ "delete_surrounding_text", "uu", none },
	{ "commit", "u", none },
	{ "get_input_popup_surface", "no", get_popup_types },
	{ "grab_keyboard", "n", grab_keyboard_types },
	{ "destroy", "", none },
};

static const struct wl_message im_events[] = {
	{ "activate", "", none },
	{ "deactivate", "", none },
	{ "surrounding_text", "suu", none },
	{ "text_change_cause", "u", none },
	{ "content_type", "uu", none },
	{ "done", "", none },
	{ "unavailable", "", none },
};

const struct wl_interface zwp_input_method_v2_interface = {
	"zwp_input_method_v2", 1, 7, im_requests, 7, im_events,
};

static const struct wl_message popup_requests[] = {
	{ "destroy", "", none },
};

static const struct wl_message popup_events[] = {
	{ "text_input_rectangle", "iiii", none },
};

const struct wl_interface zwp_input_popup_surface_v2_interface = {
	"zwp_input_popup_surface_v2", 1, 1, popup_requests, 1, popup_events,
};

static const struct wl_message grab_requests[] = {
	{ "release", "", none },
};

static const struct wl_message grab_events[] = {
	{ "keymap", "uhu", none },
	{ "key", "uuuu", none },
	{ "modifiers", "uuuuu", none },
	{ "repeat_info", "ii", none },
};

const struct wl_interface zwp_input_method_keyboard_grab_v2_interface = {
	"zwp_input_method_keyboard_grab_v2", 1, 1, grab_requests, 4, grab_events,
};
