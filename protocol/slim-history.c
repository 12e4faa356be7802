/*
 * A byte ring of the commands of the last datagrams, and where each one's
 * are. An entry is good while its bytes have not been written over (the
 * ring has taken less than its size since they went in) and its index has
 * not gone to a datagram SLIM_HISTORY_DGRAMS later.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "slim-history.h"
#include "slim-proto.h"

struct history_entry {
	uint32_t seq; /* 0: none */
	uint32_t len;
	uint64_t pos; /* where its bytes went, counted since the reset */
};

struct slim_history {
	uint8_t *ring;
	uint64_t written;
	struct history_entry entries[SLIM_HISTORY_DGRAMS];
	uint8_t *dict;
	uint32_t dict_first, dict_last; /* what dict holds; dict_last 0: nothing */
	size_t dict_len;
};

struct slim_history *slim_history_create(void)
{
	struct slim_history *h = calloc(1, sizeof(*h));
	if (!h) {
		return NULL;
	}
	h->ring = malloc(SLIM_HISTORY_BYTES);
	h->dict = malloc(SLIM_HISTORY_DICT_MAX);
	if (!h->ring || !h->dict) {
		slim_history_destroy(h);
		return NULL;
	}
	return h;
}

void slim_history_destroy(struct slim_history *h)
{
	if (!h) {
		return;
	}
	free(h->ring);
	free(h->dict);
	free(h);
}

void slim_history_reset(struct slim_history *h)
{
	memset(h->entries, 0, sizeof(h->entries));
	h->written = 0;
	h->dict_last = 0;
}

void slim_history_add(struct slim_history *h, uint32_t seq, const uint8_t *cmds, size_t len)
{
	struct history_entry *e = &h->entries[seq % SLIM_HISTORY_DGRAMS];
	if (len > SLIM_HISTORY_DICT_MAX) {
		e->seq = 0; /* never part of a dictionary, and not worth the ring */
		return;
	}
	*e = (struct history_entry){ .seq = seq, .len = (uint32_t)len, .pos = h->written };
	size_t at = h->written % SLIM_HISTORY_BYTES;
	size_t first = len < SLIM_HISTORY_BYTES - at ? len : SLIM_HISTORY_BYTES - at;
	memcpy(h->ring + at, cmds, first);
	memcpy(h->ring, cmds + first, len - first);
	h->written += len;
}

static const struct history_entry *kept(const struct slim_history *h, uint32_t seq)
{
	const struct history_entry *e = &h->entries[seq % SLIM_HISTORY_DGRAMS];
	if (seq == 0 || e->seq != seq || h->written - e->pos > SLIM_HISTORY_BYTES) {
		return NULL;
	}
	return e;
}

bool slim_history_has(const struct slim_history *h, uint32_t seq)
{
	return kept(h, seq) != NULL;
}

size_t slim_history_len(const struct slim_history *h, uint32_t seq)
{
	const struct history_entry *e = kept(h, seq);
	return e ? e->len : 0;
}

const uint8_t *slim_history_dict(struct slim_history *h, uint32_t first, uint32_t last,
		size_t *len)
{
	if ((uint32_t)(last - first) >= SLIM_HISTORY_DGRAMS) {
		return NULL;
	}
	/*
	 * The copy made for the same run last time is still the dictionary
	 * while every datagram of the run is kept: checking that is cheaper
	 * than copying again for each datagram that names it.
	 */
	if (h->dict_last != 0 && h->dict_first == first && h->dict_last == last) {
		for (uint32_t s = first;; s++) {
			if (!kept(h, s)) {
				h->dict_last = 0;
				return NULL;
			}
			if (s == last) {
				*len = h->dict_len;
				return h->dict;
			}
		}
	}
	size_t n = 0;
	for (uint32_t s = first;; s++) {
		const struct history_entry *e = kept(h, s);
		if (!e || e->len > SLIM_HISTORY_DICT_MAX - n) {
			h->dict_last = 0;
			return NULL;
		}
		size_t at = e->pos % SLIM_HISTORY_BYTES;
		size_t part = e->len < SLIM_HISTORY_BYTES - at ? e->len : SLIM_HISTORY_BYTES - at;
		memcpy(h->dict + n, h->ring + at, part);
		memcpy(h->dict + n + part, h->ring, e->len - part);
		n += e->len;
		if (s == last) {
			break;
		}
	}
	h->dict_first = first;
	h->dict_last = last;
	h->dict_len = n;
	*len = n;
	return h->dict;
}
