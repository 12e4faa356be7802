/*
 * What the codec's tests share: a datagram written with the writer, and
 * the reader's view of it checked header first.
 */
#ifndef CODEC_CHECK_H
#define CODEC_CHECK_H

#include "slim-codec.h"

#define W 640
#define H 480
#define ASSOC 0x1234abcdu
#define SEQ 0x89abcdefu
#define TIME_US UINT64_C(0x0123456789abcdef)

struct dgram {
	uint8_t buf[SLIM_MAX_MTU];
	struct slim_writer w;
	size_t len;
};

/* An empty datagram of SLIM_DEFAULT_MTU, its buffer filled with 0xee. */
struct dgram *dgram_new(bool upstream);
/* Writes the header (SEQ, TIME_US); returns the length. */
size_t dgram_finish(struct dgram *d);

/* Opens a finished datagram and checks its header. */
void open_dgram(struct slim_reader *r, const uint8_t *buf, size_t len,
		bool upstream, uint16_t count);
/* Reads the next command, which must be of this type and flags. */
void next_ok(struct slim_reader *r, struct slim_cmd *cmd, uint8_t type, uint8_t flags);
/* The reader is at the end, and stays there. */
void expect_end(struct slim_reader *r);
void assert_rect(struct slim_rect a, struct slim_rect b);
void assert_wire_rect(struct slim_rect a, struct slim_wire_rect b);

#endif
