#include <string.h>
#include "control-line.h"

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	return -1; /* uppercase too: the contract says lowercase */
}

/* Lowercase hex of 1..max bytes into `out`; returns the bytes, 0 if malformed. */
static size_t parse_hex(const char *s, size_t len, uint8_t *out, size_t max)
{
	if (len == 0 || len % 2 != 0 || len / 2 > max) {
		return 0;
	}
	for (size_t i = 0; i < len / 2; i++) {
		int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			return 0;
		}
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return len / 2;
}

static bool is_word(const char *line, size_t len, const char *word)
{
	return len == strlen(word) && memcmp(line, word, len) == 0;
}

/*
 * TOKEN CONSOLE KEY from `token` to `end`; false with *why set (NULL:
 * not three fields, the caller's usage).
 */
static bool parse_attach(const char *token, const char *end, struct slim_control_line *out,
		const char **why)
{
	*why = NULL;
	const char *space = memchr(token, ' ', (size_t)(end - token));
	const char *space2 = space ? memchr(space + 1, ' ', (size_t)(end - space - 1)) : NULL;
	if (!space || !space2) {
		return false;
	}
	if ((size_t)(space - token) != 2 * SLIM_ATTACH_TOKEN_LEN ||
			parse_hex(token, (size_t)(space - token), out->token,
				SLIM_ATTACH_TOKEN_LEN) != SLIM_ATTACH_TOKEN_LEN) {
		*why = "the token is not 16 bytes of lowercase hex";
		return false;
	}
	const char *console = space + 1;
	uint8_t id[SLIM_CONSOLE_ID_LEN] = { 0 };
	size_t n = parse_hex(console, (size_t)(space2 - console), id, sizeof(id));
	/* a NUL inside would make an id no HELLO can carry */
	if (n == 0 || memchr(id, 0, n)) {
		*why = "the console id is not 1 to 32 bytes of lowercase hex";
		return false;
	}
	const char *key = space2 + 1;
	if ((size_t)(end - key) != 2 * SLIM_CONTROL_KEY_LEN ||
			parse_hex(key, (size_t)(end - key), out->key, SLIM_CONTROL_KEY_LEN) !=
				SLIM_CONTROL_KEY_LEN) {
		*why = "the key is not 32 bytes of lowercase hex";
		memset(out->key, 0, sizeof(out->key));
		return false;
	}
	memcpy(out->console_id, id, sizeof(id));
	return true;
}

/* shadow TOKEN CONSOLE KEY ask|always view|control: the two words last, then the rest. */
static bool parse_shadow(const char *start, const char *end, struct slim_control_line *out,
		const char **why)
{
	static const char *const usage = "usage: shadow TOKEN CONSOLE KEY ask|always view|control";
	const char *p = end;
	const char *words[2];
	size_t lens[2];
	for (int i = 1; i >= 0; i--) {
		const char *space = p;
		while (space > start && space[-1] != ' ') {
			space--;
		}
		if (space == start) {
			*why = usage;
			return false;
		}
		words[i] = space;
		lens[i] = (size_t)(p - space);
		p = space - 1;
	}
	if (!is_word(words[0], lens[0], "ask") && !is_word(words[0], lens[0], "always")) {
		*why = usage;
		return false;
	}
	if (!is_word(words[1], lens[1], "view") && !is_word(words[1], lens[1], "control")) {
		*why = usage;
		return false;
	}
	if (!parse_attach(start, p, out, why)) {
		*why = *why ? *why : usage;
		return false;
	}
	out->ask = lens[0] == 3;
	out->control = lens[1] == 7;
	out->request = SLIM_CONTROL_SHADOW;
	return true;
}

bool slim_control_line_parse(const char *line, size_t len, struct slim_control_line *out,
		const char **why)
{
	*out = (struct slim_control_line){ 0 };
	if (is_word(line, len, "detach")) {
		out->request = SLIM_CONTROL_DETACH;
		return true;
	}
	if (is_word(line, len, "ping")) {
		out->request = SLIM_CONTROL_PING;
		return true;
	}
	if (is_word(line, len, "pong")) {
		out->request = SLIM_CONTROL_PONG;
		return true;
	}
	if (is_word(line, len, "unshadow")) {
		out->request = SLIM_CONTROL_UNSHADOW;
		return true;
	}
	static const char expect[] = "expect ", shadow[] = "shadow ";
	if (len >= sizeof(expect) - 1 && memcmp(line, expect, sizeof(expect) - 1) == 0) {
		if (!parse_attach(line + sizeof(expect) - 1, line + len, out, why)) {
			*why = *why ? *why : "usage: expect TOKEN CONSOLE KEY";
			return false;
		}
		out->request = SLIM_CONTROL_EXPECT;
		return true;
	}
	if (len >= sizeof(shadow) - 1 && memcmp(line, shadow, sizeof(shadow) - 1) == 0) {
		return parse_shadow(line + sizeof(shadow) - 1, line + len, out, why);
	}
	*why = "unknown request";
	return false;
}

void slim_control_console_hex(const char id[SLIM_CONSOLE_ID_LEN],
		char out[2 * SLIM_CONSOLE_ID_LEN + 1])
{
	static const char digits[] = "0123456789abcdef";
	size_t i = 0;
	for (; i < SLIM_CONSOLE_ID_LEN && id[i] != '\0'; i++) {
		out[2 * i] = digits[(uint8_t)id[i] >> 4];
		out[2 * i + 1] = digits[(uint8_t)id[i] & 0xf];
	}
	out[2 * i] = '\0';
}
