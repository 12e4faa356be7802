/*
 * slim-protocols MODE: a 200x150 window that uses one protocol and says
 * what came of it on stdout, one line an event ("ready" once mapped).
 *
 *   decorate-server  xdg-decoration, asking for the compositor's: "mode N"
 *   decorate-client  the same, asking to draw its own
 *   lock             locks the pointer on entering (pointer-constraints),
 *                    says "locked", then "relative DX DY" for each relative
 *                    motion and "motion X Y" for each absolute one
 *   inhibit          keeps the session from going idle (idle-inhibit)
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
#include "idle-inhibit-unstable-v1-client-protocol.h"
#include "pointer-constraints-unstable-v1-client-protocol.h"
#include "relative-pointer-unstable-v1-client-protocol.h"
#include "xdg-decoration-unstable-v1-client-protocol.h"
#include "xdg-shell-client-protocol.h"

#define W 200
#define H 150

struct client {
	const char *mode;
	struct wl_compositor *compositor;
	struct wl_shm *shm;
	struct wl_seat *seat;
	struct wl_pointer *pointer;
	struct xdg_wm_base *wm_base;
	struct zxdg_decoration_manager_v1 *decorations;
	struct zwp_pointer_constraints_v1 *constraints;
	struct zwp_relative_pointer_manager_v1 *relative;
	struct zwp_idle_inhibit_manager_v1 *inhibit;
	struct wl_surface *surface;
	struct zwp_locked_pointer_v1 *locked;
	bool configured;
};

static void global(void *data, struct wl_registry *r, uint32_t name, const char *iface,
		uint32_t version)
{
	struct client *c = data;
	if (strcmp(iface, wl_compositor_interface.name) == 0) {
		c->compositor = wl_registry_bind(r, name, &wl_compositor_interface, 4);
	} else if (strcmp(iface, wl_shm_interface.name) == 0) {
		c->shm = wl_registry_bind(r, name, &wl_shm_interface, 1);
	} else if (strcmp(iface, wl_seat_interface.name) == 0) {
		c->seat = wl_registry_bind(r, name, &wl_seat_interface, 5);
	} else if (strcmp(iface, xdg_wm_base_interface.name) == 0) {
		c->wm_base = wl_registry_bind(r, name, &xdg_wm_base_interface, 1);
	} else if (strcmp(iface, zxdg_decoration_manager_v1_interface.name) == 0) {
		c->decorations = wl_registry_bind(r, name, &zxdg_decoration_manager_v1_interface, 1);
	} else if (strcmp(iface, zwp_pointer_constraints_v1_interface.name) == 0) {
		c->constraints = wl_registry_bind(r, name, &zwp_pointer_constraints_v1_interface, 1);
	} else if (strcmp(iface, zwp_relative_pointer_manager_v1_interface.name) == 0) {
		c->relative = wl_registry_bind(r, name, &zwp_relative_pointer_manager_v1_interface, 1);
	} else if (strcmp(iface, zwp_idle_inhibit_manager_v1_interface.name) == 0) {
		c->inhibit = wl_registry_bind(r, name, &zwp_idle_inhibit_manager_v1_interface, 1);
	}
}

static void global_remove(void *data, struct wl_registry *r, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = {
	.global = global, .global_remove = global_remove,
};

static void ping(void *data, struct xdg_wm_base *b, uint32_t serial)
{
	xdg_wm_base_pong(b, serial);
}

static const struct xdg_wm_base_listener wm_base_listener = { .ping = ping };

static void configure(void *data, struct xdg_surface *xs, uint32_t serial)
{
	struct client *c = data;
	xdg_surface_ack_configure(xs, serial);
	c->configured = true;
}

static const struct xdg_surface_listener xdg_surface_listener = { .configure = configure };

static void toplevel_configure(void *data, struct xdg_toplevel *t, int32_t w, int32_t h,
		struct wl_array *states)
{
}

/* The compositor's close button, or any other way it asks: gone. */
static void toplevel_close(void *data, struct xdg_toplevel *t)
{
	say("closed");
	exit(0);
}

static const struct xdg_toplevel_listener toplevel_listener = {
	.configure = toplevel_configure, .close = toplevel_close,
};

static void deco_configure(void *data, struct zxdg_toplevel_decoration_v1 *d, uint32_t mode)
{
	say("mode %u", mode);
}

static const struct zxdg_toplevel_decoration_v1_listener deco_listener = {
	.configure = deco_configure,
};

static void locked(void *data, struct zwp_locked_pointer_v1 *l)
{
	say("locked");
}

static void unlocked(void *data, struct zwp_locked_pointer_v1 *l)
{
	say("unlocked");
}

static const struct zwp_locked_pointer_v1_listener locked_listener = {
	.locked = locked, .unlocked = unlocked,
};

static void relative_motion(void *data, struct zwp_relative_pointer_v1 *r, uint32_t hi,
		uint32_t lo, wl_fixed_t dx, wl_fixed_t dy, wl_fixed_t ux, wl_fixed_t uy)
{
	say("relative %d %d", wl_fixed_to_int(dx), wl_fixed_to_int(dy));
}

static const struct zwp_relative_pointer_v1_listener relative_listener = {
	.relative_motion = relative_motion,
};

static void enter(void *data, struct wl_pointer *p, uint32_t serial, struct wl_surface *s,
		wl_fixed_t x, wl_fixed_t y)
{
	struct client *c = data;
	if (strcmp(c->mode, "lock") == 0 && !c->locked) {
		c->locked = zwp_pointer_constraints_v1_lock_pointer(c->constraints, c->surface,
			c->pointer, NULL, ZWP_POINTER_CONSTRAINTS_V1_LIFETIME_PERSISTENT);
		zwp_locked_pointer_v1_add_listener(c->locked, &locked_listener, c);
	}
}

static void leave(void *data, struct wl_pointer *p, uint32_t serial, struct wl_surface *s)
{
}

static void motion(void *data, struct wl_pointer *p, uint32_t t, wl_fixed_t x, wl_fixed_t y)
{
	say("motion %d %d", wl_fixed_to_int(x), wl_fixed_to_int(y));
}

static void button(void *data, struct wl_pointer *p, uint32_t serial, uint32_t t, uint32_t b,
		uint32_t state)
{
}

static void axis(void *data, struct wl_pointer *p, uint32_t t, uint32_t a, wl_fixed_t v)
{
}

static void frame(void *data, struct wl_pointer *p)
{
}

static void axis_source(void *data, struct wl_pointer *p, uint32_t s)
{
}

static void axis_stop(void *data, struct wl_pointer *p, uint32_t t, uint32_t a)
{
}

static void axis_discrete(void *data, struct wl_pointer *p, uint32_t a, int32_t d)
{
}

static const struct wl_pointer_listener pointer_listener = {
	.enter = enter, .leave = leave, .motion = motion, .button = button, .axis = axis,
	.frame = frame, .axis_source = axis_source, .axis_stop = axis_stop,
	.axis_discrete = axis_discrete,
};

static struct wl_buffer *buffer(struct client *c)
{
	int fd = memfd_create("slim-protocols", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, W * H * 4) != 0) {
		exit(1);
	}
	uint32_t *px = mmap(NULL, W * H * 4, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	for (int i = 0; px != MAP_FAILED && i < W * H; i++) {
		px[i] = 0xff208040;
	}
	struct wl_shm_pool *pool = wl_shm_create_pool(c->shm, fd, W * H * 4);
	struct wl_buffer *b = wl_shm_pool_create_buffer(pool, 0, W, H, W * 4,
		WL_SHM_FORMAT_XRGB8888);
	wl_shm_pool_destroy(pool);
	close(fd);
	return b;
}

int main(int argc, char *argv[])
{
	struct client c = { .mode = argc == 2 ? argv[1] : "" };
	struct wl_display *display = wl_display_connect(NULL);
	if (!display) {
		return 1;
	}
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, &c);
	wl_display_roundtrip(display);
	if (!c.compositor || !c.shm || !c.wm_base || !c.seat || !c.decorations ||
			!c.constraints || !c.relative || !c.inhibit) {
		fprintf(stderr, "slim-protocols: a global is missing\n");
		return 1;
	}
	xdg_wm_base_add_listener(c.wm_base, &wm_base_listener, &c);
	c.pointer = wl_seat_get_pointer(c.seat);
	wl_pointer_add_listener(c.pointer, &pointer_listener, &c);
	c.surface = wl_compositor_create_surface(c.compositor);
	struct xdg_surface *xs = xdg_wm_base_get_xdg_surface(c.wm_base, c.surface);
	xdg_surface_add_listener(xs, &xdg_surface_listener, &c);
	struct xdg_toplevel *top = xdg_surface_get_toplevel(xs);
	xdg_toplevel_set_title(top, "slim-protocols");
	xdg_toplevel_add_listener(top, &toplevel_listener, &c);
	if (strncmp(c.mode, "decorate-", 9) == 0) {
		struct zxdg_toplevel_decoration_v1 *d =
			zxdg_decoration_manager_v1_get_toplevel_decoration(c.decorations, top);
		zxdg_toplevel_decoration_v1_add_listener(d, &deco_listener, &c);
		zxdg_toplevel_decoration_v1_set_mode(d, strcmp(c.mode, "decorate-server") == 0 ?
			ZXDG_TOPLEVEL_DECORATION_V1_MODE_SERVER_SIDE :
			ZXDG_TOPLEVEL_DECORATION_V1_MODE_CLIENT_SIDE);
	} else if (strcmp(c.mode, "lock") == 0) {
		struct zwp_relative_pointer_v1 *r =
			zwp_relative_pointer_manager_v1_get_relative_pointer(c.relative, c.pointer);
		zwp_relative_pointer_v1_add_listener(r, &relative_listener, &c);
	} else if (strcmp(c.mode, "inhibit") == 0) {
		zwp_idle_inhibit_manager_v1_create_inhibitor(c.inhibit, c.surface);
	} else {
		fprintf(stderr, "usage: slim-protocols decorate-server|decorate-client|lock|inhibit\n");
		return 2;
	}
	wl_surface_commit(c.surface);
	while (!c.configured && wl_display_dispatch(display) != -1) {
	}
	wl_surface_attach(c.surface, buffer(&c), 0, 0);
	wl_surface_damage(c.surface, 0, 0, W, H);
	wl_surface_commit(c.surface);
	wl_display_roundtrip(display);
	say("ready");
	while (wl_display_dispatch(display) != -1) {
	}
	return 0;
}
