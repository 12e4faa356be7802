/*
 * libFuzzer target: the manager's answer to `metrics` as slimlandctl top
 * reads it (top-parse.c), a line at a time. A sample it accepts, written
 * again by the manager's own writer (prom-text.c), reads back the same:
 * escaping and unescaping agree.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "prom-text.h"
#include "top-parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What prom-text writes as it is: printable ASCII, and newlines it escapes. */
static bool writable(const char *s)
{
	for (; *s; s++) {
		if ((*s < 0x20 && *s != '\n') || (unsigned char)*s >= 0x7f) {
			return false;
		}
	}
	return true;
}

static void round_trip(const struct top_sample *s)
{
	struct slim_prom_label labels[TOP_LABELS];
	for (int i = 0; i < s->n_labels; i++) {
		if (!writable(s->labels[i].value)) {
			return;
		}
		labels[i] = (struct slim_prom_label){ s->labels[i].name, s->labels[i].value };
	}
	struct slim_prom p;
	slim_prom_init(&p);
	slim_prom_f64(&p, s->name, labels, (size_t)s->n_labels, s->value);
	size_t len;
	char *text = slim_prom_take(&p, &len);
	if (!text) {
		abort();
	}
	text[len - 1] = '\0'; /* its newline */
	struct top_sample again;
	if (!top_parse_sample(text, &again) || strcmp(again.name, s->name) != 0 ||
			again.n_labels != s->n_labels) {
		abort();
	}
	for (int i = 0; i < s->n_labels; i++) {
		if (strcmp(again.labels[i].name, s->labels[i].name) != 0 ||
				strcmp(again.labels[i].value, s->labels[i].value) != 0) {
			abort();
		}
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text) {
		return 0;
	}
	memcpy(text, data, size);
	text[size] = '\0';
	for (char *line = text, *end; line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (end) {
			*end = '\0';
		}
		struct top_sample s;
		if (top_parse_sample(line, &s)) {
			round_trip(&s);
		}
	}
	free(text);
	return 0;
}
