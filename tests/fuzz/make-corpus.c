/*
 * Writes the fuzzers' seed corpus: valid datagrams of every command type,
 * built with the codec, so that the fuzzers start past the header checks.
 *
 *   make-corpus tests/fuzz/corpus
 *
 * writes <dir>/console/ (downstream, for fuzz-console: a 64x48 screen),
 * <dir>/upstream/ (for fuzz-upstream) and <dir>/video/ (VIDEO fragments
 * and what the console does between them, for fuzz-video). The output is
 * deterministic; the generated files are kept in the source tree.
 */
#include <errno.h>
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "slim-codec.h"
#include "slim-desk.h"
#include "slim-video.h"
#include "slim-zstd.h"

/* Keep in sync with fuzz-console.c, fuzz-upstream.c and fuzz-video.c. */
#define FUZZ_ASSOC 0x1234
#define FUZZ_W 64
#define FUZZ_H 48

#define MTU SLIM_MAX_MTU

static const char *out_dir;
static uint8_t buf[MTU];
static uint32_t rng_state = 0x12345678;

static uint32_t rng(void)
{
	/* xorshift32: the corpus must not change between runs */
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

static void make_dir(const char *path)
{
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "make-corpus: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void write_file(const char *sub, const char *name, const uint8_t *data, size_t len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s/%s", out_dir, sub, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "make-corpus: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "make-corpus: %s does not fit\n", what);
		exit(1);
	}
}

/* A finished datagram, checked with the reader the fuzzed code uses. */
static size_t finish(struct slim_writer *w, uint32_t seq, bool upstream)
{
	size_t len = slim_writer_finish(w, seq, 1000000 + seq);
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	enum slim_error err = slim_reader_init(&r, &hdr, w->buf, len, upstream,
		FUZZ_W, FUZZ_H);
	while (err == SLIM_OK) {
		err = slim_reader_next(&r, &cmd);
		if (cmd.type == 0) {
			break;
		}
	}
	if (err != SLIM_OK) {
		fprintf(stderr, "make-corpus: built a bad datagram: %s\n", slim_error_str(err));
		exit(1);
	}
	return len;
}

static void emit(struct slim_writer *w, const char *sub, const char *name, uint32_t seq)
{
	bool upstream = strcmp(sub, "upstream") == 0;
	size_t len = finish(w, seq, upstream);
	write_file(sub, name, w->buf, len);
	slim_writer_reset(w);
}

static struct slim_rect rect(uint16_t x, uint16_t y, uint16_t w, uint16_t h)
{
	return (struct slim_rect){ x, y, w, h };
}

static void put_set(struct slim_writer *w, struct slim_rect r, uint8_t flags)
{
	size_t raw_len = slim_set_raw_len(r, flags);
	uint8_t *raw = malloc(raw_len);
	check(raw != NULL, "SET pixels");
	/* Bands of a few colours, so that LZ4 finds something to compress. */
	for (size_t i = 0; i < raw_len; i++) {
		raw[i] = (uint8_t)((i / 24) % 3 == 0 ? rng() : 0x40 + (i / 48) % 4);
	}
	struct slim_wire_set s = { .r = { r.x, r.y, r.w, r.h } };
	if (flags & SLIM_SET_LZ4) {
		int bound = LZ4_compressBound((int)raw_len);
		uint8_t *body = slim_writer_add(w, SLIM_CMD_SET, flags, sizeof(s) + (size_t)bound);
		check(body != NULL, "SET LZ4");
		memcpy(body, &s, sizeof(s));
		int n = LZ4_compress_default((const char *)raw, (char *)body + sizeof(s),
			(int)raw_len, bound);
		check(n > 0, "LZ4 block");
		slim_writer_shrink_last(w, body, sizeof(s) + (size_t)n);
	} else {
		uint8_t *body = slim_writer_add(w, SLIM_CMD_SET, flags, sizeof(s) + raw_len);
		check(body != NULL, "SET");
		memcpy(body, &s, sizeof(s));
		memcpy(body + sizeof(s), raw, raw_len);
	}
	free(raw);
}

/* A PALETTE of `colors` grey levels: a glyph's edges, packed or in runs. */
static void put_palette(struct slim_writer *w, struct slim_rect r, unsigned colors, bool rle)
{
	size_t n = (size_t)r.w * r.h;
	uint8_t data[2 * 64 * 48];
	size_t len = 0;
	unsigned bits = slim_palette_bits(colors);
	size_t stride = ((size_t)r.w * bits + 7) / 8;
	if (!rle) {
		len = stride * r.h;
		memset(data, 0, len);
	}
	for (size_t i = 0; i < n;) {
		/* runs of 1 to 40 pixels of one level */
		size_t run = 1 + rng() % 40;
		run = run < n - i ? run : n - i;
		uint8_t v = (uint8_t)(rng() % colors);
		if (rle) {
			data[len++] = run == 1 ? v : (uint8_t)(v | 0x80);
			if (run > 1) {
				data[len++] = (uint8_t)(run - 1);
			}
		} else {
			for (size_t k = i; k < i + run; k++) {
				size_t x = k % r.w, y = k / r.w, bit = x * bits;
				data[y * stride + bit / 8] |= (uint8_t)(v << (8 - bits - bit % 8));
			}
		}
		i += run;
	}
	struct slim_wire_palette p = { .r = { r.x, r.y, r.w, r.h }, .colors = (uint8_t)colors };
	uint8_t *body = slim_writer_add(w, SLIM_CMD_PALETTE, rle ? SLIM_PALETTE_RLE : 0,
		sizeof(p) + 3 * (size_t)colors + len);
	check(body != NULL, "PALETTE");
	memcpy(body, &p, sizeof(p));
	for (unsigned i = 0; i < colors; i++) {
		memset(body + sizeof(p) + 3 * i, (int)(i * 255 / colors), 3);
	}
	memcpy(body + sizeof(p) + 3 * (size_t)colors, data, len);
}

static void put_bitmap(struct slim_writer *w, struct slim_rect r, uint32_t fg, uint32_t bg)
{
	size_t len = ((size_t)r.w + 7) / 8 * r.h;
	struct slim_wire_bitmap b = { .r = { r.x, r.y, r.w, r.h }, .fg = fg, .bg = bg };
	uint8_t *body = slim_writer_add(w, SLIM_CMD_BITMAP, 0, sizeof(b) + len);
	check(body != NULL, "BITMAP");
	memcpy(body, &b, sizeof(b));
	for (size_t i = 0; i < len; i++) {
		body[sizeof(b) + i] = (uint8_t)rng();
	}
}

/* One CSCS piece of a src_w x src_h image shown at dst. */
static void put_cscs(struct slim_writer *w, uint8_t depth, uint16_t src_w, uint16_t src_h,
		struct slim_rect dst, struct slim_rect psrc, struct slim_rect pdst)
{
	size_t len = slim_cscs_payload_len(psrc.w, psrc.h, depth, NULL, NULL);
	struct slim_wire_cscs c = {
		.src_w = src_w, .src_h = src_h,
		.dst = { dst.x, dst.y, dst.w, dst.h },
		.psrc = { psrc.x, psrc.y, psrc.w, psrc.h },
		.pdst = { pdst.x, pdst.y, pdst.w, pdst.h },
	};
	uint8_t *body = slim_writer_add(w, SLIM_CMD_CSCS, depth, sizeof(c) + len);
	check(body != NULL, "CSCS");
	memcpy(body, &c, sizeof(c));
	for (size_t i = 0; i < len; i++) {
		body[sizeof(c) + i] = (uint8_t)(i * 7 + (rng() & 15));
	}
}

static void put_cursor_image(struct slim_writer *w, uint32_t serial, uint16_t cw,
		uint16_t ch, uint16_t row, uint16_t rows)
{
	struct slim_wire_cursor_image c = {
		.serial = serial, .w = cw, .h = ch, .hot_x = 1, .hot_y = 2,
		.row = row, .rows = rows,
	};
	size_t len = (size_t)cw * rows * 4;
	uint8_t *body = slim_writer_add(w, SLIM_CMD_CURSOR_IMAGE, 0, sizeof(c) + len);
	check(body != NULL, "CURSOR_IMAGE");
	memcpy(body, &c, sizeof(c));
	for (size_t i = 0; i < len; i++) {
		body[sizeof(c) + i] = (uint8_t)(i % 4 == 3 ? 0xff : rng());
	}
}

static void put_frame_end(struct slim_writer *w, uint32_t frame, uint32_t report_from)
{
	struct slim_wire_frame_end fe = {
		.frame = frame, .report_from = report_from,
		.damage_us = 1000000, .encoded_us = 1000500,
	};
	check(slim_put_frame_end(w, &fe), "FRAME_END");
}

/* Datagrams numbered `seqs`, each with a FILL; the last one ends a frame. */
static void put_sequence(struct slim_writer *w, const char *name, const uint32_t *seqs,
		size_t n, uint32_t report_from)
{
	uint8_t out[8192];
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		check(slim_put_fill(w, rect((uint16_t)(i * 8), 0, 8, 8), 0x00111111u * (uint32_t)i),
			"FILL");
		if (i == n - 1) {
			put_frame_end(w, 1, report_from);
		}
		size_t dlen = finish(w, seqs[i], false);
		check(len + dlen <= sizeof(out), "sequence");
		memcpy(out + len, w->buf, dlen);
		len += dlen;
		slim_writer_reset(w);
	}
	write_file("console", name, out, len);
}

static void console_corpus(void)
{
	const char *d = "console";
	struct slim_writer w;
	slim_writer_init(&w, buf, MTU, FUZZ_ASSOC, false);

	check(slim_put_fill(&w, rect(0, 0, FUZZ_W, FUZZ_H), 0x00204080), "FILL");
	check(slim_put_fill(&w, rect(63, 47, 1, 1), 0xffffffff), "FILL");
	emit(&w, d, "fill", 1);

	put_set(&w, rect(3, 5, 8, 8), 0);
	emit(&w, d, "set-xrgb", 1);

	put_set(&w, rect(50, 40, 10, 5), SLIM_SET_RGB888);
	emit(&w, d, "set-rgb888", 1);

	put_set(&w, rect(0, 0, 16, 16), SLIM_SET_LZ4);
	emit(&w, d, "set-lz4-xrgb", 1);

	put_set(&w, rect(32, 16, 32, 16), SLIM_SET_LZ4 | SLIM_SET_RGB888);
	emit(&w, d, "set-lz4-rgb888", 1);

	put_bitmap(&w, rect(1, 2, 13, 9), 0x000000, 0xffffff);
	put_bitmap(&w, rect(40, 0, 24, 16), 0xff0000, 0x00ff00);
	emit(&w, d, "bitmap", 1);

	/* overlapping moves in both directions */
	check(slim_put_copy(&w, rect(0, 0, 40, 30), 8, 6), "COPY");
	check(slim_put_copy(&w, rect(10, 10, 54, 38), 0, 0), "COPY");
	emit(&w, d, "copy", 1);

	/* a 16x12 image at 32x24, in two pieces of source rows 0-5 and 6-11 */
	put_cscs(&w, SLIM_CSCS_DEPTH8, 16, 12, rect(4, 4, 32, 24), rect(0, 0, 16, 6),
		rect(4, 4, 32, 12));
	put_cscs(&w, SLIM_CSCS_DEPTH8, 16, 12, rect(4, 4, 32, 24), rect(0, 6, 16, 6),
		rect(4, 16, 32, 12));
	emit(&w, d, "cscs-depth8", 1);

	/* odd sizes, at 4 bits a sample */
	put_cscs(&w, SLIM_CSCS_DEPTH4, 7, 5, rect(20, 20, 14, 10), rect(0, 0, 7, 5),
		rect(20, 20, 14, 10));
	emit(&w, d, "cscs-depth4", 1);

	/* scaled down, and partly off the screen: only the visible part is painted */
	put_cscs(&w, SLIM_CSCS_DEPTH8, 24, 16, rect(56, 40, 12, 8), rect(0, 0, 24, 16),
		rect(56, 40, 8, 8));
	emit(&w, d, "cscs-down", 1);

	put_cursor_image(&w, 7, 16, 16, 0, 8);
	put_cursor_image(&w, 7, 16, 16, 8, 8);
	check(slim_put_cursor_pos(&w, 30, -3, true), "CURSOR_POS");
	emit(&w, d, "cursor", 1);

	check(slim_put_fill(&w, rect(8, 8, 16, 16), 0x00abcdef), "FILL");
	put_frame_end(&w, 1, 1);
	emit(&w, d, "frame", 1);

	/* an input acknowledgement alone, and leading a frame as the encoder puts it */
	check(slim_put_input_ack(&w, 5), "INPUT_ACK");
	emit(&w, d, "input-ack", 1);
	check(slim_put_input_ack(&w, 0xffffffff), "INPUT_ACK");
	check(slim_put_fill(&w, rect(0, 0, 8, 8), 0x00ffffff), "FILL");
	put_frame_end(&w, 2, 1);
	emit(&w, d, "input-ack-frame", 1);

	/* every command in one datagram, as the encoder batches them */
	check(slim_put_fill(&w, rect(0, 0, 64, 8), 0x00336699), "FILL");
	put_set(&w, rect(0, 8, 4, 4), 0);
	put_set(&w, rect(4, 8, 4, 4), SLIM_SET_RGB888);
	put_set(&w, rect(8, 8, 8, 4), SLIM_SET_LZ4 | SLIM_SET_RGB888);
	put_bitmap(&w, rect(16, 8, 9, 16), 0x00000000, 0x00ffffff);
	check(slim_put_copy(&w, rect(0, 8, 32, 16), 32, 9), "COPY");
	put_cscs(&w, SLIM_CSCS_DEPTH8, 8, 8, rect(0, 24, 16, 16), rect(0, 0, 8, 8),
		rect(0, 24, 16, 16));
	put_cursor_image(&w, 1, 4, 4, 0, 4);
	check(slim_put_cursor_pos(&w, 10, 10, false), "CURSOR_POS");
	put_frame_end(&w, 3, 1);
	emit(&w, d, "mixed", 1);

	/*
	 * Several datagrams back to back (fuzz-console splits its input at each
	 * magic): a gap, a late one, a duplicate and a frame end that ACKs with
	 * a loss report; then the same across the wrap of the sequence numbers
	 * (0xffffffff is followed by 1), where a loss is two ranges.
	 */
	static const uint32_t seqs[] = { 1, 3, 2, 3, 6 };
	put_sequence(&w, "sequence", seqs, sizeof(seqs) / sizeof(seqs[0]), 1);
	static const uint32_t wrap[] = { 0xfffffff0, 0xfffffff2, 3, 0xfffffff1, 5 };
	put_sequence(&w, "sequence-wrap", wrap, sizeof(wrap) / sizeof(wrap[0]), 0xfffffff0);

	/*
	 * Sound: a (not really coded) Opus packet, and 10 ms of stereo PCM in
	 * its two halves, each alone in a datagram numbered 0.
	 */
	static uint8_t pcm[1920];
	for (size_t i = 0; i < sizeof(pcm); i++) {
		pcm[i] = (uint8_t)(i * 7);
	}
	struct slim_wire_audio a = { .codec = 1, .channels = 2, .frames = 480, .rate = 48000,
		.seq = 0, .timestamp = 0 };
	static const uint8_t opus[] = { 0xfc, 0xff, 0xfe };
	check(slim_put_audio(&w, false, 0, &a, opus, sizeof(opus)), "AUDIO");
	emit(&w, d, "audio-opus", 0);
	a.codec = 2;
	check(slim_put_audio(&w, false, SLIM_AUDIO_FIRST_HALF, &a, pcm, 960), "AUDIO");
	size_t len = finish(&w, 0, false);
	uint8_t two[2 * MTU];
	memcpy(two, w.buf, len);
	slim_writer_reset(&w);
	check(slim_put_audio(&w, false, SLIM_AUDIO_SECOND_HALF, &a, pcm + 960, 960), "AUDIO");
	size_t len2 = finish(&w, 0, false);
	memcpy(two + len, w.buf, len2);
	slim_writer_reset(&w);
	write_file(d, "audio-pcm-halves", two, len + len2);
}

static void put_inputs(struct slim_writer *w, uint32_t first, const struct slim_wire_input *ev,
		size_t n)
{
	check(slim_put_input(w, first, ev, n), "INPUT");
}

/* What a console sends with every INPUT: the keys held after it. */
static void put_held(struct slim_writer *w, uint32_t next, const uint16_t *codes, size_t n)
{
	check(slim_put_held(w, next, codes, n), "HELD");
}

static void upstream_corpus(void)
{
	const char *d = "upstream";
	struct slim_writer w;
	slim_writer_init(&w, buf, MTU, FUZZ_ASSOC, true);

	struct slim_wire_hello hello = {
		.version = SLIM_VERSION, .width = FUZZ_W, .height = FUZZ_H,
		.mtu = SLIM_DEFAULT_MTU,
		.caps = SLIM_CAP_LZ4 | SLIM_CAP_RGB888 | SLIM_CAP_CSCS | SLIM_CAP_CURSOR,
		.console_id = "fuzz-console-0",
	};
	check(slim_put_hello(&w, &hello), "HELLO");
	emit(&w, d, "hello", 1);
	/* two heads side by side and a keyboard: what a desk says */
	struct slim_desk desk = {
		.n_heads = 2,
		.heads = {
			{ .width = FUZZ_W / 2, .height = FUZZ_H, .mm_width = 300, .mm_height = 200,
				.refresh_mhz = 60000, .primary = true, .name = "DP-1",
				.make = "Acme", .model = "One" },
			{ .x = FUZZ_W / 2, .width = FUZZ_W / 2, .height = FUZZ_H / 2, .scale = 2,
				.name = "HDMI-A-1" },
		},
		.has_keyboard = true,
		.keyboard = { .layout = "de,us", .options = "grp:alt_shift_toggle" },
	};
	check(slim_put_hello_ext(&w, &hello, &(struct slim_hello_parts){ .desk = &desk }),
		"HELLO with heads");
	emit(&w, d, "hello-desk", 1);

	/* the console's microphone, and how its playback fares */
	static const uint8_t opus[] = { 0x08, 0x0b, 0xe4 };
	struct slim_wire_audio mic = { .codec = 1, .channels = 1, .frames = 480, .rate = 48000,
		.seq = 7, .timestamp = 3360 };
	check(slim_put_audio(&w, true, 0, &mic, opus, sizeof(opus)), "MIC");
	emit(&w, d, "mic", 2);
	struct slim_wire_audio_report report = { .received = 100, .repaired = 5, .lost = 3,
		.concealed = 4,
		.depth_ms = 30, .jitter_us = 1200 };
	check(slim_put_audio_report(&w, &report), "AUDIO_REPORT");
	emit(&w, d, "audio-report", 3);

	const struct slim_wire_input keys[] = {
		{ .kind = SLIM_INPUT_KEY, .code = 30, .value = 1, .time_ms = 10 },
		{ .kind = SLIM_INPUT_FRAME, .time_ms = 10 },
		{ .kind = SLIM_INPUT_KEY, .code = 30, .value = 2, .time_ms = 40 },
		{ .kind = SLIM_INPUT_KEY, .code = 30, .value = 0, .time_ms = 60 },
		{ .kind = SLIM_INPUT_FRAME, .time_ms = 60 },
	};
	put_inputs(&w, 1, keys, sizeof(keys) / sizeof(keys[0]));
	put_held(&w, 6, NULL, 0);
	emit(&w, d, "input-key", 2);

	const struct slim_wire_input pointer[] = {
		{ .kind = SLIM_INPUT_MOTION_REL, .x = 3 * 256, .y = -2 * 256, .time_ms = 100 },
		{ .kind = SLIM_INPUT_MOTION_ABS, .x = 32 * 256, .y = 47 * 256 + 255, .time_ms = 101 },
		{ .kind = SLIM_INPUT_BUTTON, .code = 0x110, .value = 1, .time_ms = 102 },
		{ .kind = SLIM_INPUT_AXIS, .code = 0, .value = 15 * 256, .x = 1, .time_ms = 103 },
		{ .kind = SLIM_INPUT_AXIS, .code = 1, .value = -256, .x = 0, .time_ms = 103 },
		{ .kind = SLIM_INPUT_BUTTON, .code = 0x110, .value = 0, .time_ms = 104 },
		{ .kind = SLIM_INPUT_FRAME, .time_ms = 104 },
	};
	put_inputs(&w, 6, pointer, sizeof(pointer) / sizeof(pointer[0]));
	put_held(&w, 13, NULL, 0);
	emit(&w, d, "input-pointer", 3);

	struct slim_wire_input many[64];
	for (size_t i = 0; i < 64; i++) {
		many[i] = (struct slim_wire_input){
			.kind = (uint8_t)(1 + i % 6), .code = (uint16_t)rng(),
			.value = (int32_t)rng(), .x = (int32_t)rng(), .y = (int32_t)rng(),
			.time_ms = (uint32_t)i,
		};
	}
	put_inputs(&w, 1, many, 64);
	emit(&w, d, "input-many", 4);

	/*
	 * A press whose release was lost: the retransmission of the press (a
	 * duplicate), a gap, then HELD saying nothing is down while the server
	 * still holds the key; and numbers across the wrap.
	 */
	static const uint16_t shift_a[] = { 42, 30 };
	put_inputs(&w, 1, keys, 1);
	put_held(&w, 2, shift_a + 1, 1);
	emit(&w, d, "input-press", 14);
	put_inputs(&w, 1, keys, 1);
	put_inputs(&w, 3, keys + 3, 1);
	put_held(&w, 2, shift_a, 2);
	emit(&w, d, "input-gap", 15);
	put_held(&w, 2, NULL, 0);
	emit(&w, d, "held", 16);
	put_inputs(&w, 0xfffffffe, keys, 3);
	put_held(&w, 1, shift_a, 2);
	emit(&w, d, "input-wrap", 17);
	uint16_t all[SLIM_HELD_MAX];
	for (size_t i = 0; i < SLIM_HELD_MAX; i++) {
		all[i] = (uint16_t)(i < 32 ? 2 + i : 0x110 + i - 32);
	}
	put_held(&w, 1, all, SLIM_HELD_MAX);
	emit(&w, d, "held-many", 18);

	struct slim_wire_ack ack = {
		.frame = 1, .highest_seq = 1,
		.received_us = 5000, .applied_us = 5200, .echo_us = 1000001,
	};
	check(slim_put_ack(&w, &ack), "ACK");
	emit(&w, d, "ack", 5);

	struct slim_wire_ack ack_far = {
		.frame = 0xffffffff, .highest_seq = 0xfffffffe,
		.received_us = UINT64_MAX, .applied_us = 0, .echo_us = UINT64_MAX,
	};
	check(slim_put_ack(&w, &ack_far), "ACK");
	emit(&w, d, "ack-far", 6);

	struct slim_wire_seq_range one = { 1, 1 };
	check(slim_put_nack(&w, &one, 1, 0), "NACK");
	emit(&w, d, "nack", 7);

	struct slim_wire_seq_range ranges[SLIM_NACK_MAX_RANGES];
	for (uint32_t i = 0; i < SLIM_NACK_MAX_RANGES; i++) {
		ranges[i] = (struct slim_wire_seq_range){ 1 + 3 * i, 2 + 3 * i };
	}
	check(slim_put_nack(&w, ranges, SLIM_NACK_MAX_RANGES, 0), "NACK");
	emit(&w, d, "nack-many", 8);

	check(slim_put_nack(&w, NULL, 0, SLIM_NACK_REPAINT), "NACK");
	emit(&w, d, "nack-repaint", 9);

	struct slim_wire_seq_range wrap = { 0xfffffff0, 0xffffffff };
	check(slim_put_nack(&w, &wrap, 1, 0), "NACK");
	emit(&w, d, "nack-wrap", 10);

	/* what a console sends at a frame end after a loss */
	struct slim_wire_seq_range lost = { 2, 2 };
	check(slim_put_nack(&w, &lost, 1, 0), "NACK");
	struct slim_wire_ack ack3 = {
		.frame = 1, .highest_seq = 3,
		.received_us = 5000, .applied_us = 5300, .echo_us = 1000003,
	};
	check(slim_put_ack(&w, &ack3), "ACK");
	emit(&w, d, "nack-ack", 11);

	check(slim_put_hello(&w, &hello), "HELLO");
	put_inputs(&w, 1, keys, 2);
	put_held(&w, 3, NULL, 0);
	check(slim_put_ack(&w, &ack), "ACK");
	emit(&w, d, "mixed", 12);

	emit(&w, d, "empty", 13);

	/* a console that failed over, naming the manager it could not reach */
	uint8_t unreached[SLIM_UNREACHED_LEN];
	for (size_t i = 0; i < sizeof(unreached); i++) {
		unreached[i] = (uint8_t)(0xc0 + i);
	}
	hello.caps |= SLIM_CAP_MOVED;
	check(slim_put_hello_ext(&w, &hello, &(struct slim_hello_parts){ .unreached = unreached }),
		"HELLO with an unreached manager");
	emit(&w, d, "hello-unreached", 1);
}

/* PALETTE and zstd datagrams: last, so that the seeds before them stay as they were. */
static void coding_corpus(void)
{
	const char *d = "console";
	struct slim_writer w;
	slim_writer_init(&w, buf, MTU, FUZZ_ASSOC, false);

	put_palette(&w, rect(0, 0, 21, 9), 3, false);
	put_palette(&w, rect(21, 0, 16, 16), 16, false);
	put_palette(&w, rect(0, 16, 64, 16), 100, false);
	emit(&w, d, "palette-packed", 1);

	put_palette(&w, rect(5, 5, 50, 30), 7, true);
	put_palette(&w, rect(0, 40, 64, 8), 127, true);
	emit(&w, d, "palette-runs", 1);

	/* what zstd takes in: a datagram's commands, expanded back on the console */
	check(slim_put_fill(&w, rect(0, 0, 64, 8), 0x00336699), "FILL");
	put_palette(&w, rect(0, 8, 32, 16), 5, true);
	put_set(&w, rect(32, 8, 8, 8), SLIM_SET_RGB888);
	put_bitmap(&w, rect(40, 8, 9, 16), 0x00000000, 0x00ffffff);
	put_frame_end(&w, 1, 1);
	size_t raw = finish(&w, 1, false);
	struct slim_zstd *z = slim_zstd_create();
	static uint8_t packed[MTU];
	size_t n = z ? slim_zstd_deflate(z, SLIM_ZSTD_FAST, w.buf, raw, packed, sizeof(packed)) : 0;
	check(n > 0, "zstd datagram");
	write_file(d, "zstd", packed, n);
	slim_zstd_destroy(z);
	slim_writer_reset(&w);

	/* a tile kept in the cache and drawn twice, one of them in a later datagram */
	put_palette(&w, rect(0, 0, 32, 16), 6, true);
	struct slim_wire_cache keep = { .slot = 3, .r = { 0, 0, 32, 16 } };
	memcpy(slim_writer_add(&w, SLIM_CMD_CACHE_STORE, 0, sizeof(keep)), &keep, sizeof(keep));
	struct slim_wire_cache draw = { .slot = 3, .r = { 32, 0, 32, 16 } };
	memcpy(slim_writer_add(&w, SLIM_CMD_CACHE_DRAW, 0, sizeof(draw)), &draw, sizeof(draw));
	size_t first = finish(&w, 1, false);
	static uint8_t two[2 * MTU];
	memcpy(two, w.buf, first);
	slim_writer_reset(&w);
	draw.r = (struct slim_wire_rect){ 16, 30, 32, 16 };
	memcpy(slim_writer_add(&w, SLIM_CMD_CACHE_DRAW, 0, sizeof(draw)), &draw, sizeof(draw));
	put_frame_end(&w, 1, 1);
	size_t second = finish(&w, 2, false);
	memcpy(two + first, w.buf, second);
	write_file(d, "cache", two, first + second);
	slim_writer_reset(&w);

	/* a datagram, then one compressed with the first as its dictionary */
	put_palette(&w, rect(0, 0, 64, 16), 9, true);
	first = finish(&w, 1, false);
	memcpy(two, w.buf, first);
	struct slim_history *h = slim_history_create();
	z = slim_zstd_create();
	check(h && z, "history");
	slim_history_add(h, 1, w.buf + sizeof(struct slim_wire_dgram),
		first - sizeof(struct slim_wire_dgram));
	check(slim_zstd_use_history(z, h, 1, 1), "dictionary");
	slim_writer_reset(&w);
	put_palette(&w, rect(0, 16, 64, 16), 9, true);
	put_frame_end(&w, 1, 1);
	size_t again = finish(&w, 2, false);
	second = slim_zstd_deflate(z, SLIM_ZSTD_FAST, w.buf, again, two + first, sizeof(two) - first);
	check(second > 0, "history datagram");
	write_file(d, "history", two, first + second);
	slim_zstd_destroy(z);
	slim_history_destroy(h);
	slim_writer_reset(&w);

}

/*
 * fuzz-video's steps (its comment says the format): a VIDEO command, or
 * pop, ask for key pictures, or a broken picture, each after `ms`.
 */
enum video_op {
	VIDEO_PUSH,
	VIDEO_POP,
	VIDEO_ASK,
	VIDEO_BROKEN,
};

struct video_seed {
	uint8_t out[16384];
	size_t len;
};

static void video_op(struct video_seed *v, unsigned ms, enum video_op op)
{
	check(ms < 64 && v->len < sizeof(v->out), "video step");
	v->out[v->len++] = (uint8_t)(ms << 2 | op);
}

static void video_raw(struct video_seed *v, unsigned ms, uint8_t flags,
		const struct slim_wire_video *h, const uint8_t *data, size_t len)
{
	size_t body = sizeof(*h) + len;
	video_op(v, ms, VIDEO_PUSH);
	check(v->len + 3 + body <= sizeof(v->out), "video fragment");
	v->out[v->len++] = flags;
	v->out[v->len++] = (uint8_t)body;
	v->out[v->len++] = (uint8_t)(body >> 8);
	memcpy(v->out + v->len, h, sizeof(*h));
	memcpy(v->out + v->len + sizeof(*h), data, len);
	v->len += body;
}

/* Fragment `frag` of `pic`, cut 24 bytes a fragment. */
static void video_frag(struct video_seed *v, unsigned ms, const struct slim_video_picture *pic,
		uint16_t frag)
{
	struct slim_wire_video h;
	const uint8_t *data;
	size_t len;
	slim_video_fragment(pic, 24, frag, &h, &data, &len);
	video_raw(v, ms, pic->flags, &h, data, len);
}

static struct slim_video_picture video_picture(uint8_t stream, uint32_t frame, uint8_t flags,
		size_t size)
{
	static uint8_t bytes[200];
	for (size_t i = 0; i < sizeof(bytes); i++) {
		bytes[i] = (uint8_t)rng();
	}
	check(size <= sizeof(bytes), "video picture");
	return (struct slim_video_picture){
		.stream = stream, .flags = flags, .width = 64, .height = 48, .frame = frame,
		.dst = { 0, 0, 64, 48 }, .clip = { 8, 8, 32, 16 }, .data = bytes, .size = size,
	};
}

/* Every fragment of a picture, then a pop. */
static void video_whole(struct video_seed *v, uint8_t stream, uint32_t frame, uint8_t flags,
		size_t size)
{
	struct slim_video_picture pic = video_picture(stream, frame, flags, size);
	for (uint16_t i = 0; i < slim_video_frags(size, 24); i++) {
		video_frag(v, 1, &pic, i);
	}
	video_op(v, 0, VIDEO_POP);
}

static void video_corpus(void)
{
	const char *d = "video";
	static struct video_seed v;

	/* a new encoder's key picture and three after it, in order */
	v.len = 0;
	video_whole(&v, 0, 1, SLIM_VIDEO_START | SLIM_VIDEO_KEY, 100);
	for (uint32_t f = 2; f <= 4; f++) {
		video_whole(&v, 0, f, 0, 30 + 20 * f);
	}
	write_file(d, "in-order", v.out, v.len);

	/*
	 * A fragment lost and sent again within the hold; then one never
	 * sent: the hold ends, a key picture is asked for, twice, and comes;
	 * the decoder finds a picture broken and another key picture mends it.
	 */
	v.len = 0;
	video_whole(&v, 1, 10, SLIM_VIDEO_KEY, 60);
	struct slim_video_picture a = video_picture(1, 11, 0, 70);
	video_frag(&v, 1, &a, 2);
	video_frag(&v, 1, &a, 0);
	video_whole(&v, 1, 12, 0, 50);
	video_frag(&v, 40, &a, 1);
	video_frag(&v, 0, &a, 1);
	video_op(&v, 0, VIDEO_POP);
	struct slim_video_picture b = video_picture(1, 13, 0, 90);
	video_frag(&v, 1, &b, 0);
	video_whole(&v, 1, 14, 0, 40);
	video_op(&v, 63, VIDEO_POP);
	video_op(&v, 0, VIDEO_ASK);
	video_op(&v, 50, VIDEO_ASK);
	video_op(&v, 60, VIDEO_ASK);
	video_whole(&v, 1, 15, 0, 40);
	video_whole(&v, 1, 16, SLIM_VIDEO_KEY, 120);
	video_op(&v, 0, VIDEO_BROKEN);
	v.out[v.len++] = 1;
	video_op(&v, 0, VIDEO_ASK);
	video_whole(&v, 1, 17, SLIM_VIDEO_KEY, 80);
	write_file(d, "loss", v.out, v.len);

	/* two streams at once, the numbers wrapping, and a new encoder numbering from 0 */
	v.len = 0;
	struct slim_video_picture p[4];
	for (uint32_t i = 0; i < 4; i++) {
		p[i] = video_picture(2, 0xfffffffeu + i, i == 0 ? SLIM_VIDEO_KEY : 0, 50);
		video_frag(&v, 1, &p[i], 1);
	}
	video_whole(&v, 3, 7, SLIM_VIDEO_KEY | SLIM_VIDEO_START, 30);
	for (uint32_t i = 0; i < 4; i++) {
		video_frag(&v, 1, &p[i], 0);
		video_frag(&v, 1, &p[i], 2);
	}
	video_op(&v, 0, VIDEO_POP);
	video_whole(&v, 2, 0, SLIM_VIDEO_KEY | SLIM_VIDEO_START, 60);
	video_whole(&v, 2, 1, 0, 60);
	write_file(d, "streams-wrap", v.out, v.len);

	/* fragments that overlap, leave gaps, disagree with their picture, or come from far ahead */
	v.len = 0;
	struct slim_video_picture h = video_picture(0, 5, SLIM_VIDEO_KEY, 72);
	struct slim_wire_video w;
	const uint8_t *data;
	size_t len;
	video_frag(&v, 1, &h, 0);
	slim_video_fragment(&h, 24, 1, &w, &data, &len);
	w.offset = 12;
	video_raw(&v, 1, h.flags, &w, h.data + 12, 24);
	w.offset = 30;
	video_raw(&v, 1, h.flags, &w, h.data + 30, 20);
	w.offset = 24;
	w.size = 73;
	video_raw(&v, 1, h.flags, &w, data, len);
	w.size = 72;
	video_raw(&v, 1, 0, &w, data, len);
	video_frag(&v, 1, &h, 2);
	video_frag(&v, 1, &h, 1);
	video_op(&v, 0, VIDEO_POP);
	w.frame = 5 + 2000;
	video_raw(&v, 1, 0, &w, data, len);
	for (uint32_t f = 6; f < 6 + 18; f++) {
		struct slim_video_picture q = video_picture(0, f, 0, 48);
		video_frag(&v, 0, &q, 0);
	}
	video_op(&v, 0, VIDEO_ASK);
	write_file(d, "hostile", v.out, v.len);
}

int main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	out_dir = argv[1];
	char path[4096];
	make_dir(out_dir);
	snprintf(path, sizeof(path), "%s/console", out_dir);
	make_dir(path);
	snprintf(path, sizeof(path), "%s/upstream", out_dir);
	make_dir(path);
	snprintf(path, sizeof(path), "%s/video", out_dir);
	make_dir(path);
	console_corpus();
	upstream_corpus();
	coding_corpus();
	video_corpus();
	return 0;
}
