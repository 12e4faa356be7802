/*
 * What xdg-shell makes a protocol error and wlroots 0.15 lets through, or
 * posts under another interface's name, checked from the requests as the
 * protocol logger (protocol-check.c) sees them, before they run. The first
 * error a client is sent is the one it gets, so the spec's comes first:
 *
 *   xdg_surface.set_window_geometry  a width or height <= 0: invalid_size
 *                                    (wlroots: code -1)
 *   xdg_surface.ack_configure        a serial never sent: invalid_serial
 *                                    (wlroots: xdg_wm_base's code 4)
 *   xdg_surface.get_popup            an incomplete positioner (no size, an
 *                                    anchor rectangle of no area):
 *                                    xdg_wm_base.invalid_positioner
 *                                    (wlroots: xdg_surface's code 5, and
 *                                    only for a width of 0)
 *   xdg_toplevel.set_min_size/_max_size  a negative size: invalid_size
 *   xdg_toplevel.resize              edges that are no resize_edge:
 *                                    invalid_resize_edge
 *
 * Positioners are followed here (their state is wlroots' own) by client
 * and id, as protocol-check.c follows shm pools.
 */
#include <stdlib.h>
#include <string.h>
#include <wlr/types/wlr_xdg_shell.h>
#include "slim-alloc.h"
#include "xdg-check.h"

struct positioner {
	struct wl_list link; /* slim_xdg_check.positioners */
	struct wl_client *client;
	uint32_t id;
	bool sized, anchored; /* set_size and set_anchor_rect with an area */
	struct wl_listener client_destroy;
};

struct slim_xdg_check {
	struct wl_list positioners;
};

static void positioner_destroy(struct positioner *p)
{
	wl_list_remove(&p->link);
	wl_list_remove(&p->client_destroy.link);
	free(p);
}

static void handle_client_destroy(struct wl_listener *listener, void *data)
{
	struct positioner *p = wl_container_of(listener, p, client_destroy);
	positioner_destroy(p);
}

static struct positioner *positioner_find(struct slim_xdg_check *x, struct wl_client *client,
		uint32_t id)
{
	struct positioner *p;
	wl_list_for_each(p, &x->positioners, link) {
		if (p->client == client && p->id == id) {
			return p;
		}
	}
	return NULL;
}

static void positioner_created(struct slim_xdg_check *x, struct wl_client *client, uint32_t id)
{
	struct positioner *old = positioner_find(x, client, id);
	if (old) {
		positioner_destroy(old); /* the id was freed and taken again */
	}
	struct positioner *p = calloc(1, sizeof(*p));
	if (!p) {
		return; /* unknown: its popups are left to wlroots' own check */
	}
	p->client = client;
	p->id = id;
	p->client_destroy.notify = handle_client_destroy;
	wl_client_add_destroy_listener(client, &p->client_destroy);
	wl_list_insert(&x->positioners, &p->link);
}

static void positioner_request(struct slim_xdg_check *x, struct wl_resource *resource,
		const char *name, const union wl_argument *a)
{
	struct positioner *p = positioner_find(x, wl_resource_get_client(resource),
		wl_resource_get_id(resource));
	if (!p) {
		return;
	}
	/* invalid sizes are wlroots' to refuse (invalid_input), and leave the last ones */
	if (strcmp(name, "set_size") == 0 && a[0].i > 0 && a[1].i > 0) {
		p->sized = true;
	} else if (strcmp(name, "set_anchor_rect") == 0 && a[2].i >= 0 && a[3].i >= 0) {
		p->anchored = a[2].i > 0 && a[3].i > 0;
	} else if (strcmp(name, "destroy") == 0) {
		positioner_destroy(p);
	}
}

static bool serial_sent(struct wlr_xdg_surface *xdg, uint32_t serial)
{
	struct wlr_xdg_surface_configure *configure;
	wl_list_for_each(configure, &xdg->configure_list, link) {
		if (configure->serial == serial) {
			return true;
		}
	}
	return false;
}

static void surface_request(struct slim_xdg_check *x, struct wl_resource *resource,
		const char *name, const union wl_argument *a)
{
	struct wlr_xdg_surface *xdg = wlr_xdg_surface_from_resource(resource);
	if (strcmp(name, "get_popup") == 0) {
		struct wl_resource *pos = (struct wl_resource *)a[2].o;
		struct positioner *p = pos ? positioner_find(x, wl_resource_get_client(pos),
			wl_resource_get_id(pos)) : NULL;
		if (p && (!p->sized || !p->anchored) && xdg) {
			wl_resource_post_error(xdg->client->resource, XDG_WM_BASE_ERROR_INVALID_POSITIONER,
				"a positioner needs a size and an anchor rectangle with an area");
		}
		return;
	}
	/* one without a role is wlroots' own error (not_constructed) */
	if (!xdg || xdg->role == WLR_XDG_SURFACE_ROLE_NONE) {
		return;
	}
	if (strcmp(name, "set_window_geometry") == 0 && (a[2].i <= 0 || a[3].i <= 0)) {
		wl_resource_post_error(resource, XDG_SURFACE_ERROR_INVALID_SIZE,
			"window geometry %dx%d: not a size", a[2].i, a[3].i);
	} else if (strcmp(name, "ack_configure") == 0 && !serial_sent(xdg, a[0].u)) {
		wl_resource_post_error(resource, XDG_SURFACE_ERROR_INVALID_SERIAL,
			"configure %u was never sent", a[0].u);
	}
}

static bool resize_edge(uint32_t edges)
{
	switch (edges) {
	case XDG_TOPLEVEL_RESIZE_EDGE_NONE:
	case XDG_TOPLEVEL_RESIZE_EDGE_TOP:
	case XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM:
	case XDG_TOPLEVEL_RESIZE_EDGE_LEFT:
	case XDG_TOPLEVEL_RESIZE_EDGE_TOP_LEFT:
	case XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM_LEFT:
	case XDG_TOPLEVEL_RESIZE_EDGE_RIGHT:
	case XDG_TOPLEVEL_RESIZE_EDGE_TOP_RIGHT:
	case XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM_RIGHT:
		return true;
	default:
		return false;
	}
}

static void toplevel_request(struct wl_resource *resource, const char *name,
		const union wl_argument *a)
{
	if ((strcmp(name, "set_min_size") == 0 || strcmp(name, "set_max_size") == 0) &&
			(a[0].i < 0 || a[1].i < 0)) {
		wl_resource_post_error(resource, XDG_TOPLEVEL_ERROR_INVALID_SIZE,
			"%s %dx%d: negative", name, a[0].i, a[1].i);
	} else if (strcmp(name, "resize") == 0 && !resize_edge(a[2].u)) {
		wl_resource_post_error(resource, XDG_TOPLEVEL_ERROR_INVALID_RESIZE_EDGE,
			"resize edges %u: no resize_edge", a[2].u);
	}
}

bool xdg_check_request(struct slim_xdg_check *x, const struct wl_protocol_logger_message *m)
{
	const char *class = wl_resource_get_class(m->resource);
	const char *name = m->message->name;
	if (strcmp(class, "xdg_wm_base") == 0) {
		if (strcmp(name, "create_positioner") == 0) {
			positioner_created(x, wl_resource_get_client(m->resource), m->arguments[0].n);
		}
	} else if (strcmp(class, "xdg_positioner") == 0) {
		positioner_request(x, m->resource, name, m->arguments);
	} else if (strcmp(class, "xdg_surface") == 0) {
		surface_request(x, m->resource, name, m->arguments);
	} else if (strcmp(class, "xdg_toplevel") == 0) {
		toplevel_request(m->resource, name, m->arguments);
	} else {
		return false;
	}
	return true;
}

struct slim_xdg_check *xdg_check_create(void)
{
	struct slim_xdg_check *x = slim_znew(struct slim_xdg_check);
	wl_list_init(&x->positioners);
	return x;
}

void xdg_check_destroy(struct slim_xdg_check *x)
{
	if (!x) {
		return;
	}
	struct positioner *p, *tmp;
	wl_list_for_each_safe(p, tmp, &x->positioners, link) {
		positioner_destroy(p);
	}
	free(x);
}
