/*
 * The Prometheus text of the manager's metrics (prom-text.c): families,
 * samples, label values escaped as the format says; and slimlandctl top's
 * reading of it (top-parse.c) gives the values back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "prom-text.h"
#include "top-parse.h"

static void test_escaping(void **state)
{
	struct slim_prom p;
	slim_prom_init(&p);
	slim_prom_family(&p, "slimland_x_total", "counter", "What x is.");
	struct slim_prom_label labels[] = {
		{ "user", "a\"b\\c\nd" },
		{ "console", "caf\xc3\xa9\x01" },
	};
	slim_prom_u64(&p, "slimland_x_total", labels, 2, 18446744073709551615ull);
	slim_prom_f64(&p, "slimland_y_seconds", NULL, 0, 0.25);
	size_t len;
	char *text = slim_prom_take(&p, &len);
	assert_non_null(text);
	assert_string_equal(text,
		"# HELP slimland_x_total What x is.\n"
		"# TYPE slimland_x_total counter\n"
		"slimland_x_total{user=\"a\\\"b\\\\c\\nd\",console=\"caf???\"} 18446744073709551615\n"
		"slimland_y_seconds 0.25\n");
	assert_int_equal(len, strlen(text));

	/* top reads the line back as it was meant */
	char *line = strstr(text, "slimland_x_total{");
	*strchr(line, '\n') = '\0';
	struct top_sample s;
	assert_true(top_parse_sample(line, &s));
	assert_string_equal(s.name, "slimland_x_total");
	assert_string_equal(top_label(&s, "user"), "a\"b\\c\nd");
	assert_string_equal(top_label(&s, "console"), "caf???");
	assert_string_equal(top_label(&s, "nothing"), "");
	free(text);
}

static void test_bounded(void **state)
{
	struct slim_prom p;
	slim_prom_init(&p);
	char *big = malloc(1 << 20);
	memset(big, 'x', (1 << 20) - 1);
	big[(1 << 20) - 1] = '\0';
	struct slim_prom_label label = { "user", big };
	for (int i = 0; i < 10; i++) {
		slim_prom_u64(&p, "slimland_big", &label, 1, 1);
	}
	size_t len;
	assert_null(slim_prom_take(&p, &len)); /* past SLIM_PROM_MAX_BYTES: refused whole */
	free(big);
}

static void test_top_refuses(void **state)
{
	static const char *const bad[] = {
		"", "# HELP x y", "x", "x{", "x{a=\"b\"", "x{a=b} 1", "x{a=\"b\\q\"} 1",
		"x{a=\"b\",} 1 2", "x 1 ", "x nan", "9x 1", "x{a=\"1\"}1",
	};
	struct top_sample s;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(top_parse_sample(bad[i], &s));
	}
	assert_true(top_parse_sample("x{a=\"1\",b=\"\"} +Inf", &s));
	assert_int_equal(s.n_labels, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_top_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
