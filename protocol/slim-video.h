/*
 * Compressed pictures on the slim wire (slim-protocol.md 3.9): the
 * server's side cuts an access unit into VIDEO fragments that each fit a
 * datagram; the console's side puts them back together, in picture order,
 * and says when a stream lost what it cannot do without.
 *
 * No codec and no clock here: the caller passes the time. A stream's
 * pictures are handed out whole and in order: picture n + 1 only after n,
 * unless n + 1 is a key picture (it needs nothing before it). A picture
 * still missing fragments holds the ones after it for at most
 * SLIM_VIDEO_HOLD_US (the server sends lost fragments again when the
 * console reports their datagrams lost); past that, or when what waits
 * outgrows its bounds, the stream skips to its next key picture and asks
 * for one (slim_video_depack_wants_key).
 */
#ifndef SLIM_VIDEO_WIRE_H
#define SLIM_VIDEO_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-codec.h"

/* How long a later, whole picture waits for one missing fragments. */
#define SLIM_VIDEO_HOLD_US 80000
/* Pictures of one stream waiting at most, and their bytes. */
#define SLIM_VIDEO_MAX_WAITING 16
#define SLIM_VIDEO_MAX_WAITING_BYTES (8u << 20)
/* How often a stream that wants a key picture asks again. */
#define SLIM_VIDEO_ASK_US 100000

/* Server: the fragments of one access unit. */
struct slim_video_picture {
	uint8_t stream;
	uint8_t flags;       /* SLIM_VIDEO_KEY, SLIM_VIDEO_START */
	uint16_t width, height;
	uint32_t frame;
	struct slim_rect dst, clip;
	const uint8_t *data; /* the access unit, Annex B */
	size_t size;         /* at most SLIM_VIDEO_MAX_PICTURE */
};

/*
 * Fragments `size` bytes take when each carries at most `room` of them;
 * more than SLIM_VIDEO_MAX_FRAGS (UINT16_MAX at most, and for a room of 0):
 * the picture cannot go in fragments that small.
 */
uint16_t slim_video_frags(size_t size, size_t room);
/*
 * Fragment `frag` of `pic`, cut as slim_video_frags(pic->size, room) cuts
 * it: its header, and where its bytes start and how many there are.
 */
void slim_video_fragment(const struct slim_video_picture *pic, size_t room, uint16_t frag,
		struct slim_wire_video *hdr, const uint8_t **data, size_t *len);

/* Console: a picture put back together, valid until the next call on its stream. */
struct slim_video_au {
	uint8_t stream;
	uint8_t flags;
	uint16_t width, height;
	uint32_t frame;
	struct slim_rect dst, clip;
	const uint8_t *data;
	size_t size;
};

struct slim_video_depack_stats {
	uint64_t fragments, duplicates, pictures, skipped, bad, key_requests;
};

struct slim_video_depack;

struct slim_video_depack *slim_video_depack_create(void);
void slim_video_depack_destroy(struct slim_video_depack *d);
/* A new association: every stream starts over. */
void slim_video_depack_reset(struct slim_video_depack *d);
/*
 * A VIDEO command (checked by slim-codec-read.c). False when it contradicts
 * what the stream already has (another size for the same picture, bytes
 * past its end...): it is dropped and counted, nothing else changes.
 */
bool slim_video_depack_push(struct slim_video_depack *d, const struct slim_cmd *cmd,
		uint64_t now_us);
/* The next whole picture of any stream, in order; false when none is ready. */
bool slim_video_depack_pop(struct slim_video_depack *d, struct slim_video_au *au,
		uint64_t now_us);
/*
 * The decoder could not use stream's picture `frame` (a decoding error):
 * the stream waits for a key picture as if it had been lost.
 */
void slim_video_depack_broken(struct slim_video_depack *d, uint8_t stream, uint32_t frame);
/*
 * A stream that waits for a key picture and has not asked for one in
 * SLIM_VIDEO_ASK_US: its number and the last picture it handed out; the
 * caller sends VIDEO_RECOVER. False when no stream needs to ask now.
 */
bool slim_video_depack_wants_key(struct slim_video_depack *d, uint64_t now_us,
		uint8_t *stream, uint32_t *frame);
/* Microseconds until a held picture's wait ends (call pop then); -1: none waits. */
int64_t slim_video_depack_next_deadline(const struct slim_video_depack *d, uint64_t now_us);
const struct slim_video_depack_stats *slim_video_depack_stats(const struct slim_video_depack *d);

#endif
