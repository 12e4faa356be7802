#include <errno.h>
#include <libseat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "seat.h"
#include "slim-log.h"

#define MAX_LISTENERS 4
/* How long a seat that opened inactive is waited for before giving up. */
#define ACTIVATE_WAIT_MS 2000
#define ACTIVATE_STEP_MS 100

struct slim_seat {
	struct libseat *libseat;
	bool active;
	bool lost; /* the seat manager went away: never talk to it again */
	struct {
		const struct slim_seat_listener *impl;
		void *data;
	} listeners[MAX_LISTENERS];
};

static void handle_enable(struct libseat *libseat, void *data)
{
	struct slim_seat *seat = data;
	seat->active = true;
	slim_log(SLIM_LOG_DEBUG, "seat: enabled");
	for (size_t i = 0; i < MAX_LISTENERS; i++) {
		if (seat->listeners[i].impl) {
			seat->listeners[i].impl->enable(seat->listeners[i].data);
		}
	}
}

static void handle_disable(struct libseat *libseat, void *data)
{
	struct slim_seat *seat = data;
	seat->active = false;
	slim_log(SLIM_LOG_DEBUG, "seat: disabled");
	for (size_t i = 0; i < MAX_LISTENERS; i++) {
		if (seat->listeners[i].impl) {
			seat->listeners[i].impl->disable(seat->listeners[i].data);
		}
	}
	/* Everybody let go of their devices: tell the seat manager it may switch. */
	libseat_disable_seat(libseat);
}

static const struct libseat_seat_listener libseat_listener = {
	.enable_seat = handle_enable,
	.disable_seat = handle_disable,
};

/*
 * libseat tries its backends in turn and says so for each one that fails;
 * those lines are for -v only, and the console says once what it means.
 */
__attribute__((format(printf, 2, 0)))
static void libseat_log(enum libseat_log_level level, const char *fmt, va_list args)
{
	char line[512];
	vsnprintf(line, sizeof(line), fmt, args);
	slim_log(SLIM_LOG_DEBUG, "libseat: %s", line);
}

struct slim_seat *slim_seat_create(char *err, size_t err_len)
{
	struct slim_seat *seat = calloc(1, sizeof(*seat));
	if (!seat) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	libseat_set_log_handler(libseat_log);
	libseat_set_log_level(LIBSEAT_LOG_LEVEL_INFO);
	seat->libseat = libseat_open_seat(&libseat_listener, seat);
	if (!seat->libseat) {
		snprintf(err, err_len, "cannot open a seat (no logind or seatd session, "
			"and not root for the built-in one)");
		free(seat);
		return NULL;
	}
	/* The enable event may come at once or after a round trip. */
	for (int waited = 0; !seat->active && waited < ACTIVATE_WAIT_MS;
			waited += ACTIVATE_STEP_MS) {
		if (libseat_dispatch(seat->libseat, ACTIVATE_STEP_MS) < 0) {
			snprintf(err, err_len, "the seat manager went away: %s", strerror(errno));
			slim_seat_destroy(seat);
			return NULL;
		}
	}
	if (!seat->active) {
		snprintf(err, err_len, "seat %s is not active (another session has it)",
			libseat_seat_name(seat->libseat));
		slim_seat_destroy(seat);
		return NULL;
	}
	slim_log(SLIM_LOG_DEBUG, "seat: %s active", libseat_seat_name(seat->libseat));
	return seat;
}

void slim_seat_destroy(struct slim_seat *seat)
{
	if (!seat) {
		return;
	}
	if (seat->libseat) {
		libseat_close_seat(seat->libseat);
	}
	free(seat);
}

bool slim_seat_add_listener(struct slim_seat *seat,
		const struct slim_seat_listener *listener, void *data)
{
	for (size_t i = 0; i < MAX_LISTENERS; i++) {
		if (!seat->listeners[i].impl) {
			seat->listeners[i].impl = listener;
			seat->listeners[i].data = data;
			return true;
		}
	}
	return false;
}

void slim_seat_remove_listener(struct slim_seat *seat, void *data)
{
	for (size_t i = 0; i < MAX_LISTENERS; i++) {
		if (seat->listeners[i].data == data) {
			seat->listeners[i].impl = NULL;
			seat->listeners[i].data = NULL;
		}
	}
}

const char *slim_seat_name(struct slim_seat *seat)
{
	return seat->libseat ? libseat_seat_name(seat->libseat) : "seat0";
}

bool slim_seat_active(const struct slim_seat *seat)
{
	return seat->libseat && seat->active;
}

int slim_seat_fd(const struct slim_seat *seat)
{
	return seat->libseat && !seat->lost ? libseat_get_fd(seat->libseat) : -1;
}

bool slim_seat_dispatch(struct slim_seat *seat)
{
	if (!seat->libseat || seat->lost) {
		return false;
	}
	if (libseat_dispatch(seat->libseat, 0) >= 0) {
		return true;
	}
	/*
	 * The seat manager is gone: whatever devices we hold may stop working
	 * at any moment. Tell the listeners as if the seat were taken away, so
	 * they stop, and never talk to libseat again.
	 */
	slim_log(SLIM_LOG_ERROR, "seat: lost the seat manager (%s); the display and input stop",
		strerror(errno));
	seat->active = false;
	seat->lost = true;
	for (size_t i = 0; i < MAX_LISTENERS; i++) {
		if (seat->listeners[i].impl) {
			seat->listeners[i].impl->disable(seat->listeners[i].data);
		}
	}
	return false;
}

int slim_seat_open_device(struct slim_seat *seat, const char *path, int *device_id)
{
	if (!seat->libseat || seat->lost) {
		errno = ENODEV;
		return -1;
	}
	int fd = -1;
	int id = libseat_open_device(seat->libseat, path, &fd);
	if (id < 0) {
		return -1;
	}
	*device_id = id;
	return fd;
}

void slim_seat_close_device(struct slim_seat *seat, int device_id)
{
	if (seat->libseat && !seat->lost) {
		libseat_close_device(seat->libseat, device_id);
	}
}

void slim_seat_switch_vt(struct slim_seat *seat, int vt)
{
	if (seat->libseat && seat->active && !seat->lost) {
		libseat_switch_session(seat->libseat, vt);
	}
}
