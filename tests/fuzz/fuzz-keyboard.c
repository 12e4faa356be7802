/*
 * libFuzzer target: the keyboard's names as people write them, which the
 * console reads from its command line and /etc/default/keyboard, and the
 * session from a user's ~/.config/slimland/keyboard. The first byte says
 * which parser gets the rest (its value modulo 3, so that the seeds in
 * corpus/keyboard are text: '0', '1' or '2' and then the input):
 *
 *   0  a --keyboard argument (slim_keyboard_parse)
 *   1  a user's keyboard file (slim_keyboard_parse_text)
 *   2  /etc/default/keyboard (console_keyboard_parse_default)
 *
 * None may read outside its input, and what they accept must be what they
 * promise: names HELLO may carry, and a keyboard that, written back for a
 * log line, reads back as itself.
 */
#include <stdlib.h>
#include <string.h>
#include "fuzz-common.h"
#include "keyboard.h"
#include "slim-keyboard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What was accepted is valid, and its description reads back as itself. */
static void check(const struct slim_keyboard *kb, bool reads_back)
{
	if (!slim_keyboard_names_valid(kb)) {
		abort();
	}
	char text[SLIM_KEYBOARD_DESCRIBE_LEN], why[160];
	slim_keyboard_describe(kb, text, sizeof(text));
	struct slim_keyboard again;
	if (reads_back && (!slim_keyboard_parse(text, &again, why, sizeof(why)) ||
			memcmp(&again, kb, sizeof(again)) != 0)) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_text t;
	if (!fuzz_text_split(data, size, &t)) {
		return 0;
	}
	char *text = t.bytes, *copy = t.string;
	size_t len = t.len;
	struct slim_keyboard kb;
	char why[256];
	bool found;
	switch (data[0] % 3) {
	case 0:
		if (slim_keyboard_parse(copy, &kb, why, sizeof(why))) {
			check(&kb, true);
		}
		break;
	case 1:
		if (slim_keyboard_parse_text(text, len, &kb, why, sizeof(why))) {
			check(&kb, true);
		}
		break;
	default:
		if (console_keyboard_parse_default(text, len, &kb, &found, why, sizeof(why))) {
			check(&kb, false);
		}
		break;
	}
	fuzz_text_free(&t);
	return 0;
}
