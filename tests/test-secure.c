/*
 * The secure transport (protocol/slim-secure.h) end to end on the wire in
 * memory (secure-wire.h): handshakes with pre-shared keys, pairing keys
 * and certificates, replays and forgeries, a connection replaced, silent
 * or closed, the clear transport, key files. What an unauthenticated
 * sender may cost the server: test-secure-admission.c.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "secure-wire.h"
#include "slim-log.h"
#include "test-util.h"

/* A pre-shared key handshake, a cookie first, datagrams both ways. */
static void test_psk_roundtrip(void **state)
{
	make_psk_server();
	struct client *cl = add_client(40000);
	struct slim_sec_client_config cfg = psk_config(wire.psk);
	assert_true(slim_sec_client_start(cl->c, &cfg, slim_now_us()));
	assert_int_equal(wire.n_up, 1);
	size_t hello_len = wire.up[0].len;
	pump();
	assert_int_equal(cl->established, 1);
	assert_int_equal(wire.established, 1);
	assert_string_equal(slim_sec_conn_psk_identity(wire.conn), "token-1");
	assert_null(slim_sec_conn_peer_key(wire.conn));
	const struct slim_sec_stats *st = slim_sec_server_stats(wire.srv);
	assert_int_equal(st->cookies_sent, 1);
	/* the stateless answer is no larger than the question */
	assert_true(st->unverified_bytes <= hello_len);

	uint8_t buf[256];
	size_t len = slim_dgram(buf, sizeof(buf), 1, true);
	assert_true(slim_sec_client_send(cl->c, buf, len));
	pump();
	assert_int_equal(wire.datagrams, 1);
	assert_int_equal(wire.last_len, len);
	assert_memory_equal(wire.last, buf, len);

	len = slim_dgram(buf, sizeof(buf), 1, false);
	assert_true(slim_sec_conn_send(wire.conn, buf, len));
	assert_true(wire.down[0].len <= len + SLIM_SEC_OVERHEAD);
	/* encrypted: the slim header is nowhere to be seen */
	assert_null(memmem(wire.down[0].buf, wire.down[0].len, buf, 8));
	pump();
	assert_int_equal(cl->data, 1);
	assert_memory_equal(cl->last, buf, len);
}

/* The pairing key, the other kind of PSK (ECDHE with it): datagrams both ways. */
static void test_pairing_roundtrip(void **state)
{
	make_psk_server();
	struct client *cl = add_client(40000);
	struct slim_sec_client_config cfg = psk_config(wire.psk);
	snprintf(cfg.psk_identity, sizeof(cfg.psk_identity), "%s", SLIM_SEC_PAIRING_IDENTITY);
	assert_true(slim_sec_client_start(cl->c, &cfg, slim_now_us()));
	pump();
	assert_int_equal(cl->established, 1);
	assert_string_equal(slim_sec_conn_psk_identity(wire.conn), SLIM_SEC_PAIRING_IDENTITY);
	uint8_t buf[256];
	size_t len = slim_dgram(buf, sizeof(buf), 1, false);
	assert_true(slim_sec_conn_send(wire.conn, buf, len));
	pump();
	assert_int_equal(cl->data, 1);
	assert_memory_equal(cl->last, buf, len);
	/* a wrong pairing key: no connection */
	struct client *other = add_client(40001);
	memset(cfg.psk, 0x11, sizeof(cfg.psk));
	assert_true(slim_sec_client_start(other->c, &cfg, slim_now_us()));
	pump();
	assert_int_equal(other->established, 0);
	assert_int_equal(wire.established, 1);
}

/* A recorded record played again, and one with a flipped bit, are not delivered. */
static void test_replay_and_forgery(void **state)
{
	make_psk_server();
	struct client *cl = add_client(40000);
	connect_psk(cl, wire.psk);
	assert_int_equal(cl->established, 1);
	uint8_t buf[256];
	size_t len = slim_dgram(buf, sizeof(buf), 1, true);
	slim_sec_client_send(cl->c, buf, len);
	struct dgram captured = wire.up[0];
	pump();
	assert_int_equal(wire.datagrams, 1);
	/* byte for byte again, from the console's own address */
	slim_sec_server_receive(wire.srv, captured.buf, captured.len,
		(struct sockaddr *)&captured.addr, sizeof(captured.addr), slim_now_us());
	assert_int_equal(wire.datagrams, 1);
	/* a forgery: the same record with its sequence number moved on and a bit flipped */
	captured.buf[10] ^= 0x40;
	slim_sec_server_receive(wire.srv, captured.buf, captured.len,
		(struct sockaddr *)&captured.addr, sizeof(captured.addr), slim_now_us());
	captured.buf[captured.len - 1] ^= 1;
	slim_sec_server_receive(wire.srv, captured.buf, captured.len,
		(struct sockaddr *)&captured.addr, sizeof(captured.addr), slim_now_us());
	assert_int_equal(wire.datagrams, 1);
	assert_true(slim_sec_server_stats(wire.srv)->records_rejected >= 2);
	/* the connection still works */
	len = slim_dgram(buf, sizeof(buf), 2, true);
	slim_sec_client_send(cl->c, buf, len);
	pump();
	assert_int_equal(wire.datagrams, 2);
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
	assert_int_equal(wire.established, 0);
	assert_int_equal(slim_sec_client_tick(cl->c, slim_now_us() + 6000000), SLIM_SEC_FAILED);
	assert_true(strlen(slim_sec_client_error(cl->c)) > 0);
	slim_sec_server_tick(wire.srv, slim_now_us() + 11000000);
	/* and an identity nobody expects */
	struct client *other = add_client(40001);
	struct slim_sec_client_config cfg = psk_config(wire.psk);
	snprintf(cfg.psk_identity, sizeof(cfg.psk_identity), "token-2");
	assert_true(slim_sec_client_start(other->c, &cfg, slim_now_us()));
	pump();
	assert_int_equal(other->established, 0);
	assert_int_equal(other->failed, 1);
	assert_int_equal(wire.established, 0);
	assert_int_equal(slim_sec_server_stats(wire.srv)->handshakes_failed, 2);
}

/* Raw public keys: each side sees the other's fingerprint; a pin that differs fails. */
static void test_certificates(void **state)
{
	struct slim_sec_server_config scfg = { .mode = SLIM_SEC_DTLS, .identity = wire.server_id };
	make_server(&scfg);
	struct client *cl = add_client(40000);
	struct slim_sec_client_config cfg = cert_config();
	assert_true(slim_sec_client_start(cl->c, &cfg, slim_now_us()));
	pump();
	if (!cl->established) {
		fail_msg("client: %s; server failed %d", slim_sec_client_error(cl->c),
			(int)slim_sec_server_stats(wire.srv)->handshakes_failed);
	}
	assert_int_equal(wire.established, 1);
	assert_memory_equal(wire.checked_fp, slim_sec_identity_fingerprint(wire.server_id),
		SLIM_SEC_FINGERPRINT_LEN);
	assert_non_null(slim_sec_conn_peer_key(wire.conn));
	assert_memory_equal(slim_sec_conn_peer_key(wire.conn),
		slim_sec_identity_fingerprint(wire.client_id), SLIM_SEC_FINGERPRINT_LEN);

	/* the console pinned another key: it refuses, and the server gets no connection */
	struct client *pinned = add_client(40001);
	wire.refuse_server = "the server's key changed";
	assert_true(slim_sec_client_start(pinned->c, &cfg, slim_now_us()));
	pump();
	assert_int_equal(pinned->established, 0);
	assert_int_equal(pinned->failed, 1);
	assert_string_equal(slim_sec_client_error(pinned->c), "the server's key changed");
	assert_int_equal(wire.established, 1);
}

/* A new handshake from the same address replaces the old connection. */
static void test_replace_and_close(void **state)
{
	make_psk_server();
	struct client *cl = add_client(40000);
	connect_psk(cl, wire.psk);
	struct slim_sec_conn *first = wire.conn;
	connect_psk(cl, wire.psk);
	assert_int_equal(wire.established, 2);
	assert_int_equal(wire.closed, 1);
	assert_ptr_not_equal(wire.conn, first);
	assert_int_equal(slim_sec_server_stats(wire.srv)->conns, 1);
	/* the server closes it: the console hears an authenticated close */
	slim_sec_conn_close(wire.conn);
	pump();
	assert_int_equal(cl->closed, 1);
	assert_int_equal(slim_sec_server_stats(wire.srv)->conns, 0);
}

/* Silence ends a connection; the user is told. */
static void test_idle(void **state)
{
	struct slim_sec_server_config cfg = {
		.mode = SLIM_SEC_DTLS, .psk_lookup = psk_lookup, .idle_ms = 1000,
	};
	make_server(&cfg);
	struct client *cl = add_client(40000);
	connect_psk(cl, wire.psk);
	assert_int_equal(wire.established, 1);
	assert_true(slim_sec_server_timeout_ms(wire.srv, slim_now_us()) <= 1000);
	slim_sec_server_tick(wire.srv, slim_now_us() + 2000000);
	assert_int_equal(wire.closed, 1);
	assert_int_equal(slim_sec_server_stats(wire.srv)->conns, 0);
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
	assert_memory_equal(wire.up[0].buf, buf, len);
	pump();
	assert_int_equal(wire.datagrams, 1);
	assert_int_equal(wire.established, 1);
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
	wire.server_id = slim_sec_identity_load(path, true, err, sizeof(err));
	snprintf(path, sizeof(path), "%s/console.key", pem_dir);
	wire.client_id = slim_sec_identity_load(path, true, err, sizeof(err));
	if (!wire.server_id || !wire.client_id) {
		fprintf(stderr, "keys: %s\n", err);
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_psk_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pairing_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replay_and_forgery, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_psk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_certificates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_and_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clear, setup, teardown),
		cmocka_unit_test(test_key_files),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	slim_sec_identity_destroy(wire.server_id);
	slim_sec_identity_destroy(wire.client_id);
	snprintf(path, sizeof(path), "rm -rf %s", pem_dir);
	if (system(path) != 0) {
		failed++;
	}
	return test_report(failed);
}
