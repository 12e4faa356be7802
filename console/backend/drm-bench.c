/* --bench-present: the cost of presenting damage, for bench-codec's DRM column. */
#include <stdlib.h>
#include "drm-internal.h"
#include "slim-clock.h"

bool slim_drm_backend_bench(struct slim_console_backend *b, FILE *out)
{
	struct slim_drm_backend *drm = drm_from(b);
	/* the first head's: the copies are the same on every head */
	const struct drm_head *head = &drm->heads[0];
	struct slim_fb fb = { .width = head->desc.width, .height = head->desc.height,
		.stride = head->desc.width };
	fb.px = malloc((size_t)fb.width * fb.height * 4);
	if (!fb.px) {
		return false;
	}
	for (size_t i = 0; i < (size_t)fb.width * fb.height; i++) {
		fb.px[i] = 0xff000000u | (uint32_t)(i * 2654435761u >> 8);
	}
	/* into the buffer not on screen, as present() does between flips */
	const struct slim_drm_buffer *buf = &head->scanout.bufs[head->scanout.damage.back];
	static const uint32_t sides[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512 };
	/*
	 * cost = startup + pixels * per_pixel by least squares weighted by
	 * 1/cost^2, as bench-codec fits the commands' costs: small damages
	 * (the startup) count as much as large ones (the per-pixel cost).
	 */
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
	int n = 0;
	for (size_t s = 0; s < sizeof(sides) / sizeof(sides[0]); s++) {
		uint32_t side = sides[s];
		if (side > fb.width || side > fb.height) {
			break;
		}
		/* about 20 MB copied per round, at least 20 copies: long enough for the clock */
		uint64_t reps = 20u * 1000 * 1000 / ((uint64_t)side * side * 4);
		reps = reps < 20 ? 20 : reps > 100000 ? 100000 : reps;
		uint64_t best = UINT64_MAX;
		for (int round = 0; round < 5; round++) {
			uint64_t t0 = slim_now_ns();
			for (uint64_t r = 0; r < reps; r++) {
				/* a different place each time, as damage comes */
				int32_t x = (int32_t)((r * 97u) % (fb.width - side + 1));
				int32_t y = (int32_t)((r * 61u) % (fb.height - side + 1));
				pixman_box32_t box = { x, y, x + (int32_t)side, y + (int32_t)side };
				drm_copy_box(buf, 0, 0, &fb, &box);
			}
			uint64_t t = slim_now_ns() - t0;
			best = t < best ? t : best;
		}
		double px = (double)side * side, ns = (double)best / (double)reps;
		double w = 1 / (ns > 1 ? ns * ns : 1);
		sw += w;
		sx += w * px;
		sy += w * ns;
		sxx += w * px * px;
		sxy += w * px * ns;
		n++;
		slim_log(SLIM_LOG_DEBUG, "bench: %ux%u: %.1f ns", side, side, ns);
	}
	free(fb.px);
	double det = sw * sxx - sx * sx;
	if (n < 2 || det == 0) {
		return false;
	}
	double per_px = (sw * sxy - sx * sy) / det;
	double startup = (sy - per_px * sx) / sw;
	fprintf(out, "present %.1f %.3f\n", startup < 0 ? 0 : startup, per_px);
	fflush(out);
	return true;
}

