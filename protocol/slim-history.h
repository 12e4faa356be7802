/*
 * The datagrams each side saw last, kept for zstd to refer to
 * (SLIM_DGRAM_HISTORY): what the console applied, what the server sent. A
 * compressed datagram may name a run of earlier datagrams whose commands,
 * end to end, are its dictionary: text and UI seen a moment ago cost a
 * reference instead of their pixels, as a VNC server's zlib stream makes
 * them, but a loss costs only the datagrams that named a lost one.
 *
 * The commands of each datagram go into a ring of SLIM_HISTORY_BYTES. The
 * console keeps a subset of what the server sent, in the same order, so
 * what the server still has (by its own ring) the console still has too,
 * if it applied it; the server names only datagrams the console confirmed.
 */
#ifndef SLIM_HISTORY_H
#define SLIM_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct slim_history;

struct slim_history *slim_history_create(void);
void slim_history_destroy(struct slim_history *h);
/* A new association: nothing kept. */
void slim_history_reset(struct slim_history *h);
/* The commands of datagram `seq`, as applied (or sent). */
void slim_history_add(struct slim_history *h, uint32_t seq, const uint8_t *cmds, size_t len);
/* Whether the commands of `seq` are still kept. */
bool slim_history_has(const struct slim_history *h, uint32_t seq);
/* Bytes of the commands of `seq` (0 when not kept). */
size_t slim_history_len(const struct slim_history *h, uint32_t seq);
/*
 * The commands of datagrams first..last end to end (at most
 * SLIM_HISTORY_DICT_MAX bytes), or NULL when any of them is not kept. The
 * bytes stay valid until the next call or add.
 */
const uint8_t *slim_history_dict(struct slim_history *h, uint32_t first, uint32_t last,
		size_t *len);

#endif
