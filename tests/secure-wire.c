#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "secure-wire.h"
#include "slim-codec.h"
#include "slim-log.h"
#include "test-util.h"

struct secure_wire w;

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

bool psk_lookup(void *data, const char *identity, uint8_t key[SLIM_SEC_KEY_LEN])
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

struct sockaddr_in addr_of(uint32_t ip, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	a.sin_addr.s_addr = htonl(ip);
	return a;
}

struct client *add_client(uint16_t port)
{
	assert_true(w.n_clients < MAX_CLIENTS);
	struct client *cl = &w.clients[w.n_clients++];
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
		.identity = w.client_id,
		.check_server = check_server,
		.mtu = 1400,
	};
}

void make_server(const struct slim_sec_server_config *cfg)
{
	char err[256];
	w.srv = slim_sec_server_create(cfg, &handler, NULL, server_send_to, NULL, err, sizeof(err));
	if (!w.srv) {
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
	struct slim_sec_identity *server_id = w.server_id, *client_id = w.client_id;
	memset(&w, 0, sizeof(w));
	w.server_id = server_id;
	w.client_id = client_id;
	memset(w.psk, 0x5a, sizeof(w.psk));
	return 0;
}

int teardown(void **state)
{
	for (size_t i = 0; i < w.n_clients; i++) {
		slim_sec_client_destroy(w.clients[i].c);
	}
	slim_sec_server_destroy(w.srv);
	return 0;
}

struct client *client_at(const struct sockaddr_in *a)
{
	for (size_t i = 0; i < w.n_clients; i++) {
		if (w.clients[i].addr.sin_port == a->sin_port &&
				w.clients[i].addr.sin_addr.s_addr == a->sin_addr.s_addr) {
			return &w.clients[i];
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
