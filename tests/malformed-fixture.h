/* The malformed-datagram tests' harness (malformed-fixture.c). */
#ifndef SLIM_TEST_MALFORMED_FIXTURE_H
#define SLIM_TEST_MALFORMED_FIXTURE_H
#include "console-core.h"
#include "test-util.h"

#define CW 160
#define CH 120
#define ASSOC 0x600dcafeu
#define DGRAM_CAP (256 * 1024)
#define MAX_CMDS 64

struct fixture {
	struct slim_console_backend *backend;
	struct slim_console_core *core;
	struct test_sink *sink;
	struct test_rng rng;
	uint32_t seq; /* the next sequence number, which the console takes as new */

	/* what expect_reject compares against */
	struct slim_fb before;
	struct slim_console_stats stats;
	struct slim_console_cursor cursor;
	uint32_t cursor_px[SLIM_CURSOR_MAX * SLIM_CURSOR_MAX];
	size_t sent;
	uint64_t presented;
};

struct dgram {
	uint8_t *buf;
	struct slim_writer w;
	size_t len;
	/* where each command's header is, once finished */
	size_t n;
	size_t off[MAX_CMDS];
};

uint64_t frames_presented(struct fixture *f);

struct dgram *dgram_new(void);

void dgram_free(struct dgram *d);

void dgram_begin(struct dgram *d);

/* Finishes with the next sequence number and finds the commands. */
size_t dgram_end(struct fixture *f, struct dgram *d);

uint8_t cmd_type(const struct dgram *d, size_t k);

void set_cmd_len(struct dgram *d, size_t k, uint16_t len);

uint16_t get_cmd_len(const struct dgram *d, size_t k);

uint8_t *add_raw(struct slim_writer *w, uint8_t type, uint8_t flags,
		const void *body, size_t len);

void snapshot(struct fixture *f);

bool unchanged(struct fixture *f);

void expect_reject(struct fixture *f, const uint8_t *buf, size_t len,
		enum slim_error err);

void expect_accept(struct fixture *f, const uint8_t *buf, size_t len);

int setup(void **state);

int teardown(void **state);

extern const struct slim_wire_cscs full_cscs8;

extern const struct slim_wire_cscs full_cscs4;

/*
 * One of every downstream command, INPUT_ACK first (where the encoder puts
 * it) and FRAME_END last. Returns the number of commands.
 */
size_t build_full(struct fixture *f, struct dgram *d);

#endif
