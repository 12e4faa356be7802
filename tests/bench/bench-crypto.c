/*
 * What the secure transport (protocol/slim-secure.h) costs, through our own
 * layer with the wire in memory, so that no socket or scheduler is in the
 * numbers:
 *
 *   - records: sealing (slim_sec_conn_send) and opening
 *     (slim_sec_client_receive) one datagram, per datagram and per byte, for
 *     the three suites (a display association's per-attach key: PSK,
 *     AES-128-GCM; a standalone session's pairing key: ECDHE-PSK,
 *     ChaCha20-Poly1305; the control association's raw public keys: ECDHE,
 *     AES-128-GCM) against the clear transport through the same calls;
 *   - handshakes: the CPU of a whole handshake, cookie exchange included,
 *     both ends and the server's part;
 *   - what an attacker's datagrams cost the server: a spoofed ClientHello
 *     answered with a cookie, one over the rate, a record of no connection;
 *   - the share of encryption in the pixel path: the encoder's output for a
 *     fully changed 1920x1080 frame of text, UI and photo content
 *     (tests/content.c) sealed with a per-attach key, against the encoder's
 *     time for it, and opened, against the console's time to apply it.
 *
 * One core, CLOCK_MONOTONIC, the median of several batches after a warm-up.
 *
 *   bench-crypto [--json] [--quick]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "console-core.h"
#include "content.h"
#include "encoder.h"
#include "bench-options.h"
#include "slim-log.h"
#include "slim-secure.h"

#define SCREEN_W 1920
#define SCREEN_H 1080
#define BENCH_ASSOC 0x5eed
#define MAX_BATCHES 15
#define BATCH 1000
#define MAX_FRAME_DGRAMS 8192

enum kind { KIND_CLEAR, KIND_ATTACH, KIND_PAIRING, KIND_CERT, KINDS };

static const char *const kind_keys[KINDS] = { "clear", "attach", "pairing", "cert" };
static const char *const kind_names[KINDS] = {
	"clear", "attach: PSK, AES-GCM", "pairing: ECDHE-PSK, ChaCha", "keys: ECDHE, AES-GCM",
};

/* Datagram sizes: a keystroke's, a small repaint's, a full datagram's. */
static const size_t sizes[] = { 64, 512, SLIM_DEFAULT_MTU - SLIM_SEC_OVERHEAD };
#define SIZES (sizeof(sizes) / sizeof(sizes[0]))

struct record_cost {
	double seal_ns, open_ns, up_ns; /* per datagram; up: console to server, both ends */
};

/* A whole frame: the server's encoding and sealing, the console's opening and applying. */
struct frame_cost {
	double encode_us, seal_us, open_us, apply_us, bytes, dgrams;
};

struct results {
	int batches;
	struct record_cost rec[KINDS][SIZES];
	double handshake_us[KINDS], handshake_server_us[KINDS];
	double spoof_cookie_ns, spoof_rate_limited_ns, spoof_record_ns;
	struct frame_cost frame[CONTENT_KINDS];
};

/*
 * The wire: the last datagrams each side sent, kept in one flat buffer so
 * that a batch of records can be opened after it was sealed.
 */
struct wire {
	uint8_t *buf;
	size_t used, size;
	size_t off[MAX_FRAME_DGRAMS], len[MAX_FRAME_DGRAMS];
	size_t n;
};

static struct {
	struct slim_sec_identity *server_id, *client_id;
	uint8_t psk[SLIM_SEC_KEY_LEN];
	struct wire up, down;
	struct slim_sec_conn *conn;
	uint64_t server_ns; /* time spent inside slim_sec_server_receive */
} w;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static void die(const char *what)
{
	fprintf(stderr, "bench-crypto: %s\n", what);
	exit(1);
}

static void wire_put(struct wire *wi, const uint8_t *buf, size_t len)
{
	if (wi->n == MAX_FRAME_DGRAMS || wi->used + len > wi->size) {
		die("the wire is full");
	}
	memcpy(wi->buf + wi->used, buf, len);
	wi->off[wi->n] = wi->used;
	wi->len[wi->n++] = len;
	wi->used += len;
}

static void wire_clear(struct wire *wi)
{
	wi->n = wi->used = 0;
}

static void client_send(void *data, const uint8_t *buf, size_t len)
{
	wire_put(&w.up, buf, len);
}

static void server_send_to(void *data, const uint8_t *buf, size_t len,
		const struct sockaddr *to, socklen_t to_len)
{
	wire_put(&w.down, buf, len);
}

static void on_established(void *data, struct slim_sec_conn *conn)
{
	w.conn = conn;
}

static void on_datagram(void *data, struct slim_sec_conn *conn, const uint8_t *buf, size_t len)
{
}

static void on_closed(void *data, struct slim_sec_conn *conn, const char *why)
{
	if (w.conn == conn) {
		w.conn = NULL;
	}
}

static const struct slim_sec_server_handler handler = {
	.established = on_established, .datagram = on_datagram, .closed = on_closed,
};

static bool psk_lookup(void *data, const char *identity, uint8_t key[SLIM_SEC_KEY_LEN])
{
	memcpy(key, w.psk, SLIM_SEC_KEY_LEN);
	return true;
}

static const char *trust_any(void *data, const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN])
{
	return NULL;
}

static struct sockaddr_in addr_of(uint32_t ip, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	a.sin_addr.s_addr = htonl(ip);
	return a;
}

static struct slim_sec_server *server_create(enum kind kind, unsigned hello_rate)
{
	struct slim_sec_server_config cfg = {
		.mode = kind == KIND_CLEAR ? SLIM_SEC_CLEAR : SLIM_SEC_DTLS,
		.identity = kind == KIND_CERT ? w.server_id : NULL,
		.psk_lookup = kind == KIND_ATTACH || kind == KIND_PAIRING ? psk_lookup : NULL,
		.hello_rate = hello_rate,
	};
	char err[256];
	struct slim_sec_server *srv = slim_sec_server_create(&cfg, &handler, NULL, server_send_to,
		NULL, err, sizeof(err));
	if (!srv) {
		die(err);
	}
	return srv;
}

static struct slim_sec_client_config client_config(enum kind kind)
{
	struct slim_sec_client_config cfg = {
		.mode = kind == KIND_CLEAR ? SLIM_SEC_CLEAR : SLIM_SEC_DTLS,
		.mtu = SLIM_DEFAULT_MTU,
	};
	if (kind == KIND_CERT) {
		cfg.identity = w.client_id;
		cfg.check_server = trust_any;
	} else if (kind != KIND_CLEAR) {
		/* the identity says which kind of key it is */
		snprintf(cfg.psk_identity, sizeof(cfg.psk_identity), "%s",
			kind == KIND_PAIRING ? SLIM_SEC_PAIRING_IDENTITY : "bench");
		memcpy(cfg.psk, w.psk, sizeof(cfg.psk));
	}
	return cfg;
}

/* Delivers everything in flight both ways until the wire is quiet; the server's time noted. */
static void pump(struct slim_sec_server *srv, struct slim_sec_client *c,
		const struct sockaddr_in *from)
{
	static uint8_t copy[SLIM_MAX_MTU];
	while (w.up.n || w.down.n) {
		for (size_t i = 0; i < w.up.n; i++) {
			memcpy(copy, w.up.buf + w.up.off[i], w.up.len[i]);
			uint64_t t0 = now_ns();
			slim_sec_server_receive(srv, copy, w.up.len[i], (const struct sockaddr *)from,
				sizeof(*from), slim_now_us());
			w.server_ns += now_ns() - t0;
		}
		wire_clear(&w.up);
		size_t n = w.down.n;
		for (size_t i = 0; i < n; i++) {
			const uint8_t *out;
			size_t out_len;
			memcpy(copy, w.down.buf + w.down.off[i], w.down.len[i]);
			slim_sec_client_receive(c, copy, w.down.len[i], &out, &out_len);
		}
		wire_clear(&w.down);
	}
}

/* A connection from `ip`, made from scratch; false if it did not complete. */
static bool connect_from(struct slim_sec_server *srv, struct slim_sec_client *c,
		enum kind kind, uint32_t ip)
{
	struct sockaddr_in from = addr_of(ip, 40000);
	struct slim_sec_client_config cfg = client_config(kind);
	w.conn = NULL;
	if (!slim_sec_client_start(c, &cfg, slim_now_us())) {
		return false;
	}
	if (kind == KIND_CLEAR) {
		/* a clear server knows a client by its first datagram */
		uint32_t magic = SLIM_MAGIC;
		slim_sec_client_send(c, (const uint8_t *)&magic, sizeof(magic));
	}
	pump(srv, c, &from);
	return w.conn && slim_sec_client_established(c);
}

/* Sealing and opening `size`-byte datagrams, server to console and back. */
static struct record_cost bench_records(enum kind kind, size_t size, int batches)
{
	struct slim_sec_server *srv = server_create(kind, 0);
	struct slim_sec_client *c = slim_sec_client_create(client_send, NULL);
	struct sockaddr_in from = addr_of(0x7f000002, 40000);
	if (!c || !connect_from(srv, c, kind, 0x7f000002)) {
		die("no connection");
	}
	uint8_t dgram[SLIM_DEFAULT_MTU];
	/* any bytes will do, but the clear transport only carries slim datagrams */
	memset(dgram, 0xa5, sizeof(dgram));
	uint32_t magic = SLIM_MAGIC;
	memcpy(dgram, &magic, sizeof(magic));
	double seal[MAX_BATCHES], open[MAX_BATCHES], up[MAX_BATCHES];
	for (int b = -1; b < batches; b++) { /* batch -1 warms up */
		uint64_t t0 = now_ns();
		for (int i = 0; i < BATCH; i++) {
			slim_sec_conn_send(w.conn, dgram, size);
		}
		uint64_t t1 = now_ns();
		for (size_t i = 0; i < w.down.n; i++) {
			const uint8_t *out;
			size_t out_len;
			if (slim_sec_client_receive(c, w.down.buf + w.down.off[i], w.down.len[i], &out,
					&out_len) != SLIM_SEC_DATA) {
				die("a record did not open");
			}
		}
		uint64_t t2 = now_ns();
		wire_clear(&w.down);
		for (int i = 0; i < BATCH; i++) {
			slim_sec_client_send(c, dgram, size);
		}
		for (size_t i = 0; i < w.up.n; i++) {
			slim_sec_server_receive(srv, w.up.buf + w.up.off[i], w.up.len[i],
				(const struct sockaddr *)&from, sizeof(from), slim_now_us());
		}
		uint64_t t3 = now_ns();
		wire_clear(&w.up);
		if (b >= 0) {
			seal[b] = (double)(t1 - t0) / BATCH;
			open[b] = (double)(t2 - t1) / BATCH;
			up[b] = (double)(t3 - t2) / BATCH;
		}
	}
	slim_sec_client_destroy(c);
	slim_sec_server_destroy(srv);
	return (struct record_cost){ median(seal, batches), median(open, batches),
		median(up, batches) };
}

/* Whole handshakes, each from a new address (as consoles come), both ends' CPU. */
static void bench_handshakes(enum kind kind, int n, struct results *res)
{
	struct slim_sec_server *srv = server_create(kind, 0);
	struct slim_sec_client *c = slim_sec_client_create(client_send, NULL);
	double *total = calloc((size_t)n, sizeof(double));
	double *server = calloc((size_t)n, sizeof(double));
	for (int i = 0; i < n; i++) {
		w.server_ns = 0;
		uint64_t t0 = now_ns();
		if (!connect_from(srv, c, kind, 0x0a000000 + (uint32_t)i)) {
			die("a handshake failed");
		}
		total[i] = (double)(now_ns() - t0) / 1e3;
		server[i] = (double)w.server_ns / 1e3;
		slim_sec_conn_close(w.conn);
		wire_clear(&w.down);
	}
	res->handshake_us[kind] = median(total, n);
	res->handshake_server_us[kind] = median(server, n);
	free(total);
	free(server);
	slim_sec_client_destroy(c);
	slim_sec_server_destroy(srv);
}

/* The server's time for one datagram each from BATCH different spoofed sources. */
static double spoof_batch(struct slim_sec_server *srv, const uint8_t *dgram, size_t len,
		uint32_t first_ip)
{
	uint8_t copy[SLIM_DEFAULT_MTU];
	uint64_t t = 0;
	for (int i = 0; i < BATCH; i++) {
		struct sockaddr_in from = addr_of(first_ip + (uint32_t)i, 1024 + (uint16_t)i);
		memcpy(copy, dgram, len);
		uint64_t t0 = now_ns();
		slim_sec_server_receive(srv, copy, len, (const struct sockaddr *)&from,
			sizeof(from), slim_now_us());
		t += now_ns() - t0;
		wire_clear(&w.down);
	}
	return (double)t / BATCH;
}

static void bench_spoofing(int batches, struct results *res)
{
	/* a real first ClientHello, as an attacker would record and replay from other sources */
	struct slim_sec_client *c = slim_sec_client_create(client_send, NULL);
	struct slim_sec_client_config cfg = client_config(KIND_CERT);
	if (!c || !slim_sec_client_start(c, &cfg, slim_now_us()) || w.up.n != 1) {
		die("no ClientHello");
	}
	uint8_t hello[SLIM_DEFAULT_MTU];
	size_t hello_len = w.up.len[0];
	memcpy(hello, w.up.buf, hello_len);
	wire_clear(&w.up);
	slim_sec_client_destroy(c);
	/* an application data record (epoch 1) of nobody's connection */
	uint8_t record[64] = { 23, 0xfe, 0xfd, 0, 1 };
	record[11] = 0;
	record[12] = sizeof(record) - 13;

	double cookie[MAX_BATCHES], limited[MAX_BATCHES], unknown[MAX_BATCHES];
	/* every ClientHello answered: the global rate out of the way */
	struct slim_sec_server *open = server_create(KIND_CERT, 1000000000);
	/* the default rate, spent before the batches: every ClientHello over it */
	struct slim_sec_server *capped = server_create(KIND_CERT, 0);
	spoof_batch(capped, hello, hello_len, 0x0b000000);
	for (int b = 0; b < 25 && slim_sec_server_stats(capped)->rate_limited == 0; b++) {
		spoof_batch(capped, hello, hello_len, 0x0b000000 + (uint32_t)b * BATCH);
	}
	for (int b = 0; b < batches; b++) {
		uint32_t ip = 0x0c000000 + (uint32_t)b * BATCH;
		cookie[b] = spoof_batch(open, hello, hello_len, ip);
		limited[b] = spoof_batch(capped, hello, hello_len, ip);
		unknown[b] = spoof_batch(open, record, sizeof(record), ip);
	}
	res->spoof_cookie_ns = median(cookie, batches);
	res->spoof_rate_limited_ns = median(limited, batches);
	res->spoof_record_ns = median(unknown, batches);
	slim_sec_server_destroy(open);
	slim_sec_server_destroy(capped);
}

static void keep_datagram(void *data, const uint8_t *buf, size_t len)
{
	wire_put(data, buf, len);
}

static void no_send(void *data, const uint8_t *buf, size_t len)
{
}

/*
 * A fully changed 1920x1080 frame of each kind, encoded as the compositor
 * does (LZ4, RGB888, scrolls): the encoder's time and output, then that
 * output sealed with a per-attach key; on the console, opened and applied.
 */
static void bench_frames(int batches, struct results *res)
{
	struct slim_sec_server *srv = server_create(KIND_ATTACH, 0);
	struct slim_sec_client *c = slim_sec_client_create(client_send, NULL);
	if (!c || !connect_from(srv, c, KIND_ATTACH, 0x7f000002)) {
		die("no connection");
	}
	struct wire frame = { .buf = malloc(64 << 20), .size = 64 << 20 };
	struct slim_encoder_config ecfg = {
		.mtu = SLIM_DEFAULT_MTU - SLIM_SEC_OVERHEAD, .assoc = BENCH_ASSOC,
		.lz4 = true, .rgb888 = true, .detect_scroll = true,
	};
	struct slim_console_backend *backend = slim_headless_backend_create();
	struct slim_console_core *core = slim_console_core_create(SCREEN_W, SCREEN_H,
		SLIM_DEFAULT_MTU - SLIM_SEC_OVERHEAD, backend, no_send, NULL);
	struct slim_fb pics[2];
	for (int k = 0; k < CONTENT_KINDS; k++) {
		/* a picture and its negative: every pixel changes from one frame to the next */
		struct content_rng rng = { 7 + (uint64_t)k };
		for (int p = 0; p < 2; p++) {
			pics[p] = (struct slim_fb){ calloc((size_t)SCREEN_W * SCREEN_H, 4), SCREEN_W,
				SCREEN_H, SCREEN_W };
		}
		if (!pics[0].px || !pics[1].px) {
			die("out of memory");
		}
		content_paint(&pics[0], (struct slim_rect){ 0, 0, SCREEN_W, SCREEN_H },
			(enum content_kind)k, &rng);
		for (size_t i = 0; i < (size_t)SCREEN_W * SCREEN_H; i++) {
			pics[1].px[i] = pics[0].px[i] ^ 0x00ffffff;
		}
		struct slim_encoder *enc = slim_encoder_create(SCREEN_W, SCREEN_H, &ecfg,
			keep_datagram, &frame);
		if (!frame.buf || !enc || !core) {
			die("cannot create the encoder or the console");
		}
		slim_console_core_hello(core, "bench", BENCH_ASSOC);
		pixman_region32_t damage;
		pixman_region32_init_rect(&damage, 0, 0, SCREEN_W, SCREEN_H);
		double enc_t[MAX_BATCHES], seal_t[MAX_BATCHES], open_t[MAX_BATCHES],
			apply_t[MAX_BATCHES];
		for (int b = -1; b < batches; b++) {
			wire_clear(&frame);
			struct slim_frame f = { .fb = &pics[(b + 2) & 1], .damage = &damage };
			uint64_t t0 = now_ns();
			slim_encoder_frame(enc, &f);
			uint64_t t1 = now_ns();
			for (size_t i = 0; i < frame.n; i++) {
				slim_sec_conn_send(w.conn, frame.buf + frame.off[i], frame.len[i]);
			}
			uint64_t t2 = now_ns();
			for (size_t i = 0; i < w.down.n; i++) {
				const uint8_t *out;
				size_t out_len;
				slim_sec_client_receive(c, w.down.buf + w.down.off[i], w.down.len[i], &out,
					&out_len);
			}
			uint64_t t3 = now_ns();
			for (size_t i = 0; i < frame.n; i++) {
				slim_console_core_receive(core, frame.buf + frame.off[i], frame.len[i]);
			}
			uint64_t t4 = now_ns();
			if (b >= 0) {
				enc_t[b] = (double)(t1 - t0) / 1e3;
				seal_t[b] = (double)(t2 - t1) / 1e3;
				open_t[b] = (double)(t3 - t2) / 1e3;
				apply_t[b] = (double)(t4 - t3) / 1e3;
			}
			res->frame[k].bytes = (double)w.down.used;
			res->frame[k].dgrams = (double)frame.n;
			wire_clear(&w.down);
		}
		res->frame[k].encode_us = median(enc_t, batches);
		res->frame[k].seal_us = median(seal_t, batches);
		res->frame[k].open_us = median(open_t, batches);
		res->frame[k].apply_us = median(apply_t, batches);
		pixman_region32_fini(&damage);
		slim_encoder_destroy(enc);
		free(pics[0].px);
		free(pics[1].px);
	}
	slim_console_core_destroy(core);
	backend->impl->destroy(backend);
	free(frame.buf);
	slim_sec_client_destroy(c);
	slim_sec_server_destroy(srv);
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static void print_table(const struct results *r)
{
	printf("Secure transport costs, one core, wire in memory (median of %d batches)\n\n",
		r->batches);
	printf("%-28s %6s | %8s %8s %8s | %7s | %9s | %6s\n", "records", "bytes",
		"seal ns", "open ns", "up ns", "ns/byte", "Mbit/s", "/clear");
	for (int k = 0; k < KINDS; k++) {
		for (size_t s = 0; s < SIZES; s++) {
			const struct record_cost *c = &r->rec[k][s];
			double both = c->seal_ns + c->open_ns;
			printf("%-28s %6zu | %8.0f %8.0f %8.0f | %7.2f | %9.0f | %6.2f\n",
				s ? "" : kind_names[k], sizes[s], c->seal_ns, c->open_ns, c->up_ns,
				both / (double)sizes[s], (double)sizes[s] * 8e3 / both,
				ratio(both, r->rec[KIND_CLEAR][s].seal_ns + r->rec[KIND_CLEAR][s].open_ns));
		}
	}
	printf("\nseal: server to console, slim_sec_conn_send; open: the console's receive; up: a\n"
		"console's record to the server, both ends; Mbit/s: one core sealing and opening.\n\n");
	printf("%-28s %12s %12s\n", "handshake", "both ends", "server");
	for (int k = KIND_ATTACH; k < KINDS; k++) {
		printf("%-28s %9.0f us %9.0f us\n", kind_names[k], r->handshake_us[k],
			r->handshake_server_us[k]);
	}
	printf("\n%-40s %9s %14s\n", "an attacker's datagram, to the server", "ns", "per s, 1 core");
	printf("%-40s %9.0f %14.0f\n", "ClientHello, cookie sent (44 bytes)", r->spoof_cookie_ns,
		1e9 / r->spoof_cookie_ns);
	printf("%-40s %9.0f %14.0f\n", "ClientHello over the rate, dropped", r->spoof_rate_limited_ns,
		1e9 / r->spoof_rate_limited_ns);
	printf("%-40s %9.0f %14.0f\n", "record of no connection", r->spoof_record_ns,
		1e9 / r->spoof_record_ns);
	printf("\n%-8s %9s %7s | %10s %9s %6s | %10s %9s %6s\n", "frame", "bytes", "dgrams",
		"encode us", "seal us", "share", "apply us", "open us", "share");
	for (int k = 0; k < CONTENT_KINDS; k++) {
		const struct frame_cost *f = &r->frame[k];
		printf("%-8s %9.0f %7.0f | %10.0f %9.0f %5.1f%% | %10.0f %9.0f %5.1f%%\n",
			content_name((enum content_kind)k), f->bytes, f->dgrams, f->encode_us, f->seal_us,
			100 * ratio(f->seal_us, f->encode_us + f->seal_us), f->apply_us, f->open_us,
			100 * ratio(f->open_us, f->apply_us + f->open_us));
	}
	printf("\nframe: 1920x1080, every pixel changed (a picture of tests/content.c and its\n"
		"negative in turn), encoded as the compositor does; share: of the server's\n"
		"(encode + seal) and of the console's (open + apply) time.\n");
}

static void print_json(const struct results *r)
{
	printf("{\"batches\": %d", r->batches);
	for (int k = 0; k < KINDS; k++) {
		for (size_t s = 0; s < SIZES; s++) {
			const struct record_cost *c = &r->rec[k][s];
			double both = c->seal_ns + c->open_ns;
			printf(", \"%s_%zu_seal_ns\": %.0f, \"%s_%zu_open_ns\": %.0f, "
				"\"%s_%zu_up_ns\": %.0f, \"%s_%zu_ns_per_byte\": %.3f, "
				"\"%s_%zu_mbit_per_s\": %.0f",
				kind_keys[k], sizes[s], c->seal_ns, kind_keys[k], sizes[s], c->open_ns,
				kind_keys[k], sizes[s], c->up_ns, kind_keys[k], sizes[s],
				both / (double)sizes[s], kind_keys[k], sizes[s],
				(double)sizes[s] * 8e3 / both);
			if (k != KIND_CLEAR) {
				printf(", \"%s_%zu_over_clear_ratio\": %.2f", kind_keys[k], sizes[s],
					ratio(both, r->rec[KIND_CLEAR][s].seal_ns +
						r->rec[KIND_CLEAR][s].open_ns));
			}
		}
	}
	for (int k = KIND_ATTACH; k < KINDS; k++) {
		printf(", \"%s_handshake_us\": %.0f, \"%s_handshake_server_us\": %.0f",
			kind_keys[k], r->handshake_us[k], kind_keys[k], r->handshake_server_us[k]);
	}
	printf(", \"spoof_cookie_ns\": %.0f, \"spoof_rate_limited_ns\": %.0f, "
		"\"spoof_record_ns\": %.0f", r->spoof_cookie_ns, r->spoof_rate_limited_ns,
		r->spoof_record_ns);
	for (int k = 0; k < CONTENT_KINDS; k++) {
		const char *n = content_name((enum content_kind)k);
		const struct frame_cost *f = &r->frame[k];
		printf(", \"%s_frame_bytes\": %.0f, \"%s_encode_us\": %.0f, \"%s_seal_us\": %.0f, "
			"\"%s_seal_share_ratio\": %.4f, \"%s_apply_us\": %.0f, \"%s_open_us\": %.0f, "
			"\"%s_open_share_ratio\": %.4f",
			n, f->bytes, n, f->encode_us, n, f->seal_us,
			n, ratio(f->seal_us, f->encode_us + f->seal_us), n, f->apply_us, n, f->open_us,
			n, ratio(f->open_us, f->apply_us + f->open_us));
	}
	printf("}\n");
}

static void quiet(enum slim_log_level level, const char *fmt, va_list args)
{
}

int main(int argc, char *argv[])
{
	bool json, quick;
	if (!bench_options(argc, argv, &json, &quick)) {
		return 2;
	}
	/* the drops an attacker provokes are logged (at a limited rate): not here */
	slim_log_init(SLIM_LOG_ERROR, quiet);
	char err[256];
	char dir[] = "/tmp/slim-bench-crypto-XXXXXX";
	if (!mkdtemp(dir)) {
		die("no temporary directory");
	}
	char path[64];
	snprintf(path, sizeof(path), "%s/server.key", dir);
	w.server_id = slim_sec_identity_load(path, true, err, sizeof(err));
	unlink(path);
	snprintf(path, sizeof(path), "%s/client.key", dir);
	w.client_id = slim_sec_identity_load(path, true, err, sizeof(err));
	unlink(path);
	rmdir(dir);
	if (!w.server_id || !w.client_id || !slim_sec_random(w.psk, sizeof(w.psk))) {
		die(err);
	}
	w.up = (struct wire){ .buf = malloc(4 << 20), .size = 4 << 20 };
	w.down = (struct wire){ .buf = malloc(64 << 20), .size = 64 << 20 };
	if (!w.up.buf || !w.down.buf) {
		die("out of memory");
	}

	struct results r = { .batches = quick ? 3 : MAX_BATCHES };
	for (int k = 0; k < KINDS; k++) {
		for (size_t s = 0; s < SIZES; s++) {
			r.rec[k][s] = bench_records((enum kind)k, sizes[s], r.batches);
		}
	}
	for (int k = KIND_ATTACH; k < KINDS; k++) {
		bench_handshakes((enum kind)k, quick ? 10 : 200, &r);
	}
	bench_spoofing(r.batches, &r);
	bench_frames(quick ? 1 : 5, &r);

	if (json) {
		print_json(&r);
	} else {
		print_table(&r);
	}
	free(w.up.buf);
	free(w.down.buf);
	slim_sec_identity_destroy(w.server_id);
	slim_sec_identity_destroy(w.client_id);
	return 0;
}
