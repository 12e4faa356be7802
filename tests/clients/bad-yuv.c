/*
 * slim-bad-yuv MODE: a client that sends one thing a compositor must
 * refuse (or, for `odd`, must take), then says what came of it:
 * "error INTERFACE CODE" (the protocol error it was killed with) or "ok".
 *
 *   stride          a YUYV buffer whose rows are shorter than 2 bytes a pixel
 *   pool            an NV12 buffer whose chroma plane lies past its pool's end
 *   odd             a valid NV12 buffer of odd size, shown in a window
 *   viewport-src    a viewport whose source rectangle lies outside the buffer
 *   viewport-zero   a viewport with a zero destination size
 *   content-twice   two wp_content_type_v1 for one surface
 *   video           a window of moving pictures that says "video" through
 *                   wp_content_type_v1 (runs until killed)
 *   resizing        the same, 320x240 and 336x256 by turns: a new size
 *                   every frame (runs until killed)
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>
#include "content-type-v1-client-protocol.h"
#include "globals.h"
#include "viewporter-client-protocol.h"
#include "xdg-shell-client-protocol.h"

struct client {
	struct wl_display *display;
	struct test_globals g;
	struct wl_surface *surface;
	bool configured;
};

static void xdg_surface_configure(void *data, struct xdg_surface *xdg_surface, uint32_t serial)
{
	struct client *c = data;
	xdg_surface_ack_configure(xdg_surface, serial);
	c->configured = true;
}

static const struct xdg_surface_listener xdg_surface_listener = {
	.configure = xdg_surface_configure,
};

static struct wl_shm_pool *make_pool(struct client *c, size_t size, uint8_t fill, uint8_t **mem)
{
	return test_pool(c->g.shm, size, fill, mem);
}

/* A mapped toplevel showing `buffer`. */
static void show(struct client *c, struct wl_buffer *buffer)
{
	struct xdg_surface *xs = xdg_wm_base_get_xdg_surface(c->g.wm_base, c->surface);
	xdg_surface_add_listener(xs, &xdg_surface_listener, c);
	struct xdg_toplevel *top = xdg_surface_get_toplevel(xs);
	xdg_toplevel_set_title(top, "slim-bad-yuv");
	wl_surface_commit(c->surface);
	while (!c->configured && wl_display_dispatch(c->display) != -1) {
	}
	wl_surface_attach(c->surface, buffer, 0, 0);
	wl_surface_damage(c->surface, 0, 0, INT32_MAX, INT32_MAX);
	wl_surface_commit(c->surface);
}

static struct wl_buffer *rgb_buffer(struct client *c, int32_t w, int32_t h, uint8_t **mem)
{
	struct wl_shm_pool *pool = make_pool(c, (size_t)w * h * 4, 0x80, mem);
	struct wl_buffer *b = wl_shm_pool_create_buffer(pool, 0, w, h, w * 4,
		WL_SHM_FORMAT_XRGB8888);
	wl_shm_pool_destroy(pool);
	return b;
}

/* --- video: a colour pattern that rolls by, one commit a frame */

static void frame_done(void *data, struct wl_callback *cb, uint32_t time);
static const struct wl_callback_listener frame_listener = { .done = frame_done };

struct roll {
	struct client *c;
	struct wl_buffer *buffers[2];
	uint8_t *px[2];
	uint32_t w[2], h[2];
	unsigned n;
};

static void paint(uint8_t *px, uint32_t w, uint32_t h, unsigned n)
{
	uint32_t *p = (uint32_t *)(void *)px;
	for (uint32_t y = 0; y < h; y++) {
		for (uint32_t x = 0; x < w; x++) {
			uint32_t v = (x * 3 + (y + n * 4) * 2) & 0xff;
			p[y * w + x] = v << 16 | ((x + n) & 0xff) << 8 | (255 - v);
		}
	}
}

static void draw(struct roll *r)
{
	unsigned i = r->n & 1;
	paint(r->px[i], r->w[i], r->h[i], r->n++);
	struct wl_callback *cb = wl_surface_frame(r->c->surface);
	wl_callback_add_listener(cb, &frame_listener, r);
	wl_surface_attach(r->c->surface, r->buffers[i], 0, 0);
	wl_surface_damage(r->c->surface, 0, 0, (int32_t)r->w[i], (int32_t)r->h[i]);
	wl_surface_commit(r->c->surface);
}

static void frame_done(void *data, struct wl_callback *cb, uint32_t time)
{
	wl_callback_destroy(cb);
	draw(data);
}

static void video(struct client *c, bool resizing)
{
	struct wp_content_type_v1 *ct = wp_content_type_manager_v1_get_surface_content_type(
		c->g.content_type, c->surface);
	wp_content_type_v1_set_content_type(ct, WP_CONTENT_TYPE_V1_TYPE_VIDEO);
	struct roll r = { .c = c, .w = { 320, resizing ? 336 : 320 },
		.h = { 240, resizing ? 256 : 240 } };
	r.buffers[0] = rgb_buffer(c, (int32_t)r.w[0], (int32_t)r.h[0], &r.px[0]);
	r.buffers[1] = rgb_buffer(c, (int32_t)r.w[1], (int32_t)r.h[1], &r.px[1]);
	paint(r.px[0], r.w[0], r.h[0], 0);
	show(c, r.buffers[0]);
	puts("ready");
	fflush(stdout);
	draw(&r);
	while (wl_display_dispatch(c->display) != -1) {
	}
}

int main(int argc, char *argv[])
{
	const char *mode = argc == 2 ? argv[1] : "";
	struct client c = { 0 };
	c.display = test_globals_connect(&c.g);
	if (!c.display || !c.g.viewporter || !c.g.content_type) {
		fprintf(stderr, "slim-bad-yuv: no Wayland display, or a global is missing\n");
		return 1;
	}
	c.surface = wl_compositor_create_surface(c.g.compositor);
	uint8_t *mem;
	if (strcmp(mode, "stride") == 0) {
		struct wl_shm_pool *pool = make_pool(&c, 64 * 64 * 2, 0x80, &mem);
		wl_shm_pool_create_buffer(pool, 0, 64, 64, 100, WL_SHM_FORMAT_YUYV);
	} else if (strcmp(mode, "pool") == 0) {
		/* the luma plane fits, the chroma plane after it does not */
		struct wl_shm_pool *pool = make_pool(&c, 64 * 64, 0x80, &mem);
		wl_shm_pool_create_buffer(pool, 0, 64, 64, 64, WL_SHM_FORMAT_NV12);
	} else if (strcmp(mode, "odd") == 0) {
		/* NV12's chroma rows hold 32 U, V pairs for 63 pixels: a stride of 64 */
		size_t size = 64 * 47 + 64 * 24;
		struct wl_shm_pool *pool = make_pool(&c, size, 0x80, &mem);
		memset(mem, 200, 64 * 47);
		show(&c, wl_shm_pool_create_buffer(pool, 0, 63, 47, 64, WL_SHM_FORMAT_NV12));
	} else if (strcmp(mode, "viewport-src") == 0) {
		struct wp_viewport *vp = wp_viewporter_get_viewport(c.g.viewporter, c.surface);
		wp_viewport_set_source(vp, wl_fixed_from_int(100), wl_fixed_from_int(100),
			wl_fixed_from_int(10), wl_fixed_from_int(10));
		show(&c, rgb_buffer(&c, 64, 64, &mem));
	} else if (strcmp(mode, "viewport-zero") == 0) {
		struct wp_viewport *vp = wp_viewporter_get_viewport(c.g.viewporter, c.surface);
		wp_viewport_set_destination(vp, 0, 0);
	} else if (strcmp(mode, "content-twice") == 0) {
		wp_content_type_manager_v1_get_surface_content_type(c.g.content_type, c.surface);
		wp_content_type_manager_v1_get_surface_content_type(c.g.content_type, c.surface);
	} else if (strcmp(mode, "video") == 0 || strcmp(mode, "resizing") == 0) {
		video(&c, strcmp(mode, "resizing") == 0);
	} else {
		fprintf(stderr, "usage: slim-bad-yuv stride|pool|odd|viewport-src|viewport-zero|"
			"content-twice|video|resizing\n");
		return 2;
	}
	int ok = wl_display_roundtrip(c.display);
	if (ok >= 0) {
		ok = wl_display_roundtrip(c.display);
	}
	if (ok < 0) {
		const struct wl_interface *iface = NULL;
		uint32_t id;
		uint32_t code = wl_display_get_protocol_error(c.display, &iface, &id);
		printf("error %s %u\n", iface ? iface->name : "none", code);
	} else {
		printf("ok\n");
	}
	fflush(stdout);
	wl_display_disconnect(c.display);
	return 0;
}
