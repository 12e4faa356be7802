/*
 * The keyboard's names as a person writes them (slim-keyboard.h): parsed
 * into XKB's comma-separated fields, and written back for a log line.
 */
#include <stdio.h>
#include <string.h>
#include "slim-keyboard.h"

/* Whether `c` is a letter, a digit or one of `extra`. */
static bool name_char(char c, const char *extra)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		(c != '\0' && strchr(extra, c));
}

/* What an XKB rules, model, layout, variant or options list may hold. */
static bool xkb_text(const char *s)
{
	for (; *s; s++) {
		if (!name_char(*s, "_,:+()-.")) {
			return false;
		}
	}
	return true;
}

bool slim_keyboard_names_valid(const struct slim_keyboard *kb)
{
	return xkb_text(kb->rules) && xkb_text(kb->model) && xkb_text(kb->layout) &&
		xkb_text(kb->variant) && xkb_text(kb->options);
}

/*
 * Appends `n` bytes of `s` to the text in `out` (of `size`), after a comma
 * unless `first`; false if they do not fit.
 */
static bool append(char *out, size_t size, bool first, const char *s, size_t n)
{
	size_t used = strlen(out);
	size_t need = used + (first ? 0 : 1) + n;
	if (need >= size) {
		return false;
	}
	if (!first) {
		out[used++] = ',';
	}
	memcpy(out + used, s, n);
	out[need] = '\0';
	return true;
}

/* The first character of [s, end) that is not a name's, or NULL. */
static const char *bad_char(const char *s, const char *end, const char *extra)
{
	for (; s < end; s++) {
		if (!name_char(*s, extra)) {
			return s;
		}
	}
	return NULL;
}

/* `c` as a log line may show it: 'c', or its byte's value. */
static const char *shown(char c, char buf[16])
{
	if (c >= ' ' && c < 0x7f) {
		snprintf(buf, 16, "'%c'", c);
	} else {
		snprintf(buf, 16, "byte 0x%02x", (unsigned char)c);
	}
	return buf;
}

/* Says why in `why`, and fails. */
#define FAIL(...) return snprintf(why, why_len, __VA_ARGS__), false

/* The layouts before the options: LAYOUT[:VARIANT] joined with +. */
static bool parse_layouts(const char *p, const char *end, struct slim_keyboard *kb,
		char *why, size_t why_len)
{
	bool any_variant = false;
	char shown_buf[16];
	for (unsigned n = 0; p <= end; n++) {
		const char *plus = memchr(p, '+', (size_t)(end - p));
		plus = plus ? plus : end;
		const char *colon = memchr(p, ':', (size_t)(plus - p));
		const char *name_end = colon ? colon : plus;
		const char *bad;
		if (name_end == p) {
			FAIL("a layout is empty");
		}
		if ((bad = bad_char(p, name_end, "_-."))) {
			FAIL("a layout has %s, which no XKB name has", shown(*bad, shown_buf));
		}
		if (colon && colon + 1 == plus) {
			FAIL("layout %.*s has an empty variant", (int)(name_end - p), p);
		}
		if (colon && (bad = bad_char(colon + 1, plus, "_-."))) {
			FAIL("a variant has %s, which no XKB name has", shown(*bad, shown_buf));
		}
		if (n == SLIM_KEYBOARD_MAX_LAYOUTS) {
			FAIL("more than %d layouts", SLIM_KEYBOARD_MAX_LAYOUTS);
		}
		const char *variant = colon ? colon + 1 : plus;
		if (!append(kb->layout, sizeof(kb->layout), n == 0, p, (size_t)(name_end - p)) ||
				!append(kb->variant, sizeof(kb->variant), n == 0, variant,
					(size_t)(plus - variant))) {
			FAIL("the layouts or variants are longer than %zu bytes",
				sizeof(kb->layout) - 1);
		}
		any_variant = any_variant || colon;
		p = plus + 1;
	}
	if (!any_variant) {
		kb->variant[0] = '\0'; /* not ",,": XKB's default variant of each */
	}
	return true;
}

/* The options after the first comma: XKB's list, none of them empty. */
static bool parse_options(const char *options, struct slim_keyboard *kb, char *why,
		size_t why_len)
{
	char shown_buf[16];
	const char *bad = bad_char(options, options + strlen(options), "_-.:(),");
	if (bad) {
		FAIL("the options have %s, which no XKB option has", shown(*bad, shown_buf));
	}
	if (options[0] == '\0' || options[0] == ',' || strstr(options, ",,") ||
			options[strlen(options) - 1] == ',') {
		FAIL("an option is empty");
	}
	if (strlen(options) >= sizeof(kb->options)) {
		FAIL("the options are longer than %zu bytes", sizeof(kb->options) - 1);
	}
	memcpy(kb->options, options, strlen(options) + 1);
	return true;
}

bool slim_keyboard_parse(const char *spec, struct slim_keyboard *out, char *why, size_t why_len)
{
	struct slim_keyboard kb = { 0 };
	const char *comma = strchr(spec, ',');
	const char *end = comma ? comma : spec + strlen(spec);
	if (!parse_layouts(spec, end, &kb, why, why_len) ||
			(comma && !parse_options(comma + 1, &kb, why, why_len))) {
		return false;
	}
	*out = kb;
	return true;
}

/* [*s, *e) without the blanks around it. */
static void trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t' || **s == '\r')) {
		(*s)++;
	}
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r')) {
		(*e)--;
	}
}

bool slim_keyboard_parse_text(const char *text, size_t len, struct slim_keyboard *kb,
		char *why, size_t why_len)
{
	const char *p = text, *end = text + len;
	unsigned line = 0, found = 0;
	struct slim_keyboard parsed;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *s = p, *e = nl ? nl : end;
		p = e + 1;
		line++;
		if (memchr(s, '\0', (size_t)(e - s))) {
			snprintf(why, why_len, "line %u: a NUL byte", line);
			return false;
		}
		trim(&s, &e);
		if (s == e || *s == '#') {
			continue;
		}
		char spec[SLIM_KEYBOARD_DESCRIBE_LEN], reason[128];
		if ((size_t)(e - s) >= sizeof(spec)) {
			snprintf(why, why_len, "line %u: too long", line);
			return false;
		}
		memcpy(spec, s, (size_t)(e - s));
		spec[e - s] = '\0';
		if (found++) {
			snprintf(why, why_len, "line %u: a second keyboard (one line says it)", line);
			return false;
		}
		if (!slim_keyboard_parse(spec, &parsed, reason, sizeof(reason))) {
			snprintf(why, why_len, "line %u: %s (expected %s)", line, reason,
				SLIM_KEYBOARD_SYNTAX);
			return false;
		}
	}
	if (!found) {
		snprintf(why, why_len, "no keyboard in it (one line: %s)", SLIM_KEYBOARD_SYNTAX);
		return false;
	}
	*kb = parsed;
	return true;
}

/* The n-th (from 0) comma-separated field of `list`: its start and length. */
static const char *field(const char *list, unsigned n, size_t *len)
{
	for (; n > 0 && list; n--) {
		list = strchr(list, ',');
		list = list ? list + 1 : NULL;
	}
	if (!list) {
		*len = 0;
		return "";
	}
	const char *comma = strchr(list, ',');
	*len = comma ? (size_t)(comma - list) : strlen(list);
	return list;
}

void slim_keyboard_describe(const struct slim_keyboard *kb, char *out, size_t len)
{
	size_t used = 0;
	out[0] = '\0';
#define PUT(...) do { \
		int r = snprintf(out + used, len - used, __VA_ARGS__); \
		used = r < 0 ? used : used + (size_t)r >= len ? len - 1 : used + (size_t)r; \
	} while (0)
	if (kb->layout[0] == '\0') {
		PUT("default");
	}
	unsigned layouts = 1;
	for (const char *c = kb->layout; *c; c++) {
		layouts += *c == ',';
	}
	for (unsigned i = 0; kb->layout[0] && i < layouts; i++) {
		size_t n, vn;
		const char *name = field(kb->layout, i, &n);
		const char *variant = field(kb->variant, i, &vn);
		PUT("%s%.*s%s%.*s", i ? "+" : "", (int)n, name, vn ? ":" : "", (int)vn, variant);
	}
	if (kb->options[0]) {
		PUT(",%s", kb->options);
	}
	if (kb->model[0]) {
		PUT(" (model %s)", kb->model);
	}
	if (kb->rules[0]) {
		PUT(" (rules %s)", kb->rules);
	}
#undef PUT
}
