/*
 * Pacing: a console's datagrams leave no faster than its link drains them,
 * so that the queue builds here, where the newest pixels can still win,
 * and not at the bottleneck, where a keystroke's echo would wait behind
 * video (SLIM §7; Lantz et al.: latency is what users notice).
 *
 * The pacer estimates the link from the console's ACKs, as BBR does
 * (delivery rate: the bytes the console acknowledged between a datagram's
 * sending and its acknowledgement, over that interval; what a NACK reported
 * lost is not counted). It holds nothing back until a queue stands on the
 * path (round trips above their minimum by more than jitter or a datagram's
 * time, PACER_QUEUE_ACKS in a row): the link is then the bottleneck and the
 * sample taken its rate. The round trip is the path's: both ends time a
 * datagram from the kernel's arrival stamp (slim-net.h), and the console
 * adds what it waited to read and decode to the echo, so that a receiver
 * slow to read its socket (a loaded machine) makes no queue.
 * From then on the estimate rises to samples above it, a tenth at most per
 * gain cycle (a token bucket's burst makes a short sample look faster than
 * the link), and while a queue stands falls to samples of a link that
 * delivered less than it was sent (at most halving).
 * With no queue for PACER_FORGET_US while it grew by a fifth, it is
 * forgotten (a LAN, or a link that got faster). It sends at half the
 * estimate while a queue stands; otherwise at 1.1x one phase in eight
 * (probing), 0.9x the next and 0.95x the rest, so that what a probe queued
 * drains and a bucket at the bottleneck keeps tokens for an answer.
 *
 * Datagrams queue in order (their sequence numbers must reach the console
 * in order, or it reports the gaps lost). A datagram is either firm (an
 * interactive frame, the cursor, an INPUT_ACK: it always goes) or
 * droppable (what a newer frame supersedes): slim_pacer_drop discards every
 * droppable one still waiting, and the encoder repaints their areas from
 * the newest pixels. Firm datagrams may run up to one burst ahead of the
 * pace. Datagrams without a sequence number (sound) go at once. A datagram
 * that waited is stamped (its header's time_us) when it leaves, so that the
 * ACK's echo measures the path and not the wait.
 *
 * No clock, no timer, no wlroots: the caller passes the time and runs the
 * pacer when slim_pacer_run said the next datagram may go.
 */
#ifndef SLIM_PACER_H
#define SLIM_PACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes a datagram costs on the wire beyond its own: DTLS, UDP, IP and Ethernet. */
#define SLIM_PACER_OVERHEAD 70

typedef void (*slim_pacer_send_fn)(void *data, const uint8_t *buf, size_t len);

struct slim_pacer_stats {
	uint64_t rate_bps;   /* the link's estimated rate; 0: not known yet */
	uint64_t pacing_bps; /* what the pacer sends at now; 0: no limit */
	uint64_t rtt_us, min_rtt_us;
	uint64_t backlog_bytes;
	uint32_t backlog_datagrams;
	uint32_t backlog_droppable_frames; /* frames whose last datagram waits, droppable */
	uint64_t sent, dropped;          /* datagrams */
};

struct slim_pacer;

struct slim_pacer *slim_pacer_create(slim_pacer_send_fn send, void *send_data);
void slim_pacer_destroy(struct slim_pacer *p);
/* A new association: nothing waits, and the link is learnt again. */
void slim_pacer_reset(struct slim_pacer *p);

/*
 * A datagram (copied if it has to wait). Sent at once when nothing waits
 * and the pace allows, or when it has no sequence number.
 */
void slim_pacer_send(struct slim_pacer *p, const uint8_t *buf, size_t len, bool droppable,
		uint64_t now_us);
/* The datagram queued last ends a frame (it carries FRAME_END). */
void slim_pacer_frame_end(struct slim_pacer *p);
/*
 * Sends what the pace allows. Returns the microseconds until the next
 * datagram may go, or -1 when nothing waits.
 */
int64_t slim_pacer_run(struct slim_pacer *p, uint64_t now_us);
/*
 * Discards every droppable datagram still waiting, reporting each run of
 * consecutive sequence numbers discarded. Returns how many were.
 */
size_t slim_pacer_drop(struct slim_pacer *p,
		void (*dropped)(void *data, uint32_t first, uint32_t last), void *data);
/* The console reported first..last lost (a NACK, which comes before its ACK). */
void slim_pacer_lost(struct slim_pacer *p, uint32_t first, uint32_t last, uint64_t now_us);
/*
 * An ACK: every datagram up to `highest_seq` arrived or was reported lost,
 * and the last round trip took rtt_us (0: not measured).
 */
void slim_pacer_acked(struct slim_pacer *p, uint32_t highest_seq, uint64_t rtt_us,
		uint64_t now_us);

const struct slim_pacer_stats *slim_pacer_stats(const struct slim_pacer *p);

#endif
