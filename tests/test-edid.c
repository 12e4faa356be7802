/*
 * The EDID parser on the blocks monitors send and on what a broken or
 * hostile one might: make and model come out as short printable text or
 * not at all, and nothing outside the bytes given is read (ASan watches).
 */
#include <stdlib.h>
#include <string.h>
#include "edid.h"
#include "test-util.h"

/* A base block from "RHT" (QEMU's id), product 0x1234, with a name descriptor. */
static void make_block(uint8_t b[128], const char *name)
{
	static const uint8_t header[8] = { 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0 };
	memset(b, 0, 128);
	memcpy(b, header, sizeof(header));
	uint16_t id = 18 << 10 | 8 << 5 | 20; /* R H T */
	b[8] = (uint8_t)(id >> 8);
	b[9] = (uint8_t)id;
	b[10] = 0x34;
	b[11] = 0x12;
	/* the first descriptor a detailed timing (non-zero clock), the third the name */
	b[54] = 0x01;
	b[55] = 0x1d;
	if (name) {
		uint8_t *d = b + 54 + 2 * 18;
		d[3] = 0xfc;
		memset(d + 5, ' ', 13);
		memcpy(d + 5, name, strlen(name) < 13 ? strlen(name) : 13);
		if (strlen(name) < 13) {
			d[5 + strlen(name)] = '\n';
		}
	}
}

static void test_monitor(void **state)
{
	uint8_t b[256];
	make_block(b, "QEMU Monitor");
	struct slim_edid e;
	assert_true(slim_edid_parse(b, 128, &e));
	assert_string_equal(e.make, "RHT");
	assert_string_equal(e.model, "QEMU Monitor");
	/* an extension block after it changes nothing */
	memset(b + 128, 0xaa, 128);
	assert_true(slim_edid_parse(b, 256, &e));
	assert_string_equal(e.model, "QEMU Monitor");
	/* thirteen characters fill the descriptor without a newline */
	make_block(b, "ABCDEFGHIJKLM");
	assert_true(slim_edid_parse(b, 128, &e));
	assert_string_equal(e.model, "ABCDEFGHIJKLM");
}

static void test_no_name(void **state)
{
	uint8_t b[128];
	make_block(b, NULL);
	struct slim_edid e;
	assert_true(slim_edid_parse(b, sizeof(b), &e));
	assert_string_equal(e.model, "0x1234");
	/* a name of spaces only is no name */
	make_block(b, "   ");
	assert_true(slim_edid_parse(b, sizeof(b), &e));
	assert_string_equal(e.model, "0x1234");
}

static void test_hostile(void **state)
{
	uint8_t b[128];
	struct slim_edid e;
	make_block(b, "x");
	/* too short, no header, nothing at all */
	assert_false(slim_edid_parse(b, 127, &e));
	assert_string_equal(e.make, "");
	assert_false(slim_edid_parse(NULL, 0, &e));
	b[0] = 1;
	assert_false(slim_edid_parse(b, sizeof(b), &e));
	/* control characters and high bytes in the name */
	make_block(b, "a\x01\x7f\xff" "b");
	assert_true(slim_edid_parse(b, sizeof(b), &e));
	assert_string_equal(e.model, "a???b");
	/* a manufacturer letter out of A..Z: no make */
	b[8] = 0;
	b[9] = 0x21; /* letters 0, 1, 1 */
	assert_true(slim_edid_parse(b, sizeof(b), &e));
	assert_string_equal(e.make, "");
	b[8] = 0x7f;
	b[9] = 0xff; /* letters 31, 31, 31 */
	assert_true(slim_edid_parse(b, sizeof(b), &e));
	assert_string_equal(e.make, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_monitor),
		cmocka_unit_test(test_no_name),
		cmocka_unit_test(test_hostile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
