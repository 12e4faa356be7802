/*
 * slim-echo: the smallest interactive client, for latency measurements in
 * the manner of SLIM section 4.1. A 256x256 window; every key press paints
 * the next 16x16 cell in another colour and commits just that damage.
 * Prints "ready" once its first frame is on the screen.
 *
 * With --print-keys it also prints every key event it gets, "key CODE
 * pressed" and "key CODE released" (evdev codes), and repeats keys as a
 * real client does: the key pressed last, held past the compositor's
 * repeat delay, prints "key CODE repeat" at its repeat rate (and paints
 * like a press). Any key repeats, modifiers too, so that a key the
 * compositor leaves down shows.
 *
 * With --work-ms N it is SLIM's yardstick (section 6.1): every key press
 * first burns N ms of this process's CPU time, then paints.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <wayland-client.h>
#include "xdg-shell-client-protocol.h"

#define W 256
#define H 256
#define CELL 16

struct buffer {
	struct wl_buffer *wl;
	uint32_t *px;
	uint32_t cells; /* cells painted into this buffer so far */
	bool busy;
};

struct echo {
	struct wl_compositor *compositor;
	struct wl_shm *shm;
	struct xdg_wm_base *wm_base;
	struct wl_seat *seat;
	struct wl_keyboard *keyboard;
	struct wl_surface *surface;
	struct xdg_surface *xdg_surface;
	struct xdg_toplevel *toplevel;
	struct buffer buffers[2];
	uint32_t cell;
	bool configured, ready, quit;

	/* --print-keys: the keys it gets, and their autorepeat */
	bool print_keys;
	unsigned work_ms; /* --work-ms: the yardstick's CPU per key */
	int repeat_fd;
	int32_t repeat_rate, repeat_delay; /* per second, ms; the compositor's */
	uint32_t repeat_key;
	bool repeating;
};

static void buffer_release(void *data, struct wl_buffer *wl)
{
	((struct buffer *)data)->busy = false;
}

static const struct wl_buffer_listener buffer_listener = { .release = buffer_release };

static bool buffers_create(struct echo *e)
{
	size_t size = (size_t)W * H * 4;
	int fd = memfd_create("slim-echo", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)(2 * size)) != 0) {
		return false;
	}
	uint8_t *mem = mmap(NULL, 2 * size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	struct wl_shm_pool *pool = wl_shm_create_pool(e->shm, fd, (int32_t)(2 * size));
	close(fd);
	if (mem == MAP_FAILED) {
		return false;
	}
	for (int i = 0; i < 2; i++) {
		struct buffer *b = &e->buffers[i];
		b->px = (uint32_t *)(mem + i * size);
		b->wl = wl_shm_pool_create_buffer(pool, (int32_t)(i * size), W, H, W * 4,
			WL_SHM_FORMAT_XRGB8888);
		wl_buffer_add_listener(b->wl, &buffer_listener, b);
		for (size_t k = 0; k < (size_t)W * H; k++) {
			b->px[k] = 0xffffffff;
		}
	}
	wl_shm_pool_destroy(pool);
	return true;
}

/* Both buffers hold the same picture: each change is painted into both. */
static void paint_cell(struct echo *e, struct buffer *b, uint32_t cell)
{
	uint32_t cx = (cell % (W / CELL)) * CELL, cy = (cell / (W / CELL) % (H / CELL)) * CELL;
	uint32_t colour = 0xff000000 | ((cell * 0x3f1d27u) & 0xffffff);
	for (uint32_t y = cy; y < cy + CELL; y++) {
		for (uint32_t x = cx; x < cx + CELL; x++) {
			b->px[y * W + x] = colour;
		}
	}
}

static void commit(struct echo *e, int32_t x, int32_t y, int32_t w, int32_t h)
{
	struct buffer *b = e->buffers[0].busy ? &e->buffers[1] : &e->buffers[0];
	/* Bring this buffer up to date with the cells painted since it was last used. */
	for (; b->cells < e->cell; b->cells++) {
		paint_cell(e, b, b->cells);
	}
	b->busy = true;
	wl_surface_attach(e->surface, b->wl, 0, 0);
	wl_surface_damage_buffer(e->surface, x, y, w, h);
	wl_surface_commit(e->surface);
}

static void frame_done(void *data, struct wl_callback *cb, uint32_t time)
{
	struct echo *e = data;
	wl_callback_destroy(cb);
	if (!e->ready) {
		e->ready = true;
		printf("ready\n");
		fflush(stdout);
	}
}

static const struct wl_callback_listener frame_listener = { .done = frame_done };

/* The next cell, painted and committed alone. */
static void paint_next(struct echo *e)
{
	uint32_t cell = e->cell++;
	uint32_t cx = (cell % (W / CELL)) * CELL, cy = (cell / (W / CELL) % (H / CELL)) * CELL;
	commit(e, (int32_t)cx, (int32_t)cy, CELL, CELL);
}

/* Arms the repeat timer `first_ms` from now, then every 1000 / rate ms; 0 disarms. */
static void arm_repeat(struct echo *e, int32_t first_ms)
{
	if (e->repeat_fd < 0) {
		return;
	}
	int32_t every_ms = e->repeat_rate > 0 ? 1000 / e->repeat_rate : 0;
	struct itimerspec its = {
		.it_value = { first_ms / 1000, (long)(first_ms % 1000) * 1000000 },
		.it_interval = { every_ms / 1000, (long)(every_ms % 1000) * 1000000 },
	};
	timerfd_settime(e->repeat_fd, 0, &its, NULL);
	e->repeating = first_ms > 0;
}

/* what burn() computes, so that the compiler keeps it */
static volatile uint64_t sink;

/* Spends `ms` of this process's CPU time (not wall time: what a scheduler gives). */
static void burn(unsigned ms)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	uint64_t end = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec + ms * 1000000ull;
	do {
		for (int i = 0; i < 10000; i++) {
			sink += (uint64_t)i;
		}
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec < end);
}

static void key(void *data, struct wl_keyboard *kb, uint32_t serial, uint32_t time,
		uint32_t keycode, uint32_t state)
{
	struct echo *e = data;
	bool pressed = state == WL_KEYBOARD_KEY_STATE_PRESSED;
	if (e->print_keys) {
		printf("key %u %s\n", keycode, pressed ? "pressed" : "released");
		fflush(stdout);
		if (pressed && e->repeat_rate > 0) {
			e->repeat_key = keycode;
			arm_repeat(e, e->repeat_delay);
		} else if (!pressed && e->repeating && keycode == e->repeat_key) {
			arm_repeat(e, 0);
		}
	}
	if (!pressed) {
		return;
	}
	if (keycode == 1) { /* KEY_ESC */
		e->quit = true;
		return;
	}
	burn(e->work_ms);
	paint_next(e);
}

static void repeat_due(struct echo *e)
{
	uint64_t n;
	if (read(e->repeat_fd, &n, sizeof(n)) != sizeof(n) || !e->repeating) {
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		printf("key %u repeat\n", e->repeat_key);
		paint_next(e);
	}
	fflush(stdout);
}

static void keymap(void *data, struct wl_keyboard *kb, uint32_t format, int32_t fd,
		uint32_t size)
{
	close(fd);
}

static void enter(void *data, struct wl_keyboard *kb, uint32_t serial,
		struct wl_surface *surface, struct wl_array *keys)
{
}

static void leave(void *data, struct wl_keyboard *kb, uint32_t serial,
		struct wl_surface *surface)
{
	/* as clients do: no focus, no repeat */
	arm_repeat(data, 0);
}

static void modifiers(void *data, struct wl_keyboard *kb, uint32_t serial, uint32_t dep,
		uint32_t lat, uint32_t lock, uint32_t group)
{
}

static void repeat_info(void *data, struct wl_keyboard *kb, int32_t rate, int32_t delay)
{
	struct echo *e = data;
	e->repeat_rate = rate;
	e->repeat_delay = delay;
}

static const struct wl_keyboard_listener keyboard_listener = {
	.keymap = keymap, .enter = enter, .leave = leave, .key = key,
	.modifiers = modifiers, .repeat_info = repeat_info,
};

static void seat_caps(void *data, struct wl_seat *seat, uint32_t caps)
{
	struct echo *e = data;
	if ((caps & WL_SEAT_CAPABILITY_KEYBOARD) && !e->keyboard) {
		e->keyboard = wl_seat_get_keyboard(seat);
		wl_keyboard_add_listener(e->keyboard, &keyboard_listener, e);
	}
}

static void seat_name(void *data, struct wl_seat *seat, const char *name)
{
}

static const struct wl_seat_listener seat_listener = {
	.capabilities = seat_caps, .name = seat_name,
};

static void wm_ping(void *data, struct xdg_wm_base *wm, uint32_t serial)
{
	xdg_wm_base_pong(wm, serial);
}

static const struct xdg_wm_base_listener wm_listener = { .ping = wm_ping };

static void xdg_configure(void *data, struct xdg_surface *s, uint32_t serial)
{
	struct echo *e = data;
	xdg_surface_ack_configure(s, serial);
	if (!e->configured) {
		e->configured = true;
		struct wl_callback *cb = wl_surface_frame(e->surface);
		wl_callback_add_listener(cb, &frame_listener, e);
		commit(e, 0, 0, W, H);
	}
}

static const struct xdg_surface_listener xdg_surface_listener = { .configure = xdg_configure };

static void toplevel_configure(void *data, struct xdg_toplevel *t, int32_t w, int32_t h,
		struct wl_array *states)
{
}

static void toplevel_close(void *data, struct xdg_toplevel *t)
{
	((struct echo *)data)->quit = true;
}

static const struct xdg_toplevel_listener toplevel_listener = {
	.configure = toplevel_configure, .close = toplevel_close,
};

static void global(void *data, struct wl_registry *reg, uint32_t name, const char *iface,
		uint32_t version)
{
	struct echo *e = data;
	if (strcmp(iface, wl_compositor_interface.name) == 0) {
		e->compositor = wl_registry_bind(reg, name, &wl_compositor_interface, 4);
	} else if (strcmp(iface, wl_shm_interface.name) == 0) {
		e->shm = wl_registry_bind(reg, name, &wl_shm_interface, 1);
	} else if (strcmp(iface, xdg_wm_base_interface.name) == 0) {
		e->wm_base = wl_registry_bind(reg, name, &xdg_wm_base_interface, 1);
		xdg_wm_base_add_listener(e->wm_base, &wm_listener, e);
	} else if (strcmp(iface, wl_seat_interface.name) == 0) {
		/* version 4 for the keyboard's repeat_info */
		e->seat = wl_registry_bind(reg, name, &wl_seat_interface, version < 4 ? version : 4);
		wl_seat_add_listener(e->seat, &seat_listener, e);
	}
}

static void global_remove(void *data, struct wl_registry *reg, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = {
	.global = global, .global_remove = global_remove,
};

/* Dispatches the display and the repeat timer until the end. */
static void run(struct echo *e, struct wl_display *display)
{
	while (!e->quit) {
		while (wl_display_prepare_read(display) != 0) {
			if (wl_display_dispatch_pending(display) < 0) {
				return;
			}
		}
		if (wl_display_flush(display) < 0 && errno != EAGAIN) {
			wl_display_cancel_read(display);
			return;
		}
		struct pollfd fds[2] = {
			{ .fd = wl_display_get_fd(display), .events = POLLIN },
			{ .fd = e->repeat_fd, .events = POLLIN },
		};
		if (poll(fds, 2, -1) < 0) {
			wl_display_cancel_read(display);
			if (errno == EINTR) {
				continue;
			}
			return;
		}
		if (fds[0].revents) {
			if (wl_display_read_events(display) < 0) {
				return;
			}
		} else {
			wl_display_cancel_read(display);
		}
		if (wl_display_dispatch_pending(display) < 0) {
			return;
		}
		if (fds[1].revents) {
			repeat_due(e);
		}
	}
}

int main(int argc, char *argv[])
{
	struct echo e = { .repeat_fd = -1, .repeat_rate = 25, .repeat_delay = 600 };
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--print-keys") == 0) {
			e.print_keys = true;
		} else if (strcmp(argv[i], "--work-ms") == 0 && i + 1 < argc) {
			e.work_ms = (unsigned)atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: slim-echo [--print-keys] [--work-ms N]\n");
			return 2;
		}
	}
	if (e.print_keys) {
		e.repeat_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (e.repeat_fd < 0) {
			fprintf(stderr, "slim-echo: timerfd: %s\n", strerror(errno));
			return 1;
		}
	}
	struct wl_display *display = wl_display_connect(NULL);
	if (!display) {
		fprintf(stderr, "slim-echo: cannot connect to a Wayland display\n");
		return 1;
	}
	struct wl_registry *reg = wl_display_get_registry(display);
	wl_registry_add_listener(reg, &registry_listener, &e);
	wl_display_roundtrip(display);
	if (!e.compositor || !e.shm || !e.wm_base || !e.seat || !buffers_create(&e)) {
		fprintf(stderr, "slim-echo: the compositor lacks what it needs\n");
		return 1;
	}
	e.surface = wl_compositor_create_surface(e.compositor);
	e.xdg_surface = xdg_wm_base_get_xdg_surface(e.wm_base, e.surface);
	xdg_surface_add_listener(e.xdg_surface, &xdg_surface_listener, &e);
	e.toplevel = xdg_surface_get_toplevel(e.xdg_surface);
	xdg_toplevel_add_listener(e.toplevel, &toplevel_listener, &e);
	xdg_toplevel_set_title(e.toplevel, "slim-echo");
	wl_surface_commit(e.surface);
	run(&e, display);
	wl_display_disconnect(display);
	if (e.repeat_fd >= 0) {
		close(e.repeat_fd);
	}
	return 0;
}
