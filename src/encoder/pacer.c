#include <stdlib.h>
#include <string.h>
#include "pacer.h"
#include "slim-proto.h"

/* Datagrams remembered for the delivery rate, by sequence number. */
#define PACER_RING 8192
/* Datagrams that may wait; past this the oldest goes whatever the pace. */
#define PACER_QUEUE_MAX 32768
/* Buffers kept for the next datagrams to wait, so a steady stream allocates nothing. */
#define PACER_SPARE 64
/* The gain cycle: eight phases of this long. */
#define PACER_PHASE_US 100000
#define PACER_MIN_RTT_WINDOW_US 10000000
/*
 * A round trip this far above its minimum (or half the minimum, or a
 * datagram's time at the estimated rate) means a queue; less is jitter.
 */
#define PACER_QUEUE_US 4000
/* ACKs in a row that must see one before a first estimate is taken. */
#define PACER_QUEUE_ACKS 3
/*
 * No queue seen for this long, and the estimate grew by a fifth since:
 * the link is not what limits us (a LAN, or a link that got faster). The
 * estimate is forgotten and nothing is held back until a queue shows again.
 */
#define PACER_FORGET_US 5000000
/* Never paced slower than this, whatever the samples said. */
#define PACER_MIN_RATE 250000
/* Bytes that may leave at once: this long at the pacing rate, two datagrams at least. */
#define PACER_BURST_US 2000
#define PACER_MIN_BURST (2 * (SLIM_DEFAULT_MTU + SLIM_PACER_OVERHEAD))
/* What a waiting datagram's buffer holds (larger ones get one of their own). */
#define PACER_BUF SLIM_DEFAULT_MTU
/* A sample of fewer bytes says more about the console's timing than about the link. */
#define PACER_SAMPLE_MIN_BYTES (8 * SLIM_DEFAULT_MTU)

struct queued {
	uint8_t *buf;
	size_t len;
	uint32_t seq;
	bool droppable, frame_end;
};

/* What the delivery rate needs of a datagram sent (BBR's per-packet state). */
struct record {
	uint32_t seq;
	uint32_t len;      /* on the wire */
	uint64_t sent_us;
	uint64_t delivered, delivered_us, first_sent_us; /* as they were when it was sent */
	uint64_t pacing_bps; /* what it was sent at; 0: nothing held back */
};

/* The datagrams that wait, in order: a ring, and buffers kept for the next ones. */
struct pacer_queue {
	struct queued *q; /* a ring of cap; len waiting from head */
	size_t head, len, cap;
	uint8_t *spare[PACER_SPARE]; /* PACER_BUF bytes each */
	size_t n_spare;
};

/* What the delivery rate is measured from (BBR's connection state). */
struct pacer_delivery {
	struct record *rec; /* PACER_RING of them, by sequence number */
	bool any_sent;
	uint32_t last_sent_seq, acked_seq;
	uint64_t delivered, delivered_us, first_sent_us;
	/* on the wire, of datagrams with a sequence number; of them, reported lost */
	uint64_t sent_bytes, lost_bytes;
};

/* What the round trips say of a queue on the path. */
struct pacer_path {
	bool draining;       /* the last round trip said a queue stands on the path */
	uint32_t queued_acks; /* ACKs in a row that said so */
	uint64_t queue_us, queue_bps; /* when one last did, and the estimate then */
	uint64_t raised_us;  /* when a sample last raised the estimate */
	uint64_t drain_until_us; /* what went before the first estimate still drains */
	uint64_t min_rtt_us; /* when the minimum round trip was */
};

struct slim_pacer {
	slim_pacer_send_fn send;
	void *send_data;
	struct pacer_queue queue;
	struct pacer_delivery delivery;
	struct pacer_path path;
	/* the token bucket: bytes that may leave now, as of tokens_us */
	double tokens;
	uint64_t tokens_us;
	struct slim_pacer_stats stats;
};

struct slim_pacer *slim_pacer_create(slim_pacer_send_fn send, void *send_data)
{
	struct slim_pacer *p = calloc(1, sizeof(*p));
	if (!p) {
		return NULL;
	}
	p->send = send;
	p->send_data = send_data;
	p->delivery.rec = calloc(PACER_RING, sizeof(*p->delivery.rec));
	if (!p->delivery.rec) {
		slim_pacer_destroy(p);
		return NULL;
	}
	return p;
}

static void release(struct slim_pacer *p, uint8_t *buf, size_t len)
{
	if (len <= PACER_BUF && p->queue.n_spare < PACER_SPARE) {
		p->queue.spare[p->queue.n_spare++] = buf;
	} else {
		free(buf);
	}
}

static struct queued *at(struct slim_pacer *p, size_t i)
{
	return &p->queue.q[(p->queue.head + i) % p->queue.cap];
}

static void forget_queue(struct slim_pacer *p)
{
	for (size_t i = 0; i < p->queue.len; i++) {
		release(p, at(p, i)->buf, at(p, i)->len);
	}
	p->queue.head = p->queue.len = 0;
	p->stats.backlog_bytes = 0;
	p->stats.backlog_datagrams = 0;
	p->stats.backlog_droppable_frames = 0;
}

void slim_pacer_destroy(struct slim_pacer *p)
{
	if (!p) {
		return;
	}
	forget_queue(p);
	for (size_t i = 0; i < p->queue.n_spare; i++) {
		free(p->queue.spare[i]);
	}
	free(p->queue.q);
	free(p->delivery.rec);
	free(p);
}

void slim_pacer_reset(struct slim_pacer *p)
{
	forget_queue(p);
	struct record *rec = p->delivery.rec;
	memset(rec, 0, PACER_RING * sizeof(*rec));
	p->delivery = (struct pacer_delivery){ .rec = rec };
	p->path = (struct pacer_path){ 0 };
	p->tokens = 0;
	p->tokens_us = 0;
	p->stats = (struct slim_pacer_stats){ 0 };
}

const struct slim_pacer_stats *slim_pacer_stats(const struct slim_pacer *p)
{
	return &p->stats;
}

static uint32_t seq_of(const uint8_t *buf, size_t len)
{
	struct slim_wire_dgram d;
	if (len < sizeof(d)) {
		return 0;
	}
	memcpy(&d, buf, sizeof(d));
	return d.seq;
}

/* The pacing rate now: the estimate, probing above it and draining below in turn. */
static uint64_t pacing_bps(struct slim_pacer *p, uint64_t now_us)
{
	if (p->stats.rate_bps == 0) {
		return 0;
	}
	/*
	 * Probing above the rate finds a faster link, the phase after drains
	 * what it queued; the rest of the time a little under the rate keeps
	 * the bottleneck's own buffer (a token bucket's tokens) from running
	 * dry, so that an answer to input passes it at once.
	 */
	static const double gain[8] = { 1.1, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95 };
	double g = p->path.draining || now_us < p->path.drain_until_us ? 0.5 :
		gain[(now_us / PACER_PHASE_US) % 8];
	uint64_t bps = (uint64_t)((double)p->stats.rate_bps * g);
	return bps > PACER_MIN_RATE ? bps : PACER_MIN_RATE;
}

static double burst_bytes(uint64_t bps)
{
	double b = (double)bps * PACER_BURST_US / 8e6;
	return b > PACER_MIN_BURST ? b : PACER_MIN_BURST;
}

static void refill(struct slim_pacer *p, uint64_t now_us)
{
	uint64_t bps = pacing_bps(p, now_us);
	p->stats.pacing_bps = bps;
	if (bps == 0) {
		p->tokens = burst_bytes(0);
	} else if (now_us > p->tokens_us) {
		p->tokens += (double)(now_us - p->tokens_us) * (double)bps / 8e6;
		double cap = burst_bytes(bps);
		p->tokens = p->tokens < cap ? p->tokens : cap;
	}
	p->tokens_us = now_us;
}

static bool may_go(const struct slim_pacer *p, bool droppable)
{
	if (p->stats.pacing_bps == 0) {
		return true;
	}
	return p->tokens > 0 || (!droppable && p->tokens > -burst_bytes(p->stats.pacing_bps));
}

/* Out on the wire (its round trip starts now). */
static void transmit(struct slim_pacer *p, const uint8_t *buf, size_t len, uint64_t now_us)
{
	struct pacer_delivery *d = &p->delivery;
	uint32_t seq = seq_of(buf, len);
	p->send(p->send_data, buf, len);
	p->tokens -= (double)(len + SLIM_PACER_OVERHEAD);
	if (seq == 0) {
		return; /* sound: nothing acknowledges it */
	}
	p->stats.sent++;
	d->sent_bytes += len + SLIM_PACER_OVERHEAD;
	if (!d->any_sent || d->acked_seq == d->last_sent_seq) {
		/* nothing in flight: the interval starts now, not at the last ACK */
		d->delivered_us = d->first_sent_us = now_us;
	}
	d->rec[seq % PACER_RING] = (struct record){
		.seq = seq, .len = (uint32_t)(len + SLIM_PACER_OVERHEAD), .sent_us = now_us,
		.delivered = d->delivered, .delivered_us = d->delivered_us,
		.first_sent_us = d->first_sent_us, .pacing_bps = p->stats.pacing_bps,
	};
	if (!d->any_sent) {
		d->acked_seq = seq - 1;
	}
	d->any_sent = true;
	d->last_sent_seq = seq;
}

static bool enqueue(struct slim_pacer *p, const uint8_t *buf, size_t len, uint32_t seq,
		bool droppable)
{
	if (p->queue.len == p->queue.cap) {
		size_t cap = p->queue.cap ? 2 * p->queue.cap : 64;
		struct queued *q = malloc(cap * sizeof(*q));
		if (!q) {
			return false;
		}
		for (size_t i = 0; i < p->queue.len; i++) {
			q[i] = *at(p, i);
		}
		free(p->queue.q);
		p->queue.q = q;
		p->queue.cap = cap;
		p->queue.head = 0;
	}
	uint8_t *copy = len <= PACER_BUF && p->queue.n_spare ? p->queue.spare[--p->queue.n_spare] :
		malloc(len > PACER_BUF ? len : PACER_BUF);
	if (!copy) {
		return false;
	}
	memcpy(copy, buf, len);
	*at(p, p->queue.len) = (struct queued){ copy, len, seq, droppable, false };
	p->queue.len++;
	p->stats.backlog_bytes += len;
	p->stats.backlog_datagrams++;
	return true;
}

static void pop(struct slim_pacer *p, uint64_t now_us)
{
	struct queued e = *at(p, 0);
	p->queue.head = (p->queue.head + 1) % p->queue.cap;
	p->queue.len--;
	p->stats.backlog_bytes -= e.len;
	p->stats.backlog_datagrams--;
	if (e.droppable && e.frame_end) {
		p->stats.backlog_droppable_frames--;
	}
	/* stamped with the time it really leaves: the ACK's echo measures the path, not the wait */
	if (e.len >= sizeof(struct slim_wire_dgram)) {
		memcpy(e.buf + offsetof(struct slim_wire_dgram, time_us), &now_us, sizeof(now_us));
	}
	transmit(p, e.buf, e.len, now_us);
	release(p, e.buf, e.len);
}

void slim_pacer_send(struct slim_pacer *p, const uint8_t *buf, size_t len, bool droppable,
		uint64_t now_us)
{
	if (len > SLIM_MAX_MTU) {
		return;
	}
	uint32_t seq = seq_of(buf, len);
	refill(p, now_us);
	if (seq == 0 || (p->queue.len == 0 && may_go(p, droppable))) {
		/* it was stamped when it was made, a moment ago */
		transmit(p, buf, len, now_us);
		return;
	}
	if (p->queue.len >= PACER_QUEUE_MAX) {
		pop(p, now_us);
	}
	if (!enqueue(p, buf, len, seq, droppable)) {
		/* no memory to wait in: late is better than lost */
		transmit(p, buf, len, now_us);
	}
}

void slim_pacer_frame_end(struct slim_pacer *p)
{
	if (p->queue.len == 0) {
		return; /* it has gone already */
	}
	struct queued *e = at(p, p->queue.len - 1);
	if (!e->frame_end && e->droppable) {
		p->stats.backlog_droppable_frames++;
	}
	e->frame_end = true;
}

int64_t slim_pacer_run(struct slim_pacer *p, uint64_t now_us)
{
	refill(p, now_us);
	while (p->queue.len > 0 && may_go(p, at(p, 0)->droppable)) {
		pop(p, now_us);
	}
	if (p->queue.len == 0) {
		return -1;
	}
	/* the tokens the head needs, at the pacing rate */
	double need = at(p, 0)->droppable ? -p->tokens :
		-burst_bytes(p->stats.pacing_bps) - p->tokens;
	int64_t us = (int64_t)(need * 8e6 / (double)p->stats.pacing_bps) + 1;
	return us > 0 ? us : 1;
}

size_t slim_pacer_drop(struct slim_pacer *p,
		void (*dropped)(void *data, uint32_t first, uint32_t last), void *data)
{
	size_t kept = 0, n = 0;
	bool in_run = false;
	uint32_t first = 0, last = 0;
	for (size_t i = 0; i < p->queue.len; i++) {
		struct queued e = *at(p, i);
		if (!e.droppable) {
			*at(p, kept++) = e;
			continue;
		}
		if (in_run && e.seq != last + 1) {
			dropped(data, first, last);
			in_run = false;
		}
		if (!in_run) {
			first = e.seq;
			in_run = true;
		}
		last = e.seq;
		p->stats.backlog_bytes -= e.len;
		release(p, e.buf, e.len);
		n++;
	}
	if (in_run) {
		dropped(data, first, last);
	}
	p->queue.len = kept;
	p->stats.backlog_datagrams = (uint32_t)kept;
	p->stats.backlog_droppable_frames = 0;
	p->stats.dropped += n;
	return n;
}

static void update_rtt(struct slim_pacer *p, uint64_t rtt_us, uint64_t now_us)
{
	struct pacer_path *path = &p->path;
	if (rtt_us == 0) {
		return;
	}
	p->stats.rtt_us = rtt_us;
	if (p->stats.min_rtt_us == 0 || rtt_us <= p->stats.min_rtt_us ||
			now_us - path->min_rtt_us > PACER_MIN_RTT_WINDOW_US) {
		p->stats.min_rtt_us = rtt_us;
		path->min_rtt_us = now_us;
	}
	/*
	 * A queue stands on the path: send below the rate until it has
	 * drained. Not a queue: jitter, and a datagram being sent at a slow
	 * bottleneck (the minimum was perhaps seen while it was faster).
	 */
	uint64_t min = p->stats.min_rtt_us;
	uint64_t slack = min / 2 > PACER_QUEUE_US ? min / 2 : PACER_QUEUE_US;
	if (p->stats.rate_bps) {
		uint64_t one = (SLIM_DEFAULT_MTU + SLIM_PACER_OVERHEAD) * 8000000ull /
			p->stats.rate_bps;
		slack = one > slack ? one : slack;
	}
	bool was = path->draining;
	path->draining = rtt_us > min + slack;
	path->queued_acks = path->draining ? path->queued_acks + 1 : 0;
	if (path->draining) {
		path->queue_us = now_us;
		if (!was) {
			path->queue_bps = p->stats.rate_bps; /* the rate a queue formed at */
		}
	} else if (p->stats.rate_bps && now_us - path->queue_us > PACER_FORGET_US &&
			p->stats.rate_bps > path->queue_bps / 5 * 6) {
		p->stats.rate_bps = 0;
	}
}

static void take_sample(struct slim_pacer *p, const struct record *r, uint64_t now_us)
{
	uint64_t send_elapsed = r->sent_us - r->first_sent_us;
	uint64_t ack_elapsed = now_us - r->delivered_us;
	uint64_t interval = send_elapsed > ack_elapsed ? send_elapsed : ack_elapsed;
	uint64_t bytes = p->delivery.delivered - r->delivered;
	if (interval == 0 || bytes == 0) {
		return;
	}
	uint64_t sample = (uint64_t)((double)bytes * 8e6 / (double)interval);
	uint64_t *rate = &p->stats.rate_bps;
	bool big = bytes >= PACER_SAMPLE_MIN_BYTES;
	if (*rate == 0) {
		/*
		 * A queue that stands: a link's. (A console slow to read its
		 * socket adds what it waited to the echo: no queue.)
		 */
		if (big && p->path.queued_acks >= PACER_QUEUE_ACKS) {
			/*
			 * A queue built while nothing was held back: the link is the
			 * bottleneck, and this its rate. What waits in it drains first.
			 */
			*rate = sample;
			uint64_t in_flight = p->delivery.sent_bytes - p->delivery.delivered - p->delivery.lost_bytes;
			p->path.drain_until_us = now_us + in_flight * 8000000 / sample;
			p->path.queue_bps = sample;
		}
		return;
	}
	if (sample > *rate && !p->path.draining) {
		/*
		 * The link did at least this, or a burst its bucket let through
		 * made it look so: a tenth more at most, once a gain cycle.
		 */
		if (now_us - p->path.raised_us >= 8 * PACER_PHASE_US) {
			uint64_t up = *rate + *rate / 10;
			*rate = sample < up ? sample : up;
			p->path.raised_us = now_us;
		}
	} else if (big && p->path.draining && r->pacing_bps && sample < r->pacing_bps / 10 * 9) {
		/*
		 * A queue stands and the link delivered less than it was sent:
		 * it was the bottleneck, and delivers the sample (halving at most
		 * at once). A sample near what was sent measured the sender.
		 */
		*rate = sample > *rate / 2 ? (sample < *rate ? sample : *rate) : *rate / 2;
	}
}

void slim_pacer_lost(struct slim_pacer *p, uint32_t first, uint32_t last, uint64_t now_us)
{
	struct pacer_delivery *d = &p->delivery;
	/* only what is in flight: the console's word is worth no more work than that */
	if ((int32_t)(first - (d->acked_seq + 1)) < 0) {
		first = d->acked_seq + 1;
	}
	if ((int32_t)(last - d->last_sent_seq) > 0) {
		last = d->last_sent_seq;
	}
	if (!d->any_sent || (int32_t)(last - first) < 0 || last - first >= PACER_RING) {
		return;
	}
	for (uint32_t s = first;; s++) {
		struct record *r = &d->rec[s % PACER_RING];
		/* not delivered: an ACK past it must not count it */
		if (r->seq == s && r->len) {
			d->lost_bytes += r->len;
			r->len = 0;
		}
		if (s == last) {
			break;
		}
	}
}

void slim_pacer_acked(struct slim_pacer *p, uint32_t highest_seq, uint64_t rtt_us,
		uint64_t now_us)
{
	struct pacer_delivery *d = &p->delivery;
	update_rtt(p, rtt_us, now_us);
	if (!d->any_sent || (int32_t)(highest_seq - d->acked_seq) <= 0 ||
			(int32_t)(highest_seq - d->last_sent_seq) > 0) {
		return;
	}
	uint32_t from = d->acked_seq + 1;
	if (highest_seq - from >= PACER_RING) {
		from = highest_seq - PACER_RING + 1;
	}
	for (uint32_t s = from; s != highest_seq + 1; s++) {
		const struct record *r = &d->rec[s % PACER_RING];
		if (r->seq == s && r->len) {
			d->delivered += r->len;
		}
	}
	d->acked_seq = highest_seq;
	d->delivered_us = now_us;
	const struct record *r = &d->rec[highest_seq % PACER_RING];
	if (r->seq != highest_seq || r->len == 0) {
		return;
	}
	d->first_sent_us = r->sent_us;
	take_sample(p, r, now_us);
}
