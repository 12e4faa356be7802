/*
 * The pacer against a simulated bottleneck (a FIFO drained at a fixed
 * rate, like tc's tbf, and a millisecond each way), in simulated time: it
 * learns the rate from the ACKs, keeps the bottleneck's queue short, lets
 * firm datagrams through in order and drops only droppable ones. And SLIM's
 * allocation (share.c) on the paper's cases.
 */
#include <stdio.h>
#include <string.h>
#include "pacer.h"
#include "share.h"
#include "slim-proto.h"
#include "test-util.h"

#define DGRAM 1400
#define PROP_US 1000
#define MAX_ACKS 4096
/* the bottleneck drops what would wait longer than this (tbf's latency) */
#define LIMIT_US 200000

struct sim {
	struct slim_pacer *pacer;
	uint64_t now, rate_bps;
	uint64_t link_free;   /* when the bottleneck finishes what it holds */
	uint64_t max_queue_us, sent_bytes, tail_drops;
	uint64_t limit_us;    /* the bottleneck's buffer, in time */
	uint64_t console_bps; /* how fast the console reads its socket; 0: at once */
	uint64_t console_free; /* when it has read what came */
	uint32_t next_seq, frame_end_seq;
	uint32_t last_arrived; /* datagrams reach the console in order */
	bool out_of_order;
	struct { uint64_t at, echo; uint32_t seq; } acks[MAX_ACKS];
	size_t ack_head, ack_len;
	uint32_t lost[MAX_ACKS];
	size_t n_lost;
	uint32_t dropped_first[64], dropped_last[64];
	size_t n_dropped;
};

/* The bottleneck: each datagram leaves after those before it; frame ends come back as ACKs. */
static void sim_send(void *data, const uint8_t *buf, size_t len)
{
	struct sim *s = data;
	struct slim_wire_dgram d;
	assert_true(len >= sizeof(d));
	memcpy(&d, buf, sizeof(d));
	assert_int_equal(d.time_us, s->now); /* stamped as it leaves */
	uint64_t ser = (uint64_t)(len + SLIM_PACER_OVERHEAD) * 8000000 / s->rate_bps;
	uint64_t start = s->link_free > s->now ? s->link_free : s->now;
	uint64_t queue = start - s->now;
	if (queue > s->limit_us) {
		/* the console will say so (NACK) with its next ACK */
		if (s->n_lost < MAX_ACKS) {
			s->lost[s->n_lost++] = d.seq;
		}
		s->tail_drops++;
		return;
	}
	s->max_queue_us = queue > s->max_queue_us ? queue : s->max_queue_us;
	s->link_free = start + ser;
	if (s->console_bps) {
		uint64_t arrived = s->link_free + PROP_US;
		uint64_t read_from = s->console_free > arrived ? s->console_free : arrived;
		s->console_free = read_from + (uint64_t)len * 8000000 / s->console_bps;
	}
	s->sent_bytes += len;
	if (d.seq != 0) {
		s->out_of_order |= d.seq <= s->last_arrived;
		s->last_arrived = d.seq;
	}
	if (d.seq != 0 && d.seq == s->frame_end_seq && s->ack_len < MAX_ACKS) {
		size_t i = (s->ack_head + s->ack_len++) % MAX_ACKS;
		s->acks[i].at = s->link_free + 2 * PROP_US;
		s->acks[i].echo = d.time_us;
		if (s->console_bps) {
			/* a console that reads late adds its wait to the echo (slim-net.h) */
			uint64_t arrived = s->link_free + PROP_US;
			uint64_t late = s->console_free > arrived ? s->console_free - arrived : 0;
			s->acks[i].at += late;
			s->acks[i].echo += late;
		}
		s->acks[i].seq = d.seq;
	}
}

static void sim_init(struct sim *s, uint64_t rate_bps)
{
	memset(s, 0, sizeof(*s));
	s->pacer = slim_pacer_create(sim_send, s);
	assert_non_null(s->pacer);
	s->now = 1000000;
	s->rate_bps = rate_bps;
	s->limit_us = LIMIT_US;
	s->next_seq = 1;
}

static void send_dgram(struct sim *s, bool droppable, bool frame_end)
{
	uint8_t buf[DGRAM] = { 0 };
	/* stamped when made, as the encoder does */
	struct slim_wire_dgram d = { .magic = SLIM_MAGIC, .seq = s->next_seq++, .time_us = s->now };
	memcpy(buf, &d, sizeof(d));
	if (frame_end) {
		s->frame_end_seq = d.seq;
	}
	slim_pacer_send(s->pacer, buf, sizeof(buf), droppable, s->now);
	if (frame_end) {
		slim_pacer_frame_end(s->pacer);
	}
}

static void record_drop(void *data, uint32_t first, uint32_t last)
{
	struct sim *s = data;
	assert_true(s->n_dropped < 64);
	s->dropped_first[s->n_dropped] = first;
	s->dropped_last[s->n_dropped++] = last;
}

/*
 * `seconds` of frames of `per_frame` datagrams every `interval_us` at most,
 * each once the last has left (as the link's readiness has it: a frame
 * drawn later carries newer pixels than one that would wait).
 */
static void run(struct sim *s, double seconds, size_t per_frame, uint64_t interval_us)
{
	uint64_t end = s->now + (uint64_t)(seconds * 1e6), next_frame = s->now;
	uint64_t next_run = s->now; /* what waits from before */
	for (; s->now < end; s->now += 100) {
		while (s->ack_len > 0 && s->acks[s->ack_head].at <= s->now) {
			for (size_t i = 0; i < s->n_lost; i++) {
				slim_pacer_lost(s->pacer, s->lost[i], s->lost[i], s->now);
			}
			s->n_lost = 0;
			slim_pacer_acked(s->pacer, s->acks[s->ack_head].seq,
				s->now - s->acks[s->ack_head].echo, s->now);
			s->ack_head = (s->ack_head + 1) % MAX_ACKS;
			s->ack_len--;
		}
		if (s->now >= next_frame && slim_pacer_stats(s->pacer)->backlog_datagrams == 0) {
			for (size_t i = 0; i < per_frame; i++) {
				send_dgram(s, true, i + 1 == per_frame);
			}
			next_frame = s->now + interval_us;
			next_run = s->now;
		}
		if (s->now >= next_run) {
			int64_t us = slim_pacer_run(s->pacer, s->now);
			next_run = us < 0 ? UINT64_MAX : s->now + (uint64_t)us;
		}
	}
}

static void test_unknown_link_holds_nothing(void **state)
{
	struct sim s;
	sim_init(&s, 1000000000);
	for (int i = 0; i < 100; i++) {
		send_dgram(&s, true, i == 99);
	}
	const struct slim_pacer_stats *st = slim_pacer_stats(s.pacer);
	assert_int_equal(st->sent, 100);
	assert_int_equal(st->backlog_datagrams, 0);
	assert_int_equal(st->rate_bps, 0);
	slim_pacer_destroy(s.pacer);
}

/* 2 Mbit/s offered 2.8: the rate is learnt, and the queue is the pacer's, not the link's. */
static void test_learns_a_slow_link(void **state)
{
	struct sim s;
	sim_init(&s, 2000000);
	run(&s, 3, 10, 40000);
	const struct slim_pacer_stats *st = slim_pacer_stats(s.pacer);
	assert_true(st->rate_bps > 1600000 && st->rate_bps < 2600000);
	/* the first frame goes before anything is known; after that, under 100 ms */
	s.max_queue_us = 0;
	run(&s, 5, 10, 40000);
	printf("2 Mbit/s: estimate %llu bit/s, queue at most %llu us\n",
		(unsigned long long)st->rate_bps, (unsigned long long)s.max_queue_us);
	assert_true(st->rate_bps > 1600000 && st->rate_bps < 2600000);
	assert_true(s.max_queue_us < 100000);
	assert_false(s.out_of_order);
	slim_pacer_destroy(s.pacer);
}

/* A link that slows down: the estimate follows, the queue stays short. */
static void test_follows_a_link_that_slows(void **state)
{
	struct sim s;
	sim_init(&s, 10000000);
	run(&s, 3, 30, 20000);
	const struct slim_pacer_stats *st = slim_pacer_stats(s.pacer);
	assert_true(st->rate_bps > 8000000 && st->rate_bps < 13000000);
	s.rate_bps = 2000000;
	run(&s, 2, 30, 20000);
	s.max_queue_us = 0;
	run(&s, 3, 30, 20000);
	printf("10 -> 2 Mbit/s: estimate %llu bit/s, queue at most %llu us\n",
		(unsigned long long)st->rate_bps, (unsigned long long)s.max_queue_us);
	assert_true(st->rate_bps > 1400000 && st->rate_bps < 2600000);
	assert_true(s.max_queue_us < 100000);
	slim_pacer_destroy(s.pacer);
}

/*
 * A bottleneck that queues and never drops (a deep buffer): the standing
 * queue is enough to learn it. 100 Mbit/s offered a little more, as a
 * video at full rate does.
 */
static void test_learns_a_queue_without_loss(void **state)
{
	struct sim s;
	sim_init(&s, 100000000);
	s.limit_us = 10000000;
	run(&s, 3, 60, 6000);
	const struct slim_pacer_stats *st = slim_pacer_stats(s.pacer);
	assert_int_equal(s.tail_drops, 0);
	assert_true(st->rate_bps > 80000000 && st->rate_bps < 130000000);
	s.max_queue_us = 0;
	run(&s, 3, 60, 6000);
	printf("100 Mbit/s, no loss: estimate %llu bit/s, queue at most %llu us\n",
		(unsigned long long)st->rate_bps, (unsigned long long)s.max_queue_us);
	assert_true(s.max_queue_us < 10000);
	slim_pacer_destroy(s.pacer);
}

/*
 * A console slow to read its socket (a loaded machine) is no bottleneck:
 * its ACKs come late, but their echoes say so, and nothing is held back.
 */
static void test_slow_console_is_no_link(void **state)
{
	struct sim s;
	sim_init(&s, 1000000000);
	s.console_bps = 50000000;
	run(&s, 3, 60, 6000);
	const struct slim_pacer_stats *st = slim_pacer_stats(s.pacer);
	assert_int_equal(st->rate_bps, 0);
	assert_int_equal(st->pacing_bps, 0);
	slim_pacer_destroy(s.pacer);
}

/* A firm datagram is never dropped, droppable ones around it are, and order holds. */
static void test_drop_keeps_firm_in_order(void **state)
{
	struct sim s;
	sim_init(&s, 2000000);
	run(&s, 2, 10, 40000); /* learn the link */
	run(&s, 0.2, 0, 1000000); /* let the queue drain */
	assert_int_equal(slim_pacer_stats(s.pacer)->backlog_datagrams, 0);
	uint32_t first = s.next_seq;
	for (int i = 0; i < 6; i++) {
		send_dgram(&s, true, i == 5);  /* a video frame */
	}
	send_dgram(&s, false, false);       /* the cursor */
	for (int i = 0; i < 4; i++) {
		send_dgram(&s, true, i == 3);  /* another */
	}
	const struct slim_pacer_stats *st = slim_pacer_stats(s.pacer);
	assert_int_equal(st->backlog_droppable_frames, 2);
	uint32_t waiting = st->backlog_datagrams;
	assert_true(waiting >= 9); /* a burst went, the rest waits for the pace */
	s.n_dropped = 0;
	size_t n = slim_pacer_drop(s.pacer, record_drop, &s);
	assert_int_equal(n, waiting - 1);
	assert_int_equal(st->backlog_datagrams, 1);
	assert_int_equal(st->backlog_droppable_frames, 0);
	/* two runs, either side of the cursor's datagram */
	assert_int_equal(s.n_dropped, 2);
	assert_int_equal(s.dropped_last[0], first + 5);
	assert_int_equal(s.dropped_first[1], first + 7);
	assert_int_equal(s.dropped_last[1], first + 10);
	send_dgram(&s, false, true);        /* the answer to a keystroke */
	uint64_t end = s.now + 100000;
	for (; s.now < end && st->backlog_datagrams > 0; s.now += 100) {
		slim_pacer_run(s.pacer, s.now);
	}
	assert_int_equal(st->backlog_datagrams, 0);
	assert_int_equal(s.last_arrived, first + 11);
	assert_false(s.out_of_order);
	slim_pacer_destroy(s.pacer);
}

/* Sound has no sequence number: it goes at once, whatever waits. */
static void test_sound_goes_at_once(void **state)
{
	struct sim s;
	sim_init(&s, 2000000);
	run(&s, 2, 10, 40000);
	for (int i = 0; i < 8; i++) {
		send_dgram(&s, true, i == 7);
	}
	const struct slim_pacer_stats *st = slim_pacer_stats(s.pacer);
	uint32_t waiting = st->backlog_datagrams;
	assert_true(waiting > 0);
	uint64_t bytes = s.sent_bytes;
	uint8_t buf[200] = { 0 };
	struct slim_wire_dgram d = { .magic = SLIM_MAGIC, .seq = 0, .time_us = s.now };
	memcpy(buf, &d, sizeof(d));
	slim_pacer_send(s.pacer, buf, sizeof(buf), false, s.now);
	assert_int_equal(s.sent_bytes, bytes + sizeof(buf));
	assert_int_equal(st->backlog_datagrams, waiting);
	slim_pacer_destroy(s.pacer);
}

static void test_share(void **state)
{
	uint64_t grant[4];
	/* all fits: all granted */
	slim_share(100, (uint64_t[]){ 10, 20, 30 }, grant, 3);
	assert_int_equal(grant[0], 10);
	assert_int_equal(grant[1], 20);
	assert_int_equal(grant[2], 30);
	/* small ones in full, the large one the rest, in any order */
	slim_share(100, (uint64_t[]){ 80, 10, 30 }, grant, 3);
	assert_int_equal(grant[0], 60);
	assert_int_equal(grant[1], 10);
	assert_int_equal(grant[2], 30);
	/* two large ones split what the small one leaves */
	slim_share(100, (uint64_t[]){ 90, 4, 0, 70 }, grant, 4);
	assert_int_equal(grant[0], 48);
	assert_int_equal(grant[1], 4);
	assert_int_equal(grant[2], 0);
	assert_int_equal(grant[3], 48);
	/* all large: equal shares */
	slim_share(99, (uint64_t[]){ 500, 400, 300 }, grant, 3);
	assert_int_equal(grant[0], 33);
	assert_int_equal(grant[1], 33);
	assert_int_equal(grant[2], 33);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_link_holds_nothing),
		cmocka_unit_test(test_learns_a_slow_link),
		cmocka_unit_test(test_follows_a_link_that_slows),
		cmocka_unit_test(test_learns_a_queue_without_loss),
		cmocka_unit_test(test_slow_console_is_no_link),
		cmocka_unit_test(test_drop_keeps_firm_in_order),
		cmocka_unit_test(test_sound_goes_at_once),
		cmocka_unit_test(test_share),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
