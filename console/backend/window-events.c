/*
 * --output window's input: SDL's keyboard, mouse and window events as
 * the session's INPUT events. A pointer over a head's window is at that
 * head's place on the console's screen.
 */
#include <SDL.h>
#include <stdio.h>
#include <string.h>
#include "slim-clock.h"
#include "slim-log.h"
#include "window-input.h"
#include "window-internal.h"

/* Scroll units a wheel notch moves, as libinput reports a wheel click. */
#define WHEEL_STEP 15.0

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

static void handle_motion(struct slim_window_backend *w, const SDL_MouseMotionEvent *e)
{
	struct window_head *h = window_head_of(w, e->windowID);
	if (!h) {
		return;
	}
	int ww, wh;
	/* mouse positions are in window coordinates, which HiDPI makes unlike output pixels */
	SDL_GetWindowSize(h->window, &ww, &wh);
	struct slim_letterbox lb = slim_letterbox_fit((uint32_t)ww, (uint32_t)wh,
		h->desc.width, h->desc.height);
	int32_t x256, y256;
	slim_letterbox_to_picture(&lb, h->desc.width, h->desc.height, e->x, e->y, &x256, &y256);
	/* the head's place on the screen: where the session has this point */
	w->pointer_x256 = x256 + (int32_t)h->desc.x * 256;
	w->pointer_y256 = y256 + (int32_t)h->desc.y * 256;
	w->local_until_us = slim_now_us() + LOCAL_POINTER_US;
	send_pointer(w, (struct slim_wire_input){
		.kind = SLIM_INPUT_MOTION_ABS, .x = w->pointer_x256, .y = w->pointer_y256 });
	if (w->cursor_image && w->cursor.visible) {
		window_render(w); /* the drawn pointer moves now, not a round trip later */
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
		window_render(w);
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
		handle_motion(w, &ev->motion);
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
		window_restore_textures(w);
		window_render(w);
		break;
	default:
		break;
	}
}

int window_fd(struct slim_console_backend *b)
{
	return window_from(b)->fd;
}

void window_dispatch(struct slim_console_backend *b)
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
