/*
 * What libwayland and wlroots 0.15 leave unchecked, checked from the
 * requests as a protocol logger sees them (protocol-check.c). The session
 * installs it on its display; it calls nothing of the session's or the
 * shell's, and of media only the YUV layouts (yuv-shm.h).
 */
#ifndef SLIM_PROTOCOL_CHECK_H
#define SLIM_PROTOCOL_CHECK_H

#include <wayland-server-core.h>

struct slim_protocol_check;

struct slim_protocol_check *protocol_check_create(struct wl_display *display);
void protocol_check_destroy(struct slim_protocol_check *check);

#endif
