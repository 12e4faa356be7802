/* wp_content_type_v1: what a client says a surface shows (content-type.c). */
#ifndef SLIM_CONTENT_TYPE_H
#define SLIM_CONTENT_TYPE_H

#include <stdbool.h>
#include <wayland-server-core.h>
#include "video-detect.h"

struct wlr_surface;

/* The global. */
bool content_type_init(struct wl_display *display);
/* What the surface's next commit says it shows: NONE when its client said nothing. */
enum slim_content_hint content_type_pending(struct wlr_surface *surface);

#endif
