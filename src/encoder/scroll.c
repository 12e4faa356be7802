/*
 * Vertical scroll detection. Clients that scroll (terminals, lists, pages)
 * repaint the whole area; SLIM's answer is COPY. A narrow strip of each
 * row is hashed in the framebuffer and in the model; rows whose hash is
 * unique in the model vote for the offset they moved by. The winning
 * offset is then checked on whole rows, and the longest run that really
 * matches is sent as one COPY. What is left differs and goes through the
 * tile pass as usual.
 */
#include <stdlib.h>
#include <string.h>
#include "encoder-internal.h"

#define STRIP_W 64
#define MIN_ROWS 32   /* smaller areas are cheap to send as they are */
#define MIN_VOTES 8
#define MIN_RUN 8
#define EMPTY_SLOT 0
#define AMBIGUOUS UINT32_MAX

bool scroll_init(struct slim_encoder *enc)
{
	struct encoder_scroll *s = &enc->scroll;
	s->row_hash_fb = calloc(SLIM_MAX_DIM, sizeof(uint64_t));
	s->row_hash_model = calloc(SLIM_MAX_DIM, sizeof(uint64_t));
	s->hash_table = calloc(2 * SLIM_MAX_DIM, sizeof(*s->hash_table));
	s->votes = calloc(2 * SLIM_MAX_DIM, sizeof(int32_t));
	return s->row_hash_fb && s->row_hash_model && s->hash_table && s->votes;
}

void scroll_finish(struct slim_encoder *enc)
{
	struct encoder_scroll *s = &enc->scroll;
	free(s->row_hash_fb);
	free(s->row_hash_model);
	free(s->hash_table);
	free(s->votes);
}

static uint64_t hash_strip(const uint32_t *p, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (uint32_t i = 0; i < n; i++) {
		h = (h ^ pixel_rgb(p[i])) * 0x100000001b3u;
	}
	return h ^ (h >> 29);
}

static bool rows_equal_rgb(const uint32_t *a, const uint32_t *b, uint32_t n)
{
	uint32_t acc = 0;
	for (uint32_t i = 0; i < n; i++) {
		acc |= a[i] ^ b[i];
	}
	return pixel_rgb(acc) == 0;
}

static uint32_t table_size(uint32_t rows)
{
	uint32_t size = 64;
	while (size < 2 * rows) {
		size *= 2;
	}
	return size;
}

/* Model rows by hash: a slot holds row + 1, or AMBIGUOUS when the hash repeats. */
static void build_table(struct slim_encoder *enc, uint32_t rows, uint32_t size)
{
	struct scroll_slot *t = enc->scroll.hash_table;
	memset(t, 0, size * sizeof(*t));
	for (uint32_t j = 0; j < rows; j++) {
		uint64_t h = enc->scroll.row_hash_model[j];
		uint32_t k = (uint32_t)h & (size - 1);
		while (t[k].row != EMPTY_SLOT && t[k].hash != h) {
			k = (k + 1) & (size - 1);
		}
		if (t[k].row == EMPTY_SLOT) {
			t[k] = (struct scroll_slot){ .hash = h, .row = j + 1 };
		} else {
			t[k].row = AMBIGUOUS;
		}
	}
}

static int32_t lookup(const struct slim_encoder *enc, uint64_t h, uint32_t size)
{
	const struct scroll_slot *t = enc->scroll.hash_table;
	for (uint32_t k = (uint32_t)h & (size - 1); t[k].row != EMPTY_SLOT; k = (k + 1) & (size - 1)) {
		if (t[k].hash == h) {
			return t[k].row == AMBIGUOUS ? -1 : (int32_t)t[k].row - 1;
		}
	}
	return -1;
}

void detect_scroll(struct slim_encoder *enc, const struct slim_fb *fb, struct slim_rect r)
{
	if (r.h < MIN_ROWS || r.w < STRIP_W) {
		return;
	}
	struct encoder_scroll *s = &enc->scroll;
	uint32_t sx = r.x + (r.w - STRIP_W) / 2;
	for (uint32_t i = 0; i < r.h; i++) {
		s->row_hash_fb[i] = hash_strip(slim_fb_row(fb, sx, r.y + i), STRIP_W);
		s->row_hash_model[i] = hash_strip(slim_fb_row(&enc->model, sx, r.y + i), STRIP_W);
	}
	uint32_t size = table_size(r.h);
	build_table(enc, r.h, size);

	int32_t *votes = s->votes; /* index: dy + r.h */
	memset(votes, 0, 2 * r.h * sizeof(*votes));
	int32_t best = 0, best_votes = 0;
	for (uint32_t i = 0; i < r.h; i++) {
		if (s->row_hash_fb[i] == s->row_hash_model[i]) {
			continue;
		}
		int32_t j = lookup(enc, s->row_hash_fb[i], size);
		if (j < 0) {
			continue;
		}
		int32_t dy = (int32_t)i - j;
		if (++votes[dy + (int32_t)r.h] > best_votes) {
			best_votes = votes[dy + (int32_t)r.h];
			best = dy;
		}
	}
	if (best_votes < MIN_VOTES) {
		return;
	}

	/* The longest run of whole rows that match at that offset and changed in place. */
	uint32_t lo = best > 0 ? (uint32_t)best : 0;
	uint32_t hi = best > 0 ? r.h : r.h - (uint32_t)-best;
	uint32_t run_start = 0, run_len = 0, run_changed = 0;
	uint32_t best_start = 0, best_len = 0, best_changed = 0;
	for (uint32_t i = lo; i < hi; i++) {
		const uint32_t *a = slim_fb_row(fb, r.x, r.y + i);
		if (rows_equal_rgb(a, slim_fb_row(&enc->model, r.x, r.y + i - best), r.w)) {
			if (run_len == 0) {
				run_start = i;
				run_changed = 0;
			}
			run_len++;
			run_changed += !rows_equal_rgb(a, slim_fb_row(&enc->model, r.x, r.y + i), r.w);
			if (run_changed > best_changed ||
					(run_changed == best_changed && run_start == best_start)) {
				best_start = run_start;
				best_len = run_len;
				best_changed = run_changed;
			}
		} else {
			run_len = 0;
		}
	}
	if (best_len < MIN_RUN || best_changed < MIN_RUN) {
		return;
	}
	struct slim_rect src = { r.x, (uint16_t)(r.y + best_start - best), r.w, (uint16_t)best_len };
	emit_copy(&enc->packer, src, r.x, (uint16_t)(r.y + best_start));
}
