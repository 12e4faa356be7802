/*
 * libFuzzer target: the secure transport (protocol/slim-secure.h) as a
 * hostile network sees it. Each input gets fresh servers (pre-shared keys,
 * and certificates) and clients, and is a script of steps:
 *
 *   u8 op, u8 arg, u16 len (little-endian), len bytes
 *
 *   op 0  the bytes as a datagram to a server (arg bit 0: which) from one
 *         of four addresses (arg bits 1-2)
 *   op 1  the bytes as a datagram to a client (arg bit 0: which)
 *   op 2  a client (arg bit 0) starts a real handshake
 *   op 3  the real datagrams in flight are delivered, each after a mutation
 *         the bytes choose: kept, dropped, sent twice, a bit flipped, cut
 *   op 4  time passes (arg x 100 ms): retransmissions, deadlines, idleness
 *   op 5  the bytes as a datagram sent through a connection (arg bit 0:
 *         by a client, else by the server to its latest connection)
 *
 * What must hold whatever the input: every datagram a server or a client
 * delivers is one that the other side really sent (nothing forged or
 * altered gets through), and a server answers a datagram from an address
 * with no valid cookie with no more bytes than it carried.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz-common.h"
#include "slim-secure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FLIGHT 64
#define MAX_SENT 64
#define DGRAM_MAX 2048

struct flight {
	uint8_t buf[DGRAM_MAX];
	size_t len;
	int to_server;           /* which server, or -1: to a client */
	int client;              /* the client it comes from or goes to */
};

struct sent {
	uint8_t buf[DGRAM_MAX];
	size_t len;
};

static struct {
	struct slim_sec_identity *server_id, *client_id;
	uint8_t psk[SLIM_SEC_KEY_LEN];
	struct slim_sec_server *servers[2];
	struct slim_sec_client *clients[2];
	struct slim_sec_conn *latest[2];
	struct flight flight[MAX_FLIGHT];
	size_t n_flight;
	/* what each side really sent, in this input */
	struct sent by_clients[MAX_SENT], by_servers[MAX_SENT];
	size_t n_by_clients, n_by_servers;
	uint64_t now_us;
} f;

static const struct sockaddr_in client_addr[2] = {
	{ .sin_family = AF_INET, .sin_port = 0x1111, .sin_addr = { 0x0200007f } },
	{ .sin_family = AF_INET, .sin_port = 0x2222, .sin_addr = { 0x0300007f } },
};

static void remember(struct sent *list, size_t *n, const uint8_t *buf, size_t len)
{
	if (*n < MAX_SENT && len <= DGRAM_MAX) {
		memcpy(list[*n].buf, buf, len);
		list[*n].len = len;
		(*n)++;
	}
}

/* Whether `buf` is one of the datagrams in `list` (or the list overflowed). */
static bool was_sent(const struct sent *list, size_t n, const uint8_t *buf, size_t len)
{
	if (n == MAX_SENT) {
		return true;
	}
	for (size_t i = 0; i < n; i++) {
		if (list[i].len == len && memcmp(list[i].buf, buf, len) == 0) {
			return true;
		}
	}
	return false;
}

static void queue(int to_server, int client, const uint8_t *buf, size_t len)
{
	if (f.n_flight < MAX_FLIGHT && len <= DGRAM_MAX) {
		struct flight *fl = &f.flight[f.n_flight++];
		memcpy(fl->buf, buf, len);
		fl->len = len;
		fl->to_server = to_server;
		fl->client = client;
	}
}

static void client_send(void *data, const uint8_t *buf, size_t len)
{
	int i = (int)(intptr_t)data;
	queue(i, i, buf, len);
}

static void server_send_to(void *data, const uint8_t *buf, size_t len,
		const struct sockaddr *to, socklen_t to_len)
{
	const struct sockaddr_in *in = (const void *)to;
	for (int i = 0; i < 2; i++) {
		if (in->sin_port == client_addr[i].sin_port &&
				in->sin_addr.s_addr == client_addr[i].sin_addr.s_addr) {
			queue(-1, i, buf, len);
		}
	}
}

static void on_established(void *data, struct slim_sec_conn *conn)
{
	f.latest[(intptr_t)data] = conn;
}

static void on_datagram(void *data, struct slim_sec_conn *conn, const uint8_t *buf, size_t len)
{
	if (!was_sent(f.by_clients, f.n_by_clients, buf, len)) {
		abort(); /* a datagram no client sent was delivered */
	}
}

static void on_closed(void *data, struct slim_sec_conn *conn, const char *why)
{
	if (f.latest[(intptr_t)data] == conn) {
		f.latest[(intptr_t)data] = NULL;
	}
}

static const struct slim_sec_server_handler handler = {
	.established = on_established,
	.datagram = on_datagram,
	.closed = on_closed,
};

static bool psk_lookup(void *data, const char *identity, uint8_t key[SLIM_SEC_KEY_LEN])
{
	memcpy(key, f.psk, SLIM_SEC_KEY_LEN);
	return strcmp(identity, "fuzz") == 0;
}

static const char *check_server(void *data, const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN])
{
	return memcmp(fp, slim_sec_identity_fingerprint(f.server_id), SLIM_SEC_FINGERPRINT_LEN) ?
		"not the pinned key" : NULL;
}

static void init_once(void)
{
	slim_log_init(SLIM_LOG_DEBUG, fuzz_quiet_log);
	char dir[] = "/tmp/fuzz-secure-XXXXXX", path[64], err[256];
	if (!mkdtemp(dir)) {
		abort();
	}
	snprintf(path, sizeof(path), "%s/server.key", dir);
	f.server_id = slim_sec_identity_load(path, true, err, sizeof(err));
	unlink(path);
	snprintf(path, sizeof(path), "%s/console.key", dir);
	f.client_id = slim_sec_identity_load(path, true, err, sizeof(err));
	unlink(path);
	rmdir(dir);
	if (!f.server_id || !f.client_id) {
		abort();
	}
	memset(f.psk, 0x42, sizeof(f.psk));
}

static struct slim_sec_client_config client_config(int i)
{
	struct slim_sec_client_config cfg = { .mode = SLIM_SEC_DTLS, .mtu = 1400 };
	if (i == 0) {
		snprintf(cfg.psk_identity, sizeof(cfg.psk_identity), "fuzz");
		memcpy(cfg.psk, f.psk, sizeof(cfg.psk));
	} else {
		cfg.identity = f.client_id;
		cfg.check_server = check_server;
	}
	return cfg;
}

/* One datagram to a server; what it sends to nobody it knows is bounded. */
static void to_server(int which, const uint8_t *buf, size_t len, const struct sockaddr_in *from)
{
	const struct slim_sec_stats *st = slim_sec_server_stats(f.servers[which]);
	uint64_t before = st->unverified_bytes;
	slim_sec_server_receive(f.servers[which], buf, len, (const struct sockaddr *)from,
		sizeof(*from), f.now_us);
	if (st->unverified_bytes - before > len) {
		abort(); /* an answer larger than the question, to an unproven address */
	}
}

static void to_client(int which, const uint8_t *buf, size_t len)
{
	const uint8_t *out;
	size_t out_len;
	if (slim_sec_client_receive(f.clients[which], buf, len, &out, &out_len) == SLIM_SEC_DATA &&
			!was_sent(f.by_servers, f.n_by_servers, out, out_len)) {
		abort(); /* a datagram the server never sent was delivered */
	}
}

/* Delivers what is in flight, each datagram after a mutation `bytes` choose. */
static void pump(const uint8_t *bytes, size_t n)
{
	size_t pos = 0;
	for (int round = 0; round < 8 && f.n_flight > 0; round++) {
		struct flight *batch = malloc(f.n_flight * sizeof(*batch));
		size_t count = f.n_flight;
		memcpy(batch, f.flight, count * sizeof(*batch));
		f.n_flight = 0;
		for (size_t i = 0; i < count; i++) {
			struct flight *fl = &batch[i];
			uint8_t m = pos < n ? bytes[pos++] : 7;
			int copies = 1;
			switch (m & 7) {
			case 0:
				copies = 0;
				break;
			case 1:
				copies = 2;
				break;
			case 2:
				if (fl->len > 0 && pos < n) {
					size_t at = bytes[pos++] % fl->len;
					fl->buf[at] ^= (uint8_t)(1 << (m >> 5));
				}
				break;
			case 3:
				if (pos < n) {
					fl->len = fl->len * bytes[pos++] / 256;
				}
				break;
			default:
				break;
			}
			for (int c = 0; c < copies; c++) {
				if (fl->to_server >= 0) {
					to_server(fl->to_server, fl->buf, fl->len, &client_addr[fl->client]);
				} else {
					to_client(fl->client, fl->buf, fl->len);
				}
			}
		}
		free(batch);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!f.server_id) {
		init_once();
	}
	char err[256];
	struct slim_sec_server_config psk_cfg = {
		.mode = SLIM_SEC_DTLS, .psk_lookup = psk_lookup, .max_half_open = 4,
		.max_per_source = 2, .hello_rate = 100,
	};
	struct slim_sec_server_config cert_cfg = {
		.mode = SLIM_SEC_DTLS, .identity = f.server_id, .max_half_open = 4,
		.max_per_source = 2, .hello_rate = 100,
	};
	f.servers[0] = slim_sec_server_create(&psk_cfg, &handler, (void *)0, server_send_to, NULL,
		err, sizeof(err));
	f.servers[1] = slim_sec_server_create(&cert_cfg, &handler, (void *)1, server_send_to, NULL,
		err, sizeof(err));
	f.clients[0] = slim_sec_client_create(client_send, (void *)0);
	f.clients[1] = slim_sec_client_create(client_send, (void *)1);
	if (!f.servers[0] || !f.servers[1] || !f.clients[0] || !f.clients[1]) {
		abort();
	}
	f.latest[0] = f.latest[1] = NULL;
	f.n_flight = f.n_by_clients = f.n_by_servers = 0;
	f.now_us = 1000000;

	size_t pos = 0;
	while (pos + 4 <= size) {
		uint8_t op = data[pos], arg = data[pos + 1];
		size_t len = data[pos + 2] | (size_t)data[pos + 3] << 8;
		pos += 4;
		if (len > size - pos) {
			len = size - pos;
		}
		/* a copy of exactly len bytes, so that ASan sees overruns */
		uint8_t *bytes = malloc(len ? len : 1);
		memcpy(bytes, data + pos, len);
		pos += len;
		int which = arg & 1;
		switch (op % 6) {
		case 0: {
			struct sockaddr_in from = client_addr[(arg >> 1) & 1];
			from.sin_port = (in_port_t)(from.sin_port + ((arg >> 2) & 1));
			to_server(which, bytes, len, &from);
			break;
		}
		case 1:
			to_client(which, bytes, len);
			break;
		case 2: {
			struct slim_sec_client_config cfg = client_config(which);
			slim_sec_client_start(f.clients[which], &cfg, f.now_us);
			break;
		}
		case 3:
			pump(bytes, len);
			break;
		case 4:
			f.now_us += arg * 100000ull;
			slim_sec_server_tick(f.servers[0], f.now_us);
			slim_sec_server_tick(f.servers[1], f.now_us);
			slim_sec_client_tick(f.clients[0], f.now_us);
			slim_sec_client_tick(f.clients[1], f.now_us);
			break;
		case 5:
			if (len > SLIM_SEC_MAX_RECORD) {
				break;
			}
			if (arg & 2) {
				remember(f.by_clients, &f.n_by_clients, bytes, len);
				slim_sec_client_send(f.clients[which], bytes, len);
			} else if (f.latest[which]) {
				remember(f.by_servers, &f.n_by_servers, bytes, len);
				slim_sec_conn_send(f.latest[which], bytes, len);
			}
			break;
		}
		free(bytes);
	}
	for (int i = 0; i < 2; i++) {
		slim_sec_client_destroy(f.clients[i]);
		slim_sec_server_destroy(f.servers[i]);
	}
	return 0;
}
