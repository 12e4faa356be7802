/*
 * Loss recovery the SLIM way: a lost datagram is never sent again. Its
 * area is repainted from the current framebuffer by the next frame, so the
 * console gets the newest pixels, not the ones that were lost.
 *
 * A COPY that ran on the console after the loss may have copied pixels
 * that never arrived; its destination is repainted too, transitively, so
 * that after the repair the console is identical to the server whatever
 * subset of datagrams arrived.
 */
#include <stdlib.h>
#include "encoder-internal.h"

bool recovery_init(struct slim_recovery *rec, uint32_t width, uint32_t height)
{
	/* the rings may be an earlier encoder's (take_memory): reset below */
	if (!rec->records) {
		rec->records = calloc(REC_RING, sizeof(*rec->records));
		rec->copies = calloc(COPY_RING, sizeof(*rec->copies));
	}
	pixman_region32_init(&rec->repair);
	if (!rec->records || !rec->copies) {
		recovery_finish(rec);
		return false;
	}
	recovery_reset(rec, width, height);
	return true;
}

void recovery_finish(struct slim_recovery *rec)
{
	free(rec->records);
	free(rec->copies);
	rec->records = NULL;
	rec->copies = NULL;
	pixman_region32_fini(&rec->repair);
}

/* A new association or screen: nothing sent before matters any more. */
void recovery_reset(struct slim_recovery *rec, uint32_t width, uint32_t height)
{
	for (size_t i = 0; i < REC_RING; i++) {
		rec->records[i].state = REC_EMPTY;
	}
	rec->copies_logged = 0;
	rec->confirmed = 0;
	rec->last_sent = 0;
	rec->width = width;
	rec->height = height;
	pixman_region32_clear(&rec->repair);
	rec->repaint_all = true;
	rec->cursor_lost = true;
	if (rec->cache) {
		cache_reset(rec->cache); /* a console that said HELLO has an empty cache */
	}
}

void recovery_begin_dgram(struct slim_recovery *rec, uint32_t seq)
{
	struct seq_record *r = &rec->records[seq % REC_RING];
	r->seq = seq;
	r->state = REC_SENT;
	r->n = 0;
	r->cursor = false;
	rec->last_sent = seq;
}

void recovery_note(struct slim_recovery *rec, uint32_t seq, struct slim_rect rect)
{
	struct seq_record *r = &rec->records[seq % REC_RING];
	if (r->n > 0) {
		/* Tiles of a row arrive left to right: grow the last one when they touch. */
		struct slim_rect *last = &r->r[r->n - 1];
		if (last->y == rect.y && last->h == rect.h && last->x + last->w == rect.x) {
			last->w = (uint16_t)(last->w + rect.w);
			return;
		}
	}
	if (r->n < REC_RECTS) {
		r->r[r->n++] = rect;
		return;
	}
	/* Full: merge into the last slot's bounds. Repainting more is harmless. */
	struct slim_rect *last = &r->r[REC_RECTS - 1];
	uint32_t x1 = rect.x < last->x ? rect.x : last->x;
	uint32_t y1 = rect.y < last->y ? rect.y : last->y;
	uint32_t x2 = (uint32_t)last->x + last->w, y2 = (uint32_t)last->y + last->h;
	x2 = (uint32_t)rect.x + rect.w > x2 ? (uint32_t)rect.x + rect.w : x2;
	y2 = (uint32_t)rect.y + rect.h > y2 ? (uint32_t)rect.y + rect.h : y2;
	*last = (struct slim_rect){ (uint16_t)x1, (uint16_t)y1, (uint16_t)(x2 - x1),
		(uint16_t)(y2 - y1) };
}

void recovery_note_copy(struct slim_recovery *rec, uint32_t seq, struct slim_rect src,
		uint16_t dx, uint16_t dy)
{
	rec->copies[rec->copies_logged % COPY_RING] = (struct copy_entry){
		.seq = seq, .src = src, .dx = dx, .dy = dy,
	};
	rec->copies_logged++;
}

static int32_t seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

/* Destinations of COPYs after `since` that read from the area under repair. */
static bool taint_copies(struct slim_recovery *rec, uint32_t since)
{
	uint64_t n = rec->copies_logged < COPY_RING ? rec->copies_logged : COPY_RING;
	uint64_t first = rec->copies_logged - n;
	/* Find the oldest logged COPY after `since`; if it was forgotten, give up. */
	uint64_t i = rec->copies_logged;
	while (i > first && seq_diff(rec->copies[(i - 1) % COPY_RING].seq, since) > 0) {
		i--;
	}
	if (i == first && n == COPY_RING && seq_diff(rec->copies[first % COPY_RING].seq, since) > 0) {
		return false;
	}
	for (; i < rec->copies_logged; i++) {
		const struct copy_entry *c = &rec->copies[i % COPY_RING];
		if (region_touches(&rec->repair, c->src)) {
			pixman_region32_union_rect(&rec->repair, &rec->repair,
				c->dx, c->dy, c->src.w, c->src.h);
		}
	}
	return true;
}

uint32_t recovery_lost(struct slim_recovery *rec, uint32_t first, uint32_t last)
{
	/* Never trust the console about datagrams not sent yet. */
	if (seq_diff(last, rec->last_sent) > 0) {
		last = rec->last_sent;
	}
	if (seq_diff(last, first) < 0) {
		return 0;
	}
	if ((uint32_t)(last - first) >= REC_RING) {
		rec->repaint_all = true;
		if (rec->cache) {
			cache_lost(rec->cache, first, NULL);
		}
		return last - first + 1;
	}
	uint32_t found = 0, oldest = 0;
	for (uint32_t s = first;; s++) {
		struct seq_record *r = &rec->records[s % REC_RING];
		if (r->seq == s && r->state == REC_SENT) {
			for (uint8_t k = 0; k < r->n; k++) {
				pixman_region32_union_rect(&rec->repair, &rec->repair,
					r->r[k].x, r->r[k].y, r->r[k].w, r->r[k].h);
			}
			r->state = REC_RECOVERED;
			rec->cursor_lost |= r->cursor;
			if (found++ == 0) {
				oldest = s;
			}
		} else if (r->seq != s && s != 0 && seq_diff(s, rec->confirmed) > 0) {
			/* Forgotten before it was confirmed: repaint everything to be sure. */
			rec->repaint_all = true;
		}
		if (s == last) {
			break;
		}
	}
	if (found > 0 && !taint_copies(rec, oldest)) {
		rec->repaint_all = true;
	}
	/* what the lost datagrams painted, and copied on since, is wrong on the console */
	if (rec->cache) {
		cache_lost(rec->cache, first, rec->repaint_all ? NULL : &rec->repair);
	}
	return found;
}

uint32_t recovery_ack(struct slim_recovery *rec, uint32_t highest)
{
	if (seq_diff(highest, rec->last_sent) > 0 || seq_diff(highest, rec->confirmed) <= 0) {
		return 0;
	}
	uint32_t lost = 0;
	/*
	 * The console reports losses only among its last SLIM_SEQ_WINDOW numbers:
	 * what is older and still unconfirmed may have been lost unreported.
	 */
	uint32_t horizon = highest - SLIM_SEQ_WINDOW + 1;
	if (seq_diff(horizon, rec->confirmed) > 1) {
		lost = recovery_lost(rec, rec->confirmed + 1, horizon - 1);
	}
	uint32_t from = rec->confirmed + 1;
	if (highest - from >= REC_RING) {
		from = highest - REC_RING + 1;
	}
	for (uint32_t s = from; s != highest + 1; s++) {
		struct seq_record *r = &rec->records[s % REC_RING];
		if (r->seq == s && r->state == REC_SENT && seq_diff(s, horizon) >= 0) {
			r->state = REC_CONFIRMED;
		}
	}
	rec->confirmed = highest;
	if (rec->cache) {
		cache_confirm(rec->cache, highest);
	}
	return lost;
}
