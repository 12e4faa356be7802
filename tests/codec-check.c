#include <stdlib.h>
#include <string.h>
#include "codec-check.h"
#include "test-util.h"

void open_dgram(struct slim_reader *r, const uint8_t *buf, size_t len,
		bool upstream, uint16_t count)
{
	struct slim_dgram hdr;
	assert_int_equal(slim_reader_init(r, &hdr, buf, len, upstream, W, H), SLIM_OK);
	assert_int_equal(hdr.flags, upstream ? SLIM_DGRAM_UPSTREAM : 0);
	assert_int_equal(hdr.count, count);
	assert_int_equal(hdr.assoc, ASSOC);
	assert_int_equal(hdr.seq, SEQ);
	assert_true(hdr.time_us == TIME_US);
}

void next_ok(struct slim_reader *r, struct slim_cmd *cmd, uint8_t type, uint8_t flags)
{
	memset(cmd, 0x5a, sizeof(*cmd));
	assert_int_equal(slim_reader_next(r, cmd), SLIM_OK);
	assert_int_equal(cmd->type, type);
	assert_int_equal(cmd->flags, flags);
}

void expect_end(struct slim_reader *r)
{
	struct slim_cmd cmd;
	assert_int_equal(slim_reader_next(r, &cmd), SLIM_OK);
	assert_int_equal(cmd.type, 0);
	/* and it stays at the end */
	assert_int_equal(slim_reader_next(r, &cmd), SLIM_OK);
	assert_int_equal(cmd.type, 0);
}

void assert_rect(struct slim_rect a, struct slim_rect b)
{
	assert_int_equal(a.x, b.x);
	assert_int_equal(a.y, b.y);
	assert_int_equal(a.w, b.w);
	assert_int_equal(a.h, b.h);
}

void assert_wire_rect(struct slim_rect a, struct slim_wire_rect b)
{
	assert_rect(a, (struct slim_rect){ b.x, b.y, b.w, b.h });
}


struct dgram *dgram_new(bool upstream)
{
	struct dgram *d = calloc(1, sizeof(*d));
	assert_non_null(d);
	memset(d->buf, 0xee, sizeof(d->buf));
	slim_writer_init(&d->w, d->buf, SLIM_DEFAULT_MTU, ASSOC, upstream);
	return d;
}

size_t dgram_finish(struct dgram *d)
{
	d->len = slim_writer_finish(&d->w, SEQ, TIME_US);
	assert_true(d->len <= SLIM_DEFAULT_MTU);
	return d->len;
}
