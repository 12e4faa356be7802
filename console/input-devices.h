/*
 * --input libinput: keyboards, mice, touchpads and tablets of the
 * console's seat, as INPUT events for the server. Devices are found
 * through udev and opened through the seat (so a VT switch takes them
 * away and gives them back). Key codes are evdev's, as on the wire.
 *
 * The pointer is the console's to draw: every motion is also reported
 * to the program at once, so the cursor moves before the server has
 * heard of it; the server's CURSOR_POS corrects it after.
 */
#ifndef SLIM_CONSOLE_INPUT_H
#define SLIM_CONSOLE_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "seat.h"
#include "slim-proto.h"

struct slim_input_listener {
	/* Events for the server, a pointer event followed by its FRAME. */
	void (*send)(void *data, const struct slim_wire_input *events, size_t n);
	/* The pointer moved: by (x, y) if relative, else to (x, y), in pixels. */
	void (*pointer)(void *data, double x, double y, bool relative);
};

struct slim_input;

/*
 * Starts libinput on the seat's devices; `width` x `height` is the screen
 * that absolute devices (tablets, touch screens) map onto. On failure
 * returns NULL with a one-line reason in `err`; no device at all is no
 * failure (one may be plugged in later), only a warning.
 */
struct slim_input *slim_input_create(struct slim_seat *seat, uint32_t width, uint32_t height,
		const struct slim_input_listener *listener, void *data, char *err, size_t err_len);
void slim_input_destroy(struct slim_input *input);
/* The screen is another size now: absolute positions scale to it. */
void slim_input_set_size(struct slim_input *input, uint32_t width, uint32_t height);

int slim_input_fd(const struct slim_input *input);
void slim_input_dispatch(struct slim_input *input);

#endif
