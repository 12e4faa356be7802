/*
 * A console's desk in HELLO (slim-desk.h): its heads and its keyboard
 * written and read back, and every bound a hostile HELLO may try: too
 * many heads, empty or huge ones, overlaps, gaps, absurd physical sizes,
 * long or strange names.
 */
#include <stdlib.h>
#include <string.h>
#include "codec-check.h"
#include "slim-desk.h"
#include "test-util.h"

static const struct slim_wire_hello base = {
	.version = SLIM_VERSION, .width = 3200, .height = 1080, .mtu = 1400,
	.caps = SLIM_CAP_LZ4,
};

static struct slim_desk two_heads(void)
{
	struct slim_desk desk = {
		.n_heads = 2,
		.heads = {
			{ .x = 0, .y = 0, .width = 1920, .height = 1080, .mm_width = 527,
				.mm_height = 296, .refresh_mhz = 60000, .primary = true,
				.name = "DP-1", .make = "Dell Inc.", .model = "U2419H" },
			{ .x = 1920, .y = 0, .width = 1280, .height = 1024, .mm_width = 376,
				.mm_height = 301, .refresh_mhz = 75025, .scale = 1,
				.name = "HDMI-A-1", .make = "Eizo", .model = "S1934" },
		},
		.has_keyboard = true,
		.keyboard = { .layout = "de,us", .variant = "nodeadkeys,",
			.options = "grp:alt_shift_toggle" },
	};
	return desk;
}

/* One HELLO of `desk` with a token, decoded and made a desk again. */
static enum slim_error round_trip(const struct slim_desk *desk, struct slim_desk *out,
		struct slim_cmd *cmd)
{
	struct dgram *d = dgram_new(true);
	uint8_t token[SLIM_ATTACH_TOKEN_LEN] = { 1, 2, 3 };
	struct slim_hello_parts parts = { .video_mbit = 40, .desk = desk, .token = token };
	assert_true(slim_put_hello_ext(&d->w, &base, &parts));
	dgram_finish(d);
	struct slim_reader rd;
	assert_int_equal(slim_reader_init(&rd, &(struct slim_dgram){ 0 }, d->buf, d->len, true,
		0, 0), SLIM_OK);
	enum slim_error err = slim_reader_next(&rd, cmd);
	if (err == SLIM_OK) {
		assert_true(cmd->has_token);
		assert_memory_equal(cmd->token, token, sizeof(token));
		assert_int_equal(cmd->video_mbit, 40);
		slim_desk_from_wire(out, cmd->hello.width, cmd->hello.height, cmd->heads,
			cmd->n_heads, cmd->keyboard);
	}
	free(d);
	return err;
}

static void test_desk_round_trip(void **state)
{
	struct slim_desk desk = two_heads(), got;
	struct slim_cmd cmd;
	assert_int_equal(round_trip(&desk, &got, &cmd), SLIM_OK);
	assert_int_equal(cmd.hello.version, SLIM_HELLO_VERSION);
	assert_true(cmd.hello.caps & SLIM_CAP_HEADS);
	assert_true(cmd.hello.caps & SLIM_CAP_KEYBOARD);
	assert_true(slim_desk_same_heads(&desk, &got));
	assert_true(slim_desk_same_keyboard(&desk, &got));
	assert_string_equal(got.heads[1].make, "Eizo");
	assert_int_equal(got.heads[1].refresh_mhz, 75025);
	assert_ptr_equal(slim_desk_primary(&got), &got.heads[0]);
	uint32_t w, h;
	slim_desk_bounds(&got, &w, &h);
	assert_int_equal(w, 3200);
	assert_int_equal(h, 1080);

	/* without a keyboard: none said, and the HELLO is shorter by it */
	desk.has_keyboard = false;
	assert_int_equal(round_trip(&desk, &got, &cmd), SLIM_OK);
	assert_false(cmd.hello.caps & SLIM_CAP_KEYBOARD);
	assert_false(got.has_keyboard);
	assert_false(got.keyboard_bad);

	/* a HELLO of version 2, no desk: one head of its size */
	slim_desk_from_wire(&got, 1280, 720, NULL, 0, NULL);
	assert_int_equal(got.n_heads, 1);
	assert_int_equal(got.heads[0].width, 1280);
	assert_string_equal(got.heads[0].name, "CONSOLE-1");
	assert_true(got.heads[0].primary);
}

/* Every bad layout is refused as a field out of range, and changes nothing else. */
static void test_desk_bad_heads(void **state)
{
	struct slim_desk got;
	struct slim_cmd cmd;
	struct slim_desk desk = two_heads();
	desk.heads[1].x = 1900; /* overlaps the first */
	assert_int_equal(round_trip(&desk, &got, &cmd), SLIM_ERR_FIELD);
	desk = two_heads();
	desk.heads[1].width = 0;
	assert_int_equal(round_trip(&desk, &got, &cmd), SLIM_ERR_FIELD);
	desk = two_heads();
	desk.heads[1].x = 2000; /* past the screen's 3200 */
	assert_int_equal(round_trip(&desk, &got, &cmd), SLIM_ERR_FIELD);
	desk = two_heads();
	desk.heads[0].scale = SLIM_MAX_SCALE + 1;
	/* the writer does not send a scale it may not: the server chooses */
	assert_int_equal(round_trip(&desk, &got, &cmd), SLIM_OK);
	assert_int_equal(got.heads[0].scale, 0);

	/* 16 heads, 0 heads, 65535 x 65535: written by hand, as a hostile console would */
	struct dgram *d = dgram_new(true);
	struct slim_wire_hello hello = base;
	hello.caps = SLIM_CAP_HEADS;
	hello.width = hello.height = 8192;
	static const struct {
		uint8_t count;
		uint16_t w, h;
		size_t heads_sent;
		enum slim_error want;
	} cases[] = {
		{ 16, 100, 100, 8, SLIM_ERR_FIELD }, /* the count is looked at first */
		{ 0, 100, 100, 0, SLIM_ERR_FIELD },
		{ 1, 65535, 65535, 1, SLIM_ERR_FIELD },
		{ 1, 0, 0, 1, SLIM_ERR_FIELD },
		{ 2, 100, 100, 1, SLIM_ERR_LENGTH }, /* says 2, carries 1 */
		{ 1, 100, 100, 2, SLIM_ERR_LENGTH }, /* says 1, carries 2 */
		{ 1, 8192, 8192, 1, SLIM_OK },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		slim_writer_reset(&d->w);
		size_t len = sizeof(hello) + sizeof(struct slim_wire_heads) +
			cases[i].heads_sent * sizeof(struct slim_wire_head);
		uint8_t *p = slim_writer_add(&d->w, SLIM_CMD_HELLO, 0, len);
		assert_non_null(p);
		memset(p, 0, len);
		memcpy(p, &hello, sizeof(hello));
		p[sizeof(hello)] = cases[i].count;
		for (size_t j = 0; j < cases[i].heads_sent; j++) {
			struct slim_wire_head head = { .x = (uint16_t)(j * 100),
				.width = cases[i].w, .height = cases[i].h };
			memcpy(p + sizeof(hello) + 4 + j * sizeof(head), &head, sizeof(head));
		}
		dgram_finish(d);
		struct slim_reader rd;
		assert_int_equal(slim_reader_init(&rd, &(struct slim_dgram){ 0 }, d->buf, d->len,
			true, 0, 0), SLIM_OK);
		assert_int_equal(slim_reader_next(&rd, &cmd), cases[i].want);
	}
	free(d);
}

/* What a layout may do and still be served: gaps, odd sizes, strange names. */
static void test_desk_fallbacks(void **state)
{
	struct slim_desk got;
	struct slim_cmd cmd;
	struct slim_desk desk = two_heads();
	/* disjoint: a gap between the heads is served (never drawn) */
	desk.heads[1].x = 1900;
	desk.heads[0].width = 1000;
	assert_int_equal(round_trip(&desk, &got, &cmd), SLIM_OK);
	/* physical sizes of 0 and 10 km are unknown: the scale is then 1 */
	desk = two_heads();
	desk.heads[0].mm_width = 0;
	desk.heads[1].mm_width = 10000000;
	desk.heads[1].mm_height = 10000000;
	assert_int_equal(round_trip(&desk, &got, &cmd), SLIM_OK);
	assert_int_equal(got.heads[0].mm_width, 0);
	assert_int_equal(got.heads[1].mm_width, 0);
	assert_int_equal(got.heads[1].mm_height, 0);
	/* names: cleaned, empty ones numbered, two alike told apart, none primary: the first */
	desk = two_heads();
	strcpy(desk.heads[0].name, "DP 1;rm -rf");
	strcpy(desk.heads[1].name, "DP-1-rm--rf");
	desk.heads[0].primary = false;
	strcpy(desk.heads[1].make, "Acme\x1b[31m");
	assert_int_equal(round_trip(&desk, &got, &cmd), SLIM_OK);
	assert_string_equal(got.heads[0].name, "DP-1-rm--rf");
	assert_string_equal(got.heads[1].name, "HEAD-1");
	assert_string_equal(got.heads[1].make, "Acme?[31m");
	assert_true(got.heads[0].primary);
	assert_false(got.heads[1].primary);
	desk.heads[0].name[0] = '\0';
	assert_int_equal(round_trip(&desk, &got, &cmd), SLIM_OK);
	assert_string_equal(got.heads[0].name, "HEAD-1");
	assert_string_equal(got.heads[1].name, "DP-1-rm--rf");
	/* a layout of 64 characters (the field's size) is read whole; one past is cut */
	desk = two_heads();
	memset(desk.keyboard.layout, 'a', sizeof(desk.keyboard.layout) - 1);
	assert_int_equal(round_trip(&desk, &got, &cmd), SLIM_OK);
	assert_int_equal(strlen(got.keyboard.layout), 64);
	/* an options string no XKB name has: the keyboard is dropped, and said to be bad */
	desk = two_heads();
	strcpy(desk.keyboard.options, "grp:alt_shift_toggle;$(reboot)");
	assert_int_equal(round_trip(&desk, &got, &cmd), SLIM_OK);
	assert_false(got.has_keyboard);
	assert_true(got.keyboard_bad);
	assert_string_equal(got.keyboard.layout, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_desk_round_trip),
		cmocka_unit_test(test_desk_bad_heads),
		cmocka_unit_test(test_desk_fallbacks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
