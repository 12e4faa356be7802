#include <string.h>
#include "seq-window.h"

static bool bit_get(const struct slim_seq_window *w, uint32_t seq)
{
	uint32_t i = seq % SLIM_SEQ_WINDOW;
	return (w->bits[i / 64] >> (i % 64)) & 1;
}

static void bit_set(struct slim_seq_window *w, uint32_t seq, bool on)
{
	uint32_t i = seq % SLIM_SEQ_WINDOW;
	uint64_t m = (uint64_t)1 << (i % 64);
	w->bits[i / 64] = on ? w->bits[i / 64] | m : w->bits[i / 64] & ~m;
}

void slim_seq_window_reset(struct slim_seq_window *w)
{
	memset(w, 0, sizeof(*w));
}

/* Sequence numbers wrap; compare them by distance. */
static int32_t seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

enum slim_seq_verdict slim_seq_window_check(const struct slim_seq_window *w, uint32_t seq)
{
	if (seq == 0) {
		return SLIM_SEQ_LATE; /* never sent: senders skip 0 when they wrap */
	}
	int32_t d = seq_diff(seq, w->highest);
	if (d > 0 || w->highest == 0) {
		return SLIM_SEQ_NEW;
	}
	if (0u - (uint32_t)d >= w->span) {
		return SLIM_SEQ_LATE;
	}
	return bit_get(w, seq) ? SLIM_SEQ_DUPLICATE : SLIM_SEQ_LATE;
}

void slim_seq_window_mark(struct slim_seq_window *w, uint32_t seq)
{
	/* Clear the bits of the sequence numbers skipped over. */
	uint32_t skipped = seq - w->highest - 1;
	if (skipped >= SLIM_SEQ_WINDOW) {
		memset(w->bits, 0, sizeof(w->bits));
	} else {
		for (uint32_t s = w->highest + 1; s != seq; s++) {
			bit_set(w, s, false);
		}
	}
	bit_set(w, seq, true);
	uint32_t span = w->span + skipped + 1;
	w->span = span < w->span || span > SLIM_SEQ_WINDOW ? SLIM_SEQ_WINDOW : span;
	w->highest = seq;
}

size_t slim_seq_window_lost(const struct slim_seq_window *w, uint32_t from,
		struct slim_wire_seq_range *out, size_t max, bool *overflow)
{
	*overflow = false;
	if (w->highest == 0) {
		return 0;
	}
	/* The oldest number the window can speak for. */
	uint32_t lo = w->highest - w->span + 1;
	if (seq_diff(from, lo) > 0 && seq_diff(from, w->highest) <= 0) {
		lo = from;
	}
	size_t n = 0;
	bool in_gap = false;
	uint32_t start = 0;
	for (uint32_t s = lo; s != w->highest + 1; s++) {
		bool lost = s != 0 && !bit_get(w, s);
		if (lost && !in_gap) {
			in_gap = true;
			start = s;
		} else if (!lost && in_gap) {
			in_gap = false;
			if (n == max) {
				*overflow = true;
				return n;
			}
			out[n++] = (struct slim_wire_seq_range){ start, s - 1 };
		}
	}
	return n;
}
