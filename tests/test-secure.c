/*
 * The secure transport (protocol/slim-secure.h) with real GnuTLS on both
 * ends and the wire in memory, so that the test decides what is lost,
 * replayed, forged or spoofed, and counts every byte each address gets.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "slim-codec.h"
#include "slim-log.h"
#include "slim-secure.h"
#include "test-util.h"

#define MAX_DGRAMS 4096
#define MAX_CLIENTS 8

struct dgram {
	uint8_t buf[2048];
	size_t len;
	struct sockaddr_in addr; /* from (to the server), or to (from the server) */
};

struct client {
	struct slim_sec_client *c;
	struct sockaddr_in addr;
	struct slim_sec_conn *conn; /* the server's end, once established (pump_with) */
	int ended; /* times the server ended it */
	int established, failed, forgotten, closed;
	int data;
	uint8_t last[2048];
	size_t last_len;
};

static struct {
	struct slim_sec_server *srv;
	struct dgram up[MAX_DGRAMS], down[MAX_DGRAMS];
	size_t n_up, n_down;
	struct client clients[MAX_CLIENTS];
	size_t n_clients;
	/* the server's side */
	int established, closed, datagrams;
	struct slim_sec_conn *conn; /* the latest established */
	uint8_t last[2048];
	size_t last_len;
	/* what left the server, by destination port */
	uint64_t sent_to[65536];
	struct slim_sec_identity *server_id, *client_id;
	uint8_t psk[SLIM_SEC_KEY_LEN];
	const char *refuse_server; /* what check_server answers */
	bool admit; /* on_established admits the connection */
	uint8_t checked_fp[SLIM_SEC_FINGERPRINT_LEN];
} w;

static void client_send(void *data, const uint8_t *buf, size_t len)
{
	struct client *cl = data;
	assert_true(w.n_up < MAX_DGRAMS && len <= sizeof(w.up[0].buf));
	struct dgram *d = &w.up[w.n_up++];
	memcpy(d->buf, buf, len);
	d->len = len;
	d->addr = cl->addr;
}

static void server_send_to(void *data, const uint8_t *buf, size_t len,
		const struct sockaddr *to, socklen_t to_len)
{
	assert_int_equal(to_len, sizeof(struct sockaddr_in));
	assert_true(w.n_down < MAX_DGRAMS && len <= sizeof(w.down[0].buf));
	struct dgram *d = &w.down[w.n_down++];
	memcpy(d->buf, buf, len);
	d->len = len;
	memcpy(&d->addr, to, sizeof(d->addr));
	w.sent_to[ntohs(d->addr.sin_port)] += len;
}

static void on_established(void *data, struct slim_sec_conn *conn)
{
	w.established++;
	w.conn = conn;
	if (w.admit) {
		slim_sec_conn_admit(conn);
	}
}

static void on_datagram(void *data, struct slim_sec_conn *conn, const uint8_t *buf, size_t len)
{
	w.datagrams++;
	w.conn = conn;
	memcpy(w.last, buf, len);
	w.last_len = len;
}

static void on_closed(void *data, struct slim_sec_conn *conn, const char *why)
{
	w.closed++;
	for (size_t i = 0; i < w.n_clients; i++) {
		if (w.clients[i].conn == conn) {
			w.clients[i].conn = NULL;
			w.clients[i].ended++;
		}
	}
	if (w.conn == conn) {
		w.conn = NULL;
	}
}

static const struct slim_sec_server_handler handler = {
	.established = on_established,
	.datagram = on_datagram,
	.closed = on_closed,
};

static bool psk_lookup(void *data, const char *identity, uint8_t key[SLIM_SEC_KEY_LEN])
{
	if (strcmp(identity, "token-1") != 0 && strcmp(identity, SLIM_SEC_PAIRING_IDENTITY) != 0) {
		return false;
	}
	memcpy(key, w.psk, SLIM_SEC_KEY_LEN);
	return true;
}

static const char *check_server(void *data, const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN])
{
	memcpy(w.checked_fp, fp, SLIM_SEC_FINGERPRINT_LEN);
	return w.refuse_server;
}

static struct sockaddr_in addr_of(uint32_t ip, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	a.sin_addr.s_addr = htonl(ip);
	return a;
}

static struct client *add_client(uint16_t port)
{
	assert_true(w.n_clients < MAX_CLIENTS);
	struct client *cl = &w.clients[w.n_clients++];
	memset(cl, 0, sizeof(*cl));
	cl->addr = addr_of(0x7f000002, port);
	cl->c = slim_sec_client_create(client_send, cl);
	assert_non_null(cl->c);
	return cl;
}

static struct slim_sec_client_config psk_config(const uint8_t key[SLIM_SEC_KEY_LEN])
{
	struct slim_sec_client_config cfg = { .mode = SLIM_SEC_DTLS, .mtu = 1400 };
	snprintf(cfg.psk_identity, sizeof(cfg.psk_identity), "token-1");
	memcpy(cfg.psk, key, SLIM_SEC_KEY_LEN);
	return cfg;
}

static struct slim_sec_client_config cert_config(void)
{
	return (struct slim_sec_client_config){
		.mode = SLIM_SEC_DTLS,
		.identity = w.client_id,
		.check_server = check_server,
		.mtu = 1400,
	};
}

static void make_server(const struct slim_sec_server_config *cfg)
{
	char err[256];
	w.srv = slim_sec_server_create(cfg, &handler, NULL, server_send_to, NULL, err, sizeof(err));
	if (!w.srv) {
		fail_msg("server: %s", err);
	}
}

static void make_psk_server(void)
{
	struct slim_sec_server_config cfg = { .mode = SLIM_SEC_DTLS, .psk_lookup = psk_lookup };
	make_server(&cfg);
}

static int setup(void **state)
{
	struct slim_sec_identity *server_id = w.server_id, *client_id = w.client_id;
	memset(&w, 0, sizeof(w));
	w.server_id = server_id;
	w.client_id = client_id;
	memset(w.psk, 0x5a, sizeof(w.psk));
	return 0;
}

static int teardown(void **state)
{
	for (size_t i = 0; i < w.n_clients; i++) {
		slim_sec_client_destroy(w.clients[i].c);
	}
	slim_sec_server_destroy(w.srv);
	return 0;
}

static struct client *client_at(const struct sockaddr_in *a)
{
	for (size_t i = 0; i < w.n_clients; i++) {
		if (w.clients[i].addr.sin_port == a->sin_port &&
				w.clients[i].addr.sin_addr.s_addr == a->sin_addr.s_addr) {
			return &w.clients[i];
		}
	}
	return NULL;
}

static void client_event(struct client *cl, enum slim_sec_event ev, const uint8_t *out,
		size_t out_len)
{
	switch (ev) {
	case SLIM_SEC_ESTABLISHED:
		cl->established++;
		break;
	case SLIM_SEC_DATA:
		cl->data++;
		memcpy(cl->last, out, out_len);
		cl->last_len = out_len;
		break;
	case SLIM_SEC_FAILED:
		cl->failed++;
		break;
	case SLIM_SEC_FORGOTTEN:
		cl->forgotten++;
		break;
	case SLIM_SEC_CLOSED:
		cl->closed++;
		break;
	case SLIM_SEC_NOTHING:
		break;
	}
}

/* Delivers everything in flight, both ways, until the wire is quiet. */
static void pump(void)
{
	while (w.n_up || w.n_down) {
		size_t n = w.n_up;
		struct dgram *up = malloc(n * sizeof(*up));
		memcpy(up, w.up, n * sizeof(*up));
		w.n_up = 0;
		for (size_t i = 0; i < n; i++) {
			slim_sec_server_receive(w.srv, up[i].buf, up[i].len,
				(struct sockaddr *)&up[i].addr, sizeof(up[i].addr), slim_now_us());
		}
		free(up);
		n = w.n_down;
		struct dgram *down = malloc(n * sizeof(*down));
		memcpy(down, w.down, n * sizeof(*down));
		w.n_down = 0;
		for (size_t i = 0; i < n; i++) {
			struct client *cl = client_at(&down[i].addr);
			if (cl) {
				const uint8_t *out = NULL;
				size_t out_len = 0;
				enum slim_sec_event ev = slim_sec_client_receive(cl->c, down[i].buf,
					down[i].len, &out, &out_len);
				client_event(cl, ev, out, out_len);
			}
		}
		free(down);
	}
}

static void connect_psk(struct client *cl, const uint8_t key[SLIM_SEC_KEY_LEN])
{
	struct slim_sec_client_config cfg = psk_config(key);
	assert_true(slim_sec_client_start(cl->c, &cfg, slim_now_us()));
	pump();
}

static size_t slim_dgram(uint8_t *buf, size_t size, uint32_t seq, bool upstream)
{
	struct slim_writer wr;
	slim_writer_init(&wr, buf, size, 0x1234, upstream);
	slim_put_ping(&wr);
	return slim_writer_finish(&wr, seq, 42);
}

/* A pre-shared key handshake, a cookie first, datagrams both ways. */
static void test_psk_roundtrip(void **state)
{
	make_psk_server();
	struct client *cl = add_client(40000);
	struct slim_sec_client_config cfg = psk_config(w.psk);
	assert_true(slim_sec_client_start(cl->c, &cfg, slim_now_us()));
	assert_int_equal(w.n_up, 1);
	size_t hello_len = w.up[0].len;
	pump();
	assert_int_equal(cl->established, 1);
	assert_int_equal(w.established, 1);
	assert_string_equal(slim_sec_conn_psk_identity(w.conn), "token-1");
	assert_null(slim_sec_conn_peer_key(w.conn));
	const struct slim_sec_stats *st = slim_sec_server_stats(w.srv);
	assert_int_equal(st->cookies_sent, 1);
	/* the stateless answer is no larger than the question */
	assert_true(st->unverified_bytes <= hello_len);

	uint8_t buf[256];
	size_t len = slim_dgram(buf, sizeof(buf), 1, true);
	assert_true(slim_sec_client_send(cl->c, buf, len));
	pump();
	assert_int_equal(w.datagrams, 1);
	assert_int_equal(w.last_len, len);
	assert_memory_equal(w.last, buf, len);

	len = slim_dgram(buf, sizeof(buf), 1, false);
	assert_true(slim_sec_conn_send(w.conn, buf, len));
	assert_true(w.down[0].len <= len + SLIM_SEC_OVERHEAD);
	/* encrypted: the slim header is nowhere to be seen */
	assert_null(memmem(w.down[0].buf, w.down[0].len, buf, 8));
	pump();
	assert_int_equal(cl->data, 1);
	assert_memory_equal(cl->last, buf, len);
}

/* The pairing key, the other kind of PSK (ECDHE with it): datagrams both ways. */
static void test_pairing_roundtrip(void **state)
{
	make_psk_server();
	struct client *cl = add_client(40000);
	struct slim_sec_client_config cfg = psk_config(w.psk);
	snprintf(cfg.psk_identity, sizeof(cfg.psk_identity), "%s", SLIM_SEC_PAIRING_IDENTITY);
	assert_true(slim_sec_client_start(cl->c, &cfg, slim_now_us()));
	pump();
	assert_int_equal(cl->established, 1);
	assert_string_equal(slim_sec_conn_psk_identity(w.conn), SLIM_SEC_PAIRING_IDENTITY);
	uint8_t buf[256];
	size_t len = slim_dgram(buf, sizeof(buf), 1, false);
	assert_true(slim_sec_conn_send(w.conn, buf, len));
	pump();
	assert_int_equal(cl->data, 1);
	assert_memory_equal(cl->last, buf, len);
	/* a wrong pairing key: no connection */
	struct client *other = add_client(40001);
	memset(cfg.psk, 0x11, sizeof(cfg.psk));
	assert_true(slim_sec_client_start(other->c, &cfg, slim_now_us()));
	pump();
	assert_int_equal(other->established, 0);
	assert_int_equal(w.established, 1);
}

/* A recorded record played again, and one with a flipped bit, are not delivered. */
static void test_replay_and_forgery(void **state)
{
	make_psk_server();
	struct client *cl = add_client(40000);
	connect_psk(cl, w.psk);
	assert_int_equal(cl->established, 1);
	uint8_t buf[256];
	size_t len = slim_dgram(buf, sizeof(buf), 1, true);
	slim_sec_client_send(cl->c, buf, len);
	struct dgram captured = w.up[0];
	pump();
	assert_int_equal(w.datagrams, 1);
	/* byte for byte again, from the console's own address */
	slim_sec_server_receive(w.srv, captured.buf, captured.len,
		(struct sockaddr *)&captured.addr, sizeof(captured.addr), slim_now_us());
	assert_int_equal(w.datagrams, 1);
	/* a forgery: the same record with its sequence number moved on and a bit flipped */
	captured.buf[10] ^= 0x40;
	slim_sec_server_receive(w.srv, captured.buf, captured.len,
		(struct sockaddr *)&captured.addr, sizeof(captured.addr), slim_now_us());
	captured.buf[captured.len - 1] ^= 1;
	slim_sec_server_receive(w.srv, captured.buf, captured.len,
		(struct sockaddr *)&captured.addr, sizeof(captured.addr), slim_now_us());
	assert_int_equal(w.datagrams, 1);
	assert_true(slim_sec_server_stats(w.srv)->records_rejected >= 2);
	/* the connection still works */
	len = slim_dgram(buf, sizeof(buf), 2, true);
	slim_sec_client_send(cl->c, buf, len);
	pump();
	assert_int_equal(w.datagrams, 2);
}

/* A wrong pre-shared key: nothing established on either side, and the console says why. */
static void test_wrong_psk(void **state)
{
	make_psk_server();
	struct client *cl = add_client(40000);
	uint8_t wrong[SLIM_SEC_KEY_LEN];
	memset(wrong, 0x11, sizeof(wrong));
	connect_psk(cl, wrong);
	/* DTLS drops what does not authenticate: the handshake just never ends */
	assert_int_equal(cl->established, 0);
	assert_int_equal(w.established, 0);
	assert_int_equal(slim_sec_client_tick(cl->c, slim_now_us() + 6000000), SLIM_SEC_FAILED);
	assert_true(strlen(slim_sec_client_error(cl->c)) > 0);
	slim_sec_server_tick(w.srv, slim_now_us() + 11000000);
	/* and an identity nobody expects */
	struct client *other = add_client(40001);
	struct slim_sec_client_config cfg = psk_config(w.psk);
	snprintf(cfg.psk_identity, sizeof(cfg.psk_identity), "token-2");
	assert_true(slim_sec_client_start(other->c, &cfg, slim_now_us()));
	pump();
	assert_int_equal(other->established, 0);
	assert_int_equal(other->failed, 1);
	assert_int_equal(w.established, 0);
	assert_int_equal(slim_sec_server_stats(w.srv)->handshakes_failed, 2);
}

/* Raw public keys: each side sees the other's fingerprint; a pin that differs fails. */
static void test_certificates(void **state)
{
	struct slim_sec_server_config scfg = { .mode = SLIM_SEC_DTLS, .identity = w.server_id };
	make_server(&scfg);
	struct client *cl = add_client(40000);
	struct slim_sec_client_config cfg = cert_config();
	assert_true(slim_sec_client_start(cl->c, &cfg, slim_now_us()));
	pump();
	if (!cl->established) {
		fail_msg("client: %s; server failed %d", slim_sec_client_error(cl->c),
			(int)slim_sec_server_stats(w.srv)->handshakes_failed);
	}
	assert_int_equal(w.established, 1);
	assert_memory_equal(w.checked_fp, slim_sec_identity_fingerprint(w.server_id),
		SLIM_SEC_FINGERPRINT_LEN);
	assert_non_null(slim_sec_conn_peer_key(w.conn));
	assert_memory_equal(slim_sec_conn_peer_key(w.conn),
		slim_sec_identity_fingerprint(w.client_id), SLIM_SEC_FINGERPRINT_LEN);

	/* the console pinned another key: it refuses, and the server gets no connection */
	struct client *pinned = add_client(40001);
	w.refuse_server = "the server's key changed";
	assert_true(slim_sec_client_start(pinned->c, &cfg, slim_now_us()));
	pump();
	assert_int_equal(pinned->established, 0);
	assert_int_equal(pinned->failed, 1);
	assert_string_equal(slim_sec_client_error(pinned->c), "the server's key changed");
	assert_int_equal(w.established, 1);
}

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
	struct slim_sec_client_config ccfg = psk_config(w.psk);
	slim_sec_client_start(cl->c, &ccfg, slim_now_us());
	struct dgram hello = w.up[0];
	w.n_up = 0;
	struct test_rng rng;
	test_rng_init(&rng, 7);
	uint64_t now = slim_now_us();
	static uint64_t received[65536];
	memset(received, 0, sizeof(received));
	for (int i = 0; i < 20000; i++) {
		struct sockaddr_in from = addr_of(0x0a000000 | test_rand_below(&rng, 1 << 20),
			(uint16_t)(1024 + i % 60000));
		slim_sec_server_receive(w.srv, hello.buf, hello.len, (struct sockaddr *)&from,
			sizeof(from), now + (uint64_t)i * 20);
		received[ntohs(from.sin_port)] += hello.len;
	}
	const struct slim_sec_stats *st = slim_sec_server_stats(w.srv);
	assert_int_equal(st->half_open, 0);
	assert_int_equal(st->conns, 0);
	assert_int_equal(w.established, 0);
	assert_true(st->rate_limited > 0);
	for (size_t p = 0; p < 65536; p++) {
		assert_true(w.sent_to[p] <= received[p]);
	}
	assert_true(st->unverified_bytes <= 20000 * hello.len);
	/* the real console still gets in */
	w.n_down = 0;
	connect_psk(cl, w.psk);
	assert_int_equal(cl->established, 1);
}

/*
 * Delivers what is in flight both ways until the wire is quiet, and before
 * each step `n` copies of `flood` from the address of `cl` (`same_port`:
 * its port too, else any other port of its IP address).
 */
static void pump_with(struct client *cl, const struct dgram *flood, int n, bool same_port)
{
	int rounds = 0;
	do {
		for (int i = 0; i < n; i++) {
			struct sockaddr_in from = cl->addr;
			if (!same_port) {
				from.sin_port = htons((uint16_t)(1024 + (rounds * n + i) % 30000));
			}
			slim_sec_server_receive(w.srv, flood->buf, flood->len, (struct sockaddr *)&from,
				sizeof(from), slim_now_us());
		}
		size_t n_down = w.n_down;
		struct dgram *down = malloc(n_down * sizeof(*down) + 1);
		memcpy(down, w.down, n_down * sizeof(*down));
		w.n_down = 0;
		for (size_t i = 0; i < n_down; i++) {
			struct client *to = client_at(&down[i].addr);
			if (to) {
				const uint8_t *out = NULL;
				size_t out_len = 0;
				client_event(to, slim_sec_client_receive(to->c, down[i].buf, down[i].len,
					&out, &out_len), out, out_len);
			}
		}
		free(down);
		size_t n_up = w.n_up;
		struct dgram *up = malloc(n_up * sizeof(*up) + 1);
		memcpy(up, w.up, n_up * sizeof(*up));
		w.n_up = 0;
		for (size_t i = 0; i < n_up; i++) {
			slim_sec_server_receive(w.srv, up[i].buf, up[i].len,
				(struct sockaddr *)&up[i].addr, sizeof(up[i].addr), slim_now_us());
		}
		free(up);
	} while ((w.n_up || w.n_down) && ++rounds < 100);
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
	struct slim_sec_client_config ccfg = psk_config(w.psk);
	slim_sec_client_start(cl->c, &ccfg, slim_now_us());
	struct dgram hello = w.up[0]; /* as an attacker records it */
	w.n_up = 0;
	for (int same_port = 0; same_port < 2; same_port++) {
		int before = cl->established;
		assert_true(slim_sec_client_start(cl->c, &ccfg, slim_now_us()));
		pump_with(cl, &hello, 200, same_port);
		if (cl->established != before + 1) {
			fail_msg("%s: the client did not connect (%s); %lu ClientHellos over the rate",
				same_port ? "its port" : "its address", slim_sec_client_error(cl->c),
				(unsigned long)slim_sec_server_stats(w.srv)->rate_limited);
		}
	}
	assert_int_equal(slim_sec_server_stats(w.srv)->rate_limited, 0);
}

/* Starts the client: its ClientHello with the cookie, not yet delivered. */
static struct dgram cookie_hello(struct client *cl, const struct slim_sec_client_config *cfg)
{
	assert_true(slim_sec_client_start(cl->c, cfg, slim_now_us()));
	struct dgram first = w.up[--w.n_up];
	slim_sec_server_receive(w.srv, first.buf, first.len, (struct sockaddr *)&first.addr,
		sizeof(first.addr), slim_now_us());
	assert_int_equal(w.n_down, 1);
	const uint8_t *out;
	size_t out_len;
	slim_sec_client_receive(cl->c, w.down[0].buf, w.down[0].len, &out, &out_len);
	w.n_down = 0;
	assert_int_equal(w.n_up, 1);
	return w.up[--w.n_up];
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
	struct slim_sec_client_config ccfg = psk_config(w.psk);
	struct dgram abandoned = cookie_hello(cl, &ccfg);
	struct dgram hello = cookie_hello(cl, &ccfg);
	slim_sec_server_receive(w.srv, hello.buf, hello.len, (struct sockaddr *)&hello.addr,
		sizeof(hello.addr), slim_now_us());
	pump_with(cl, &abandoned, 20, true);
	assert_int_equal(cl->established, 1);
	assert_int_equal(w.established, 1);
	/*
	 * The connection's own ClientHello again, while the client makes a new
	 * one (once the handshake the older one started has run out).
	 */
	slim_sec_server_tick(w.srv, slim_now_us() + 11000000);
	assert_int_equal(slim_sec_server_stats(w.srv)->half_open, 0);
	uint64_t turned_away = slim_sec_server_stats(w.srv)->half_open_full;
	assert_true(slim_sec_client_start(cl->c, &ccfg, slim_now_us()));
	pump_with(cl, &hello, 20, true);
	assert_int_equal(cl->established, 2);
	assert_true(slim_sec_server_stats(w.srv)->half_open_full > turned_away);
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
	w.admit = true;
	struct client *enrolled = add_client(40000);
	connect_psk(enrolled, w.psk);
	enrolled->conn = w.conn;
	w.admit = false;
	for (int i = 0; i < 5; i++) {
		struct client *stranger = add_client((uint16_t)(41000 + i));
		connect_psk(stranger, w.psk);
		stranger->conn = w.conn;
		assert_int_equal(stranger->established, 1);
	}
	assert_int_equal(enrolled->ended, 0);
	assert_int_equal(w.closed, 3);
	assert_int_equal(slim_sec_server_stats(w.srv)->conns, 3);
	/* admitted later (an approval): the strangers make room for it, not the enrolled */
	struct client *last = &w.clients[w.n_clients - 1];
	slim_sec_conn_admit(last->conn);
	assert_int_equal(enrolled->ended, 0);
	assert_int_equal(w.closed, 3);
	/* a third admitted one: the admitted heard from least recently makes room */
	w.admit = true;
	struct client *another = add_client(42000);
	connect_psk(another, w.psk);
	assert_int_equal(enrolled->ended, 1);
	assert_int_equal(last->ended, 0);
	assert_int_equal(w.closed, 4);
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
	struct slim_sec_client_config ccfg = psk_config(w.psk);
	snprintf(ccfg.psk_identity, sizeof(ccfg.psk_identity), "%s", SLIM_SEC_PAIRING_IDENTITY);
	slim_sec_client_start(cl->c, &ccfg, slim_now_us());
	/* ClientHello -> HelloVerifyRequest -> ClientHello with the cookie, then nothing */
	struct dgram first = w.up[0];
	w.n_up = 0;
	slim_sec_server_receive(w.srv, first.buf, first.len, (struct sockaddr *)&first.addr,
		sizeof(first.addr), slim_now_us());
	assert_int_equal(w.n_down, 1);
	const uint8_t *out;
	size_t out_len;
	slim_sec_client_receive(cl->c, w.down[0].buf, w.down[0].len, &out, &out_len);
	w.n_down = 0;
	assert_int_equal(w.n_up, 1);
	struct dgram second = w.up[0];
	w.n_up = 0;
	uint64_t in = first.len + second.len;
	slim_sec_server_receive(w.srv, second.buf, second.len, (struct sockaddr *)&second.addr,
		sizeof(second.addr), slim_now_us());
	assert_int_equal(slim_sec_server_stats(w.srv)->half_open, 1);
	/* the server's retransmissions, on GnuTLS's own clock, for as long as the handshake lives */
	while (slim_sec_server_stats(w.srv)->half_open > 0) {
		int ms = slim_sec_server_timeout_ms(w.srv, slim_now_us());
		assert_true(ms >= 0);
		usleep((useconds_t)ms * 1000);
		slim_sec_server_tick(w.srv, slim_now_us());
	}
	if (w.sent_to[40000] == 0 || w.sent_to[40000] > 3 * in) {
		fail_msg("the address sent %lu bytes and got %lu", (unsigned long)in,
			(unsigned long)w.sent_to[40000]);
	}
	assert_true(slim_sec_server_stats(w.srv)->amplification > 0);
	w.n_down = 0;
}

/* A record for a connection the server does not have: a small hint, rate-limited. */
static void test_hint(void **state)
{
	make_psk_server();
	struct client *cl = add_client(40000);
	connect_psk(cl, w.psk);
	/* the server crashes (its close_notify never leaves) and a new one knows nothing */
	slim_sec_server_destroy(w.srv);
	w.n_down = 0;
	memset(w.sent_to, 0, sizeof(w.sent_to));
	make_psk_server();
	uint8_t buf[256];
	size_t len = slim_dgram(buf, sizeof(buf), 3, true);
	slim_sec_client_send(cl->c, buf, len);
	pump();
	assert_int_equal(cl->forgotten, 1);
	assert_int_equal(slim_sec_server_stats(w.srv)->hints_sent, 1);
	assert_true(w.sent_to[40000] <= len + SLIM_SEC_OVERHEAD);
	/* a burst of them: 5 hints a second at most to one address */
	for (int i = 0; i < 50; i++) {
		slim_sec_client_send(cl->c, buf, len);
	}
	pump();
	assert_true(slim_sec_server_stats(w.srv)->hints_sent <= 6);
	/* a hint is only believed once connected: a console in its handshake ignores one */
	struct client *fresh = add_client(40001);
	struct slim_sec_client_config cfg = psk_config(w.psk);
	slim_sec_client_start(fresh->c, &cfg, slim_now_us());
	w.n_up = 0;
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

/* A new handshake from the same address replaces the old connection. */
static void test_replace_and_close(void **state)
{
	make_psk_server();
	struct client *cl = add_client(40000);
	connect_psk(cl, w.psk);
	struct slim_sec_conn *first = w.conn;
	connect_psk(cl, w.psk);
	assert_int_equal(w.established, 2);
	assert_int_equal(w.closed, 1);
	assert_ptr_not_equal(w.conn, first);
	assert_int_equal(slim_sec_server_stats(w.srv)->conns, 1);
	/* the server closes it: the console hears an authenticated close */
	slim_sec_conn_close(w.conn);
	pump();
	assert_int_equal(cl->closed, 1);
	assert_int_equal(slim_sec_server_stats(w.srv)->conns, 0);
}

/* Silence ends a connection; the user is told. */
static void test_idle(void **state)
{
	struct slim_sec_server_config cfg = {
		.mode = SLIM_SEC_DTLS, .psk_lookup = psk_lookup, .idle_ms = 1000,
	};
	make_server(&cfg);
	struct client *cl = add_client(40000);
	connect_psk(cl, w.psk);
	assert_int_equal(w.established, 1);
	assert_true(slim_sec_server_timeout_ms(w.srv, slim_now_us()) <= 1000);
	slim_sec_server_tick(w.srv, slim_now_us() + 2000000);
	assert_int_equal(w.closed, 1);
	assert_int_equal(slim_sec_server_stats(w.srv)->conns, 0);
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
		struct slim_sec_client_config ccfg = psk_config(w.psk);
		slim_sec_client_start(cl->c, &ccfg, slim_now_us());
	}
	/* ClientHellos, HelloVerifyRequests, ClientHellos with cookies; the rest is withheld */
	for (int round = 0; round < 2; round++) {
		size_t n = w.n_up;
		for (size_t i = 0; i < n; i++) {
			slim_sec_server_receive(w.srv, w.up[i].buf, w.up[i].len,
				(struct sockaddr *)&w.up[i].addr, sizeof(w.up[i].addr), slim_now_us());
		}
		memmove(w.up, w.up + n, (w.n_up - n) * sizeof(w.up[0]));
		w.n_up -= n;
		if (round == 0) {
			size_t m = w.n_down;
			for (size_t i = 0; i < m; i++) {
				const uint8_t *out;
				size_t out_len;
				slim_sec_client_receive(client_at(&w.down[i].addr)->c, w.down[i].buf,
					w.down[i].len, &out, &out_len);
			}
			w.n_down = 0;
		}
	}
	assert_int_equal(slim_sec_server_stats(w.srv)->half_open, 2);
	assert_int_equal(slim_sec_server_stats(w.srv)->half_open_full, 3);
	w.n_down = 0;
	w.n_up = 0;
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
		struct slim_sec_client_config ccfg = psk_config(w.psk);
		slim_sec_client_start(cl->c, &ccfg, slim_now_us());
		struct dgram first = w.up[--w.n_up];
		slim_sec_server_receive(w.srv, first.buf, first.len, (struct sockaddr *)&first.addr,
			sizeof(first.addr), slim_now_us());
		const uint8_t *out;
		size_t out_len;
		slim_sec_client_receive(cl->c, w.down[0].buf, w.down[0].len, &out, &out_len);
		w.n_down = 0;
		struct dgram second = w.up[--w.n_up];
		slim_sec_server_receive(w.srv, second.buf, second.len, (struct sockaddr *)&second.addr,
			sizeof(second.addr), slim_now_us());
		w.n_down = 0;
	}
	assert_int_equal(slim_sec_server_stats(w.srv)->half_open, 2);
	struct client *late = add_client(42000);
	connect_psk(late, w.psk);
	assert_int_equal(late->established, 1);
	assert_int_equal(slim_sec_server_stats(w.srv)->half_open_full, 1);
	assert_int_equal(slim_sec_server_stats(w.srv)->half_open, 1);
}

/* Clear: the same interface, datagrams as they are. */
static void test_clear(void **state)
{
	struct slim_sec_server_config cfg = { .mode = SLIM_SEC_CLEAR };
	make_server(&cfg);
	struct client *cl = add_client(40000);
	struct slim_sec_client_config ccfg = { .mode = SLIM_SEC_CLEAR };
	assert_true(slim_sec_client_start(cl->c, &ccfg, slim_now_us()));
	assert_true(slim_sec_client_established(cl->c));
	uint8_t buf[256];
	size_t len = slim_dgram(buf, sizeof(buf), 1, true);
	slim_sec_client_send(cl->c, buf, len);
	assert_memory_equal(w.up[0].buf, buf, len);
	pump();
	assert_int_equal(w.datagrams, 1);
	assert_int_equal(w.established, 1);
	struct sockaddr_in lo = addr_of(0x7f000001, 1), lan = addr_of(0x0a000001, 1);
	assert_true(slim_sec_clear_allowed((struct sockaddr *)&lo));
	assert_false(slim_sec_clear_allowed((struct sockaddr *)&lan));
}

/* Key files: made 0600, read back the same, refused when others may read them. */
static void test_key_files(void **state)
{
	char dir[] = "/tmp/slim-test-keys-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256], err[256];
	snprintf(path, sizeof(path), "%s/sub/console.key", dir);
	struct slim_sec_identity *a = slim_sec_identity_load(path, false, err, sizeof(err));
	assert_null(a);
	a = slim_sec_identity_load(path, true, err, sizeof(err));
	assert_non_null(a);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	struct slim_sec_identity *b = slim_sec_identity_load(path, true, err, sizeof(err));
	assert_non_null(b);
	assert_memory_equal(slim_sec_identity_fingerprint(a), slim_sec_identity_fingerprint(b),
		SLIM_SEC_FINGERPRINT_LEN);
	char id[SLIM_CONSOLE_ID_LEN + 1], hex[65];
	slim_sec_fingerprint_id(slim_sec_identity_fingerprint(a), id);
	assert_true(slim_sec_id_valid(id));
	slim_sec_fingerprint_hex(slim_sec_identity_fingerprint(a), hex);
	uint8_t fp[SLIM_SEC_FINGERPRINT_LEN];
	char prefixed[80];
	snprintf(prefixed, sizeof(prefixed), "sha256:%s", hex);
	assert_true(slim_sec_fingerprint_parse(prefixed, fp));
	assert_memory_equal(fp, slim_sec_identity_fingerprint(a), sizeof(fp));
	assert_false(slim_sec_fingerprint_parse("sha256:1234", fp));
	chmod(path, 0644);
	assert_null(slim_sec_identity_load(path, true, err, sizeof(err)));
	assert_non_null(strstr(err, "readable by others"));
	slim_sec_identity_destroy(a);
	slim_sec_identity_destroy(b);

	uint8_t k1[SLIM_SEC_KEY_LEN], k2[SLIM_SEC_KEY_LEN];
	snprintf(path, sizeof(path), "%s/pairing.key", dir);
	assert_false(slim_sec_key_file_load(path, false, k1, err, sizeof(err)));
	assert_true(slim_sec_key_file_load(path, true, k1, err, sizeof(err)));
	assert_true(slim_sec_key_file_load(path, false, k2, err, sizeof(err)));
	assert_memory_equal(k1, k2, sizeof(k1));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_false(slim_sec_key_parse("abc", 3, k1));
	assert_false(slim_sec_identity_from_pem("junk", 4, err, sizeof(err)));
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	test_quiet_logs();
	char err[256];
	char pem_dir[] = "/tmp/slim-test-ids-XXXXXX";
	assert_non_null(mkdtemp(pem_dir));
	char path[300];
	snprintf(path, sizeof(path), "%s/server.key", pem_dir);
	w.server_id = slim_sec_identity_load(path, true, err, sizeof(err));
	snprintf(path, sizeof(path), "%s/console.key", pem_dir);
	w.client_id = slim_sec_identity_load(path, true, err, sizeof(err));
	if (!w.server_id || !w.client_id) {
		fprintf(stderr, "keys: %s\n", err);
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_psk_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pairing_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replay_and_forgery, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_psk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_certificates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spoofed_flood, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flood_in_clients_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cookie_replay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admitted_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_amplification_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_and_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_half_open_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_half_open_eviction, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clear, setup, teardown),
		cmocka_unit_test(test_key_files),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	slim_sec_identity_destroy(w.server_id);
	slim_sec_identity_destroy(w.client_id);
	snprintf(path, sizeof(path), "rm -rf %s", pem_dir);
	if (system(path) != 0) {
		failed++;
	}
	return test_report(failed);
}
