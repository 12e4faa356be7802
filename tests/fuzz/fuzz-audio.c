/*
 * libFuzzer target: audio packets as a network delivers them, into the
 * jitter buffer and the decoder (protocol/slim-audio.c). The input is a
 * list of steps: a byte whose low bit says push (0) or pull (1); a push
 * then takes a 17-byte header (codec, channels, frames 16 bits, sequence
 * and timestamp 32 bits, arrival in ms 32 bits, length in 8-byte units
 * 8 bits) and up to that many bytes of payload. Whatever comes, the counters add up and a
 * pull writes exactly one frame.
 */
#include <stdlib.h>
#include <string.h>
#include "slim-audio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct slim_audio_jitter *j = slim_audio_jitter_create(2, 20, 200);
	if (!j) {
		abort();
	}
	/* one frame, and a guard after it that a pull must not touch */
	int16_t pcm[SLIM_AUDIO_FRAME * 2 + 8];
	size_t at = 0;
	while (at < size) {
		uint8_t op = data[at++];
		if (op & 1) {
			memset(pcm, 0x5a, sizeof(pcm));
			slim_audio_jitter_pull(j, pcm);
			for (size_t i = SLIM_AUDIO_FRAME * 2; i < sizeof(pcm) / sizeof(pcm[0]); i++) {
				if (pcm[i] != 0x5a5a) {
					abort();
				}
			}
			continue;
		}
		if (size - at < 17) {
			break;
		}
		struct slim_audio_packet p = { .codec = data[at], .channels = data[at + 1],
			.rate = SLIM_AUDIO_RATE };
		uint32_t arrival_ms;
		memcpy(&p.frames, data + at + 2, 2);
		memcpy(&p.seq, data + at + 4, 4);
		memcpy(&p.timestamp, data + at + 8, 4);
		memcpy(&arrival_ms, data + at + 12, 4);
		size_t len = (size_t)data[at + 16] * 8; /* up to 2040: past the largest payload */
		at += 17;
		p.len = len < size - at ? len : size - at;
		p.data = data + at;
		at += p.len;
		slim_audio_jitter_push(j, &p, (uint64_t)arrival_ms * 1000);
	}
	const struct slim_audio_stats *st = slim_audio_jitter_stats(j);
	if (st->depth_ms < 20 || st->depth_ms > 200 || st->recovered > st->lost) {
		abort();
	}
	slim_audio_jitter_destroy(j);
	return 0;
}
