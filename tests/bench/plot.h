/*
 * A curve for people to read: series of (x, y) points drawn as lines on a
 * white PNG, with a grid and no text (a benchmark's table says the
 * numbers; its README caption says which colour is which). Series in
 * turn: red, blue, green, orange. A dashed grey line marks `target` on y.
 */
#ifndef SLIM_BENCH_PLOT_H
#define SLIM_BENCH_PLOT_H

#include <stdbool.h>
#include <stddef.h>

bool bench_plot_png(const char *path, const double *x, const double *const *series,
		size_t n_series, size_t n_points, double target);

#endif
