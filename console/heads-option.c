/*
 * --size's list of heads (heads-option.h). Every number is bounded before
 * it is used: a side 1..SLIM_MAX_DIM, a physical side 1..SLIM_MAX_HEAD_MM,
 * a scale 1..SLIM_MAX_SCALE, at most SLIM_MAX_HEADS heads whose row is at
 * most SLIM_MAX_DIM wide.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heads-option.h"

static bool number(const char **s, unsigned long lo, unsigned long hi, uint32_t *out)
{
	if (**s < '0' || **s > '9') {
		return false;
	}
	char *end;
	errno = 0;
	unsigned long v = strtoul(*s, &end, 10);
	if (errno != 0 || v < lo || v > hi) {
		return false;
	}
	*s = end;
	*out = (uint32_t)v;
	return true;
}

/* One head: WxH[/WMMxHMMmm][@SCALE], up to the next comma or the end. */
static bool parse_head(const char **s, struct slim_head *head)
{
	if (!number(s, 1, SLIM_MAX_DIM, &head->width) || *(*s)++ != 'x' ||
			!number(s, 1, SLIM_MAX_DIM, &head->height)) {
		return false;
	}
	if (**s == '/') {
		(*s)++;
		if (!number(s, 1, SLIM_MAX_HEAD_MM, &head->mm_width) || *(*s)++ != 'x' ||
				!number(s, 1, SLIM_MAX_HEAD_MM, &head->mm_height) ||
				strncmp(*s, "mm", 2) != 0) {
			return false;
		}
		*s += 2;
	}
	if (**s == '@') {
		(*s)++;
		if (!number(s, 1, SLIM_MAX_SCALE, &head->scale)) {
			return false;
		}
	}
	return **s == ',' || **s == '\0';
}

bool slim_heads_option_parse(const char *arg, struct slim_desk *desk, char *err, size_t err_len)
{
	struct slim_head heads[SLIM_MAX_HEADS] = { 0 };
	uint32_t n = 0, x = 0;
	const char *s = arg;
	for (;;) {
		if (n == SLIM_MAX_HEADS) {
			snprintf(err, err_len, "at most %d heads", SLIM_MAX_HEADS);
			return false;
		}
		struct slim_head *h = &heads[n];
		if (!parse_head(&s, h)) {
			snprintf(err, err_len, "head %u: expected WxH[/WxHmm][@SCALE], sides 1..%d, "
				"physical sides 1..%d mm, scale 1..%d", n + 1, SLIM_MAX_DIM,
				SLIM_MAX_HEAD_MM, SLIM_MAX_SCALE);
			return false;
		}
		if (x + h->width > SLIM_MAX_DIM) {
			snprintf(err, err_len, "the heads are over %d pixels wide in all", SLIM_MAX_DIM);
			return false;
		}
		h->x = x;
		x += h->width;
		h->primary = n == 0;
		snprintf(h->name, sizeof(h->name), "CONSOLE-%u", n + 1);
		snprintf(h->make, sizeof(h->make), "slimland");
		snprintf(h->model, sizeof(h->model), "console");
		n++;
		if (*s == '\0') {
			break;
		}
		s++; /* the comma */
	}
	desk->n_heads = n;
	memcpy(desk->heads, heads, sizeof(heads));
	return true;
}
