/*
 * What libwayland and wlroots 0.15 leave unchecked, checked from the
 * requests as a protocol logger sees them, before they run:
 *
 * - YUV wl_shm buffers. libwayland checks that a buffer's first plane lies
 *   in its pool, not the planes after it: an NV12 buffer at the end of a
 *   pool would have the renderer read past the mapping. wl_shm keeps its
 *   pools' sizes to itself, so they are followed here (wl_shm.create_pool,
 *   wl_shm_pool.resize), and each YUV create_buffer is held against its
 *   pool: a buffer that does not fit, or whose stride is too short for its
 *   format, is the wl_shm error invalid_stride, which ends the client
 *   before its next request runs.
 * - A viewport's source rectangle outside the buffer, which the viewporter
 *   spec makes the error out_of_buffer at commit: each surface given a
 *   wp_viewport is watched, and its viewport found again by its id.
 * - xdg-shell's errors (xdg-check.c).
 * - A virtual keyboard's keymap, which wlroots maps and hands to xkbcommon
 *   as a string: a size beyond the file's end would fault (SIGBUS) and a
 *   keymap without its terminating NUL would be read past the mapping. Such
 *   a keymap is made a size-0 one, which wlroots refuses (no_memory: the
 *   client ends), before the request runs: the logger sees the request's
 *   own arguments.
 */
#define _GNU_SOURCE /* pread */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wayland-server-core.h>
#include <wayland-server-protocol.h>
#include <wlr/types/wlr_surface.h>
#include <wlr/util/box.h>
#include <wlr/util/log.h>
#include "protocol-check.h"
#include "viewporter-protocol.h"
#include "slim-alloc.h"
#include "slim-log.h"
#include "xdg-check.h"
#include "yuv-shm.h"

struct pool {
	struct wl_list link; /* shm_check.pools */
	struct wl_client *client;
	uint32_t id;
	int64_t size;
	struct wl_listener client_destroy;
};

/* A surface with a viewport (wp_viewporter.get_viewport). */
struct viewport {
	struct wl_list link; /* slim_protocol_check.viewports */
	struct slim_protocol_check *check;
	struct wl_client *client;
	uint32_t id;
	struct wlr_surface *surface;
	struct wl_listener surface_commit, surface_destroy;
};

struct slim_protocol_check {
	struct wl_protocol_logger *logger;
	struct slim_xdg_check *xdg;
	struct wl_list pools, viewports;
	struct slim_ratelimit log_limit;
};

static void pool_destroy(struct pool *p)
{
	wl_list_remove(&p->link);
	wl_list_remove(&p->client_destroy.link);
	free(p);
}

static void handle_client_destroy(struct wl_listener *listener, void *data)
{
	struct pool *p = wl_container_of(listener, p, client_destroy);
	pool_destroy(p);
}

static struct pool *pool_find(struct slim_protocol_check *c, struct wl_client *client, uint32_t id)
{
	struct pool *p;
	wl_list_for_each(p, &c->pools, link) {
		if (p->client == client && p->id == id) {
			return p;
		}
	}
	return NULL;
}

static void pool_created(struct slim_protocol_check *c, struct wl_client *client, uint32_t id,
		int32_t size)
{
	struct pool *old = pool_find(c, client, id);
	if (old) {
		pool_destroy(old); /* the id was freed and taken again */
	}
	struct pool *p = calloc(1, sizeof(*p));
	if (!p) {
		return; /* its YUV buffers will be refused: unknown pool */
	}
	p->client = client;
	p->id = id;
	p->size = size;
	p->client_destroy.notify = handle_client_destroy;
	wl_client_add_destroy_listener(client, &p->client_destroy);
	wl_list_insert(&c->pools, &p->link);
}

static void check_buffer(struct slim_protocol_check *c, struct wl_resource *pool_resource,
		const union wl_argument *a)
{
	int32_t offset = a[1].i, width = a[2].i, height = a[3].i, stride = a[4].i;
	uint32_t format = a[5].u;
	if (!slim_shm_yuv_format(format)) {
		return; /* libwayland's own checks are whole for one-plane formats */
	}
	struct wl_client *client = wl_resource_get_client(pool_resource);
	struct pool *p = pool_find(c, client, wl_resource_get_id(pool_resource));
	struct slim_shm_yuv layout;
	const char *why = NULL;
	if (!slim_shm_yuv_layout(&layout, format, width, height, stride, &why)) {
		/* why says */
	} else if (!p) {
		why = "pool not known";
	} else if (offset < 0 || (int64_t)offset + (int64_t)layout.size > p->size) {
		why = "planes outside the pool";
	}
	if (!why) {
		return;
	}
	pid_t pid;
	wl_client_get_credentials(client, &pid, NULL, NULL);
	if (slim_ratelimit(&c->log_limit, slim_now_us())) {
		wlr_log(WLR_ERROR, "client %d: YUV buffer %dx%d stride %d at %d: %s", (int)pid,
			width, height, stride, offset, why);
	}
	wl_resource_post_error(pool_resource, WL_SHM_ERROR_INVALID_STRIDE,
		"invalid YUV buffer %dx%d, stride %d, offset %d: %s", width, height, stride,
		offset, why);
}

static void viewport_destroy(struct viewport *v)
{
	wl_list_remove(&v->link);
	wl_list_remove(&v->surface_commit.link);
	wl_list_remove(&v->surface_destroy.link);
	free(v);
}

static void handle_viewport_surface_destroy(struct wl_listener *listener, void *data)
{
	struct viewport *v = wl_container_of(listener, v, surface_destroy);
	viewport_destroy(v);
}

static void handle_viewport_surface_commit(struct wl_listener *listener, void *data)
{
	struct viewport *v = wl_container_of(listener, v, surface_commit);
	const struct wlr_surface_state *st = &v->surface->current;
	if (!st->viewport.has_src || st->buffer_width <= 0) {
		return; /* (current.buffer is gone once its texture is made) */
	}
	struct wlr_fbox src;
	wlr_surface_get_buffer_source_box(v->surface, &src);
	if (src.x + src.width <= st->buffer_width && src.y + src.height <= st->buffer_height) {
		return;
	}
	struct wl_resource *viewport = wl_client_get_object(v->client, v->id);
	if (!viewport || strcmp(wl_resource_get_class(viewport), "wp_viewport") != 0) {
		return;
	}
	if (slim_ratelimit(&v->check->log_limit, slim_now_us())) {
		wlr_log(WLR_ERROR, "a viewport's source %.0f,%.0f %.0fx%.0f is outside its "
			"%dx%d buffer", src.x, src.y, src.width, src.height, st->buffer_width,
			st->buffer_height);
	}
	wl_resource_post_error(viewport, WP_VIEWPORT_ERROR_OUT_OF_BUFFER,
		"source rectangle %.0f,%.0f %.0fx%.0f outside the %dx%d buffer", src.x, src.y,
		src.width, src.height, st->buffer_width, st->buffer_height);
}

static struct viewport *viewport_find(struct slim_protocol_check *c, struct wl_client *client,
		uint32_t id)
{
	struct viewport *v;
	wl_list_for_each(v, &c->viewports, link) {
		if (v->client == client && v->id == id) {
			return v;
		}
	}
	return NULL;
}

static void viewport_created(struct slim_protocol_check *c, struct wl_client *client,
		uint32_t id, struct wl_resource *surface_resource)
{
	struct viewport *old = viewport_find(c, client, id);
	if (old) {
		viewport_destroy(old);
	}
	struct viewport *v = calloc(1, sizeof(*v));
	if (!v || !surface_resource) {
		free(v);
		return;
	}
	v->check = c;
	v->client = client;
	v->id = id;
	v->surface = wlr_surface_from_resource(surface_resource);
	v->surface_commit.notify = handle_viewport_surface_commit;
	wl_signal_add(&v->surface->events.commit, &v->surface_commit);
	v->surface_destroy.notify = handle_viewport_surface_destroy;
	wl_signal_add(&v->surface->events.destroy, &v->surface_destroy);
	wl_list_insert(&c->viewports, &v->link);
}

static void check_keymap(struct slim_protocol_check *c, const struct wl_protocol_logger_message *m)
{
	int fd = m->arguments[1].h;
	uint32_t size = m->arguments[2].u;
	struct stat st;
	char last = 1;
	if (size > 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size >= size &&
			pread(fd, &last, 1, size - 1) == 1 && last == '\0') {
		return;
	}
	if (slim_ratelimit(&c->log_limit, slim_now_us())) {
		wlr_log(WLR_ERROR, "a virtual keyboard's keymap of %u bytes is not a NUL-terminated "
			"string inside its file: refused", size);
	}
	/* the logger's arguments are the request's own: wlroots now maps 0 bytes, and fails */
	((union wl_argument *)m->arguments)[2].u = 0;
}

static void log_request(void *data, enum wl_protocol_logger_type type,
		const struct wl_protocol_logger_message *m)
{
	struct slim_protocol_check *c = data;
	if (type != WL_PROTOCOL_LOGGER_REQUEST) {
		return;
	}
	if (xdg_check_request(c->xdg, m)) {
		return;
	}
	const char *class = wl_resource_get_class(m->resource);
	const char *name = m->message->name;
	struct wl_client *client = wl_resource_get_client(m->resource);
	if (strcmp(class, "wl_shm") == 0 && strcmp(name, "create_pool") == 0 &&
			m->arguments_count == 3) {
		pool_created(c, client, m->arguments[0].n, m->arguments[2].i);
		return;
	} else if (strcmp(class, "wp_viewporter") == 0 && strcmp(name, "get_viewport") == 0 &&
			m->arguments_count == 2) {
		viewport_created(c, client, m->arguments[0].n,
			(struct wl_resource *)m->arguments[1].o);
		return;
	} else if (strcmp(class, "wp_viewport") == 0 && strcmp(name, "destroy") == 0) {
		struct viewport *v = viewport_find(c, client, wl_resource_get_id(m->resource));
		if (v) {
			viewport_destroy(v);
		}
		return;
	} else if (strcmp(class, "zwp_virtual_keyboard_v1") == 0 &&
			strcmp(name, "keymap") == 0 && m->arguments_count == 3) {
		check_keymap(c, m);
		return;
	} else if (strcmp(class, "wl_shm_pool") != 0) {
		return;
	}
	struct pool *p;
	if (strcmp(name, "create_buffer") == 0 && m->arguments_count == 6) {
		check_buffer(c, m->resource, m->arguments);
	} else if (strcmp(name, "resize") == 0 && m->arguments_count == 1 &&
			(p = pool_find(c, wl_resource_get_client(m->resource),
				wl_resource_get_id(m->resource))) && m->arguments[0].i > p->size) {
		p->size = m->arguments[0].i; /* pools only grow; libwayland refuses shrinking */
	} else if (strcmp(name, "destroy") == 0 && (p = pool_find(c,
			wl_resource_get_client(m->resource), wl_resource_get_id(m->resource)))) {
		pool_destroy(p);
	}
}

struct slim_protocol_check *protocol_check_create(struct wl_display *display)
{
	struct slim_protocol_check *c = slim_znew(struct slim_protocol_check);
	wl_list_init(&c->pools);
	wl_list_init(&c->viewports);
	c->log_limit = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	c->xdg = xdg_check_create();
	c->logger = wl_display_add_protocol_logger(display, log_request, c);
	if (!c->logger) {
		xdg_check_destroy(c->xdg);
		free(c);
		return NULL;
	}
	return c;
}

void protocol_check_destroy(struct slim_protocol_check *c)
{
	if (!c) {
		return;
	}
	struct pool *p, *tmp;
	wl_list_for_each_safe(p, tmp, &c->pools, link) {
		pool_destroy(p);
	}
	struct viewport *v, *vtmp;
	wl_list_for_each_safe(v, vtmp, &c->viewports, link) {
		viewport_destroy(v);
	}
	wl_protocol_logger_destroy(c->logger);
	xdg_check_destroy(c->xdg);
	free(c);
}
