/*
 * What the network may bring, command by command: each downstream and
 * upstream command's fields out of range (PALETTE, the cache's slots,
 * history, zstd and LZ4 payloads, CSCS), rejected whole and changing
 * nothing (test-malformed.c has the datagram's frame).
 */
#include <lz4.h>
#include <zstd.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "malformed-fixture.h"
#include "slim-log.h"
#include "slim-zstd.h"

static void put_palette(struct dgram *d, struct slim_rect r, unsigned colors, uint8_t flags,
		const uint8_t *data, size_t len)
{
	struct slim_wire_palette p = { .r = { r.x, r.y, r.w, r.h }, .colors = (uint8_t)colors };
	uint8_t *body = slim_writer_add(&d->w, SLIM_CMD_PALETTE, flags,
		sizeof(p) + 3 * (size_t)colors + len);
	assert_non_null(body);
	memcpy(body, &p, sizeof(p));
	for (unsigned i = 0; i < colors; i++) {
		body[sizeof(p) + 3 * i] = (uint8_t)(i * 2 + 1); /* colour i is 0x0000(2i+1) */
		body[sizeof(p) + 3 * i + 1] = 0;
		body[sizeof(p) + 3 * i + 2] = 0;
	}
	memcpy(body + sizeof(p) + 3 * (size_t)colors, data, len);
}

static void test_palette(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	struct slim_rect r = { 3, 4, 5, 2 }; /* 10 pixels */
	static const struct {
		unsigned colors;
		uint8_t flags;
		uint8_t data[8];
		size_t len;
		enum slim_error err;
	} cases[] = {
		/* 3 colours: 2 bits an index, 5 pixels a row in 2 bytes */
		{ 3, 0, { 0x24, 0x80, 0x90, 0x00 }, 4, SLIM_OK },
		{ 3, 0, { 0x24, 0xc0, 0x90, 0x00 }, 4, SLIM_ERR_PALETTE }, /* index 3 of 3 */
		{ 3, 0, { 0x24, 0x80, 0x90 }, 3, SLIM_ERR_LENGTH },
		{ 4, 0, { 0xff, 0xc0, 0xff, 0xc0 }, 4, SLIM_OK },
		/* runs: 1 of index 0, 9 of index 2 */
		{ 3, SLIM_PALETTE_RLE, { 0x00, 0x82, 0x08 }, 3, SLIM_OK },
		{ 3, SLIM_PALETTE_RLE, { 0x00, 0x82, 0x07 }, 3, SLIM_ERR_PALETTE }, /* a pixel short */
		{ 3, SLIM_PALETTE_RLE, { 0x00, 0x82, 0x09 }, 3, SLIM_ERR_PALETTE }, /* one too many */
		{ 3, SLIM_PALETTE_RLE, { 0x00, 0x83, 0x08 }, 3, SLIM_ERR_PALETTE }, /* index 3 of 3 */
		{ 3, SLIM_PALETTE_RLE, { 0x00, 0x82 }, 2, SLIM_ERR_PALETTE },       /* no length */
		{ 3, SLIM_PALETTE_RLE, { 0x82, 0xff, 0xff }, 3, SLIM_ERR_PALETTE }, /* past the end */
		{ 3, SLIM_PALETTE_RLE, { 0x00, 0x82, 0x08, 0x00 }, 4, SLIM_ERR_PALETTE }, /* a byte over */
		{ 3, SLIM_PALETTE_RLE, { 0 }, 0, SLIM_ERR_PALETTE },
		{ 3, 0x02, { 0x24, 0x80, 0x90, 0x00 }, 4, SLIM_ERR_FIELD },
		{ 0, 0, { 0 }, 0, SLIM_ERR_FIELD },
		{ 128, SLIM_PALETTE_RLE, { 0x89, 0x08 }, 2, SLIM_ERR_FIELD },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		dgram_begin(d);
		/* the command before it is fine, and applied only if it is */
		assert_true(slim_put_fill(&d->w, (struct slim_rect){ 0, 0, 2, 2 }, 0x00abcdef));
		put_palette(d, r, cases[i].colors, cases[i].flags, cases[i].data, cases[i].len);
		dgram_end(f, d);
		if (cases[i].err != SLIM_OK) {
			expect_reject(f, d->buf, d->len, cases[i].err);
			continue;
		}
		expect_accept(f, d->buf, d->len);
		/* what each case paints, worked out by hand */
		static const uint8_t packed3[10] = { 0, 2, 1, 0, 2, 2, 1, 0, 0, 0 };
		static const uint8_t runs[10] = { 0, 2, 2, 2, 2, 2, 2, 2, 2, 2 };
		const struct slim_fb *fb = slim_console_core_fb(f->core);
		for (uint32_t k = 0; k < 10; k++) {
			uint8_t want = cases[i].flags ? runs[k] : cases[i].colors == 4 ? 3 : packed3[k];
			uint32_t px = *slim_fb_row(fb, r.x + k % 5, r.y + k / 5);
			assert_int_equal(px, SLIM_OPAQUE | (uint32_t)(want * 2 + 1));
		}
	}
	/* a table cut short */
	uint8_t cut[sizeof(struct slim_wire_palette) + 11] = { 0 };
	memcpy(cut, &(struct slim_wire_palette){ .r = { 0, 0, 1, 1 }, .colors = 4 },
		sizeof(struct slim_wire_palette));
	dgram_begin(d);
	add_raw(&d->w, SLIM_CMD_PALETTE, 0, cut, sizeof(cut));
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_LENGTH);
	dgram_free(d);
}

static void put_cache(struct dgram *d, uint8_t type, uint16_t slot, struct slim_rect r)
{
	add_raw(&d->w, type, 0, &(struct slim_wire_cache){ .slot = slot,
		.r = { r.x, r.y, r.w, r.h } }, sizeof(struct slim_wire_cache));
}

static void test_cache(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	struct slim_rect a = { 10, 10, 32, 16 }, b = { 60, 40, 32, 16 };

	/* nothing kept yet: drawing any slot is a miss */
	dgram_begin(d);
	put_cache(d, SLIM_CMD_CACHE_DRAW, 7, a);
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_CACHE);

	/* kept, then drawn in a later datagram: the same pixels */
	dgram_begin(d);
	assert_non_null(test_put_palette(&d->w, a, 9, true, &f->rng));
	put_cache(d, SLIM_CMD_CACHE_STORE, 7, a);
	dgram_end(f, d);
	expect_accept(f, d->buf, d->len);
	dgram_begin(d);
	put_cache(d, SLIM_CMD_CACHE_DRAW, 7, b);
	dgram_end(f, d);
	expect_accept(f, d->buf, d->len);
	const struct slim_fb *fb = slim_console_core_fb(f->core);
	for (uint32_t y = 0; y < a.h; y++) {
		assert_memory_equal(slim_fb_row(fb, b.x, b.y + y), slim_fb_row(fb, a.x, a.y + y),
			(size_t)a.w * 4);
	}

	static const struct {
		uint8_t type;
		uint16_t slot;
		struct slim_rect r;
		enum slim_error err;
	} cases[] = {
		{ SLIM_CMD_CACHE_DRAW, 7, { 0, 0, 16, 32 }, SLIM_ERR_CACHE }, /* its pixels, not its size */
		{ SLIM_CMD_CACHE_DRAW, 7, { 0, 0, 32, 15 }, SLIM_ERR_CACHE },
		{ SLIM_CMD_CACHE_DRAW, 8, { 0, 0, 32, 16 }, SLIM_ERR_CACHE }, /* never kept */
		{ SLIM_CMD_CACHE_DRAW, SLIM_CACHE_SLOTS, { 0, 0, 32, 16 }, SLIM_ERR_FIELD },
		{ SLIM_CMD_CACHE_STORE, SLIM_CACHE_SLOTS, { 0, 0, 32, 16 }, SLIM_ERR_FIELD },
		{ SLIM_CMD_CACHE_STORE, 1, { 0, 0, 33, 32 }, SLIM_ERR_FIELD }, /* more than a slot */
		{ SLIM_CMD_CACHE_STORE, 1, { CW - 8, 0, 16, 16 }, SLIM_ERR_RECT },
		{ SLIM_CMD_CACHE_DRAW, 7, { CW - 16, 0, 32, 16 }, SLIM_ERR_RECT },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		dgram_begin(d);
		assert_true(slim_put_fill(&d->w, (struct slim_rect){ 0, 0, 2, 2 }, 0x00abcdef));
		put_cache(d, cases[i].type, cases[i].slot, cases[i].r);
		dgram_end(f, d);
		expect_reject(f, d->buf, d->len, cases[i].err);
	}
	/* a store in a datagram that was rejected kept nothing */
	dgram_begin(d);
	put_cache(d, SLIM_CMD_CACHE_STORE, 9, a);
	assert_true(slim_put_fill(&d->w, (struct slim_rect){ CW, 0, 1, 1 }, 0));
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_RECT);
	dgram_begin(d);
	put_cache(d, SLIM_CMD_CACHE_DRAW, 9, a);
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_CACHE);

	/* a new association starts with nothing kept */
	slim_console_core_hello(f->core, "test", ASSOC);
	test_sink_clear(f->sink);
	f->seq = 1;
	dgram_begin(d);
	put_cache(d, SLIM_CMD_CACHE_DRAW, 7, b);
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_CACHE);
	dgram_free(d);
}

/* Compressed with earlier datagrams as the dictionary: only those the console applied. */
static void test_history(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	uint8_t *z = malloc(DGRAM_CAP);
	struct slim_zstd *sz = slim_zstd_create();
	struct slim_history *sent = slim_history_create();
	assert_non_null(z);
	assert_non_null(sz);
	assert_non_null(sent);
	size_t hdr = sizeof(struct slim_wire_dgram);

	/* a datagram applied, and one the console never got */
	uint32_t applied = f->seq;
	build_full(f, d);
	slim_history_add(sent, applied, d->buf + hdr, d->len - hdr);
	expect_accept(f, d->buf, d->len);
	uint32_t lost = f->seq++;
	slim_history_add(sent, lost, d->buf + hdr, d->len - hdr);

	/* the same commands again, the applied one as the dictionary: a few bytes */
	memcpy(d->buf + offsetof(struct slim_wire_dgram, seq), &f->seq, sizeof(f->seq));
	assert_true(slim_zstd_use_history(sz, sent, applied, applied));
	size_t n = slim_zstd_deflate(sz, SLIM_ZSTD_FAST, d->buf, d->len, z, DGRAM_CAP);
	assert_true(n > 0 && n < d->len / 4);
	assert_true(z[5] & SLIM_DGRAM_HISTORY);
	expect_accept(f, z, n);

	/* naming one it does not have, or a run that cannot be */
	static const struct {
		int first, last; /* from `applied` */
	} bad[] = { { 1, 1 }, { 0, 1 }, { -100, 0 }, { 0, SLIM_HISTORY_DGRAMS } };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		build_full(f, d);
		assert_true(slim_zstd_use_history(sz, sent, applied, applied));
		n = slim_zstd_deflate(sz, SLIM_ZSTD_FAST, d->buf, d->len, z, DGRAM_CAP);
		struct slim_wire_history w = { applied + (uint32_t)bad[i].first,
			applied + (uint32_t)bad[i].last };
		memcpy(z + hdr, &w, sizeof(w));
		expect_reject(f, z, n, SLIM_ERR_HISTORY);
	}
	/* no room for what it names */
	build_full(f, d);
	n = slim_zstd_deflate(sz, SLIM_ZSTD_FAST, d->buf, d->len, z, DGRAM_CAP);
	expect_reject(f, z, hdr + 4, SLIM_ERR_ZSTD);

	/* a new association has kept nothing */
	slim_console_core_hello(f->core, "test", ASSOC);
	test_sink_clear(f->sink);
	f->seq = applied + 10;
	build_full(f, d);
	n = slim_zstd_deflate(sz, SLIM_ZSTD_FAST, d->buf, d->len, z, DGRAM_CAP);
	expect_reject(f, z, n, SLIM_ERR_HISTORY);

	slim_history_destroy(sent);
	slim_zstd_destroy(sz);
	free(z);
	dgram_free(d);
}

/* Compresses d's commands with `level`, the content size said or not. */
static size_t zstd_dgram(const struct dgram *d, uint8_t *out, size_t cap, bool size_flag)
{
	size_t hdr = sizeof(struct slim_wire_dgram);
	ZSTD_CCtx *c = ZSTD_createCCtx();
	assert_non_null(c);
	ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, size_flag);
	size_t n;
	if (size_flag) {
		n = ZSTD_compress2(c, out + hdr, cap - hdr, d->buf + hdr, d->len - hdr);
	} else {
		/* streamed: the frame does not say how big it is */
		ZSTD_outBuffer o = { out + hdr, cap - hdr, 0 };
		ZSTD_inBuffer in = { d->buf + hdr, d->len - hdr, 0 };
		assert_int_equal(ZSTD_compressStream2(c, &o, &in, ZSTD_e_end), 0);
		n = o.pos;
	}
	assert_false(ZSTD_isError(n));
	ZSTD_freeCCtx(c);
	memcpy(out, d->buf, hdr);
	out[5] |= SLIM_DGRAM_ZSTD; /* slim_wire_dgram.flags */
	return hdr + n;
}

static void test_zstd(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	uint8_t *z = malloc(DGRAM_CAP);
	assert_non_null(z);

	/* the full datagram, compressed: the same pixels as sent raw */
	build_full(f, d);
	struct slim_zstd *sz = slim_zstd_create();
	assert_non_null(sz);
	size_t n = slim_zstd_deflate(sz, SLIM_ZSTD_FAST, d->buf, d->len, z, DGRAM_CAP);
	assert_true(n > 0 && n < d->len);
	expect_accept(f, z, n);

	/* cut anywhere, a byte more, or not saying its size */
	for (size_t len = sizeof(struct slim_wire_dgram); len < n; len++) {
		build_full(f, d);
		slim_zstd_deflate(sz, SLIM_ZSTD_FAST, d->buf, d->len, z, DGRAM_CAP);
		expect_reject(f, z, len, SLIM_ERR_ZSTD);
	}
	build_full(f, d);
	n = slim_zstd_deflate(sz, SLIM_ZSTD_FAST, d->buf, d->len, z, DGRAM_CAP);
	z[n] = 0;
	expect_reject(f, z, n + 1, SLIM_ERR_ZSTD);
	n = zstd_dgram(d, z, DGRAM_CAP, false);
	expect_reject(f, z, n, SLIM_ERR_ZSTD);

	/* not zstd at all */
	memcpy(z, d->buf, d->len);
	z[5] |= SLIM_DGRAM_ZSTD;
	expect_reject(f, z, d->len, SLIM_ERR_ZSTD);

	/* more than a datagram may expand to: refused from the frame's header */
	dgram_begin(d);
	for (size_t k = 0; k < 16; k++) {
		add_raw(&d->w, SLIM_CMD_FILL, 0, NULL, 4096 + 8);
	}
	dgram_end(f, d);
	assert_true(d->len > SLIM_ZSTD_MAX_DGRAM);
	n = zstd_dgram(d, z, DGRAM_CAP, true);
	expect_reject(f, z, n, SLIM_ERR_ZSTD);

	/* expanded, its commands are checked as any others */
	dgram_begin(d);
	assert_true(slim_put_fill(&d->w, (struct slim_rect){ CW, 0, 1, 1 }, 0));
	dgram_end(f, d);
	n = zstd_dgram(d, z, DGRAM_CAP, true);
	expect_reject(f, z, n, SLIM_ERR_RECT);
	slim_zstd_destroy(sz);
	free(z);
	dgram_free(d);
}

/* One datagram may expand to at most the console's scratch memory (4 MiB). */
static void test_lz4_too_much(void **state)
{
	struct test_sink *sink = test_sink_create();
	struct slim_console_core *core = slim_console_core_create(512, 256, 1400, NULL,
		test_sink_send, sink);
	assert_non_null(core);
	slim_console_core_hello(core, "big", ASSOC);
	size_t raw_len = 256 * 256 * 4;
	uint8_t *raw = calloc(1, raw_len);
	int bound = LZ4_compressBound((int)raw_len);
	char *packed = malloc((size_t)bound);
	int n = LZ4_compress_default((const char *)raw, packed, (int)raw_len, bound);
	assert_true(n > 0);
	uint8_t *buf = malloc(DGRAM_CAP);
	struct slim_writer w;
	uint32_t seq = 1;
	for (int sets = 16; sets <= 17; sets++) {
		slim_writer_init(&w, buf, DGRAM_CAP, ASSOC, false);
		for (int i = 0; i < sets; i++) {
			struct slim_wire_set s = { .r = { (uint16_t)(256 * (i % 2)), 0, 256, 256 } };
			uint8_t *p = slim_writer_add(&w, SLIM_CMD_SET, SLIM_SET_LZ4, sizeof(s) + (size_t)n);
			assert_non_null(p);
			memcpy(p, &s, sizeof(s));
			memcpy(p + sizeof(s), packed, (size_t)n);
		}
		size_t len = slim_writer_finish(&w, seq, 0);
		enum slim_error err = slim_console_core_receive(core, buf, len);
		if (sets == 16) {
			assert_int_equal(err, SLIM_OK);
			assert_int_equal(slim_console_core_stats(core)->applied, 1);
			seq++;
		} else {
			assert_int_equal(err, SLIM_ERR_LZ4);
			assert_int_equal(slim_console_core_stats(core)->errors[SLIM_ERR_LZ4], 1);
		}
	}
	/* a SET of more than 65536 pixels is refused before any of that */
	slim_writer_init(&w, buf, DGRAM_CAP, ASSOC, false);
	struct slim_wire_set s = { .r = { 0, 0, 257, 256 } };
	uint8_t *p = slim_writer_add(&w, SLIM_CMD_SET, SLIM_SET_LZ4, sizeof(s) + (size_t)n);
	memcpy(p, &s, sizeof(s));
	memcpy(p + sizeof(s), packed, (size_t)n);
	size_t len = slim_writer_finish(&w, seq, 0);
	assert_int_equal(slim_console_core_receive(core, buf, len), SLIM_ERR_FIELD);
	free(buf);
	free(packed);
	free(raw);
	slim_console_core_destroy(core);
	free(sink);
}

/* A CSCS header with a payload of the size it says, unless told otherwise. */
static void put_cscs(struct dgram *d, const struct slim_wire_cscs *c, uint8_t flags,
		long payload_delta)
{
	uint8_t depth = flags & SLIM_CSCS_DEPTH_MASK;
	size_t n = 0;
	if (c->psrc.w && c->psrc.h && (size_t)c->psrc.w * c->psrc.h <= SLIM_MAX_PIECE_PIXELS) {
		n = slim_cscs_payload_len(c->psrc.w, c->psrc.h,
			depth == SLIM_CSCS_DEPTH4 ? SLIM_CSCS_DEPTH4 : SLIM_CSCS_DEPTH8, NULL, NULL);
	}
	n = (size_t)((long)n + payload_delta);
	uint8_t *p = slim_writer_add(&d->w, SLIM_CMD_CSCS, flags, sizeof(*c) + n);
	assert_non_null(p);
	memcpy(p, c, sizeof(*c));
	memset(p + sizeof(*c), 0x77, n);
}

static void test_cscs(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	const struct slim_wire_cscs ok = {
		.src_w = 40, .src_h = 30, .dst = { 20, 10, 80, 60 },
		.psrc = { 10, 8, 21, 13 }, .pdst = { 40, 26, 40, 20 },
	};
	struct {
		struct slim_wire_cscs c;
		uint8_t flags;
		long delta;
		enum slim_error err;
	} cases[32];
	size_t n = 0;
#define CASE(field, value, fl, dl, e) do { \
		cases[n].c = ok; \
		cases[n].c.field = value; \
		cases[n].flags = fl; \
		cases[n].delta = dl; \
		cases[n].err = e; \
		n++; \
	} while (0)
	CASE(src_w, 40, 0, 0, SLIM_OK);
	CASE(src_w, 40, SLIM_CSCS_DEPTH4, 0, SLIM_OK);
	CASE(psrc.x, 11, 0, 0, SLIM_ERR_FIELD);       /* odd x */
	CASE(psrc.y, 9, 0, 0, SLIM_ERR_FIELD);        /* odd y */
	CASE(psrc.x, 20, 0, 0, SLIM_ERR_FIELD);       /* x + w past the image */
	CASE(psrc.y, 18, 0, 0, SLIM_ERR_FIELD);       /* y + h past the image */
	CASE(psrc.w, 0, 0, 0, SLIM_ERR_FIELD);
	CASE(psrc.h, 0, 0, 0, SLIM_ERR_FIELD);
	CASE(src_w, 0, 0, 0, SLIM_ERR_FIELD);
	CASE(src_h, 0, 0, 0, SLIM_ERR_FIELD);
	CASE(src_w, SLIM_MAX_DIM + 2, 0, 0, SLIM_ERR_FIELD);
	CASE(dst.w, 0, 0, 0, SLIM_ERR_FIELD);
	CASE(dst.h, 0, 0, 0, SLIM_ERR_FIELD);
	CASE(src_w, 40, 2, 0, SLIM_ERR_FIELD);        /* depth 2 */
	CASE(src_w, 40, 3, 0, SLIM_ERR_FIELD);        /* depth 3 */
	CASE(src_w, 40, 4, 0, SLIM_ERR_FIELD);        /* unknown flag */
	CASE(src_w, 40, 0x80, 0, SLIM_ERR_FIELD);
	CASE(pdst.x, 19, 0, 0, SLIM_ERR_RECT);        /* pdst left of dst */
	CASE(pdst.y, 9, 0, 0, SLIM_ERR_RECT);         /* above */
	CASE(pdst.w, 61, 0, 0, SLIM_ERR_RECT);        /* right of it */
	CASE(pdst.h, 45, 0, 0, SLIM_ERR_RECT);        /* below */
	CASE(pdst.w, 0, 0, 0, SLIM_ERR_RECT);
	CASE(pdst.x, CW - 5, 0, 0, SLIM_ERR_RECT);    /* off screen */
	CASE(dst.w, 60000, 0, 0, SLIM_OK);            /* dst may extend past the screen */
	CASE(src_w, 40, 0, 1, SLIM_ERR_LENGTH);
	CASE(src_w, 40, 0, -1, SLIM_ERR_LENGTH);
	CASE(src_w, 40, SLIM_CSCS_DEPTH4, 1, SLIM_ERR_LENGTH);
	CASE(src_w, 40, SLIM_CSCS_DEPTH4, -1, SLIM_ERR_LENGTH);
#undef CASE
	/* more samples than a piece may carry */
	cases[n].c = (struct slim_wire_cscs){ .src_w = 300, .src_h = 300, .dst = { 0, 0, 10, 10 },
		.psrc = { 0, 0, 300, 220 }, .pdst = { 0, 0, 10, 10 } };
	cases[n].flags = 0;
	cases[n].delta = 0;
	cases[n].err = SLIM_ERR_FIELD;
	n++;
	assert_true(n <= sizeof(cases) / sizeof(cases[0]));

	for (size_t i = 0; i < n; i++) {
		dgram_begin(d);
		put_cscs(d, &cases[i].c, cases[i].flags, cases[i].delta);
		dgram_end(f, d);
		if (cases[i].err == SLIM_OK) {
			expect_accept(f, d->buf, d->len);
		} else {
			expect_reject(f, d->buf, d->len, cases[i].err);
		}
	}
	/* only the header */
	dgram_begin(d);
	add_raw(&d->w, SLIM_CMD_CSCS, 0, &ok, sizeof(ok) - 1);
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_LENGTH);

	/* a piece may paint at most SLIM_MAX_CSCS_PIXELS (on a screen large enough to try) */
	for (int over = 0; over <= 1; over++) {
		struct slim_wire_cscs big = { .src_w = 4, .src_h = 4, .dst = { 0, 0, 2048, 1024 },
			.psrc = { 0, 0, 4, 4 }, .pdst = { 0, 0, (uint16_t)(1024 + over), 1024 } };
		dgram_begin(d);
		put_cscs(d, &big, 0, 0);
		dgram_end(f, d);
		struct slim_reader r;
		struct slim_dgram hdr;
		struct slim_cmd cmd;
		assert_int_equal(slim_reader_init(&r, &hdr, d->buf, d->len, false, 2048, 1024), SLIM_OK);
		assert_int_equal(slim_reader_next(&r, &cmd), over ? SLIM_ERR_FIELD : SLIM_OK);
	}
	dgram_free(d);
}

/*
 * VIDEO: a fragment's numbers and rectangles checked alone (the console
 * without a decoder ignores a good one: nothing is drawn).
 */
static void test_video(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	const struct slim_wire_video ok = {
		.stream = 1, .codec = SLIM_CODEC_H264, .frag = 1, .frags = 3, .width = 64,
		.height = 48, .frame = 7, .offset = 100, .size = 300,
		.dst = { 10, 10, 128, 96 }, .clip = { 10, 10, 100, 50 },
	};
	struct {
		struct slim_wire_video v;
		size_t len;
		enum slim_error err;
	} cases[32];
	size_t n = 0;
#define CASE(field, value, l, e) do { \
		cases[n].v = ok; \
		cases[n].v.field = value; \
		cases[n].len = l; \
		cases[n].err = e; \
		n++; \
	} while (0)
	CASE(stream, 1, 100, SLIM_OK);
	CASE(stream, SLIM_VIDEO_STREAMS, 100, SLIM_ERR_FIELD);
	CASE(codec, 2, 100, SLIM_ERR_FIELD);
	CASE(frags, 0, 100, SLIM_ERR_FIELD);
	CASE(frag, 3, 100, SLIM_ERR_FIELD);                 /* past its picture's fragments */
	CASE(frags, SLIM_VIDEO_MAX_FRAGS + 1, 100, SLIM_ERR_FIELD);
	CASE(width, 1, 100, SLIM_ERR_FIELD);
	CASE(height, SLIM_MAX_DIM + 1, 100, SLIM_ERR_FIELD);
	CASE(size, SLIM_VIDEO_MAX_PICTURE + 1, 100, SLIM_ERR_FIELD);
	CASE(offset, 301, 0, SLIM_ERR_LENGTH);               /* no bytes */
	CASE(offset, 250, 100, SLIM_ERR_FIELD);             /* bytes past the picture */
	CASE(offset, 0xffffff00u, 100, SLIM_ERR_FIELD);     /* no wrapping */
	CASE(clip.x, 5, 100, SLIM_ERR_RECT);                /* left of dst */
	CASE(clip.w, 129, 100, SLIM_ERR_RECT);              /* past dst */
	CASE(clip.w, 0, 100, SLIM_ERR_RECT);
	CASE(clip.x, CW - 5, 100, SLIM_ERR_RECT);           /* off the screen */
	CASE(dst.w, 0, 100, SLIM_ERR_RECT);
	CASE(dst.w, 60000, 100, SLIM_OK);                   /* dst may extend past the screen */
#undef CASE
	assert_true(n <= sizeof(cases) / sizeof(cases[0]));
	uint8_t bytes[128];
	memset(bytes, 0x42, sizeof(bytes));
	for (size_t i = 0; i < n; i++) {
		dgram_begin(d);
		if (cases[i].len == 0) {
			add_raw(&d->w, SLIM_CMD_VIDEO, 0, &cases[i].v, sizeof(cases[i].v));
		} else {
			assert_true(slim_put_video(&d->w, SLIM_VIDEO_KEY, &cases[i].v, bytes,
				cases[i].len));
		}
		dgram_end(f, d);
		if (cases[i].err == SLIM_OK) {
			expect_accept(f, d->buf, d->len);
		} else {
			expect_reject(f, d->buf, d->len, cases[i].err);
		}
	}
	dgram_free(d);
}

static void test_fields(void **state)
{
	struct fixture *f = *state;
	struct dgram *d = dgram_new();
	struct slim_wire_set s = { .r = { 1, 2, 3, 4 } };
	struct {
		uint8_t type, flags;
		const void *body;
		size_t len;
		enum slim_error err;
	} cases[40];
	size_t n = 0;
	uint8_t body[4096];
	memset(body, 0, sizeof(body));
	memcpy(body, &s, sizeof(s));
#define CASE(t, fl, b, l, e) do { \
		cases[n] = (__typeof__(cases[0])){ t, fl, b, l, e }; \
		n++; \
	} while (0)
	/* SET */
	CASE(SLIM_CMD_SET, 0, body, 8 + 48, SLIM_OK);
	CASE(SLIM_CMD_SET, SLIM_SET_RGB888, body, 8 + 36, SLIM_OK);
	CASE(SLIM_CMD_SET, 0, body, 8 + 47, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_SET, 0, body, 8 + 36, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_SET, SLIM_SET_RGB888, body, 8 + 48, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_SET, 0, body, 8, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_SET, 0, body, 7, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_SET, 4, body, 8 + 48, SLIM_ERR_FIELD);
	CASE(SLIM_CMD_SET, 0x80, body, 8 + 48, SLIM_ERR_FIELD);
	/* BITMAP: 3 pixels wide is one byte a row */
	static const struct slim_wire_bitmap bm = { .r = { 1, 2, 3, 4 }, .fg = 1, .bg = 2 };
	uint8_t bmb[64];
	memset(bmb, 0xff, sizeof(bmb));
	memcpy(bmb, &bm, sizeof(bm));
	CASE(SLIM_CMD_BITMAP, 0, bmb, 16 + 4, SLIM_OK);
	CASE(SLIM_CMD_BITMAP, 0, bmb, 16 + 3, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_BITMAP, 0, bmb, 16 + 5, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_BITMAP, 0, bmb, 15, SLIM_ERR_LENGTH);
	/* fixed sizes */
	CASE(SLIM_CMD_FILL, 0, body, 11, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_FILL, 0, body, 13, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_COPY, 0, body, 11, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_COPY, 0, body, 13, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_CURSOR_POS, 0, body, 5, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_CURSOR_POS, 0, body, 7, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_FRAME_END, 0, body, 23, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_FRAME_END, 0, body, 25, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_FRAME_END, 0, body, 0, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_INPUT_ACK, 0, body, 4, SLIM_OK);
	CASE(SLIM_CMD_INPUT_ACK, 0, body, 3, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_INPUT_ACK, 0, body, 5, SLIM_ERR_LENGTH);
	CASE(SLIM_CMD_INPUT_ACK, 0, body, 0, SLIM_ERR_LENGTH);
#undef CASE
	for (size_t i = 0; i < n; i++) {
		dgram_begin(d);
		add_raw(&d->w, cases[i].type, cases[i].flags, cases[i].body, cases[i].len);
		dgram_end(f, d);
		if (cases[i].err == SLIM_OK) {
			expect_accept(f, d->buf, d->len);
		} else {
			expect_reject(f, d->buf, d->len, cases[i].err);
		}
	}

	/* CURSOR_IMAGE */
	const struct slim_wire_cursor_image ok = { .serial = 9, .w = 8, .h = 6, .hot_x = 7,
		.hot_y = 5, .row = 2, .rows = 4 };
	struct {
		struct slim_wire_cursor_image h;
		long delta;
		enum slim_error err;
	} cur[16];
	n = 0;
#define CASE(field, value, dl, e) do { \
		cur[n].h = ok; \
		cur[n].h.field = value; \
		cur[n].delta = dl; \
		cur[n].err = e; \
		n++; \
	} while (0)
	CASE(serial, 9, 0, SLIM_OK);
	CASE(w, 0, 0, SLIM_ERR_FIELD);
	CASE(h, 0, 0, SLIM_ERR_FIELD);
	CASE(w, SLIM_CURSOR_MAX + 1, 0, SLIM_ERR_FIELD);
	CASE(h, SLIM_CURSOR_MAX + 1, 0, SLIM_ERR_FIELD);
	CASE(hot_x, 8, 0, SLIM_ERR_FIELD);
	CASE(hot_y, 6, 0, SLIM_ERR_FIELD);
	CASE(rows, 0, 0, SLIM_ERR_FIELD);
	CASE(row, 3, 0, SLIM_ERR_FIELD);              /* rows 3..6 of 6 */
	CASE(row, 65535, 0, SLIM_ERR_FIELD);          /* row + rows wraps in 16 bits */
	CASE(serial, 9, 4, SLIM_ERR_LENGTH);
	CASE(serial, 9, -4, SLIM_ERR_LENGTH);
	CASE(serial, 9, -1, SLIM_ERR_LENGTH);
#undef CASE
	for (size_t i = 0; i < n; i++) {
		dgram_begin(d);
		size_t len = (size_t)ok.w * ok.rows * 4 + (size_t)cur[i].delta;
		uint8_t *p = slim_writer_add(&d->w, SLIM_CMD_CURSOR_IMAGE, 0, sizeof(ok) + len);
		memcpy(p, &cur[i].h, sizeof(ok));
		memset(p + sizeof(ok), 0x42, len);
		dgram_end(f, d);
		if (cur[i].err == SLIM_OK) {
			expect_accept(f, d->buf, d->len);
		} else {
			expect_reject(f, d->buf, d->len, cur[i].err);
		}
	}
	dgram_begin(d);
	add_raw(&d->w, SLIM_CMD_CURSOR_IMAGE, 0, &ok, sizeof(ok) - 1);
	dgram_end(f, d);
	expect_reject(f, d->buf, d->len, SLIM_ERR_LENGTH);
	dgram_free(d);
}

/* Decodes the first command of an upstream datagram, as the server does. */
static enum slim_error upstream_error(const uint8_t *buf, size_t len)
{
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	enum slim_error err = slim_reader_init(&r, &hdr, buf, len, true, 0, 0);
	if (err != SLIM_OK) {
		return err;
	}
	while ((err = slim_reader_next(&r, &cmd)) == SLIM_OK && cmd.type != 0) {
	}
	return err;
}

/*
 * What the console sends, as the server validates it. The console itself
 * refuses every one of these datagrams for their direction.
 */
static void test_upstream_fields(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[2048];
	struct slim_writer w;
	const struct slim_wire_hello hello = { .version = 1, .width = 1024, .height = 768,
		.mtu = 1400, .caps = SLIM_CAP_LZ4 };
	struct {
		struct slim_wire_hello h;
		enum slim_error err;
	} hellos[] = {
		{ hello, SLIM_OK },
		{ hello, SLIM_ERR_FIELD }, { hello, SLIM_ERR_FIELD }, { hello, SLIM_ERR_FIELD },
		{ hello, SLIM_ERR_FIELD }, { hello, SLIM_ERR_FIELD }, { hello, SLIM_ERR_FIELD },
		{ hello, SLIM_ERR_FIELD },
	};
	hellos[1].h.width = 0;
	hellos[2].h.height = 0;
	hellos[3].h.width = hellos[3].h.height = 0;
	hellos[4].h.width = SLIM_MAX_DIM + 1;
	hellos[5].h.height = SLIM_MAX_DIM + 1;
	hellos[6].h.mtu = SLIM_MIN_MTU - 1;
	hellos[7].h.mtu = SLIM_MAX_MTU + 1;
	for (size_t i = 0; i < sizeof(hellos) / sizeof(hellos[0]); i++) {
		slim_writer_init(&w, buf, sizeof(buf), ASSOC, true);
		assert_true(slim_put_hello(&w, &hellos[i].h));
		size_t len = slim_writer_finish(&w, f->seq, 0);
		assert_int_equal(upstream_error(buf, len), hellos[i].err);
		expect_reject(f, buf, len, SLIM_ERR_DIRECTION);
	}

	/* raw upstream commands */
	uint8_t body[1024];
	memset(body, 0, sizeof(body));
	struct {
		uint8_t type;
		size_t len;
		uint16_t count, flags;
		uint32_t first, last;
		enum slim_error err;
	} raw[] = {
		{ SLIM_CMD_NACK, 4 + 8, 1, 0, 5, 5, SLIM_OK },
		{ SLIM_CMD_NACK, 4 + 8, 1, 0, 6, 5, SLIM_ERR_FIELD },          /* first > last */
		{ SLIM_CMD_NACK, 4 + 8, 1, 0, 0xffffffff, 0, SLIM_ERR_FIELD }, /* no wrapping */
		{ SLIM_CMD_NACK, 4 + 8, 1, 2, 5, 5, SLIM_ERR_FIELD },          /* unknown flag */
		{ SLIM_CMD_NACK, 4 + 65 * 8, 65, 0, 5, 5, SLIM_ERR_FIELD },    /* > 64 ranges */
		{ SLIM_CMD_NACK, 4 + 64 * 8, 64, 0, 5, 5, SLIM_OK },
		{ SLIM_CMD_NACK, 4 + 8, 2, 0, 5, 5, SLIM_ERR_LENGTH },
		{ SLIM_CMD_NACK, 4 + 16, 1, 0, 5, 5, SLIM_ERR_LENGTH },
		{ SLIM_CMD_NACK, 3, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_NACK, 4, 0, SLIM_NACK_REPAINT, 0, 0, SLIM_OK },
		{ SLIM_CMD_HELLO, 43, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_HELLO, 45, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_INPUT, 0, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_INPUT, 4, 0, 0, 0, 0, SLIM_ERR_LENGTH },            /* no event */
		{ SLIM_CMD_INPUT, 20, 0, 0, 0, 0, SLIM_ERR_LENGTH },           /* no number */
		{ SLIM_CMD_INPUT, 23, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_INPUT, 25, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_INPUT, 40, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_INPUT, 24, 0, 0, 0, 0, SLIM_OK },
		{ SLIM_CMD_INPUT, 44, 0, 0, 0, 0, SLIM_OK },
		{ SLIM_CMD_HELD, 8, 0, 0, 0, 0, SLIM_OK },                     /* nothing held */
		{ SLIM_CMD_HELD, 8 + 2, 1, 0, 0, 0, SLIM_OK },
		{ SLIM_CMD_HELD, 8 + 128, 64, 0, 0, 0, SLIM_OK },
		{ SLIM_CMD_HELD, 7, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_HELD, 0, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_HELD, 8 + 130, 65, 0, 0, 0, SLIM_ERR_FIELD },       /* > 64 codes */
		{ SLIM_CMD_HELD, 8, 0xffff, 0, 0, 0, SLIM_ERR_FIELD },
		{ SLIM_CMD_HELD, 8 + 2, 0, 0, 0, 0, SLIM_ERR_LENGTH },         /* a code too many */
		{ SLIM_CMD_HELD, 8 + 2, 2, 0, 0, 0, SLIM_ERR_LENGTH },         /* a code short */
		{ SLIM_CMD_HELD, 8 + 3, 1, 0, 0, 0, SLIM_ERR_LENGTH },         /* half a code */
		{ SLIM_CMD_INPUT_ACK, 4, 0, 0, 0, 0, SLIM_ERR_DIRECTION },
		{ SLIM_CMD_ACK, 31, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_ACK, 33, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_ACK, 32, 0, 0, 0, 0, SLIM_OK },
		{ SLIM_CMD_MIC, 16, 0, 0, 0, 0, SLIM_ERR_LENGTH }, /* a header, no sound */
		{ SLIM_CMD_MIC, 17, 0, 0, 0, 0, SLIM_OK },
		{ SLIM_CMD_AUDIO_REPORT, 23, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_AUDIO_REPORT, 24, 0, 0, 0, 0, SLIM_OK },
		{ SLIM_CMD_AUDIO, 17, 0, 0, 0, 0, SLIM_ERR_DIRECTION },
		{ SLIM_CMD_VIDEO_RECOVER, 7, 0, 0, 0, 0, SLIM_ERR_LENGTH },
		{ SLIM_CMD_VIDEO_RECOVER, 8, 0, 0, 0, 0, SLIM_OK },
		{ 0x8b, 8, 0, 0, 0, 0, SLIM_ERR_UNKNOWN },
		{ 0xff, 8, 0, 0, 0, 0, SLIM_ERR_UNKNOWN },
		{ SLIM_CMD_FILL, 12, 0, 0, 0, 0, SLIM_ERR_DIRECTION },
	};
	for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
		memset(body, 0, sizeof(body));
		if (raw[i].type == SLIM_CMD_HELD && raw[i].len >= 8) {
			/* a code for every one the count says, as far as the length goes */
			struct slim_wire_held hh = { .next = 5, .count = raw[i].count };
			memcpy(body, &hh, sizeof(hh));
			memset(body + sizeof(hh), 0x1e, raw[i].len - sizeof(hh));
		}
		if (raw[i].type == SLIM_CMD_NACK && raw[i].len >= 4) {
			struct slim_wire_nack nh = { raw[i].count, raw[i].flags };
			memcpy(body, &nh, sizeof(nh));
			for (size_t k = 0; 4 + 8 * (k + 1) <= raw[i].len; k++) {
				struct slim_wire_seq_range r = { raw[i].first, raw[i].last };
				memcpy(body + 4 + 8 * k, &r, sizeof(r));
			}
		}
		slim_writer_init(&w, buf, sizeof(buf), ASSOC, true);
		add_raw(&w, raw[i].type, 0, body, raw[i].len);
		size_t len = slim_writer_finish(&w, f->seq, 0);
		if (upstream_error(buf, len) != raw[i].err) {
			fail_msg("case %zu: got \"%s\"", i, slim_error_str(upstream_error(buf, len)));
		}
		expect_reject(f, buf, len, SLIM_ERR_DIRECTION);
	}
}

/* The first commands are fine, a later one is not: nothing at all happens. */

int main(void)
{
	test_quiet_logs();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lz4_too_much),
		cmocka_unit_test_setup_teardown(test_palette, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zstd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_history, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cscs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_video, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upstream_fields, setup, teardown),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
