/* What the fuzzers share: the picture size, the association, and checks. */
#ifndef SLIM_FUZZ_COMMON_H
#define SLIM_FUZZ_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-log.h"

#define FUZZ_ASSOC 0x1234
#define FUZZ_W 64
#define FUZZ_H 48

/* Formats every message (its arguments come from the input) and prints nothing. */
void fuzz_quiet_log(enum slim_log_level level, const char *fmt, va_list args)
	__attribute__((format(printf, 2, 0)));
/* Aborts unless buf is a valid datagram (any association) within the default MTU. */
void fuzz_check_valid(const uint8_t *buf, size_t len, bool upstream, uint16_t width,
		uint16_t height, const char *who);
/* The same, and of FUZZ_ASSOC on a FUZZ_W x FUZZ_H screen. */
void fuzz_check_datagram(const uint8_t *buf, size_t len, bool upstream, const char *who);

/*
 * An input whose first byte picks what to do: the rest as exactly `len`
 * bytes (`bytes`) and as a terminated copy (`string`), for parsers of
 * either. Freed with fuzz_text_free.
 */
struct fuzz_text {
	char *bytes, *string;
	size_t len;
};
bool fuzz_text_split(const uint8_t *data, size_t size, struct fuzz_text *text);
void fuzz_text_free(struct fuzz_text *text);

#endif
