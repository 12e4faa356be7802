/*
 * What a monitor says of itself in its EDID: who made it and its name.
 * The bytes come from the monitor (through the kernel's EDID property),
 * so they are read as untrusted input: any length, any content, nothing
 * read outside them, and every text cut to printable ASCII. No device
 * here: the parser is unit-tested and fuzzed on its own.
 */
#ifndef SLIM_CONSOLE_EDID_H
#define SLIM_CONSOLE_EDID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct slim_edid {
	/* the PNP manufacturer id ("DEL", "RHT"); empty when it is not three letters */
	char make[4];
	/* the monitor name descriptor (0xFC), else the product code ("0x1234") */
	char model[16];
};

/*
 * Fills `out` from an EDID's base block; false (and `out` empty) if `data`
 * is no EDID (shorter than its 128-byte base block, or without its header).
 * The checksum is not checked: monitors with a wrong one are common, and
 * nothing read here is trusted further than a name.
 */
bool slim_edid_parse(const uint8_t *data, size_t len, struct slim_edid *out);

#endif
