/*
 * slim-hostile [SEED] [SECONDS]: a client that plays adversarial but
 * protocol-legal (or plainly wrong) sequences against the compositor's
 * globals, each on a connection of its own, over and over until SECONDS
 * have passed, in an order drawn from SEED. It prints one line a round,
 * "round N SCENARIO: ok|error INTERFACE CODE", and "done ROUNDS" at the end.
 *
 *   move-unmapped    move and resize requests from a toplevel never mapped,
 *                    then the toplevel destroyed
 *   popup-orphan     a popup with no parent
 *   popup-chain      popups of popups, the middle one destroyed first
 *   configure-flood  set_maximized / unset / fullscreen / titles, 500 times
 *   bad-ack          ack_configure with a serial never sent
 *   detach           a buffer attached, committed, detached, destroyed while
 *                    the compositor may still read it
 *   random           50 requests drawn at random from the above and more
 *   layer            a layer surface given random sizes, anchors (some
 *                    invalid), zones, margins, keyboard modes, buffers and
 *                    acks with random serials
 *   input-method     a text input (text-input-v3) on a mapped window and an
 *                    input method (input-method-v2), both sending their
 *                    requests in random order with random serials, a
 *                    keyboard grab and a candidate popup, one of them
 *                    destroyed midway
 *
 * The integers it draws (not the sizes of the buffers it fills) are
 * extremes half of the time: INT32_MIN, INT32_MAX, 0, -1 and other
 * negatives, 2^31 and UINT32_MAX.
 *
 * slim-hostile extremes WxH: each integer argument alone, at each extreme,
 * against a compositor whose screen is WxH (extremes.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <wayland-client.h>
#include "content-type-v1-client-protocol.h"
#include "globals.h"
#include "hostile.h"
#include "input-method-v2.h"
#include "text-input-unstable-v3-client-protocol.h"
#include "viewporter-client-protocol.h"
#include "wlr-unstable.h"
#include "xdg-decoration-unstable-v1-client-protocol.h"
#include "xdg-shell-client-protocol.h"

static uint64_t rng_state;

uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return n ? (uint32_t)(rng_state >> 33) % n : 0;
}

/* A signed argument: half of the time an extreme, else one of [lo, lo + n). */
static int32_t any_i32(int32_t lo, uint32_t n)
{
	static const int32_t extremes[] = { INT32_MIN, INT32_MIN + 1, -65536, -1, 0, INT32_MAX };
	return rnd(2) ? extremes[rnd(sizeof(extremes) / sizeof(extremes[0]))] :
		(int32_t)((int64_t)lo + rnd(n));
}

/* An unsigned argument: half of the time an extreme, else one of [0, n). */
static uint32_t any_u32(uint32_t n)
{
	static const uint32_t extremes[] = { 0, INT32_MAX, 0x80000000u, UINT32_MAX - 1, UINT32_MAX };
	return rnd(2) ? extremes[rnd(sizeof(extremes) / sizeof(extremes[0]))] : rnd(n);
}

static void xdg_surface_configure(void *data, struct xdg_surface *xs, uint32_t serial)
{
	struct conn *c = data;
	c->configure_serial = serial;
	if (!c->manual_ack) {
		xdg_surface_ack_configure(xs, serial);
	}
}

static const struct xdg_surface_listener xdg_surface_listener = {
	.configure = xdg_surface_configure,
};

bool conn_open(struct conn *c)
{
	*c = (struct conn){ 0 };
	c->display = test_globals_connect(&c->g);
	return c->display != NULL;
}

struct wl_buffer *buffer(struct conn *c, int32_t w, int32_t h)
{
	size_t size = (size_t)w * h * 4;
	uint8_t *mem;
	struct wl_shm_pool *pool = test_pool(c->g.shm, size, 0, &mem);
	for (size_t i = 0; i < size; i++) {
		mem[i] = (uint8_t)rnd(256);
	}
	munmap(mem, size);
	struct wl_buffer *b = wl_shm_pool_create_buffer(pool, 0, w, h, w * 4,
		WL_SHM_FORMAT_XRGB8888);
	wl_shm_pool_destroy(pool);
	return b;
}

struct window toplevel(struct conn *c)
{
	struct window w = { .surface = wl_compositor_create_surface(c->g.compositor) };
	w.xdg = xdg_wm_base_get_xdg_surface(c->g.wm_base, w.surface);
	xdg_surface_add_listener(w.xdg, &xdg_surface_listener, c);
	w.toplevel = xdg_surface_get_toplevel(w.xdg);
	xdg_toplevel_set_title(w.toplevel, "slim-hostile");
	wl_surface_commit(w.surface);
	return w;
}

void map(struct conn *c, struct window *w)
{
	wl_display_roundtrip(c->display); /* the first configure, acked */
	wl_surface_attach(w->surface, buffer(c, 64 + (int32_t)rnd(200), 64 + (int32_t)rnd(200)),
		0, 0);
	wl_surface_damage(w->surface, 0, 0, INT32_MAX, INT32_MAX);
	wl_surface_commit(w->surface);
}

static struct xdg_popup *popup(struct conn *c, struct xdg_surface *parent,
		struct wl_surface **surface)
{
	struct xdg_positioner *pos = xdg_wm_base_create_positioner(c->g.wm_base);
	xdg_positioner_set_size(pos, 50, 40);
	xdg_positioner_set_anchor_rect(pos, 0, 0, 10, 10);
	if (rnd(2)) { /* one of them at an extreme */
		switch (rnd(6)) {
		case 0: xdg_positioner_set_size(pos, any_i32(1, 100), any_i32(1, 100)); break;
		case 1:
			xdg_positioner_set_anchor_rect(pos, any_i32(-50, 100), any_i32(-50, 100),
				any_i32(0, 100), any_i32(0, 100));
			break;
		case 2: xdg_positioner_set_offset(pos, any_i32(-50, 100), any_i32(-50, 100)); break;
		case 3: xdg_positioner_set_anchor(pos, any_u32(9)); break;
		case 4: xdg_positioner_set_gravity(pos, any_u32(9)); break;
		default: xdg_positioner_set_constraint_adjustment(pos, any_u32(64)); break;
		}
	}
	*surface = wl_compositor_create_surface(c->g.compositor);
	struct xdg_surface *xs = xdg_wm_base_get_xdg_surface(c->g.wm_base, *surface);
	xdg_surface_add_listener(xs, &xdg_surface_listener, c);
	struct xdg_popup *p = xdg_surface_get_popup(xs, parent, pos);
	xdg_positioner_destroy(pos);
	wl_surface_commit(*surface);
	return p;
}

static void move_unmapped(struct conn *c)
{
	struct window w = toplevel(c);
	xdg_toplevel_move(w.toplevel, c->g.seat, any_u32(1000));
	xdg_toplevel_resize(w.toplevel, c->g.seat, any_u32(1000),
		rnd(2) ? XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM_RIGHT : any_u32(11));
	wl_display_roundtrip(c->display);
	xdg_toplevel_destroy(w.toplevel);
	xdg_surface_destroy(w.xdg);
	wl_surface_destroy(w.surface);
}

static void popup_orphan(struct conn *c)
{
	struct wl_surface *s;
	popup(c, NULL, &s);
}

static void popup_chain(struct conn *c)
{
	struct window w = toplevel(c);
	map(c, &w);
	struct wl_surface *s1, *s2;
	struct xdg_popup *p1 = popup(c, w.xdg, &s1);
	wl_display_roundtrip(c->display);
	popup(c, NULL, &s2);
	xdg_popup_destroy(p1);
}

static void configure_flood(struct conn *c)
{
	struct window w = toplevel(c);
	map(c, &w);
	for (int i = 0; i < 500; i++) {
		switch (rnd(5)) {
		case 0: xdg_toplevel_set_maximized(w.toplevel); break;
		case 1: xdg_toplevel_unset_maximized(w.toplevel); break;
		case 2: xdg_toplevel_set_fullscreen(w.toplevel, NULL); break;
		case 3: xdg_toplevel_unset_fullscreen(w.toplevel); break;
		default: xdg_toplevel_set_title(w.toplevel, "flood"); break;
		}
		if (rnd(10) == 0) {
			wl_surface_commit(w.surface);
		}
	}
}

static void bad_ack(struct conn *c)
{
	struct window w = toplevel(c);
	map(c, &w);
	xdg_surface_ack_configure(w.xdg, rnd(2) ? c->configure_serial + 1000 : any_u32(1000));
}

static void detach(struct conn *c)
{
	struct window w = toplevel(c);
	map(c, &w);
	struct wl_buffer *b = buffer(c, 100, 100);
	wl_surface_attach(w.surface, b, any_i32(0, 1), any_i32(0, 1));
	wl_surface_damage(w.surface, any_i32(0, 100), any_i32(0, 100), any_i32(0, 100),
		any_i32(0, 100));
	wl_surface_commit(w.surface);
	wl_buffer_destroy(b);
	wl_surface_attach(w.surface, NULL, 0, 0);
	wl_surface_commit(w.surface);
	xdg_toplevel_destroy(w.toplevel);
}

/* Requests in random order on a few objects; some are errors, which end the round. */
static void random_requests(struct conn *c)
{
	struct window w = toplevel(c);
	struct wp_viewport *vp = NULL;
	for (int i = 0; i < 50; i++) {
		switch (rnd(10)) {
		case 0: map(c, &w); break;
		case 1: xdg_toplevel_move(w.toplevel, c->g.seat, any_u32(100)); break;
		case 2: xdg_toplevel_set_maximized(w.toplevel); break;
		case 3:
			wl_surface_attach(w.surface, NULL, any_i32(0, 1), any_i32(0, 1));
			wl_surface_commit(w.surface);
			break;
		case 4: {
			struct wl_surface *s;
			popup(c, rnd(2) ? w.xdg : NULL, &s);
			break;
		}
		case 5:
			if (c->g.viewporter && !vp) {
				vp = wp_viewporter_get_viewport(c->g.viewporter, w.surface);
			}
			if (vp) {
				wp_viewport_set_destination(vp, any_i32(1, 300), any_i32(1, 300));
			}
			break;
		case 6:
			if (c->g.content_type) {
				struct wp_content_type_v1 *ct =
					wp_content_type_manager_v1_get_surface_content_type(c->g.content_type,
						w.surface);
				wp_content_type_v1_set_content_type(ct, any_u32(4));
			}
			break;
		case 7: wl_surface_commit(w.surface); break;
		case 8:
			xdg_toplevel_set_min_size(w.toplevel, any_i32(0, 500), any_i32(0, 500));
			break;
		default: wl_display_roundtrip(c->display); break;
		}
	}
}

static void extra_global(void *data, struct wl_registry *r, uint32_t name, const char *iface,
		uint32_t version)
{
	struct extra *x = data;
	if (strcmp(iface, zwlr_layer_shell_v1_interface.name) == 0) {
		x->layer_shell = wl_registry_bind(r, name, &zwlr_layer_shell_v1_interface, 1);
	} else if (strcmp(iface, zwp_input_method_manager_v2_interface.name) == 0) {
		x->input_methods = wl_registry_bind(r, name, &zwp_input_method_manager_v2_interface, 1);
	} else if (strcmp(iface, zwp_text_input_manager_v3_interface.name) == 0) {
		x->text_inputs = wl_registry_bind(r, name, &zwp_text_input_manager_v3_interface, 1);
	} else if (strcmp(iface, zxdg_decoration_manager_v1_interface.name) == 0) {
		x->decorations = wl_registry_bind(r, name, &zxdg_decoration_manager_v1_interface, 1);
	}
}

static void extra_global_remove(void *data, struct wl_registry *r, uint32_t name)
{
}

static const struct wl_registry_listener extra_listener = { extra_global, extra_global_remove };

struct extra extra_globals(struct conn *c)
{
	struct extra x = { 0 };
	struct wl_registry *registry = wl_display_get_registry(c->display);
	wl_registry_add_listener(registry, &extra_listener, &x);
	wl_display_roundtrip(c->display);
	return x;
}

static void layer_configure(void *data, struct wl_proxy *ls, uint32_t serial, uint32_t width,
		uint32_t height)
{
	/* acked, most of the time */
	if (rnd(4)) {
		wl_proxy_marshal_flags(ls, LAYER_SURFACE_ACK_CONFIGURE, NULL, 1, 0, rnd(8) ? serial :
			any_u32(100));
	}
}

static void layer_closed(void *data, struct wl_proxy *ls)
{
}

static const struct layer_surface_listener layer_listener = { layer_configure, layer_closed };

static void layer_random(struct conn *c)
{
	struct extra x = extra_globals(c);
	if (!x.layer_shell) {
		return;
	}
	struct wl_surface *s = wl_compositor_create_surface(c->g.compositor);
	struct wl_proxy *ls = wl_proxy_marshal_flags(x.layer_shell, LAYER_SHELL_GET_LAYER_SURFACE,
		&zwlr_layer_surface_v1_interface, 1, 0, NULL, s, NULL, rnd(2) ? rnd(4) : any_u32(5),
		"slim-hostile");
	wl_proxy_add_listener(ls, (void (**)(void))&layer_listener, c);
	for (int i = 0; i < 30; i++) {
		switch (rnd(9)) {
		case 0:
			wl_proxy_marshal_flags(ls, LAYER_SURFACE_SET_SIZE, NULL, 1, 0,
				rnd(2) ? 0 : any_u32(400), rnd(2) ? 0 : any_u32(400));
			break;
		case 1:
			wl_proxy_marshal_flags(ls, LAYER_SURFACE_SET_ANCHOR, NULL, 1, 0, any_u32(20));
			break;
		case 2:
			wl_proxy_marshal_flags(ls, LAYER_SURFACE_SET_EXCLUSIVE_ZONE, NULL, 1, 0,
				any_i32(-100, 700));
			break;
		case 3:
			wl_proxy_marshal_flags(ls, LAYER_SURFACE_SET_MARGIN, NULL, 1, 0,
				any_i32(-200, 400), any_i32(-200, 400), any_i32(-200, 400),
				any_i32(-200, 400));
			break;
		case 4:
			wl_proxy_marshal_flags(ls, LAYER_SURFACE_SET_KEYBOARD_INTERACTIVITY, NULL, 1, 0,
				any_u32(4));
			break;
		case 5:
			wl_surface_commit(s);
			break;
		case 6:
			wl_surface_attach(s, buffer(c, 1 + (int32_t)rnd(300), 1 + (int32_t)rnd(300)), 0, 0);
			wl_surface_commit(s);
			break;
		case 7:
			wl_proxy_marshal_flags(ls, LAYER_SURFACE_ACK_CONFIGURE, NULL, 1, 0, any_u32(100));
			break;
		default:
			wl_display_roundtrip(c->display);
			break;
		}
	}
	/* the surface first, its role object after: wlroots must cope */
	if (rnd(2)) {
		wl_surface_destroy(s);
	}
}

static void input_method_random(struct conn *c)
{
	struct extra x = extra_globals(c);
	if (!x.input_methods || !x.text_inputs) {
		return;
	}
	struct window w = toplevel(c);
	map(c, &w);
	struct zwp_text_input_v3 *ti =
		zwp_text_input_manager_v3_get_text_input(x.text_inputs, c->g.seat);
	struct wl_proxy *im = wl_proxy_marshal_flags(x.input_methods, IM_MANAGER_GET_INPUT_METHOD,
		&zwp_input_method_v2_interface, 1, 0, c->g.seat, NULL);
	bool grabbed = false;
	for (int i = 0; i < 40 && im && ti; i++) {
		switch (rnd(12)) {
		case 0: zwp_text_input_v3_enable(ti); break;
		case 1: zwp_text_input_v3_disable(ti); break;
		case 2: zwp_text_input_v3_set_surrounding_text(ti, "surrounding", any_i32(0, 20),
			any_i32(0, 20)); break;
		case 3: zwp_text_input_v3_set_cursor_rectangle(ti, any_i32(-100, 400),
			any_i32(-100, 400), any_i32(0, 100), any_i32(0, 100)); break;
		case 4: zwp_text_input_v3_commit(ti); break;
		case 5:
			wl_proxy_marshal_flags(im, IM_SET_PREEDIT_STRING, NULL, 1, 0, "予測",
				any_i32(-2, 10), any_i32(-2, 10));
			break;
		case 6: wl_proxy_marshal_flags(im, IM_COMMIT_STRING, NULL, 1, 0, "変換"); break;
		case 7:
			wl_proxy_marshal_flags(im, IM_DELETE_SURROUNDING_TEXT, NULL, 1, 0, any_u32(50),
				any_u32(50));
			break;
		case 8: wl_proxy_marshal_flags(im, IM_COMMIT, NULL, 1, 0, any_u32(8)); break;
		case 9:
			if (!grabbed) {
				wl_proxy_marshal_flags(im, IM_GRAB_KEYBOARD,
					&zwp_input_method_keyboard_grab_v2_interface, 1, 0, NULL);
				grabbed = true;
			}
			break;
		case 10: {
			struct wl_surface *s = wl_compositor_create_surface(c->g.compositor);
			wl_proxy_marshal_flags(im, IM_GET_INPUT_POPUP_SURFACE,
				&zwp_input_popup_surface_v2_interface, 1, 0, NULL, s);
			wl_surface_attach(s, buffer(c, 1 + (int32_t)rnd(100), 1 + (int32_t)rnd(50)), 0, 0);
			wl_surface_commit(s);
			break;
		}
		default:
			if (rnd(3) == 0) { /* one of them goes midway: the round ends there */
				if (rnd(2)) {
					wl_proxy_marshal_flags(im, IM_DESTROY, NULL, 1, WL_MARSHAL_FLAG_DESTROY);
					im = NULL;
				} else {
					zwp_text_input_v3_destroy(ti);
					ti = NULL;
				}
			}
			wl_display_roundtrip(c->display);
			break;
		}
	}
}

static const struct {
	const char *name;
	void (*run)(struct conn *c);
} scenarios[] = {
	{ "move-unmapped", move_unmapped },
	{ "popup-orphan", popup_orphan },
	{ "popup-chain", popup_chain },
	{ "configure-flood", configure_flood },
	{ "bad-ack", bad_ack },
	{ "detach", detach },
	{ "random", random_requests },
	{ "layer", layer_random },
	{ "input-method", input_method_random },
};

int main(int argc, char *argv[])
{
	unsigned width, height;
	if (argc == 3 && strcmp(argv[1], "extremes") == 0 &&
			sscanf(argv[2], "%ux%u", &width, &height) == 2) {
		rng_state = 1;
		return extremes(width, height) == 0 ? 0 : 1;
	}
	rng_state = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
	double seconds = argc > 2 ? atof(argv[2]) : 5;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned rounds = 0;
	size_t n = sizeof(scenarios) / sizeof(scenarios[0]);
	do {
		struct conn c;
		if (!conn_open(&c)) {
			fprintf(stderr, "slim-hostile: cannot connect\n");
			return 1;
		}
		size_t k = rounds < n ? rounds : rnd((uint32_t)n); /* each once, then at random */
		scenarios[k].run(&c);
		int ok = wl_display_roundtrip(c.display);
		if (ok >= 0) {
			ok = wl_display_roundtrip(c.display);
		}
		const struct wl_interface *iface = NULL;
		uint32_t id, code = ok < 0 ? wl_display_get_protocol_error(c.display, &iface, &id) : 0;
		if (ok < 0 && (iface || wl_display_get_error(c.display) == EPROTO)) {
			/* no interface: the object was destroyed before the error came */
			printf("round %u %s: error %s %u\n", rounds, scenarios[k].name,
				iface ? iface->name : "(destroyed)", code);
		} else {
			printf("round %u %s: %s\n", rounds, scenarios[k].name, ok < 0 ? "dropped" : "ok");
		}
		fflush(stdout);
		wl_display_disconnect(c.display);
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	printf("done %u\n", rounds);
	return 0;
}
