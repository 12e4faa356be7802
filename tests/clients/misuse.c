/*
 * slim-misuse CASE: one misuse of a protocol, then what the compositor
 * answered on stdout: "error INTERFACE CODE" (a protocol error),
 * "error errno N" (the connection ended otherwise, e.g. no_memory), or
 * "ok" (it carried on).
 *
 *   layer-zero           a layer surface of size 0x0 with no anchors
 *   lock-twice           two pointer locks on one surface
 *   keymap-garbage       a virtual keyboard whose keymap does not parse
 *   keymap-overlong      a keymap said to be 1 MiB in a file of 4096 bytes, no NUL
 *   keymap-unterminated  a keymap of 4096 bytes with no terminating NUL
 *   key-no-keymap        a virtual key before any keymap
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>
#include "pointer-constraints-unstable-v1-client-protocol.h"
#include "wlr-unstable.h"

struct globals {
	struct wl_compositor *compositor;
	struct wl_seat *seat;
	struct wl_proxy *layer_shell, *keyboards;
	struct zwp_pointer_constraints_v1 *constraints;
};

static void global(void *data, struct wl_registry *r, uint32_t name, const char *iface,
		uint32_t version)
{
	struct globals *g = data;
	if (strcmp(iface, wl_compositor_interface.name) == 0) {
		g->compositor = wl_registry_bind(r, name, &wl_compositor_interface, 4);
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
	if (argc != 2) {
		fprintf(stderr, "usage: slim-misuse CASE\n");
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
	if (!g.compositor || !g.seat || !g.layer_shell || !g.keyboards || !g.constraints) {
		fprintf(stderr, "slim-misuse: a global is missing\n");
		return 1;
	}
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
		printf("ok\n");
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
