/*
 * Which datagrams a console has applied, for loss reporting.
 *
 * The console applies datagrams in increasing sequence order only: one that
 * arrives after a later one is treated as lost, not applied, so an old
 * datagram can never overwrite newer pixels. Every sequence number it
 * skipped is reported in a NACK, and the server repaints what it covered
 * from its current framebuffer. Duplicates are recognised and dropped.
 */
#ifndef SLIM_SEQ_WINDOW_H
#define SLIM_SEQ_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-proto.h"

enum slim_seq_verdict {
	SLIM_SEQ_NEW,       /* newest so far: apply it */
	SLIM_SEQ_DUPLICATE, /* applied before */
	SLIM_SEQ_LATE,      /* overtaken by a later one: already counted lost */
};

struct slim_seq_window {
	uint32_t highest; /* 0: nothing received; the server starts at 1 */
	uint32_t span;    /* numbers up to highest the window covers, at most SLIM_SEQ_WINDOW */
	uint64_t bits[SLIM_SEQ_WINDOW / 64]; /* bit s % WINDOW: s was applied */
};

void slim_seq_window_reset(struct slim_seq_window *w);
enum slim_seq_verdict slim_seq_window_check(const struct slim_seq_window *w, uint32_t seq);
/* Records `seq` (which check called NEW) as applied. */
void slim_seq_window_mark(struct slim_seq_window *w, uint32_t seq);
/*
 * Lost ranges among the last SLIM_SEQ_WINDOW sequence numbers, oldest
 * first, from `from` on (what the server has settled is not repeated);
 * 0 is never a sequence number, so a range never holds it. The server treats what is older than that and still unconfirmed
 * as lost. Returns how many ranges were written; sets *overflow when there
 * were more than `max`.
 */
size_t slim_seq_window_lost(const struct slim_seq_window *w, uint32_t from,
		struct slim_wire_seq_range *out, size_t max, bool *overflow);

#endif
