#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "slim-lines.h"

void slim_lines_init(struct slim_lines *lines)
{
	lines->start = 0;
	lines->len = 0;
	lines->skipping = false;
}

static void compact(struct slim_lines *lines)
{
	if (lines->start > 0) {
		memmove(lines->buf, lines->buf + lines->start, lines->len);
		lines->start = 0;
	}
}

/* Keeps room to read: a full buffer without a '\n' is an over-long line. */
static void make_room(struct slim_lines *lines)
{
	compact(lines);
	if (lines->len >= sizeof(lines->buf) - 1) {
		lines->len = 0;
		lines->skipping = true;
	}
}

enum slim_lines_status slim_lines_fill(struct slim_lines *lines, int fd)
{
	make_room(lines);
	size_t room = sizeof(lines->buf) - 1 - lines->len;
	ssize_t n = read(fd, lines->buf + lines->len, room);
	if (n < 0) {
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ?
			SLIM_LINES_AGAIN : SLIM_LINES_CLOSED;
	}
	if (n == 0) {
		return SLIM_LINES_CLOSED;
	}
	lines->len += (size_t)n;
	return SLIM_LINES_DATA;
}

void slim_lines_push(struct slim_lines *lines, const char *data, size_t len)
{
	/* callers take the lines out between pushes, as after a read */
	while (len > 0) {
		make_room(lines);
		size_t room = sizeof(lines->buf) - 1 - lines->len;
		size_t n = len < room ? len : room;
		memcpy(lines->buf + lines->start + lines->len, data, n);
		lines->len += n;
		data += n;
		len -= n;
	}
}

char *slim_lines_next(struct slim_lines *lines)
{
	for (;;) {
		char *p = lines->buf + lines->start;
		char *nl = memchr(p, '\n', lines->len);
		if (!nl) {
			return NULL;
		}
		size_t n = (size_t)(nl - p);
		*nl = '\0';
		lines->start += n + 1;
		lines->len -= n + 1;
		if (lines->skipping) {
			lines->skipping = false;
			continue;
		}
		if (n > SLIM_LINE_MAX || memchr(p, '\0', n)) {
			continue;
		}
		if (n > 0 && p[n - 1] == '\r') {
			p[n - 1] = '\0';
		}
		return p;
	}
}

bool slim_line_send(int fd, const char *fmt, ...)
{
	char buf[SLIM_LINE_MAX + 2];
	va_list args;
	va_start(args, fmt);
	int n = vsnprintf(buf, sizeof(buf) - 1, fmt, args);
	va_end(args);
	if (n < 0 || (size_t)n > SLIM_LINE_MAX - 1) {
		return false;
	}
	buf[n++] = '\n';
	/* MSG_NOSIGNAL: a peer that went away is an error here, not SIGPIPE */
	ssize_t sent = send(fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	return sent == n;
}

bool slim_text_line(const char *text, size_t len, size_t *pos, char *line, size_t size,
		const char **why, bool *ended)
{
	if (*pos >= len) {
		return false;
	}
	const char *start = text + *pos;
	const char *nl = memchr(start, '\n', len - *pos);
	size_t n = nl ? (size_t)(nl - start) : len - *pos;
	*why = n >= size ? "line too long" : memchr(start, '\0', n) ? "NUL byte" : NULL;
	if (!*why) {
		memcpy(line, start, n);
		line[n] = '\0';
	}
	if (ended) {
		*ended = nl != NULL;
	}
	*pos += n + (nl ? 1 : 0);
	return true;
}

int slim_split(char *line, char **fields, int max)
{
	int n = 0;
	char *p = line;
	while (n < max) {
		fields[n++] = p;
		char *sp = strchr(p, ' ');
		if (!sp) {
			break;
		}
		if (n == max) {
			/* the last field keeps the rest (message text) */
			break;
		}
		*sp = '\0';
		p = sp + 1;
	}
	return n;
}

bool slim_parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	if (*s < '0' || *s > '9') {
		return false;
	}
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end != '\0' || errno || v > max) {
		return false;
	}
	*out = v;
	return true;
}
