/* [--json] [--quick], the options of most benchmarks. */
#ifndef SLIM_BENCH_OPTIONS_H
#define SLIM_BENCH_OPTIONS_H

#include <stdbool.h>

/* False after the usage is said (to stderr). */
bool bench_options(int argc, char *argv[], bool *json, bool *quick);

#endif
