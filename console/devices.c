#include <stdio.h>
#include <stdlib.h>
#include "devices.h"
#ifdef SLIM_HAVE_WINDOW
#include "window.h"
#endif
#ifdef SLIM_HAVE_DRM
#include "drm-backend.h"
#include "input-devices.h"
#include "seat.h"
#endif

#ifdef SLIM_HAVE_WINDOW
static void on_window_input(void *data, const struct slim_wire_input *ev, size_t n)
{
	struct console_devices *d = data;
	d->listener->input(d->data, ev, n);
}

static void on_window_closed(void *data)
{
	struct console_devices *d = data;
	d->listener->closed(d->data);
}

static bool open_window(struct console_devices *d, const struct options *o)
{
	char title[320], err[512];
	snprintf(title, sizeof(title), "slimland-console: %s", o->server ? o->server : o->manager);
	struct slim_console_input_sink sink = {
		.send = on_window_input,
		.closed = on_window_closed,
		.data = d,
	};
	d->backend = slim_window_backend_create(title, &d->desk, &sink, err, sizeof(err));
	if (!d->backend) {
		slim_console_status("%s", err);
	}
	d->pumped = d->backend != NULL;
	return d->backend != NULL;
}
#endif

#ifdef SLIM_HAVE_DRM
static void on_drm_repaint(void *data)
{
	struct console_devices *d = data;
	d->listener->display_back(d->data);
}

static void on_drm_lost(void *data, const char *why)
{
	slim_console_status("display lost (%s); the console goes on without a picture", why);
}

/* A monitor plugged in or out: the screen, then the pointer's range follow. */
static void on_drm_heads(void *data, const struct slim_desk *desk)
{
	struct console_devices *d = data;
	d->desk = *desk;
	if (d->listener->heads(d->data, desk) && d->input) {
		uint32_t width, height;
		slim_desk_bounds(desk, &width, &height);
		slim_input_set_size(d->input, width, height);
	}
}

static const struct slim_drm_listener drm_listener = {
	.repaint = on_drm_repaint,
	.lost = on_drm_lost,
	.heads = on_drm_heads,
};

static void on_input_send(void *data, const struct slim_wire_input *ev, size_t n)
{
	struct console_devices *d = data;
	d->listener->input(d->data, ev, n);
}

static void on_input_pointer(void *data, double x, double y, bool relative)
{
	struct console_devices *d = data;
	if (slim_drm_backend_is(d->backend)) {
		slim_drm_backend_move_pointer(d->backend, x, y, relative);
	}
}

static const struct slim_input_listener input_listener = {
	.send = on_input_send,
	.pointer = on_input_pointer,
};

static bool open_seat(struct console_devices *d, const char *what)
{
	char err[256];
	if (!d->seat) {
		d->seat = slim_seat_create(err, sizeof(err));
		if (!d->seat) {
			slim_console_status("%s: %s", what, err);
		}
	}
	return d->seat != NULL;
}

/*
 * --output drm, or the default on a machine with a DRM device: a KMS
 * display, whose mode is the screen's size. Whatever stands in the way
 * (no device, no permission, no display connected) is said once and the
 * console goes on headless, which the server serves the same.
 */
static void open_drm(struct console_devices *d, struct options *o)
{
	if (!o->output_given && !slim_drm_device_present()) {
		o->drm = false;
		return;
	}
	const char *what = o->output_given ? "--output drm" : "drm output";
	char err[512] = "no DRM device (/dev/dri/card*)";
	if (slim_drm_device_present()) {
		d->seat = d->seat ? d->seat : slim_seat_create(err, sizeof(err));
		/* --size asks the monitors for modes, left to right */
		uint32_t widths[SLIM_MAX_HEADS], heights[SLIM_MAX_HEADS];
		for (uint32_t i = 0; i < o->heads.n_heads; i++) {
			widths[i] = o->heads.heads[i].width;
			heights[i] = o->heads.heads[i].height;
		}
		if (d->seat) {
			d->backend = slim_drm_backend_create(d->seat, widths, heights,
				o->size_given ? o->heads.n_heads : 0, &drm_listener, d, err, sizeof(err));
		}
	}
	if (!d->backend) {
		o->drm = false;
		slim_console_status("%s: %s; going on headless at %ux%u", what, err, o->width,
			o->height);
		return;
	}
	slim_drm_backend_desk(d->backend, &d->desk);
}
#endif

/* The screen is the heads' bounding box: the size the core is made with. */
static bool opened(struct console_devices *d, struct options *o)
{
	if (!d->backend) {
		return false;
	}
	slim_desk_bounds(&d->desk, &o->width, &o->height);
	return true;
}

bool console_devices_open_output(struct console_devices *d, struct options *o,
		const struct console_devices_listener *listener, void *data)
{
	d->listener = listener;
	d->data = data;
	/* a display has heads of its own; a window's and a headless console's are --size's */
	d->desk = o->heads;
#ifdef SLIM_HAVE_WINDOW
	if (o->window) {
		return open_window(d, o) && opened(d, o);
	}
#endif
#ifdef SLIM_HAVE_DRM
	if (o->drm || !o->output_given) {
		open_drm(d, o);
		if (d->backend) {
			return opened(d, o);
		}
	}
#endif
	d->backend = slim_headless_backend_create();
	if (!d->backend) {
		slim_console_status("cannot create the headless output");
	}
	return opened(d, o);
}

void console_devices_open_input(struct console_devices *d, const struct options *o)
{
#ifdef SLIM_HAVE_DRM
	if (o->input == INPUT_NONE ||
			(o->input == INPUT_DEFAULT && !slim_drm_backend_is(d->backend))) {
		return;
	}
	bool explicit = o->input == INPUT_LIBINPUT;
	const char *what = explicit ? "--input libinput" : "input";
	char err[256];
	if (open_seat(d, what)) {
		d->input = slim_input_create(d->seat, o->width, o->height, &input_listener, d, err,
			sizeof(err));
		if (!d->input) {
			slim_console_status("%s: %s", what, err);
		}
	}
	if (!d->input) {
		/* a console whose screen works is still worth having: go on without keys */
		slim_console_status("%s: going on without local input", what);
	}
#endif
}

/* The DRM column of the Table 5 benchmark. */
int console_devices_bench(struct console_devices *d, struct options *o)
{
#ifdef SLIM_HAVE_DRM
	o->output_given = true;
	open_drm(d, o);
	if (!slim_drm_backend_is(d->backend)) {
		return EXIT_FAILURE;
	}
	return slim_drm_backend_bench(d->backend, stdout) ? EXIT_SUCCESS : EXIT_FAILURE;
#else
	slim_console_status("--bench-present: no drm output in this build");
	return EXIT_FAILURE;
#endif
}

void console_devices_close(struct console_devices *d)
{
#ifdef SLIM_HAVE_DRM
	slim_input_destroy(d->input);
#endif
	if (d->backend) {
		d->backend->impl->destroy(d->backend);
	}
#ifdef SLIM_HAVE_DRM
	/* last: the devices above were opened through it */
	slim_seat_destroy(d->seat);
#endif
	*d = (struct console_devices){ 0 };
}

int console_devices_timeout_ms(struct console_devices *d)
{
#ifdef SLIM_HAVE_WINDOW
	if (d->pumped) {
		return slim_window_backend_timeout_ms(d->backend);
	}
#endif
	return -1;
}

enum { FD_SEAT, FD_INPUT, FD_HOTPLUG, FD_BACKEND };

void console_devices_poll(struct console_devices *d, struct pollfd fds[CONSOLE_DEVICES_FDS])
{
	for (int i = 0; i < CONSOLE_DEVICES_FDS; i++) {
		fds[i] = (struct pollfd){ .fd = -1, .events = POLLIN };
	}
#ifdef SLIM_HAVE_DRM
	/* -1 once the seat manager is gone */
	fds[FD_SEAT].fd = d->seat ? slim_seat_fd(d->seat) : -1;
	fds[FD_INPUT].fd = d->input ? slim_input_fd(d->input) : -1;
	fds[FD_HOTPLUG].fd = slim_drm_backend_is(d->backend) ?
		slim_drm_backend_hotplug_fd(d->backend) : -1;
#endif
	fds[FD_BACKEND].fd = d->backend->impl->fd ? d->backend->impl->fd(d->backend) : -1;
}

void console_devices_dispatch(struct console_devices *d,
		const struct pollfd fds[CONSOLE_DEVICES_FDS])
{
#ifdef SLIM_HAVE_DRM
	/* the seat before the devices: a VT switch stops them first */
	if (fds[FD_SEAT].revents) {
		/* a lost seat is said once; the devices were told to stop */
		slim_seat_dispatch(d->seat);
	}
	if (fds[FD_INPUT].revents) {
		slim_input_dispatch(d->input);
	}
	if (fds[FD_HOTPLUG].revents) {
		slim_drm_backend_hotplug_dispatch(d->backend);
	}
#endif
	/* last: what presenting read into a window's display queue, no poll() sees */
	if (d->backend->impl->dispatch && (fds[FD_BACKEND].revents || d->pumped)) {
		d->backend->impl->dispatch(d->backend);
	}
}
