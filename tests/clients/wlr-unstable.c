/*
 * wlr-layer-shell, virtual-keyboard-unstable-v1 and
 * wlr-foreign-toplevel-management, described by hand: see wlr-unstable.h.
 */
#include <stddef.h>
#include "wlr-unstable.h"

static const struct wl_interface *none[] = { NULL, NULL, NULL, NULL, NULL };
static const struct wl_interface *get_layer_surface_types[] = {
	&zwlr_layer_surface_v1_interface, &wl_surface_interface, &wl_output_interface, NULL, NULL,
};
static const struct wl_interface *create_keyboard_types[] = {
	&wl_seat_interface, &zwp_virtual_keyboard_v1_interface,
};

static const struct wl_interface *new_handle_types[] = {
	&zwlr_foreign_toplevel_handle_v1_interface,
};
static const struct wl_interface *output_types[] = { &wl_output_interface };
static const struct wl_interface *activate_types[] = { &wl_seat_interface };
static const struct wl_interface *set_rectangle_types[] = {
	&wl_surface_interface, NULL, NULL, NULL, NULL,
};

static const struct wl_message layer_shell_requests[] = {
	{ "get_layer_surface", "no?ous", get_layer_surface_types },
	{ "destroy", "3", none },
};

const struct wl_interface zwlr_layer_shell_v1_interface = {
	"zwlr_layer_shell_v1", 4, 2, layer_shell_requests, 0, NULL,
};

static const struct wl_message layer_surface_requests[] = {
	{ "set_size", "uu", none },
	{ "set_anchor", "u", none },
	{ "set_exclusive_zone", "i", none },
	{ "set_margin", "iiii", none },
	{ "set_keyboard_interactivity", "u", none },
	{ "get_popup", "o", none },
	{ "ack_configure", "u", none },
	{ "destroy", "", none },
	{ "set_layer", "2u", none },
};

static const struct wl_message layer_surface_events[] = {
	{ "configure", "uuu", none },
	{ "closed", "", none },
};

const struct wl_interface zwlr_layer_surface_v1_interface = {
	"zwlr_layer_surface_v1", 4, 9, layer_surface_requests, 2, layer_surface_events,
};

static const struct wl_message keyboard_manager_requests[] = {
	{ "create_virtual_keyboard", "on", create_keyboard_types },
};

const struct wl_interface zwp_virtual_keyboard_manager_v1_interface = {
	"zwp_virtual_keyboard_manager_v1", 1, 1, keyboard_manager_requests, 0, NULL,
};

static const struct wl_message keyboard_requests[] = {
	{ "keymap", "uhu", none },
	{ "key", "uuu", none },
	{ "modifiers", "uuuu", none },
	{ "destroy", "1", none },
};

const struct wl_interface zwp_virtual_keyboard_v1_interface = {
	"zwp_virtual_keyboard_v1", 1, 4, keyboard_requests, 0, NULL,
};

static const struct wl_message toplevel_manager_requests[] = {
	{ "stop", "", none },
};

static const struct wl_message toplevel_manager_events[] = {
	{ "toplevel", "n", new_handle_types },
	{ "finished", "", none },
};

const struct wl_interface zwlr_foreign_toplevel_manager_v1_interface = {
	"zwlr_foreign_toplevel_manager_v1", 1, 1, toplevel_manager_requests,
	2, toplevel_manager_events,
};

/* version 1: no set_fullscreen, unset_fullscreen or parent */
static const struct wl_message toplevel_handle_requests[] = {
	{ "set_maximized", "", none },
	{ "unset_maximized", "", none },
	{ "set_minimized", "", none },
	{ "unset_minimized", "", none },
	{ "activate", "o", activate_types },
	{ "close", "", none },
	{ "set_rectangle", "oiiii", set_rectangle_types },
	{ "destroy", "", none },
};

static const struct wl_message toplevel_handle_events[] = {
	{ "title", "s", none },
	{ "app_id", "s", none },
	{ "output_enter", "o", output_types },
	{ "output_leave", "o", output_types },
	{ "state", "a", none },
	{ "done", "", none },
	{ "closed", "", none },
};

const struct wl_interface zwlr_foreign_toplevel_handle_v1_interface = {
	"zwlr_foreign_toplevel_handle_v1", 1, 8, toplevel_handle_requests,
	7, toplevel_handle_events,
};
