/*
 * Round trips through the codec: the header, the writer's bounds and every
 * command that draws, written with the writer and read back with the
 * reader, field by field (the session's commands: test-codec-session.c).
 */
#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include "codec-check.h"
#include "test-util.h"

static void test_header_layout(void **state)
{
	struct dgram *d = dgram_new(false);
	assert_int_equal(slim_writer_room(&d->w), SLIM_DEFAULT_MTU - 24 - 4);
	assert_true(slim_put_fill(&d->w, (struct slim_rect){ 0x102, 0x304, 0x506, 0x708 },
		0x11223344));
	assert_int_equal(dgram_finish(d), 24 + 4 + 12);
	/* little-endian, packed, as slim-proto.h lays it out */
	static const uint8_t expect[] = {
		'S', 'L', 'I', 'M', SLIM_VERSION, 0, 1, 0,
		0xcd, 0xab, 0x34, 0x12, 0xef, 0xcd, 0xab, 0x89,
		0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01,
		SLIM_CMD_FILL, 0, 12, 0,
		0x02, 0x01, 0x04, 0x03, 0x06, 0x05, 0x08, 0x07, 0x44, 0x33, 0x22, 0x11,
	};
	assert_memory_equal(d->buf, expect, sizeof(expect));

	slim_writer_init(&d->w, d->buf, SLIM_DEFAULT_MTU, ASSOC, true);
	assert_int_equal(dgram_finish(d), 24);
	assert_int_equal(d->buf[5], SLIM_DGRAM_UPSTREAM);
	assert_int_equal(d->buf[6], 0);
	free(d);
}

static void test_fill(void **state)
{
	struct dgram *d = dgram_new(false);
	struct slim_rect r = { 3, 4, 100, 50 };
	assert_true(slim_put_fill(&d->w, r, 0x80abcdef));
	dgram_finish(d);
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, false, 1);
	next_ok(&rd, &cmd, SLIM_CMD_FILL, 0);
	assert_rect(cmd.fill.r, r);
	assert_int_equal(cmd.fill.color, 0x80abcdef);
	expect_end(&rd);
	free(d);
}

static void check_set(uint8_t flags)
{
	struct test_rng rng;
	test_rng_init(&rng, 100 + flags);
	struct dgram *d = dgram_new(false);
	struct slim_rect r = { 10, 20, 13, 7 };
	size_t raw_len = slim_set_raw_len(r, flags);
	assert_int_equal(raw_len, 13 * 7 * ((flags & SLIM_SET_RGB888) ? 3 : 4));
	uint8_t *raw = malloc(raw_len);
	uint8_t *body = test_put_set(&d->w, r, flags, &rng, raw);
	assert_non_null(body);
	size_t payload_len = d->w.len - (size_t)(body - d->buf) - sizeof(struct slim_wire_set);
	dgram_finish(d);

	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, false, 1);
	next_ok(&rd, &cmd, SLIM_CMD_SET, flags);
	assert_rect(cmd.set.r, r);
	assert_ptr_equal(cmd.set.data, body + sizeof(struct slim_wire_set));
	assert_int_equal(cmd.set.len, payload_len);
	if (flags & SLIM_SET_LZ4) {
		assert_true(payload_len < raw_len);
		uint8_t *out = malloc(raw_len);
		assert_int_equal(LZ4_decompress_safe((const char *)cmd.set.data, (char *)out,
			(int)cmd.set.len, (int)raw_len), (int)raw_len);
		assert_memory_equal(out, raw, raw_len);
		free(out);
	} else {
		assert_int_equal(cmd.set.len, raw_len);
		assert_memory_equal(cmd.set.data, raw, raw_len);
	}
	expect_end(&rd);
	free(raw);
	free(d);
}

static void test_set_xrgb(void **state)
{
	check_set(0);
}

static void test_set_rgb888(void **state)
{
	check_set(SLIM_SET_RGB888);
}

static void test_set_lz4(void **state)
{
	check_set(SLIM_SET_LZ4);
	check_set(SLIM_SET_LZ4 | SLIM_SET_RGB888);
}

static void test_bitmap(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 3);
	struct dgram *d = dgram_new(false);
	struct slim_rect r = { 5, 6, 13, 7 };
	uint8_t *body = test_put_bitmap(&d->w, r, 0x00ff00ff, 0x12345678, &rng);
	assert_non_null(body);
	assert_int_equal(d->w.len, 24 + 4 + 16 + 2 * 7);
	dgram_finish(d);
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, false, 1);
	next_ok(&rd, &cmd, SLIM_CMD_BITMAP, 0);
	assert_rect(cmd.bitmap.r, r);
	assert_int_equal(cmd.bitmap.fg, 0x00ff00ff);
	assert_int_equal(cmd.bitmap.bg, 0x12345678);
	assert_ptr_equal(cmd.bitmap.bits, body + sizeof(struct slim_wire_bitmap));
	expect_end(&rd);
	free(d);
}

static void test_copy(void **state)
{
	struct dgram *d = dgram_new(false);
	struct slim_rect src = { 1, 2, 300, 200 };
	assert_true(slim_put_copy(&d->w, src, 339, 279));
	dgram_finish(d);
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, false, 1);
	next_ok(&rd, &cmd, SLIM_CMD_COPY, 0);
	assert_rect(cmd.copy.src, src);
	assert_int_equal(cmd.copy.dx, 339);
	assert_int_equal(cmd.copy.dy, 279);
	expect_end(&rd);
	free(d);
}

static void check_cscs(uint8_t depth)
{
	struct test_rng rng;
	test_rng_init(&rng, 4);
	struct dgram *d = dgram_new(false);
	struct slim_wire_cscs c = {
		.src_w = 101, .src_h = 77,
		.dst = { 100, 50, 404, 308 },
		.psrc = { 4, 2, 33, 17 },
		.pdst = { 117, 59, 130, 64 },
	};
	/* the layout the header describes, computed independently */
	size_t ys = depth == SLIM_CSCS_DEPTH4 ? 17 : 33; /* ceil(33 / 2) nibbles a row */
	size_t cs = depth == SLIM_CSCS_DEPTH4 ? 9 : 17;  /* 17 chroma samples a row */
	size_t ch = 9;
	size_t ys2, cs2;
	assert_int_equal(slim_cscs_payload_len(33, 17, depth, &ys2, &cs2), ys * 17 + 2 * cs * ch);
	assert_int_equal(ys2, ys);
	assert_int_equal(cs2, cs);

	uint8_t *body = test_put_cscs(&d->w, &c, depth, &rng);
	assert_non_null(body);
	assert_int_equal(d->w.len, 24 + 4 + 28 + ys * 17 + 2 * cs * ch);
	dgram_finish(d);
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, false, 1);
	next_ok(&rd, &cmd, SLIM_CMD_CSCS, depth);
	const struct slim_cscs *o = &cmd.cscs;
	assert_int_equal(o->src_w, 101);
	assert_int_equal(o->src_h, 77);
	assert_wire_rect(o->dst, c.dst);
	assert_wire_rect(o->psrc, c.psrc);
	assert_wire_rect(o->pdst, c.pdst);
	assert_int_equal(o->depth, depth);
	assert_int_equal(o->y_stride, ys);
	assert_int_equal(o->c_stride, cs);
	assert_ptr_equal(o->y, body + sizeof(c));
	assert_ptr_equal(o->u, o->y + ys * 17);
	assert_ptr_equal(o->v, o->u + cs * ch);
	assert_ptr_equal(o->v + cs * ch, d->buf + d->len);
	expect_end(&rd);
	free(d);
}

static void test_cscs_depth8(void **state)
{
	check_cscs(SLIM_CSCS_DEPTH8);
}

static void test_cscs_depth4(void **state)
{
	check_cscs(SLIM_CSCS_DEPTH4);
}

static void test_cscs_payload_len(void **state)
{
	for (uint16_t w = 1; w < 12; w++) {
		for (uint16_t h = 1; h < 12; h++) {
			size_t cw = (w + 1u) / 2, ch = (h + 1u) / 2;
			size_t ys, cs;
			assert_int_equal(slim_cscs_payload_len(w, h, SLIM_CSCS_DEPTH8, &ys, &cs),
				(size_t)w * h + 2 * cw * ch);
			assert_int_equal(ys, w);
			assert_int_equal(cs, cw);
			assert_int_equal(slim_cscs_payload_len(w, h, SLIM_CSCS_DEPTH4, &ys, &cs),
				(w + 1u) / 2 * h + 2 * ((cw + 1) / 2) * ch);
			assert_int_equal(ys, (w + 1u) / 2);
			assert_int_equal(cs, (cw + 1) / 2);
			assert_int_equal(slim_cscs_payload_len(w, h, SLIM_CSCS_DEPTH8, NULL, NULL),
				(size_t)w * h + 2 * cw * ch);
		}
	}
}

static void test_cursor_image(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 5);
	struct dgram *d = dgram_new(false);
	struct slim_wire_cursor_image h = {
		.serial = 0xdeadbeef, .w = 24, .h = 32, .hot_x = 23, .hot_y = 31,
		.row = 8, .rows = 4,
	};
	uint8_t *body = test_put_cursor_image(&d->w, &h, &rng);
	assert_non_null(body);
	dgram_finish(d);
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, false, 1);
	next_ok(&rd, &cmd, SLIM_CMD_CURSOR_IMAGE, 0);
	assert_int_equal(cmd.cursor_image.hdr.serial, 0xdeadbeef);
	assert_int_equal(cmd.cursor_image.hdr.w, 24);
	assert_int_equal(cmd.cursor_image.hdr.h, 32);
	assert_int_equal(cmd.cursor_image.hdr.hot_x, 23);
	assert_int_equal(cmd.cursor_image.hdr.hot_y, 31);
	assert_int_equal(cmd.cursor_image.hdr.row, 8);
	assert_int_equal(cmd.cursor_image.hdr.rows, 4);
	assert_ptr_equal(cmd.cursor_image.pixels, body + sizeof(h));
	assert_ptr_equal(cmd.cursor_image.pixels + 24 * 4 * 4, d->buf + d->len);
	expect_end(&rd);
	free(d);
}

static void test_cursor_pos(void **state)
{
	struct dgram *d = dgram_new(false);
	assert_true(slim_put_cursor_pos(&d->w, -5, -32768, true));
	assert_true(slim_put_cursor_pos(&d->w, 32767, 12, false));
	dgram_finish(d);
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, false, 2);
	next_ok(&rd, &cmd, SLIM_CMD_CURSOR_POS, 0);
	assert_int_equal(cmd.cursor_pos.x, -5);
	assert_int_equal(cmd.cursor_pos.y, -32768);
	assert_int_equal(cmd.cursor_pos.visible, 1);
	next_ok(&rd, &cmd, SLIM_CMD_CURSOR_POS, 0);
	assert_int_equal(cmd.cursor_pos.x, 32767);
	assert_int_equal(cmd.cursor_pos.y, 12);
	assert_int_equal(cmd.cursor_pos.visible, 0);
	expect_end(&rd);
	free(d);
}

static void test_frame_end(void **state)
{
	struct dgram *d = dgram_new(false);
	struct slim_wire_frame_end fe = {
		.frame = 0xfffffffe, .report_from = 0x80000001,
		.damage_us = UINT64_C(0xfedcba9876543210), .encoded_us = UINT64_C(1) << 63,
	};
	assert_true(slim_put_frame_end(&d->w, &fe));
	dgram_finish(d);
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, false, 1);
	next_ok(&rd, &cmd, SLIM_CMD_FRAME_END, 0);
	assert_int_equal(cmd.frame_end.frame, fe.frame);
	assert_int_equal(cmd.frame_end.report_from, fe.report_from);
	assert_true(cmd.frame_end.damage_us == fe.damage_us);
	assert_true(cmd.frame_end.encoded_us == fe.encoded_us);
	expect_end(&rd);
	free(d);
}

/* Every downstream command in one datagram, read back in order. */
static void test_batch_downstream(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 6);
	struct dgram *d = dgram_new(false);
	slim_writer_init(&d->w, d->buf, SLIM_MAX_MTU, ASSOC, false);
	struct slim_rect fill_r = { 0, 0, 640, 480 }, set_r = { 630, 470, 10, 10 };
	struct slim_rect bm_r = { 1, 1, 9, 3 };
	struct slim_wire_cscs c = {
		.src_w = 64, .src_h = 48, .dst = { 0, 0, 64, 48 },
		.psrc = { 0, 0, 64, 48 }, .pdst = { 0, 0, 64, 48 },
	};
	struct slim_wire_cursor_image ci = { .serial = 1, .w = 8, .h = 8, .rows = 8 };
	struct slim_wire_frame_end fe = { .frame = 9 };
	/* an input acknowledgement leads the datagram, as the encoder puts it */
	assert_true(slim_put_input_ack(&d->w, 33));
	assert_true(slim_put_fill(&d->w, fill_r, 1));
	assert_non_null(test_put_set(&d->w, set_r, 0, &rng, NULL));
	assert_non_null(test_put_set(&d->w, set_r, SLIM_SET_RGB888, &rng, NULL));
	assert_non_null(test_put_set(&d->w, set_r, SLIM_SET_LZ4, &rng, NULL));
	assert_non_null(test_put_bitmap(&d->w, bm_r, 2, 3, &rng));
	assert_true(slim_put_copy(&d->w, (struct slim_rect){ 0, 0, 320, 240 }, 320, 240));
	assert_non_null(test_put_cscs(&d->w, &c, SLIM_CSCS_DEPTH8, &rng));
	assert_non_null(test_put_cscs(&d->w, &c, SLIM_CSCS_DEPTH4, &rng));
	assert_non_null(test_put_cursor_image(&d->w, &ci, &rng));
	assert_true(slim_put_cursor_pos(&d->w, 1, 2, true));
	assert_true(slim_put_frame_end(&d->w, &fe));
	assert_int_equal(d->w.count, 12);
	d->len = slim_writer_finish(&d->w, SEQ, TIME_US);

	static const uint8_t types[] = {
		SLIM_CMD_INPUT_ACK, SLIM_CMD_FILL, SLIM_CMD_SET, SLIM_CMD_SET, SLIM_CMD_SET, SLIM_CMD_BITMAP,
		SLIM_CMD_COPY, SLIM_CMD_CSCS, SLIM_CMD_CSCS, SLIM_CMD_CURSOR_IMAGE,
		SLIM_CMD_CURSOR_POS, SLIM_CMD_FRAME_END,
	};
	static const uint8_t flags[] = {
		0, 0, 0, SLIM_SET_RGB888, SLIM_SET_LZ4, 0, 0, SLIM_CSCS_DEPTH8, SLIM_CSCS_DEPTH4,
		0, 0, 0,
	};
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, false, 12);
	for (size_t i = 0; i < sizeof(types); i++) {
		next_ok(&rd, &cmd, types[i], flags[i]);
	}
	assert_int_equal(cmd.frame_end.frame, 9);
	expect_end(&rd);
	free(d);
}

static void test_writer_mtu(void **state)
{
	uint8_t buf[SLIM_MIN_MTU];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), ASSOC, false);
	assert_int_equal(slim_writer_room(&w), SLIM_MIN_MTU - 24 - 4);

	/* one byte too many is refused and changes nothing */
	assert_null(slim_writer_add(&w, SLIM_CMD_SET, 0, SLIM_MIN_MTU - 24 - 4 + 1));
	assert_int_equal(w.len, 24);
	assert_int_equal(w.count, 0);
	/* exactly the room fits, and then nothing more */
	assert_non_null(slim_writer_add(&w, SLIM_CMD_SET, 0, SLIM_MIN_MTU - 24 - 4));
	assert_int_equal(w.len, SLIM_MIN_MTU);
	assert_int_equal(slim_writer_room(&w), 0);
	assert_null(slim_writer_add(&w, SLIM_CMD_FRAME_END, 0, 0));
	assert_false(slim_put_cursor_pos(&w, 0, 0, false));
	assert_int_equal(w.count, 1);

	/* a batch of FILLs stops where the next would not fit */
	slim_writer_reset(&w);
	size_t n = 0;
	while (slim_put_fill(&w, (struct slim_rect){ (uint16_t)n, 0, 1, 1 }, (uint32_t)n)) {
		n++;
		assert_true(w.len <= SLIM_MIN_MTU);
	}
	assert_int_equal(n, (SLIM_MIN_MTU - 24) / 16);
	assert_int_equal(w.count, n);
	size_t len = slim_writer_finish(&w, SEQ, TIME_US);
	assert_int_equal(len, 24 + 16 * n);
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, buf, len, false, (uint16_t)n);
	for (size_t i = 0; i < n; i++) {
		next_ok(&rd, &cmd, SLIM_CMD_FILL, 0);
		assert_int_equal(cmd.fill.r.x, i);
		assert_int_equal(cmd.fill.color, i);
	}
	expect_end(&rd);

	/* too many input events, too many NACK ranges for the MTU: 4 + 20 * 11 fit in 228 */
	struct slim_wire_input ev[16] = { 0 };
	slim_writer_init(&w, buf, sizeof(buf), ASSOC, true);
	assert_false(slim_put_input(&w, 1, ev, 16));
	assert_false(slim_put_input(&w, 1, ev, 12));
	assert_int_equal(w.count, 0);
	assert_true(slim_put_input(&w, 1, ev, 11));
	assert_false(slim_put_held(&w, 12, NULL, 0)); /* 4 bytes left, HELD needs 12 */
	struct slim_wire_seq_range ranges[SLIM_NACK_MAX_RANGES] = { 0 };
	slim_writer_reset(&w);
	assert_false(slim_put_nack(&w, ranges, SLIM_NACK_MAX_RANGES, 0));
	assert_int_equal(w.count, 0);
	assert_int_equal(w.len, 24);
}

/* A body longer than a command's 16-bit length is refused even when the MTU allows it. */
static void test_writer_limits(void **state)
{
	size_t size = 300000;
	uint8_t *buf = malloc(size);
	assert_non_null(buf);
	struct slim_writer w;
	slim_writer_init(&w, buf, size, ASSOC, false);
	assert_null(slim_writer_add(&w, SLIM_CMD_SET, 0, (size_t)UINT16_MAX + 1));
	assert_int_equal(w.count, 0);
	assert_non_null(slim_writer_add(&w, SLIM_CMD_SET, 0, UINT16_MAX));
	slim_writer_reset(&w);
	/* at most 65535 commands: the count is 16 bits */
	for (size_t i = 0; i < UINT16_MAX; i++) {
		assert_non_null(slim_writer_add(&w, SLIM_CMD_FRAME_END, 0, 0));
	}
	assert_null(slim_writer_add(&w, SLIM_CMD_FRAME_END, 0, 0));
	assert_int_equal(w.count, UINT16_MAX);
	assert_int_equal(slim_writer_finish(&w, 1, 1), 24 + 4 * (size_t)UINT16_MAX);
	free(buf);
}

static void test_writer_shrink_last(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 7);
	struct dgram *d = dgram_new(false);
	size_t room = slim_writer_room(&d->w);
	uint8_t *body = slim_writer_add(&d->w, SLIM_CMD_SET, 0, room);
	assert_non_null(body);
	assert_int_equal(slim_writer_room(&d->w), 0);
	/* a 10x1 row turned out to need 40 bytes */
	struct slim_wire_set s = { .r = { 7, 8, 10, 1 } };
	memcpy(body, &s, sizeof(s));
	uint8_t px[40];
	test_rand_bytes(&rng, px, sizeof(px));
	memcpy(body + sizeof(s), px, sizeof(px));
	slim_writer_shrink_last(&d->w, body, sizeof(s) + sizeof(px));
	assert_int_equal(d->w.len, 24 + 4 + 48);
	assert_int_equal(d->w.count, 1);
	assert_int_equal(slim_writer_room(&d->w), SLIM_DEFAULT_MTU - 24 - 4 - 48 - 4);
	/* what follows goes right after the shrunk command */
	assert_true(slim_put_fill(&d->w, (struct slim_rect){ 1, 2, 3, 4 }, 5));
	assert_int_equal(dgram_finish(d), 24 + 4 + 48 + 16);

	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, false, 2);
	next_ok(&rd, &cmd, SLIM_CMD_SET, 0);
	assert_rect(cmd.set.r, (struct slim_rect){ 7, 8, 10, 1 });
	assert_int_equal(cmd.set.len, 40);
	assert_memory_equal(cmd.set.data, px, 40);
	next_ok(&rd, &cmd, SLIM_CMD_FILL, 0);
	assert_rect(cmd.fill.r, (struct slim_rect){ 1, 2, 3, 4 });
	expect_end(&rd);

	/* shrinking to the size reserved changes nothing */
	slim_writer_reset(&d->w);
	body = slim_writer_add(&d->w, SLIM_CMD_FILL, 0, 12);
	size_t len = d->w.len;
	slim_writer_shrink_last(&d->w, body, 12);
	assert_int_equal(d->w.len, len);
	free(d);
}

static void test_writer_reset(void **state)
{
	struct dgram *d = dgram_new(false);
	assert_true(slim_put_fill(&d->w, (struct slim_rect){ 0, 0, 1, 1 }, 0));
	slim_writer_reset(&d->w);
	assert_int_equal(d->w.count, 0);
	assert_int_equal(d->w.len, 24);
	assert_true(slim_put_copy(&d->w, (struct slim_rect){ 0, 0, 1, 1 }, 1, 1));
	dgram_finish(d);
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, false, 1);
	next_ok(&rd, &cmd, SLIM_CMD_COPY, 0);
	expect_end(&rd);
	free(d);
}

static void test_error_str(void **state)
{
	for (int e = 0; e < SLIM_ERR_COUNT; e++) {
		const char *s = slim_error_str((enum slim_error)e);
		assert_non_null(s);
		assert_true(strlen(s) > 0);
		assert_string_not_equal(s, "unknown error");
	}
	assert_string_equal(slim_error_str(SLIM_OK), "ok");
	assert_string_equal(slim_error_str(SLIM_ERR_COUNT), "unknown error");
	assert_string_equal(slim_error_str((enum slim_error)-1), "unknown error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_layout),
		cmocka_unit_test(test_fill),
		cmocka_unit_test(test_set_xrgb),
		cmocka_unit_test(test_set_rgb888),
		cmocka_unit_test(test_set_lz4),
		cmocka_unit_test(test_bitmap),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_cscs_depth8),
		cmocka_unit_test(test_cscs_depth4),
		cmocka_unit_test(test_cscs_payload_len),
		cmocka_unit_test(test_cursor_image),
		cmocka_unit_test(test_cursor_pos),
		cmocka_unit_test(test_frame_end),
		cmocka_unit_test(test_batch_downstream),
		cmocka_unit_test(test_writer_mtu),
		cmocka_unit_test(test_writer_limits),
		cmocka_unit_test(test_writer_shrink_last),
		cmocka_unit_test(test_writer_reset),
		cmocka_unit_test(test_error_str),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
