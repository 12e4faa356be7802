/*
 * The managed compositor's control lines (session-manager.md section 2):
 * what the parser takes, what it refuses, and console ids as hex.
 */
#include <stdio.h>
#include <string.h>
#include "control-line.h"
#include "test-util.h"

/* a key for expect lines: 32 bytes, 0x00..0x1f */
#define KEY "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

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
	assert_true(parse("expect 00112233445566778899aabbccddeeff 636f6e736f6c652d61 " KEY, &l));
	assert_int_equal(l.request, SLIM_CONTROL_EXPECT);
	static const uint8_t token[] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
		0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
	assert_memory_equal(l.token, token, sizeof(token));
	char id[SLIM_CONSOLE_ID_LEN] = "console-a";
	assert_memory_equal(l.console_id, id, sizeof(id));
	for (int i = 0; i < SLIM_CONTROL_KEY_LEN; i++) {
		assert_int_equal(l.key[i], i);
	}
	/* the longest id, 32 bytes */
	char line[256] = "expect 00112233445566778899aabbccddeeff ";
	for (int i = 0; i < SLIM_CONSOLE_ID_LEN; i++) {
		strcat(line, "41");
	}
	char with_key[256];
	snprintf(with_key, sizeof(with_key), "%s %s", line, KEY);
	assert_true(parse(with_key, &l));
	assert_memory_equal(l.console_id, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", SLIM_CONSOLE_ID_LEN);
	strcat(line, "41");
	snprintf(with_key, sizeof(with_key), "%s %s", line, KEY);
	assert_false(parse(with_key, &l));
}

static void test_bad(void **state)
{
	static const char *bad[] = {
		"", " ", "Ping", "ping ", " ping", "detach now", "pingpong",
		"expect", "expect ", "expect 00112233445566778899aabbccddeeff",
		"expect 00112233445566778899aabbccddeeff ",
		"expect 00112233445566778899aabbccddeeff 61",   /* no key */
		"expect 00112233445566778899aabbccddeeff 61 ",
		"expect  00112233445566778899aabbccddeeff 61 " KEY,
		"expect 00112233445566778899aabbccddeeff  61 " KEY,
		"expect 00112233445566778899aabbccddeeff 61  " KEY,
		"expect 00112233445566778899aabbccddeeff 61 " KEY " ",
		"expect 00112233445566778899aabbccddee 61 " KEY,     /* 15 bytes */
		"expect 00112233445566778899aabbccddeeff00 61 " KEY, /* 17 bytes */
		"expect 00112233445566778899AABBCCDDEEFF 61 " KEY,   /* uppercase */
		"expect 0011223344556677889xaabbccddeeff 61 " KEY,
		"expect 00112233445566778899aabbccddeeff 6 " KEY,    /* odd */
		"expect 00112233445566778899aabbccddeeff 6100 " KEY, /* a NUL inside */
		"expect 00112233445566778899aabbccddeeff 6g " KEY,
		"expect 00112233445566778899aabbccddeeff 61 " KEY "00",  /* 33-byte key */
		"expect 00112233445566778899aabbccddeeff 61 0001",       /* 2-byte key */
		"expect 00112233445566778899aabbccddeeff 61 "
			"000102030405060708090A0B0C0D0E0F101112131415161718191a1b1c1d1e1f",
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

static void test_shadow(void **state)
{
	struct slim_control_line l;
	assert_true(parse("unshadow", &l));
	assert_int_equal(l.request, SLIM_CONTROL_UNSHADOW);
	assert_true(parse("shadow 00112233445566778899aabbccddeeff 636f6e736f6c652d62 " KEY
		" ask view", &l));
	assert_int_equal(l.request, SLIM_CONTROL_SHADOW);
	assert_true(l.ask);
	assert_false(l.control);
	char id[SLIM_CONSOLE_ID_LEN] = "console-b";
	assert_memory_equal(l.console_id, id, sizeof(id));
	assert_int_equal(l.key[31], 31);
	assert_true(parse("shadow 00112233445566778899aabbccddeeff 62 " KEY " always control",
		&l));
	assert_false(l.ask);
	assert_true(l.control);
	/* an expect line's fields with the words missing, wrong or in the wrong order */
	static const char *const bad[] = {
		"shadow 00112233445566778899aabbccddeeff 62 " KEY,
		"shadow 00112233445566778899aabbccddeeff 62 " KEY " ask",
		"shadow 00112233445566778899aabbccddeeff 62 " KEY " view ask",
		"shadow 00112233445566778899aabbccddeeff 62 " KEY " ask  view",
		"shadow 00112233445566778899aabbccddeeff 62 " KEY " ASK view",
		"shadow 00112233445566778899aabbccddeeff 62 " KEY " ask view ",
		"shadow 00112233445566778899aabbccddeeff 00 " KEY " ask view",
		"shadow 00112233445566778899aabbccddeeff 62 0011 ask view",
		"shadow ask view",
		"shadow  ask view",
		"shadow view",
		"unshadow 1",
		"expect 00112233445566778899aabbccddeeff 62 " KEY " ask view",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &l)) {
			fail_msg("took \"%s\"", bad[i]);
		}
	}
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
	char line[256];
	snprintf(line, sizeof(line), "expect 00112233445566778899aabbccddeeff %s " KEY, out);
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
		cmocka_unit_test(test_shadow),
		cmocka_unit_test(test_console_hex),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
