/*
 * Sound between a session and its console, the part both ends share:
 * one 10 ms frame of 48 kHz audio a packet, coded with Opus (in-band FEC,
 * the decoder's concealment) or carried raw (16-bit PCM, for a LAN), and
 * the receiver's jitter buffer, which turns packets that arrive late, out
 * of order, twice or never into a steady 10 ms at a time.
 *
 * A packet travels as one AUDIO (downstream) or MIC (upstream) command
 * alone in its datagram (slim-protocol.md 3.7), on the console's secure
 * association; 10 ms of stereo PCM is larger than a datagram and goes in
 * two halves. Nothing here allocates after create, whatever is pushed.
 */
#ifndef SLIM_AUDIO_H
#define SLIM_AUDIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-codec.h"

#define SLIM_AUDIO_RATE 48000
/* Samples per channel in a packet: 10 ms. */
#define SLIM_AUDIO_FRAME 480
#define SLIM_AUDIO_MAX_CHANNELS 2
/* Opus's largest packet for one frame. */
#define SLIM_AUDIO_MAX_PAYLOAD 1275

enum slim_audio_codec {
	SLIM_AUDIO_OPUS = 1,
	SLIM_AUDIO_PCM = 2, /* s16le, interleaved */
};

struct slim_audio_packet {
	uint8_t codec;      /* enum slim_audio_codec */
	uint8_t channels;
	uint16_t frames;    /* samples per channel: SLIM_AUDIO_FRAME */
	uint32_t rate;      /* SLIM_AUDIO_RATE */
	uint32_t seq;       /* the stream's own, one a packet */
	uint32_t timestamp; /* the sender's clock, in samples */
	uint8_t part;       /* 0: whole; SLIM_AUDIO_FIRST_HALF or _SECOND_HALF of a PCM packet */
	const uint8_t *data;
	size_t len;
};

/*
 * Opus packets a datagram carries besides its own: a loss is rebuilt
 * exactly from the next datagram that arrives, up to this many in a row.
 * (Opus's in-band FEC does nothing for music: it codes that in its CELT
 * mode, which has none.) At 64 kbit/s a datagram is some 250 bytes.
 */
#define SLIM_AUDIO_REDUNDANCY 2

/* A stream's sender: the packets it sent last, to send again. */
struct slim_audio_sender {
	struct {
		struct slim_audio_packet p;
		uint8_t data[SLIM_AUDIO_MAX_PAYLOAD];
	} past[SLIM_AUDIO_REDUNDANCY];
	unsigned n; /* held, newest first */
};

/* A new stream (a new association): nothing to send again. */
void slim_audio_sender_reset(struct slim_audio_sender *s);
/*
 * Sends `p` as AUDIO (or MIC, upstream) in a datagram of at most `mtu`
 * bytes outside the association's sequence (number 0), with as many of the
 * sender's past packets as fit; a PCM packet too large for one datagram
 * goes in two halves. Returns the datagrams sent.
 */
size_t slim_audio_send(struct slim_audio_sender *s, const struct slim_audio_packet *p,
		bool upstream, uint32_t assoc, size_t mtu, uint64_t now_us, slim_send_fn send,
		void *data);
/* The packet an AUDIO or MIC command carries (pointing into the datagram). */
void slim_audio_packet_from_cmd(const struct slim_cmd *cmd, struct slim_audio_packet *p);

/* --- sending */

struct slim_audio_encoder;

/*
 * Opus at `bitrate` bit/s (or PCM), 1 or 2 channels; Opus with in-band
 * FEC sized for `loss_percent` expected loss. NULL on bad arguments.
 */
struct slim_audio_encoder *slim_audio_encoder_create(enum slim_audio_codec codec,
		int channels, int bitrate, int loss_percent);
void slim_audio_encoder_destroy(struct slim_audio_encoder *enc);
/*
 * One frame (SLIM_AUDIO_FRAME samples a channel, interleaved) into `out`:
 * the packet's payload; its length, or -1. `p` gets the packet's header
 * (its own sequence number and timestamp) and payload.
 */
int slim_audio_encode(struct slim_audio_encoder *enc, const int16_t *pcm, uint8_t *out,
		size_t cap, struct slim_audio_packet *p);

/* --- receiving */

struct slim_audio_stats {
	uint64_t packets;    /* taken into the buffer */
	uint64_t bad;        /* wrong codec, rate, channels, size or a corrupt payload */
	uint64_t duplicate;
	uint64_t late;       /* came after its time to play */
	uint64_t lost;       /* never came in time: recovered or concealed */
	/*
	 * rebuilt from the next packet's in-band FEC; where the next packet
	 * has none (Opus's CELT mode, which it uses for music at 64 kbit/s),
	 * that decode is the decoder's guess all the same
	 */
	uint64_t recovered;
	uint64_t concealed;  /* made up by the decoder (or silence, for PCM) */
	uint64_t skipped;    /* dropped to bring the delay down */
	uint64_t repaired;   /* holes filled by a copy sent with a later packet */
	/* packets (not copies) handed over to be played, not taken in time or before a reset */
	uint64_t unheard;
	uint32_t depth_ms;   /* what the buffer aims to hold */
	uint32_t jitter_us;  /* RFC 3550's estimate of arrival jitter */
};

struct slim_audio_jitter;

/*
 * A jitter buffer for one stream of `channels`, holding between min_ms and
 * max_ms (a multiple of 10, at most 600) as the measured jitter asks.
 */
struct slim_audio_jitter *slim_audio_jitter_create(int channels, unsigned min_ms,
		unsigned max_ms);
void slim_audio_jitter_destroy(struct slim_audio_jitter *j);
/* Forgets the stream (a new sender numbers from 0 again); the statistics stay. */
void slim_audio_jitter_reset(struct slim_audio_jitter *j);
/* A packet as it arrived, at `arrival_us` on the receiver's clock; false if dropped. */
bool slim_audio_jitter_push(struct slim_audio_jitter *j, const struct slim_audio_packet *p,
		uint64_t arrival_us);
/*
 * A copy of an earlier packet that came with a later one (the datagram's
 * commands after its first): kept only if it fills a hole.
 */
bool slim_audio_jitter_push_again(struct slim_audio_jitter *j,
		const struct slim_audio_packet *p);
/*
 * The next SLIM_AUDIO_FRAME samples a channel to play: decoded, recovered
 * from the next packet's FEC, or concealed; silence while filling up.
 */
void slim_audio_jitter_pull(struct slim_audio_jitter *j, int16_t *pcm);
const struct slim_audio_stats *slim_audio_jitter_stats(const struct slim_audio_jitter *j);

#endif
