#include <stdlib.h>
#include "slim-times.h"

void slim_times_add(struct slim_times *t, uint64_t ns)
{
	t->ms[t->next] = (float)((double)ns / 1e6);
	t->next = (t->next + 1) % SLIM_TIMES;
	t->n += t->n < SLIM_TIMES;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

double slim_times_quantile(const struct slim_times *t, size_t last, double q)
{
	last = last < t->n ? last : t->n;
	if (last == 0) {
		return 0;
	}
	float sorted[SLIM_TIMES];
	for (size_t i = 0; i < last; i++) {
		sorted[i] = t->ms[(t->next + SLIM_TIMES - 1 - i) % SLIM_TIMES];
	}
	qsort(sorted, last, sizeof(sorted[0]), cmp_float);
	return sorted[(size_t)(q * (double)(last - 1) + 0.5)];
}
