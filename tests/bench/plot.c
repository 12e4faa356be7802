/* A curve as a PNG: see plot.h. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "backend.h"
#include "plot.h"

#define W 800
#define H 500
#define MARGIN 40

static const uint32_t colours[] = { 0xd62728, 0x1f77b4, 0x2ca02c, 0xff7f0e };

static void dot(struct slim_fb *fb, int x, int y, uint32_t c, int r)
{
	for (int dy = -r; dy <= r; dy++) {
		for (int dx = -r; dx <= r; dx++) {
			int px = x + dx, py = y + dy;
			if (px >= 0 && py >= 0 && px < W && py < H && dx * dx + dy * dy <= r * r) {
				*slim_fb_row(fb, (uint32_t)px, (uint32_t)py) = c;
			}
		}
	}
}

static void line(struct slim_fb *fb, double x0, double y0, double x1, double y1, uint32_t c,
		int r, int dash)
{
	int steps = (int)fmax(fabs(x1 - x0), fabs(y1 - y0)) + 1;
	for (int i = 0; i <= steps; i++) {
		if (dash && (i / dash) % 2) {
			continue;
		}
		double t = (double)i / steps;
		dot(fb, (int)lround(x0 + t * (x1 - x0)), (int)lround(y0 + t * (y1 - y0)), c, r);
	}
}

bool bench_plot_png(const char *path, const double *x, const double *const *series,
		size_t n_series, size_t n_points, double target)
{
	double xmax = 1, ymax = target * 1.5;
	for (size_t p = 0; p < n_points; p++) {
		xmax = fmax(xmax, x[p]);
		for (size_t s = 0; s < n_series; s++) {
			ymax = fmax(ymax, series[s][p]);
		}
	}
	/* a round top: 10, 20, 50, 100, 200, ... */
	double top = 10;
	while (top < ymax) {
		top *= top / pow(10, floor(log10(top))) == 2 ? 2.5 : 2;
	}
	struct slim_fb fb = { .px = malloc(sizeof(uint32_t) * W * H), .width = W, .height = H,
		.stride = W };
	if (!fb.px) {
		return false;
	}
	for (size_t i = 0; i < (size_t)W * H; i++) {
		fb.px[i] = 0xffffff;
	}
	double pw = W - 2 * MARGIN, ph = H - 2 * MARGIN;
#define PX(v) (MARGIN + (v) / xmax * pw)
#define PY(v) (H - MARGIN - (v) / top * ph)
	for (int g = 0; g <= 10; g++) {
		line(&fb, MARGIN, PY(top * g / 10), W - MARGIN, PY(top * g / 10), 0xe0e0e0, 0, 0);
		line(&fb, PX(xmax * g / 10), MARGIN, PX(xmax * g / 10), H - MARGIN, 0xe0e0e0, 0, 0);
	}
	line(&fb, MARGIN, H - MARGIN, W - MARGIN, H - MARGIN, 0, 1, 0);
	line(&fb, MARGIN, MARGIN, MARGIN, H - MARGIN, 0, 1, 0);
	line(&fb, MARGIN, PY(target), W - MARGIN, PY(target), 0x808080, 1, 8);
	for (size_t s = 0; s < n_series; s++) {
		uint32_t c = colours[s % 4];
		for (size_t p = 0; p < n_points; p++) {
			dot(&fb, (int)PX(x[p]), (int)PY(series[s][p]), c, 4);
			if (p > 0) {
				line(&fb, PX(x[p - 1]), PY(series[s][p - 1]), PX(x[p]), PY(series[s][p]),
					c, 1, 0);
			}
		}
	}
#undef PX
#undef PY
	bool ok = slim_png_write(path, &fb);
	free(fb.px);
	return ok;
}
