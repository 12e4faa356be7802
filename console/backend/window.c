#include <SDL.h>
#include <SDL_syswm.h>
#include <linux/input-event-codes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef SLIM_WINDOW_WAYLAND_FD
#include <wayland-client-core.h>
#endif
#include "slim-clock.h"
#include "slim-log.h"
#include "window-input.h"
#include "window.h"

/* Without a display socket to poll, SDL is pumped this often (a 120 Hz tick). */
#define PUMP_MS 8
/* With one, SDL still has deferred work of its own (X11 focus changes): a bound on the sleep. */
#define IDLE_PUMP_MS 100
/*
 * How long a local pointer motion places the drawn pointer by itself: longer
 * than a LAN round trip, so that the server's echo of an older position does
 * not pull the pointer back while it moves; after it the server's position
 * counts again (it may warp the pointer, or another input may move it).
 */
#define LOCAL_POINTER_US 100000
/* Scroll units a wheel notch moves, as libinput reports a wheel click. */
#define WHEEL_STEP 15.0
#define MAX_KEYS (KEY_MAX + 1)

struct slim_window_backend {
	struct slim_console_backend base;
	struct slim_console_input_sink sink;
	char *title;
	bool sdl_up;
	SDL_Window *window;
	SDL_Renderer *renderer;
	SDL_Texture *picture;
	uint32_t width, height;
	/* the core's framebuffer as last presented, to upload again after a device reset */
	const struct slim_fb *fb;
	int fd;
	bool closed;

	/* The server's cursor, kept to tell a new image from the one shown. */
	struct slim_console_cursor cursor;
	bool cursor_image; /* cursor_px holds an image the server sent */
	SDL_Texture *cursor_tex;
	uint32_t cursor_tex_w, cursor_tex_h;
	uint32_t cursor_px[SLIM_CURSOR_MAX * SLIM_CURSOR_MAX];
	uint32_t cursor_upload[SLIM_CURSOR_MAX * SLIM_CURSOR_MAX];

	/* The local pointer places the drawn cursor until this time, ahead of the server. */
	uint64_t local_until_us;
	int32_t pointer_x256, pointer_y256;

	/* What the server thinks is held, released if the window loses the keyboard. */
	uint8_t keys_down[MAX_KEYS / 8 + 1];
	uint32_t buttons_down; /* bit (BTN_* - BTN_LEFT) */
};

static struct slim_window_backend *window_from(struct slim_console_backend *b)
{
	return (struct slim_window_backend *)b;
}

static void send_events(struct slim_window_backend *w, struct slim_wire_input *ev, size_t n)
{
	/* CLOCK_MONOTONIC milliseconds, as the control protocol's and libinput's are */
	uint32_t now_ms = (uint32_t)slim_now_ms();
	for (size_t i = 0; i < n; i++) {
		ev[i].time_ms = now_ms;
	}
	if (w->sink.send) {
		w->sink.send(w->sink.data, ev, n);
	}
}

/* Pointer events end with a FRAME, as libinput's do. */
static void send_pointer(struct slim_window_backend *w, struct slim_wire_input ev)
{
	struct slim_wire_input evs[2] = { ev, { .kind = SLIM_INPUT_FRAME } };
	send_events(w, evs, 2);
}

/* The picture's place in the window's drawable, in output pixels. */
static struct slim_letterbox output_letterbox(struct slim_window_backend *w)
{
	int ow = 0, oh = 0;
	if (SDL_GetRendererOutputSize(w->renderer, &ow, &oh) != 0 || ow <= 0 || oh <= 0) {
		SDL_GetWindowSize(w->window, &ow, &oh);
	}
	return slim_letterbox_fit((uint32_t)ow, (uint32_t)oh, w->width, w->height);
}

static void render(struct slim_window_backend *w)
{
	if (!w->renderer || !w->picture) {
		return;
	}
	/* the bars: black, as a monitor's own letterbox is */
	SDL_SetRenderDrawColor(w->renderer, 0, 0, 0, 255);
	SDL_RenderClear(w->renderer);
	struct slim_letterbox lb = output_letterbox(w);
	SDL_Rect dst = { lb.x, lb.y, lb.w, lb.h };
	SDL_RenderCopy(w->renderer, w->picture, NULL, &dst);

	const struct slim_console_cursor *c = &w->cursor;
	if (w->cursor_image && w->cursor_tex && c->visible) {
		/* hotspot position in console pixels, 1/256 */
		bool local = slim_now_us() < w->local_until_us;
		int64_t hx = local ? w->pointer_x256 : (int64_t)c->x * 256;
		int64_t hy = local ? w->pointer_y256 : (int64_t)c->y * 256;
		int64_t x = hx - (int64_t)c->hot_x * 256, y = hy - (int64_t)c->hot_y * 256;
		SDL_Rect cr = {
			.x = lb.x + (int)(x * lb.w / ((int64_t)w->width * 256)),
			.y = lb.y + (int)(y * lb.h / ((int64_t)w->height * 256)),
			.w = (int)(((int64_t)c->w * lb.w + w->width / 2) / w->width),
			.h = (int)(((int64_t)c->h * lb.h + w->height / 2) / w->height),
		};
		/* the pointer stays over the picture, not over the bars */
		SDL_RenderSetClipRect(w->renderer, &dst);
		SDL_RenderCopy(w->renderer, w->cursor_tex, NULL, &cr);
		SDL_RenderSetClipRect(w->renderer, NULL);
	}
	SDL_RenderPresent(w->renderer);
}

static bool upload_rect(struct slim_window_backend *w, const struct slim_fb *fb,
		struct slim_rect r)
{
	if (r.w == 0 || r.h == 0) {
		return true;
	}
	SDL_Rect sr = { r.x, r.y, r.w, r.h };
	return SDL_UpdateTexture(w->picture, &sr, slim_fb_row(fb, r.x, r.y),
		(int)(fb->stride * 4)) == 0;
}

static bool create_picture(struct slim_window_backend *w)
{
	if (w->picture) {
		SDL_DestroyTexture(w->picture);
	}
	/* XRGB8888: the shadow framebuffer's own layout, copied as it is */
	w->picture = SDL_CreateTexture(w->renderer, SDL_PIXELFORMAT_XRGB8888,
		SDL_TEXTUREACCESS_STREAMING, (int)w->width, (int)w->height);
	return w->picture != NULL;
}

/* The server's premultiplied ARGB, straight for SDL's BLEND (which the software renderer has). */
static void upload_cursor(struct slim_window_backend *w)
{
	const struct slim_console_cursor *c = &w->cursor;
	if (!w->cursor_tex || w->cursor_tex_w != c->w || w->cursor_tex_h != c->h) {
		if (w->cursor_tex) {
			SDL_DestroyTexture(w->cursor_tex);
		}
		w->cursor_tex = SDL_CreateTexture(w->renderer, SDL_PIXELFORMAT_ARGB8888,
			SDL_TEXTUREACCESS_STATIC, (int)c->w, (int)c->h);
		w->cursor_tex_w = c->w;
		w->cursor_tex_h = c->h;
		if (!w->cursor_tex) {
			slim_log(SLIM_LOG_ERROR, "window: cursor texture: %s", SDL_GetError());
			return;
		}
		SDL_SetTextureBlendMode(w->cursor_tex, SDL_BLENDMODE_BLEND);
	}
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
	SDL_UpdateTexture(w->cursor_tex, NULL, w->cursor_upload, (int)(c->w * 4));
}

/* The desktop's pointer shows only while the server has given no cursor to draw. */
static void update_system_cursor(struct slim_window_backend *w)
{
	SDL_ShowCursor(w->cursor_image ? SDL_DISABLE : SDL_ENABLE);
}

static bool window_init(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	struct slim_window_backend *w = window_from(b);
	w->width = width;
	w->height = height;
	/*
	 * Resizable, but the screen stays the announced size: the picture
	 * is scaled into whatever the user makes of the window.
	 */
	w->window = SDL_CreateWindow(w->title, SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED,
		(int)width, (int)height, SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
	if (!w->window) {
		slim_log(SLIM_LOG_ERROR, "window: cannot open a %ux%u window: %s", width, height,
			SDL_GetError());
		return false;
	}
	/* No vsync: presenting must never hold up the network loop for a refresh. */
	w->renderer = SDL_CreateRenderer(w->window, -1, 0);
	if (!w->renderer || !create_picture(w)) {
		slim_log(SLIM_LOG_ERROR, "window: cannot draw in the window: %s", SDL_GetError());
		return false;
	}
	SDL_RendererInfo info;
	if (SDL_GetRendererInfo(w->renderer, &info) == 0) {
		slim_log(SLIM_LOG_DEBUG, "window: SDL video driver %s, renderer %s",
			SDL_GetCurrentVideoDriver(), info.name);
	}

	w->fd = -1;
	SDL_SysWMinfo wm;
	SDL_VERSION(&wm.version);
	if (SDL_GetWindowWMInfo(w->window, &wm)) {
		switch (wm.subsystem) {
#ifdef SDL_VIDEO_DRIVER_X11
		case SDL_SYSWM_X11:
			w->fd = ConnectionNumber(wm.info.x11.display);
			break;
#endif
#if defined(SDL_VIDEO_DRIVER_WAYLAND) && defined(SLIM_WINDOW_WAYLAND_FD)
		case SDL_SYSWM_WAYLAND:
			w->fd = wl_display_get_fd(wm.info.wl.display);
			break;
#endif
		default:
			break;
		}
	}
	update_system_cursor(w);
	render(w);
	return true;
}

static void window_present(struct slim_console_backend *b, const struct slim_fb *fb,
		const struct slim_rect *damage, size_t n)
{
	struct slim_window_backend *w = window_from(b);
	w->fb = fb;
	if (!w->picture) {
		return;
	}
	/* Only the damage crosses to the texture: a keystroke's frame is a few glyphs. */
	for (size_t i = 0; i < n; i++) {
		if (!upload_rect(w, fb, damage[i])) {
			slim_log(SLIM_LOG_ERROR, "window: texture update: %s", SDL_GetError());
			break;
		}
	}
	render(w);
}

static bool window_resize(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	struct slim_window_backend *w = window_from(b);
	w->width = width;
	w->height = height;
	if (!w->window) {
		return window_init(b, width, height);
	}
	SDL_SetWindowSize(w->window, (int)width, (int)height);
	if (!create_picture(w)) {
		slim_log(SLIM_LOG_ERROR, "window: %ux%u texture: %s", width, height, SDL_GetError());
		return false;
	}
	render(w);
	return true;
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
			if (w->renderer) {
				upload_cursor(w);
			}
		}
		update_system_cursor(w);
	}
	render(w);
}

static void window_destroy(struct slim_console_backend *b)
{
	if (!b) {
		return;
	}
	struct slim_window_backend *w = window_from(b);
	if (w->cursor_tex) {
		SDL_DestroyTexture(w->cursor_tex);
	}
	if (w->picture) {
		SDL_DestroyTexture(w->picture);
	}
	if (w->renderer) {
		SDL_DestroyRenderer(w->renderer);
	}
	if (w->window) {
		SDL_DestroyWindow(w->window);
	}
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

static int window_fd(struct slim_console_backend *b);
static void window_dispatch(struct slim_console_backend *b);

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
		const struct slim_console_input_sink *sink, char *err, size_t err_len)
{
	struct slim_window_backend *w = calloc(1, sizeof(*w));
	if (!w || !(w->title = strdup(title))) {
		snprintf(err, err_len, "out of memory");
		free(w);
		return NULL;
	}
	w->base.impl = &window_impl;
	w->fd = -1;
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

static void send_key(struct slim_window_backend *w, uint16_t code, bool down)
{
	if (code == KEY_RESERVED || code >= MAX_KEYS) {
		return;
	}
	bool was = w->keys_down[code / 8] & (1u << (code % 8));
	if (was == down) {
		return; /* a release of a key pressed before the window had the keyboard */
	}
	w->keys_down[code / 8] ^= (uint8_t)(1u << (code % 8));
	struct slim_wire_input ev = { .kind = SLIM_INPUT_KEY, .code = code, .value = down };
	send_events(w, &ev, 1);
}

static void send_button(struct slim_window_backend *w, uint16_t code, bool down)
{
	uint32_t bit = 1u << (code - BTN_LEFT);
	if (!!(w->buttons_down & bit) == down) {
		return;
	}
	w->buttons_down ^= bit;
	send_pointer(w, (struct slim_wire_input){
		.kind = SLIM_INPUT_BUTTON, .code = code, .value = down });
}

/*
 * The desktop took the keyboard (Alt+Tab, a click elsewhere): whatever is
 * held would stay held in the session, as a stuck Alt. Release it all.
 */
static void release_all(struct slim_window_backend *w)
{
	for (uint16_t code = 0; code < MAX_KEYS; code++) {
		if (w->keys_down[code / 8] & (1u << (code % 8))) {
			send_key(w, code, false);
		}
	}
	for (uint16_t code = BTN_LEFT; code <= BTN_EXTRA; code++) {
		send_button(w, code, false);
	}
}

static uint16_t evdev_button(uint8_t sdl_button)
{
	switch (sdl_button) {
	case SDL_BUTTON_LEFT:
		return BTN_LEFT;
	case SDL_BUTTON_MIDDLE:
		return BTN_MIDDLE;
	case SDL_BUTTON_RIGHT:
		return BTN_RIGHT;
	case SDL_BUTTON_X1:
		return BTN_SIDE;
	case SDL_BUTTON_X2:
		return BTN_EXTRA;
	default:
		return 0;
	}
}

static void handle_motion(struct slim_window_backend *w, int x, int y)
{
	int ww, wh;
	/* mouse positions are in window coordinates, which HiDPI makes unlike output pixels */
	SDL_GetWindowSize(w->window, &ww, &wh);
	struct slim_letterbox lb = slim_letterbox_fit((uint32_t)ww, (uint32_t)wh,
		w->width, w->height);
	slim_letterbox_to_picture(&lb, w->width, w->height, x, y, &w->pointer_x256,
		&w->pointer_y256);
	w->local_until_us = slim_now_us() + LOCAL_POINTER_US;
	send_pointer(w, (struct slim_wire_input){
		.kind = SLIM_INPUT_MOTION_ABS, .x = w->pointer_x256, .y = w->pointer_y256 });
	if (w->cursor_image && w->cursor.visible) {
		render(w); /* the drawn pointer moves now, not a round trip later */
	}
}

static void handle_wheel(struct slim_window_backend *w, const SDL_MouseWheelEvent *e)
{
	float flip = e->direction == SDL_MOUSEWHEEL_FLIPPED ? -1.0f : 1.0f;
	/* SDL: +y is away from the user; Wayland: positive vertical scrolls down */
	float dy = -e->preciseY * flip, dx = e->preciseX * flip;
	int steps_y = -e->y * (int)flip, steps_x = e->x * (int)flip;
	if (dy != 0.0f) {
		send_pointer(w, (struct slim_wire_input){ .kind = SLIM_INPUT_AXIS, .code = 0,
			.value = (int32_t)(dy * WHEEL_STEP * 256.0f), .x = steps_y });
	}
	if (dx != 0.0f) {
		send_pointer(w, (struct slim_wire_input){ .kind = SLIM_INPUT_AXIS, .code = 1,
			.value = (int32_t)(dx * WHEEL_STEP * 256.0f), .x = steps_x });
	}
}

/* The renderer lost its textures (a GPU reset): build them again from the shadow framebuffer. */
static void restore_textures(struct slim_window_backend *w)
{
	if (w->cursor_tex) {
		SDL_DestroyTexture(w->cursor_tex);
		w->cursor_tex = NULL;
	}
	if (!create_picture(w)) {
		slim_log(SLIM_LOG_ERROR, "window: texture lost: %s", SDL_GetError());
		return;
	}
	if (w->fb && w->fb->width == w->width && w->fb->height == w->height) {
		upload_rect(w, w->fb, (struct slim_rect){ 0, 0, (uint16_t)w->width,
			(uint16_t)w->height });
	}
	if (w->cursor_image) {
		upload_cursor(w);
	}
}

static void handle_window_event(struct slim_window_backend *w, const SDL_WindowEvent *e)
{
	switch (e->event) {
	case SDL_WINDOWEVENT_CLOSE:
		w->closed = true;
		break;
	case SDL_WINDOWEVENT_FOCUS_LOST:
		release_all(w);
		break;
	case SDL_WINDOWEVENT_SIZE_CHANGED:
	case SDL_WINDOWEVENT_EXPOSED:
	case SDL_WINDOWEVENT_RESTORED:
	case SDL_WINDOWEVENT_SHOWN:
		render(w);
		break;
	default:
		break;
	}
}

static void handle_event(struct slim_window_backend *w, const SDL_Event *ev)
{
	switch (ev->type) {
	case SDL_QUIT:
		w->closed = true;
		break;
	case SDL_WINDOWEVENT:
		handle_window_event(w, &ev->window);
		break;
	case SDL_KEYDOWN:
	case SDL_KEYUP:
		/* The session's clients repeat held keys themselves: no repeats on the wire. */
		if (!ev->key.repeat) {
			send_key(w, slim_evdev_from_sdl_scancode(ev->key.keysym.scancode),
				ev->type == SDL_KEYDOWN);
		}
		break;
	case SDL_MOUSEMOTION:
		handle_motion(w, ev->motion.x, ev->motion.y);
		break;
	case SDL_MOUSEBUTTONDOWN:
	case SDL_MOUSEBUTTONUP: {
		uint16_t code = evdev_button(ev->button.button);
		if (code) {
			send_button(w, code, ev->type == SDL_MOUSEBUTTONDOWN);
		}
		break;
	}
	case SDL_MOUSEWHEEL:
		handle_wheel(w, &ev->wheel);
		break;
	case SDL_RENDER_DEVICE_RESET:
		restore_textures(w);
		render(w);
		break;
	default:
		break;
	}
}


static int window_fd(struct slim_console_backend *b)
{
	return window_from(b)->fd;
}

static void window_dispatch(struct slim_console_backend *b)
{
	struct slim_window_backend *w = window_from(b);
	SDL_Event ev;
	/* SDL_PollEvent pumps: it reads the display socket and the display library's queue */
	while (!w->closed && SDL_PollEvent(&ev)) {
		handle_event(w, &ev);
		if (w->closed && w->sink.closed) {
			w->sink.closed(w->sink.data);
		}
	}
}
