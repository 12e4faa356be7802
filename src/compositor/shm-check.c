/*
 * YUV wl_shm buffers checked before anything reads them. libwayland checks
 * that a buffer's first plane lies in its pool, not the planes after it:
 * an NV12 buffer at the end of a pool would have the renderer read past
 * the mapping. wl_shm keeps its pools' sizes to itself, so they are
 * followed here, from the requests as a protocol logger sees them
 * (wl_shm.create_pool, wl_shm_pool.resize), and each YUV create_buffer is
 * held against its pool: a buffer that does not fit, or whose stride is
 * too short for its format, is the wl_shm error invalid_stride, which ends
 * the client before its next request runs.
 */
#include <stdlib.h>
#include <string.h>
#include <wayland-server-core.h>
#include <wayland-server-protocol.h>
#include <wlr/util/log.h>
#include "server.h"
#include "slim-log.h"
#include "yuv-shm.h"

struct pool {
	struct wl_list link; /* shm_check.pools */
	struct wl_client *client;
	uint32_t id;
	int64_t size;
	struct wl_listener client_destroy;
};

struct slim_shm_check {
	struct wl_protocol_logger *logger;
	struct wl_list pools;
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

static struct pool *pool_find(struct slim_shm_check *c, struct wl_client *client, uint32_t id)
{
	struct pool *p;
	wl_list_for_each(p, &c->pools, link) {
		if (p->client == client && p->id == id) {
			return p;
		}
	}
	return NULL;
}

static void pool_created(struct slim_shm_check *c, struct wl_client *client, uint32_t id,
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

static void check_buffer(struct slim_shm_check *c, struct wl_resource *pool_resource,
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

static void log_request(void *data, enum wl_protocol_logger_type type,
		const struct wl_protocol_logger_message *m)
{
	struct slim_shm_check *c = data;
	if (type != WL_PROTOCOL_LOGGER_REQUEST) {
		return;
	}
	const char *class = wl_resource_get_class(m->resource);
	const char *name = m->message->name;
	if (strcmp(class, "wl_shm") == 0 && strcmp(name, "create_pool") == 0 &&
			m->arguments_count == 3) {
		pool_created(c, wl_resource_get_client(m->resource), m->arguments[0].n,
			m->arguments[2].i);
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

struct slim_shm_check *shm_check_create(struct wl_display *display)
{
	struct slim_shm_check *c = calloc(1, sizeof(*c));
	if (!c) {
		return NULL;
	}
	wl_list_init(&c->pools);
	c->log_limit = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	c->logger = wl_display_add_protocol_logger(display, log_request, c);
	if (!c->logger) {
		free(c);
		return NULL;
	}
	return c;
}

void shm_check_destroy(struct slim_shm_check *c)
{
	if (!c) {
		return;
	}
	struct pool *p, *tmp;
	wl_list_for_each_safe(p, tmp, &c->pools, link) {
		pool_destroy(p);
	}
	wl_protocol_logger_destroy(c->logger);
	free(c);
}
