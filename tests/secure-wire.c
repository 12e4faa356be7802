#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "secure-wire.h"
#include "slim-codec.h"
#include "slim-log.h"
#include "test-util.h"

struct secure_wire wire;

static void client_send(void *data, const uint8_t *buf, size_t len)
{
	struct client *cl = data;
	assert_true(wire.n_up < MAX_DGRAMS && len <= sizeof(wire.up[0].buf));
	struct dgram *d = &wire.up[wire.n_up++];
	memcpy(d->buf, buf, len);
	d->len = len;
	d->addr = cl->addr;
}

static void server_send_to(void *data, const uint8_t *buf, size_t len,
		const struct sockaddr *to, socklen_t to_len)
{
	assert_int_equal(to_len, sizeof(struct sockaddr_in));
	assert_true(wire.n_down < MAX_DGRAMS && len <= sizeof(wire.down[0].buf));
	struct dgram *d = &wire.down[wire.n_down++];
	memcpy(d->buf, buf, len);
	d->len = len;
	memcpy(&d->addr, to, sizeof(d->addr));
	wire.sent_to[ntohs(d->addr.sin_port)] += len;
}

static void on_established(void *data, struct slim_sec_conn *conn)
{
	wire.established++;
	wire.conn = conn;
	if (wire.admit) {
		slim_sec_conn_admit(conn);
	}
}

static void on_datagram(void *data, struct slim_sec_conn *conn, const uint8_t *buf, size_t len)
{
	wire.datagrams++;
	wire.conn = conn;
	memcpy(wire.last, buf, len);
	wire.last_len = len;
}

static void on_closed(void *data, struct slim_sec_conn *conn, const char *why)
{
	wire.closed++;
	for (size_t i = 0; i < wire.n_clients; i++) {
		if (wire.clients[i].conn == conn) {
			wire.clients[i].conn = NULL;
			wire.clients[i].ended++;
		}
	}
	if (wire.conn == conn) {
		wire.conn = NULL;
	}
}

static const struct slim_sec_server_handler handler = {
	.established = on_established,
	.datagram = on_datagram,
	.closed = on_closed,
};

bool psk_lookup(void *data, const char *identity, uint8_t key[SLIM_SEC_KEY_LEN])
{
	if (strcmp(identity, "token-1") != 0 && strcmp(identity, SLIM_SEC_PAIRING_IDENTITY) != 0) {
		return false;
	}
	memcpy(key, wire.psk, SLIM_SEC_KEY_LEN);
	return true;
}

static const char *check_server(void *data, const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN])
{
	memcpy(wire.checked_fp, fp, SLIM_SEC_FINGERPRINT_LEN);
	return wire.refuse_server;
}

struct sockaddr_in addr_of(uint32_t ip, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	a.sin_addr.s_addr = htonl(ip);
	return a;
}

struct client *add_client(uint16_t port)
{
	assert_true(wire.n_clients < MAX_CLIENTS);
	struct client *cl = &wire.clients[wire.n_clients++];
	memset(cl, 0, sizeof(*cl));
	cl->addr = addr_of(0x7f000002, port);
	cl->c = slim_sec_client_create(client_send, cl);
	assert_non_null(cl->c);
	return cl;
}

struct slim_sec_client_config psk_config(const uint8_t key[SLIM_SEC_KEY_LEN])
{
	struct slim_sec_client_config cfg = { .mode = SLIM_SEC_DTLS, .mtu = 1400 };
	snprintf(cfg.psk_identity, sizeof(cfg.psk_identity), "token-1");
	memcpy(cfg.psk, key, SLIM_SEC_KEY_LEN);
	return cfg;
}

struct slim_sec_client_config cert_config(void)
{
	return (struct slim_sec_client_config){
		.mode = SLIM_SEC_DTLS,
		.identity = wire.client_id,
		.check_server = check_server,
		.mtu = 1400,
	};
}

void make_server(const struct slim_sec_server_config *cfg)
{
	char err[256];
	wire.srv = slim_sec_server_create(cfg, &handler, NULL, server_send_to, NULL, err, sizeof(err));
	if (!wire.srv) {
		fail_msg("server: %s", err);
	}
}

void make_psk_server(void)
{
	struct slim_sec_server_config cfg = { .mode = SLIM_SEC_DTLS, .psk_lookup = psk_lookup };
	make_server(&cfg);
}

int setup(void **state)
{
	struct slim_sec_identity *server_id = wire.server_id, *client_id = wire.client_id;
	memset(&wire, 0, sizeof(wire));
	wire.server_id = server_id;
	wire.client_id = client_id;
	memset(wire.psk, 0x5a, sizeof(wire.psk));
	return 0;
}

int teardown(void **state)
{
	for (size_t i = 0; i < wire.n_clients; i++) {
		slim_sec_client_destroy(wire.clients[i].c);
	}
	slim_sec_server_destroy(wire.srv);
	return 0;
}

struct client *client_at(const struct sockaddr_in *a)
{
	for (size_t i = 0; i < wire.n_clients; i++) {
		if (wire.clients[i].addr.sin_port == a->sin_port &&
				wire.clients[i].addr.sin_addr.s_addr == a->sin_addr.s_addr) {
			return &wire.clients[i];
		}
	}
	return NULL;
}

void client_event(struct client *cl, enum slim_sec_event ev, const uint8_t *out,
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

void pump(void)
{
	while (wire.n_up || wire.n_down) {
		size_t n = wire.n_up;
		struct dgram *up = malloc(n * sizeof(*up));
		memcpy(up, wire.up, n * sizeof(*up));
		wire.n_up = 0;
		for (size_t i = 0; i < n; i++) {
			slim_sec_server_receive(wire.srv, up[i].buf, up[i].len,
				(struct sockaddr *)&up[i].addr, sizeof(up[i].addr), slim_now_us());
		}
		free(up);
		n = wire.n_down;
		struct dgram *down = malloc(n * sizeof(*down));
		memcpy(down, wire.down, n * sizeof(*down));
		wire.n_down = 0;
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

void connect_psk(struct client *cl, const uint8_t key[SLIM_SEC_KEY_LEN])
{
	struct slim_sec_client_config cfg = psk_config(key);
	assert_true(slim_sec_client_start(cl->c, &cfg, slim_now_us()));
	pump();
}

size_t slim_dgram(uint8_t *buf, size_t size, uint32_t seq, bool upstream)
{
	struct slim_writer wr;
	slim_writer_init(&wr, buf, size, 0x1234, upstream);
	slim_put_ping(&wr);
	return slim_writer_finish(&wr, seq, 42);
}

void pump_with(struct client *cl, const struct dgram *flood, int n, bool same_port)
{
	int rounds = 0;
	do {
		for (int i = 0; i < n; i++) {
			struct sockaddr_in from = cl->addr;
			if (!same_port) {
				from.sin_port = htons((uint16_t)(1024 + (rounds * n + i) % 30000));
			}
			slim_sec_server_receive(wire.srv, flood->buf, flood->len, (struct sockaddr *)&from,
				sizeof(from), slim_now_us());
		}
		size_t n_down = wire.n_down;
		struct dgram *down = malloc(n_down * sizeof(*down) + 1);
		memcpy(down, wire.down, n_down * sizeof(*down));
		wire.n_down = 0;
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
		size_t n_up = wire.n_up;
		struct dgram *up = malloc(n_up * sizeof(*up) + 1);
		memcpy(up, wire.up, n_up * sizeof(*up));
		wire.n_up = 0;
		for (size_t i = 0; i < n_up; i++) {
			slim_sec_server_receive(wire.srv, up[i].buf, up[i].len,
				(struct sockaddr *)&up[i].addr, sizeof(up[i].addr), slim_now_us());
		}
		free(up);
	} while ((wire.n_up || wire.n_down) && ++rounds < 100);
}
