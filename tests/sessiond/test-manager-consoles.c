/*
 * The manager's consoles: greeters, logins, cards and what they may not
 * forge, silence, goodbye, the size a console may be, keys, the heartbeat
 * and the manager a console could not reach.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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

/* What a greeter client hears, through its end of the socket: "" for nothing. */
static const char *client_heard(int fd)
{
	static char buf[256];
	settle();
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void test_greeter_and_login(void **state)
{
	struct fake_compositor *g = console_on_greeter(1, 0x111, "c1");
	struct slim_console *c = slim_manager_console(t.mgr, "c1");
	const char *why = NULL;
	assert_false(login(c, "alice", "wrong", &why));
	assert_string_equal(why, "Wrong password");
	assert_false(login(c, "slimland-greeter", "right", &why));
	assert_true(login(c, "alice", "right", &why));
	struct fake_compositor *s = last_comp();
	assert_false(s->greeter);
	assert_string_equal(s->user, "alice");
	/*
	 * The greeter is not told to let go of the console: it shows "Starting
	 * your session…" until the session has the console, and is ended then.
	 */
	char *line = comp_line(g);
	assert_null(line);
	assert_true(alive(g->pid));
	comp_start(s, 8001, "c1");
	attach(s, "c1");
	assert_int_equal(c->state, SLIM_CONSOLE_SESSION);
	/* the greeter is done: SIGTERM, and its exit (pidfd) takes it off the table */
	wait_gone(g->pid);
	assert_null(c->greeter.session);
	/* a second login by alice elsewhere shows the same session */
	struct fake_compositor *g2 = console_on_greeter(2, 0x222, "c2");
	(void)g2;
	struct slim_console *c2 = slim_manager_console(t.mgr, "c2");
	int comps = fake.n_comps;
	assert_true(login(c2, "alice", "right", &why));
	assert_int_equal(fake.n_comps, comps + 1); /* c1's new greeter, no new session */
	assert_true(last_comp()->greeter);
	assert_string_equal(last_comp()->console_env, "c1");
	line = comp_line(s);
	assert_non_null(line);
	assert_memory_equal(line, "expect ", 7);
	assert_non_null(strstr(line, " 6332")); /* "c2" in hex */
	assert_ptr_equal(c->shows, c->greeter.session);
}

static void test_cards(void **state)
{
	struct fake_compositor *s = alice_with_card();
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	struct slim_session *session = c1->shows;
	console_on_greeter(2, 0x222, "c2");
	struct slim_console *c2 = slim_manager_console(t.mgr, "c2");
	/* the card at c2: the session moves there, c1 goes to a greeter */
	int comps = fake.n_comps;
	fake.n_sent = 0;
	card(2, 0x222, 2, true, 7);
	assert_ptr_equal(c2->shows, session);
	assert_int_equal(c1->why, SLIM_WHY_MOVED);
	assert_int_equal(fake.n_comps, comps + 1);
	/* c2's REDIRECT left before c1's greeter compositor was started */
	struct fake_compositor *g1 = last_comp();
	assert_true(g1->greeter);
	assert_string_equal(g1->console_env, "c1");
	int redirect = first_sent(2, SLIM_CMD_REDIRECT);
	assert_true(redirect >= 0);
	assert_true(redirect < g1->sent_before);
	assert_ptr_equal(c1->shows, c1->greeter.session);
	assert_ptr_equal(c1->greeter.session->console, c1);
	char *line = comp_line(s);
	assert_non_null(line);
	assert_non_null(strstr(line, " 6332")); /* "c2" in hex */
	struct slim_cmd cmd;
	assert_non_null(last_sent(2, SLIM_CMD_REDIRECT, &cmd));
	assert_int_equal(cmd.redirect.port, 8001);
	char hex[33];
	slim_hex_encode(hex, cmd.redirect.token, 16);
	assert_non_null(strstr(line, hex));
	attach(s, "c2");
	assert_int_equal(c2->state, SLIM_CONSOLE_SESSION);
	/* the same CARD datagram again (a replay) does nothing */
	int sent = fake.n_sent;
	card(2, 0x222, 2, true, 7);
	assert_int_equal(fake.n_sent, sent);
	/* removal: c2 goes to the greeter, the session keeps running, detached */
	card(2, 0x222, 3, false, 7);
	assert_int_equal(c2->why, SLIM_WHY_CARD_REMOVED);
	assert_null(session->console);
	assert_true(alive(s->pid));
	line = comp_line(s);
	assert_non_null(line);
	assert_string_equal(line, "detach");
	/* the compositor exits: its token is freed, nothing crashes */
	kill(s->pid, SIGTERM);
	wait_gone(s->pid);
	assert_null(slim_manager_session(t.mgr, 2));
	assert_int_equal(wl_list_length(&t.mgr->bindings), 0);
	assert_int_equal(fake.logouts, 1);
}

static void test_forgery(void **state)
{
	alice_with_card();
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	struct slim_session *session = c1->shows;
	console_on_greeter(2, 0x222, "c2");
	struct slim_console *c2 = slim_manager_console(t.mgr, "c2");
	/* a CARD from c2's address with a wrong association: refused, nothing moves */
	card(2, 0x999, 5, true, 7);
	struct slim_cmd cmd;
	assert_int_equal(refused(2), SLIM_REFUSE_UNKNOWN);
	assert_ptr_equal(c1->shows, session);
	/* c2's association from another address: refused too */
	fake.n_sent = 0;
	card(3, 0x222, 5, true, 7);
	assert_non_null(last_sent(3, SLIM_CMD_REFUSE, &cmd));
	assert_ptr_equal(c1->shows, session);
	/* a HELLO claiming c1 from elsewhere while c1 is alive: BUSY */
	hello(3, 0x333, "c1");
	assert_int_equal(refused(3), SLIM_REFUSE_BUSY);
	assert_int_equal(c1->assoc.id, 0x111);
	/* after 10 s of silence the new address takes it over */
	c1->heard.last_us -= SLIM_CONSOLE_TAKEOVER_US + 1;
	hello(3, 0x333, "c1");
	assert_int_equal(c1->assoc.id, 0x333);
	assert_int_equal(ntohs(((struct sockaddr_in *)&c1->assoc.addr)->sin_port), 40003);
	(void)c2;
	/* a PING of an unknown association is answered REFUSE UNKNOWN */
	fake.n_sent = 0;
	console_send(4, 0x444, 2, SLIM_CMD_PING, NULL);
	assert_int_equal(refused(4), SLIM_REFUSE_UNKNOWN);
}

static void test_reauth(void **state)
{
	struct fake_compositor *s = alice_with_card();
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	struct slim_session *session = c1->shows;
	card(1, 0x111, 3, false, 7);
	assert_null(session->console);
	comp_line(s); /* detach */
	card(1, 0x111, 4, true, 7);
	assert_int_equal(c1->why, SLIM_WHY_REAUTH);
	assert_string_equal(c1->greeter.message, "Enter your password to continue");
	assert_ptr_equal(c1->card.reauth, session);
	assert_ptr_equal(c1->shows, c1->greeter.session);
	const char *why;
	assert_false(login(c1, "alice", "wrong", &why));
	int comps = fake.n_comps;
	assert_true(login(c1, "alice", "right", &why));
	assert_int_equal(fake.n_comps, comps);
	assert_ptr_equal(c1->shows, session);
	char *line = comp_line(s);
	assert_non_null(line);
	assert_memory_equal(line, "expect ", 7);
}

/* reauth = idle:60, with the clock moved by hand rather than waited for */
static void test_reauth_idle(void **state)
{
	const uint64_t two_minutes = 120 * 1000000ull;
	struct fake_compositor *s = alice_with_card();
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	struct slim_session *session = c1->shows;
	console_on_greeter(2, 0x222, "c2");
	struct slim_console *c2 = slim_manager_console(t.mgr, "c2");
	/* shown with a video playing: in use however long nobody types */
	comp_say(s, "inhibit 1");
	session->active_us -= two_minutes;
	card(2, 0x222, 2, true, 7);
	assert_ptr_equal(c2->shows, session);
	/* the video stopped two minutes ago: idle since */
	comp_say(s, "inhibit 0");
	session->active_us -= two_minutes;
	card(1, 0x111, 3, true, 7);
	assert_int_equal(c1->why, SLIM_WHY_REAUTH);
	assert_ptr_equal(c1->card.reauth, session);
	assert_ptr_equal(c2->shows, session);
	/* someone typed at c2 since: no password */
	comp_say(s, "active");
	card(1, 0x111, 4, true, 7);
	assert_ptr_equal(c1->shows, session);
	/* detached, a video playing into nobody's screen is not use */
	card(1, 0x111, 5, false, 7);
	assert_null(session->console);
	comp_say(s, "inhibit 1");
	session->active_us -= two_minutes;
	card(1, 0x111, 6, true, 7);
	assert_int_equal(c1->why, SLIM_WHY_REAUTH);
	/* what the compositor says is checked like every line */
	comp_say(s, "inhibit 2");
	comp_say(s, "active now");
	assert_true(session->inhibited);
}

static void test_console_timeout(void **state)
{
	assert_int_equal(t.mgr->config.console_timeout_s, 30);
	struct fake_compositor *s = alice_with_card();
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	struct slim_session *session = c1->shows;
	struct fake_compositor *g2 = console_on_greeter(2, 0x222, "c2");
	/* a forged HELLO with an invented id: a greeter is started for it */
	int comps = fake.n_comps;
	hello(3, 0x333, "forged");
	assert_int_equal(fake.n_comps, comps + 1);
	struct fake_compositor *g3 = last_comp();
	assert_string_equal(g3->console_env, "forged");
	assert_true(alive(g3->pid));

	/* 20 s on, c2 PINGs; nothing is due yet */
	advance_s(20);
	int sent = fake.n_sent;
	console_send(2, 0x222, 3, SLIM_CMD_PING, NULL);
	/* answered, with no more than it carried: a console tells a silent manager by it */
	assert_int_equal(fake.n_sent, sent + 1);
	assert_int_equal(fake.sent[sent].console, 2);
	assert_true(fake.sent[sent].len <= sizeof(struct slim_wire_dgram) + 4);
	assert_int_equal(wl_list_length(&t.mgr->consoles), 3);
	assert_false(c1->heard.away);

	/* 35 s: the silent console on a greeter is forgotten, its greeter ended */
	advance_s(15);
	assert_null(slim_manager_console(t.mgr, "forged"));
	wait_gone(g3->pid);
	/* the one showing a session is only marked away: the session keeps it */
	assert_ptr_equal(slim_manager_console(t.mgr, "c1"), c1);
	assert_true(c1->heard.away);
	struct out o = { 0 };
	slim_ctl_run(t.mgr, NULL, "list", collect, &o);
	assert_non_null(strstr(o.text, "console c1 10.0.0.1:40001 away "));
	assert_ptr_equal(c1->shows, session);
	assert_ptr_equal(session->console, c1);
	assert_int_equal(c1->state, SLIM_CONSOLE_SESSION);
	assert_true(alive(s->pid));
	assert_null(comp_line(s)); /* no detach */
	assert_true(alive(g2->pid));
	assert_non_null(slim_manager_console(t.mgr, "c2"));

	/* c1 is heard again: no longer away, still on its session */
	console_send(1, 0x111, 5, SLIM_CMD_PING, NULL);
	assert_false(c1->heard.away);
	assert_ptr_equal(c1->shows, session);

	/* 35 s more: c2 (on its greeter) is forgotten; c1 away again */
	advance_s(35);
	assert_null(slim_manager_console(t.mgr, "c2"));
	wait_gone(g2->pid);
	assert_true(c1->heard.away);
	assert_true(alive(s->pid));

	/* a forgotten console that comes back is new: HELLO, greeter */
	comps = fake.n_comps;
	hello(2, 0x2222, "c2");
	assert_non_null(slim_manager_console(t.mgr, "c2"));
	assert_int_equal(fake.n_comps, comps + 1);
	assert_true(last_comp()->greeter);
}

/*
 * A HELLO over SLIM_MAX_SCREEN_PIXELS is refused before anything changes; a
 * console that says goodbye is gone at once, as if silent for
 * console_timeout; a greeter gone takes its runtime directory along.
 */
static void test_goodbye_and_size(void **state)
{
	struct fake_compositor *s = alice_with_card();
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	struct fake_compositor *g1 = &fake.comps[0];
	struct fake_compositor *g2 = console_on_greeter(2, 0x222, "c2");
	struct slim_console *c2 = slim_manager_console(t.mgr, "c2");
	int comps = fake.n_comps, consoles = wl_list_length(&t.mgr->consoles);
	/*
	 * c1's greeter ended when alice's session took the console: its uid
	 * was cleared (as it was taken, and as it ended), its directory with it
	 */
	wait_gone(g1->pid);
	assert_int_equal(times_cleared(g1->uid), 2);
	assert_int_equal(slim_uid_pool_state(&t.mgr->greeters.uids, g1->uid), SLIM_UID_FREE);

	/* 8192x8192, a new console and a known one: refused, no greeter, no change */
	struct slim_wire_hello h = { .version = 1, .width = 8192, .height = 8192, .mtu = 1400 };
	memcpy(h.console_id, "huge", 4);
	console_send(3, 0x333, 1, SLIM_CMD_HELLO, &h);
	assert_int_equal(refused(3), SLIM_REFUSE_TOO_LARGE);
	assert_null(slim_manager_console(t.mgr, "huge"));
	memset(h.console_id, 0, sizeof(h.console_id));
	memcpy(h.console_id, "c2", 2);
	h.width = 3841 * 2; /* one pixel a row over two 4K heads */
	h.height = 2160;
	console_send(2, 0x2223, 1, SLIM_CMD_HELLO, &h);
	assert_int_equal(refused(2), SLIM_REFUSE_TOO_LARGE);
	assert_int_equal(c2->assoc.id, 0x222);
	assert_int_equal(c2->assoc.width, 640);
	assert_int_equal(fake.n_comps, comps);
	assert_int_equal(wl_list_length(&t.mgr->consoles), consoles);
	/* two 4K heads exactly: served */
	h.width = 3840 * 2;
	console_send(2, 0x2224, 1, SLIM_CMD_HELLO, &h);
	assert_int_equal(c2->assoc.id, 0x2224);
	assert_int_equal(c2->assoc.width, 3840 * 2);

	/* c2 (on its greeter) says goodbye: forgotten now, its greeter ended and cleaned up */
	slim_consoles_closed(t.mgr, fake_conn(2), true);
	assert_null(slim_manager_console(t.mgr, "c2"));
	wait_gone(g2->pid);
	assert_int_equal(times_cleared(g2->uid), 2);
	assert_int_equal(slim_uid_pool_state(&t.mgr->greeters.uids, g2->uid), SLIM_UID_FREE);

	/* c1 (on alice's session) says goodbye: away, the session keeps it and runs on */
	slim_consoles_closed(t.mgr, fake_conn(1), true);
	assert_ptr_equal(slim_manager_console(t.mgr, "c1"), c1);
	assert_true(c1->heard.away);
	assert_false(c1->heard.known);
	/* its compositor then reports it gone: no greeter is started for a console that quit */
	comps = fake.n_comps;
	char line[120], hex[2 * SLIM_CONSOLE_ID_LEN + 1];
	slim_hex_encode(hex, (const uint8_t *)"c1", 2);
	snprintf(line, sizeof(line), "detached %s", hex);
	comp_say(s, line);
	assert_int_equal(fake.n_comps, comps);
	assert_true(alive(s->pid));

	/* a connection closed without a goodbye (replaced, idle) forgets nothing */
	console_on_greeter(4, 0x444, "c4");
	slim_consoles_closed(t.mgr, fake_conn(4), false);
	assert_non_null(slim_manager_console(t.mgr, "c4"));
}

/* A greeter client that says hello twice belongs to the second console only. */
static void test_greeter_hello_twice(void **state)
{
	struct slim_console *c1 = slim_manager_console_create(t.mgr, "c1");
	struct slim_console *c2 = slim_manager_console_create(t.mgr, "c2");
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
	assert_non_null(slim_greeter_client_create(t.mgr, sv[0]));
	assert_true(slim_line_send(sv[1], "hello c2"));
	settle();
	slim_console_message(c2, "for c2");
	assert_string_equal(client_heard(sv[1]), "message for c2\n");
	assert_true(slim_line_send(sv[1], "hello c1"));
	settle();
	slim_console_message(c2, "nobody hears this");
	slim_console_message(c1, "for c1");
	assert_string_equal(client_heard(sv[1]), "message for c1\n");
	/* a second client for c1 takes it: the first hears nothing more of it */
	int sv2[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv2), 0);
	assert_non_null(slim_greeter_client_create(t.mgr, sv2[0]));
	assert_true(slim_line_send(sv2[1], "hello c1"));
	assert_string_equal(client_heard(sv2[1]), "message for c1\n");
	slim_console_message(c1, "again");
	assert_string_equal(client_heard(sv[1]), "");
	assert_string_equal(client_heard(sv2[1]), "message again\n");
	/* the clients go, then the console: nothing points at what is gone */
	close(sv[1]);
	close(sv2[1]);
	settle();
	slim_console_message(c1, "nobody hears this");
	slim_console_revoke(c2);
}

/* The key of an attach: in the compositor's `expect` and in the console's REDIRECT alone. */
static void test_attach_key(void **state)
{
	console_on_greeter(1, 0x111, "c1");
	char token_hex[33], id_hex[65], key_hex[65];
	assert_int_equal(sscanf(t.last_expect, "expect %32s %64s %64s", token_hex, id_hex, key_hex), 3);
	assert_int_equal(strlen(key_hex), 64);
	struct slim_cmd cmd;
	assert_non_null(last_sent(1, SLIM_CMD_REDIRECT, &cmd));
	char hex[65];
	slim_hex_encode(hex, cmd.redirect.token, sizeof(cmd.redirect.token));
	assert_string_equal(hex, token_hex);
	slim_hex_encode(hex, cmd.redirect.key, sizeof(cmd.redirect.key));
	assert_string_equal(hex, key_hex);
	/* a second console gets a key of its own */
	console_on_greeter(2, 0x222, "c2");
	char key2[65];
	assert_int_equal(sscanf(t.last_expect, "expect %*32s %*64s %64s", key2), 1);
	assert_string_not_equal(key2, key_hex);
}

/* Over DTLS a console is its key: HELLO must carry the key's id, from any address. */
static void test_key_is_the_console(void **state)
{
	uint8_t key[SLIM_SEC_FINGERPRINT_LEN] = { 0x42 };
	char id[SLIM_CONSOLE_ID_LEN + 1];
	slim_sec_fingerprint_id(key, id);
	/* an id that is not its key's: dropped, nothing started */
	struct slim_wire_hello h = { .version = SLIM_VERSION, .width = 640, .height = 480,
		.mtu = 1400 };
	memcpy(h.console_id, "c1", 2);
	console_send_keyed(1, 0x111, 1, SLIM_CMD_HELLO, &h, key);
	assert_int_equal(fake.n_comps, 0);
	assert_null(slim_manager_console(t.mgr, "c1"));
	/* its own id: a greeter */
	memcpy(h.console_id, id, SLIM_CONSOLE_ID_LEN);
	console_send_keyed(1, 0x111, 1, SLIM_CMD_HELLO, &h, key);
	assert_int_equal(fake.n_comps, 1);
	struct slim_console *c = slim_manager_console(t.mgr, id);
	assert_non_null(c);
	/* the same key from another address at once: the console moved, it is the same one */
	console_send_keyed(5, 0x555, 1, SLIM_CMD_HELLO, &h, key);
	assert_ptr_equal(slim_manager_console(t.mgr, id), c);
	assert_int_equal(c->assoc.id, 0x555);
	assert_int_equal(ntohs(((struct sockaddr_in *)&c->assoc.addr)->sin_port), 40005);
	assert_int_equal(fake.n_comps, 1);
}

/* Datagrams sent to console n from index `from` on, and whether all were empty. */
static int sent_to(int n, int from, bool *all_empty)
{
	int k = 0;
	*all_empty = true;
	for (int i = from; i < fake.n_sent; i++) {
		if (fake.sent[i].console == n) {
			k++;
			*all_empty = *all_empty && fake.sent[i].len == sizeof(struct slim_wire_dgram);
		}
	}
	return k;
}

/*
 * The heartbeat: a console that said HELLO hears an empty datagram of its
 * association at least every second, however quiet things are, and none
 * once it is forgotten.
 */
static void test_heartbeat(void **state)
{
	fake.heartbeats = true;
	hello(1, 0x111, "c1");
	struct slim_console *c = slim_manager_console(t.mgr, "c1");
	assert_non_null(c);
	bool empty;
	int from = fake.n_sent;
	advance_ms(1000);
	assert_int_equal(sent_to(1, from, &empty), 1);
	assert_true(empty);
	from = fake.n_sent;
	advance_s(10);
	int n = sent_to(1, from, &empty);
	assert_true(empty);
	/* every 0.75 to 1 s */
	assert_in_range(n, 10, 14);
	/* a PING's answer counts: the next heartbeat waits */
	from = fake.n_sent;
	console_send(1, 0x111, 2, SLIM_CMD_PING, NULL);
	advance_ms(700);
	assert_int_equal(sent_to(1, from, &empty), 1);
	/* silent for console_timeout: forgotten, and no longer sent anything */
	advance_s(30);
	assert_null(slim_manager_console(t.mgr, "c1"));
	from = fake.n_sent;
	advance_s(3);
	assert_int_equal(sent_to(1, from, &empty), 0);
	assert_false(t.mgr->heartbeat.armed);
}

/* HELLO names a manager the console could not reach: for 30 s, or until a HELLO does not. */
static void test_unreached(void **state)
{
	uint8_t a[SLIM_UNREACHED_LEN], b[SLIM_UNREACHED_LEN];
	memset(a, 0xaa, sizeof(a));
	memset(b, 0xbb, sizeof(b));
	hello_unreached(1, 0x111, "c1", a);
	struct slim_console *c = slim_manager_console(t.mgr, "c1");
	assert_non_null(c);
	assert_true(slim_console_unreached(c, a));
	assert_false(slim_console_unreached(c, b));
	/* the same association's HELLO again changes nothing */
	hello_unreached(1, 0x111, "c1", NULL);
	assert_true(slim_console_unreached(c, a));
	advance_s(SLIM_UNREACHED_US / 1000000 - 1);
	console_send(1, 0x111, 2, SLIM_CMD_PING, NULL);
	assert_true(slim_console_unreached(c, a));
	advance_s(2);
	assert_false(slim_console_unreached(c, a));
	/* a new association says it again, then no longer */
	hello_unreached(1, 0x112, "c1", b);
	assert_true(slim_console_unreached(c, b));
	hello_unreached(1, 0x113, "c1", NULL);
	assert_false(slim_console_unreached(c, b));
}

const struct CMUnitTest manager_consoles_tests[] = {
	cmocka_unit_test_setup_teardown(test_greeter_and_login, setup, teardown),
	cmocka_unit_test_setup_teardown(test_cards, setup, teardown),
	cmocka_unit_test_setup_teardown(test_forgery, setup, teardown),
	cmocka_unit_test_prestate_setup_teardown(test_reauth, setup, teardown,
		"reauth = always\n"),
	cmocka_unit_test_prestate_setup_teardown(test_reauth_idle, setup, teardown,
		"reauth = idle:60\n"),
	cmocka_unit_test_setup_teardown(test_console_timeout, setup, teardown),
	cmocka_unit_test_setup_teardown(test_goodbye_and_size, setup, teardown),
	cmocka_unit_test_setup_teardown(test_greeter_hello_twice, setup, teardown),
	cmocka_unit_test_setup_teardown(test_attach_key, setup, teardown),
	cmocka_unit_test_setup_teardown(test_key_is_the_console, setup, teardown),
	cmocka_unit_test_setup_teardown(test_heartbeat, setup, teardown),
	cmocka_unit_test_setup_teardown(test_unreached, setup, teardown),
};
const size_t manager_consoles_tests_n = sizeof(manager_consoles_tests) / sizeof(manager_consoles_tests[0]);
