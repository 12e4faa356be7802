/*
 * The server's side of reliable input (slim-protocol.md §7): which input
 * number comes next from the attached console, and which keys and buttons
 * it holds as applied here.
 *
 * INPUT events are applied exactly once and in order: the one expected is
 * applied and the number advances, older ones (the console sends all it
 * has not seen acknowledged, again and again) are skipped, and at a gap it
 * stops until a later datagram brings what is missing. A release of
 * something not held is dropped. HELD, once everything it counts has been
 * applied, releases what the console no longer holds; nothing ever presses
 * a key but the console's own events.
 *
 * No event loop and no wlroots: the caller passes each event to apply,
 * made-up releases included, through one function.
 */
#ifndef SLIM_INPUT_SEQ_H
#define SLIM_INPUT_SEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-codec.h"

/* Applies one event to the session (the compositor's input handler). */
typedef void (*slim_input_apply_fn)(void *data, const struct slim_wire_input *ev);

struct slim_input_held_key {
	uint8_t kind; /* SLIM_INPUT_KEY or SLIM_INPUT_BUTTON */
	uint16_t code;
};

struct slim_input_seq {
	uint32_t next; /* the input number expected */
	struct slim_input_held_key held[SLIM_HELD_MAX];
	size_t n_held;
};

/*
 * A new association: the number expected is `next` (1 on the wire) and
 * nothing is held. Release what was held first (slim_input_seq_release_all).
 */
void slim_input_seq_reset(struct slim_input_seq *seq, uint32_t next);

/*
 * An INPUT command: applies its new events in order; returns how many.
 * A press beyond SLIM_HELD_MAX keys held at once is not applied: it could
 * never be released by HELD.
 */
size_t slim_input_seq_input(struct slim_input_seq *seq, const struct slim_cmd *cmd,
		slim_input_apply_fn apply, void *data);
/*
 * A HELD command: if everything it counts has been applied, releases what
 * is held here and not there. Returns how many releases were made up.
 */
size_t slim_input_seq_held(struct slim_input_seq *seq, const struct slim_cmd *cmd,
		slim_input_apply_fn apply, void *data);
/* Releases everything held (the console went away); returns how many. */
size_t slim_input_seq_release_all(struct slim_input_seq *seq, slim_input_apply_fn apply,
		void *data);

/* What INPUT_ACK says: every event numbered below this was applied. */
uint32_t slim_input_seq_next(const struct slim_input_seq *seq);
/* Keys and buttons held as applied. */
size_t slim_input_seq_held_count(const struct slim_input_seq *seq);

#endif
