/*
 * Helpdesk shadowing in the manager (shadowing.c, session-manager.md §2
 * and §4): what slimlandctl may ask, what the session's compositor is told
 * and says, where the watching console is sent, and the console back on its
 * greeter however the watching ends.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "manager-harness.h"
#include "slim-codec.h"

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);
	return n >= m && strcmp(s + n - m, end) == 0;
}

/* alice's session 2 on c1, c2 on its greeter (session 3); returns her compositor */
static struct fake_compositor *two_consoles(struct fake_compositor **greeter)
{
	struct fake_compositor *s = alice_with_card();
	*greeter = console_on_greeter(2, 0x222, "c2");
	return s;
}

/* c2 went back to its greeter: told to expect it, and c2 REDIRECTed there */
static void assert_back_on_greeter(struct fake_compositor *g)
{
	char *line = comp_line(g);
	assert_non_null(line);
	assert_memory_equal(line, "expect ", 7);
	struct slim_cmd cmd;
	assert_non_null(last_sent(2, SLIM_CMD_REDIRECT, &cmd));
	assert_int_equal(cmd.redirect.port, 7002);
	struct slim_console *c = slim_manager_console(t.mgr, "c2");
	assert_non_null(c->shows);
	assert_true(c->shows->greeter);
	assert_null(c->shadowed);
}

static void test_shadow(void **state)
{
	struct fake_compositor *g;
	struct fake_compositor *s = two_consoles(&g);
	/* the refusals, each saying why, nothing told to anyone */
	assert_memory_equal(ctl_says("shadow 9 c2"), "error no session 9\n", 19);
	assert_memory_equal(ctl_says("shadow 3 c2"), "error no session 3\n", 19); /* a greeter */
	assert_non_null(strstr(ctl_says("shadow 2 zz"), "error console zz is not enrolled"));
	assert_non_null(strstr(ctl_says("shadow 2 c1"), "error the console shows a session"));
	assert_non_null(strstr(ctl_says("unshadow 2"), "error no console watches session 2"));
	assert_null(comp_line(s));

	/* asked: the compositor is told, with the token, c2 in hex and a key */
	assert_string_equal(ctl_says("shadow 2 c2 control"), "shadow 2 c2 asking\nok\n");
	char *line = comp_line(s);
	assert_non_null(line);
	assert_memory_equal(line, "shadow ", 7);
	assert_non_null(strstr(line, " 6332 "));
	assert_true(ends_with(line, " ask control"));
	assert_non_null(strstr(ctl_says("list"), "shadow 2 c2 asking\n"));
	assert_non_null(strstr(ctl_says("shadow 2 c2"), "error the session is watched already"));

	/* yes: c2 leaves its greeter for the shadow's port, until attached */
	int before = first_sent(2, SLIM_CMD_REDIRECT);
	comp_say(s, "shadow-ready 8101");
	assert_string_equal(comp_line(g), "detach");
	struct slim_cmd cmd;
	assert_non_null(last_sent(2, SLIM_CMD_REDIRECT, &cmd));
	assert_int_equal(cmd.redirect.port, 8101);
	assert_true(first_sent(2, SLIM_CMD_REDIRECT) >= before);
	assert_non_null(strstr(ctl_says("list"), "shadow 2 c2 attaching\n"));
	comp_say(s, "shadow-attached 6332");
	assert_non_null(strstr(ctl_says("list"), "shadow 2 c2 watching\n"));
	assert_null(slim_manager_console(t.mgr, "c2")->shows);

	/* the user's chord ends it: c2 back on its greeter */
	comp_say(s, "shadow-ended owner-ended");
	assert_non_null(strstr(ctl_says("list"), "shadow 2 c2 over owner-ended\n"));
	assert_back_on_greeter(g);
	attach(g, "c2");

	/* no: c2 never leaves its greeter */
	assert_string_equal(ctl_says("shadow 2 c2"), "shadow 2 c2 asking\nok\n");
	line = comp_line(s);
	assert_true(ends_with(line, " ask view"));
	comp_say(s, "shadow-refused refused");
	assert_non_null(strstr(ctl_says("list"), "shadow 2 c2 over refused\n"));
	assert_null(comp_line(g));
	assert_true(slim_manager_console(t.mgr, "c2")->shows->greeter);

	/* a compositor that never answers is given up on, and told */
	assert_string_equal(ctl_says("shadow 2 c2"), "shadow 2 c2 asking\nok\n");
	assert_non_null(comp_line(s));
	advance_ms(46000);
	assert_string_equal(comp_line(s), "unshadow");
	assert_non_null(strstr(ctl_says("list"), "shadow 2 c2 over no-answer\n"));

	/* what the compositor says out of turn changes nothing */
	comp_say(s, "shadow-attached 6332");
	comp_say(s, "shadow-ready 8101");
	comp_say(s, "shadow-ended Owner_Left");
	assert_non_null(strstr(ctl_says("list"), "shadow 2 c2 over no-answer\n"));

	/* the session ends while c2 watches: c2 back on its greeter */
	assert_string_equal(ctl_says("shadow 2 c2"), "shadow 2 c2 asking\nok\n");
	assert_non_null(comp_line(s));
	comp_say(s, "shadow-ready 8102");
	assert_string_equal(comp_line(g), "detach");
	comp_say(s, "shadow-attached 6332");
	assert_string_equal(ctl_says("unshadow 2"), "ok\n");
	assert_string_equal(comp_line(s), "unshadow");
	assert_string_equal(ctl_says("end 2"), "ok\n");
	wait_gone(s->pid);
	assert_null(slim_manager_session(t.mgr, 2));
	assert_back_on_greeter(g);
}

/* shadow = never: refused before anyone is asked; always: the compositor asks nobody */
static void test_shadow_policy(void **state)
{
	struct fake_compositor *g;
	struct fake_compositor *s = two_consoles(&g);
	const char *policy = *state;
	if (strstr(policy, "never")) {
		assert_non_null(strstr(ctl_says("shadow 2 c2"), "error shadowing is off"));
		assert_null(comp_line(s));
		return;
	}
	assert_string_equal(ctl_says("shadow 2 c2"), "shadow 2 c2 asking\nok\n");
	assert_true(ends_with(comp_line(s), " always view"));
}

const struct CMUnitTest manager_shadow_tests[] = {
	/* the consoles stay known however long the test's clock runs */
	cmocka_unit_test_prestate_setup_teardown(test_shadow, setup, teardown,
		"console_timeout = 0\n"),
	cmocka_unit_test_prestate_setup_teardown(test_shadow_policy, setup, teardown,
		"shadow = never\n"),
	cmocka_unit_test_prestate_setup_teardown(test_shadow_policy, setup, teardown,
		"shadow = always\n"),
};
const size_t manager_shadow_tests_n = sizeof(manager_shadow_tests) / sizeof(manager_shadow_tests[0]);
