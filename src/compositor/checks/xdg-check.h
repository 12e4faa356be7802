/* xdg-shell's protocol errors that wlroots 0.15 misses or misnames (xdg-check.c). */
#ifndef SLIM_XDG_CHECK_H
#define SLIM_XDG_CHECK_H

#include <stdbool.h>
#include <wayland-server-core.h>

struct slim_xdg_check;

struct slim_xdg_check *xdg_check_create(void);
void xdg_check_destroy(struct slim_xdg_check *check);
/* A request as the protocol logger sees it, before it runs: true if it was xdg-shell's. */
bool xdg_check_request(struct slim_xdg_check *check, const struct wl_protocol_logger_message *m);

#endif
