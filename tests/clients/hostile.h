/* What slim-hostile's rounds (hostile.c) and its extremes (extremes.c) share. */
#ifndef SLIM_TEST_HOSTILE_H
#define SLIM_TEST_HOSTILE_H

#include <stdbool.h>
#include <stdint.h>
#include <wayland-client.h>
#include "globals.h"

struct conn {
	struct wl_display *display;
	struct test_globals g;
	uint32_t configure_serial; /* the last xdg_surface.configure */
	bool manual_ack;           /* not acked as it comes */
};

/* The globals only some rounds use (NULL where the compositor has none). */
struct extra {
	struct wl_proxy *layer_shell, *input_methods;
	struct zwp_text_input_manager_v3 *text_inputs;
	struct zxdg_decoration_manager_v1 *decorations;
};

struct window {
	struct wl_surface *surface;
	struct xdg_surface *xdg;
	struct xdg_toplevel *toplevel;
};

/* A number in [0, n), from the seed. */
uint32_t rnd(uint32_t n);
bool conn_open(struct conn *c);
struct extra extra_globals(struct conn *c);
/* A w x h XRGB8888 buffer of random pixels. */
struct wl_buffer *buffer(struct conn *c, int32_t w, int32_t h);
/* A toplevel, committed once; its configures acked (unless manual_ack). */
struct window toplevel(struct conn *c);
/* Its first configure awaited, then a buffer of a random size committed. */
void map(struct conn *c, struct window *w);

/* extremes.c: each case at each extreme; returns how many ended wrongly. */
int extremes(uint32_t width, uint32_t height);

#endif
