/* The options of most benchmarks: see options.h. */
#include <stdio.h>
#include <string.h>
#include "bench-options.h"

bool bench_options(int argc, char *argv[], bool *json, bool *quick)
{
	*json = *quick = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			*json = true;
		} else if (strcmp(argv[i], "--quick") == 0) {
			*quick = true;
		} else {
			fprintf(stderr, "usage: %s [--json] [--quick]\n", argv[0]);
			return false;
		}
	}
	return true;
}
