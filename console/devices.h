/*
 * The console's own devices: where the picture goes (--output: an SDL
 * window, a KMS display, else headless) and where local keys and pointer
 * come from (the window, or --input libinput on the seat). The program
 * owns them and hears what they do through the listener; they know
 * nothing of the link or the session.
 */
#ifndef SLIM_CONSOLE_DEVICES_H
#define SLIM_CONSOLE_DEVICES_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend.h"
#include "options.h"
#include "slim-desk.h"

struct console_devices_listener {
	/* Keys and pointer from the window or the seat's devices, for the server. */
	void (*input)(void *data, const struct slim_wire_input *ev, size_t n);
	/* The window was closed: how a desktop user ends the console. */
	void (*closed)(void *data);
	/* The display is back (after a VT switch): the server may repaint it. */
	void (*display_back)(void *data);
	/*
	 * The display's heads are `desk`'s now (a monitor plugged in or out);
	 * false if the screen cannot follow (then the local input keeps the
	 * old size too).
	 */
	bool (*heads)(void *data, const struct slim_desk *desk);
};

struct console_devices {
	const struct console_devices_listener *listener;
	void *data;
	struct slim_console_backend *backend;
	struct slim_desk desk;    /* the output's heads: a display's, else --size's */
	struct slim_seat *seat;   /* --output drm, --input libinput */
	struct slim_input *input; /* --input libinput */
	bool pumped;              /* a window: dispatched after every pass of the loop */
};

/* The descriptors the loop watches for the devices, in console_devices_poll's order. */
#define CONSOLE_DEVICES_FDS 4

/*
 * The output --output names, and its heads in d->desk (the options' size
 * becomes their bounding box); false once the reason is said.
 */
bool console_devices_open_output(struct console_devices *d, struct options *o,
		const struct console_devices_listener *listener, void *data);
/* --input libinput, the default with a display of our own; none is no failure. */
void console_devices_open_input(struct console_devices *d, const struct options *o);
/* --bench-present: times the copies into a KMS display; the exit status. */
int console_devices_bench(struct console_devices *d, struct options *o);
void console_devices_close(struct console_devices *d);

/* The longest the loop may sleep before console_devices_dispatch is due; -1: no limit. */
int console_devices_timeout_ms(struct console_devices *d);
/* Fills in what the loop is to watch now. */
void console_devices_poll(struct console_devices *d, struct pollfd fds[CONSOLE_DEVICES_FDS]);
/* After poll(): what came, the seat first, the window last. */
void console_devices_dispatch(struct console_devices *d,
		const struct pollfd fds[CONSOLE_DEVICES_FDS]);

#endif
