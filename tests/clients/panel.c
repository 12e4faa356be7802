/*
 * slim-panel: a panel with a menu, as a desktop's task bar has. A layer
 * surface (wlr-layer-shell, top layer) anchored to the top edge, 30 pixels
 * high with a 30-pixel exclusive zone, in blue; a left-button press on it
 * opens a 100x80 green xdg_popup (zwlr_layer_surface_v1.get_popup) whose
 * top left is at the press (slid back onto the output if it would leave
 * it), with the pointer and keyboard grab. It says
 * "ready" once mapped, "popup X Y" when the popup is configured at (X, Y)
 * of the panel, and "dismissed" when the compositor closes it (popup_done).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>
#include "globals.h"
#include "wlr-unstable.h"
#include "xdg-shell-client-protocol.h"

#define PANEL_H 30
#define MENU_W 100
#define MENU_H 80

struct panel {
	struct test_globals g;
	struct wl_proxy *layer_shell, *layer;
	struct wl_surface *surface, *menu_surface;
	struct xdg_surface *menu_xdg;
	struct xdg_popup *menu;
	uint32_t width;
	bool configured;
	double x, y; /* the pointer on the panel */
};

static void global(void *data, struct wl_registry *r, uint32_t name, const char *iface,
		uint32_t version)
{
	struct panel *p = data;
	if (strcmp(iface, zwlr_layer_shell_v1_interface.name) == 0) {
		p->layer_shell = wl_registry_bind(r, name, &zwlr_layer_shell_v1_interface, 1);
	}
}

static void global_remove(void *data, struct wl_registry *r, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = { global, global_remove };

static struct wl_buffer *solid(struct panel *p, uint32_t w, uint32_t h, uint32_t colour)
{
	uint8_t *mem;
	struct wl_shm_pool *pool = test_pool(p->g.shm, (size_t)w * h * 4, 0, &mem);
	uint32_t *px = (uint32_t *)mem;
	for (size_t i = 0; i < (size_t)w * h; i++) {
		px[i] = colour;
	}
	struct wl_buffer *b = wl_shm_pool_create_buffer(pool, 0, (int)w, (int)h, (int)w * 4,
		WL_SHM_FORMAT_XRGB8888);
	wl_shm_pool_destroy(pool);
	return b;
}

static void layer_configure(void *data, struct wl_proxy *ls, uint32_t serial, uint32_t w,
		uint32_t h)
{
	struct panel *p = data;
	wl_proxy_marshal(ls, LAYER_SURFACE_ACK_CONFIGURE, serial);
	if (!p->configured) {
		p->width = w;
		p->configured = true;
	}
}

static void layer_closed(void *data, struct wl_proxy *ls)
{
	exit(0);
}

static const struct layer_surface_listener layer_listener = { layer_configure, layer_closed };

static void menu_configure(void *data, struct xdg_surface *xs, uint32_t serial)
{
	struct panel *p = data;
	xdg_surface_ack_configure(xs, serial);
	wl_surface_attach(p->menu_surface, solid(p, MENU_W, MENU_H, 0xff30a050), 0, 0);
	wl_surface_damage(p->menu_surface, 0, 0, MENU_W, MENU_H);
	wl_surface_commit(p->menu_surface);
}

static const struct xdg_surface_listener menu_xdg_listener = { .configure = menu_configure };

static void popup_configure(void *data, struct xdg_popup *popup, int32_t x, int32_t y,
		int32_t w, int32_t h)
{
	say("popup %d %d", x, y);
}

static void close_menu(struct panel *p)
{
	xdg_popup_destroy(p->menu);
	xdg_surface_destroy(p->menu_xdg);
	wl_surface_destroy(p->menu_surface);
	p->menu = NULL;
}

static void popup_done(void *data, struct xdg_popup *popup)
{
	struct panel *p = data;
	say("dismissed");
	close_menu(p);
}

static const struct xdg_popup_listener popup_listener = {
	.configure = popup_configure, .popup_done = popup_done,
};

static void open_menu(struct panel *p, uint32_t serial)
{
	struct xdg_positioner *pos = xdg_wm_base_create_positioner(p->g.wm_base);
	xdg_positioner_set_size(pos, MENU_W, MENU_H);
	xdg_positioner_set_anchor_rect(pos, (int32_t)p->x, (int32_t)p->y, 1, 1);
	xdg_positioner_set_anchor(pos, XDG_POSITIONER_ANCHOR_TOP_LEFT);
	xdg_positioner_set_gravity(pos, XDG_POSITIONER_GRAVITY_BOTTOM_RIGHT);
	xdg_positioner_set_constraint_adjustment(pos,
		XDG_POSITIONER_CONSTRAINT_ADJUSTMENT_SLIDE_X |
		XDG_POSITIONER_CONSTRAINT_ADJUSTMENT_SLIDE_Y);
	p->menu_surface = wl_compositor_create_surface(p->g.compositor);
	p->menu_xdg = xdg_wm_base_get_xdg_surface(p->g.wm_base, p->menu_surface);
	xdg_surface_add_listener(p->menu_xdg, &menu_xdg_listener, p);
	p->menu = xdg_surface_get_popup(p->menu_xdg, NULL, pos);
	xdg_popup_add_listener(p->menu, &popup_listener, p);
	wl_proxy_marshal(p->layer, LAYER_SURFACE_GET_POPUP, p->menu);
	xdg_popup_grab(p->menu, p->g.seat, serial);
	xdg_positioner_destroy(pos);
	wl_surface_commit(p->menu_surface);
}

static void enter(void *data, struct wl_pointer *ptr, uint32_t serial, struct wl_surface *s,
		wl_fixed_t x, wl_fixed_t y)
{
	struct panel *p = data;
	if (s == p->surface) {
		p->x = wl_fixed_to_double(x);
		p->y = wl_fixed_to_double(y);
	}
}

static void leave(void *data, struct wl_pointer *ptr, uint32_t serial, struct wl_surface *s)
{
}

static void motion(void *data, struct wl_pointer *ptr, uint32_t t, wl_fixed_t x, wl_fixed_t y)
{
	struct panel *p = data;
	p->x = wl_fixed_to_double(x);
	p->y = wl_fixed_to_double(y);
}

static void button(void *data, struct wl_pointer *ptr, uint32_t serial, uint32_t t, uint32_t b,
		uint32_t state)
{
	struct panel *p = data;
	if (state == WL_POINTER_BUTTON_STATE_PRESSED && b == 0x110 /* BTN_LEFT */ && !p->menu) {
		open_menu(p, serial);
	}
}

static void axis(void *data, struct wl_pointer *ptr, uint32_t t, uint32_t a, wl_fixed_t v)
{
}

static void frame(void *data, struct wl_pointer *ptr)
{
}

static void axis_source(void *data, struct wl_pointer *ptr, uint32_t s)
{
}

static void axis_stop(void *data, struct wl_pointer *ptr, uint32_t t, uint32_t a)
{
}

static void axis_discrete(void *data, struct wl_pointer *ptr, uint32_t a, int32_t d)
{
}

static const struct wl_pointer_listener pointer_listener = {
	.enter = enter, .leave = leave, .motion = motion, .button = button, .axis = axis,
	.frame = frame, .axis_source = axis_source, .axis_stop = axis_stop,
	.axis_discrete = axis_discrete,
};

int main(void)
{
	struct panel p = { 0 };
	struct wl_display *display = test_globals_connect(&p.g);
	if (!display || !p.g.seat) {
		fprintf(stderr, "slim-panel: a global is missing\n");
		return 1;
	}
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, &p);
	wl_display_roundtrip(display);
	if (!p.layer_shell) {
		fprintf(stderr, "slim-panel: no layer shell\n");
		return 1;
	}
	struct wl_pointer *pointer = wl_seat_get_pointer(p.g.seat);
	wl_pointer_add_listener(pointer, &pointer_listener, &p);
	p.surface = wl_compositor_create_surface(p.g.compositor);
	p.layer = wl_proxy_marshal_constructor(p.layer_shell, LAYER_SHELL_GET_LAYER_SURFACE,
		&zwlr_layer_surface_v1_interface, NULL, p.surface, NULL, LAYER_TOP, "slim-panel");
	wl_proxy_add_listener(p.layer, (void (**)(void))&layer_listener, &p);
	wl_proxy_marshal(p.layer, LAYER_SURFACE_SET_SIZE, 0, PANEL_H);
	wl_proxy_marshal(p.layer, LAYER_SURFACE_SET_ANCHOR, 1 | 4 | 8); /* top, left, right */
	wl_proxy_marshal(p.layer, LAYER_SURFACE_SET_EXCLUSIVE_ZONE, PANEL_H);
	wl_surface_commit(p.surface);
	while (!p.configured && wl_display_dispatch(display) != -1) {
	}
	wl_surface_attach(p.surface, solid(&p, p.width, PANEL_H, 0xff2050c0), 0, 0);
	wl_surface_damage(p.surface, 0, 0, (int32_t)p.width, PANEL_H);
	wl_surface_commit(p.surface);
	wl_display_roundtrip(display);
	say("ready");
	while (wl_display_dispatch(display) != -1) {
	}
	return 0;
}
