/*
 * Keystroke to pixels, as the console's clock sees it: from the datagram
 * that carried a key press to the presentation of the frame that answered
 * it. The compositor counts them in these buckets and tells the session
 * manager (the `keys` control line, session-manager.md §2), which exports
 * them as a histogram; both sides share the bounds here.
 */
#ifndef SLIM_KEY_LATENCY_H
#define SLIM_KEY_LATENCY_H

#include <stdint.h>

#define SLIM_KEY_BUCKETS 10
/* upper bounds in microseconds; what is above the last counts in `count` only */
static const uint32_t slim_key_bucket_us[SLIM_KEY_BUCKETS] = {
	5000, 10000, 20000, 30000, 50000, 75000, 100000, 150000, 250000, 500000,
};

struct slim_key_latency {
	uint64_t count, sum_us;
	uint64_t buckets[SLIM_KEY_BUCKETS]; /* not cumulative: each its own range */
};

static inline void slim_key_latency_add(struct slim_key_latency *k, uint64_t us)
{
	k->count++;
	k->sum_us += us;
	for (int i = 0; i < SLIM_KEY_BUCKETS; i++) {
		if (us <= slim_key_bucket_us[i]) {
			k->buckets[i]++;
			break;
		}
	}
}

#endif
