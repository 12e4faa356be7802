/*
 * Virtual keyboards and pointers (wtype, on-screen keyboards, automation),
 * for the session's own user only: the Wayland socket is in the user's
 * runtime directory, and a client of another uid that got in anyway is
 * refused. A virtual pointer's events go the way the console's do; a
 * virtual keyboard brings its own keymap, so its keys go to the seat as
 * its own keyboard (console-input.c takes the seat back for the console's keys).
 */
#include <stdlib.h>
#include <unistd.h>
#include <wlr/types/wlr_keyboard.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_pointer.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_virtual_keyboard_v1.h>
#include <wlr/types/wlr_virtual_pointer_v1.h>
#include <wlr/util/log.h>
#include "shell-internal.h"
#include "slim-alloc.h"

struct slim_virtual_input {
	struct slim_shell *shell;
	struct wl_listener new_keyboard, new_pointer;
};

/* One device: its events, and its end. */
struct device {
	struct slim_shell *shell;
	struct wlr_input_device *dev;
	struct wl_listener a, b, c, d, e, destroy;
};

static bool own_user(struct wl_resource *resource)
{
	uid_t uid;
	wl_client_get_credentials(wl_resource_get_client(resource), NULL, &uid, NULL);
	return uid == getuid();
}

static void device_free(struct device *d)
{
	struct wl_listener *all[] = { &d->a, &d->b, &d->c, &d->d, &d->e, &d->destroy };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		wl_list_remove(&all[i]->link);
	}
	free(d);
}

static struct device *device_new(struct slim_shell *shell, struct wlr_input_device *dev)
{
	struct device *d = calloc(1, sizeof(*d));
	if (!d) {
		wlr_log(WLR_ERROR, "out of memory");
		return NULL;
	}
	d->shell = shell;
	d->dev = dev;
	struct wl_listener *all[] = { &d->a, &d->b, &d->c, &d->d, &d->e, &d->destroy };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		wl_list_init(&all[i]->link);
	}
	return d;
}

static void hook(struct wl_listener *l, struct wl_signal *s, wl_notify_func_t f)
{
	l->notify = f;
	wl_signal_add(s, l);
}

static void handle_device_destroy(struct wl_listener *listener, void *data)
{
	struct device *d = wl_container_of(listener, d, destroy);
	if (d->shell->seat->keyboard_state.keyboard == d->dev->keyboard) {
		wlr_seat_set_keyboard(d->shell->seat, console_input_keyboard(d->shell->input));
	}
	device_free(d);
}

/* --- keyboards */

static void handle_vk_key(struct wl_listener *listener, void *data)
{
	struct device *d = wl_container_of(listener, d, a);
	struct wlr_event_keyboard_key *event = data;
	wlr_seat_set_keyboard(d->shell->seat, d->dev);
	wlr_seat_keyboard_notify_key(d->shell->seat, event->time_msec, event->keycode,
		event->state);
}

static void handle_vk_modifiers(struct wl_listener *listener, void *data)
{
	struct device *d = wl_container_of(listener, d, b);
	wlr_seat_set_keyboard(d->shell->seat, d->dev);
	wlr_seat_keyboard_notify_modifiers(d->shell->seat, &d->dev->keyboard->modifiers);
}

/*
 * wlroots 0.15 allocates a virtual keyboard's wlr_keyboard on its own and
 * gives it a destroy that frees nothing: each wtype run leaked 352 bytes.
 * wlr_keyboard_destroy calls impl->destroy last, when nothing reads the
 * keyboard any more: freeing it there is safe.
 */
static void free_keyboard(struct wlr_keyboard *keyboard)
{
	free(keyboard);
}

static const struct wlr_keyboard_impl freeing_keyboard_impl = { .destroy = free_keyboard };

static void handle_new_keyboard(struct wl_listener *listener, void *data)
{
	struct slim_virtual_input *vi = wl_container_of(listener, vi, new_keyboard);
	struct wlr_virtual_keyboard_v1 *vk = data;
	vk->input_device.keyboard->impl = &freeing_keyboard_impl;
	if (!own_user(vk->resource)) {
		wlr_log(WLR_ERROR, "virtual keyboard refused: not this session's user");
		wl_resource_post_error(vk->resource, 0, "not this session's user");
		return;
	}
	struct device *d = device_new(vi->shell, &vk->input_device);
	if (!d) {
		return;
	}
	hook(&d->a, &vk->input_device.keyboard->events.key, handle_vk_key);
	hook(&d->b, &vk->input_device.keyboard->events.modifiers, handle_vk_modifiers);
	hook(&d->destroy, &vk->input_device.events.destroy, handle_device_destroy);
}

/* --- pointers: as if the console sent the events */

static void console_event(struct device *d, struct slim_wire_input ev)
{
	slim_shell_console_input(d->shell, &ev);
}

static void handle_vp_motion(struct wl_listener *listener, void *data)
{
	struct device *d = wl_container_of(listener, d, a);
	struct wlr_event_pointer_motion *e = data;
	console_event(d, (struct slim_wire_input){ .kind = SLIM_INPUT_MOTION_REL,
		.x = (int32_t)(e->delta_x * 256), .y = (int32_t)(e->delta_y * 256) });
}

static void handle_vp_motion_absolute(struct wl_listener *listener, void *data)
{
	struct device *d = wl_container_of(listener, d, b);
	struct wlr_event_pointer_motion_absolute *e = data;
	/* x / x_extent, both the client's: any fraction, which would not fit an int32 */
	double x = e->x < 0 ? 0 : e->x > 1 ? 1 : e->x, y = e->y < 0 ? 0 : e->y > 1 ? 1 : e->y;
	/* as the console would say it: a point of its whole screen */
	uint32_t width = 0, height = 0;
	for (size_t i = 0; i < d->shell->n_heads; i++) {
		const struct slim_screen_map *m = &d->shell->heads[i].map;
		width = (uint32_t)m->x + m->width > width ? (uint32_t)m->x + m->width : width;
		height = (uint32_t)m->y + m->height > height ? (uint32_t)m->y + m->height : height;
	}
	console_event(d, (struct slim_wire_input){ .kind = SLIM_INPUT_MOTION_ABS,
		.x = (int32_t)(x * width * 256), .y = (int32_t)(y * height * 256) });
}

static void handle_vp_button(struct wl_listener *listener, void *data)
{
	struct device *d = wl_container_of(listener, d, c);
	struct wlr_event_pointer_button *e = data;
	console_event(d, (struct slim_wire_input){ .kind = SLIM_INPUT_BUTTON,
		.code = (uint16_t)e->button, .value = e->state == WLR_BUTTON_PRESSED });
}

static void handle_vp_axis(struct wl_listener *listener, void *data)
{
	struct device *d = wl_container_of(listener, d, d);
	struct wlr_event_pointer_axis *e = data;
	console_event(d, (struct slim_wire_input){ .kind = SLIM_INPUT_AXIS,
		.code = e->orientation == WLR_AXIS_ORIENTATION_HORIZONTAL,
		.value = (int32_t)(e->delta * 256), .x = e->delta_discrete });
}

static void handle_vp_frame(struct wl_listener *listener, void *data)
{
	struct device *d = wl_container_of(listener, d, e);
	console_event(d, (struct slim_wire_input){ .kind = SLIM_INPUT_FRAME });
}

static void handle_new_pointer(struct wl_listener *listener, void *data)
{
	struct slim_virtual_input *vi = wl_container_of(listener, vi, new_pointer);
	struct wlr_virtual_pointer_v1_new_pointer_event *event = data;
	struct wlr_virtual_pointer_v1 *vp = event->new_pointer;
	if (!own_user(vp->resource)) {
		wlr_log(WLR_ERROR, "virtual pointer refused: not this session's user");
		wl_resource_post_error(vp->resource, 0, "not this session's user");
		return;
	}
	struct device *d = device_new(vi->shell, &vp->input_device);
	if (!d) {
		return;
	}
	struct wlr_pointer *p = vp->input_device.pointer;
	hook(&d->a, &p->events.motion, handle_vp_motion);
	hook(&d->b, &p->events.motion_absolute, handle_vp_motion_absolute);
	hook(&d->c, &p->events.button, handle_vp_button);
	hook(&d->d, &p->events.axis, handle_vp_axis);
	hook(&d->e, &p->events.frame, handle_vp_frame);
	hook(&d->destroy, &vp->input_device.events.destroy, handle_device_destroy);
}

struct slim_virtual_input *virtual_input_create(struct slim_shell *shell)
{
	struct slim_virtual_input *vi = slim_znew(struct slim_virtual_input);
	struct wlr_virtual_keyboard_manager_v1 *kb =
		wlr_virtual_keyboard_manager_v1_create(shell->display);
	struct wlr_virtual_pointer_manager_v1 *ptr = kb ?
		wlr_virtual_pointer_manager_v1_create(shell->display) : NULL;
	if (!ptr) {
		free(vi);
		return NULL;
	}
	vi->shell = shell;
	hook(&vi->new_keyboard, &kb->events.new_virtual_keyboard, handle_new_keyboard);
	hook(&vi->new_pointer, &ptr->events.new_virtual_pointer, handle_new_pointer);
	return vi;
}

void virtual_input_destroy(struct slim_virtual_input *vi)
{
	if (!vi) {
		return;
	}
	wl_list_remove(&vi->new_keyboard.link);
	wl_list_remove(&vi->new_pointer.link);
	free(vi);
}
