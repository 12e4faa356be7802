/*
 * The development card reader (lines on stdin), the line format it shares
 * with --control, and what every card source has in common.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "card.h"
#include "slim-hex.h"
#include "slim-log.h"

/* Longer lines hold no token this format allows; they are reported and skipped. */
#define LINE_BYTES 256

void slim_card_reader_destroy(struct slim_card_reader *reader)
{
	if (reader) {
		reader->impl->destroy(reader);
	}
}

int slim_card_reader_fd(const struct slim_card_reader *reader)
{
	return reader->impl->fd(reader);
}

void slim_card_reader_dispatch(struct slim_card_reader *reader)
{
	reader->impl->dispatch(reader);
}

void slim_card_reader_emit(struct slim_card_reader *reader, const struct slim_wire_card *card)
{
	if (reader->listener && reader->listener->card) {
		reader->listener->card(reader->data, card);
	}
}

void slim_card_reader_status(struct slim_card_reader *reader, const char *fmt, ...)
{
	char text[256];
	va_list args;
	va_start(args, fmt);
	vsnprintf(text, sizeof(text), fmt, args);
	va_end(args);
	if (reader->listener && reader->listener->status) {
		reader->listener->status(reader->data, text);
	}
}

bool slim_card_parse(const char *verb, const char *hex, struct slim_wire_card *state,
		const char **err)
{
	if (strcmp(verb, "remove") == 0) {
		if (hex) {
			*err = "usage: remove";
			return false;
		}
		if (state->event != SLIM_CARD_INSERTED) {
			*err = "no card to remove";
			return false;
		}
		/* the removal repeats the token, so the server knows which card left */
		state->event = SLIM_CARD_REMOVED;
		return true;
	}
	if (strcmp(verb, "insert") != 0) {
		*err = "unknown card command (insert HEX, remove)";
		return false;
	}
	size_t n = hex ? strlen(hex) : 0;
	if (n == 0 || n % 2 != 0 || n / 2 > SLIM_CARD_TOKEN_MAX) {
		*err = "usage: insert HEX (2 to 64 hex digits)";
		return false;
	}
	struct slim_wire_card card = {
		.event = SLIM_CARD_INSERTED,
		.kind = SLIM_CARD_UID,
		.len = (uint8_t)(n / 2),
		.reader = 0,
	};
	if (!slim_hex_decode(card.token, n / 2, hex)) {
		*err = "usage: insert HEX (2 to 64 hex digits)";
		return false;
	}
	/* one reader holds one card: what a real one would never report */
	if (state->event == SLIM_CARD_INSERTED) {
		*err = "a card is inserted already: remove it first";
		return false;
	}
	*state = card;
	return true;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

bool slim_card_parse_line(const char *line, struct slim_wire_card *state, const char **err)
{
	char buf[LINE_BYTES];
	char *words[3] = { 0 };
	size_t n = 0;
	*err = NULL;
	if (strlen(line) >= sizeof(buf)) {
		*err = "line too long";
		return false;
	}
	strcpy(buf, line);
	char *s = buf;
	while (*s) {
		while (is_space(*s)) {
			*s++ = '\0';
		}
		if (!*s) {
			break;
		}
		if (n == sizeof(words) / sizeof(words[0])) {
			*err = "too many words (insert HEX, remove)";
			return false;
		}
		words[n++] = s;
		while (*s && !is_space(*s)) {
			s++;
		}
	}
	if (n == 0 || words[0][0] == '#') {
		return false; /* blank lines and comments, for scripts */
	}
	if (n > 2) {
		*err = "too many words (insert HEX, remove)";
		return false;
	}
	return slim_card_parse(words[0], words[1], state, err);
}

struct card_stdin {
	struct slim_card_reader base;
	int fd;
	struct slim_wire_card state;
	bool discarding; /* the rest of a line that was too long */
	size_t len;
	char buf[LINE_BYTES];
};

static struct card_stdin *card_stdin(struct slim_card_reader *reader)
{
	return (struct card_stdin *)reader;
}

static void stdin_destroy(struct slim_card_reader *reader)
{
	free(card_stdin(reader));
}

static int stdin_fd(const struct slim_card_reader *reader)
{
	return ((const struct card_stdin *)reader)->fd;
}

static void run_line(struct card_stdin *cs, const char *line)
{
	const char *err;
	if (slim_card_parse_line(line, &cs->state, &err)) {
		slim_card_reader_emit(&cs->base, &cs->state);
	} else if (err) {
		slim_card_reader_status(&cs->base, "card reader (stdin): %s", err);
	}
}

static void stdin_dispatch(struct slim_card_reader *reader)
{
	struct card_stdin *cs = card_stdin(reader);
	ssize_t n = read(cs->fd, cs->buf + cs->len, sizeof(cs->buf) - 1 - cs->len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
		return;
	}
	if (n <= 0) {
		/*
		 * The end of the input leaves the card where it is: unlike
		 * --control, nobody drives the console through this reader,
		 * so the console lives on without it.
		 */
		if (n < 0) {
			slim_card_reader_status(reader, "card reader (stdin): %s", strerror(errno));
		} else if (cs->len > 0 && !cs->discarding) {
			cs->buf[cs->len] = '\0'; /* a last line without its newline still counts */
			run_line(cs, cs->buf);
		}
		cs->len = 0;
		cs->fd = -1;
		return;
	}
	cs->len += (size_t)n;
	size_t start = 0;
	for (size_t i = 0; i < cs->len; i++) {
		if (cs->buf[i] != '\n') {
			continue;
		}
		cs->buf[i] = '\0';
		if (!cs->discarding) {
			run_line(cs, cs->buf + start);
		}
		cs->discarding = false;
		start = i + 1;
	}
	memmove(cs->buf, cs->buf + start, cs->len - start);
	cs->len -= start;
	if (cs->len == sizeof(cs->buf) - 1) {
		if (!cs->discarding) {
			slim_card_reader_status(reader, "card reader (stdin): line too long");
		}
		cs->discarding = true;
		cs->len = 0;
	}
}

static const struct slim_card_reader_impl stdin_impl = {
	.destroy = stdin_destroy,
	.fd = stdin_fd,
	.dispatch = stdin_dispatch,
};

struct slim_card_reader *slim_card_stdin_create(int fd,
		const struct slim_card_listener *listener, void *data)
{
	struct card_stdin *cs = calloc(1, sizeof(*cs));
	if (!cs) {
		return NULL;
	}
	cs->base = (struct slim_card_reader){ .impl = &stdin_impl, .listener = listener,
		.data = data };
	cs->fd = fd;
	cs->state.event = SLIM_CARD_REMOVED;
	return &cs->base;
}
