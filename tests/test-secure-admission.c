/*
 * What an unauthenticated sender may cost the secure server (on the wire
 * in memory, secure-wire.h): a spoofed flood keeps no state and draws no
 * more bytes than it sends; a flood in a console's name, a replayed
 * cookie, handshakes under way past their bounds and keys nobody vouched
 * for keep no console out; a half-open handshake sends at most three
 * times what it received; a record nobody knows gets a hint, at a rate.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "secure-wire.h"
#include "slim-log.h"
#include "test-util.h"

/*
 * A flood of ClientHellos from spoofed addresses: no state, no connection,
 * and no address gets more bytes than it was sent in its name.
 */
static void test_spoofed_flood(void **state)
{
	struct slim_sec_server_config cfg = {
		.mode = SLIM_SEC_DTLS, .psk_lookup = psk_lookup, .hello_rate = 1000,
	};
	make_server(&cfg);
	struct client *cl = add_client(40000);
	struct slim_sec_client_config ccfg = psk_config(wire.psk);
	slim_sec_client_start(cl->c, &ccfg, slim_now_us());
	struct dgram hello = wire.up[0];
	wire.n_up = 0;
	struct test_rng rng;
	test_rng_init(&rng, 7);
	uint64_t now = slim_now_us();
	static uint64_t received[65536];
	memset(received, 0, sizeof(received));
	for (int i = 0; i < 20000; i++) {
		struct sockaddr_in from = addr_of(0x0a000000 | test_rand_below(&rng, 1 << 20),
			(uint16_t)(1024 + i % 60000));
		slim_sec_server_receive(wire.srv, hello.buf, hello.len, (struct sockaddr *)&from,
			sizeof(from), now + (uint64_t)i * 20);
		received[ntohs(from.sin_port)] += hello.len;
	}
	const struct slim_sec_stats *st = slim_sec_server_stats(wire.srv);
	assert_int_equal(st->half_open, 0);
	assert_int_equal(st->conns, 0);
	assert_int_equal(wire.established, 0);
	assert_true(st->rate_limited > 0);
	for (size_t p = 0; p < 65536; p++) {
		assert_true(wire.sent_to[p] <= received[p]);
	}
	assert_true(st->unverified_bytes <= 20000 * hello.len);
	/* the real console still gets in */
	wire.n_down = 0;
	connect_psk(cl, wire.psk);
	assert_int_equal(cl->established, 1);
}

/*
 * ClientHellos in the client's name, from its address, while it connects:
 * the cookie is checked before any rate the flood spends, and the
 * HelloVerifyRequests the flood draws to its port end no handshake.
 */
static void test_flood_in_clients_name(void **state)
{
	make_psk_server();
	struct client *cl = add_client(40000);
	struct slim_sec_client_config ccfg = psk_config(wire.psk);
	slim_sec_client_start(cl->c, &ccfg, slim_now_us());
	struct dgram hello = wire.up[0]; /* as an attacker records it */
	wire.n_up = 0;
	for (int same_port = 0; same_port < 2; same_port++) {
		int before = cl->established;
		assert_true(slim_sec_client_start(cl->c, &ccfg, slim_now_us()));
		pump_with(cl, &hello, 200, same_port);
		if (cl->established != before + 1) {
			fail_msg("%s: the client did not connect (%s); %lu ClientHellos over the rate",
				same_port ? "its port" : "its address", slim_sec_client_error(cl->c),
				(unsigned long)slim_sec_server_stats(wire.srv)->rate_limited);
		}
	}
	assert_int_equal(slim_sec_server_stats(wire.srv)->rate_limited, 0);
}

/* Starts the client: its ClientHello with the cookie, not yet delivered. */
static struct dgram cookie_hello(struct client *cl, const struct slim_sec_client_config *cfg)
{
	assert_true(slim_sec_client_start(cl->c, cfg, slim_now_us()));
	struct dgram first = wire.up[--wire.n_up];
	slim_sec_server_receive(wire.srv, first.buf, first.len, (struct sockaddr *)&first.addr,
		sizeof(first.addr), slim_now_us());
	assert_int_equal(wire.n_down, 1);
	const uint8_t *out;
	size_t out_len;
	slim_sec_client_receive(cl->c, wire.down[0].buf, wire.down[0].len, &out, &out_len);
	wire.n_down = 0;
	assert_int_equal(wire.n_up, 1);
	return wire.up[--wire.n_up];
}

/*
 * ClientHellos with valid cookies, recorded and replayed from the client's
 * address: they neither end the handshake it has under way nor start one
 * when they are its connection's own.
 */
static void test_cookie_replay(void **state)
{
	make_psk_server();
	struct client *cl = add_client(40000);
	struct slim_sec_client_config ccfg = psk_config(wire.psk);
	struct dgram abandoned = cookie_hello(cl, &ccfg);
	struct dgram hello = cookie_hello(cl, &ccfg);
	slim_sec_server_receive(wire.srv, hello.buf, hello.len, (struct sockaddr *)&hello.addr,
		sizeof(hello.addr), slim_now_us());
	pump_with(cl, &abandoned, 20, true);
	assert_int_equal(cl->established, 1);
	assert_int_equal(wire.established, 1);
	/*
	 * The connection's own ClientHello again, while the client makes a new
	 * one (once the handshake the older one started has run out).
	 */
	slim_sec_server_tick(wire.srv, slim_now_us() + 11000000);
	assert_int_equal(slim_sec_server_stats(wire.srv)->half_open, 0);
	uint64_t turned_away = slim_sec_server_stats(wire.srv)->half_open_full;
	assert_true(slim_sec_client_start(cl->c, &ccfg, slim_now_us()));
	pump_with(cl, &hello, 20, true);
	assert_int_equal(cl->established, 2);
	assert_true(slim_sec_server_stats(wire.srv)->half_open_full > turned_away);
}

/*
 * Admitted connections have their bound, the others theirs: any number of
 * keys nobody vouched for makes room among themselves, never by ending an
 * admitted connection; admitted ones make room among themselves.
 */
static void test_admitted_bound(void **state)
{
	struct slim_sec_server_config cfg = {
		.mode = SLIM_SEC_DTLS, .psk_lookup = psk_lookup, .max_conns = 2,
		.max_unadmitted = 2,
	};
	make_server(&cfg);
	wire.admit = true;
	struct client *enrolled = add_client(40000);
	connect_psk(enrolled, wire.psk);
	enrolled->conn = wire.conn;
	wire.admit = false;
	for (int i = 0; i < 5; i++) {
		struct client *stranger = add_client((uint16_t)(41000 + i));
		connect_psk(stranger, wire.psk);
		stranger->conn = wire.conn;
		assert_int_equal(stranger->established, 1);
	}
	assert_int_equal(enrolled->ended, 0);
	assert_int_equal(wire.closed, 3);
	assert_int_equal(slim_sec_server_stats(wire.srv)->conns, 3);
	/* admitted later (an approval): the strangers make room for it, not the enrolled */
	struct client *last = &wire.clients[wire.n_clients - 1];
	slim_sec_conn_admit(last->conn);
	assert_int_equal(enrolled->ended, 0);
	assert_int_equal(wire.closed, 3);
	/* a third admitted one: the admitted heard from least recently makes room */
	wire.admit = true;
	struct client *another = add_client(42000);
	connect_psk(another, wire.psk);
	assert_int_equal(enrolled->ended, 1);
	assert_int_equal(last->ended, 0);
	assert_int_equal(wire.closed, 4);
}

/*
 * A valid cookie and then silence: the handshake sends at most 3x what came.
 * The pairing key's ECDHE flight is the larger of the two kinds of PSK.
 */
static void test_amplification_bound(void **state)
{
	struct slim_sec_server_config cfg = {
		.mode = SLIM_SEC_DTLS, .psk_lookup = psk_lookup, .handshake_ms = 2000,
	};
	make_server(&cfg);
	struct client *cl = add_client(40000);
	struct slim_sec_client_config ccfg = psk_config(wire.psk);
	snprintf(ccfg.psk_identity, sizeof(ccfg.psk_identity), "%s", SLIM_SEC_PAIRING_IDENTITY);
	slim_sec_client_start(cl->c, &ccfg, slim_now_us());
	/* ClientHello -> HelloVerifyRequest -> ClientHello with the cookie, then nothing */
	struct dgram first = wire.up[0];
	wire.n_up = 0;
	slim_sec_server_receive(wire.srv, first.buf, first.len, (struct sockaddr *)&first.addr,
		sizeof(first.addr), slim_now_us());
	assert_int_equal(wire.n_down, 1);
	const uint8_t *out;
	size_t out_len;
	slim_sec_client_receive(cl->c, wire.down[0].buf, wire.down[0].len, &out, &out_len);
	wire.n_down = 0;
	assert_int_equal(wire.n_up, 1);
	struct dgram second = wire.up[0];
	wire.n_up = 0;
	uint64_t in = first.len + second.len;
	slim_sec_server_receive(wire.srv, second.buf, second.len, (struct sockaddr *)&second.addr,
		sizeof(second.addr), slim_now_us());
	assert_int_equal(slim_sec_server_stats(wire.srv)->half_open, 1);
	/* the server's retransmissions, on GnuTLS's own clock, for as long as the handshake lives */
	while (slim_sec_server_stats(wire.srv)->half_open > 0) {
		int ms = slim_sec_server_timeout_ms(wire.srv, slim_now_us());
		assert_true(ms >= 0);
		usleep((useconds_t)ms * 1000);
		slim_sec_server_tick(wire.srv, slim_now_us());
	}
	if (wire.sent_to[40000] == 0 || wire.sent_to[40000] > 3 * in) {
		fail_msg("the address sent %lu bytes and got %lu", (unsigned long)in,
			(unsigned long)wire.sent_to[40000]);
	}
	assert_true(slim_sec_server_stats(wire.srv)->amplification > 0);
	wire.n_down = 0;
}

/* A record for a connection the server does not have: a small hint, rate-limited. */
static void test_hint(void **state)
{
	make_psk_server();
	struct client *cl = add_client(40000);
	connect_psk(cl, wire.psk);
	/* the server crashes (its close_notify never leaves) and a new one knows nothing */
	slim_sec_server_destroy(wire.srv);
	wire.n_down = 0;
	memset(wire.sent_to, 0, sizeof(wire.sent_to));
	make_psk_server();
	uint8_t buf[256];
	size_t len = slim_dgram(buf, sizeof(buf), 3, true);
	slim_sec_client_send(cl->c, buf, len);
	pump();
	assert_int_equal(cl->forgotten, 1);
	assert_int_equal(slim_sec_server_stats(wire.srv)->hints_sent, 1);
	assert_true(wire.sent_to[40000] <= len + SLIM_SEC_OVERHEAD);
	/* a burst of them: 5 hints a second at most to one address */
	for (int i = 0; i < 50; i++) {
		slim_sec_client_send(cl->c, buf, len);
	}
	pump();
	assert_true(slim_sec_server_stats(wire.srv)->hints_sent <= 6);
	/* a hint is only believed once connected: a console in its handshake ignores one */
	struct client *fresh = add_client(40001);
	struct slim_sec_client_config cfg = psk_config(wire.psk);
	slim_sec_client_start(fresh->c, &cfg, slim_now_us());
	wire.n_up = 0;
	uint8_t hint[64];
	struct slim_writer wr;
	slim_writer_init(&wr, hint, sizeof(hint), 0, false);
	slim_put_refuse(&wr, SLIM_REFUSE_UNKNOWN, "");
	size_t hint_len = slim_writer_finish(&wr, 0, 0);
	const uint8_t *out;
	size_t out_len;
	assert_int_equal(slim_sec_client_receive(fresh->c, hint, hint_len, &out, &out_len),
		SLIM_SEC_NOTHING);
}

/* Bounds on handshakes under way: per source, with valid cookies. */
static void test_half_open_bound(void **state)
{
	struct slim_sec_server_config cfg = {
		.mode = SLIM_SEC_DTLS, .psk_lookup = psk_lookup, .max_per_source = 2,
	};
	make_server(&cfg);
	for (int i = 0; i < 5; i++) {
		struct client *cl = add_client((uint16_t)(40000 + i));
		struct slim_sec_client_config ccfg = psk_config(wire.psk);
		slim_sec_client_start(cl->c, &ccfg, slim_now_us());
	}
	/* ClientHellos, HelloVerifyRequests, ClientHellos with cookies; the rest is withheld */
	for (int round = 0; round < 2; round++) {
		size_t n = wire.n_up;
		for (size_t i = 0; i < n; i++) {
			slim_sec_server_receive(wire.srv, wire.up[i].buf, wire.up[i].len,
				(struct sockaddr *)&wire.up[i].addr, sizeof(wire.up[i].addr), slim_now_us());
		}
		memmove(wire.up, wire.up + n, (wire.n_up - n) * sizeof(wire.up[0]));
		wire.n_up -= n;
		if (round == 0) {
			size_t m = wire.n_down;
			for (size_t i = 0; i < m; i++) {
				const uint8_t *out;
				size_t out_len;
				slim_sec_client_receive(client_at(&wire.down[i].addr)->c, wire.down[i].buf,
					wire.down[i].len, &out, &out_len);
			}
			wire.n_down = 0;
		}
	}
	assert_int_equal(slim_sec_server_stats(wire.srv)->half_open, 2);
	assert_int_equal(slim_sec_server_stats(wire.srv)->half_open_full, 3);
	wire.n_down = 0;
	wire.n_up = 0;
}

/* In all: the oldest handshake makes room for a new one, and the new one completes. */
static void test_half_open_eviction(void **state)
{
	struct slim_sec_server_config cfg = {
		.mode = SLIM_SEC_DTLS, .psk_lookup = psk_lookup, .max_half_open = 2,
		.max_per_source = 8,
	};
	make_server(&cfg);
	/* two handshakes that stop after their cookie: the table is full */
	for (int i = 0; i < 2; i++) {
		struct client *cl = add_client((uint16_t)(41000 + i));
		struct slim_sec_client_config ccfg = psk_config(wire.psk);
		slim_sec_client_start(cl->c, &ccfg, slim_now_us());
		struct dgram first = wire.up[--wire.n_up];
		slim_sec_server_receive(wire.srv, first.buf, first.len, (struct sockaddr *)&first.addr,
			sizeof(first.addr), slim_now_us());
		const uint8_t *out;
		size_t out_len;
		slim_sec_client_receive(cl->c, wire.down[0].buf, wire.down[0].len, &out, &out_len);
		wire.n_down = 0;
		struct dgram second = wire.up[--wire.n_up];
		slim_sec_server_receive(wire.srv, second.buf, second.len, (struct sockaddr *)&second.addr,
			sizeof(second.addr), slim_now_us());
		wire.n_down = 0;
	}
	assert_int_equal(slim_sec_server_stats(wire.srv)->half_open, 2);
	struct client *late = add_client(42000);
	connect_psk(late, wire.psk);
	assert_int_equal(late->established, 1);
	assert_int_equal(slim_sec_server_stats(wire.srv)->half_open_full, 1);
	assert_int_equal(slim_sec_server_stats(wire.srv)->half_open, 1);
}

int main(void)
{
	test_quiet_logs();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_spoofed_flood, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flood_in_clients_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cookie_replay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admitted_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_amplification_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_half_open_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_half_open_eviction, setup, teardown),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
