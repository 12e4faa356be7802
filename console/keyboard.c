/*
 * The console's keyboard from its system (keyboard.h): Debian's
 * /etc/default/keyboard, read as the shell would read its plain
 * assignments, then libxkbcommon's own XKB_DEFAULT_* variables.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "keyboard.h"
#include "slim-keyboard.h"
#include "slim-log.h"

/* Larger than any keyboard file; a larger one is not one. */
#define MAX_FILE 16384

/* Where a variable's value goes, by its name. */
static char *field_of(struct slim_keyboard *kb, const char *key, size_t key_len, size_t *size)
{
	static const struct {
		const char *name;
		size_t offset, size;
	} fields[] = {
		{ "XKBMODEL", offsetof(struct slim_keyboard, model), sizeof(kb->model) },
		{ "XKBLAYOUT", offsetof(struct slim_keyboard, layout), sizeof(kb->layout) },
		{ "XKBVARIANT", offsetof(struct slim_keyboard, variant), sizeof(kb->variant) },
		{ "XKBOPTIONS", offsetof(struct slim_keyboard, options), sizeof(kb->options) },
	};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (strlen(fields[i].name) == key_len && memcmp(fields[i].name, key, key_len) == 0) {
			*size = fields[i].size;
			return (char *)kb + fields[i].offset;
		}
	}
	return NULL;
}

static bool key_char(char c, bool first)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
		(!first && c >= '0' && c <= '9');
}

/*
 * The value at *p (before end), quoted or bare, into value (of size);
 * *p after it. NULL, or what is wrong with it.
 */
static const char *read_value(const char **p, const char *end, char *value, size_t size)
{
	char quote = *p < end && (**p == '"' || **p == '\'') ? **p : '\0';
	const char *s = *p + (quote ? 1 : 0), *e = s;
	while (e < end && (quote ? *e != quote : *e != ' ' && *e != '\t')) {
		if (strchr("$`\\", *e) || (!quote && strchr("\"'", *e))) {
			return "a value the shell would expand or join (only plain values are read)";
		}
		e++;
	}
	if (quote && e == end) {
		return "a quote that does not end on its line";
	}
	if ((size_t)(e - s) >= size) {
		return "a value too long for an XKB name";
	}
	memcpy(value, s, (size_t)(e - s));
	value[e - s] = '\0';
	*p = e + (quote ? 1 : 0);
	return NULL;
}

/* One line's KEY=VALUE into kb; NULL, or what is wrong with it. */
static const char *parse_line(const char *s, const char *end, struct slim_keyboard *kb)
{
	const char *key = s;
	while (s < end && key_char(*s, s == key)) {
		s++;
	}
	if (s == key || s == end || *s != '=') {
		return "not KEY=VALUE";
	}
	size_t key_len = (size_t)(s - key), size = 0;
	char value[SLIM_KEYBOARD_DESCRIBE_LEN];
	s++;
	const char *wrong = read_value(&s, end, value, sizeof(value));
	if (wrong) {
		return wrong;
	}
	while (s < end && (*s == ' ' || *s == '\t')) {
		s++;
	}
	if (s < end && *s != '#') {
		return "more after the value";
	}
	char *field = field_of(kb, key, key_len, &size);
	if (!field) {
		return NULL; /* BACKSPACE and the like: not the keymap's */
	}
	if (strlen(value) >= size) {
		return "a value too long for an XKB name";
	}
	struct slim_keyboard one = { 0 };
	memcpy(one.layout, value, strlen(value) + 1);
	if (!slim_keyboard_names_valid(&one)) {
		return "a value with a character no XKB name has";
	}
	memcpy(field, value, strlen(value) + 1);
	return NULL;
}

bool console_keyboard_parse_default(const char *text, size_t len, struct slim_keyboard *out,
		bool *found, char *why, size_t why_len)
{
	struct slim_keyboard kb = { 0 };
	const char *p = text, *end = text + len;
	for (unsigned line = 1; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *s = p, *e = nl ? nl : end;
		p = e + 1;
		while (s < e && (*s == ' ' || *s == '\t')) {
			s++;
		}
		const char *wrong = memchr(s, '\0', (size_t)(e - s)) ? "a NUL byte" :
			s == e || *s == '#' ? NULL : parse_line(s, e, &kb);
		if (wrong) {
			snprintf(why, why_len, "line %u: %s", line, wrong);
			return false;
		}
	}
	*found = kb.layout[0] != '\0';
	*out = kb;
	return true;
}

/* The file's keyboard; false if it has none, cannot be read or is bad (said). */
static bool from_file(const char *path, struct slim_keyboard *kb)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		if (errno != ENOENT) {
			slim_log(SLIM_LOG_ERROR, "%s: %s; its keyboard passed over", path, strerror(errno));
		}
		return false;
	}
	char *text = malloc(MAX_FILE);
	size_t len = text ? fread(text, 1, MAX_FILE, f) : 0;
	bool error = !text || ferror(f), found = false;
	fclose(f);
	char why[160];
	if (error || len == MAX_FILE) {
		slim_log(SLIM_LOG_ERROR, "%s: %s; its keyboard passed over", path,
			error ? "cannot be read" : "too large for a keyboard file");
	} else if (!console_keyboard_parse_default(text, len, kb, &found, why, sizeof(why))) {
		slim_log(SLIM_LOG_ERROR, "%s: %s; its keyboard passed over", path, why);
	}
	free(text);
	return found;
}

/* XKB_DEFAULT_*'s keyboard; false if none is set, or one is bad (said). */
static bool from_environment(struct slim_keyboard *kb)
{
	static const struct {
		const char *name;
		size_t offset, size;
	} vars[] = {
		{ "XKB_DEFAULT_RULES", offsetof(struct slim_keyboard, rules), sizeof(kb->rules) },
		{ "XKB_DEFAULT_MODEL", offsetof(struct slim_keyboard, model), sizeof(kb->model) },
		{ "XKB_DEFAULT_LAYOUT", offsetof(struct slim_keyboard, layout), sizeof(kb->layout) },
		{ "XKB_DEFAULT_VARIANT", offsetof(struct slim_keyboard, variant), sizeof(kb->variant) },
		{ "XKB_DEFAULT_OPTIONS", offsetof(struct slim_keyboard, options), sizeof(kb->options) },
	};
	struct slim_keyboard env = { 0 };
	bool any = false;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *value = getenv(vars[i].name);
		if (!value || !value[0]) {
			continue;
		}
		if (strlen(value) >= vars[i].size) {
			slim_log(SLIM_LOG_ERROR, "%s is too long for an XKB name; the environment's "
				"keyboard passed over", vars[i].name);
			return false;
		}
		memcpy((char *)&env + vars[i].offset, value, strlen(value) + 1);
		any = true;
	}
	if (any && !slim_keyboard_names_valid(&env)) {
		slim_log(SLIM_LOG_ERROR, "XKB_DEFAULT_* hold a character no XKB name has; the "
			"environment's keyboard passed over");
		return false;
	}
	*kb = env;
	return any;
}

bool console_keyboard_system(const char *path, struct slim_keyboard *kb)
{
	return from_file(path, kb) || from_environment(kb);
}
