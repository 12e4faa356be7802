/*
 * The malformed-datagram tests' harness: a console core with a snapshot of
 * everything a bad datagram must leave unchanged, datagrams built command by
 * command, and one datagram holding one of every command.
 */
#include <stdlib.h>
#include <string.h>
#include "malformed-fixture.h"
#include "slim-log.h"

uint64_t frames_presented(struct fixture *f)
{
	return ((struct slim_headless_backend *)f->backend)->frames;
}

struct dgram *dgram_new(void)
{
	struct dgram *d = calloc(1, sizeof(*d));
	assert_non_null(d);
	d->buf = malloc(DGRAM_CAP);
	assert_non_null(d->buf);
	return d;
}

void dgram_free(struct dgram *d)
{
	free(d->buf);
	free(d);
}

void dgram_begin(struct dgram *d)
{
	slim_writer_init(&d->w, d->buf, DGRAM_CAP, ASSOC, false);
}

/* Finishes with the next sequence number and finds the commands. */
size_t dgram_end(struct fixture *f, struct dgram *d)
{
	d->len = slim_writer_finish(&d->w, f->seq, 1000 + (uint64_t)f->seq);
	size_t off = sizeof(struct slim_wire_dgram);
	d->n = 0;
	for (uint16_t i = 0; i < d->w.count && d->n < MAX_CMDS; i++) {
		struct slim_wire_cmd hdr;
		memcpy(&hdr, d->buf + off, sizeof(hdr));
		d->off[d->n++] = off;
		off += sizeof(hdr) + hdr.len;
	}
	return d->len;
}

uint8_t cmd_type(const struct dgram *d, size_t k)
{
	return d->buf[d->off[k]];
}

void set_cmd_len(struct dgram *d, size_t k, uint16_t len)
{
	memcpy(d->buf + d->off[k] + 2, &len, sizeof(len));
}

uint16_t get_cmd_len(const struct dgram *d, size_t k)
{
	uint16_t len;
	memcpy(&len, d->buf + d->off[k] + 2, sizeof(len));
	return len;
}

uint8_t *add_raw(struct slim_writer *w, uint8_t type, uint8_t flags,
		const void *body, size_t len)
{
	uint8_t *p = slim_writer_add(w, type, flags, len);
	assert_non_null(p);
	if (body) {
		memcpy(p, body, len);
	} else {
		memset(p, 0, len);
	}
	return p;
}

void snapshot(struct fixture *f)
{
	const struct slim_fb *fb = slim_console_core_fb(f->core);
	memcpy(f->before.px, fb->px, fb->stride * fb->height * 4);
	f->stats = *slim_console_core_stats(f->core);
	f->cursor = *slim_console_core_cursor(f->core);
	if (f->cursor.pixels) {
		memcpy(f->cursor_px, f->cursor.pixels, (size_t)f->cursor.w * f->cursor.h * 4);
	}
	f->sent = f->sink->n;
	f->presented = frames_presented(f);
}

bool unchanged(struct fixture *f)
{
	const struct slim_fb *fb = slim_console_core_fb(f->core);
	const struct slim_console_cursor *c = slim_console_core_cursor(f->core);
	if (memcmp(f->before.px, fb->px, fb->stride * fb->height * 4) != 0) {
		print_error("framebuffer changed\n");
		return false;
	}
	if (memcmp(c, &f->cursor, sizeof(*c)) != 0 || (c->pixels &&
			memcmp(f->cursor_px, c->pixels, (size_t)c->w * c->h * 4) != 0)) {
		print_error("cursor changed\n");
		return false;
	}
	if (f->sink->n != f->sent || frames_presented(f) != f->presented) {
		print_error("something was sent or presented\n");
		return false;
	}
	return true;
}

void expect_reject(struct fixture *f, const uint8_t *buf, size_t len,
		enum slim_error err)
{
	snapshot(f);
	enum slim_error got = slim_console_core_receive(f->core, buf, len);
	if (got != err) {
		fail_msg("length %zu: got \"%s\", expected \"%s\"", len, slim_error_str(got),
			slim_error_str(err));
	}
	const struct slim_console_stats *st = slim_console_core_stats(f->core);
	assert_true(st->datagrams == f->stats.datagrams + 1);
	assert_true(st->errors[err] == f->stats.errors[err] + 1);
	assert_true(st->bad == f->stats.bad + 1);
	assert_true(st->applied == f->stats.applied);
	assert_true(st->frames == f->stats.frames);
	assert_true(unchanged(f));
}

void expect_accept(struct fixture *f, const uint8_t *buf, size_t len)
{
	uint64_t applied = slim_console_core_stats(f->core)->applied;
	uint64_t bad = slim_console_core_stats(f->core)->bad;
	assert_int_equal(slim_console_core_receive(f->core, buf, len), SLIM_OK);
	assert_true(slim_console_core_stats(f->core)->applied == applied + 1);
	assert_true(slim_console_core_stats(f->core)->bad == bad);
	f->seq++;
}

int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	test_rng_init(&f->rng, 40);
	f->sink = test_sink_create();
	f->backend = slim_headless_backend_create();
	assert_non_null(f->backend);
	f->core = slim_console_core_create(CW, CH, SLIM_DEFAULT_MTU, f->backend,
		test_sink_send, f->sink);
	assert_non_null(f->core);
	f->before = test_fb_create(CW, CH, NULL);
	f->before.stride = CW; /* the console's */
	slim_console_core_hello(f->core, "malformed", ASSOC);
	f->seq = 1;

	/* noise everywhere, and a cursor, so that any change shows */
	struct dgram *d = dgram_new();
	for (uint16_t y = 0; y < CH; y += 2) {
		dgram_begin(d);
		assert_non_null(test_put_set(&d->w, (struct slim_rect){ 0, y, CW, 2 }, 0, &f->rng, NULL));
		dgram_end(f, d);
		expect_accept(f, d->buf, d->len);
	}
	dgram_begin(d);
	struct slim_wire_cursor_image ci = { .serial = 7, .w = 32, .h = 32, .hot_x = 1, .rows = 32 };
	assert_non_null(test_put_cursor_image(&d->w, &ci, &f->rng));
	assert_true(slim_put_cursor_pos(&d->w, 50, 60, true));
	assert_true(slim_put_frame_end(&d->w, &(struct slim_wire_frame_end){ .frame = 1 }));
	dgram_end(f, d);
	expect_accept(f, d->buf, d->len);
	dgram_free(d);
	test_sink_clear(f->sink);
	*state = f;
	return 0;
}

int teardown(void **state)
{
	struct fixture *f = *state;
	slim_console_core_destroy(f->core);
	f->backend->impl->destroy(f->backend);
	free(f->before.px);
	free(f->sink);
	free(f);
	return 0;
}

const struct slim_wire_cscs full_cscs8 = {
	.src_w = 24, .src_h = 16, .dst = { 100, 60, 48, 32 },
	.psrc = { 0, 0, 24, 16 }, .pdst = { 100, 60, 48, 32 },
};

const struct slim_wire_cscs full_cscs4 = {
	.src_w = 24, .src_h = 16, .dst = { 100, 60, 48, 32 },
	.psrc = { 4, 2, 15, 9 }, .pdst = { 110, 65, 20, 17 },
};

/*
 * One of every downstream command, INPUT_ACK first (where the encoder puts
 * it) and FRAME_END last. Returns the number of commands.
 */
size_t build_full(struct fixture *f, struct dgram *d)
{
	struct test_rng *rng = &f->rng;
	dgram_begin(d);
	assert_true(slim_put_input_ack(&d->w, 1));
	assert_true(slim_put_fill(&d->w, (struct slim_rect){ 10, 10, 20, 20 }, 0x123456));
	assert_non_null(test_put_set(&d->w, (struct slim_rect){ 30, 5, 8, 4 }, 0, rng, NULL));
	assert_non_null(test_put_set(&d->w, (struct slim_rect){ 40, 5, 5, 3 }, SLIM_SET_RGB888,
		rng, NULL));
	assert_non_null(test_put_set(&d->w, (struct slim_rect){ 0, 100, 64, 16 }, SLIM_SET_LZ4,
		rng, NULL));
	assert_non_null(test_put_bitmap(&d->w, (struct slim_rect){ 50, 50, 13, 5 }, 1, 2, rng));
	assert_true(slim_put_copy(&d->w, (struct slim_rect){ 0, 0, 16, 16 }, 8, 4));
	assert_non_null(test_put_palette(&d->w, (struct slim_rect){ 90, 10, 21, 7 }, 16, false,
		rng));
	assert_non_null(test_put_palette(&d->w, (struct slim_rect){ 100, 60, 40, 30 }, 5, true,
		rng));
	/* kept, and drawn elsewhere from the cache in the same datagram */
	add_raw(&d->w, SLIM_CMD_CACHE_STORE, 0, &(struct slim_wire_cache){ .slot = 4095,
		.r = { 100, 60, 32, 30 } }, sizeof(struct slim_wire_cache));
	add_raw(&d->w, SLIM_CMD_CACHE_DRAW, 0, &(struct slim_wire_cache){ .slot = 4095,
		.r = { 0, 80, 32, 30 } }, sizeof(struct slim_wire_cache));
	assert_non_null(test_put_cscs(&d->w, &full_cscs8, SLIM_CSCS_DEPTH8, rng));
	assert_non_null(test_put_cscs(&d->w, &full_cscs4, SLIM_CSCS_DEPTH4, rng));
	struct slim_wire_cursor_image ci = { .serial = 8, .w = 16, .h = 16, .hot_x = 15,
		.hot_y = 15, .rows = 16 };
	assert_non_null(test_put_cursor_image(&d->w, &ci, rng));
	assert_true(slim_put_cursor_pos(&d->w, -3, 200, true));
	assert_true(slim_put_frame_end(&d->w, &(struct slim_wire_frame_end){ .frame = 2 }));
	dgram_end(f, d);
	assert_int_equal(d->n, 16);
	return d->n;
}
