/*
 * Hex text of bytes: how card tokens, attach tokens and console ids are
 * written where people or line protocols see them (the console's stdin
 * card reader, the session manager's sockets and state file).
 */
#ifndef SLIM_HEX_H
#define SLIM_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Lowercase hex of `len` bytes into `out` (2·len + 1 bytes). */
void slim_hex_encode(char *out, const uint8_t *in, size_t len);
/* Decodes exactly `len` bytes of hex (either case); false on anything else. */
bool slim_hex_decode(uint8_t *out, size_t len, const char *hex);

#endif
