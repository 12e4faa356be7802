/*
 * --output window's picture: a window per head, each showing its
 * rectangle of the core's shadow framebuffer scaled into whatever size
 * the user makes of it, and the server's cursor drawn over it where it
 * falls. The events are window-events.c's.
 */
#include <SDL.h>
#include <SDL_syswm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef SLIM_WINDOW_WAYLAND_FD
#include <wayland-client-core.h>
#endif
#include "slim-clock.h"
#include "slim-log.h"
#include "window-input.h"
#include "window-internal.h"
#include "window.h"

/* Without a display socket to poll, SDL is pumped this often (a 120 Hz tick). */
#define PUMP_MS 8
/* With one, SDL still has deferred work of its own (X11 focus changes): a bound on the sleep. */
#define IDLE_PUMP_MS 100

/* The picture's place in the head's window's drawable, in output pixels. */
static struct slim_letterbox output_letterbox(const struct window_head *h)
{
	int ow = 0, oh = 0;
	if (SDL_GetRendererOutputSize(h->renderer, &ow, &oh) != 0 || ow <= 0 || oh <= 0) {
		SDL_GetWindowSize(h->window, &ow, &oh);
	}
	return slim_letterbox_fit((uint32_t)ow, (uint32_t)oh, h->desc.width, h->desc.height);
}

/* The server's cursor over the head's picture, where it falls on this head. */
static void render_cursor(struct slim_window_backend *w, struct window_head *h,
		const struct slim_letterbox *lb, const SDL_Rect *dst)
{
	const struct slim_console_cursor *c = &w->cursor;
	if (!w->cursor_image || !h->cursor_tex || !c->visible) {
		return;
	}
	/* hotspot position in the head's pixels, 1/256 */
	bool local = slim_now_us() < w->local_until_us;
	int64_t hx = (local ? w->pointer_x256 : (int64_t)c->x * 256) - (int64_t)h->desc.x * 256;
	int64_t hy = (local ? w->pointer_y256 : (int64_t)c->y * 256) - (int64_t)h->desc.y * 256;
	int64_t x = hx - (int64_t)c->hot_x * 256, y = hy - (int64_t)c->hot_y * 256;
	int64_t hw = h->desc.width, hh = h->desc.height;
	if (x >= hw * 256 || y >= hh * 256 || x + (int64_t)c->w * 256 <= 0 ||
			y + (int64_t)c->h * 256 <= 0) {
		return; /* on another head */
	}
	SDL_Rect cr = {
		.x = lb->x + (int)(x * lb->w / (hw * 256)),
		.y = lb->y + (int)(y * lb->h / (hh * 256)),
		.w = (int)(((int64_t)c->w * lb->w + hw / 2) / hw),
		.h = (int)(((int64_t)c->h * lb->h + hh / 2) / hh),
	};
	/* the pointer stays over the picture, not over the bars */
	SDL_RenderSetClipRect(h->renderer, dst);
	SDL_RenderCopy(h->renderer, h->cursor_tex, NULL, &cr);
	SDL_RenderSetClipRect(h->renderer, NULL);
}

static void render_head(struct slim_window_backend *w, struct window_head *h)
{
	if (!h->renderer || !h->picture) {
		return;
	}
	/* the bars: black, as a monitor's own letterbox is */
	SDL_SetRenderDrawColor(h->renderer, 0, 0, 0, 255);
	SDL_RenderClear(h->renderer);
	struct slim_letterbox lb = output_letterbox(h);
	SDL_Rect dst = { lb.x, lb.y, lb.w, lb.h };
	SDL_RenderCopy(h->renderer, h->picture, NULL, &dst);
	render_cursor(w, h, &lb, &dst);
	SDL_RenderPresent(h->renderer);
}

void window_render(struct slim_window_backend *w)
{
	for (uint32_t i = 0; i < w->n_heads; i++) {
		render_head(w, &w->heads[i]);
	}
}

struct window_head *window_head_of(struct slim_window_backend *w, uint32_t window_id)
{
	for (uint32_t i = 0; i < w->n_heads; i++) {
		if (w->heads[i].window_id == window_id) {
			return &w->heads[i];
		}
	}
	return NULL;
}

/* The part of `r` (a rectangle of the screen) on the head, into its texture. */
static bool upload_rect(struct window_head *h, const struct slim_fb *fb, struct slim_rect r)
{
	int32_t x1 = r.x > (int32_t)h->desc.x ? r.x : (int32_t)h->desc.x;
	int32_t y1 = r.y > (int32_t)h->desc.y ? r.y : (int32_t)h->desc.y;
	int32_t x2 = r.x + r.w, y2 = r.y + r.h;
	x2 = x2 < (int32_t)(h->desc.x + h->desc.width) ? x2 : (int32_t)(h->desc.x + h->desc.width);
	y2 = y2 < (int32_t)(h->desc.y + h->desc.height) ? y2 :
		(int32_t)(h->desc.y + h->desc.height);
	if (x1 >= x2 || y1 >= y2) {
		return true;
	}
	SDL_Rect sr = { x1 - (int32_t)h->desc.x, y1 - (int32_t)h->desc.y, x2 - x1, y2 - y1 };
	return SDL_UpdateTexture(h->picture, &sr, slim_fb_row(fb, (uint32_t)x1, (uint32_t)y1),
		(int)(fb->stride * 4)) == 0;
}

static bool create_picture(struct window_head *h)
{
	if (h->picture) {
		SDL_DestroyTexture(h->picture);
	}
	/* XRGB8888: the shadow framebuffer's own layout, copied as it is */
	h->picture = SDL_CreateTexture(h->renderer, SDL_PIXELFORMAT_XRGB8888,
		SDL_TEXTUREACCESS_STREAMING, (int)h->desc.width, (int)h->desc.height);
	return h->picture != NULL;
}

/* The server's premultiplied ARGB, straight for SDL's BLEND (which the software renderer has). */
static void straighten_cursor(struct slim_window_backend *w)
{
	const struct slim_console_cursor *c = &w->cursor;
	size_t n = (size_t)c->w * c->h;
	for (size_t i = 0; i < n; i++) {
		uint32_t p = w->cursor_px[i], a = p >> 24;
		if (a == 0 || a == 255) {
			w->cursor_upload[i] = a ? p : 0;
			continue;
		}
		uint32_t r = ((p >> 16 & 0xff) * 255 + a / 2) / a;
		uint32_t g = ((p >> 8 & 0xff) * 255 + a / 2) / a;
		uint32_t b = ((p & 0xff) * 255 + a / 2) / a;
		w->cursor_upload[i] = a << 24 | (r > 255 ? 255 : r) << 16 | (g > 255 ? 255 : g) << 8 |
			(b > 255 ? 255 : b);
	}
}

/* cursor_upload into the head's cursor texture. */
static void upload_cursor(struct slim_window_backend *w, struct window_head *h)
{
	const struct slim_console_cursor *c = &w->cursor;
	if (!h->renderer) {
		return;
	}
	if (!h->cursor_tex || h->cursor_tex_w != c->w || h->cursor_tex_h != c->h) {
		if (h->cursor_tex) {
			SDL_DestroyTexture(h->cursor_tex);
		}
		h->cursor_tex = SDL_CreateTexture(h->renderer, SDL_PIXELFORMAT_ARGB8888,
			SDL_TEXTUREACCESS_STATIC, (int)c->w, (int)c->h);
		h->cursor_tex_w = c->w;
		h->cursor_tex_h = c->h;
		if (!h->cursor_tex) {
			slim_log(SLIM_LOG_ERROR, "window: cursor texture: %s", SDL_GetError());
			return;
		}
		SDL_SetTextureBlendMode(h->cursor_tex, SDL_BLENDMODE_BLEND);
	}
	SDL_UpdateTexture(h->cursor_tex, NULL, w->cursor_upload, (int)(c->w * 4));
}

void window_restore_textures(struct slim_window_backend *w)
{
	for (uint32_t i = 0; i < w->n_heads; i++) {
		struct window_head *h = &w->heads[i];
		if (h->cursor_tex) {
			SDL_DestroyTexture(h->cursor_tex);
			h->cursor_tex = NULL;
		}
		if (!create_picture(h)) {
			slim_log(SLIM_LOG_ERROR, "window: texture lost: %s", SDL_GetError());
			continue;
		}
		if (w->fb && w->fb->width == w->width && w->fb->height == w->height) {
			upload_rect(h, w->fb, (struct slim_rect){ 0, 0, (uint16_t)w->width,
				(uint16_t)w->height });
		}
		if (w->cursor_image) {
			upload_cursor(w, h);
		}
	}
}

/* The desktop's pointer shows only while the server has given no cursor to draw. */
static void update_system_cursor(struct slim_window_backend *w)
{
	SDL_ShowCursor(w->cursor_image ? SDL_DISABLE : SDL_ENABLE);
}

/* The display connection's socket, when SDL says which it is. */
static int display_fd(SDL_Window *window)
{
	SDL_SysWMinfo wm;
	SDL_VERSION(&wm.version);
	if (!SDL_GetWindowWMInfo(window, &wm)) {
		return -1;
	}
	switch (wm.subsystem) {
#ifdef SDL_VIDEO_DRIVER_X11
	case SDL_SYSWM_X11:
		return ConnectionNumber(wm.info.x11.display);
#endif
#if defined(SDL_VIDEO_DRIVER_WAYLAND) && defined(SLIM_WINDOW_WAYLAND_FD)
	case SDL_SYSWM_WAYLAND:
		return wl_display_get_fd(wm.info.wl.display);
#endif
	default:
		return -1;
	}
}

static bool open_head(struct slim_window_backend *w, struct window_head *h)
{
	char title[400];
	if (w->desk.n_heads > 1) {
		snprintf(title, sizeof(title), "%s (%s)", w->title, h->desc.name);
	} else {
		snprintf(title, sizeof(title), "%s", w->title);
	}
	/* the first where the desktop likes, the others beside it as the heads lie */
	int x = SDL_WINDOWPOS_UNDEFINED, y = SDL_WINDOWPOS_UNDEFINED;
	if (h != &w->heads[0]) {
		SDL_GetWindowPosition(w->heads[0].window, &x, &y);
		x += (int)h->desc.x - (int)w->heads[0].desc.x;
		y += (int)h->desc.y - (int)w->heads[0].desc.y;
	}
	/*
	 * Resizable, but the head stays the announced size: the picture
	 * is scaled into whatever the user makes of the window.
	 */
	h->window = SDL_CreateWindow(title, x, y, (int)h->desc.width, (int)h->desc.height,
		SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
	if (!h->window) {
		slim_log(SLIM_LOG_ERROR, "window: cannot open a %ux%u window: %s", h->desc.width,
			h->desc.height, SDL_GetError());
		return false;
	}
	h->window_id = SDL_GetWindowID(h->window);
	/* No vsync: presenting must never hold up the network loop for a refresh. */
	h->renderer = SDL_CreateRenderer(h->window, -1, 0);
	if (!h->renderer || !create_picture(h)) {
		slim_log(SLIM_LOG_ERROR, "window: cannot draw in the window: %s", SDL_GetError());
		return false;
	}
	SDL_RendererInfo info;
	if (SDL_GetRendererInfo(h->renderer, &info) == 0) {
		slim_log(SLIM_LOG_DEBUG, "window: %s: SDL video driver %s, renderer %s",
			h->desc.name, SDL_GetCurrentVideoDriver(), info.name);
	}
	if (w->cursor_image) {
		upload_cursor(w, h);
	}
	return true;
}

static void close_head(struct window_head *h)
{
	if (h->cursor_tex) {
		SDL_DestroyTexture(h->cursor_tex);
	}
	if (h->picture) {
		SDL_DestroyTexture(h->picture);
	}
	if (h->renderer) {
		SDL_DestroyRenderer(h->renderer);
	}
	if (h->window) {
		SDL_DestroyWindow(h->window);
	}
	*h = (struct window_head){ 0 };
}

static void close_heads(struct slim_window_backend *w)
{
	for (uint32_t i = 0; i < w->n_heads; i++) {
		close_head(&w->heads[i]);
	}
	w->n_heads = 0;
}

/*
 * A window for each head of the desk, if the screen is its bounds; for a
 * screen of another size (the control protocol's resize), one head of it.
 */
static bool open_heads(struct slim_window_backend *w, uint32_t width, uint32_t height)
{
	uint32_t dw, dh;
	slim_desk_bounds(&w->desk, &dw, &dh);
	if (dw != width || dh != height) {
		slim_desk_single(&w->desk, width, height);
	}
	close_heads(w);
	w->width = width;
	w->height = height;
	for (uint32_t i = 0; i < w->desk.n_heads; i++) {
		w->heads[i].desc = w->desk.heads[i];
		w->n_heads = i + 1;
		if (!open_head(w, &w->heads[i])) {
			return false;
		}
	}
	w->fd = display_fd(w->heads[0].window);
	update_system_cursor(w);
	window_render(w);
	return true;
}

static bool window_init(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	return open_heads(window_from(b), width, height);
}

static void window_present(struct slim_console_backend *b, const struct slim_fb *fb,
		const struct slim_rect *damage, size_t n)
{
	struct slim_window_backend *w = window_from(b);
	w->fb = fb;
	/* Only the damage crosses to the textures: a keystroke's frame is a few glyphs. */
	for (uint32_t i = 0; i < w->n_heads; i++) {
		struct window_head *h = &w->heads[i];
		for (size_t j = 0; h->picture && j < n; j++) {
			if (!upload_rect(h, fb, damage[j])) {
				slim_log(SLIM_LOG_ERROR, "window: texture update: %s", SDL_GetError());
				break;
			}
		}
	}
	window_render(w);
}

static bool window_resize(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	struct slim_window_backend *w = window_from(b);
	if (w->n_heads > 0 && width == w->width && height == w->height) {
		return true;
	}
	return open_heads(w, width, height);
}

static void window_cursor(struct slim_console_backend *b, const struct slim_console_cursor *c)
{
	struct slim_window_backend *w = window_from(b);
	bool image = c->pixels && c->w > 0 && c->h > 0 &&
		c->w <= SLIM_CURSOR_MAX && c->h <= SLIM_CURSOR_MAX;
	size_t bytes = image ? (size_t)c->w * c->h * 4 : 0;
	/* The core tells positions; a new image shows only as different pixels. */
	bool changed = image != w->cursor_image || (image && (c->w != w->cursor.w ||
		c->h != w->cursor.h || memcmp(c->pixels, w->cursor_px, bytes) != 0));
	w->cursor = *c;
	w->cursor.pixels = w->cursor_px;
	w->cursor_image = image;
	if (changed) {
		if (image) {
			memcpy(w->cursor_px, c->pixels, bytes);
			straighten_cursor(w);
			for (uint32_t i = 0; i < w->n_heads; i++) {
				upload_cursor(w, &w->heads[i]);
			}
		}
		update_system_cursor(w);
	}
	window_render(w);
}

static void window_destroy(struct slim_console_backend *b)
{
	if (!b) {
		return;
	}
	struct slim_window_backend *w = window_from(b);
	close_heads(w);
#ifndef __SANITIZE_ADDRESS__
	/*
	 * Under ASan SDL stays loaded: SDL_Quit dlclose()s the X11 libraries
	 * SDL opened, and what Xlib still holds in their globals would then
	 * show as leaks nobody can name. The console ends right after anyway.
	 */
	if (w->sdl_up) {
		SDL_Quit();
	}
#endif
	free(w->title);
	free(w);
}

static const struct slim_console_backend_impl window_impl = {
	.name = "window",
	.init = window_init,
	.present = window_present,
	.resize = window_resize,
	.destroy = window_destroy,
	.cursor = window_cursor,
	.fd = window_fd,
	.dispatch = window_dispatch,
};

struct slim_console_backend *slim_window_backend_create(const char *title,
		const struct slim_desk *desk, const struct slim_console_input_sink *sink,
		char *err, size_t err_len)
{
	struct slim_window_backend *w = calloc(1, sizeof(*w));
	if (!w || !(w->title = strdup(title))) {
		snprintf(err, err_len, "out of memory");
		free(w);
		return NULL;
	}
	w->base.impl = &window_impl;
	w->fd = -1;
	w->desk = *desk;
	if (sink) {
		w->sink = *sink;
	}
	/* The console reads SIGINT and SIGTERM from a signalfd: SDL must not take them. */
	SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1");
	/* A click that focuses the window is a click in the session too. */
	SDL_SetHint(SDL_HINT_MOUSE_FOCUS_CLICKTHROUGH, "1");
	/* Scaled down into a small window, text stays legible; at 1:1 it changes nothing. */
	SDL_SetHint(SDL_HINT_RENDER_SCALE_QUALITY, "linear");
	if (SDL_Init(SDL_INIT_VIDEO) != 0) {
		snprintf(err, err_len, "cannot open a window: %s (is DISPLAY or WAYLAND_DISPLAY set?)",
			SDL_GetError());
		window_destroy(&w->base);
		return NULL;
	}
	w->sdl_up = true;
	return &w->base;
}

int slim_window_backend_timeout_ms(struct slim_console_backend *b)
{
	return window_from(b)->fd >= 0 ? IDLE_PUMP_MS : PUMP_MS;
}
