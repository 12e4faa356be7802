/* The console tests' harness (console-fixture.c). */
#ifndef SLIM_TEST_CONSOLE_FIXTURE_H
#define SLIM_TEST_CONSOLE_FIXTURE_H
#include "console-core.h"
#include "test-util.h"

#define ASSOC 0xa550c1a7u
#define DGRAM_CAP 65536

/* A backend that remembers what it was given. */
struct rec_backend {
	struct slim_console_backend base;
	uint32_t width, height;
	int inits, resizes, frames, cursors;
	const struct slim_fb *fb;
	struct slim_rect damage[8192];
	size_t n_damage;
	struct slim_console_cursor cursor;
};






struct rec_backend *rec_create(void);

/* A console with its sink; `backend` may be NULL for the headless one. */
struct console {
	struct slim_console_core *core;
	struct slim_console_backend *backend;
	struct test_sink *sink;
	struct slim_writer w;
	uint8_t *buf;
	size_t len;
};

void console_open(struct console *c, uint32_t width, uint32_t height, uint16_t mtu,
		struct slim_console_backend *backend);

void console_close(struct console *c);

struct slim_headless_backend *headless(struct console *c);

void begin(struct console *c);

enum slim_error send_dgram(struct console *c, uint32_t seq, uint64_t time_us);

/* Opens upstream datagram `i` of the sink and checks its header. */
void open_upstream(struct console *c, size_t i, struct slim_reader *r, uint32_t assoc,
		uint16_t count);

void next_cmd(struct slim_reader *r, struct slim_cmd *cmd, uint8_t type);

void expect_nack(struct slim_reader *r, const struct slim_wire_seq_range *want,
		size_t n, uint16_t flags);

void expect_end(struct slim_reader *r);

void fill_dgram(struct console *c, struct slim_rect r, uint32_t color);

#endif
