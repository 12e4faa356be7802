/*
 * The line framing every unix socket of the session manager uses (§2–§4):
 * UTF-8 lines ending in '\n', at most SLIM_LINE_MAX bytes. A longer line is
 * dropped whole rather than cut, so that its tail is never read as a command.
 */
#ifndef SLIM_SESSIOND_LINES_H
#define SLIM_SESSIOND_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-hex.h"

#define SLIM_LINE_MAX 1024

struct slim_lines {
	char buf[2 * SLIM_LINE_MAX + 2];
	size_t start, len;
	bool skipping; /* inside an over-long line: drop up to its '\n' */
};

enum slim_lines_status {
	SLIM_LINES_DATA,   /* something was read */
	SLIM_LINES_AGAIN,  /* nothing to read now */
	SLIM_LINES_CLOSED, /* end of file or an error */
};

void slim_lines_init(struct slim_lines *lines);
enum slim_lines_status slim_lines_fill(struct slim_lines *lines, int fd);
/* Appends bytes as if read (tests and fuzzers). */
void slim_lines_push(struct slim_lines *lines, const char *data, size_t len);
/* The next complete line, '\n' removed and NUL-terminated; NULL if none yet. */
char *slim_lines_next(struct slim_lines *lines);

/* Sends one line ('\n' added); false if it could not go whole. */
bool slim_line_send(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));


/*
 * The next line of a file's text (slimland.conf, the consoles file, the
 * state file), from *pos, which moves past it and its '\n', copied into
 * `line` (size bytes) without the '\n'. False at the end of the text. *why
 * is what is wrong with a line that cannot be copied ("line too long",
 * "NUL byte"), else NULL; *ended (may be NULL) whether a '\n' ended it.
 */
bool slim_text_line(const char *text, size_t len, size_t *pos, char *line, size_t size,
		const char **why, bool *ended);

/* Splits `line` at single spaces into at most `max` fields; returns how many. */
int slim_split(char *line, char **fields, int max);
/* A decimal field, digits only, at most `max`; false on anything else. */
bool slim_parse_ulong(const char *s, unsigned long max, unsigned long *out);

#endif
