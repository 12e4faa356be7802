/*
 * wp_content_type_v1: a client says what a surface shows ("video", "game",
 * "photo"), which wlroots 0.15 does not implement. The hint is double
 * buffered like the rest of the surface's state: video.c reads the pending
 * type at the surface's next commit. An object hangs on its surface as an
 * addon: one a surface, and inert once the surface is gone.
 */
#include <stdlib.h>
#include <wayland-server-core.h>
#include <wlr/types/wlr_surface.h>
#include <wlr/util/addon.h>
#include <wlr/util/log.h>
#include "content-type-v1-protocol.h"
#include "content-type.h"

struct content_type {
	struct wlr_addon addon; /* on its surface */
	struct wl_resource *resource;
	enum slim_content_hint pending;
};

static void content_type_free(struct content_type *ct)
{
	wlr_addon_finish(&ct->addon);
	free(ct);
}

/* The surface is gone: the object is inert. */
static void handle_surface_gone(struct wlr_addon *addon)
{
	struct content_type *ct = wl_container_of(addon, ct, addon);
	wl_resource_set_user_data(ct->resource, NULL);
	content_type_free(ct);
}

static const struct wlr_addon_interface addon_impl = {
	.name = "wp_content_type_v1",
	.destroy = handle_surface_gone,
};

static struct content_type *content_type_of(struct wlr_surface *surface)
{
	struct wlr_addon *addon = wlr_addon_find(&surface->addons, &addon_impl, &addon_impl);
	struct content_type *ct;
	return addon ? wl_container_of(addon, ct, addon) : NULL;
}

enum slim_content_hint content_type_pending(struct wlr_surface *surface)
{
	struct content_type *ct = content_type_of(surface);
	return ct ? ct->pending : SLIM_CONTENT_NONE;
}

static void handle_content_type_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void handle_set_content_type(struct wl_client *client, struct wl_resource *resource,
		uint32_t type)
{
	struct content_type *ct = wl_resource_get_user_data(resource);
	if (!ct) {
		return; /* the surface is gone: the object is inert */
	}
	switch (type) {
	case WP_CONTENT_TYPE_V1_TYPE_PHOTO:
		ct->pending = SLIM_CONTENT_PHOTO;
		break;
	case WP_CONTENT_TYPE_V1_TYPE_VIDEO:
		ct->pending = SLIM_CONTENT_VIDEO;
		break;
	case WP_CONTENT_TYPE_V1_TYPE_GAME:
		ct->pending = SLIM_CONTENT_GAME;
		break;
	default:
		/* "none", and values from a later version we do not know */
		ct->pending = SLIM_CONTENT_NONE;
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
	struct content_type *ct = wl_resource_get_user_data(resource);
	if (ct) {
		content_type_free(ct);
	}
}

static void handle_manager_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void handle_get_surface_content_type(struct wl_client *client,
		struct wl_resource *manager, uint32_t id, struct wl_resource *surface_resource)
{
	struct wlr_surface *surface = wlr_surface_from_resource(surface_resource);
	if (content_type_of(surface)) {
		wl_resource_post_error(manager, WP_CONTENT_TYPE_MANAGER_V1_ERROR_ALREADY_CONSTRUCTED,
			"wl_surface@%u already has a wp_content_type_v1",
			wl_resource_get_id(surface_resource));
		return;
	}
	struct content_type *ct = calloc(1, sizeof(*ct));
	struct wl_resource *resource = ct ? wl_resource_create(client,
		&wp_content_type_v1_interface, wl_resource_get_version(manager), id) : NULL;
	if (!resource) {
		free(ct);
		wl_client_post_no_memory(client);
		return;
	}
	ct->resource = resource;
	wlr_addon_init(&ct->addon, &surface->addons, &addon_impl, &addon_impl);
	wl_resource_set_implementation(resource, &content_type_impl, ct,
		handle_content_type_resource_destroy);
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

bool content_type_init(struct wl_display *display)
{
	return wl_global_create(display, &wp_content_type_manager_v1_interface, 1, NULL,
		bind_manager) != NULL;
}
