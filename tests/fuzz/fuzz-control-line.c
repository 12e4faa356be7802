/*
 * libFuzzer target: the lines a managed compositor reads on its control
 * socket (control-line.c, session-manager.md §2): expect, detach, ping,
 * pong, shadow and unshadow. The input is one line. What is accepted must
 * be what the contract says: an expect or shadow line's console id is 1 to
 * 32 bytes without a NUL, and a line refused leaves no key behind.
 */
#include <stdlib.h>
#include <string.h>
#include "control-line.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > SLIM_CONTROL_LINE_MAX) {
		return 0;
	}
	/* exactly `size` bytes, not terminated: the parser must not read past them */
	char *line = malloc(size ? size : 1);
	if (!line) {
		return 0;
	}
	memcpy(line, data, size);
	struct slim_control_line out;
	const char *why = NULL;
	static const uint8_t zero[SLIM_CONTROL_KEY_LEN];
	if (slim_control_line_parse(line, size, &out, &why)) {
		if (out.request == SLIM_CONTROL_EXPECT || out.request == SLIM_CONTROL_SHADOW) {
			if (out.console_id[0] == '\0') {
				abort(); /* an id no HELLO can carry */
			}
			char hex[2 * SLIM_CONSOLE_ID_LEN + 1];
			slim_control_console_hex(out.console_id, hex);
			if (strlen(hex) < 2) {
				abort();
			}
		}
		if (out.request != SLIM_CONTROL_SHADOW && (out.ask || out.control)) {
			abort();
		}
	} else if (!why || memcmp(out.key, zero, sizeof(zero)) != 0) {
		abort();
	}
	free(line);
	return 0;
}
