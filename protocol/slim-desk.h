/*
 * A console's desk as both ends keep it: its heads (monitors) and its
 * keyboard, with every text terminated and cleaned. The wire's form is
 * HELLO's (struct slim_wire_heads, struct slim_wire_keyboard); a HELLO
 * without them is one head of its size and no keyboard of its own.
 */
#ifndef SLIM_DESK_H
#define SLIM_DESK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-proto.h"

struct slim_head {
	uint32_t x, y, width, height; /* in the console's screen, device pixels */
	uint32_t mm_width, mm_height; /* 0: unknown */
	uint32_t refresh_mhz;         /* 0: unknown */
	uint32_t scale;               /* 0: the server's choice */
	bool primary;
	char name[sizeof(((struct slim_wire_head *)0)->name) + 1];
	char make[sizeof(((struct slim_wire_head *)0)->make) + 1];
	char model[sizeof(((struct slim_wire_head *)0)->model) + 1];
};

struct slim_keyboard {
	char rules[sizeof(((struct slim_wire_keyboard *)0)->rules) + 1];
	char model[sizeof(((struct slim_wire_keyboard *)0)->model) + 1];
	char layout[sizeof(((struct slim_wire_keyboard *)0)->layout) + 1];
	char variant[sizeof(((struct slim_wire_keyboard *)0)->variant) + 1];
	char options[sizeof(((struct slim_wire_keyboard *)0)->options) + 1];
};

struct slim_desk {
	uint32_t n_heads; /* 1..SLIM_MAX_HEADS */
	struct slim_head heads[SLIM_MAX_HEADS];
	/* false: the console said nothing, or nothing usable (see keyboard_bad) */
	bool has_keyboard;
	bool keyboard_bad; /* it said a name with characters no XKB name has */
	struct slim_keyboard keyboard;
};

/* One head of width x height at 0,0, named CONSOLE-1, primary; no keyboard. */
void slim_desk_single(struct slim_desk *desk, uint32_t width, uint32_t height);
/* The heads' bounding box: the screen they make. */
void slim_desk_bounds(const struct slim_desk *desk, uint32_t *width, uint32_t *height);
/* The head of `desk` with the primary flag (the first if none has it). */
const struct slim_head *slim_desk_primary(const struct slim_desk *desk);
/* Whether both have the same heads (keyboards aside). */
bool slim_desk_same_heads(const struct slim_desk *a, const struct slim_desk *b);
/* Whether both type with the same keymap. */
bool slim_desk_same_keyboard(const struct slim_desk *a, const struct slim_desk *b);

/*
 * Checks heads as a HELLO carries them against its screen: 1..SLIM_MAX_HEADS,
 * each 1..SLIM_MAX_DIM a side and inside width x height, none overlapping,
 * scale at most SLIM_MAX_SCALE. `heads` is unaligned wire data.
 */
bool slim_desk_heads_valid(const uint8_t *heads, size_t count, uint32_t width, uint32_t height);
/*
 * The desk from HELLO's parts, already checked by the reader: `heads`
 * (count of them, NULL: one head of width x height) and `keyboard` (NULL:
 * none). Names are cleaned (a head's to [A-Za-z0-9._-], make and model to
 * printable ASCII), a physical size over SLIM_MAX_HEAD_MM is unknown, an
 * empty head name is HEAD-n; a keyboard name with characters outside
 * [A-Za-z0-9_,:+()-.] drops the keyboard (keyboard_bad).
 */
void slim_desk_from_wire(struct slim_desk *desk, uint32_t width, uint32_t height,
		const uint8_t *heads, size_t count, const uint8_t *keyboard);
/* The wire's form of `desk`'s heads and keyboard, for HELLO. */
void slim_desk_head_to_wire(const struct slim_head *head, struct slim_wire_head *wire);
void slim_desk_keyboard_to_wire(const struct slim_keyboard *kb, struct slim_wire_keyboard *wire);

#endif
