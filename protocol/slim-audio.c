#include <opus/opus.h>
#include <stdlib.h>
#include <string.h>
#include "slim-audio.h"

/* A PCM frame's payload, the largest a packet carries. */
#define PCM_BYTES(channels) ((size_t)SLIM_AUDIO_FRAME * (size_t)(channels) * sizeof(int16_t))
#define MAX_BYTES PCM_BYTES(SLIM_AUDIO_MAX_CHANNELS)
/* The buffer's slots: 640 ms, more than the deepest it may aim for. */
#define SLOTS 64
#define MAX_DEPTH_MS 600
/* Packets without a loss after which the buffer holds a frame less for loss. */
#define BURST_MEMORY 1000
/* Frames the buffer holds at most for lateness it saw (on top of its minimum). */
#define MAX_LATE_FRAMES 4
/* Frames guessed in a row, with nothing held, before the stream counts as stopped. */
#define DRY_FRAMES 10

struct slim_audio_encoder {
	enum slim_audio_codec codec;
	int channels;
	OpusEncoder *opus;
	uint32_t seq, timestamp;
};

struct slim_audio_encoder *slim_audio_encoder_create(enum slim_audio_codec codec,
		int channels, int bitrate, int loss_percent)
{
	if (channels < 1 || channels > SLIM_AUDIO_MAX_CHANNELS ||
			(codec != SLIM_AUDIO_OPUS && codec != SLIM_AUDIO_PCM)) {
		return NULL;
	}
	struct slim_audio_encoder *enc = calloc(1, sizeof(*enc));
	if (!enc) {
		return NULL;
	}
	enc->codec = codec;
	enc->channels = channels;
	if (codec == SLIM_AUDIO_PCM) {
		return enc;
	}
	int err;
	enc->opus = opus_encoder_create(SLIM_AUDIO_RATE, channels, OPUS_APPLICATION_AUDIO, &err);
	/*
	 * FEC: each packet also carries a coarse copy of the one before, so a
	 * single loss is rebuilt from the next packet instead of guessed; no
	 * DTX: the stream keeps its pace, and silence costs a few bytes.
	 * Complexity 1 of 10: 44 us a 10 ms stereo frame against the default's
	 * 107 (bench-audio: a stream cost the server 3% of a core, the target
	 * is 2%), for a loss few ears hear at 64 kbit/s; a shared server codes
	 * a stream for every session that plays.
	 */
	if (!enc->opus || opus_encoder_ctl(enc->opus, OPUS_SET_BITRATE(bitrate)) != OPUS_OK ||
			opus_encoder_ctl(enc->opus, OPUS_SET_INBAND_FEC(1)) != OPUS_OK ||
			opus_encoder_ctl(enc->opus, OPUS_SET_PACKET_LOSS_PERC(loss_percent)) != OPUS_OK ||
			opus_encoder_ctl(enc->opus, OPUS_SET_DTX(0)) != OPUS_OK ||
			opus_encoder_ctl(enc->opus, OPUS_SET_COMPLEXITY(1)) != OPUS_OK) {
		slim_audio_encoder_destroy(enc);
		return NULL;
	}
	return enc;
}

void slim_audio_encoder_destroy(struct slim_audio_encoder *enc)
{
	if (!enc) {
		return;
	}
	if (enc->opus) {
		opus_encoder_destroy(enc->opus);
	}
	free(enc);
}

int slim_audio_encode(struct slim_audio_encoder *enc, const int16_t *pcm, uint8_t *out,
		size_t cap, struct slim_audio_packet *p)
{
	int n;
	if (enc->codec == SLIM_AUDIO_PCM) {
		if (cap < PCM_BYTES(enc->channels)) {
			return -1;
		}
		/* little-endian on the wire, as the host is (slim-proto.h) */
		memcpy(out, pcm, PCM_BYTES(enc->channels));
		n = (int)PCM_BYTES(enc->channels);
	} else {
		n = opus_encode(enc->opus, pcm, SLIM_AUDIO_FRAME, out,
			(opus_int32)(cap < SLIM_AUDIO_MAX_PAYLOAD ? cap : SLIM_AUDIO_MAX_PAYLOAD));
		if (n <= 0) {
			return -1;
		}
	}
	*p = (struct slim_audio_packet){
		.codec = (uint8_t)enc->codec,
		.channels = (uint8_t)enc->channels,
		.frames = SLIM_AUDIO_FRAME,
		.rate = SLIM_AUDIO_RATE,
		.seq = enc->seq++,
		.timestamp = enc->timestamp,
		.data = out,
		.len = (size_t)n,
	};
	enc->timestamp += SLIM_AUDIO_FRAME;
	return n;
}

/* --- the wire */

void slim_audio_sender_reset(struct slim_audio_sender *s)
{
	s->n = 0;
}

static bool put(struct slim_writer *w, bool upstream, uint8_t flags,
		const struct slim_audio_packet *p, const uint8_t *data, size_t len)
{
	struct slim_wire_audio hdr = {
		.codec = p->codec, .channels = p->channels, .frames = p->frames,
		.rate = p->rate, .seq = p->seq, .timestamp = p->timestamp,
	};
	return slim_put_audio(w, upstream, flags, &hdr, data, len);
}

/* Keeps `p` (Opus) to send again with the next ones. */
static void remember(struct slim_audio_sender *s, const struct slim_audio_packet *p)
{
	if (p->codec != SLIM_AUDIO_OPUS || p->len > SLIM_AUDIO_MAX_PAYLOAD) {
		s->n = 0;
		return;
	}
	memmove(&s->past[1], &s->past[0], sizeof(s->past[0]) * (SLIM_AUDIO_REDUNDANCY - 1));
	memcpy(s->past[0].data, p->data, p->len);
	s->past[0].p = *p;
	s->past[0].p.data = s->past[0].data;
	s->n = s->n < SLIM_AUDIO_REDUNDANCY ? s->n + 1 : SLIM_AUDIO_REDUNDANCY;
}

size_t slim_audio_send(struct slim_audio_sender *s, const struct slim_audio_packet *p,
		bool upstream, uint32_t assoc, size_t mtu, uint64_t now_us, slim_send_fn send,
		void *data)
{
	uint8_t buf[sizeof(struct slim_wire_dgram) + sizeof(struct slim_wire_cmd) +
		sizeof(struct slim_wire_audio) + SLIM_AUDIO_MAX_WIRE_PAYLOAD];
	struct slim_writer w;
	slim_writer_init(&w, buf, mtu < sizeof(buf) ? mtu : sizeof(buf), assoc, upstream);
	if (put(&w, upstream, 0, p, p->data, p->len)) {
		/* the same stream's packets before it, newest first, as they fit */
		for (unsigned i = 0; s && i < s->n && s->past[i].p.codec == p->codec &&
				s->past[i].p.channels == p->channels &&
				put(&w, upstream, 0, &s->past[i].p, s->past[i].data, s->past[i].p.len); i++) {
		}
		send(data, buf, slim_writer_finish(&w, 0, now_us));
		if (s) {
			remember(s, p);
		}
		return 1;
	}
	/* PCM: two halves, each a whole number of samples */
	if (s) {
		s->n = 0;
	}
	size_t half = p->len / 2;
	if (p->codec != SLIM_AUDIO_PCM || p->len % 4 != 0) {
		return 0;
	}
	size_t sent = 0;
	for (int i = 0; i < 2; i++) {
		slim_writer_reset(&w);
		if (put(&w, upstream, i ? SLIM_AUDIO_SECOND_HALF : SLIM_AUDIO_FIRST_HALF, p,
				p->data + i * half, half)) {
			send(data, buf, slim_writer_finish(&w, 0, now_us));
			sent++;
		}
	}
	return sent;
}

void slim_audio_packet_from_cmd(const struct slim_cmd *cmd, struct slim_audio_packet *p)
{
	const struct slim_wire_audio *h = &cmd->audio.hdr;
	*p = (struct slim_audio_packet){
		.codec = h->codec, .channels = h->channels, .frames = h->frames, .rate = h->rate,
		.seq = h->seq, .timestamp = h->timestamp,
		.part = cmd->flags & (SLIM_AUDIO_FIRST_HALF | SLIM_AUDIO_SECOND_HALF),
		.data = cmd->audio.data, .len = cmd->audio.len,
	};
}

/* --- the jitter buffer */

struct slot {
	bool full;
	uint8_t parts; /* PCM: the halves that came (both, for a whole packet) */
	uint8_t codec;
	uint32_t seq;
	size_t len;
	uint8_t data[MAX_BYTES];
};

struct slim_audio_jitter {
	int channels;
	unsigned min_frames, max_frames, target_frames;
	OpusDecoder *opus;
	struct slot slots[SLOTS];
	bool started, filling, have_highest;
	uint32_t next_seq, highest;
	unsigned dry; /* frames played with nothing held: guessed */
	/*
	 * The longest run of packets lost on the way lately (at most
	 * SLIM_AUDIO_REDUNDANCY): the buffer holds that many frames more, so
	 * that the copies the next datagram brings come in time to be played.
	 */
	unsigned burst, burst_age;
	/*
	 * Likewise the longest run of frames guessed lately because the next
	 * packet was late (a sender or a receiver that was not scheduled in
	 * time, which the network's jitter does not show): held more, when the
	 * stream next starts.
	 */
	unsigned late, late_run;
	/* RFC 3550 §6.4.1: interarrival jitter, from the last packet's transit */
	bool have_prev;
	uint64_t prev_arrival_us;
	uint32_t prev_timestamp;
	double jitter_us;
	struct slim_audio_stats stats;
};

struct slim_audio_jitter *slim_audio_jitter_create(int channels, unsigned min_ms,
		unsigned max_ms)
{
	if (channels < 1 || channels > SLIM_AUDIO_MAX_CHANNELS || min_ms < 10 ||
			max_ms < min_ms || max_ms > MAX_DEPTH_MS) {
		return NULL;
	}
	struct slim_audio_jitter *j = calloc(1, sizeof(*j));
	if (!j) {
		return NULL;
	}
	int err;
	j->opus = opus_decoder_create(SLIM_AUDIO_RATE, channels, &err);
	if (!j->opus) {
		free(j);
		return NULL;
	}
	j->channels = channels;
	j->min_frames = min_ms / 10;
	j->max_frames = max_ms / 10;
	j->target_frames = j->min_frames;
	j->stats.depth_ms = j->target_frames * 10;
	return j;
}

void slim_audio_jitter_destroy(struct slim_audio_jitter *j)
{
	if (!j) {
		return;
	}
	opus_decoder_destroy(j->opus);
	free(j);
}

const struct slim_audio_stats *slim_audio_jitter_stats(const struct slim_audio_jitter *j)
{
	return &j->stats;
}

/* Frames from the next to play to the newest held, holes included. */
static uint32_t span(const struct slim_audio_jitter *j)
{
	int32_t d = (int32_t)(j->highest - j->next_seq);
	return j->have_highest && d >= 0 ? (uint32_t)d + 1 : 0;
}

static bool valid(const struct slim_audio_jitter *j, const struct slim_audio_packet *p)
{
	if (p->channels != j->channels || p->rate != SLIM_AUDIO_RATE ||
			p->frames != SLIM_AUDIO_FRAME || !p->data) {
		return false;
	}
	if (p->codec == SLIM_AUDIO_PCM) {
		return p->len == (p->part ? PCM_BYTES(j->channels) / 2 : PCM_BYTES(j->channels));
	}
	return p->codec == SLIM_AUDIO_OPUS && !p->part && p->len >= 1 &&
		p->len <= SLIM_AUDIO_MAX_PAYLOAD;
}

static void clear(struct slim_audio_jitter *j)
{
	for (int i = 0; i < SLOTS; i++) {
		j->slots[i].full = false;
	}
	j->have_highest = false;
}

void slim_audio_jitter_reset(struct slim_audio_jitter *j)
{
	clear(j);
	j->started = false;
	j->have_prev = false;
	j->dry = 0;
	j->burst = 0;
	j->burst_age = 0;
	j->late = j->late_run = 0;
	opus_decoder_ctl(j->opus, OPUS_RESET_STATE);
}

/*
 * Beyond this, a transit change is a new start, not jitter: the sender
 * paused (a sound server stops a sink nobody plays into, and the stream's
 * timestamps go on where they were), restarted, or its clock stepped.
 */
#define MAX_TRANSIT_CHANGE_US 100000.0

static void measure(struct slim_audio_jitter *j, const struct slim_audio_packet *p,
		uint64_t arrival_us)
{
	if (j->have_prev) {
		double arrived = (double)(int64_t)(arrival_us - j->prev_arrival_us);
		double sent = (double)(int32_t)(p->timestamp - j->prev_timestamp) * 1e6 /
			SLIM_AUDIO_RATE;
		double d = arrived > sent ? arrived - sent : sent - arrived;
		if (d < MAX_TRANSIT_CHANGE_US) {
			j->jitter_us += (d - j->jitter_us) / 16;
		}
	}
	j->have_prev = true;
	j->prev_arrival_us = arrival_us;
	j->prev_timestamp = p->timestamp;
	/* three times the jitter, and the frame being played, in whole frames */
	double frames = (3 * j->jitter_us + 10000) / 10000 + 0.999;
	unsigned extra = j->burst > j->late ? j->burst : j->late;
	if (frames < 1 + extra) {
		frames = 1 + extra;
	}
	j->target_frames = frames < j->min_frames ? j->min_frames :
		frames > j->max_frames ? j->max_frames : (unsigned)frames;
	j->stats.depth_ms = j->target_frames * 10;
	j->stats.jitter_us = (uint32_t)j->jitter_us;
}

/*
 * `again`: a copy of a packet sent before, carried with a later one. It
 * fills a hole if there is one and is no news otherwise (neither late nor
 * a duplicate); its arrival says nothing of the network's jitter.
 */
static bool push(struct slim_audio_jitter *j, const struct slim_audio_packet *p,
		uint64_t arrival_us, bool again)
{
	if (!valid(j, p)) {
		j->stats.bad++;
		return false;
	}
	if (again && (!j->started || (int32_t)(p->seq - j->next_seq) < 0)) {
		return false;
	}
	if (!j->started) {
		j->started = true;
		j->filling = true;
		j->next_seq = p->seq;
	}
	int32_t ahead = (int32_t)(p->seq - j->next_seq);
	if (ahead < 0 && !(j->filling && !again)) {
		j->stats.late++;
		return false;
	}
	if (ahead >= SLOTS || ahead < 0) {
		/*
		 * A sender that restarted, a silence longer than the buffer, or a
		 * stream that stopped (the frames guessed after its last packet
		 * were no packets of its): start over from this packet.
		 */
		clear(j);
		j->next_seq = p->seq;
		j->filling = true;
	}
	struct slot *s = &j->slots[p->seq % SLOTS];
	uint8_t parts = p->part ? p->part : SLIM_AUDIO_FIRST_HALF | SLIM_AUDIO_SECOND_HALF;
	bool same = s->full && s->seq == p->seq;
	if (same && ((s->parts & parts) || s->codec != p->codec)) {
		j->stats.duplicate += !again;
		return false;
	}
	if (!same) {
		s->parts = 0;
		/* PCM: a half that never comes is silence */
		memset(s->data, 0, PCM_BYTES(j->channels));
	}
	s->full = true;
	s->seq = p->seq;
	s->codec = p->codec;
	s->parts |= parts;
	s->len = p->codec == SLIM_AUDIO_PCM ? PCM_BYTES(j->channels) : p->len;
	memcpy(s->data + (p->part == SLIM_AUDIO_SECOND_HALF ? p->len : 0), p->data, p->len);
	if (same) {
		/* the other half of a packet already counted */
		return true;
	}
	if (!again && j->late_run > 0) {
		/* the stream went on: the frames guessed meanwhile waited for a late packet */
		unsigned l = j->late_run < MAX_LATE_FRAMES ? j->late_run : MAX_LATE_FRAMES;
		j->late = l > j->late ? l : j->late;
		j->late_run = 0;
		j->burst_age = 0;
	}
	if (!again && j->have_highest) {
		/* packets that never came before this one: a burst of loss */
		int32_t gap = (int32_t)(p->seq - j->highest) - 1;
		if (gap > 0) {
			unsigned b = gap < SLIM_AUDIO_REDUNDANCY ? (unsigned)gap : SLIM_AUDIO_REDUNDANCY;
			j->burst = b > j->burst ? b : j->burst;
			j->burst_age = 0;
		} else if ((j->burst > 0 || j->late > 0) && ++j->burst_age >= BURST_MEMORY) {
			j->burst -= j->burst > 0;
			j->late -= j->late > 0;
			j->burst_age = 0;
		}
	}
	if (!j->have_highest || (int32_t)(p->seq - j->highest) > 0) {
		j->highest = p->seq;
		j->have_highest = true;
	}
	if (again) {
		j->stats.repaired++;
		return true;
	}
	j->stats.packets++;
	measure(j, p, arrival_us);
	return true;
}

bool slim_audio_jitter_push(struct slim_audio_jitter *j, const struct slim_audio_packet *p,
		uint64_t arrival_us)
{
	return push(j, p, arrival_us, false);
}

bool slim_audio_jitter_push_again(struct slim_audio_jitter *j,
		const struct slim_audio_packet *p)
{
	return push(j, p, 0, true);
}

static struct slot *held(struct slim_audio_jitter *j, uint32_t seq)
{
	struct slot *s = &j->slots[seq % SLOTS];
	return s->full && s->seq == seq ? s : NULL;
}

/* The decoder's guess at what was lost (PCM has none: silence). */
static void conceal(struct slim_audio_jitter *j, int16_t *pcm, bool opus)
{
	if (!opus || opus_decode(j->opus, NULL, 0, pcm, SLIM_AUDIO_FRAME, 0) != SLIM_AUDIO_FRAME) {
		memset(pcm, 0, PCM_BYTES(j->channels));
	}
	j->stats.concealed++;
}

static void play(struct slim_audio_jitter *j, struct slot *s, int16_t *pcm)
{
	if (s->codec == SLIM_AUDIO_PCM) {
		memcpy(pcm, s->data, PCM_BYTES(j->channels));
		if (s->parts != (SLIM_AUDIO_FIRST_HALF | SLIM_AUDIO_SECOND_HALF)) {
			j->stats.concealed++; /* half of it silence */
		}
	} else if (opus_decode(j->opus, s->data, (opus_int32)s->len, pcm, SLIM_AUDIO_FRAME, 0) !=
			SLIM_AUDIO_FRAME) {
		j->stats.bad++; /* corrupt, or more than one frame's worth: guessed instead */
		conceal(j, pcm, true);
	}
	s->full = false;
}

void slim_audio_jitter_pull(struct slim_audio_jitter *j, int16_t *pcm)
{
	uint32_t queued = span(j);
	if (j->filling && queued >= j->target_frames) {
		j->filling = false;
	}
	if (!j->started || j->filling) {
		memset(pcm, 0, PCM_BYTES(j->channels));
		return;
	}
	if (queued == 0) {
		/*
		 * Nothing held: the next packet is late, lost, or the stream
		 * stopped. A frame is guessed (the decoder fades what it guesses)
		 * and the next packet still awaited: the delay grows by a frame,
		 * which a late packet needs, and a lost one is known lost when a
		 * later one comes. After 100 ms of this the stream has stopped:
		 * silence until the buffer holds its depth again.
		 */
		if (j->dry >= DRY_FRAMES) {
			j->filling = true;
			j->late_run = 0;
			memset(pcm, 0, PCM_BYTES(j->channels));
			return;
		}
		j->dry++;
		/* lateness if a packet comes after all (push tells), not a stream that stopped */
		j->late_run++;
		conceal(j, pcm, true);
		return;
	}
	j->dry = 0;
	if (queued > j->target_frames + 2) {
		/*
		 * More delay than the jitter asks for: a frame less each time,
		 * where the sender's clock runs a little fast; far more (nobody
		 * played for a while, so it piled up), down to the depth at once:
		 * one jump is heard once, a jump every frame for long.
		 */
		uint32_t drop = queued > 2 * j->target_frames + 4 ? queued - j->target_frames : 1;
		for (uint32_t i = 0; i < drop; i++) {
			struct slot *s = held(j, j->next_seq);
			if (s) {
				s->full = false;
			}
			j->next_seq++;
			j->stats.skipped++;
		}
		if (drop > 1) {
			/* the decoder's state is of the frames before the jump */
			opus_decoder_ctl(j->opus, OPUS_RESET_STATE);
		}
	}
	struct slot *s = held(j, j->next_seq);
	if (s) {
		play(j, s, pcm);
	} else {
		j->stats.lost++;
		struct slot *next = held(j, j->next_seq + 1);
		if (next && next->codec == SLIM_AUDIO_OPUS &&
				opus_decode(j->opus, next->data, (opus_int32)next->len, pcm,
					SLIM_AUDIO_FRAME, 1) == SLIM_AUDIO_FRAME) {
			j->stats.recovered++;
		} else {
			conceal(j, pcm, !next || next->codec == SLIM_AUDIO_OPUS);
		}
	}
	j->next_seq++;
}
