#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "top-parse.h"

static const char *word(const char *p, char *out, size_t size)
{
	size_t n = 0;
	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' || *p == ':' ||
			(*p >= '0' && *p <= '9' && n > 0)) {
		if (n + 1 >= size) {
			return NULL;
		}
		out[n++] = *p++;
	}
	out[n] = '\0';
	return n ? p : NULL;
}

/* A quoted value, its escapes undone; after its closing quote, or NULL. */
static const char *quoted(const char *p, char *out, size_t size)
{
	if (*p++ != '"') {
		return NULL;
	}
	size_t n = 0;
	while (*p != '"') {
		char c = *p++;
		if (c == '\0') {
			return NULL;
		}
		if (c == '\\') {
			c = *p++;
			if (c == 'n') {
				c = '\n';
			} else if (c != '\\' && c != '"') {
				return NULL;
			}
		}
		if (n + 1 >= size) {
			return NULL;
		}
		out[n++] = c;
	}
	out[n] = '\0';
	return p + 1;
}

bool top_parse_sample(const char *line, struct top_sample *out)
{
	memset(out, 0, sizeof(*out));
	const char *p = word(line, out->name, sizeof(out->name));
	if (!p) {
		return false;
	}
	if (*p == '{') {
		p++;
		while (*p != '}') {
			if (out->n_labels == TOP_LABELS) {
				return false;
			}
			p = word(p, out->labels[out->n_labels].name,
				sizeof(out->labels[0].name));
			if (!p || *p++ != '=') {
				return false;
			}
			p = quoted(p, out->labels[out->n_labels].value, sizeof(out->labels[0].value));
			if (!p) {
				return false;
			}
			out->n_labels++;
			if (*p == ',') {
				p++;
			} else if (*p != '}') {
				return false;
			}
		}
		p++;
	}
	if (*p++ != ' ') {
		return false;
	}
	char *end;
	out->value = strtod(p, &end);
	return end != p && *end == '\0' && !isnan(out->value);
}

const char *top_label(const struct top_sample *s, const char *name)
{
	for (int i = 0; i < s->n_labels; i++) {
		if (strcmp(s->labels[i].name, name) == 0) {
			return s->labels[i].value;
		}
	}
	return "";
}
