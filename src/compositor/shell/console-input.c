/*
 * Input comes from the console as evdev codes and pointer positions. Keys
 * go through a headless wlr_keyboard, so that xkbcommon keeps the state
 * (the keymap the console or the user says, keymap.c) and the focused
 * client gets the keymap; the pointer drives the seat directly, since
 * there is no pointer device on the server to speak of.
 */
#include <linux/input-event-codes.h>
#include <stdlib.h>
#include <time.h>
#include <wlr/backend/headless.h>
#include <wlr/interfaces/wlr_keyboard.h>
#include <wlr/types/wlr_input_device.h>
#include <wlr/types/wlr_keyboard.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/util/edges.h>
#include <wlr/util/log.h>
#include <xkbcommon/xkbcommon.h>
#include "shell-internal.h"
#include "slim-alloc.h"

/* The modifier that turns a drag anywhere in a window into a move or resize. */
#define GRAB_MODIFIER WLR_MODIFIER_ALT

static uint32_t now_msec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* Compositor key bindings; true when the key was one. */
static bool handle_binding(struct slim_shell *shell, xkb_keysym_t sym, uint32_t mods)
{
	if (protocols_shortcuts_inhibited(shell->protocols)) {
		return false;
	}
	if ((mods & WLR_MODIFIER_ALT) && sym == XKB_KEY_Tab) {
		view_cycle(shell);
		return true;
	}
	return false;
}

/* The console's keyboard: a headless one, which keeps the xkb state. */
struct slim_console_input {
	struct slim_shell *shell;
	struct wlr_input_device *keyboard;
	struct slim_keymap *keymap;
	struct wl_listener key, modifiers;
};

static void handle_key(struct wl_listener *listener, void *data)
{
	struct slim_console_input *input = wl_container_of(listener, input, key);
	struct slim_shell *shell = input->shell;
	struct wlr_event_keyboard_key *event = data;
	struct wlr_keyboard *kb = input->keyboard->keyboard;
	if (event->state == WL_KEYBOARD_KEY_STATE_PRESSED) {
		const xkb_keysym_t *syms;
		int n = xkb_state_key_get_syms(kb->xkb_state, event->keycode + 8, &syms);
		uint32_t mods = wlr_keyboard_get_modifiers(kb);
		for (int i = 0; i < n; i++) {
			if (handle_binding(shell, syms[i], mods)) {
				return;
			}
		}
	}
	if (text_inputs_key(shell->text_inputs, event->time_msec, event->keycode,
			event->state)) {
		return;
	}
	/* a virtual keyboard (virtual-input.c) may have had the seat */
	wlr_seat_set_keyboard(shell->seat, input->keyboard);
	wlr_seat_keyboard_notify_key(shell->seat, event->time_msec, event->keycode,
		event->state);
}

static void handle_modifiers(struct wl_listener *listener, void *data)
{
	struct slim_console_input *input = wl_container_of(listener, input, modifiers);
	struct slim_shell *shell = input->shell;
	struct wlr_keyboard *kb = input->keyboard->keyboard;
	if (text_inputs_modifiers(shell->text_inputs, kb)) {
		return;
	}
	wlr_seat_set_keyboard(shell->seat, input->keyboard);
	wlr_seat_keyboard_notify_modifiers(shell->seat, &kb->modifiers);
}

struct slim_console_input *console_input_create(struct slim_shell *shell,
		struct wlr_backend *backend)
{
	struct slim_console_input *input = slim_znew(struct slim_console_input);
	input->shell = shell;
	input->keyboard = wlr_headless_add_input_device(backend, WLR_INPUT_DEVICE_KEYBOARD);
	if (!input->keyboard) {
		wlr_log(WLR_ERROR, "cannot create the keyboard");
		free(input);
		return NULL;
	}
	struct wlr_keyboard *kb = input->keyboard->keyboard;
	input->keymap = keymap_create(wl_display_get_event_loop(shell->display), kb);
	if (!input->keymap) {
		free(input);
		return NULL;
	}
	wlr_keyboard_set_repeat_info(kb, 25, 600);
	input->key.notify = handle_key;
	wl_signal_add(&kb->events.key, &input->key);
	input->modifiers.notify = handle_modifiers;
	wl_signal_add(&kb->events.modifiers, &input->modifiers);
	wlr_seat_set_keyboard(shell->seat, input->keyboard);
	wlr_seat_set_capabilities(shell->seat,
		WL_SEAT_CAPABILITY_KEYBOARD | WL_SEAT_CAPABILITY_POINTER);
	return input;
}

/* The keyboard itself is the backend's: it goes with it. */
void console_input_destroy(struct slim_console_input *input)
{
	if (!input) {
		return;
	}
	wl_list_remove(&input->key.link);
	wl_list_remove(&input->modifiers.link);
	keymap_destroy(input->keymap);
	free(input);
}

struct wlr_input_device *console_input_keyboard(const struct slim_console_input *input)
{
	return input->keyboard;
}

void input_pointer_refresh(struct slim_shell *shell, uint32_t time_msec)
{
	time_msec = time_msec ? time_msec : now_msec();
	struct wlr_surface *surface = NULL;
	double sx, sy;
	view_at(shell, shell->pointer_x, shell->pointer_y, &surface, &sx, &sy);
	if (surface) {
		wlr_seat_pointer_notify_enter(shell->seat, surface, sx, sy);
		wlr_seat_pointer_notify_motion(shell->seat, time_msec, sx, sy);
	} else {
		wlr_seat_pointer_clear_focus(shell->seat);
		shell->handler->cursor_theme(shell->data, "left_ptr");
	}
	constraints_pointer_focus(shell->constraints, surface);
}

/* Keeps the pointer on a head: the nearest one, if it left them all. */
static void clamp_to_heads(struct slim_shell *shell)
{
	struct slim_shell_head *head = shell_head_at(shell, shell->pointer_x, shell->pointer_y);
	if (!head) {
		return;
	}
	const struct wlr_box *b = &head->box;
	double maxx = b->x + (b->width ? b->width - 1 : 0);
	double maxy = b->y + (b->height ? b->height - 1 : 0);
	double x = shell->pointer_x, y = shell->pointer_y;
	shell->pointer_x = x < b->x ? b->x : x > maxx ? maxx : x;
	shell->pointer_y = y < b->y ? b->y : y > maxy ? maxy : y;
}

/* A point of the console's screen (device pixels) in the layout. */
static void screen_to_layout(struct slim_shell *shell, double sx, double sy, double *x,
		double *y)
{
	struct slim_screen_map maps[SLIM_MAX_HEADS];
	for (size_t i = 0; i < shell->n_heads; i++) {
		maps[i] = shell->heads[i].map;
	}
	const struct slim_screen_map *m = slim_screen_map_at(maps, shell->n_heads, sx, sy);
	if (m) {
		slim_screen_map_to_layout(m, sx, sy, x, y);
	} else {
		*x = sx;
		*y = sy;
	}
}

static void pointer_moved(struct slim_shell *shell, uint32_t time_msec)
{
	clamp_to_heads(shell);
	shell->handler->pointer_moved(shell->data);
	if (!grab_motion(shell)) {
		input_pointer_refresh(shell, time_msec);
	}
}

static void pointer_button(struct slim_shell *shell, uint32_t button, bool pressed,
		uint32_t time_msec)
{
	struct wlr_surface *surface = NULL;
	double sx, sy;
	struct slim_view *view = view_at(shell, shell->pointer_x, shell->pointer_y,
		&surface, &sx, &sy);
	if (!pressed && shell->grab.mode != SLIM_GRAB_NONE) {
		grab_end(shell);
		input_pointer_refresh(shell, time_msec);
		return;
	}
	if (pressed && view && !surface) {
		/* its title bar: drag to move, or the button on it to close */
		view_focus(view, view->impl->surface(view));
		if (button == BTN_LEFT) {
			view_titlebar_click(view, shell->pointer_x - view->x);
		}
		return;
	}
	if (pressed && view) {
		view_focus(view, surface);
		uint32_t mods = wlr_keyboard_get_modifiers(shell->input->keyboard->keyboard);
		if ((mods & GRAB_MODIFIER) && (button == BTN_LEFT || button == BTN_RIGHT)) {
			/* Resize from the corner nearest to the pointer. */
			struct wlr_box geo = view_geometry(view);
			uint32_t edges = (shell->pointer_x < view->x + geo.width / 2 ?
				WLR_EDGE_LEFT : WLR_EDGE_RIGHT) |
				(shell->pointer_y < view->y + geo.height / 2 ? WLR_EDGE_TOP : WLR_EDGE_BOTTOM);
			grab_begin(view, button == BTN_LEFT ? SLIM_GRAB_MOVE : SLIM_GRAB_RESIZE, edges);
			return;
		}
	}
	wlr_seat_pointer_notify_button(shell->seat, time_msec, button,
		pressed ? WLR_BUTTON_PRESSED : WLR_BUTTON_RELEASED);
}

void slim_shell_console_attached(struct slim_shell *shell, const char *console_id,
		const struct slim_desk *desk)
{
	keymap_attached(shell->input->keymap, console_id, desk);
}

void slim_shell_console_input(struct slim_shell *shell, const struct slim_wire_input *ev)
{
	uint32_t t = now_msec();
	protocols_activity(shell->protocols);
	switch (ev->kind) {
	case SLIM_INPUT_KEY:
		if (ev->value == 0 || ev->value == 1) {
			/* Repeats (2) are the client's business, from the keymap's repeat info. */
			struct wlr_event_keyboard_key key = {
				.time_msec = t, .keycode = ev->code, .update_state = true,
				.state = ev->value ? WL_KEYBOARD_KEY_STATE_PRESSED :
					WL_KEYBOARD_KEY_STATE_RELEASED,
			};
			if (!keymap_hold_key(shell->input->keymap, &key)) {
				wlr_keyboard_notify_key(shell->input->keyboard->keyboard, &key);
			}
		}
		break;
	case SLIM_INPUT_MOTION_ABS:
	case SLIM_INPUT_MOTION_REL: {
		double x = shell->pointer_x + ev->x / 256.0;
		double y = shell->pointer_y + ev->y / 256.0;
		if (ev->kind == SLIM_INPUT_MOTION_ABS) {
			screen_to_layout(shell, ev->x / 256.0, ev->y / 256.0, &x, &y);
		}
		constraints_move(shell->constraints, &x, &y, x - shell->pointer_x,
			y - shell->pointer_y);
		shell->pointer_x = x;
		shell->pointer_y = y;
		pointer_moved(shell, t);
		break;
	}
	case SLIM_INPUT_BUTTON:
		pointer_button(shell, ev->code, ev->value != 0, t);
		break;
	case SLIM_INPUT_AXIS:
		wlr_seat_pointer_notify_axis(shell->seat, t,
			ev->code ? WLR_AXIS_ORIENTATION_HORIZONTAL : WLR_AXIS_ORIENTATION_VERTICAL,
			ev->value / 256.0, ev->x, WLR_AXIS_SOURCE_WHEEL);
		break;
	case SLIM_INPUT_FRAME:
		wlr_seat_pointer_notify_frame(shell->seat);
		break;
	default:
		break; /* a newer console's event: nothing to do with it */
	}
}
