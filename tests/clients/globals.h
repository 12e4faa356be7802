/* What the test clients bind, shm pools for them, and their way of saying what happened. */
#ifndef SLIM_TEST_GLOBALS_H
#define SLIM_TEST_GLOBALS_H

#include <stddef.h>
#include <stdint.h>
#include <wayland-client.h>

struct test_globals {
	struct wl_compositor *compositor;
	struct wl_shm *shm;
	struct wl_seat *seat;
	struct xdg_wm_base *wm_base; /* its pings answered */
	struct wp_viewporter *viewporter;
	struct wp_content_type_manager_v1 *content_type;
};

/* Connects to $WAYLAND_DISPLAY and binds; NULL if a core global is missing. */
struct wl_display *test_globals_connect(struct test_globals *g);

/* One line on stdout, flushed: what the tests wait for. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A pool of `size` bytes filled with `fill`; its memory, mapped, in *mem. Exits on failure. */
struct wl_shm_pool *test_pool(struct wl_shm *shm, size_t size, uint8_t fill, uint8_t **mem);

#endif
