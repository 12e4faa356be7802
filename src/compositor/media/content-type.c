/*
 * wp_content_type_v1: a client says what a surface shows ("video", "game",
 * "photo"), which wlroots 0.15 does not implement. The hint is double
 * buffered like the rest of the surface's state: video.c reads the pending
 * type at the surface's next commit.
 */
#include <stdlib.h>
#include <wayland-server-core.h>
#include <wlr/types/wlr_surface.h>
#include <wlr/util/log.h>
#include "content-type-v1-protocol.h"
#include "server.h"

static void handle_content_type_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void handle_set_content_type(struct wl_client *client, struct wl_resource *resource,
		uint32_t type)
{
	struct slim_video_surface *vs = wl_resource_get_user_data(resource);
	if (!vs) {
		return; /* the surface is gone: the object is inert */
	}
	switch (type) {
	case WP_CONTENT_TYPE_V1_TYPE_PHOTO:
		video_surface_set_hint(vs, SLIM_CONTENT_PHOTO);
		break;
	case WP_CONTENT_TYPE_V1_TYPE_VIDEO:
		video_surface_set_hint(vs, SLIM_CONTENT_VIDEO);
		break;
	case WP_CONTENT_TYPE_V1_TYPE_GAME:
		video_surface_set_hint(vs, SLIM_CONTENT_GAME);
		break;
	default:
		/* "none", and values from a later version we do not know */
		video_surface_set_hint(vs, SLIM_CONTENT_NONE);
		break;
	}
}

static const struct wp_content_type_v1_interface content_type_impl = {
	.destroy = handle_content_type_destroy,
	.set_content_type = handle_set_content_type,
};

/* The object going away resets the surface to "none" at its next commit. */
static void handle_content_type_resource_destroy(struct wl_resource *resource)
{
	struct slim_video_surface *vs = wl_resource_get_user_data(resource);
	if (vs) {
		video_surface_set_hint(vs, SLIM_CONTENT_NONE);
		video_surface_set_hint_object(vs, NULL);
	}
}

void content_type_surface_gone(struct wl_resource *resource)
{
	wl_resource_set_user_data(resource, NULL);
}

static void handle_manager_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void handle_get_surface_content_type(struct wl_client *client,
		struct wl_resource *manager, uint32_t id, struct wl_resource *surface_resource)
{
	struct slim_server *server = wl_resource_get_user_data(manager);
	struct wlr_surface *surface = wlr_surface_from_resource(surface_resource);
	struct slim_video_surface *vs = video_surface_of(server->video, surface);
	if (vs && video_surface_hint_object(vs)) {
		wl_resource_post_error(manager, WP_CONTENT_TYPE_MANAGER_V1_ERROR_ALREADY_CONSTRUCTED,
			"wl_surface@%u already has a wp_content_type_v1",
			wl_resource_get_id(surface_resource));
		return;
	}
	struct wl_resource *resource = wl_resource_create(client, &wp_content_type_v1_interface,
		wl_resource_get_version(manager), id);
	if (!resource) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(resource, &content_type_impl, vs,
		handle_content_type_resource_destroy);
	if (vs) {
		video_surface_set_hint_object(vs, resource);
	}
}

static const struct wp_content_type_manager_v1_interface manager_impl = {
	.destroy = handle_manager_destroy,
	.get_surface_content_type = handle_get_surface_content_type,
};

static void bind_manager(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	struct wl_resource *resource = wl_resource_create(client,
		&wp_content_type_manager_v1_interface, (int)version, id);
	if (!resource) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(resource, &manager_impl, data, NULL);
}

bool content_type_init(struct slim_server *server)
{
	return wl_global_create(server->display, &wp_content_type_manager_v1_interface, 1,
		server, bind_manager) != NULL;
}
