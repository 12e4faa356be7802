#include <string.h>
#include "input-queue.h"

void slim_input_queue_init(struct slim_input_queue *q, struct slim_input_stats *stats)
{
	memset(q, 0, sizeof(*q));
	q->stats = stats;
	/* the queue stays full as long as the server is silent: say so once a second */
	q->full_log = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(1);
	slim_input_queue_reset(q, 1);
}

void slim_input_queue_reset(struct slim_input_queue *q, uint32_t first)
{
	q->head = 0;
	q->first = first;
	q->count = 0;
	q->sent = 0;
	/* a new association may be another server, on another path */
	q->have_rtt = false;
	q->srtt_us = 0;
	q->backoff = 0;
	q->rto_at_us = 0;
	q->room_made = false;
}

uint32_t slim_input_queue_next(const struct slim_input_queue *q)
{
	return q->first + q->count;
}

static struct slim_input_slot *slot(struct slim_input_queue *q, uint32_t i)
{
	return &q->slots[(q->head + i) % SLIM_INPUT_QUEUE_MAX];
}

static void hold(struct slim_input_queue *q, uint16_t code)
{
	for (size_t i = 0; i < q->n_held; i++) {
		if (q->held[i] == code) {
			return;
		}
	}
	/* more than SLIM_HELD_MAX at once is no keyboard: the extras go unreported */
	if (q->n_held < SLIM_HELD_MAX) {
		q->held[q->n_held++] = code;
	}
}

static void unhold(struct slim_input_queue *q, uint16_t code)
{
	for (size_t i = 0; i < q->n_held; i++) {
		if (q->held[i] == code) {
			q->held[i] = q->held[--q->n_held];
			return;
		}
	}
}

void slim_input_queue_track(struct slim_input_queue *q, const struct slim_wire_input *ev,
		size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (ev[i].kind != SLIM_INPUT_KEY && ev[i].kind != SLIM_INPUT_BUTTON) {
			continue;
		}
		/* a repeat (2) changes nothing */
		if (ev[i].value == 1) {
			hold(q, ev[i].code);
		} else if (ev[i].value == 0) {
			unhold(q, ev[i].code);
		}
	}
}

size_t slim_input_queue_push(struct slim_input_queue *q, const struct slim_wire_input *ev,
		size_t n, uint64_t now_us)
{
	slim_input_queue_track(q, ev, n);
	size_t room = SLIM_INPUT_QUEUE_MAX - q->count;
	size_t queued = n < room ? n : room;
	for (size_t i = 0; i < queued; i++) {
		*slot(q, q->count++) = (struct slim_input_slot){ .ev = ev[i] };
	}
	if (queued < n) {
		q->stats->dropped += n - queued;
		if (slim_ratelimit(&q->full_log, now_us)) {
			slim_log(SLIM_LOG_ERROR, "input: %u events wait for the server's acknowledgement: "
				"new input is dropped", q->count);
		}
	}
	return queued;
}

uint64_t slim_input_queue_rto_us(const struct slim_input_queue *q)
{
	uint64_t rto = SLIM_INPUT_RTO_INITIAL_US;
	if (q->have_rtt) {
		rto = 2 * q->srtt_us + SLIM_INPUT_RTO_SLACK_US;
		rto = rto > SLIM_INPUT_RTO_MIN_US ? rto : SLIM_INPUT_RTO_MIN_US;
	}
	for (uint32_t i = 0; i < q->backoff && rto < SLIM_INPUT_RTO_MAX_US; i++) {
		rto *= 2;
	}
	return rto < SLIM_INPUT_RTO_MAX_US ? rto : SLIM_INPUT_RTO_MAX_US;
}

/* How many events fit beside a HELD of the current set in what is left of `w`. */
static size_t events_that_fit(const struct slim_input_queue *q, const struct slim_writer *w)
{
	size_t held = sizeof(struct slim_wire_cmd) + sizeof(struct slim_wire_held) +
		q->n_held * sizeof(uint16_t);
	size_t room = slim_writer_room(w);
	if (room < held + sizeof(struct slim_wire_input_hdr)) {
		return 0;
	}
	return (room - held - sizeof(struct slim_wire_input_hdr)) / sizeof(struct slim_wire_input);
}

bool slim_input_queue_write(struct slim_input_queue *q, struct slim_writer *w, uint64_t now_us)
{
	size_t n = events_that_fit(q, w);
	n = n < q->count ? n : q->count;
	if (n > 0) {
		/* the ring may wrap: copy the events out in order */
		struct slim_wire_input ev[SLIM_INPUT_QUEUE_MAX];
		for (uint32_t i = 0; i < n; i++) {
			struct slim_input_slot *s = slot(q, i);
			ev[i] = s->ev;
			if (s->sent_us == 0) {
				/* 0 means "not yet": a clock at 0 counts as 1 */
				s->sent_us = now_us ? now_us : 1;
				q->stats->sent++;
			} else {
				s->resent = true;
			}
		}
		if (!slim_put_input(w, q->first, ev, n)) {
			return false;
		}
		q->sent = n > q->sent ? (uint32_t)n : q->sent;
		q->rto_at_us = now_us + slim_input_queue_rto_us(q);
	}
	q->last_send_us = now_us;
	q->room_made = false;
	return slim_put_held(w, slim_input_queue_next(q), q->held, q->n_held);
}

void slim_input_queue_note_send(struct slim_input_queue *q, uint64_t now_us)
{
	q->last_send_us = now_us;
}

void slim_input_queue_ack(struct slim_input_queue *q, uint32_t next, uint64_t now_us)
{
	int32_t acked = (int32_t)(next - q->first);
	/* old news, or events never sent: neither says anything */
	if (acked <= 0 || (uint32_t)acked > q->sent) {
		return;
	}
	/*
	 * The newest event acknowledged measures the round trip if it went in
	 * one datagram only (Karn): otherwise it is not known which one the
	 * acknowledgement answers.
	 */
	struct slim_input_slot *newest = slot(q, (uint32_t)acked - 1);
	if (!newest->resent && now_us >= newest->sent_us) {
		uint64_t sample = now_us - newest->sent_us;
		q->srtt_us = q->have_rtt ? (7 * q->srtt_us + sample) / 8 : sample;
		q->have_rtt = true;
	}
	q->head = (q->head + (uint32_t)acked) % SLIM_INPUT_QUEUE_MAX;
	q->first += (uint32_t)acked;
	q->count -= (uint32_t)acked;
	q->sent -= (uint32_t)acked;
	q->stats->acked += (uint64_t)acked;
	q->backoff = 0;
	/* what is left went with the acknowledged events, or has yet to go */
	q->rto_at_us = q->sent > 0 ? now_us + slim_input_queue_rto_us(q) : 0;
	/* events that did not fit the datagram may fit now: they go at the next tick */
	q->room_made = q->sent < q->count;
}

bool slim_input_queue_tick(struct slim_input_queue *q, struct slim_writer *w, uint64_t now_us)
{
	if (q->sent > 0 && now_us >= q->rto_at_us) {
		/* the doubled timeout applies from this retransmission on */
		if (slim_input_queue_rto_us(q) < SLIM_INPUT_RTO_MAX_US) {
			q->backoff++;
		}
		q->stats->retransmits++;
		return slim_input_queue_write(q, w, now_us);
	}
	if (q->room_made) {
		return slim_input_queue_write(q, w, now_us);
	}
	if (q->n_held > 0 && now_us >= q->last_send_us + SLIM_INPUT_KEEPALIVE_US) {
		return slim_input_queue_write(q, w, now_us);
	}
	return false;
}

/* Milliseconds from now to `at`, rounded up so that the tick finds it due. */
static int ms_until(uint64_t at_us, uint64_t now_us)
{
	if (at_us <= now_us) {
		return 0;
	}
	uint64_t ms = (at_us - now_us + 999) / 1000;
	return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

int slim_input_queue_timeout_ms(const struct slim_input_queue *q, uint64_t now_us)
{
	if (q->room_made) {
		return 0;
	}
	int ms = -1;
	if (q->sent > 0) {
		ms = ms_until(q->rto_at_us, now_us);
	}
	if (q->n_held > 0) {
		int keepalive = ms_until(q->last_send_us + SLIM_INPUT_KEEPALIVE_US, now_us);
		ms = ms < 0 || keepalive < ms ? keepalive : ms;
	}
	return ms;
}
