/*
 * Card readers: a card put on or taken off one of the console's readers
 * becomes a CARD event (struct slim_wire_card) for the server, which is how
 * a session finds the console its user tapped a card on.
 *
 * Two sources, chosen with --card-reader:
 *   pcsc   the PC/SC service (pcscd): every reader it has, hot-plugged
 *          readers included (card-pcsc.c);
 *   stdin  lines on stdin, for development (card-stdin.c):
 *            insert HEXTOKEN   a card with this UID on reader 0
 *            remove            the card is taken off again
 *          With --control, stdin is the control protocol's and the same
 *          lines are its "card insert HEX" and "card remove" commands.
 *
 * Either way the events reach the program through the listener, on the
 * thread of its poll() loop, whenever slim_card_reader_dispatch runs.
 */
#ifndef SLIM_CONSOLE_CARD_H
#define SLIM_CONSOLE_CARD_H

#include <stdbool.h>
#include <stddef.h>
#include "slim-proto.h"

/* Readers told apart in CARD's `reader`; later ones are not watched. */
#define SLIM_CARD_MAX_READERS 8

struct slim_card_listener {
	/* A card was inserted or removed; a removal repeats the insertion's token. */
	void (*card)(void *data, const struct slim_wire_card *card);
	/* One line for the person at the console (a reader came or went, pcscd left). */
	void (*status)(void *data, const char *text);
};

struct slim_card_reader;

/*
 * Watches the PC/SC service's readers. `wait` false: NULL, with the reason
 * in `err`, if the service cannot be reached now (the default mode's test).
 * `wait` true: a service that is not there yet is waited for, as is one
 * that goes away later. NULL with `err` if this build has no PC/SC.
 */
struct slim_card_reader *slim_card_pcsc_create(bool wait,
		const struct slim_card_listener *listener, void *data, char *err, size_t err_len);
/* Reads the line format above from `fd` (stdin). */
struct slim_card_reader *slim_card_stdin_create(int fd,
		const struct slim_card_listener *listener, void *data);
void slim_card_reader_destroy(struct slim_card_reader *reader);

/* What to poll for input; -1 once there is nothing more to read. */
int slim_card_reader_fd(const struct slim_card_reader *reader);
/* Reads what is there and reports it through the listener. */
void slim_card_reader_dispatch(struct slim_card_reader *reader);

/*
 * The development line format, for card-stdin.c and --control: `verb` is
 * "insert" (with `hex`, 1..32 bytes as hex digits) or "remove" (`hex`
 * NULL). `state` is reader 0's card, updated on success; the event to
 * send is then `*state`. On failure `*err` says why and nothing changed.
 */
bool slim_card_parse(const char *verb, const char *hex, struct slim_wire_card *state,
		const char **err);
/* A line of the format ("insert HEX", "remove"; blanks and '#' comments
 * are no event): true with an event in `state`, or false with `*err` set
 * (NULL for a line that is no event). */
bool slim_card_parse_line(const char *line, struct slim_wire_card *state, const char **err);

/* For the sources: each embeds a struct slim_card_reader first. */
struct slim_card_reader_impl {
	void (*destroy)(struct slim_card_reader *reader);
	int (*fd)(const struct slim_card_reader *reader);
	void (*dispatch)(struct slim_card_reader *reader);
};

struct slim_card_reader {
	const struct slim_card_reader_impl *impl;
	const struct slim_card_listener *listener;
	void *data;
};

void slim_card_reader_emit(struct slim_card_reader *reader, const struct slim_wire_card *card);
void slim_card_reader_status(struct slim_card_reader *reader, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
