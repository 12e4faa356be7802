/*
 * The console core as the console tests drive it: a backend that remembers
 * what it was given, a console with its upstream sink, and datagrams made
 * and read in a line each.
 */
#include <stdlib.h>
#include <string.h>
#include "console-fixture.h"


static bool rec_init(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	struct rec_backend *r = (struct rec_backend *)b;
	r->width = width;
	r->height = height;
	r->inits++;
	return true;
}

static void rec_present(struct slim_console_backend *b, const struct slim_fb *fb,
		const struct slim_rect *damage, size_t n)
{
	struct rec_backend *r = (struct rec_backend *)b;
	assert_true(n <= sizeof(r->damage) / sizeof(r->damage[0]));
	r->fb = fb;
	memcpy(r->damage, damage, n * sizeof(*damage));
	r->n_damage = n;
	r->frames++;
}

static bool rec_resize(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	struct rec_backend *r = (struct rec_backend *)b;
	r->width = width;
	r->height = height;
	r->resizes++;
	return true;
}

static void rec_destroy(struct slim_console_backend *b)
{
	free(b);
}

static void rec_cursor(struct slim_console_backend *b, const struct slim_console_cursor *c)
{
	struct rec_backend *r = (struct rec_backend *)b;
	r->cursor = *c;
	r->cursors++;
}

static const struct slim_console_backend_impl rec_impl = {
	.name = "record",
	.init = rec_init,
	.present = rec_present,
	.resize = rec_resize,
	.destroy = rec_destroy,
	.cursor = rec_cursor,
};

struct rec_backend *rec_create(void)
{
	struct rec_backend *r = calloc(1, sizeof(*r));
	assert_non_null(r);
	r->base.impl = &rec_impl;
	return r;
}

void console_open(struct console *c, uint32_t width, uint32_t height, uint16_t mtu,
		struct slim_console_backend *backend)
{
	c->sink = test_sink_create();
	c->backend = backend ? backend : slim_headless_backend_create();
	assert_non_null(c->backend);
	c->core = slim_console_core_create(width, height, mtu, c->backend, test_sink_send, c->sink);
	assert_non_null(c->core);
	c->buf = malloc(DGRAM_CAP);
	assert_non_null(c->buf);
}

void console_close(struct console *c)
{
	slim_console_core_destroy(c->core);
	c->backend->impl->destroy(c->backend);
	free(c->sink);
	free(c->buf);
}

struct slim_headless_backend *headless(struct console *c)
{
	return (struct slim_headless_backend *)c->backend;
}

void begin(struct console *c)
{
	slim_writer_init(&c->w, c->buf, DGRAM_CAP, ASSOC, false);
}

enum slim_error send_dgram(struct console *c, uint32_t seq, uint64_t time_us)
{
	c->len = slim_writer_finish(&c->w, seq, time_us);
	return slim_console_core_receive(c->core, c->buf, c->len);
}

/* Opens upstream datagram `i` of the sink and checks its header. */
void open_upstream(struct console *c, size_t i, struct slim_reader *r, uint32_t assoc,
		uint16_t count)
{
	assert_true(i < c->sink->n && i < TEST_SINK_MAX);
	struct slim_dgram hdr;
	assert_int_equal(slim_reader_init(r, &hdr, c->sink->buf[i], c->sink->len[i], true, 0, 0),
		SLIM_OK);
	assert_int_equal(hdr.flags, SLIM_DGRAM_UPSTREAM);
	assert_int_equal(hdr.assoc, assoc);
	assert_int_equal(hdr.count, count);
}

void next_cmd(struct slim_reader *r, struct slim_cmd *cmd, uint8_t type)
{
	assert_int_equal(slim_reader_next(r, cmd), SLIM_OK);
	assert_int_equal(cmd->type, type);
}

void expect_nack(struct slim_reader *r, const struct slim_wire_seq_range *want,
		size_t n, uint16_t flags)
{
	struct slim_cmd cmd;
	next_cmd(r, &cmd, SLIM_CMD_NACK);
	assert_int_equal(cmd.nack.count, n);
	assert_int_equal(cmd.nack.flags, flags);
	for (size_t i = 0; i < n; i++) {
		struct slim_wire_seq_range got;
		slim_nack_get(&cmd, i, &got);
		assert_int_equal(got.first, want[i].first);
		assert_int_equal(got.last, want[i].last);
	}
}

void expect_end(struct slim_reader *r)
{
	struct slim_cmd cmd;
	assert_int_equal(slim_reader_next(r, &cmd), SLIM_OK);
	assert_int_equal(cmd.type, 0);
}

void fill_dgram(struct console *c, struct slim_rect r, uint32_t color)
{
	begin(c);
	assert_true(slim_put_fill(&c->w, r, color));
}
