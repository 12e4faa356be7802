/*
 * A keyboard's names as people write them: the console's --keyboard and a
 * user's ~/.config/slimland/keyboard (slim-keyboard.h), Debian's
 * /etc/default/keyboard and XKB_DEFAULT_* (console/keyboard.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "../console/keyboard.h"
#include "slim-keyboard.h"
#include "test-util.h"

static struct slim_keyboard parsed(const char *spec)
{
	struct slim_keyboard kb;
	char why[160];
	if (!slim_keyboard_parse(spec, &kb, why, sizeof(why))) {
		fail_msg("%s: %s", spec, why);
	}
	return kb;
}

static void assert_refused(const char *spec, const char *reason)
{
	struct slim_keyboard kb = { .layout = "untouched" };
	char why[160] = "";
	assert_false(slim_keyboard_parse(spec, &kb, why, sizeof(why)));
	assert_string_equal(kb.layout, "untouched");
	if (!strstr(why, reason)) {
		fail_msg("%s: said \"%s\", not \"%s\"", spec, why, reason);
	}
}

static void test_spec(void **state)
{
	struct slim_keyboard kb = parsed("de");
	assert_string_equal(kb.layout, "de");
	assert_string_equal(kb.variant, "");
	assert_string_equal(kb.options, "");
	kb = parsed("us:dvorak");
	assert_string_equal(kb.layout, "us");
	assert_string_equal(kb.variant, "dvorak");
	kb = parsed("de,grp:alt_shift_toggle");
	assert_string_equal(kb.layout, "de");
	assert_string_equal(kb.options, "grp:alt_shift_toggle");
	/* several layouts: XKB's comma-separated lists, a variant for each or none */
	kb = parsed("us+ru:phonetic,grp:alt_shift_toggle,ctrl:nocaps");
	assert_string_equal(kb.layout, "us,ru");
	assert_string_equal(kb.variant, ",phonetic");
	assert_string_equal(kb.options, "grp:alt_shift_toggle,ctrl:nocaps");
	kb = parsed("us+de+fr+ru");
	assert_string_equal(kb.layout, "us,de,fr,ru");
	assert_string_equal(kb.variant, "");
	assert_true(slim_keyboard_names_valid(&kb));
}

static void test_spec_refused(void **state)
{
	assert_refused("", "a layout is empty");
	assert_refused(",grp:alt_shift_toggle", "a layout is empty");
	assert_refused("us+", "a layout is empty");
	assert_refused("us:", "empty variant");
	assert_refused("de,", "an option is empty");
	assert_refused("de,a,,b", "an option is empty");
	assert_refused("us+de+fr+ru+gb", "more than 4 layouts");
	assert_refused("d e", "' '");
	assert_refused("de;rm", "';'");
	assert_refused("us:dv/orak", "'/'");
	assert_refused("de,grp:x y", "' '");
	assert_refused("de\x1b", "byte 0x1b");
	char longest[200];
	memset(longest, 'a', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	assert_refused(longest, "longer than 64 bytes");
	longest[0] = 'd';
	longest[1] = ',';
	assert_refused(longest, "longer than 128 bytes");
}

static void assert_describes(const char *spec, const char *text)
{
	struct slim_keyboard kb = parsed(spec);
	char out[SLIM_KEYBOARD_DESCRIBE_LEN];
	slim_keyboard_describe(&kb, out, sizeof(out));
	assert_string_equal(out, text);
	/* and it reads back as the same keyboard */
	struct slim_keyboard again = parsed(out);
	assert_memory_equal(&kb, &again, sizeof(kb));
}

static void test_describe(void **state)
{
	assert_describes("de", "de");
	assert_describes("us:dvorak,compose:ralt", "us:dvorak,compose:ralt");
	assert_describes("us+ru:phonetic,grp:alt_shift_toggle", "us+ru:phonetic,grp:alt_shift_toggle");
	char out[SLIM_KEYBOARD_DESCRIBE_LEN];
	slim_keyboard_describe(&(struct slim_keyboard){ .model = "pc105" }, out, sizeof(out));
	assert_string_equal(out, "default (model pc105)");
	/* a variant list longer than the layouts' (a console's HELLO may say it) */
	slim_keyboard_describe(&(struct slim_keyboard){ .layout = "de", .variant = "a,b,c" },
		out, sizeof(out));
	assert_string_equal(out, "de:a");
}

static void test_user_file(void **state)
{
	struct slim_keyboard kb = { 0 };
	char why[200];
	const char *text = "# my keyboard\n\n  fr:bepo  \r\n# the end\n";
	assert_true(slim_keyboard_parse_text(text, strlen(text), &kb, why, sizeof(why)));
	assert_string_equal(kb.layout, "fr");
	assert_string_equal(kb.variant, "bepo");
	/* no trailing newline, not terminated */
	assert_true(slim_keyboard_parse_text("de,ctrl:nocapsXX", 14, &kb, why, sizeof(why)));
	assert_string_equal(kb.options, "ctrl:nocaps");

	struct {
		const char *text, *reason;
	} bad[] = {
		{ "fr\nde\n", "line 2: a second keyboard" },
		{ "# nothing\n\n", "no keyboard in it" },
		{ "", "no keyboard in it" },
		{ "\n\nfr de\n", "line 3: a layout has ' '" },
		{ "de:\n", "line 1: layout de has an empty variant (expected LAYOUT" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		kb = (struct slim_keyboard){ .layout = "untouched" };
		assert_false(slim_keyboard_parse_text(bad[i].text, strlen(bad[i].text), &kb, why,
			sizeof(why)));
		assert_string_equal(kb.layout, "untouched");
		if (!strstr(why, bad[i].reason)) {
			fail_msg("%s: said \"%s\", not \"%s\"", bad[i].text, why, bad[i].reason);
		}
	}
	assert_false(slim_keyboard_parse_text("de\0x\n", 5, &kb, why, sizeof(why)));
	assert_string_equal(why, "line 1: a NUL byte");
}

static void test_debian_file(void **state)
{
	/* as keyboard-configuration writes it */
	const char *text =
		"# KEYBOARD CONFIGURATION FILE\n"
		"\n"
		"# Consult the keyboard(5) manual page.\n"
		"\n"
		"XKBMODEL=\"pc105\"\n"
		"XKBLAYOUT=\"de,us\"\n"
		"XKBVARIANT=',dvorak'\n"
		"XKBOPTIONS=grp:alt_shift_toggle   # switch with Alt+Shift\n"
		"\n"
		"BACKSPACE=\"guess\"\n";
	struct slim_keyboard kb;
	bool found = false;
	char why[160];
	assert_true(console_keyboard_parse_default(text, strlen(text), &kb, &found, why,
		sizeof(why)));
	assert_true(found);
	assert_string_equal(kb.model, "pc105");
	assert_string_equal(kb.layout, "de,us");
	assert_string_equal(kb.variant, ",dvorak");
	assert_string_equal(kb.options, "grp:alt_shift_toggle");
	assert_string_equal(kb.rules, "");

	text = "XKBMODEL=pc105\nXKBLAYOUT=\"\"\n";
	assert_true(console_keyboard_parse_default(text, strlen(text), &kb, &found, why,
		sizeof(why)));
	assert_false(found);

	struct {
		const char *text, *reason;
	} bad[] = {
		{ "XKBLAYOUT=\"de\n", "line 1: a quote that does not end" },
		{ "\nXKBLAYOUT=$LAYOUT\n", "line 2: a value the shell would expand" },
		{ "XKBLAYOUT=\"$(rm -rf /)\"\n", "line 1: a value the shell would expand" },
		{ "XKBLAYOUT=de us\n", "line 1: more after the value" },
		{ "XKBLAYOUT=\"de;x\"\n", "line 1: a value with a character no XKB name has" },
		{ "export XKBLAYOUT=de\n", "line 1: not KEY=VALUE" },
		{ "XKBLAYOUT\n", "line 1: not KEY=VALUE" },
		{ "1X=de\n", "line 1: not KEY=VALUE" },
		{ "XKBLAYOUT=de#x\n", "line 1: a value with a character no XKB name has" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(console_keyboard_parse_default(bad[i].text, strlen(bad[i].text), &kb,
			&found, why, sizeof(why)));
		if (!strstr(why, bad[i].reason)) {
			fail_msg("%s: said \"%s\", not \"%s\"", bad[i].text, why, bad[i].reason);
		}
	}
	char longest[400] = "XKBLAYOUT=";
	memset(longest + 10, 'a', 100);
	assert_false(console_keyboard_parse_default(longest, strlen(longest), &kb, &found, why,
		sizeof(why)));
	assert_string_equal(why, "line 1: a value too long for an XKB name");
}

static void clear_xkb_environment(void)
{
	const char *vars[] = { "XKB_DEFAULT_RULES", "XKB_DEFAULT_MODEL", "XKB_DEFAULT_LAYOUT",
		"XKB_DEFAULT_VARIANT", "XKB_DEFAULT_OPTIONS" };
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		unsetenv(vars[i]);
	}
}

/* The file first, then the environment, then nothing. */
static void test_system(void **state)
{
	char path[] = "/tmp/slim-test-keyboard-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *text = "XKBLAYOUT=fr\nXKBVARIANT=bepo\n";
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	clear_xkb_environment();
	setenv("XKB_DEFAULT_LAYOUT", "de", 1);
	setenv("XKB_DEFAULT_OPTIONS", "ctrl:nocaps", 1);
	struct slim_keyboard kb;
	assert_true(console_keyboard_system(path, &kb));
	assert_string_equal(kb.layout, "fr");
	assert_string_equal(kb.variant, "bepo");
	assert_string_equal(kb.options, "");

	/* a bad file is passed over for the environment */
	FILE *f = fopen(path, "w");
	fputs("XKBLAYOUT=`x`\n", f);
	fclose(f);
	assert_true(console_keyboard_system(path, &kb));
	assert_string_equal(kb.layout, "de");
	assert_string_equal(kb.options, "ctrl:nocaps");
	unlink(path);
	assert_true(console_keyboard_system(path, &kb));
	assert_string_equal(kb.layout, "de");

	setenv("XKB_DEFAULT_LAYOUT", "de|x", 1);
	assert_false(console_keyboard_system(path, &kb));
	clear_xkb_environment();
	assert_false(console_keyboard_system(path, &kb));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec),
		cmocka_unit_test(test_spec_refused),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_user_file),
		cmocka_unit_test(test_debian_file),
		cmocka_unit_test(test_system),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
