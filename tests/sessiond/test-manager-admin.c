/*
 * What an administrator does to the manager, and what survives its
 * restart: slimlandctl, enrolment, revocation, the state file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>
#include <cmocka.h>
#include "manager-harness.h"
#include "slim-codec.h"
#include "slim-hex.h"

static void test_ctl(void **state)
{
	struct slim_ctl_request req;
	const char *err;
	assert_true(slim_ctl_parse("list", &req, &err));
	assert_int_equal(req.cmd, SLIM_CTL_LIST);
	assert_true(slim_ctl_parse("detach 12", &req, &err));
	assert_int_equal(req.cmd, SLIM_CTL_DETACH);
	assert_int_equal(req.session, 12);
	assert_true(slim_ctl_parse("end 4294967295", &req, &err));
	assert_int_equal(req.session, 4294967295u);
	assert_true(slim_ctl_parse("why c1", &req, &err));
	assert_string_equal(req.console, "c1");
	const char *bad[] = { "", "list x", "detach", "detach 0", "detach -1", "detach 1x",
		"end 4294967296", "why", "why a b", "frobnicate", "detach  1",
		"why 0123456789012345678901234567890123" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(slim_ctl_parse(bad[i], &req, &err));
		assert_non_null(err);
	}
	struct fake_compositor *s = alice_with_card();
	struct out o = { 0 };
	slim_ctl_run(t.mgr, NULL, "list", collect, &o);
	assert_non_null(strstr(o.text, "console c1 10.0.0.1:40001 session 2\n"));
	assert_non_null(strstr(o.text, "session 2 alice"));
	assert_non_null(strstr(o.text, " attached c1\n"));
	assert_non_null(strstr(o.text, "\nok\n"));
	memset(&o, 0, sizeof(o));
	slim_ctl_run(t.mgr, NULL, "detach 2", collect, &o);
	assert_string_equal(o.text, "ok\n");
	assert_string_equal(comp_line(s), "detach");
	memset(&o, 0, sizeof(o));
	slim_ctl_run(t.mgr, NULL, "why c1", collect, &o);
	assert_string_equal(o.text, "detached by an administrator\nok\n");
	memset(&o, 0, sizeof(o));
	slim_ctl_run(t.mgr, NULL, "detach 2", collect, &o);
	assert_memory_equal(o.text, "error ", 6);
	memset(&o, 0, sizeof(o));
	slim_ctl_run(t.mgr, NULL, "end 1", collect, &o); /* a greeter is no session */
	assert_memory_equal(o.text, "error ", 6);
	memset(&o, 0, sizeof(o));
	slim_ctl_run(t.mgr, NULL, "end 2", collect, &o);
	assert_string_equal(o.text, "ok\n");
	wait_gone(s->pid);
	assert_null(slim_manager_session(t.mgr, 2));
}

/*
 * An answer larger than the control socket takes at once (`list` at a
 * thousand consoles; here `metrics`, through a socket of the smallest
 * buffer) reaches the client whole, ending in ok, as slim_ctl_run says it.
 */
static void test_ctl_socket_long_answer(void **state)
{
	struct out whole = { 0 };
	slim_ctl_run(t.mgr, NULL, "metrics", collect, &whole);
	size_t len = strlen(whole.text);
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
	int small = 1;
	assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
	assert_true(slim_ctl_client_create(t.mgr, NULL, sv[0]));
	assert_int_equal(write(sv[1], "metrics\n", 8), 8);
	static char got[sizeof(whole.text)];
	size_t n = 0;
	uint64_t deadline = slim_now_us() + 5000000;
	while ((n < 4 || strcmp(got + n - 4, "\nok\n") != 0) && slim_now_us() < deadline) {
		settle();
		ssize_t r = read(sv[1], got + n, sizeof(got) - 1 - n);
		got[n + (r > 0 ? (size_t)r : 0)] = '\0';
		if (r > 0) {
			n += (size_t)r;
		} else {
			assert_true(r < 0 && errno == EAGAIN);
			struct pollfd p[2] = {
				{ .fd = wl_event_loop_get_fd(t.loop), .events = POLLIN },
				{ .fd = sv[1], .events = POLLIN },
			};
			poll(p, 2, 100);
		}
	}
	got[n] = '\0';
	assert_true(len > 4096); /* more than the socket's buffer */
	/* its figures may have moved on; its lines are the same */
	size_t lines = 0, got_lines = 0;
	for (size_t i = 0; i < len; i++) {
		lines += whole.text[i] == '\n';
	}
	for (size_t i = 0; i < n; i++) {
		got_lines += got[i] == '\n';
	}
	assert_int_equal(got_lines, lines);
	assert_true(n > 4 && strcmp(got + n - 4, "\nok\n") == 0);
	/* the client hangs up: the manager lets go of it */
	close(sv[1]);
	settle();
}

/* enroll = approve: a new console waits, with nothing started, until approved. */
static void test_enroll_approve(void **state)
{
	hello(1, 0x111, "c1");
	assert_int_equal(refused(1), SLIM_REFUSE_PENDING);
	assert_int_equal(fake.n_comps, 0);
	assert_null(slim_manager_console(t.mgr, "c1"));
	/* its connection stays among those any other key not enrolled may push out */
	assert_false(fake.admitted[1]);
	struct out o = { "" };
	slim_ctl_run(t.mgr, NULL, "consoles", collect, &o);
	assert_non_null(strstr(o.text, "console c1 pending 10.0.0.1:40001 "));
	/* many keys made up by one host: the waiting list stays bounded */
	for (int i = 0; i < SLIM_ENROLL_PENDING_MAX + 20; i++) {
		char id[16];
		snprintf(id, sizeof(id), "x%d", i);
		hello(9, (uint32_t)(0x9000 + i), id);
	}
	assert_int_equal(t.mgr->enroll.n_pending, SLIM_ENROLL_PENDING_MAX);
	assert_int_equal(fake.n_comps, 0);
	assert_int_equal(wl_list_length(&t.mgr->consoles), 0);
	assert_false(fake.admitted[9]);
	/* approved while it waits, connected: told at once to say HELLO again */
	hello(1, 0x111, "c1");
	fake.n_sent = 0;
	o.text[0] = '\0';
	slim_ctl_run(t.mgr, NULL, "approve c1", collect, &o);
	assert_string_equal(o.text, "console c1 approved\nok\n");
	assert_int_equal(refused(1), SLIM_REFUSE_UNKNOWN);
	assert_false(fake.admitted[1]);
	hello(1, 0x112, "c1");
	assert_int_equal(fake.n_comps, 1);
	assert_true(last_comp()->greeter);
	assert_true(fake.admitted[1]);
	/* a prefix too short, or of nobody */
	o.text[0] = '\0';
	slim_ctl_run(t.mgr, NULL, "approve x", collect, &o);
	assert_non_null(strstr(o.text, "error "));
}

/* enroll = closed: refused, nothing started. */
static void test_enroll_closed(void **state)
{
	hello(1, 0x111, "c1");
	assert_int_equal(refused(1), SLIM_REFUSE_DENIED);
	assert_int_equal(fake.n_comps, 0);
	assert_null(slim_manager_console(t.mgr, "c1"));
	assert_false(fake.admitted[1]);
}

/* Revoked: refused, out of the table, its session detached and running. */
static void test_revoke(void **state)
{
	struct fake_compositor *s = alice_with_card();
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	struct slim_session *session = c1->shows;
	fake.n_sent = 0;
	struct out o = { "" };
	slim_ctl_run(t.mgr, NULL, "revoke c1", collect, &o);
	assert_string_equal(o.text, "console c1 revoked\nok\n");
	assert_int_equal(refused(1), SLIM_REFUSE_DENIED);
	assert_null(slim_manager_console(t.mgr, "c1"));
	assert_null(session->console);
	char *line = comp_line(s);
	assert_non_null(line);
	assert_string_equal(line, "detach");
	assert_true(alive(s->pid));
	/* its HELLO is refused from now on, and nothing starts */
	int comps = fake.n_comps;
	fake.n_sent = 0;
	hello(1, 0x999, "c1");
	assert_int_equal(refused(1), SLIM_REFUSE_DENIED);
	assert_int_equal(fake.n_comps, comps);
	o.text[0] = '\0';
	slim_ctl_run(t.mgr, NULL, "consoles", collect, &o);
	assert_non_null(strstr(o.text, "console c1 revoked - - -\n"));
}

static void test_state_round_trip(void **state)
{
	alice_with_card();
	size_t len;
	char *text = slim_state_format(t.mgr, &len);
	assert_non_null(text);
	/* the card's keyed hash is kept, never its token */
	struct slim_wire_card tapped = { .event = 1, .kind = 1, .len = 4, .token = { 0xca, 0xfe, 0, 7 } };
	struct slim_card_hash hash;
	slim_manager_hash_card(t.mgr, &tapped, &hash);
	char line[128], hex[65];
	slim_hex_encode(hex, hash.bytes, sizeof(hash.bytes));
	snprintf(line, sizeof(line), "token %s 2\n", hex);
	assert_non_null(strstr(text, line));
	assert_null(strstr(text, "cafe0007"));
	assert_non_null(strstr(text, "console c1 2\n"));
	struct slim_state st;
	assert_true(slim_state_parse(text, len, "t", &st));
	/* c1's greeter is ending (c1 shows alice's session): it is not kept */
	assert_int_equal(st.n_sessions, 1);
	assert_int_equal(st.n_tokens, 1);
	assert_int_equal(st.n_consoles, 1);

	/* a second manager (a restart) takes it over */
	struct slim_manager *old = t.mgr;
	struct slim_config config;
	test_config(&config);
	t.mgr = create_manager(&config);
	slim_state_apply(t.mgr, &st, false);
	slim_state_finish(&st);
	size_t len2;
	char *text2 = slim_state_format(t.mgr, &len2);
	assert_string_equal(text, text2);
	free(text2);
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	assert_non_null(c1);
	assert_false(c1->heard.known);
	/* its PING is refused UNKNOWN; its HELLO is answered but nothing is redirected */
	fake.n_sent = 0;
	console_send(1, 0x111, 9, SLIM_CMD_PING, NULL);
	struct slim_cmd cmd;
	assert_non_null(last_sent(1, SLIM_CMD_REFUSE, &cmd));
	hello(1, 0x5555, "c1");
	advance_ms(300);
	assert_null(last_sent(1, SLIM_CMD_REDIRECT, &cmd));
	assert_int_equal(c1->state, SLIM_CONSOLE_SESSION);
	assert_int_equal(c1->shows->id, 2);
	/* and its card still opens the session */
	/* and its card still opens the session: the same card key, the same hash */
	assert_non_null(slim_manager_binding(t.mgr, &hash));
	slim_manager_destroy(t.mgr);
	t.mgr = old;

	/* damage: a truncated file, garbage lines; what is good is kept, nothing crashes */
	assert_false(slim_state_parse(text, len - 3, "t", &st));
	assert_true(st.truncated);
	assert_int_equal(st.n_consoles, 0);
	assert_int_equal(st.n_sessions, 1);
	slim_state_finish(&st);
	const char *bad =
		"session 1 0 root\n"
		"session x 0 root 5 5 /p\n"
		"session 3 0 root 1 70000 /p\n"
		"token zz 1\n"
		"token cafe 0\n"
		"console  1\n"
		"\x01\x02\xff\n"
		"console c9 4\n";
	assert_false(slim_state_parse(bad, strlen(bad), "t", &st));
	assert_int_equal(st.bad_lines, 7);
	assert_int_equal(st.n_consoles, 1);
	/* a console whose session is not there is simply not restored */
	struct slim_manager *m2 = create_manager(&config);
	slim_state_apply(m2, &st, true);
	assert_null(slim_manager_console(m2, "c9"));
	slim_manager_destroy(m2);
	slim_state_finish(&st);
	assert_true(slim_state_parse("", 0, "t", &st));
	slim_state_finish(&st);
	free(text);
}

static void test_state_file(void **state)
{
	alice_with_card();
	char path[] = "/tmp/slim-state-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_true(slim_state_write(t.mgr, path));
	/* a restart that checks PIDs: the fake compositors are not slimland */
	struct slim_config config;
	test_config(&config);
	struct slim_manager *m2 = create_manager(&config);
	assert_true(slim_state_restore(m2, path));
	assert_int_equal(wl_list_length(&m2->sessions), 0);
	slim_manager_destroy(m2);
	/* a garbage file */
	FILE *f = fopen(path, "w");
	fwrite("\0\0\0garbage", 1, 10, f);
	fclose(f);
	m2 = create_manager(&config);
	assert_true(slim_state_restore(m2, path));
	assert_int_equal(wl_list_length(&m2->sessions), 0);
	slim_manager_destroy(m2);
	unlink(path);
	int pidfd;
	assert_false(slim_state_check_pid(getpid(), (uid_t)-1, &pidfd)); /* not slimland */
}

const struct CMUnitTest manager_admin_tests[] = {
	cmocka_unit_test_setup_teardown(test_ctl, setup, teardown),
	cmocka_unit_test_setup_teardown(test_ctl_socket_long_answer, setup, teardown),
	cmocka_unit_test_prestate_setup_teardown(test_enroll_approve, setup, teardown,
		"enroll = approve\n"),
	cmocka_unit_test_prestate_setup_teardown(test_enroll_closed, setup, teardown,
		"enroll = closed\n"),
	cmocka_unit_test_setup_teardown(test_revoke, setup, teardown),
	cmocka_unit_test_setup_teardown(test_state_round_trip, setup, teardown),
	cmocka_unit_test_setup_teardown(test_state_file, setup, teardown),
};
const size_t manager_admin_tests_n = sizeof(manager_admin_tests) / sizeof(manager_admin_tests[0]);
