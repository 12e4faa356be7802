/*
 * slim-hostile extremes WxH: every integer argument slim-hostile sends, one
 * request at a time, at INT32_MIN, -1, 0, 1 and INT32_MAX (an unsigned one
 * at 0, 1, INT32_MAX, 2^31 and UINT32_MAX), each on a connection of its
 * own, against a compositor whose screen is WxH. Each case ends in the
 * protocol error its spec prescribes for that value, or in none; and every
 * size and place the compositor sends back (configures, a candidate
 * window's text cursor) is on the screen. One line a case and value,
 * "CASE VALUE: ok" or "CASE VALUE: WRONG ...", then "extremes N wrong M".
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wayland-client.h>
#include "hostile.h"
#include "input-method-v2.h"
#include "text-input-unstable-v3-client-protocol.h"
#include "viewporter-client-protocol.h"
#include "wlr-unstable.h"
#include "xdg-decoration-unstable-v1-client-protocol.h"
#include "xdg-shell-client-protocol.h"

struct xconn {
	struct conn c; /* first: hostile.c's listeners take it as their data */
	struct extra x;
	int32_t width, height; /* the screen */
	char wrong[160];       /* the first size or place off the screen */
	uint32_t layer_serial, layer_w, layer_h;
	uint32_t enter_serial;
	bool entered;
	uint32_t im_done;
	bool cursor_told; /* text_input_rectangle */
};

/* What a case must end in: the error of `iface` (NULL: none) with `code`. */
struct expect {
	const char *iface;
	uint32_t code;
};

static const struct expect NONE = { NULL, 0 };

static struct expect error(const char *iface, uint32_t code)
{
	return (struct expect){ iface, code };
}

__attribute__((format(printf, 2, 3)))
static void wrong(struct xconn *x, const char *fmt, ...)
{
	if (x->wrong[0]) {
		return;
	}
	va_list args;
	va_start(args, fmt);
	vsnprintf(x->wrong, sizeof(x->wrong), fmt, args);
	va_end(args);
}

static void roundtrip(struct xconn *x)
{
	wl_display_roundtrip(x->c.display);
}

/* --- what the compositor sends back */

static void toplevel_configure(void *data, struct xdg_toplevel *t, int32_t w, int32_t h,
		struct wl_array *states)
{
	struct xconn *x = data;
	if (w < 0 || h < 0 || w > x->width || h > x->height) {
		wrong(x, "toplevel configured %dx%d", w, h);
	}
}

static void toplevel_close(void *data, struct xdg_toplevel *t)
{
}

static const struct xdg_toplevel_listener toplevel_listener = {
	.configure = toplevel_configure, .close = toplevel_close,
};

static void layer_configure(void *data, struct wl_proxy *ls, uint32_t serial, uint32_t w,
		uint32_t h)
{
	struct xconn *x = data;
	x->layer_serial = serial;
	x->layer_w = w;
	x->layer_h = h;
	if (w < 1 || h < 1 || w > (uint32_t)x->width || h > (uint32_t)x->height) {
		wrong(x, "layer surface configured %ux%u", w, h);
	}
}

static void layer_closed(void *data, struct wl_proxy *ls)
{
}

static const struct layer_surface_listener layer_listener = { layer_configure, layer_closed };

static void popup_configure(void *data, struct xdg_popup *p, int32_t px, int32_t py, int32_t w,
		int32_t h)
{
	struct xconn *x = data;
	if (w < 1 || h < 1) {
		wrong(x, "popup configured %dx%d", w, h);
	}
}

static void popup_done(void *data, struct xdg_popup *p)
{
}

static const struct xdg_popup_listener popup_listener = {
	.configure = popup_configure, .popup_done = popup_done,
};

static void pointer_enter(void *data, struct wl_pointer *p, uint32_t serial,
		struct wl_surface *s, wl_fixed_t sx, wl_fixed_t sy)
{
	struct xconn *x = data;
	x->enter_serial = serial;
	x->entered = true;
}

static void pointer_leave(void *data, struct wl_pointer *p, uint32_t serial, struct wl_surface *s)
{
}

static void pointer_motion(void *data, struct wl_pointer *p, uint32_t t, wl_fixed_t sx,
		wl_fixed_t sy)
{
}

static void pointer_button(void *data, struct wl_pointer *p, uint32_t serial, uint32_t t,
		uint32_t button, uint32_t state)
{
}

static void pointer_axis(void *data, struct wl_pointer *p, uint32_t t, uint32_t axis,
		wl_fixed_t v)
{
}

static const struct wl_pointer_listener pointer_listener = {
	.enter = pointer_enter, .leave = pointer_leave, .motion = pointer_motion,
	.button = pointer_button, .axis = pointer_axis,
};

/* The text cursor, from the candidate window's corner: on the screen. */
static void popup_rectangle(void *data, struct wl_proxy *p, int32_t rx, int32_t ry, int32_t w,
		int32_t h)
{
	struct xconn *x = data;
	x->cursor_told = true;
	if (rx < -x->width || rx > x->width || ry < -x->height || ry > x->height || w < 0 ||
			h < 0 || w > x->width || h > x->height) {
		wrong(x, "text cursor told as %d,%d %dx%d", rx, ry, w, h);
	}
}

static const struct {
	void (*text_input_rectangle)(void *, struct wl_proxy *, int32_t, int32_t, int32_t,
		int32_t);
} im_popup_listener = { popup_rectangle };

static void im_activate(void *data, struct wl_proxy *im)
{
}

static void im_surrounding(void *data, struct wl_proxy *im, const char *t, uint32_t c,
		uint32_t a)
{
}

static void im_cause(void *data, struct wl_proxy *im, uint32_t cause)
{
}

static void im_content_type(void *data, struct wl_proxy *im, uint32_t hint, uint32_t purpose)
{
}

static void im_done(void *data, struct wl_proxy *im)
{
	struct xconn *x = data;
	x->im_done++;
}

static const struct im_listener im_listener = {
	im_activate, im_activate, im_surrounding, im_cause, im_content_type, im_done, im_activate,
};

static void ti_enter(void *data, struct zwp_text_input_v3 *ti, struct wl_surface *s)
{
}

static void ti_preedit(void *data, struct zwp_text_input_v3 *ti, const char *t, int32_t b,
		int32_t e)
{
}

static void ti_commit(void *data, struct zwp_text_input_v3 *ti, const char *t)
{
}

static void ti_delete(void *data, struct zwp_text_input_v3 *ti, uint32_t b, uint32_t a)
{
}

static void ti_done(void *data, struct zwp_text_input_v3 *ti, uint32_t serial)
{
}

static const struct zwp_text_input_v3_listener ti_listener = {
	ti_enter, ti_enter, ti_preedit, ti_commit, ti_delete, ti_done,
};

/* --- what the cases build on */

/* A toplevel, mapped; maximized (with a title bar of the compositor's) or fullscreen. */
static struct window window(struct xconn *x, bool maximized, bool fullscreen)
{
	struct window w = toplevel(&x->c);
	xdg_toplevel_add_listener(w.toplevel, &toplevel_listener, x);
	if (maximized && x->x.decorations) {
		struct zxdg_toplevel_decoration_v1 *d = zxdg_decoration_manager_v1_get_toplevel_decoration(
			x->x.decorations, w.toplevel);
		zxdg_toplevel_decoration_v1_set_mode(d, ZXDG_TOPLEVEL_DECORATION_V1_MODE_SERVER_SIDE);
	}
	if (maximized) {
		xdg_toplevel_set_maximized(w.toplevel);
	}
	if (fullscreen) {
		xdg_toplevel_set_fullscreen(w.toplevel, NULL);
	}
	map(&x->c, &w);
	roundtrip(x);
	return w;
}

static struct wl_proxy *layer(struct xconn *x, uint32_t which, struct wl_surface **s)
{
	*s = wl_compositor_create_surface(x->c.g.compositor);
	struct wl_proxy *ls = wl_proxy_marshal_flags(x->x.layer_shell,
		LAYER_SHELL_GET_LAYER_SURFACE, &zwlr_layer_surface_v1_interface, 1, 0, NULL, *s,
		NULL, which, "slim-hostile");
	wl_proxy_add_listener(ls, (void (**)(void))&layer_listener, x);
	return ls;
}

static void layer_request(struct wl_proxy *ls, uint32_t opcode, uint32_t a, uint32_t b)
{
	wl_proxy_marshal_flags(ls, opcode, NULL, 1, 0, a, b);
}

/* Committed, its configure acked, a buffer of the configured size. */
static void layer_map(struct xconn *x, struct wl_proxy *ls, struct wl_surface *s)
{
	wl_surface_commit(s);
	roundtrip(x);
	wl_proxy_marshal_flags(ls, LAYER_SURFACE_ACK_CONFIGURE, NULL, 1, 0, x->layer_serial);
	int32_t w = x->layer_w >= 1 && x->layer_w <= (uint32_t)x->width ? (int32_t)x->layer_w : 1;
	int32_t h = x->layer_h >= 1 && x->layer_h <= (uint32_t)x->height ? (int32_t)x->layer_h : 1;
	wl_surface_attach(s, buffer(&x->c, w, h), 0, 0);
	wl_surface_commit(s);
	roundtrip(x);
}

static struct xdg_positioner *positioner(struct xconn *x)
{
	struct xdg_positioner *pos = xdg_wm_base_create_positioner(x->c.g.wm_base);
	xdg_positioner_set_size(pos, 10, 10);
	xdg_positioner_set_anchor_rect(pos, 0, 0, 1, 1);
	return pos;
}

static void popup_surface_configure(void *data, struct xdg_surface *xs, uint32_t serial)
{
	xdg_surface_ack_configure(xs, serial);
}

static const struct xdg_surface_listener popup_surface_listener = {
	.configure = popup_surface_configure,
};

/* A popup of a mapped window, placed by `pos`. */
static void popup(struct xconn *x, struct xdg_positioner *pos)
{
	struct window w = window(x, false, false);
	struct wl_surface *s = wl_compositor_create_surface(x->c.g.compositor);
	struct xdg_surface *xs = xdg_wm_base_get_xdg_surface(x->c.g.wm_base, s);
	xdg_surface_add_listener(xs, &popup_surface_listener, x);
	struct xdg_popup *p = xdg_surface_get_popup(xs, w.xdg, pos);
	xdg_popup_add_listener(p, &popup_listener, x);
	wl_surface_commit(s);
	roundtrip(x);
	wl_surface_attach(s, buffer(&x->c, 10, 10), 0, 0);
	wl_surface_commit(s);
}

/* --- the cases: v is the value, as the argument's type has it */

#define ANCHOR_ALL 15u
#define ANCHOR_TOP_EDGE (1u | 4u | 8u)

static struct expect layer_margin(struct xconn *x, uint32_t v)
{
	struct wl_surface *s;
	struct wl_proxy *ls = layer(x, LAYER_TOP, &s);
	layer_request(ls, LAYER_SURFACE_SET_ANCHOR, ANCHOR_TOP_EDGE, 0);
	layer_request(ls, LAYER_SURFACE_SET_SIZE, 0, 32);
	wl_proxy_marshal_flags(ls, LAYER_SURFACE_SET_EXCLUSIVE_ZONE, NULL, 1, 0, 32);
	wl_proxy_marshal_flags(ls, LAYER_SURFACE_SET_MARGIN, NULL, 1, 0, v, v, v, v);
	layer_map(x, ls, s);
	window(x, true, false); /* fills what the panel leaves */
	return NONE;
}

static struct expect layer_zone(struct xconn *x, uint32_t v)
{
	struct wl_surface *s;
	struct wl_proxy *ls = layer(x, LAYER_TOP, &s);
	layer_request(ls, LAYER_SURFACE_SET_ANCHOR, ANCHOR_TOP_EDGE, 0);
	layer_request(ls, LAYER_SURFACE_SET_SIZE, 0, 32);
	wl_proxy_marshal_flags(ls, LAYER_SURFACE_SET_EXCLUSIVE_ZONE, NULL, 1, 0, v);
	layer_map(x, ls, s);
	window(x, true, false);
	return NONE;
}

static struct expect layer_size(struct xconn *x, uint32_t v)
{
	struct wl_surface *s;
	struct wl_proxy *ls = layer(x, LAYER_TOP, &s);
	layer_request(ls, LAYER_SURFACE_SET_ANCHOR, ANCHOR_ALL, 0);
	layer_request(ls, LAYER_SURFACE_SET_SIZE, v, v);
	layer_map(x, ls, s);
	return NONE;
}

static struct expect layer_anchor(struct xconn *x, uint32_t v)
{
	struct wl_surface *s;
	struct wl_proxy *ls = layer(x, LAYER_TOP, &s);
	layer_request(ls, LAYER_SURFACE_SET_SIZE, 32, 32);
	layer_request(ls, LAYER_SURFACE_SET_ANCHOR, v, 0);
	layer_map(x, ls, s);
	return v > ANCHOR_ALL ? error("zwlr_layer_surface_v1", 2 /* invalid_anchor */) : NONE;
}

static struct expect layer_layer(struct xconn *x, uint32_t v)
{
	struct wl_surface *s;
	struct wl_proxy *ls = layer(x, v, &s);
	layer_request(ls, LAYER_SURFACE_SET_SIZE, 32, 32);
	layer_map(x, ls, s);
	return v > 3 ? error("zwlr_layer_shell_v1", 1 /* invalid_layer */) : NONE;
}

static struct expect layer_keyboard(struct xconn *x, uint32_t v)
{
	struct wl_surface *s;
	struct wl_proxy *ls = layer(x, LAYER_TOP, &s);
	layer_request(ls, LAYER_SURFACE_SET_SIZE, 32, 32);
	/* version 1: a boolean, any value */
	wl_proxy_marshal_flags(ls, LAYER_SURFACE_SET_KEYBOARD_INTERACTIVITY, NULL, 1, 0, v);
	layer_map(x, ls, s);
	return NONE;
}

static struct expect layer_ack(struct xconn *x, uint32_t v)
{
	struct wl_surface *s;
	struct wl_proxy *ls = layer(x, LAYER_TOP, &s);
	layer_request(ls, LAYER_SURFACE_SET_SIZE, 32, 32);
	wl_surface_commit(s);
	roundtrip(x);
	wl_proxy_marshal_flags(ls, LAYER_SURFACE_ACK_CONFIGURE, NULL, 1, 0, v);
	return v != x->layer_serial ? error("zwlr_layer_surface_v1", 0 /* invalid_surface_state */) :
		NONE;
}

static const char *const POSITIONER = "xdg_positioner"; /* invalid_input: 0 */

static struct expect positioner_size(struct xconn *x, uint32_t v)
{
	struct xdg_positioner *pos = positioner(x);
	xdg_positioner_set_size(pos, (int32_t)v, (int32_t)v);
	popup(x, pos);
	return (int32_t)v < 1 ? error(POSITIONER, 0) : NONE;
}

static struct expect positioner_anchor_rect(struct xconn *x, uint32_t v)
{
	int32_t i = (int32_t)v;
	struct xdg_positioner *pos = positioner(x);
	xdg_positioner_set_anchor_rect(pos, i, i, i, i);
	popup(x, pos);
	/* no area: the positioner is incomplete */
	return i < 0 ? error(POSITIONER, 0) : i == 0 ?
		error("xdg_wm_base", XDG_WM_BASE_ERROR_INVALID_POSITIONER) : NONE;
}

static struct expect positioner_offset(struct xconn *x, uint32_t v)
{
	struct xdg_positioner *pos = positioner(x);
	xdg_positioner_set_offset(pos, (int32_t)v, (int32_t)v);
	popup(x, pos);
	return NONE;
}

static struct expect positioner_anchor(struct xconn *x, uint32_t v)
{
	struct xdg_positioner *pos = positioner(x);
	xdg_positioner_set_anchor(pos, v);
	popup(x, pos);
	return v > XDG_POSITIONER_ANCHOR_BOTTOM_RIGHT ? error(POSITIONER, 0) : NONE;
}

static struct expect positioner_gravity(struct xconn *x, uint32_t v)
{
	struct xdg_positioner *pos = positioner(x);
	xdg_positioner_set_gravity(pos, v);
	popup(x, pos);
	return v > XDG_POSITIONER_GRAVITY_BOTTOM_RIGHT ? error(POSITIONER, 0) : NONE;
}

static struct expect positioner_constraint(struct xconn *x, uint32_t v)
{
	struct xdg_positioner *pos = positioner(x);
	xdg_positioner_set_constraint_adjustment(pos, v);
	xdg_positioner_set_offset(pos, 100000, 100000); /* constrained, as v says */
	popup(x, pos);
	return NONE;
}

static struct expect window_geometry(struct xconn *x, uint32_t v)
{
	int32_t i = (int32_t)v;
	struct window w = toplevel(&x->c);
	xdg_toplevel_add_listener(w.toplevel, &toplevel_listener, x);
	xdg_surface_set_window_geometry(w.xdg, i, i, i, i);
	map(&x->c, &w);
	return i <= 0 ? error("xdg_surface", XDG_SURFACE_ERROR_INVALID_SIZE) : NONE;
}

static struct expect window_ack(struct xconn *x, uint32_t v)
{
	x->c.manual_ack = true;
	struct window w = toplevel(&x->c);
	roundtrip(x);
	xdg_surface_ack_configure(w.xdg, v);
	return v != x->c.configure_serial ?
		error("xdg_surface", XDG_SURFACE_ERROR_INVALID_SERIAL) : NONE;
}

static struct expect window_min_size(struct xconn *x, uint32_t v)
{
	struct window w = window(x, false, false);
	xdg_toplevel_set_min_size(w.toplevel, (int32_t)v, (int32_t)v);
	wl_surface_commit(w.surface);
	return (int32_t)v < 0 ? error("xdg_toplevel", XDG_TOPLEVEL_ERROR_INVALID_SIZE) : NONE;
}

static struct expect window_max_size(struct xconn *x, uint32_t v)
{
	struct window w = window(x, false, false);
	xdg_toplevel_set_max_size(w.toplevel, (int32_t)v, (int32_t)v);
	wl_surface_commit(w.surface);
	return (int32_t)v < 0 ? error("xdg_toplevel", XDG_TOPLEVEL_ERROR_INVALID_SIZE) : NONE;
}

static struct expect window_resize(struct xconn *x, uint32_t v)
{
	struct window w = window(x, false, false);
	xdg_toplevel_resize(w.toplevel, x->c.g.seat, v, v);
	bool edge = v <= XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM_RIGHT && v != 3 && v != 7;
	return edge ? NONE : error("xdg_toplevel", XDG_TOPLEVEL_ERROR_INVALID_RESIZE_EDGE);
}

static struct expect window_move(struct xconn *x, uint32_t v)
{
	struct window w = window(x, false, false);
	xdg_toplevel_move(w.toplevel, x->c.g.seat, v);
	return NONE;
}

static struct expect surface_attach(struct xconn *x, uint32_t v)
{
	struct window w = window(x, false, false);
	for (int i = 0; i < 2; i++) { /* offsets add up */
		wl_surface_attach(w.surface, buffer(&x->c, 64, 64), (int32_t)v, (int32_t)v);
		wl_surface_commit(w.surface);
	}
	return NONE;
}

static struct expect surface_damage(struct xconn *x, uint32_t v)
{
	int32_t i = (int32_t)v;
	struct window w = window(x, false, false);
	wl_surface_damage(w.surface, i, i, i, i);
	wl_surface_damage_buffer(w.surface, i, i, i, i);
	wl_surface_commit(w.surface);
	return NONE;
}

static struct expect surface_scale(struct xconn *x, uint32_t v)
{
	struct wl_surface *s = wl_compositor_create_surface(x->c.g.compositor);
	wl_surface_set_buffer_scale(s, (int32_t)v);
	wl_surface_commit(s);
	return (int32_t)v <= 0 ? error("wl_surface", WL_SURFACE_ERROR_INVALID_SCALE) : NONE;
}

static struct expect surface_transform(struct xconn *x, uint32_t v)
{
	struct wl_surface *s = wl_compositor_create_surface(x->c.g.compositor);
	wl_surface_set_buffer_transform(s, (int32_t)v);
	wl_surface_commit(s);
	return v > WL_OUTPUT_TRANSFORM_FLIPPED_270 ?
		error("wl_surface", WL_SURFACE_ERROR_INVALID_TRANSFORM) : NONE;
}

static struct expect viewport_destination(struct xconn *x, uint32_t v)
{
	int32_t i = (int32_t)v;
	struct window w = window(x, false, false);
	struct wp_viewport *vp = wp_viewporter_get_viewport(x->c.g.viewporter, w.surface);
	wp_viewport_set_destination(vp, i, i);
	wl_surface_commit(w.surface);
	/* -1, -1 unsets it */
	return i <= 0 && i != -1 ? error("wp_viewport", WP_VIEWPORT_ERROR_BAD_VALUE) : NONE;
}

static struct expect viewport_source(struct xconn *x, uint32_t v)
{
	int32_t i = (int32_t)v; /* as a wl_fixed: 1 is 1/256 */
	struct window w = window(x, false, false);
	struct wp_viewport *vp = wp_viewporter_get_viewport(x->c.g.viewporter, w.surface);
	wp_viewport_set_destination(vp, 10, 10); /* so that a source of any size will do */
	wp_viewport_set_source(vp, i, i, i, i);
	wl_surface_attach(w.surface, buffer(&x->c, 64, 64), 0, 0);
	wl_surface_commit(w.surface);
	if (i <= 0) {
		return error("wp_viewport", WP_VIEWPORT_ERROR_BAD_VALUE);
	}
	return i > 32 * 256 ? error("wp_viewport", WP_VIEWPORT_ERROR_OUT_OF_BUFFER) : NONE;
}

/* The pointer's image: a fullscreen window has the pointer, wherever it is. */
static struct expect cursor_hotspot(struct xconn *x, uint32_t v)
{
	struct wl_pointer *p = wl_seat_get_pointer(x->c.g.seat);
	wl_pointer_add_listener(p, &pointer_listener, x);
	struct window w = window(x, false, true);
	/* all of the screen, wherever the pointer is */
	wl_surface_attach(w.surface, buffer(&x->c, x->width, x->height), 0, 0);
	wl_surface_commit(w.surface);
	roundtrip(x);
	if (!x->entered) {
		wrong(x, "no wl_pointer.enter on a fullscreen window");
		return NONE;
	}
	struct wl_surface *s = wl_compositor_create_surface(x->c.g.compositor);
	wl_pointer_set_cursor(p, x->enter_serial, s, (int32_t)v, (int32_t)v);
	for (int i = 0; i < 2; i++) { /* the hotspot moves by each offset */
		wl_surface_attach(s, buffer(&x->c, 16, 16), (int32_t)v, (int32_t)v);
		wl_surface_commit(s);
	}
	return NONE;
}

/* A focused window's text input, enabled, served by an input method with a popup. */
static struct wl_proxy *text_input(struct xconn *x, struct zwp_text_input_v3 **ti,
		void (*set)(struct zwp_text_input_v3 *ti, int32_t v), int32_t v)
{
	struct wl_proxy *im = wl_proxy_marshal_flags(x->x.input_methods,
		IM_MANAGER_GET_INPUT_METHOD, &zwp_input_method_v2_interface, 1, 0, x->c.g.seat, NULL);
	wl_proxy_add_listener(im, (void (**)(void))&im_listener, x);
	window(x, false, false);
	*ti = zwp_text_input_manager_v3_get_text_input(x->x.text_inputs, x->c.g.seat);
	zwp_text_input_v3_add_listener(*ti, &ti_listener, x);
	roundtrip(x); /* entered */
	zwp_text_input_v3_enable(*ti);
	if (set) {
		set(*ti, v);
	}
	zwp_text_input_v3_commit(*ti);
	roundtrip(x);
	struct wl_surface *s = wl_compositor_create_surface(x->c.g.compositor);
	struct wl_proxy *popup = wl_proxy_marshal_flags(im, IM_GET_INPUT_POPUP_SURFACE,
		&zwp_input_popup_surface_v2_interface, 1, 0, NULL, s);
	wl_proxy_add_listener(popup, (void (**)(void))&im_popup_listener, x);
	wl_surface_attach(s, buffer(&x->c, 40, 20), 0, 0);
	wl_surface_commit(s);
	roundtrip(x);
	return im;
}

static void set_cursor_rectangle(struct zwp_text_input_v3 *ti, int32_t v)
{
	zwp_text_input_v3_set_cursor_rectangle(ti, v, v, v, v);
}

static void set_surrounding(struct zwp_text_input_v3 *ti, int32_t v)
{
	zwp_text_input_v3_set_surrounding_text(ti, "surrounding", v, v);
}

static struct expect text_cursor(struct xconn *x, uint32_t v)
{
	struct zwp_text_input_v3 *ti;
	text_input(x, &ti, set_cursor_rectangle, (int32_t)v);
	if (!x->cursor_told) {
		wrong(x, "the candidate window was never told where the text cursor is");
	}
	return NONE;
}

static struct expect text_surrounding(struct xconn *x, uint32_t v)
{
	struct zwp_text_input_v3 *ti;
	text_input(x, &ti, set_surrounding, (int32_t)v);
	return NONE;
}

static struct expect im_preedit(struct xconn *x, uint32_t v)
{
	struct zwp_text_input_v3 *ti;
	struct wl_proxy *im = text_input(x, &ti, NULL, 0);
	wl_proxy_marshal_flags(im, IM_SET_PREEDIT_STRING, NULL, 1, 0, "予測", (int32_t)v,
		(int32_t)v);
	wl_proxy_marshal_flags(im, IM_COMMIT, NULL, 1, 0, x->im_done);
	return NONE;
}

static struct expect im_delete(struct xconn *x, uint32_t v)
{
	struct zwp_text_input_v3 *ti;
	struct wl_proxy *im = text_input(x, &ti, NULL, 0);
	wl_proxy_marshal_flags(im, IM_DELETE_SURROUNDING_TEXT, NULL, 1, 0, v, v);
	wl_proxy_marshal_flags(im, IM_COMMIT, NULL, 1, 0, x->im_done);
	return NONE;
}

static struct expect im_commit(struct xconn *x, uint32_t v)
{
	struct zwp_text_input_v3 *ti;
	struct wl_proxy *im = text_input(x, &ti, NULL, 0);
	wl_proxy_marshal_flags(im, IM_COMMIT_STRING, NULL, 1, 0, "変換");
	wl_proxy_marshal_flags(im, IM_COMMIT, NULL, 1, 0, v); /* a stale serial: ignored */
	return NONE;
}

static const struct {
	const char *name;
	bool is_signed;
	struct expect (*run)(struct xconn *x, uint32_t v);
} cases[] = {
	{ "layer.margin", true, layer_margin },
	{ "layer.exclusive_zone", true, layer_zone },
	{ "layer.size", false, layer_size },
	{ "layer.anchor", false, layer_anchor },
	{ "layer.layer", false, layer_layer },
	{ "layer.keyboard_interactivity", false, layer_keyboard },
	{ "layer.ack_configure", false, layer_ack },
	{ "positioner.size", true, positioner_size },
	{ "positioner.anchor_rect", true, positioner_anchor_rect },
	{ "positioner.offset", true, positioner_offset },
	{ "positioner.anchor", false, positioner_anchor },
	{ "positioner.gravity", false, positioner_gravity },
	{ "positioner.constraint_adjustment", false, positioner_constraint },
	{ "xdg_surface.window_geometry", true, window_geometry },
	{ "xdg_surface.ack_configure", false, window_ack },
	{ "xdg_toplevel.min_size", true, window_min_size },
	{ "xdg_toplevel.max_size", true, window_max_size },
	{ "xdg_toplevel.resize", false, window_resize },
	{ "xdg_toplevel.move", false, window_move },
	{ "wl_surface.attach", true, surface_attach },
	{ "wl_surface.damage", true, surface_damage },
	{ "wl_surface.buffer_scale", true, surface_scale },
	{ "wl_surface.buffer_transform", true, surface_transform },
	{ "wp_viewport.destination", true, viewport_destination },
	{ "wp_viewport.source", true, viewport_source },
	{ "wl_pointer.set_cursor", true, cursor_hotspot },
	{ "text_input.cursor_rectangle", true, text_cursor },
	{ "text_input.surrounding_text", true, text_surrounding },
	{ "input_method.preedit_string", true, im_preedit },
	{ "input_method.delete_surrounding_text", false, im_delete },
	{ "input_method.commit", false, im_commit },
};

static const uint32_t signed_values[] = {
	(uint32_t)INT32_MIN, (uint32_t)-1, 0, 1, (uint32_t)INT32_MAX,
};
static const uint32_t unsigned_values[] = { 0, 1, (uint32_t)INT32_MAX, 0x80000000u, UINT32_MAX };

/* One case at one value: true if it ended as it must. */
static bool run_case(size_t k, uint32_t v, uint32_t width, uint32_t height)
{
	struct xconn x = { .width = (int32_t)width, .height = (int32_t)height };
	if (!conn_open(&x.c)) {
		fprintf(stderr, "slim-hostile: cannot connect\n");
		exit(1);
	}
	x.x = extra_globals(&x.c);
	char value[16];
	if (cases[k].is_signed) {
		snprintf(value, sizeof(value), "%d", (int)(int32_t)v);
	} else {
		snprintf(value, sizeof(value), "%u", (unsigned)v);
	}
	bool ok = true;
	if (!x.x.layer_shell || !x.x.input_methods || !x.x.text_inputs || !x.c.g.viewporter) {
		printf("%s %s: WRONG: a global is missing\n", cases[k].name, value);
		ok = false;
	} else {
		struct expect want = cases[k].run(&x, v);
		int r = wl_display_roundtrip(x.c.display);
		if (r >= 0) {
			r = wl_display_roundtrip(x.c.display);
		}
		const struct wl_interface *iface = NULL;
		uint32_t id, code = r < 0 ? wl_display_get_protocol_error(x.c.display, &iface, &id) : 0;
		const char *got = iface ? iface->name : r < 0 ? "(dropped)" : NULL;
		bool as_said = want.iface ? got && strcmp(got, want.iface) == 0 &&
			code == want.code : !got;
		if (!as_said) {
			printf("%s %s: WRONG: error %s %u, where the spec says %s %u\n", cases[k].name,
				value, got ? got : "none", code, want.iface ? want.iface : "none",
				want.code);
			ok = false;
		} else if (x.wrong[0]) {
			printf("%s %s: WRONG: %s\n", cases[k].name, value, x.wrong);
			ok = false;
		} else {
			printf("%s %s: ok%s\n", cases[k].name, value, got ? " (the spec's error)" : "");
		}
	}
	fflush(stdout);
	wl_display_disconnect(x.c.display);
	return ok;
}

int extremes(uint32_t width, uint32_t height)
{
	int n = 0, bad = 0;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const uint32_t *values = cases[k].is_signed ? signed_values : unsigned_values;
		for (size_t i = 0; i < 5; i++) {
			bad += !run_case(k, values[i], width, height);
			n++;
		}
	}
	printf("extremes %d wrong %d\n", n, bad);
	return bad;
}
