#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "content-type-v1-client-protocol.h"
#include "globals.h"
#include "viewporter-client-protocol.h"
#include "xdg-shell-client-protocol.h"

static void registry_global(void *data, struct wl_registry *registry, uint32_t name,
		const char *interface, uint32_t version)
{
	struct test_globals *g = data;
	if (strcmp(interface, wl_compositor_interface.name) == 0) {
		g->compositor = wl_registry_bind(registry, name, &wl_compositor_interface, 4);
	} else if (strcmp(interface, wl_shm_interface.name) == 0) {
		g->shm = wl_registry_bind(registry, name, &wl_shm_interface, 1);
	} else if (strcmp(interface, wl_seat_interface.name) == 0) {
		g->seat = wl_registry_bind(registry, name, &wl_seat_interface, 1);
	} else if (strcmp(interface, xdg_wm_base_interface.name) == 0) {
		g->wm_base = wl_registry_bind(registry, name, &xdg_wm_base_interface, 1);
	} else if (strcmp(interface, wp_viewporter_interface.name) == 0) {
		g->viewporter = wl_registry_bind(registry, name, &wp_viewporter_interface, 1);
	} else if (strcmp(interface, wp_content_type_manager_v1_interface.name) == 0) {
		g->content_type = wl_registry_bind(registry, name,
			&wp_content_type_manager_v1_interface, 1);
	}
}

static void registry_global_remove(void *data, struct wl_registry *registry, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = {
	.global = registry_global,
	.global_remove = registry_global_remove,
};

static void wm_base_ping(void *data, struct xdg_wm_base *wm_base, uint32_t serial)
{
	xdg_wm_base_pong(wm_base, serial);
}

static const struct xdg_wm_base_listener wm_base_listener = { .ping = wm_base_ping };

struct wl_display *test_globals_connect(struct test_globals *g)
{
	*g = (struct test_globals){ 0 };
	struct wl_display *display = wl_display_connect(NULL);
	if (!display) {
		return NULL;
	}
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, g);
	wl_display_roundtrip(display);
	if (!g->compositor || !g->shm || !g->wm_base || !g->seat) {
		wl_display_disconnect(display);
		return NULL;
	}
	xdg_wm_base_add_listener(g->wm_base, &wm_base_listener, g);
	return display;
}

struct wl_shm_pool *test_pool(struct wl_shm *shm, size_t size, uint8_t fill, uint8_t **mem)
{
	int fd = memfd_create("slim-test-client", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
		perror("memfd");
		exit(1);
	}
	*mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*mem == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	memset(*mem, fill, size);
	struct wl_shm_pool *pool = wl_shm_create_pool(shm, fd, (int32_t)size);
	close(fd);
	return pool;
}

void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}
