/*
 * slim-hog: a client that takes all the memory it can, for the test of the
 * session's memory limit (test_neighbours).
 *
 *   slim-hog buffer W H   one toplevel whose wl_shm buffer is W×H XRGB8888,
 *                         every page written ("written W H" once they are),
 *                         attached and committed: "committed W H" once the
 *                         compositor has answered the commit, "shown" at
 *                         its frame callback, or "protocol error INTERFACE
 *                         CODE" if the compositor refused; then held
 *   slim-hog clients N    N connections at once, each a mapped 64×64
 *                         toplevel: "clients GOT of N" once every one has
 *                         been answered (GOT those that still stand); held
 *
 * Both hold what they got until they are killed or the compositor goes.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <wayland-client.h>
#include "globals.h"
#include "xdg-shell-client-protocol.h"

#define SMALL 64

struct window {
	struct wl_display *display;
	struct test_globals g;
	struct wl_surface *surface;
	struct xdg_surface *xdg_surface;
	struct xdg_toplevel *toplevel;
	uint32_t serial;
	bool configured, shown;
};

static void xdg_surface_configure(void *data, struct xdg_surface *xs, uint32_t serial)
{
	struct window *w = data;
	w->serial = serial;
	w->configured = true;
}

static const struct xdg_surface_listener xdg_surface_listener = {
	.configure = xdg_surface_configure,
};

static void frame_done(void *data, struct wl_callback *cb, uint32_t time)
{
	((struct window *)data)->shown = true;
	wl_callback_destroy(cb);
}

static const struct wl_callback_listener frame_listener = { .done = frame_done };

/* Connects and asks for a toplevel; false if the compositor would not. */
static bool window_open(struct window *w, const char *title)
{
	w->display = test_globals_connect(&w->g);
	if (!w->display) {
		return false;
	}
	w->surface = wl_compositor_create_surface(w->g.compositor);
	w->xdg_surface = xdg_wm_base_get_xdg_surface(w->g.wm_base, w->surface);
	xdg_surface_add_listener(w->xdg_surface, &xdg_surface_listener, w);
	w->toplevel = xdg_surface_get_toplevel(w->xdg_surface);
	xdg_toplevel_set_title(w->toplevel, title);
	wl_surface_commit(w->surface);
	return wl_display_flush(w->display) >= 0;
}

/* Attaches a width×height buffer every page of which is written. */
static void window_attach(struct window *w, int32_t width, int32_t height)
{
	uint8_t *mem;
	size_t size = (size_t)width * (size_t)height * 4;
	struct wl_shm_pool *pool = test_pool(w->g.shm, size, 0x5a, &mem);
	struct wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, width, height, width * 4,
		WL_SHM_FORMAT_XRGB8888);
	wl_shm_pool_destroy(pool);
	xdg_surface_ack_configure(w->xdg_surface, w->serial);
	wl_surface_attach(w->surface, buffer, 0, 0);
	wl_surface_damage_buffer(w->surface, 0, 0, width, height);
	wl_callback_add_listener(wl_surface_frame(w->surface), &frame_listener, w);
	wl_surface_commit(w->surface);
}

/* The compositor's protocol error on this connection, said; true if there was one. */
static bool said_error(struct window *w)
{
	if (!wl_display_get_error(w->display)) {
		return false;
	}
	const struct wl_interface *iface = NULL;
	uint32_t code = wl_display_get_protocol_error(w->display, &iface, NULL);
	say("protocol error %s %u", iface ? iface->name : "(none: connection lost)", code);
	return true;
}

static int hog_buffer(long width, long height)
{
	/* the largest buffer wl_shm can describe: stride and pool size are int32 */
	if (width < 1 || height < 1 || width > (1 << 20) || height > (1 << 20) ||
			width * height > INT32_MAX / 4) {
		say("%ld×%ld is larger than a wl_shm pool can be", width, height);
		return 2;
	}
	struct window w = { 0 };
	if (!window_open(&w, "slim-hog buffer")) {
		say("no connection");
		return 1;
	}
	while (!w.configured && wl_display_dispatch(w.display) >= 0) {
	}
	if (said_error(&w)) {
		return 1;
	}
	window_attach(&w, (int32_t)width, (int32_t)height);
	say("written %ld %ld", width, height);
	if (wl_display_roundtrip(w.display) < 0 && said_error(&w)) {
		return 1;
	}
	say("committed %ld %ld", width, height);
	/* (the frame event may have come with the round trip) */
	while (w.shown || wl_display_dispatch(w.display) >= 0) {
		if (w.shown) {
			say("shown");
			w.shown = false;
		}
	}
	said_error(&w);
	return 1;
}

static int hog_clients(long n)
{
	if (n < 1 || n > 100000) {
		say("clients: 1 to 100000");
		return 2;
	}
	/* a connection and a pool each, for a moment */
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	struct window *w = calloc((size_t)n, sizeof(*w));
	struct pollfd *fds = calloc((size_t)n, sizeof(*fds));
	if (!w || !fds) {
		return 1;
	}
	long opened = 0;
	while (opened < n && window_open(&w[opened], "slim-hog client")) {
		opened++;
	}
	long got = 0;
	for (long i = 0; i < opened; i++) {
		while (!w[i].configured && wl_display_dispatch(w[i].display) >= 0) {
		}
		if (w[i].configured) {
			window_attach(&w[i], SMALL, SMALL);
		}
	}
	for (long i = 0; i < opened; i++) {
		if (w[i].configured && wl_display_roundtrip(w[i].display) >= 0) {
			got++;
		}
		fds[i] = (struct pollfd){ .fd = wl_display_get_fd(w[i].display), .events = POLLIN };
	}
	say("clients %ld of %ld", got, n);
	/* held: pings answered, until every connection is gone */
	long left = opened;
	while (left > 0 && poll(fds, (nfds_t)opened, -1) >= 0) {
		for (long i = 0; i < opened; i++) {
			if (fds[i].fd >= 0 && fds[i].revents &&
					(wl_display_dispatch(w[i].display) < 0 ||
					wl_display_flush(w[i].display) < 0)) {
				fds[i].fd = -1;
				left--;
			}
		}
	}
	say("clients all gone");
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "buffer") == 0) {
		return hog_buffer(strtol(argv[2], NULL, 10), strtol(argv[3], NULL, 10));
	} else if (argc == 3 && strcmp(argv[1], "clients") == 0) {
		return hog_clients(strtol(argv[2], NULL, 10));
	}
	fprintf(stderr, "usage: slim-hog buffer WIDTH HEIGHT | slim-hog clients N\n");
	return 2;
}
