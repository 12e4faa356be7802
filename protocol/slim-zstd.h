/*
 * Whole datagrams compressed with zstd (SLIM_DGRAM_ZSTD): what follows the
 * header is one zstd frame that expands to the commands. Each datagram stays self-contained: no dictionary, no state
 * carried from one to the next, so a loss costs that datagram only.
 */
#ifndef SLIM_ZSTD_H
#define SLIM_ZSTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-codec.h"

struct slim_zstd;

struct slim_zstd *slim_zstd_create(void);
void slim_zstd_destroy(struct slim_zstd *z);

/*
 * Compresses the commands of the datagram `in` (header included, `len`
 * bytes) into `out`, at most `cap` bytes, header included and flagged.
 * Returns the length, or 0 when it does not fit or is no smaller.
 */
size_t slim_zstd_deflate(struct slim_zstd *z, const uint8_t *in, size_t len,
		uint8_t *out, size_t cap);

/*
 * Expands a SLIM_DGRAM_ZSTD datagram into `out` (SLIM_ZSTD_MAX_DGRAM
 * bytes), the flag cleared. Returns SLIM_OK and its length, or
 * SLIM_ERR_ZSTD: not one whole frame, or one that says or makes more than
 * SLIM_MAX_ZSTD_EXPANDED bytes.
 */
enum slim_error slim_zstd_inflate(struct slim_zstd *z, const uint8_t *in, size_t len,
		uint8_t *out, size_t *out_len);

#define SLIM_ZSTD_MAX_DGRAM (sizeof(struct slim_wire_dgram) + SLIM_MAX_ZSTD_EXPANDED)

/*
 * slim_reader_init for a datagram that may be compressed: one with
 * SLIM_DGRAM_ZSTD is expanded into `scratch` (SLIM_ZSTD_MAX_DGRAM bytes),
 * where the reader then reads.
 */
enum slim_error slim_zstd_reader_init(struct slim_zstd *z, uint8_t *scratch,
		struct slim_reader *r, struct slim_dgram *hdr, const uint8_t *buf, size_t len,
		bool upstream, uint16_t width, uint16_t height);

#endif
