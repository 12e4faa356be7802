/*
 * libFuzzer target: a monitor's EDID, which the DRM output reads from the
 * connector's EDID property and puts into HELLO. Whatever the bytes, the
 * parser reads none outside them, and what it gives is what HELLO may
 * carry: a make of three capitals or nothing, a model of printable ASCII,
 * both terminated.
 */
#include <stdlib.h>
#include <string.h>
#include "edid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact copy: reading past its end is ASan's to catch */
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	struct slim_edid e;
	bool ok = slim_edid_parse(copy, size, &e);
	size_t make = strnlen(e.make, sizeof(e.make));
	size_t model = strnlen(e.model, sizeof(e.model));
	if (make == sizeof(e.make) || model == sizeof(e.model) || (make != 0 && make != 3) ||
			(!ok && (make || model))) {
		abort();
	}
	for (size_t i = 0; i < make; i++) {
		if (e.make[i] < 'A' || e.make[i] > 'Z') {
			abort();
		}
	}
	for (size_t i = 0; i < model; i++) {
		if (e.model[i] < 0x20 || e.model[i] > 0x7e) {
			abort();
		}
	}
	free(copy);
	return 0;
}
