/*
 * The console's seat: access to the display and input devices through
 * libseat, which works with logind, seatd, or (as root, with neither
 * running) its built-in seatd. The seat may be taken away at any time
 * (a VT switch, another session): users of the seat register a listener,
 * stop touching their devices on `disable` and start again on `enable`.
 * The seat acknowledges the disable after every listener has run.
 */
#ifndef SLIM_CONSOLE_SEAT_H
#define SLIM_CONSOLE_SEAT_H

#include <stdbool.h>
#include <stddef.h>

struct slim_seat;

struct slim_seat_listener {
	void (*enable)(void *data);
	void (*disable)(void *data);
};

/*
 * Opens the seat and waits a moment for it to become active. On failure
 * returns NULL with a one-line reason in `err`.
 */
struct slim_seat *slim_seat_create(char *err, size_t err_len);
void slim_seat_destroy(struct slim_seat *seat);

/* At most a few listeners (the display and the input); false if full. */
bool slim_seat_add_listener(struct slim_seat *seat,
		const struct slim_seat_listener *listener, void *data);
void slim_seat_remove_listener(struct slim_seat *seat, void *data);

const char *slim_seat_name(struct slim_seat *seat);
bool slim_seat_active(const struct slim_seat *seat);

/* The seat's descriptor, to poll; -1 if the seat is gone. */
int slim_seat_fd(const struct slim_seat *seat);
/*
 * Handles what the seat manager said; false once the seat is lost for good
 * (the listeners were told as if it were disabled, and its fd is -1 now).
 */
bool slim_seat_dispatch(struct slim_seat *seat);

/* Opens a device node through the seat manager; returns the fd or -1 (errno set). */
int slim_seat_open_device(struct slim_seat *seat, const char *path, int *device_id);
void slim_seat_close_device(struct slim_seat *seat, int device_id);
/* Asks the seat manager to switch to virtual terminal `vt` (Ctrl+Alt+Fn). */
void slim_seat_switch_vt(struct slim_seat *seat, int vt);

#endif
