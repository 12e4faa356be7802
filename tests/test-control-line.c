/*
 * The managed compositor's control lines (session-manager.md section 2):
 * what the parser takes, what it refuses, and console ids as hex.
 */
#include <stdio.h>
#include <string.h>
#include "../src/compositor/control-line.h"
#include "test-util.h"

static bool parse(const char *line, struct slim_control_line *out)
{
	const char *why = NULL;
	bool ok = slim_control_line_parse(line, strlen(line), out, &why);
	/* a refusal always says why, for the log */
	assert_true(ok || why != NULL);
	return ok;
}

static void test_simple(void **state)
{
	struct slim_control_line l;
	assert_true(parse("detach", &l));
	assert_int_equal(l.request, SLIM_CONTROL_DETACH);
	assert_true(parse("ping", &l));
	assert_int_equal(l.request, SLIM_CONTROL_PING);
	assert_true(parse("pong", &l));
	assert_int_equal(l.request, SLIM_CONTROL_PONG);
}

static void test_expect(void **state)
{
	struct slim_control_line l;
	assert_true(parse("expect 00112233445566778899aabbccddeeff 636f6e736f6c652d61", &l));
	assert_int_equal(l.request, SLIM_CONTROL_EXPECT);
	static const uint8_t token[] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
		0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
	assert_memory_equal(l.token, token, sizeof(token));
	char id[SLIM_CONSOLE_ID_LEN] = "console-a";
	assert_memory_equal(l.console_id, id, sizeof(id));
	/* the longest id, 32 bytes */
	char line[128] = "expect 00112233445566778899aabbccddeeff ";
	for (int i = 0; i < SLIM_CONSOLE_ID_LEN; i++) {
		strcat(line, "41");
	}
	assert_true(parse(line, &l));
	assert_memory_equal(l.console_id, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", SLIM_CONSOLE_ID_LEN);
	strcat(line, "41");
	assert_false(parse(line, &l));
}

static void test_bad(void **state)
{
	static const char *bad[] = {
		"", " ", "Ping", "ping ", " ping", "detach now", "pingpong",
		"expect", "expect ", "expect 00112233445566778899aabbccddeeff",
		"expect 00112233445566778899aabbccddeeff ",
		"expect  00112233445566778899aabbccddeeff 61",
		"expect 00112233445566778899aabbccddeeff  61",
		"expect 00112233445566778899aabbccddeeff 61 ",
		"expect 00112233445566778899aabbccddee 61",     /* 15 bytes */
		"expect 00112233445566778899aabbccddeeff00 61", /* 17 bytes */
		"expect 00112233445566778899AABBCCDDEEFF 61",   /* uppercase */
		"expect 0011223344556677889xaabbccddeeff 61",
		"expect 00112233445566778899aabbccddeeff 6",    /* odd */
		"expect 00112233445566778899aabbccddeeff 6100", /* a NUL inside */
		"expect 00112233445566778899aabbccddeeff 6g",
		"attached 61 800x600",
	};
	struct slim_control_line l;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &l)) {
			fail_msg("took \"%s\"", bad[i]);
		}
	}
	/* the length given counts, not a terminator */
	const char *why;
	assert_false(slim_control_line_parse("pingx", 5, &l, &why));
	assert_true(slim_control_line_parse("pingx", 4, &l, &why));
}

static void test_console_hex(void **state)
{
	char out[2 * SLIM_CONSOLE_ID_LEN + 1];
	char id[SLIM_CONSOLE_ID_LEN] = "console-a";
	slim_control_console_hex(id, out);
	assert_string_equal(out, "636f6e736f6c652d61");
	/* all 32 bytes, no terminator in the id */
	memset(id, 0xfe, sizeof(id));
	slim_control_console_hex(id, out);
	assert_int_equal(strlen(out), 2 * SLIM_CONSOLE_ID_LEN);
	assert_memory_equal(out, "fefe", 4);
	/* and what it writes, the parser reads back */
	char line[128];
	snprintf(line, sizeof(line), "expect 00112233445566778899aabbccddeeff %s", out);
	struct slim_control_line l;
	assert_true(parse(line, &l));
	assert_memory_equal(l.console_id, id, sizeof(id));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple),
		cmocka_unit_test(test_expect),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_console_hex),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
