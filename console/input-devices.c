#include <errno.h>
#include <libinput.h>
#include <libudev.h>
#include <linux/input-event-codes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "input-devices.h"
#include "slim-log.h"

/* Events collected in one dispatch before they go out; well inside any MTU. */
#define BATCH 32
/* Devices open at once (keyboards, mice, the odd tablet). */
#define MAX_DEVICES 64
#define FIXED(v) ((int32_t)((v) * 256.0 + ((v) < 0 ? -0.5 : 0.5)))

struct slim_input {
	struct slim_seat *seat;
	struct udev *udev;
	struct libinput *li;
	uint32_t width, height;
	const struct slim_input_listener *listener;
	void *listener_data;
	bool suspended;

	/* fds libinput opened through the seat, and the seat's ids for them */
	struct {
		int fd, id;
	} devices[MAX_DEVICES];

	/*
	 * What the server was told is held down, so that a VT switch (which
	 * takes the devices away mid-press) can release it: a modifier the
	 * server believes held would change every key after.
	 */
	uint8_t keys_down[(KEY_MAX + 1) / 8];
	uint32_t ctrl, alt;
	/* the function key of a Ctrl+Alt+Fn VT switch: its release is not sent either */
	uint32_t swallowed_key;

	struct slim_wire_input batch[BATCH];
	size_t n_batch;
};

/* -- sending */

static void flush(struct slim_input *input)
{
	if (input->n_batch > 0 && input->listener->send) {
		input->listener->send(input->listener_data, input->batch, input->n_batch);
	}
	input->n_batch = 0;
}

static void push(struct slim_input *input, struct slim_wire_input ev)
{
	if (input->n_batch == BATCH) {
		flush(input);
	}
	input->batch[input->n_batch++] = ev;
}

/* A pointer event is one wl_pointer frame on the server. */
static void push_pointer(struct slim_input *input, struct slim_wire_input ev)
{
	if (input->n_batch + 2 > BATCH) {
		flush(input);
	}
	push(input, ev);
	push(input, (struct slim_wire_input){ .kind = SLIM_INPUT_FRAME, .time_ms = ev.time_ms });
}

static bool key_is_down(const struct slim_input *input, uint32_t key)
{
	return key <= KEY_MAX && (input->keys_down[key / 8] & (1u << (key % 8)));
}

static void set_key_down(struct slim_input *input, uint32_t key, bool down)
{
	if (key > KEY_MAX) {
		return;
	}
	if (down) {
		input->keys_down[key / 8] |= (uint8_t)(1u << (key % 8));
	} else {
		input->keys_down[key / 8] &= (uint8_t)~(1u << (key % 8));
	}
}

/* Tells the server every key and button it thinks is held went up. */
static void release_all(struct slim_input *input)
{
	for (uint32_t key = 0; key <= KEY_MAX; key++) {
		if (!key_is_down(input, key)) {
			continue;
		}
		set_key_down(input, key, false);
		struct slim_wire_input ev = {
			.kind = key >= BTN_MISC && key < KEY_OK ? SLIM_INPUT_BUTTON : SLIM_INPUT_KEY,
			.code = (uint16_t)key,
			.value = 0,
		};
		if (ev.kind == SLIM_INPUT_BUTTON) {
			push_pointer(input, ev);
		} else {
			push(input, ev);
		}
	}
	input->ctrl = input->alt = 0;
	input->swallowed_key = 0;
	flush(input);
}

/* -- events */

static uint32_t f_key_vt(uint32_t key)
{
	if (key >= KEY_F1 && key <= KEY_F10) {
		return key - KEY_F1 + 1;
	}
	if (key == KEY_F11 || key == KEY_F12) {
		return key - KEY_F11 + 11;
	}
	return 0;
}

static void handle_key(struct slim_input *input, struct libinput_event_keyboard *kev)
{
	uint32_t key = libinput_event_keyboard_get_key(kev);
	bool down = libinput_event_keyboard_get_key_state(kev) == LIBINPUT_KEY_STATE_PRESSED;
	/* two keyboards: one press and one release per key on the seat, as the server's seat */
	uint32_t count = libinput_event_keyboard_get_seat_key_count(kev);
	if ((down && count != 1) || (!down && count != 0)) {
		return;
	}
	uint32_t *mod = key == KEY_LEFTCTRL || key == KEY_RIGHTCTRL ? &input->ctrl :
		key == KEY_LEFTALT || key == KEY_RIGHTALT ? &input->alt : NULL;
	if (mod && down) {
		(*mod)++;
	} else if (mod && *mod > 0) {
		(*mod)--;
	}
	/*
	 * Ctrl+Alt+Fn switches the virtual terminal, as on any Linux console:
	 * with seatd or the built-in seat nobody else would, and the console
	 * could never be left.
	 */
	uint32_t vt = f_key_vt(key);
	if (down && vt && input->ctrl && input->alt) {
		input->swallowed_key = key;
		slim_log(SLIM_LOG_INFO, "input: switching to VT %u", vt);
		slim_seat_switch_vt(input->seat, (int)vt);
		return;
	}
	if (!down && key == input->swallowed_key) {
		input->swallowed_key = 0;
		return;
	}
	set_key_down(input, key, down);
	push(input, (struct slim_wire_input){
		.kind = SLIM_INPUT_KEY,
		.code = (uint16_t)key,
		.value = down ? 1 : 0,
		.time_ms = libinput_event_keyboard_get_time(kev),
	});
}

static void handle_motion(struct slim_input *input, struct libinput_event_pointer *pev)
{
	double dx = libinput_event_pointer_get_dx(pev);
	double dy = libinput_event_pointer_get_dy(pev);
	if (input->listener->pointer) {
		input->listener->pointer(input->listener_data, dx, dy, true);
	}
	push_pointer(input, (struct slim_wire_input){
		.kind = SLIM_INPUT_MOTION_REL,
		.x = FIXED(dx),
		.y = FIXED(dy),
		.time_ms = libinput_event_pointer_get_time(pev),
	});
}

static void handle_motion_abs(struct slim_input *input, struct libinput_event_pointer *pev)
{
	double x = libinput_event_pointer_get_absolute_x_transformed(pev, input->width);
	double y = libinput_event_pointer_get_absolute_y_transformed(pev, input->height);
	/* on the screen: [0, width) x [0, height), as the wire says */
	double max_x = input->width - 1.0 / 256, max_y = input->height - 1.0 / 256;
	x = x < 0 ? 0 : x > max_x ? max_x : x;
	y = y < 0 ? 0 : y > max_y ? max_y : y;
	if (input->listener->pointer) {
		input->listener->pointer(input->listener_data, x, y, false);
	}
	push_pointer(input, (struct slim_wire_input){
		.kind = SLIM_INPUT_MOTION_ABS,
		.x = (int32_t)(x * 256.0),
		.y = (int32_t)(y * 256.0),
		.time_ms = libinput_event_pointer_get_time(pev),
	});
}

static void handle_button(struct slim_input *input, struct libinput_event_pointer *pev)
{
	uint32_t button = libinput_event_pointer_get_button(pev);
	bool down = libinput_event_pointer_get_button_state(pev) == LIBINPUT_BUTTON_STATE_PRESSED;
	uint32_t count = libinput_event_pointer_get_seat_button_count(pev);
	if ((down && count != 1) || (!down && count != 0)) {
		return;
	}
	set_key_down(input, button, down);
	push_pointer(input, (struct slim_wire_input){
		.kind = SLIM_INPUT_BUTTON,
		.code = (uint16_t)button,
		.value = down ? 1 : 0,
		.time_ms = libinput_event_pointer_get_time(pev),
	});
}

/*
 * Wheels, fingers on a touchpad and continuous sources (trackpoints),
 * in wl_pointer axis units; only a wheel has discrete steps.
 */
static void handle_scroll(struct slim_input *input, struct libinput_event_pointer *pev,
		bool wheel)
{
	static const enum libinput_pointer_axis axes[] = {
		LIBINPUT_POINTER_AXIS_SCROLL_VERTICAL,
		LIBINPUT_POINTER_AXIS_SCROLL_HORIZONTAL,
	};
	for (size_t i = 0; i < 2; i++) {
		if (!libinput_event_pointer_has_axis(pev, axes[i])) {
			continue;
		}
		double value = libinput_event_pointer_get_scroll_value(pev, axes[i]);
		int32_t steps = wheel ?
			(int32_t)(libinput_event_pointer_get_scroll_value_v120(pev, axes[i]) / 120) : 0;
		if (value == 0 && steps == 0) {
			continue; /* a finger lifted: the end of a scroll, nothing to move */
		}
		push_pointer(input, (struct slim_wire_input){
			.kind = SLIM_INPUT_AXIS,
			.code = axes[i] == LIBINPUT_POINTER_AXIS_SCROLL_VERTICAL ? 0 : 1,
			.value = FIXED(value),
			.x = steps,
			.time_ms = libinput_event_pointer_get_time(pev),
		});
	}
}

/* Touchpads as people expect them: tap to click, two-finger natural scrolling. */
static void configure_device(struct libinput_device *dev)
{
	if (libinput_device_config_tap_get_finger_count(dev) > 0) {
		libinput_device_config_tap_set_enabled(dev, LIBINPUT_CONFIG_TAP_ENABLED);
		if (libinput_device_config_scroll_has_natural_scroll(dev)) {
			libinput_device_config_scroll_set_natural_scroll_enabled(dev, 1);
		}
		if (libinput_device_config_scroll_get_methods(dev) & LIBINPUT_CONFIG_SCROLL_2FG) {
			libinput_device_config_scroll_set_method(dev, LIBINPUT_CONFIG_SCROLL_2FG);
		}
	}
}

static void device_added(struct slim_input *input, struct libinput_device *dev)
{
	static const struct {
		enum libinput_device_capability cap;
		const char *name;
	} caps[] = {
		{ LIBINPUT_DEVICE_CAP_KEYBOARD, "keyboard" },
		{ LIBINPUT_DEVICE_CAP_POINTER, "pointer" },
		{ LIBINPUT_DEVICE_CAP_TOUCH, "touch (not used)" },
		{ LIBINPUT_DEVICE_CAP_TABLET_TOOL, "tablet tool (not used)" },
	};
	char what[128] = "";
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		if (libinput_device_has_capability(dev, caps[i].cap)) {
			size_t len = strlen(what);
			snprintf(what + len, sizeof(what) - len, "%s%s", len ? ", " : "", caps[i].name);
		}
	}
	configure_device(dev);
	slim_log(SLIM_LOG_INFO, "input: %s (%s)", libinput_device_get_name(dev),
		what[0] ? what : "nothing we use");
}

static void handle_event(struct slim_input *input, struct libinput_event *ev)
{
	switch (libinput_event_get_type(ev)) {
	case LIBINPUT_EVENT_DEVICE_ADDED:
		device_added(input, libinput_event_get_device(ev));
		break;
	case LIBINPUT_EVENT_DEVICE_REMOVED:
		slim_log(SLIM_LOG_INFO, "input: %s removed",
			libinput_device_get_name(libinput_event_get_device(ev)));
		break;
	case LIBINPUT_EVENT_KEYBOARD_KEY:
		handle_key(input, libinput_event_get_keyboard_event(ev));
		break;
	case LIBINPUT_EVENT_POINTER_MOTION:
		handle_motion(input, libinput_event_get_pointer_event(ev));
		break;
	case LIBINPUT_EVENT_POINTER_MOTION_ABSOLUTE:
		handle_motion_abs(input, libinput_event_get_pointer_event(ev));
		break;
	case LIBINPUT_EVENT_POINTER_BUTTON:
		handle_button(input, libinput_event_get_pointer_event(ev));
		break;
	case LIBINPUT_EVENT_POINTER_SCROLL_WHEEL:
		handle_scroll(input, libinput_event_get_pointer_event(ev), true);
		break;
	case LIBINPUT_EVENT_POINTER_SCROLL_FINGER:
	case LIBINPUT_EVENT_POINTER_SCROLL_CONTINUOUS:
		handle_scroll(input, libinput_event_get_pointer_event(ev), false);
		break;
	default:
		/* POINTER_AXIS repeats the SCROLL_* events for old clients; touch and gestures are unused */
		break;
	}
}

/* -- devices through the seat */

static int open_restricted(const char *path, int flags, void *data)
{
	struct slim_input *input = data;
	size_t slot = 0;
	while (slot < MAX_DEVICES && input->devices[slot].fd >= 0) {
		slot++;
	}
	if (slot == MAX_DEVICES) {
		return -EMFILE;
	}
	int id;
	int fd = slim_seat_open_device(input->seat, path, &id);
	if (fd < 0) {
		int err = errno ? errno : EACCES;
		slim_log(SLIM_LOG_DEBUG, "input: cannot open %s: %s", path, strerror(err));
		return -err;
	}
	input->devices[slot].fd = fd;
	input->devices[slot].id = id;
	return fd;
}

static void close_restricted(int fd, void *data)
{
	struct slim_input *input = data;
	for (size_t i = 0; i < MAX_DEVICES; i++) {
		if (input->devices[i].fd == fd) {
			slim_seat_close_device(input->seat, input->devices[i].id);
			input->devices[i].fd = -1;
			break;
		}
	}
	close(fd);
}

static const struct libinput_interface libinput_impl = {
	.open_restricted = open_restricted,
	.close_restricted = close_restricted,
};

static void seat_enable(void *data)
{
	struct slim_input *input = data;
	if (input->suspended) {
		libinput_resume(input->li);
		input->suspended = false;
	}
}

static void seat_disable(void *data)
{
	struct slim_input *input = data;
	release_all(input);
	if (!input->suspended) {
		libinput_suspend(input->li);
		input->suspended = true;
	}
}

static const struct slim_seat_listener seat_listener = {
	.enable = seat_enable,
	.disable = seat_disable,
};

__attribute__((format(printf, 3, 0)))
static void libinput_log(struct libinput *li, enum libinput_log_priority priority,
		const char *fmt, va_list args)
{
	char line[512];
	vsnprintf(line, sizeof(line), fmt, args);
	size_t len = strlen(line);
	if (len > 0 && line[len - 1] == '\n') {
		line[len - 1] = '\0';
	}
	slim_log(priority >= LIBINPUT_LOG_PRIORITY_ERROR ? SLIM_LOG_ERROR : SLIM_LOG_DEBUG,
		"libinput: %s", line);
}

struct slim_input *slim_input_create(struct slim_seat *seat, uint32_t width, uint32_t height,
		const struct slim_input_listener *listener, void *data, char *err, size_t err_len)
{
	struct slim_input *input = calloc(1, sizeof(*input));
	if (!input) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	input->seat = seat;
	input->width = width;
	input->height = height;
	input->listener = listener;
	input->listener_data = data;
	for (size_t i = 0; i < MAX_DEVICES; i++) {
		input->devices[i].fd = -1;
	}
	input->udev = udev_new();
	if (!input->udev) {
		snprintf(err, err_len, "cannot start udev: %s", strerror(errno));
		goto fail;
	}
	input->li = libinput_udev_create_context(&libinput_impl, input, input->udev);
	if (!input->li) {
		snprintf(err, err_len, "cannot create a libinput context");
		goto fail;
	}
	libinput_log_set_handler(input->li, libinput_log);
	libinput_log_set_priority(input->li, LIBINPUT_LOG_PRIORITY_INFO);
	if (libinput_udev_assign_seat(input->li, slim_seat_name(seat)) != 0) {
		snprintf(err, err_len, "libinput cannot take seat %s", slim_seat_name(seat));
		goto fail;
	}
	if (!slim_seat_add_listener(seat, &seat_listener, input)) {
		snprintf(err, err_len, "too many seat listeners");
		goto fail;
	}
	/* The devices there now are announced at once: say so if there are none. */
	libinput_dispatch(input->li);
	size_t added = 0;
	struct libinput_event *ev;
	while ((ev = libinput_get_event(input->li))) {
		added += libinput_event_get_type(ev) == LIBINPUT_EVENT_DEVICE_ADDED;
		handle_event(input, ev);
		libinput_event_destroy(ev);
	}
	flush(input);
	if (added == 0) {
		slim_log(SLIM_LOG_ERROR, "input: no input devices on %s yet (is udev running?)",
			slim_seat_name(seat));
	}
	return input;
fail:
	slim_input_destroy(input);
	return NULL;
}

void slim_input_set_size(struct slim_input *input, uint32_t width, uint32_t height)
{
	input->width = width;
	input->height = height;
}

void slim_input_destroy(struct slim_input *input)
{
	if (!input) {
		return;
	}
	slim_seat_remove_listener(input->seat, input);
	if (input->li) {
		libinput_unref(input->li);
	}
	if (input->udev) {
		udev_unref(input->udev);
	}
	free(input);
}

int slim_input_fd(const struct slim_input *input)
{
	return libinput_get_fd(input->li);
}

void slim_input_dispatch(struct slim_input *input)
{
	if (libinput_dispatch(input->li) != 0) {
		slim_log(SLIM_LOG_DEBUG, "input: libinput_dispatch: %s", strerror(errno));
	}
	struct libinput_event *ev;
	while ((ev = libinput_get_event(input->li))) {
		handle_event(input, ev);
		libinput_event_destroy(ev);
	}
	flush(input);
}
