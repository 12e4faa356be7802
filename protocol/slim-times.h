/*
 * The last SLIM_TIMES durations of something done again and again (an
 * encode, a decode) and their quantiles, for the figures a program shows.
 */
#ifndef SLIM_TIMES_H
#define SLIM_TIMES_H

#include <stddef.h>
#include <stdint.h>

#define SLIM_TIMES 120

struct slim_times {
	float ms[SLIM_TIMES];
	size_t n, next;
};

/* One more, `ns` nanoseconds long; the oldest goes once there are SLIM_TIMES. */
void slim_times_add(struct slim_times *t, uint64_t ns);
/* The q-quantile (0..1) of the last `last` kept (at most t->n), ms; 0 when none. */
double slim_times_quantile(const struct slim_times *t, size_t last, double q);

#endif
