/*
 * Synthetic screen content for tests and benchmarks, in the three kinds the
 * SLIM paper's workloads show: text (two colours a line, glyph-like
 * strokes), user interface (flat panels, borders, labels, a gradient) and
 * photographs (smooth gradients with noise). Deterministic from a seed.
 */
#ifndef SLIM_TEST_CONTENT_H
#define SLIM_TEST_CONTENT_H

#include <stdint.h>
#include "slim-pixels.h"

enum content_kind {
	CONTENT_TEXT,
	CONTENT_UI,
	CONTENT_PHOTO,
	CONTENT_KINDS,
};

struct content_rng {
	uint64_t s;
};

const char *content_name(enum content_kind kind);
uint32_t content_rand(struct content_rng *rng);
uint32_t content_below(struct content_rng *rng, uint32_t n);
/* Paints `r` of `fb` (X byte 0xff). */
void content_paint(const struct slim_fb *fb, struct slim_rect r, enum content_kind kind,
		struct content_rng *rng);
/* Text only, on a given background, one line of glyphs every 16 rows from y. */
void content_text_lines(const struct slim_fb *fb, struct slim_rect r, uint32_t bg,
		struct content_rng *rng);

#endif
