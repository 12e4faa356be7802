/*
 * Whole datagrams compressed with zstd (SLIM_DGRAM_ZSTD): what follows the
 * header is one zstd frame that expands to the commands, with no
 * dictionary or with the commands of earlier datagrams as one
 * (SLIM_DGRAM_HISTORY, slim-history.h).
 */
#ifndef SLIM_ZSTD_H
#define SLIM_ZSTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-codec.h"
#include "slim-history.h"

struct slim_zstd;

/* How hard the server compresses a datagram (the levels: slim-zstd.c). */
enum slim_zstd_effort {
	SLIM_ZSTD_FAST,
	SLIM_ZSTD_STRONG, /* fewer bytes for about twice the time */
};

struct slim_zstd *slim_zstd_create(void);
void slim_zstd_destroy(struct slim_zstd *z);

/*
 * The server's dictionary for the datagrams compressed next: the commands
 * of datagrams first..last as `h` kept them (last 0: none). False when `h`
 * no longer has them all: then there is none.
 */
bool slim_zstd_use_history(struct slim_zstd *z, struct slim_history *h, uint32_t first,
		uint32_t last);

/*
 * Compresses the commands of the datagram `in` (header included, `len`
 * bytes) into `out`, at most `cap` bytes, header included and flagged,
 * with the dictionary if there is one. Returns the length, or 0 when it
 * does not fit or is no smaller.
 */
size_t slim_zstd_deflate(struct slim_zstd *z, enum slim_zstd_effort effort,
		const uint8_t *in, size_t len, uint8_t *out, size_t cap);

/*
 * Expands a SLIM_DGRAM_ZSTD datagram into `out` (SLIM_ZSTD_MAX_DGRAM
 * bytes), the flags cleared, its dictionary taken from `h`. Returns
 * SLIM_OK and its length, SLIM_ERR_HISTORY when `h` (NULL: none) does not
 * have the datagrams it names, or SLIM_ERR_ZSTD: not one whole frame, or
 * one that says or makes more than SLIM_MAX_ZSTD_EXPANDED bytes.
 */
enum slim_error slim_zstd_inflate(struct slim_zstd *z, struct slim_history *h,
		const uint8_t *in, size_t len, uint8_t *out, size_t *out_len);

#define SLIM_ZSTD_MAX_DGRAM (sizeof(struct slim_wire_dgram) + SLIM_MAX_ZSTD_EXPANDED)

/*
 * slim_reader_init for a datagram that may be compressed: one with
 * SLIM_DGRAM_ZSTD is expanded into `scratch` (SLIM_ZSTD_MAX_DGRAM bytes),
 * where the reader then reads.
 */
enum slim_error slim_zstd_reader_init(struct slim_zstd *z, uint8_t *scratch,
		struct slim_history *h, struct slim_reader *r, struct slim_dgram *hdr,
		const uint8_t *buf, size_t len, bool upstream, uint16_t width, uint16_t height);

#endif
