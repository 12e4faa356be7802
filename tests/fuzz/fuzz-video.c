/*
 * libFuzzer target: VIDEO fragments as a network delivers them, into the
 * console's depacketiser (protocol/slim-video.c), with its clock.
 *
 * The input is a list of steps. A step's first byte: bits 2-7 advance the
 * clock by that many milliseconds, bits 0-1 say what follows:
 *   0  a VIDEO command: its flags byte, its body's length (16 bits, little
 *      endian) and the body (struct slim_wire_video and the bytes), put in
 *      a datagram with the codec's writer and read back with its reader,
 *      so that only what the reader lets through is pushed;
 *   1  pop every picture that is ready;
 *   2  ask which streams want a key picture;
 *   3  a byte: the decoder found stream (bits 0-1)'s picture `last popped
 *      minus bits 2-7` broken.
 * make-corpus writes the seeds (corpus/video) in this format.
 *
 * Whatever comes: a picture is handed out whole and readable, in its
 * stream's order (the next number, else a key picture), a stream that
 * asked for a key hands out a key picture next, the last picture of each
 * stream stays readable while the others are popped, and the counters add up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz-common.h"
#include "slim-codec.h"
#include "slim-video.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define KEYISH (SLIM_VIDEO_KEY | SLIM_VIDEO_START)

static uint8_t dgram[SLIM_MAX_MTU];

struct seen {
	bool popped, wants_key;
	uint32_t last;
	struct slim_video_au au;
};

static void fail(const char *what)
{
	fprintf(stderr, "fuzz-video: %s\n", what);
	abort();
}

/* Reads every byte, so that the sanitizer sees a picture that is not all there. */
static void touch(const struct slim_video_au *au)
{
	volatile uint8_t sum = 0;
	for (size_t i = 0; i < au->size; i++) {
		sum ^= au->data[i];
	}
	(void)sum;
}

static uint64_t push(struct slim_video_depack *d, uint8_t flags, const uint8_t *body,
		size_t len, uint64_t now)
{
	struct slim_writer w;
	slim_writer_init(&w, dgram, sizeof(dgram), FUZZ_ASSOC, false);
	uint8_t *p = slim_writer_add(&w, SLIM_CMD_VIDEO, flags, len);
	if (!p) {
		return 0;
	}
	memcpy(p, body, len);
	size_t n = slim_writer_finish(&w, 1, now);
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	if (slim_reader_init(&r, &hdr, dgram, n, false, FUZZ_W, FUZZ_H) != SLIM_OK ||
			slim_reader_next(&r, &cmd) != SLIM_OK || cmd.type != SLIM_CMD_VIDEO) {
		return 0;
	}
	slim_video_depack_push(d, &cmd, now);
	return 1;
}

static uint64_t pop_all(struct slim_video_depack *d, struct seen *seen, uint64_t now)
{
	uint64_t n = 0;
	struct slim_video_au au;
	while (slim_video_depack_pop(d, &au, now)) {
		n++;
		if (au.stream >= SLIM_VIDEO_STREAMS || au.size == 0 ||
				au.size > SLIM_VIDEO_MAX_PICTURE || !au.data) {
			fail("a picture out of its bounds");
		}
		touch(&au);
		struct seen *s = &seen[au.stream];
		bool key = au.flags & KEYISH;
		if (!key && (!s->popped || s->wants_key || au.frame != s->last + 1)) {
			fail("a picture out of order, or not a key picture where one was needed");
		}
		s->popped = true;
		s->wants_key = false;
		s->last = au.frame;
		s->au = au;
		/* what the other streams handed out last is still there */
		for (unsigned i = 0; i < SLIM_VIDEO_STREAMS; i++) {
			if (i != au.stream && seen[i].popped) {
				touch(&seen[i].au);
			}
		}
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct slim_video_depack *d = slim_video_depack_create();
	if (!d) {
		abort();
	}
	struct seen seen[SLIM_VIDEO_STREAMS];
	memset(seen, 0, sizeof(seen));
	uint64_t now = 1000000, pushed = 0, popped = 0, asked = 0;
	size_t at = 0;
	while (at < size) {
		uint8_t op = data[at++];
		now += (uint64_t)(op >> 2) * 1000;
		switch (op & 3) {
		case 0: {
			if (size - at < 3) {
				at = size;
				break;
			}
			uint8_t flags = data[at];
			size_t len = (size_t)data[at + 1] | (size_t)data[at + 2] << 8;
			at += 3;
			if (len > size - at) {
				len = size - at;
			}
			pushed += push(d, flags, data + at, len, now);
			at += len;
			break;
		}
		case 1:
			popped += pop_all(d, seen, now);
			break;
		case 2: {
			uint8_t stream;
			uint32_t frame;
			while (slim_video_depack_wants_key(d, now, &stream, &frame)) {
				if (stream >= SLIM_VIDEO_STREAMS || (seen[stream].popped &&
						frame != seen[stream].last)) {
					fail("a key request for the wrong stream or picture");
				}
				seen[stream].wants_key = true;
				asked++;
			}
			break;
		}
		case 3:
			if (at < size) {
				uint8_t b = data[at++];
				slim_video_depack_broken(d, b & 3, seen[b & 3].last - (b >> 2));
			}
			break;
		}
		int64_t wait = slim_video_depack_next_deadline(d, now);
		if (wait < -1 || wait > SLIM_VIDEO_HOLD_US) {
			fail("a deadline out of its range");
		}
	}
	popped += pop_all(d, seen, now + SLIM_VIDEO_HOLD_US);
	const struct slim_video_depack_stats *st = slim_video_depack_stats(d);
	if (st->fragments != pushed || st->pictures != popped || st->key_requests != asked ||
			st->duplicates + st->bad > st->fragments) {
		fail("the counters do not add up");
	}
	slim_video_depack_reset(d);
	struct slim_video_au au;
	if (slim_video_depack_pop(d, &au, now) || slim_video_depack_next_deadline(d, now) != -1) {
		fail("a reset left something behind");
	}
	slim_video_depack_destroy(d);
	return 0;
}
