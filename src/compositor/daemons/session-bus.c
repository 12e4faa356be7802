#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "daemons.h"
#include "session-bus.h"
#include "slim-log.h"

/* How long the bus may take to say its address, on a loaded machine. */
#define ANSWER_TIMEOUT_MS 5000
/*
 * What DBUS_SESSION_BUS_ADDRESS says when there is no bus: a transport
 * nothing connects to. Unset, it would let GIO and libdbus start a bus
 * through X11.
 */
#define NO_BUS "disabled:"

struct slim_session_bus {
	struct slim_daemon daemon;
};

/* The daemon's first line on `fd`: its address. False if none came. */
static bool read_address(int fd, char *line, size_t size)
{
	size_t len = 0;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	while (len < size - 1 && !memchr(line, '\n', len) &&
			poll(&pfd, 1, ANSWER_TIMEOUT_MS) == 1) {
		ssize_t n = read(fd, line + len, size - 1 - len);
		if (n <= 0) {
			break;
		}
		len += (size_t)n;
	}
	char *nl = memchr(line, '\n', len);
	if (!nl) {
		return false;
	}
	*nl = '\0';
	return true;
}

static struct slim_session_bus *start(const char *runtime, struct slim_sched *sched)
{
	struct slim_session_bus *bus = calloc(1, sizeof(*bus));
	int p[2];
	if (!bus || pipe2(p, O_CLOEXEC) < 0) {
		slim_log(SLIM_LOG_ERROR, "session bus: cannot start: %s", strerror(errno));
		free(bus);
		return NULL;
	}
	char address[512], print[32];
	snprintf(address, sizeof(address), "--address=unix:dir=%s", runtime);
	snprintf(print, sizeof(print), "--print-address=%d", p[1]);
	const char *const argv[] = { "dbus-daemon", "--session", "--nofork", "--nopidfile",
		address, print, NULL };
	/* its own process group: the services it starts end with it */
	bus->daemon.group = true;
	bool started = slim_daemon_start(&bus->daemon, argv, p[1], sched, "session bus");
	close(p[1]);
	char line[512];
	bool answered = started && read_address(p[0], line, sizeof(line));
	close(p[0]);
	if (!answered) {
		if (started) {
			slim_log(SLIM_LOG_ERROR, "session bus: dbus-daemon did not say its address");
		}
		slim_session_bus_stop(bus);
		return NULL;
	}
	setenv("DBUS_SESSION_BUS_ADDRESS", line, true);
	slim_log(SLIM_LOG_INFO, "D-Bus programs use DBUS_SESSION_BUS_ADDRESS=%s", line);
	return bus;
}

struct slim_session_bus *slim_session_bus_start(struct slim_sched *sched)
{
	if (getenv("DBUS_SESSION_BUS_ADDRESS")) {
		slim_log(SLIM_LOG_INFO, "session bus: the user's own (DBUS_SESSION_BUS_ADDRESS)");
		return NULL;
	}
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	struct slim_session_bus *bus = NULL;
	if (!runtime || runtime[0] != '/') {
		slim_log(SLIM_LOG_ERROR, "session bus: none: no XDG_RUNTIME_DIR to listen in");
	} else {
		bus = start(runtime, sched);
	}
	if (!bus) {
		setenv("DBUS_SESSION_BUS_ADDRESS", NO_BUS, true);
	}
	return bus;
}

void slim_session_bus_stop(struct slim_session_bus *bus)
{
	if (!bus) {
		return;
	}
	slim_daemons_stop(&bus->daemon, 1);
	free(bus);
}
