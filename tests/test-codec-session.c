/*
 * Round trips through the codec: the session's commands (HELLO, input and
 * its acknowledgement, ACK and NACK, REFUSE, REDIRECT, MOVE, PING, CARD),
 * written with the writer and read back with the reader, field by field.
 */
#include <stdlib.h>
#include <string.h>
#include "codec-check.h"
#include "test-util.h"

static void test_hello(void **state)
{
	struct dgram *d = dgram_new(true);
	struct slim_wire_hello hello = {
		.version = SLIM_VERSION, .width = 1920, .height = 1080, .mtu = 1400,
		.caps = SLIM_CAP_LZ4 | SLIM_CAP_CSCS | SLIM_CAP_CURSOR,
	};
	strcpy(hello.console_id, "lab-console-0042");
	assert_true(slim_put_hello(&d->w, &hello));
	dgram_finish(d);
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, true, 1);
	next_ok(&rd, &cmd, SLIM_CMD_HELLO, 0);
	assert_int_equal(cmd.hello.version, SLIM_VERSION);
	assert_int_equal(cmd.hello.width, 1920);
	assert_int_equal(cmd.hello.height, 1080);
	assert_int_equal(cmd.hello.mtu, 1400);
	assert_int_equal(cmd.hello.caps, SLIM_CAP_LZ4 | SLIM_CAP_CSCS | SLIM_CAP_CURSOR);
	assert_memory_equal(cmd.hello.console_id, hello.console_id, SLIM_CONSOLE_ID_LEN);
	expect_end(&rd);
	free(d);
}

static void test_input(void **state)
{
	struct dgram *d = dgram_new(true);
	const struct slim_wire_input ev[] = {
		{ .kind = SLIM_INPUT_KEY, .code = 30, .value = 1, .time_ms = 1000 },
		{ .kind = SLIM_INPUT_MOTION_REL, .x = -256 * 3, .y = 129, .time_ms = 1001 },
		{ .kind = SLIM_INPUT_AXIS, .code = 1, .value = -3840, .x = -1, .time_ms = 0xffffffff },
		{ .kind = SLIM_INPUT_FRAME },
	};
	assert_false(slim_put_input(&d->w, 1, ev, 0));
	assert_int_equal(d->w.count, 0);
	assert_true(slim_put_input(&d->w, 0xfffffffe, ev, 4));
	/* the number first, then the events as they are */
	assert_int_equal(dgram_finish(d), 24 + 4 + 4 + 4 * 20);
	static const uint8_t head[] = { SLIM_CMD_INPUT, 0, 84, 0, 0xfe, 0xff, 0xff, 0xff,
		SLIM_INPUT_KEY, 0, 30, 0, 1, 0, 0, 0 };
	assert_memory_equal(d->buf + 24, head, sizeof(head));
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, true, 1);
	next_ok(&rd, &cmd, SLIM_CMD_INPUT, 0);
	assert_int_equal(cmd.input.first, 0xfffffffe);
	assert_int_equal(cmd.input.count, 4);
	for (size_t i = 0; i < 4; i++) {
		struct slim_wire_input got;
		slim_input_get(&cmd, i, &got);
		assert_int_equal(got.kind, ev[i].kind);
		assert_int_equal(got.code, ev[i].code);
		assert_int_equal(got.value, ev[i].value);
		assert_int_equal(got.x, ev[i].x);
		assert_int_equal(got.y, ev[i].y);
		assert_int_equal(got.time_ms, ev[i].time_ms);
	}
	expect_end(&rd);
	free(d);
}

static void test_held(void **state)
{
	struct dgram *d = dgram_new(true);
	uint16_t codes[SLIM_HELD_MAX + 1];
	for (size_t i = 0; i < SLIM_HELD_MAX + 1; i++) {
		codes[i] = (uint16_t)(0x100 + 3 * i);
	}
	/* more than SLIM_HELD_MAX is refused and writes nothing */
	assert_false(slim_put_held(&d->w, 1, codes, SLIM_HELD_MAX + 1));
	assert_int_equal(d->w.count, 0);
	assert_true(slim_put_held(&d->w, 7, NULL, 0));
	assert_true(slim_put_held(&d->w, 0x80000000u, codes, 3));
	assert_true(slim_put_held(&d->w, 0, codes, SLIM_HELD_MAX));
	assert_int_equal(dgram_finish(d), 24 + 3 * (4 + 8) + 2 * 3 + 2 * SLIM_HELD_MAX);
	static const uint8_t second[] = { SLIM_CMD_HELD, 0, 14, 0, 0, 0, 0, 0x80, 3, 0, 0, 0,
		0x00, 0x01, 0x03, 0x01, 0x06, 0x01 };
	assert_memory_equal(d->buf + 24 + 12, second, sizeof(second));
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, true, 3);
	next_ok(&rd, &cmd, SLIM_CMD_HELD, 0);
	assert_int_equal(cmd.held.next, 7);
	assert_int_equal(cmd.held.count, 0);
	next_ok(&rd, &cmd, SLIM_CMD_HELD, 0);
	assert_int_equal(cmd.held.next, 0x80000000u);
	assert_int_equal(cmd.held.count, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(slim_held_get(&cmd, i), codes[i]);
	}
	next_ok(&rd, &cmd, SLIM_CMD_HELD, 0);
	assert_int_equal(cmd.held.next, 0);
	assert_int_equal(cmd.held.count, SLIM_HELD_MAX);
	for (size_t i = 0; i < SLIM_HELD_MAX; i++) {
		assert_int_equal(slim_held_get(&cmd, i), codes[i]);
	}
	expect_end(&rd);
	free(d);
}

static void test_input_ack(void **state)
{
	struct dgram *d = dgram_new(false);
	assert_true(slim_put_input_ack(&d->w, 0xdeadbeef));
	assert_true(slim_put_fill(&d->w, (struct slim_rect){ 0, 0, 1, 1 }, 0));
	assert_true(slim_put_input_ack(&d->w, 0));
	assert_int_equal(dgram_finish(d), 24 + 8 + 16 + 8);
	static const uint8_t first[] = { SLIM_CMD_INPUT_ACK, 0, 4, 0, 0xef, 0xbe, 0xad, 0xde };
	assert_memory_equal(d->buf + 24, first, sizeof(first));
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, false, 3);
	next_ok(&rd, &cmd, SLIM_CMD_INPUT_ACK, 0);
	assert_int_equal(cmd.input_ack.next, 0xdeadbeef);
	next_ok(&rd, &cmd, SLIM_CMD_FILL, 0);
	next_ok(&rd, &cmd, SLIM_CMD_INPUT_ACK, 0);
	assert_int_equal(cmd.input_ack.next, 0);
	expect_end(&rd);
	free(d);
}

static void test_ack(void **state)
{
	struct dgram *d = dgram_new(true);
	struct slim_wire_ack ack = {
		.frame = 77, .highest_seq = 0xffffffff, .received_us = 1,
		.applied_us = UINT64_C(0x1000000000), .echo_us = TIME_US,
	};
	assert_true(slim_put_ack(&d->w, &ack));
	dgram_finish(d);
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, true, 1);
	next_ok(&rd, &cmd, SLIM_CMD_ACK, 0);
	assert_int_equal(cmd.ack.frame, 77);
	assert_int_equal(cmd.ack.highest_seq, 0xffffffff);
	assert_true(cmd.ack.received_us == 1);
	assert_true(cmd.ack.applied_us == UINT64_C(0x1000000000));
	assert_true(cmd.ack.echo_us == TIME_US);
	expect_end(&rd);
	free(d);
}

static void test_nack(void **state)
{
	struct dgram *d = dgram_new(true);
	struct slim_wire_seq_range ranges[SLIM_NACK_MAX_RANGES + 1];
	for (size_t i = 0; i <= SLIM_NACK_MAX_RANGES; i++) {
		ranges[i] = (struct slim_wire_seq_range){ (uint32_t)(10 * i + 1), (uint32_t)(10 * i + 1 + i % 3) };
	}
	assert_false(slim_put_nack(&d->w, ranges, SLIM_NACK_MAX_RANGES + 1, 0));
	assert_int_equal(d->w.count, 0);
	assert_true(slim_put_nack(&d->w, ranges, SLIM_NACK_MAX_RANGES, 0));
	assert_true(slim_put_nack(&d->w, ranges, 0, SLIM_NACK_REPAINT));
	assert_true(slim_put_nack(&d->w, &(struct slim_wire_seq_range){ 0, 0xffffffff }, 1, 0));
	dgram_finish(d);
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, true, 3);
	next_ok(&rd, &cmd, SLIM_CMD_NACK, 0);
	assert_int_equal(cmd.nack.count, SLIM_NACK_MAX_RANGES);
	assert_int_equal(cmd.nack.flags, 0);
	for (size_t i = 0; i < SLIM_NACK_MAX_RANGES; i++) {
		struct slim_wire_seq_range got;
		slim_nack_get(&cmd, i, &got);
		assert_int_equal(got.first, ranges[i].first);
		assert_int_equal(got.last, ranges[i].last);
	}
	next_ok(&rd, &cmd, SLIM_CMD_NACK, 0);
	assert_int_equal(cmd.nack.count, 0);
	assert_int_equal(cmd.nack.flags, SLIM_NACK_REPAINT);
	next_ok(&rd, &cmd, SLIM_CMD_NACK, 0);
	assert_int_equal(cmd.nack.count, 1);
	struct slim_wire_seq_range got;
	slim_nack_get(&cmd, 0, &got);
	assert_int_equal(got.first, 0);
	assert_int_equal(got.last, 0xffffffff);
	expect_end(&rd);
	free(d);
}

/* Reads a datagram holding one command and returns the reader's verdict on it. */
static enum slim_error decode_one(struct dgram *d, bool upstream, struct slim_cmd *cmd)
{
	dgram_finish(d);
	struct slim_reader rd;
	struct slim_dgram hdr;
	assert_int_equal(slim_reader_init(&rd, &hdr, d->buf, d->len, upstream, W, H), SLIM_OK);
	return slim_reader_next(&rd, cmd);
}

static void test_refuse(void **state)
{
	struct dgram *d = dgram_new(false);
	const char *busy = "desk 7 has this session";
	char long_text[SLIM_REFUSE_TEXT_MAX + 50];
	for (size_t i = 0; i < sizeof(long_text) - 1; i++) {
		long_text[i] = (char)('a' + i % 26);
	}
	long_text[sizeof(long_text) - 1] = '\0';
	assert_true(slim_put_refuse(&d->w, SLIM_REFUSE_BUSY, busy));
	/* the body: reason, pad, then the text, not terminated */
	static const uint8_t expect[] = { SLIM_CMD_REFUSE, 0, 4 + 23, 0, SLIM_REFUSE_BUSY, 0, 0, 0 };
	assert_memory_equal(d->buf + 24, expect, sizeof(expect));
	assert_memory_equal(d->buf + 24 + 8, busy, 23);
	assert_int_equal(d->w.len, 24 + 8 + 23);
	assert_true(slim_put_refuse(&d->w, SLIM_REFUSE_UNKNOWN, ""));
	/* a long text is cut at SLIM_REFUSE_TEXT_MAX bytes */
	assert_true(slim_put_refuse(&d->w, 0xbeef, long_text));
	dgram_finish(d);

	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, false, 3);
	next_ok(&rd, &cmd, SLIM_CMD_REFUSE, 0);
	assert_int_equal(cmd.refuse.reason, SLIM_REFUSE_BUSY);
	assert_int_equal(cmd.refuse.len, strlen(busy));
	assert_memory_equal(cmd.refuse.text, busy, strlen(busy));
	next_ok(&rd, &cmd, SLIM_CMD_REFUSE, 0);
	assert_int_equal(cmd.refuse.reason, SLIM_REFUSE_UNKNOWN);
	assert_int_equal(cmd.refuse.len, 0);
	next_ok(&rd, &cmd, SLIM_CMD_REFUSE, 0);
	assert_int_equal(cmd.refuse.reason, 0xbeef);
	assert_int_equal(cmd.refuse.len, SLIM_REFUSE_TEXT_MAX);
	assert_memory_equal(cmd.refuse.text, long_text, SLIM_REFUSE_TEXT_MAX);
	expect_end(&rd);

	/* too short for its reason, longer than the longest text */
	static const size_t bad_len[] = { 0, 3, 4 + SLIM_REFUSE_TEXT_MAX + 1 };
	for (size_t i = 0; i < sizeof(bad_len) / sizeof(bad_len[0]); i++) {
		slim_writer_reset(&d->w);
		uint8_t *body = slim_writer_add(&d->w, SLIM_CMD_REFUSE, 0, bad_len[i]);
		assert_non_null(body);
		memset(body, 0, bad_len[i]);
		assert_int_equal(decode_one(d, false, &cmd), SLIM_ERR_LENGTH);
	}
	/* downstream only */
	slim_writer_init(&d->w, d->buf, SLIM_DEFAULT_MTU, ASSOC, true);
	assert_true(slim_put_refuse(&d->w, SLIM_REFUSE_BUSY, busy));
	assert_int_equal(decode_one(d, true, &cmd), SLIM_ERR_DIRECTION);
	free(d);
}

/* HELLO presenting an attach token: 44 + 16 bytes; any other length is refused. */
static void test_hello_token(void **state)
{
	struct dgram *d = dgram_new(true);
	struct slim_wire_hello hello = {
		.version = SLIM_VERSION, .width = 800, .height = 600, .mtu = 1400,
		.caps = SLIM_CAP_LZ4,
	};
	strcpy(hello.console_id, "desk-7");
	uint8_t token[SLIM_ATTACH_TOKEN_LEN];
	for (size_t i = 0; i < sizeof(token); i++) {
		token[i] = (uint8_t)(0xa0 + i);
	}
	assert_true(slim_put_hello_token(&d->w, &hello, token));
	assert_true(slim_put_hello(&d->w, &hello));
	dgram_finish(d);
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, true, 2);
	next_ok(&rd, &cmd, SLIM_CMD_HELLO, 0);
	assert_true(cmd.has_token);
	assert_memory_equal(cmd.token, token, sizeof(token));
	assert_int_equal(cmd.hello.width, 800);
	assert_int_equal(cmd.hello.height, 600);
	assert_memory_equal(cmd.hello.console_id, hello.console_id, SLIM_CONSOLE_ID_LEN);
	next_ok(&rd, &cmd, SLIM_CMD_HELLO, 0);
	assert_false(cmd.has_token);
	expect_end(&rd);

	static const size_t bad_len[] = { 43, 45, 59, 61 };
	for (size_t i = 0; i < sizeof(bad_len) / sizeof(bad_len[0]); i++) {
		slim_writer_reset(&d->w);
		uint8_t *body = slim_writer_add(&d->w, SLIM_CMD_HELLO, 0, bad_len[i]);
		assert_non_null(body);
		memset(body, 0, bad_len[i]);
		memcpy(body, &hello, bad_len[i] < sizeof(hello) ? bad_len[i] : sizeof(hello));
		assert_int_equal(decode_one(d, true, &cmd), SLIM_ERR_LENGTH);
	}

	/* the console's video budget: after the fixed part, before the token */
	slim_writer_reset(&d->w);
	assert_true(slim_put_hello_ext(&d->w, &hello, &(struct slim_hello_parts){ .video_mbit = 25, .token = token }));
	assert_true(slim_put_hello_ext(&d->w, &hello, &(struct slim_hello_parts){ .video_mbit = 100000 }));
	assert_true(slim_put_hello_ext(&d->w, &hello, &(struct slim_hello_parts){ 0 }));
	dgram_finish(d);
	open_dgram(&rd, d->buf, d->len, true, 3);
	next_ok(&rd, &cmd, SLIM_CMD_HELLO, 0);
	assert_int_equal(cmd.video_mbit, 25);
	assert_true(cmd.hello.caps & SLIM_CAP_VIDEO_BUDGET);
	assert_true(cmd.has_token);
	assert_memory_equal(cmd.token, token, sizeof(token));
	next_ok(&rd, &cmd, SLIM_CMD_HELLO, 0);
	assert_int_equal(cmd.video_mbit, 100000);
	assert_false(cmd.has_token);
	next_ok(&rd, &cmd, SLIM_CMD_HELLO, 0);
	assert_int_equal(cmd.video_mbit, 0);
	assert_false(cmd.hello.caps & SLIM_CAP_VIDEO_BUDGET);
	expect_end(&rd);
	/* the caps say a budget follows: 44 or 60 bytes are too few, 48 and 64 right */
	hello.caps |= SLIM_CAP_VIDEO_BUDGET;
	static const size_t lens[] = { 44, 48, 60, 64, 65 };
	static const enum slim_error want[] = { SLIM_ERR_LENGTH, SLIM_OK, SLIM_ERR_LENGTH, SLIM_OK,
		SLIM_ERR_LENGTH };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		slim_writer_reset(&d->w);
		uint8_t *body = slim_writer_add(&d->w, SLIM_CMD_HELLO, 0, lens[i]);
		assert_non_null(body);
		memset(body, 0, lens[i]);
		memcpy(body, &hello, sizeof(hello));
		assert_int_equal(decode_one(d, true, &cmd), want[i]);
	}
	free(d);
}

/* The manager a console could not reach: after the keyboard, before any token. */
static void test_hello_unreached(void **state)
{
	struct dgram *d = dgram_new(true);
	struct slim_wire_hello hello = {
		.version = SLIM_VERSION, .width = 800, .height = 600, .mtu = 1400,
		.caps = SLIM_CAP_MOVED,
	};
	strcpy(hello.console_id, "desk-8");
	uint8_t fp[SLIM_UNREACHED_LEN], token[SLIM_ATTACH_TOKEN_LEN] = { 7 };
	for (size_t i = 0; i < sizeof(fp); i++) {
		fp[i] = (uint8_t)(0x30 + i);
	}
	assert_true(slim_put_hello_ext(&d->w, &hello, &(struct slim_hello_parts){
		.video_mbit = 9, .unreached = fp, .token = token }));
	assert_true(slim_put_hello_ext(&d->w, &hello, &(struct slim_hello_parts){ .unreached = fp }));
	assert_true(slim_put_hello(&d->w, &hello));
	dgram_finish(d);
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, true, 3);
	next_ok(&rd, &cmd, SLIM_CMD_HELLO, 0);
	assert_true(cmd.hello.caps & SLIM_CAP_UNREACHED);
	assert_true(cmd.hello.caps & SLIM_CAP_MOVED);
	assert_int_equal(cmd.video_mbit, 9);
	assert_non_null(cmd.unreached);
	assert_memory_equal(cmd.unreached, fp, sizeof(fp));
	assert_true(cmd.has_token);
	assert_memory_equal(cmd.token, token, sizeof(token));
	next_ok(&rd, &cmd, SLIM_CMD_HELLO, 0);
	assert_non_null(cmd.unreached);
	assert_memory_equal(cmd.unreached, fp, sizeof(fp));
	assert_false(cmd.has_token);
	next_ok(&rd, &cmd, SLIM_CMD_HELLO, 0);
	assert_null(cmd.unreached);
	assert_false(cmd.hello.caps & SLIM_CAP_UNREACHED);
	expect_end(&rd);
	/* the caps say a key follows: 44 + 31 bytes are too few, 76 and 92 right, 93 too many */
	hello.caps |= SLIM_CAP_UNREACHED;
	static const size_t lens[] = { 44, 75, 76, 91, 92, 93 };
	static const enum slim_error want[] = { SLIM_ERR_LENGTH, SLIM_ERR_LENGTH, SLIM_OK,
		SLIM_ERR_LENGTH, SLIM_OK, SLIM_ERR_LENGTH };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		slim_writer_reset(&d->w);
		uint8_t *body = slim_writer_add(&d->w, SLIM_CMD_HELLO, 0, lens[i]);
		assert_non_null(body);
		memset(body, 0, lens[i]);
		memcpy(body, &hello, sizeof(hello));
		assert_int_equal(decode_one(d, true, &cmd), want[i]);
	}
	free(d);
}

static void test_redirect(void **state)
{
	struct dgram *d = dgram_new(false);
	struct slim_wire_redirect v4 = { .family = 4, .port = 5551, .addr = { 10, 0, 0, 7 } };
	struct slim_wire_redirect v6 = { .family = 6, .port = 65535 };
	for (size_t i = 0; i < SLIM_ATTACH_TOKEN_LEN; i++) {
		v4.token[i] = (uint8_t)i;
		v6.token[i] = (uint8_t)(0xff - i);
	}
	for (size_t i = 0; i < sizeof(v4.key); i++) {
		v4.key[i] = (uint8_t)(0x80 + i);
		v6.key[i] = (uint8_t)(0x40 + i);
	}
	v6.addr[15] = 1; /* ::1 */
	assert_true(slim_put_redirect(&d->w, &v4));
	assert_true(slim_put_redirect(&d->w, &v6));
	dgram_finish(d);
	/* the header and layout of section 1 of session-manager.md */
	static const uint8_t head[] = { SLIM_CMD_REDIRECT, 0, 68, 0, 4, 0, 0xaf, 0x15, 10, 0, 0, 7 };
	assert_memory_equal(d->buf + sizeof(struct slim_wire_dgram), head, sizeof(head));
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, false, 2);
	next_ok(&rd, &cmd, SLIM_CMD_REDIRECT, 0);
	assert_memory_equal(&cmd.redirect, &v4, sizeof(v4));
	next_ok(&rd, &cmd, SLIM_CMD_REDIRECT, 0);
	assert_memory_equal(&cmd.redirect, &v6, sizeof(v6));
	expect_end(&rd);

	/* a family other than 4 or 6, and port 0, are no endpoint */
	static const uint8_t bad_family[] = { 0, 5, 10, 255 };
	for (size_t i = 0; i < sizeof(bad_family); i++) {
		slim_writer_reset(&d->w);
		struct slim_wire_redirect r = v4;
		r.family = bad_family[i];
		assert_true(slim_put_redirect(&d->w, &r));
		assert_int_equal(decode_one(d, false, &cmd), SLIM_ERR_FIELD);
	}
	slim_writer_reset(&d->w);
	struct slim_wire_redirect r = v6;
	r.port = 0;
	assert_true(slim_put_redirect(&d->w, &r));
	assert_int_equal(decode_one(d, false, &cmd), SLIM_ERR_FIELD);
	/* exactly 68 bytes (36 before the per-attach key) */
	static const size_t bad_len[] = { 0, 36, 67, 69 };
	for (size_t i = 0; i < sizeof(bad_len) / sizeof(bad_len[0]); i++) {
		slim_writer_reset(&d->w);
		uint8_t *body = slim_writer_add(&d->w, SLIM_CMD_REDIRECT, 0, bad_len[i]);
		assert_non_null(body);
		memset(body, 0, bad_len[i]);
		if (bad_len[i] > 0) {
			body[0] = 4;
		}
		assert_int_equal(decode_one(d, false, &cmd), SLIM_ERR_LENGTH);
	}
	/* downstream only */
	slim_writer_init(&d->w, d->buf, SLIM_DEFAULT_MTU, ASSOC, true);
	assert_true(slim_put_redirect(&d->w, &v4));
	assert_int_equal(decode_one(d, true, &cmd), SLIM_ERR_DIRECTION);
	free(d);
}

static void test_move(void **state)
{
	struct dgram *d = dgram_new(false);
	struct slim_wire_move m = { .family = 4, .port = 5550, .addr = { 10, 77, 0, 2 } };
	for (size_t i = 0; i < sizeof(m.fingerprint); i++) {
		m.fingerprint[i] = (uint8_t)(0xa0 + i);
	}
	assert_true(slim_put_move(&d->w, &m));
	dgram_finish(d);
	/* the header and layout of section 9 of session-manager.md */
	static const uint8_t head[] = { SLIM_CMD_MOVE, 0, 52, 0, 4, 0, 0xae, 0x15, 10, 77, 0, 2 };
	assert_memory_equal(d->buf + sizeof(struct slim_wire_dgram), head, sizeof(head));
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, false, 1);
	next_ok(&rd, &cmd, SLIM_CMD_MOVE, 0);
	assert_memory_equal(&cmd.move, &m, sizeof(m));
	expect_end(&rd);
	/* no endpoint: another family, port 0 */
	struct slim_wire_move bad = m;
	bad.family = 5;
	slim_writer_reset(&d->w);
	assert_true(slim_put_move(&d->w, &bad));
	assert_int_equal(decode_one(d, false, &cmd), SLIM_ERR_FIELD);
	bad = m;
	bad.port = 0;
	slim_writer_reset(&d->w);
	assert_true(slim_put_move(&d->w, &bad));
	assert_int_equal(decode_one(d, false, &cmd), SLIM_ERR_FIELD);
	/* exactly 52 bytes, downstream only */
	static const size_t bad_len[] = { 0, 20, 51, 53 };
	for (size_t i = 0; i < sizeof(bad_len) / sizeof(bad_len[0]); i++) {
		slim_writer_reset(&d->w);
		uint8_t *body = slim_writer_add(&d->w, SLIM_CMD_MOVE, 0, bad_len[i]);
		assert_non_null(body);
		memset(body, 0, bad_len[i]);
		assert_int_equal(decode_one(d, false, &cmd), SLIM_ERR_LENGTH);
	}
	slim_writer_init(&d->w, d->buf, SLIM_DEFAULT_MTU, ASSOC, true);
	assert_true(slim_put_move(&d->w, &m));
	assert_int_equal(decode_one(d, true, &cmd), SLIM_ERR_DIRECTION);
	free(d);
}

static void test_ping(void **state)
{
	struct dgram *d = dgram_new(true);
	assert_true(slim_put_ping(&d->w));
	assert_int_equal(dgram_finish(d), 24 + 4);
	static const uint8_t expect[] = { SLIM_CMD_PING, 0, 0, 0 };
	assert_memory_equal(d->buf + 24, expect, sizeof(expect));
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, true, 1);
	next_ok(&rd, &cmd, SLIM_CMD_PING, 0);
	expect_end(&rd);

	/* a PING has no body */
	for (size_t len = 1; len <= 8; len *= 2) {
		slim_writer_reset(&d->w);
		memset(slim_writer_add(&d->w, SLIM_CMD_PING, 0, len), 0, len);
		assert_int_equal(decode_one(d, true, &cmd), SLIM_ERR_LENGTH);
	}
	/* upstream only */
	slim_writer_init(&d->w, d->buf, SLIM_DEFAULT_MTU, ASSOC, false);
	assert_true(slim_put_ping(&d->w));
	assert_int_equal(decode_one(d, false, &cmd), SLIM_ERR_DIRECTION);
	/* it needs the room of its header */
	slim_writer_init(&d->w, d->buf, 24 + 3, ASSOC, true);
	assert_false(slim_put_ping(&d->w));
	slim_writer_init(&d->w, d->buf, 24 + 4, ASSOC, true);
	assert_true(slim_put_ping(&d->w));
	free(d);
}

static void test_card(void **state)
{
	struct dgram *d = dgram_new(true);
	struct slim_wire_card card = {
		.event = SLIM_CARD_INSERTED,
		.kind = SLIM_CARD_UID,
		.len = 7,
		.reader = 3,
		.token = { 0x04, 0xa2, 0x5b, 0x1c, 0x3d, 0x80, 0x7f },
	};
	assert_true(slim_put_card(&d->w, &card));
	assert_int_equal(dgram_finish(d), 24 + 4 + 36);
	static const uint8_t expect[] = { SLIM_CMD_CARD, 0, 36, 0, 1, 1, 7, 3,
		0x04, 0xa2, 0x5b, 0x1c, 0x3d, 0x80, 0x7f, 0 };
	assert_memory_equal(d->buf + 24, expect, sizeof(expect));
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, true, 1);
	next_ok(&rd, &cmd, SLIM_CMD_CARD, 0);
	assert_memory_equal(&cmd.card, &card, sizeof(card));
	expect_end(&rd);

	/* the largest token, an ATR hash, and its removal */
	card.kind = SLIM_CARD_ATR_HASH;
	card.len = SLIM_CARD_TOKEN_MAX;
	memset(card.token, 0xc3, sizeof(card.token));
	for (uint8_t event = SLIM_CARD_REMOVED; event <= SLIM_CARD_INSERTED; event++) {
		card.event = event;
		slim_writer_reset(&d->w);
		assert_true(slim_put_card(&d->w, &card));
		assert_int_equal(decode_one(d, true, &cmd), SLIM_OK);
		assert_memory_equal(&cmd.card, &card, sizeof(card));
	}
	/* a removal of a card the console does not know: all zero */
	struct slim_wire_card unknown = { .event = SLIM_CARD_REMOVED };
	slim_writer_reset(&d->w);
	assert_true(slim_put_card(&d->w, &unknown));
	assert_int_equal(decode_one(d, true, &cmd), SLIM_OK);
	assert_memory_equal(&cmd.card, &unknown, sizeof(unknown));

	/* bad fields */
	static const struct { uint8_t event, kind, len; } bad[] = {
		{ 2, SLIM_CARD_UID, 4 },
		{ 0xff, SLIM_CARD_UID, 4 },
		{ SLIM_CARD_INSERTED, 0, 4 },
		{ SLIM_CARD_INSERTED, 3, 4 },
		{ SLIM_CARD_INSERTED, SLIM_CARD_UID, 0 },
		{ SLIM_CARD_INSERTED, SLIM_CARD_ATR_HASH, SLIM_CARD_TOKEN_MAX + 1 },
		{ SLIM_CARD_INSERTED, SLIM_CARD_UID, 0xff },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct slim_wire_card b = { .event = bad[i].event, .kind = bad[i].kind,
			.len = bad[i].len };
		slim_writer_reset(&d->w);
		assert_true(slim_put_card(&d->w, &b));
		assert_int_equal(decode_one(d, true, &cmd), SLIM_ERR_FIELD);
	}
	/* exactly 36 bytes */
	static const size_t lens[] = { 0, 4, 35, 37, 72 };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		slim_writer_reset(&d->w);
		uint8_t *body = slim_writer_add(&d->w, SLIM_CMD_CARD, 0, lens[i]);
		assert_non_null(body);
		memset(body, 0, lens[i]);
		if (lens[i] > 0) {
			body[0] = SLIM_CARD_REMOVED;
		}
		assert_int_equal(decode_one(d, true, &cmd), SLIM_ERR_LENGTH);
	}
	/* upstream only */
	slim_writer_init(&d->w, d->buf, SLIM_DEFAULT_MTU, ASSOC, false);
	card.event = SLIM_CARD_INSERTED;
	assert_true(slim_put_card(&d->w, &card));
	assert_int_equal(decode_one(d, false, &cmd), SLIM_ERR_DIRECTION);
	free(d);
}

static void test_batch_upstream(void **state)
{
	struct dgram *d = dgram_new(true);
	struct slim_wire_hello hello = { .version = 1, .width = 8, .height = 8, .mtu = 256 };
	struct slim_wire_input ev = { .kind = SLIM_INPUT_BUTTON, .code = 0x110, .value = 1 };
	struct slim_wire_seq_range range = { 5, 9 };
	struct slim_wire_ack ack = { .frame = 3, .highest_seq = 12 };
	assert_true(slim_put_hello(&d->w, &hello));
	uint16_t held = 0x110;
	assert_true(slim_put_input(&d->w, 41, &ev, 1));
	assert_true(slim_put_held(&d->w, 42, &held, 1));
	assert_true(slim_put_nack(&d->w, &range, 1, 0));
	assert_true(slim_put_ack(&d->w, &ack));
	assert_int_equal(dgram_finish(d), 24 + 5 * 4 + 44 + 24 + 10 + 12 + 32);
	struct slim_reader rd;
	struct slim_cmd cmd;
	open_dgram(&rd, d->buf, d->len, true, 5);
	next_ok(&rd, &cmd, SLIM_CMD_HELLO, 0);
	assert_int_equal(cmd.hello.mtu, 256);
	next_ok(&rd, &cmd, SLIM_CMD_INPUT, 0);
	assert_int_equal(cmd.input.first, 41);
	assert_int_equal(cmd.input.count, 1);
	next_ok(&rd, &cmd, SLIM_CMD_HELD, 0);
	assert_int_equal(cmd.held.next, 42);
	assert_int_equal(cmd.held.count, 1);
	assert_int_equal(slim_held_get(&cmd, 0), 0x110);
	next_ok(&rd, &cmd, SLIM_CMD_NACK, 0);
	assert_int_equal(cmd.nack.count, 1);
	next_ok(&rd, &cmd, SLIM_CMD_ACK, 0);
	assert_int_equal(cmd.ack.highest_seq, 12);
	expect_end(&rd);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_input),
		cmocka_unit_test(test_held),
		cmocka_unit_test(test_input_ack),
		cmocka_unit_test(test_ack),
		cmocka_unit_test(test_nack),
		cmocka_unit_test(test_refuse),
		cmocka_unit_test(test_hello_token),
		cmocka_unit_test(test_hello_unreached),
		cmocka_unit_test(test_redirect),
		cmocka_unit_test(test_move),
		cmocka_unit_test(test_ping),
		cmocka_unit_test(test_card),
		cmocka_unit_test(test_batch_upstream),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
