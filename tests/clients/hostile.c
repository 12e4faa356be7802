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
 */
#define _GNU_SOURCE
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
#include "viewporter-client-protocol.h"
#include "xdg-shell-client-protocol.h"

struct conn {
	struct wl_display *display;
	struct test_globals g;
	uint32_t configure_serial;
};

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return n ? (uint32_t)(rng_state >> 33) % n : 0;
}

static void xdg_surface_configure(void *data, struct xdg_surface *xs, uint32_t serial)
{
	struct conn *c = data;
	c->configure_serial = serial;
	xdg_surface_ack_configure(xs, serial);
}

static const struct xdg_surface_listener xdg_surface_listener = {
	.configure = xdg_surface_configure,
};

static bool conn_open(struct conn *c)
{
	*c = (struct conn){ 0 };
	c->display = test_globals_connect(&c->g);
	return c->display != NULL;
}

static struct wl_buffer *buffer(struct conn *c, int32_t w, int32_t h)
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

struct window {
	struct wl_surface *surface;
	struct xdg_surface *xdg;
	struct xdg_toplevel *toplevel;
};

static struct window toplevel(struct conn *c)
{
	struct window w = { .surface = wl_compositor_create_surface(c->g.compositor) };
	w.xdg = xdg_wm_base_get_xdg_surface(c->g.wm_base, w.surface);
	xdg_surface_add_listener(w.xdg, &xdg_surface_listener, c);
	w.toplevel = xdg_surface_get_toplevel(w.xdg);
	xdg_toplevel_set_title(w.toplevel, "slim-hostile");
	wl_surface_commit(w.surface);
	return w;
}

static void map(struct conn *c, struct window *w)
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
	xdg_toplevel_move(w.toplevel, c->g.seat, rnd(1000));
	xdg_toplevel_resize(w.toplevel, c->g.seat, rnd(1000), XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM_RIGHT);
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
	xdg_surface_ack_configure(w.xdg, c->configure_serial + 1000);
}

static void detach(struct conn *c)
{
	struct window w = toplevel(c);
	map(c, &w);
	struct wl_buffer *b = buffer(c, 100, 100);
	wl_surface_attach(w.surface, b, 0, 0);
	wl_surface_damage(w.surface, 0, 0, 100, 100);
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
		case 1: xdg_toplevel_move(w.toplevel, c->g.seat, rnd(100)); break;
		case 2: xdg_toplevel_set_maximized(w.toplevel); break;
		case 3: wl_surface_attach(w.surface, NULL, 0, 0); wl_surface_commit(w.surface); break;
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
				wp_viewport_set_destination(vp, 1 + (int32_t)rnd(300), 1 + (int32_t)rnd(300));
			}
			break;
		case 6:
			if (c->g.content_type) {
				struct wp_content_type_v1 *ct =
					wp_content_type_manager_v1_get_surface_content_type(c->g.content_type,
						w.surface);
				wp_content_type_v1_set_content_type(ct, rnd(4));
			}
			break;
		case 7: wl_surface_commit(w.surface); break;
		case 8: xdg_toplevel_set_min_size(w.toplevel, (int32_t)rnd(500), (int32_t)rnd(500)); break;
		default: wl_display_roundtrip(c->display); break;
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
};

int main(int argc, char *argv[])
{
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
		if (ok < 0 && iface) {
			printf("round %u %s: error %s %u\n", rounds, scenarios[k].name, iface->name, code);
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
