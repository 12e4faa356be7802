/*
 * The manager's end of a managed compositor's control socket (§2). The
 * socket appears a moment after the compositor starts, so connecting is
 * retried on a timer; after a manager restart it is simply there.
 */
#ifndef SLIM_SESSIOND_CONTROL_H
#define SLIM_SESSIOND_CONTROL_H

#include <stdbool.h>

struct slim_session;
struct slim_compositor_control;

#define SLIM_CONTROL_RETRY_MS 100
#define SLIM_CONTROL_GIVE_UP_MS 30000

/*
 * Connects to `path`, or adopts `fd` (>= 0: already connected), which is
 * then its own to close, whether it is made or not.
 */
struct slim_compositor_control *slim_compositor_control_create(struct slim_session *session,
		const char *path, int fd);
void slim_compositor_control_destroy(struct slim_compositor_control *control);
bool slim_compositor_control_connected(const struct slim_compositor_control *control);
/* Sends one line; false if it could not be sent (not connected, peer gone). */
bool slim_compositor_control_send(struct slim_compositor_control *control, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* One line from the compositor, as the socket delivered it (fuzz-sessiond-lines feeds them). */
void slim_compositor_control_handle_line(struct slim_session *session, char *line);

#endif
