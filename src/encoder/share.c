#include "share.h"

void slim_share(uint64_t capacity, const uint64_t *demand, uint64_t *grant, size_t n)
{
	size_t order[SLIM_SHARE_MAX];
	n = n < SLIM_SHARE_MAX ? n : SLIM_SHARE_MAX;
	/* ascending by demand: an insertion sort of a handful */
	for (size_t i = 0; i < n; i++) {
		size_t j = i;
		for (; j > 0 && demand[order[j - 1]] > demand[i]; j--) {
			order[j] = order[j - 1];
		}
		order[j] = i;
	}
	uint64_t left = capacity;
	for (size_t k = 0; k < n; k++) {
		uint64_t share = left / (n - k);
		uint64_t d = demand[order[k]];
		grant[order[k]] = d < share ? d : share;
		left -= grant[order[k]];
	}
}
