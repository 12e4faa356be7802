/*
 * The console's input on its way to the server (slim-protocol.md §7):
 * every event gets a number and stays queued until an INPUT_ACK says the
 * server applied it. Each INPUT carries all that is unacknowledged, oldest
 * first, so the events of a lost datagram ride in the next one; when
 * nothing follows, they go again after a retransmission timeout. HELD
 * follows every INPUT and, while anything is held, goes alone when the
 * console has said nothing for a while, so that the server can release a
 * key whose release was lost, and tell a console that died with a key
 * down from a user holding it.
 *
 * No I/O and no clock of its own: the caller passes the time and sends
 * what the queue writes into its datagram.
 */
#ifndef SLIM_INPUT_QUEUE_H
#define SLIM_INPUT_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-codec.h"
#include "slim-log.h"

/* Unacknowledged events kept; more are dropped (the held set still follows them). */
#define SLIM_INPUT_QUEUE_MAX 512

/*
 * The retransmission timeout: max(RTO_MIN, 2 * srtt + RTO_SLACK), or
 * RTO_INITIAL before the first round trip is measured; doubled by each
 * retransmission, never more than RTO_MAX, well under the 600 ms after
 * which a client autorepeats a key it thinks held.
 */
#define SLIM_INPUT_RTO_MIN_US 30000
#define SLIM_INPUT_RTO_SLACK_US 10000
#define SLIM_INPUT_RTO_INITIAL_US 100000
#define SLIM_INPUT_RTO_MAX_US 250000
/* While anything is held, the longest the console stays silent. */
#define SLIM_INPUT_KEEPALIVE_US 250000

struct slim_input_stats {
	uint64_t sent;        /* events sent (the first time) */
	uint64_t retransmits; /* datagrams sent again for want of an INPUT_ACK */
	uint64_t acked;       /* events the server acknowledged */
	uint64_t dropped;     /* events dropped because the queue was full */
};

struct slim_input_slot {
	struct slim_wire_input ev;
	uint64_t sent_us; /* when it first went; 0: not yet (it did not fit) */
	bool resent;      /* it went in more than one datagram: no round trip to measure */
};

struct slim_input_queue {
	/* numbers first .. first + count - 1, from slots[head] on, in a ring */
	struct slim_input_slot slots[SLIM_INPUT_QUEUE_MAX];
	uint32_t head;
	uint32_t first;
	uint32_t count;
	uint32_t sent;     /* how many of them (from the oldest) went at least once */

	uint16_t held[SLIM_HELD_MAX];
	size_t n_held;

	bool have_rtt;
	uint64_t srtt_us;
	uint32_t backoff;   /* retransmissions since the server last acknowledged something new */
	uint64_t rto_at_us; /* when what is unacknowledged goes again; 0: nothing waits */
	uint64_t last_send_us; /* the console's latest datagram of any kind */
	bool room_made;     /* an acknowledgement made room for events that did not fit */

	struct slim_input_stats *stats;
	struct slim_ratelimit full_log;
};

/* Empty, numbering from 1; `stats` (required) receives the counts. */
void slim_input_queue_init(struct slim_input_queue *q, struct slim_input_stats *stats);
/*
 * A new association: nothing is unacknowledged and numbers start at
 * `first` (1 on the wire). The held set stays: the keys are still down.
 */
void slim_input_queue_reset(struct slim_input_queue *q, uint32_t first);

/*
 * Numbers and queues events; returns how many were queued (the rest were
 * dropped, the queue being full). The held set follows all of them.
 */
size_t slim_input_queue_push(struct slim_input_queue *q, const struct slim_wire_input *ev,
		size_t n, uint64_t now_us);
/* Events that go nowhere (no server listens): only the held set follows them. */
void slim_input_queue_track(struct slim_input_queue *q, const struct slim_wire_input *ev,
		size_t n);

/*
 * Writes INPUT with every unacknowledged event that fits (none if there
 * are none), then HELD, into `w`, which the caller sends now. Returns
 * false if not even HELD fitted.
 */
bool slim_input_queue_write(struct slim_input_queue *q, struct slim_writer *w, uint64_t now_us);
/* The console sent a datagram (any kind): no keepalive is due for a while. */
void slim_input_queue_note_send(struct slim_input_queue *q, uint64_t now_us);
/* The server applied every event numbered below `next`. */
void slim_input_queue_ack(struct slim_input_queue *q, uint32_t next, uint64_t now_us);

/*
 * Writes into `w` what is due at `now_us` (a retransmission, events that
 * did not fit before, or a keepalive HELD) and returns true, or returns
 * false when nothing is.
 */
bool slim_input_queue_tick(struct slim_input_queue *q, struct slim_writer *w, uint64_t now_us);
/* Milliseconds until slim_input_queue_tick has something to do; -1: never. */
int slim_input_queue_timeout_ms(const struct slim_input_queue *q, uint64_t now_us);

/* The current retransmission timeout, backoff included. */
uint64_t slim_input_queue_rto_us(const struct slim_input_queue *q);
/* The number the next event gets. */
uint32_t slim_input_queue_next(const struct slim_input_queue *q);

#endif
