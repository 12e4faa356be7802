/*
 * slim-misuse CASE: one misuse of a protocol, then what the compositor
 * answered on stdout: "error INTERFACE CODE" (a protocol error),
 * "error errno N" (the connection ended otherwise, e.g. no_memory),
 * "locked" (it carried on, and locked the pointer) or "ok" (it carried on).
 *
 *   layer-zero           a layer surface of size 0x0 with no anchors
 *   lock-twice           two pointer locks on one surface
 *   lock-unfocused       a pointer lock on a surface without the pointer (no role,
 *                        no buffer: it never has it)
 *   lock-dead-surface    a pointer lock on a surface the client has destroyed
 *   lock-window          a window with a pointer lock: says "ready", then, once
 *                        the lock is active, destroys its window under it and
 *                        the lock after that
 *   keymap-garbage       a virtual keyboard whose keymap does not parse
 *   keymap-overlong      a keymap said to be 1 MiB in a file of 4096 bytes, no NUL
 *   keymap-unterminated  a keymap of 4096 bytes with no terminating NUL
 *   key-no-keymap        a virtual key before any keymap
 *
 * slim-misuse titles FINAL: a task bar (wlr-foreign-toplevel-management)
 * that says "ready", then counts the titles it is sent until one is FINAL,
 * and says "titles N".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>
#include "globals.h"
#include "pointer-constraints-unstable-v1-client-protocol.h"
#include "wlr-unstable.h"
#include "xdg-shell-client-protocol.h"

struct globals {
	struct wl_compositor *compositor;
	struct wl_shm *shm;
	struct wl_seat *seat;
	struct xdg_wm_base *wm_base;
	struct wl_proxy *layer_shell, *keyboards, *toplevels;
	struct zwp_pointer_constraints_v1 *constraints;
};

static void global(void *data, struct wl_registry *r, uint32_t name, const char *iface,
		uint32_t version)
{
	struct globals *g = data;
	if (strcmp(iface, wl_compositor_interface.name) == 0) {
		g->compositor = wl_registry_bind(r, name, &wl_compositor_interface, 4);
	} else if (strcmp(iface, wl_shm_interface.name) == 0) {
		g->shm = wl_registry_bind(r, name, &wl_shm_interface, 1);
	} else if (strcmp(iface, xdg_wm_base_interface.name) == 0) {
		g->wm_base = wl_registry_bind(r, name, &xdg_wm_base_interface, 1);
	} else if (strcmp(iface, zwlr_foreign_toplevel_manager_v1_interface.name) == 0) {
		g->toplevels = wl_registry_bind(r, name,
			&zwlr_foreign_toplevel_manager_v1_interface, 1);
	} else if (strcmp(iface, wl_seat_interface.name) == 0 && !g->seat) {
		g->seat = wl_registry_bind(r, name, &wl_seat_interface, 5);
	} else if (strcmp(iface, zwlr_layer_shell_v1_interface.name) == 0) {
		g->layer_shell = wl_registry_bind(r, name, &zwlr_layer_shell_v1_interface, 1);
	} else if (strcmp(iface, zwp_virtual_keyboard_manager_v1_interface.name) == 0) {
		g->keyboards = wl_registry_bind(r, name,
			&zwp_virtual_keyboard_manager_v1_interface, 1);
	} else if (strcmp(iface, zwp_pointer_constraints_v1_interface.name) == 0) {
		g->constraints = wl_registry_bind(r, name, &zwp_pointer_constraints_v1_interface, 1);
	}
}

static void global_remove(void *data, struct wl_registry *r, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = { global, global_remove };

static void ping(void *data, struct xdg_wm_base *wm_base, uint32_t serial)
{
	xdg_wm_base_pong(wm_base, serial);
}

static const struct xdg_wm_base_listener wm_base_listener = { .ping = ping };

static void locked(void *data, struct zwp_locked_pointer_v1 *l)
{
	*(bool *)data = true;
}

static void unlocked(void *data, struct zwp_locked_pointer_v1 *l)
{
}

static const struct zwp_locked_pointer_v1_listener locked_listener = {
	.locked = locked, .unlocked = unlocked,
};

static struct zwp_locked_pointer_v1 *lock(struct globals *g, struct wl_surface *surface,
		bool *was_locked)
{
	struct zwp_locked_pointer_v1 *l = zwp_pointer_constraints_v1_lock_pointer(
		g->constraints, surface, wl_seat_get_pointer(g->seat), NULL,
		ZWP_POINTER_CONSTRAINTS_V1_LIFETIME_PERSISTENT);
	zwp_locked_pointer_v1_add_listener(l, &locked_listener, was_locked);
	return l;
}

static void configure(void *data, struct xdg_surface *xs, uint32_t serial)
{
	xdg_surface_ack_configure(xs, serial);
	*(bool *)data = true;
}

static const struct xdg_surface_listener xdg_surface_listener = { .configure = configure };

/*
 * A window big enough to be under (250, 250) wherever the cascade puts it,
 * locking the pointer once it has it; its surface dies under the active
 * lock, the lock object after it.
 */
static void lock_window(struct globals *g, struct wl_display *display,
		struct wl_surface *surface, bool *was_locked)
{
	enum { W = 400, H = 300 };
	bool configured = false;
	xdg_wm_base_add_listener(g->wm_base, &wm_base_listener, NULL);
	struct xdg_surface *xs = xdg_wm_base_get_xdg_surface(g->wm_base, surface);
	xdg_surface_add_listener(xs, &xdg_surface_listener, &configured);
	struct xdg_toplevel *top = xdg_surface_get_toplevel(xs);
	xdg_toplevel_set_title(top, "slim-misuse");
	wl_surface_commit(surface);
	while (!configured && wl_display_dispatch(display) != -1) {
	}
	uint8_t *mem;
	struct wl_shm_pool *pool = test_pool(g->shm, W * H * 4, 0x80, &mem);
	wl_surface_attach(surface, wl_shm_pool_create_buffer(pool, 0, W, H, W * 4,
		WL_SHM_FORMAT_XRGB8888), 0, 0);
	wl_shm_pool_destroy(pool);
	wl_surface_damage(surface, 0, 0, W, H);
	struct zwp_locked_pointer_v1 *l = lock(g, surface, was_locked);
	wl_surface_commit(surface);
	wl_display_roundtrip(display);
	say("ready");
	while (!*was_locked && wl_display_dispatch(display) != -1) {
	}
	xdg_toplevel_destroy(top);
	xdg_surface_destroy(xs);
	wl_surface_destroy(surface);
	wl_display_roundtrip(display);
	zwp_locked_pointer_v1_destroy(l);
}

struct titles {
	const char *final;
	int count;
	bool done;
};

static void title(void *data, struct wl_proxy *handle, const char *title)
{
	struct titles *t = data;
	t->count++;
	t->done = t->done || strcmp(title, t->final) == 0;
}

static void app_id(void *data, struct wl_proxy *handle, const char *app_id)
{
}

static void output_enter(void *data, struct wl_proxy *handle, struct wl_output *output)
{
}

static void output_leave(void *data, struct wl_proxy *handle, struct wl_output *output)
{
}

static void state(void *data, struct wl_proxy *handle, struct wl_array *state)
{
}

static void done(void *data, struct wl_proxy *handle)
{
}

static void closed(void *data, struct wl_proxy *handle)
{
	wl_proxy_marshal_flags(handle, FOREIGN_TOPLEVEL_HANDLE_DESTROY, NULL, 1,
		WL_MARSHAL_FLAG_DESTROY);
}

static const struct foreign_toplevel_handle_listener handle_listener = {
	title, app_id, output_enter, output_leave, state, done, closed,
};

static void toplevel(void *data, struct wl_proxy *manager, struct wl_proxy *handle)
{
	wl_proxy_add_listener(handle, (void (**)(void))&handle_listener, data);
}

static void finished(void *data, struct wl_proxy *manager)
{
}

static const struct foreign_toplevel_manager_listener manager_listener = {
	toplevel, finished,
};

static int count_titles(struct globals *g, struct wl_display *display, const char *final)
{
	struct titles t = { .final = final };
	wl_proxy_add_listener(g->toplevels, (void (**)(void))&manager_listener, &t);
	wl_display_roundtrip(display);
	say("ready");
	while (!t.done && wl_display_dispatch(display) != -1) {
	}
	if (!t.done) {
		fprintf(stderr, "slim-misuse: disconnected before the title '%s'\n", final);
		return 1;
	}
	say("titles %d", t.count);
	return 0;
}

/* A file of `size` bytes starting with the `len` bytes at `bytes`, zeros after. */
static int keymap_file(const void *bytes, size_t len, size_t size)
{
	int fd = memfd_create("slim-misuse-keymap", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0 ||
			pwrite(fd, bytes, len, 0) != (ssize_t)len) {
		perror("slim-misuse: keymap file");
		exit(1);
	}
	return fd;
}

static struct wl_proxy *virtual_keyboard(struct globals *g)
{
	return wl_proxy_marshal_flags(g->keyboards, VIRTUAL_KEYBOARD_MANAGER_CREATE,
		&zwp_virtual_keyboard_v1_interface, 1, 0, g->seat, NULL);
}

static void send_keymap(struct wl_proxy *vk, int fd, uint32_t size)
{
	wl_proxy_marshal_flags(vk, VIRTUAL_KEYBOARD_KEYMAP, NULL, 1, 0,
		WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1, fd, size);
	close(fd);
}

int main(int argc, char *argv[])
{
	if (argc != 2 && !(argc == 3 && strcmp(argv[1], "titles") == 0)) {
		fprintf(stderr, "usage: slim-misuse CASE | slim-misuse titles FINAL\n");
		return 2;
	}
	const char *what = argv[1];
	struct wl_display *display = wl_display_connect(NULL);
	if (!display) {
		fprintf(stderr, "slim-misuse: cannot connect to a Wayland display\n");
		return 1;
	}
	struct globals g = { 0 };
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, &g);
	wl_display_roundtrip(display);
	if (!g.compositor || !g.shm || !g.seat || !g.wm_base || !g.layer_shell || !g.keyboards ||
			!g.constraints || !g.toplevels) {
		fprintf(stderr, "slim-misuse: a global is missing\n");
		return 1;
	}
	if (strcmp(what, "titles") == 0) {
		return count_titles(&g, display, argv[2]);
	}
	bool was_locked = false;
	struct wl_surface *surface = wl_compositor_create_surface(g.compositor);
	if (strcmp(what, "layer-zero") == 0) {
		struct wl_proxy *ls = wl_proxy_marshal_flags(g.layer_shell,
			LAYER_SHELL_GET_LAYER_SURFACE, &zwlr_layer_surface_v1_interface, 1, 0,
			NULL, surface, NULL, LAYER_TOP, "slim-misuse");
		wl_proxy_marshal_flags(ls, LAYER_SURFACE_SET_SIZE, NULL, 1, 0, 0, 0);
		wl_surface_commit(surface);
	} else if (strcmp(what, "lock-twice") == 0) {
		struct wl_pointer *pointer = wl_seat_get_pointer(g.seat);
		for (int i = 0; i < 2; i++) {
			zwp_pointer_constraints_v1_lock_pointer(g.constraints, surface, pointer, NULL,
				ZWP_POINTER_CONSTRAINTS_V1_LIFETIME_PERSISTENT);
		}
	} else if (strcmp(what, "lock-unfocused") == 0) {
		lock(&g, surface, &was_locked);
	} else if (strcmp(what, "lock-dead-surface") == 0) {
		/* destroyed for the compositor; the proxy stays, to be named in the lock */
		wl_proxy_marshal_flags((struct wl_proxy *)surface, WL_SURFACE_DESTROY, NULL, 1, 0);
		lock(&g, surface, &was_locked);
	} else if (strcmp(what, "lock-window") == 0) {
		lock_window(&g, display, surface, &was_locked);
	} else if (strcmp(what, "keymap-garbage") == 0) {
		send_keymap(virtual_keyboard(&g), keymap_file("this is not a keymap", 21, 21), 21);
	} else if (strcmp(what, "keymap-overlong") == 0) {
		/* xkbcommon reads on to the NUL: into the mapping's pages past the file */
		static char xs[4096];
		memset(xs, 'x', sizeof(xs));
		send_keymap(virtual_keyboard(&g), keymap_file(xs, sizeof(xs), sizeof(xs)), 1 << 20);
	} else if (strcmp(what, "keymap-unterminated") == 0) {
		static char xs[4096];
		memset(xs, 'x', sizeof(xs));
		send_keymap(virtual_keyboard(&g), keymap_file(xs, sizeof(xs), sizeof(xs)),
			sizeof(xs));
	} else if (strcmp(what, "key-no-keymap") == 0) {
		wl_proxy_marshal_flags(virtual_keyboard(&g), VIRTUAL_KEYBOARD_KEY, NULL, 1, 0,
			0, 30, WL_KEYBOARD_KEY_STATE_PRESSED);
	} else {
		fprintf(stderr, "slim-misuse: no case '%s'\n", what);
		return 2;
	}
	/* two round trips: an error posted at the request or at the next commit */
	if (wl_display_roundtrip(display) >= 0 && wl_display_roundtrip(display) >= 0) {
		printf("%s\n", was_locked ? "locked" : "ok");
		return 0;
	}
	const struct wl_interface *iface = NULL;
	uint32_t code = wl_display_get_protocol_error(display, &iface, NULL);
	if (iface) {
		printf("error %s %u\n", iface->name, code);
	} else {
		printf("error errno %d\n", wl_display_get_error(display));
	}
	return 0;
}
