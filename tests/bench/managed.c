#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include "assoc.h"
#include "managed.h"
#include "manager.h"
#include "slim-hex.h"
#include "slim-log.h"
#include "slim-net.h"
#include "slim-zstd.h"

#define HELLO_FIRST_MS 250
#define HELLO_MAX_MS 4000
#define PING_MS 1000

/* What the secure layer puts on the wire. */
static void send_raw(void *data, const uint8_t *buf, size_t len)
{
	struct bench_console *c = data;
	if (c->fd >= 0) {
		send(c->fd, buf, len, MSG_DONTWAIT);
	}
}

/* The core's datagrams: one record each (or as they are, in clear). */
static void send_upstream(void *data, const uint8_t *buf, size_t len)
{
	struct bench_console *c = data;
	slim_sec_client_send(c->sec, buf, len);
}

/* The benchmark's consoles believe the manager they were started against. */
static const char *trust_any(void *data, const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN])
{
	return NULL;
}

static void on_presented(void *data, uint32_t frame, uint64_t applied_us)
{
	struct bench_console *c = data;
	if (c->frames < BENCH_CONSOLE_FRAMES) {
		c->frame_us[c->frames] = applied_us;
	}
	c->frames++;
}

static void on_refused(void *data, uint16_t reason, const char *text, size_t len)
{
	struct bench_console *c = data;
	c->refused = true;
	c->refusals++;
	slim_log(SLIM_LOG_DEBUG, "console %s: refused by port %u (%u): %.*s", c->id,
		bench_console_port(c), reason, (int)len, text);
}

static const struct slim_console_events core_events = {
	.refused = on_refused,
	.presented = on_presented,
};

static uint32_t new_assoc(uint32_t old)
{
	uint32_t a = 0;
	while (a == 0 || a == old) {
		if (getrandom(&a, sizeof(a), 0) != sizeof(a)) {
			a = (uint32_t)slim_now_us();
		}
	}
	return a;
}

static void display_hello(struct bench_console *c, uint64_t now)
{
	c->assoc = new_assoc(c->assoc);
	c->attached = false;
	c->refused = false;
	c->hello_backoff_ms = HELLO_FIRST_MS;
	c->hello_due_us = now + c->hello_backoff_ms * 1000ull;
	slim_console_core_hello(c->core, c->id, c->assoc);
}

/* A new display connection: HELLO once its handshake is done (at once in clear). */
static void start_display(struct bench_console *c, uint64_t now)
{
	struct slim_sec_client_config cfg = { .mode = c->mode, .mtu = SLIM_DEFAULT_MTU };
	slim_hex_encode(cfg.psk_identity, c->token, sizeof(c->token));
	memcpy(cfg.psk, c->key, sizeof(cfg.psk));
	if (!slim_sec_client_start(c->sec, &cfg, now)) {
		fprintf(stderr, "console %s: %s\n", c->id, slim_sec_client_error(c->sec));
		return;
	}
	if (slim_sec_client_established(c->sec)) {
		display_hello(c, now);
	}
}

/* A new control association: which manager it goes to, and when. */
static void on_mgr_connecting(void *data, const char *why)
{
	struct bench_console *c = data;
	const char *address = c->mgr ? slim_console_manager_address(c->mgr) : NULL;
	c->mgr_attached = false;
	c->mgr_connects++;
	c->mgr_connect_us = slim_now_us();
	if (address && strcmp(address, c->manager) != 0) {
		c->manager_changes++;
		snprintf(c->manager, sizeof(c->manager), "%s", address);
	}
	slim_log(SLIM_LOG_DEBUG, "console %s: manager %s: %s", c->id, c->manager,
		why ? why : "first HELLO");
}

static void on_mgr_attached(void *data, uint32_t assoc)
{
	struct bench_console *c = data;
	c->mgr_attached = true;
	c->mgr_attached_us = slim_now_us();
}

static void on_redirect(void *data, const struct sockaddr *addr, socklen_t len,
		const uint8_t token[SLIM_ATTACH_TOKEN_LEN], const uint8_t key[SLIM_SEC_KEY_LEN])
{
	struct bench_console *c = data;
	uint64_t now = slim_now_us();
	bool same_peer = c->fd >= 0 && len == c->peer_len && memcmp(addr, &c->peer, len) == 0;
	if (same_peer && c->has_token && memcmp(token, c->token, sizeof(c->token)) == 0) {
		return; /* repeated until the compositor hears us */
	}
	if (!same_peer) {
		int fd = slim_udp_connect_addr(addr, len, c->source);
		int size = 8 << 20;
		if (fd < 0) {
			fprintf(stderr, "console %s: cannot connect to the redirect: %s\n", c->id,
				strerror(errno));
			return;
		}
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
		if (c->fd >= 0) {
			close(c->fd);
		}
		c->fd = fd;
		memcpy(&c->peer, addr, len);
		c->peer_len = len;
	}
	memcpy(c->token, token, sizeof(c->token));
	memcpy(c->key, key, sizeof(c->key));
	c->has_token = true;
	c->redirects++;
	c->redirect_us = now;
	c->first_rx_us = 0;
	c->frames = 0;
	c->n_rects = 0;
	c->copies = 0;
	c->datagrams = c->bytes = 0;
	c->attached = false;
	slim_console_core_set_token(c->core, token);
	start_display(c, now);
}

static const struct slim_console_manager_listener mgr_listener = {
	/* refusals of the control association need no action here: HELLO goes again */
	.connecting = on_mgr_connecting,
	.attached = on_mgr_attached,
	.redirect = on_redirect,
};

bool bench_console_start(struct bench_console *c, const char *manager, const char *id,
		uint32_t width, uint32_t height, enum slim_sec_mode mode, const char *key_path)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->mode = mode;
	snprintf(c->id, sizeof(c->id), "%s", id);
	char err[256];
	if (mode == SLIM_SEC_DTLS) {
		c->identity = slim_sec_identity_load(key_path, true, err, sizeof(err));
		if (!c->identity) {
			fprintf(stderr, "console %s: %s\n", id, err);
			return false;
		}
		slim_sec_fingerprint_id(slim_sec_identity_fingerprint(c->identity), c->id);
	}
	c->width = width;
	c->height = height;
	c->sec = slim_sec_client_create(send_raw, c);
	c->backend = slim_headless_backend_create();
	c->core = c->backend && c->sec ? slim_console_core_create(width, height,
		mode == SLIM_SEC_DTLS ? SLIM_DEFAULT_MTU - SLIM_SEC_OVERHEAD : SLIM_DEFAULT_MTU,
		c->backend, send_upstream, c) : NULL;
	if (!c->core) {
		return false;
	}
	slim_console_core_set_events(c->core, &core_events, c);
	static unsigned consoles;
	unsigned n = consoles++;
	snprintf(c->source, sizeof(c->source), "127.1.%u.%u", n / 250 % 250, n % 250 + 1);
	struct slim_console_manager_config config = {
		.mode = mode,
		.mtu = SLIM_DEFAULT_MTU,
		.identity = c->identity,
		.check_server = mode == SLIM_SEC_DTLS ? trust_any : NULL,
		.source = c->source,
	};
	c->mgr = slim_console_manager_create(manager, c->core, c->id, &config, &mgr_listener, c, err,
		sizeof(err));
	if (!c->mgr) {
		fprintf(stderr, "console %s: %s\n", c->id, err);
		return false;
	}
	snprintf(c->manager, sizeof(c->manager), "%s", slim_console_manager_address(c->mgr));
	slim_console_manager_start(c->mgr);
	return true;
}

void bench_console_stop(struct bench_console *c)
{
	slim_console_manager_destroy(c->mgr);
	c->mgr = NULL;
	if (c->fd >= 0) {
		close(c->fd);
		c->fd = -1;
	}
	slim_console_core_destroy(c->core);
	c->core = NULL;
	if (c->backend) {
		c->backend->impl->destroy(c->backend);
		c->backend = NULL;
	}
	slim_sec_client_destroy(c->sec);
	c->sec = NULL;
	slim_sec_identity_destroy(c->identity);
	c->identity = NULL;
	free(c->rects);
	c->rects = NULL;
}

void bench_console_card(struct bench_console *c, bool inserted, const uint8_t *token,
		size_t len)
{
	struct slim_wire_card card = {
		.event = inserted ? SLIM_CARD_INSERTED : SLIM_CARD_REMOVED,
		.kind = SLIM_CARD_UID,
		.len = (uint8_t)(len > SLIM_CARD_TOKEN_MAX ? SLIM_CARD_TOKEN_MAX : len),
	};
	memcpy(card.token, token, card.len);
	slim_console_manager_send_card(c->mgr, &card);
}

void bench_console_key(struct bench_console *c, uint32_t code, bool down)
{
	struct slim_wire_input ev[2] = {
		{ .kind = SLIM_INPUT_KEY, .code = (uint16_t)code, .value = down },
	};
	slim_console_core_send_input(c->core, ev, 1);
}

static void add_rect(struct bench_console *c, const struct slim_rect *r)
{
	if (c->n_rects == c->cap_rects) {
		size_t cap = c->cap_rects ? c->cap_rects * 2 : 4096;
		struct bench_rect *grown = realloc(c->rects, cap * sizeof(*grown));
		if (!grown) {
			return;
		}
		c->rects = grown;
		c->cap_rects = cap;
	}
	c->rects[c->n_rects++] = (struct bench_rect){ r->x, r->y, r->w, r->h, c->frames };
}

/* What a datagram paints, noted before the core applies it. */
static void note_datagram(struct bench_console *c, const uint8_t *buf, size_t len, uint64_t now)
{
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	/* compressed datagrams are read as the console reads them */
	static struct slim_zstd *z;
	static uint8_t expanded[SLIM_ZSTD_MAX_DGRAM];
	if ((!z && !(z = slim_zstd_create())) ||
			slim_zstd_reader_init(z, expanded, slim_console_core_history(c->core), &r, &hdr,
				buf, len, false,
				(uint16_t)c->width, (uint16_t)c->height) != SLIM_OK ||
			hdr.assoc != c->assoc) {
		return;
	}
	if (!c->attached) {
		c->attached = true;
		c->first_rx_us = now;
		c->ping_due_us = now + PING_MS * 1000ull;
	}
	c->datagrams++;
	c->bytes += len;
	while (slim_reader_next(&r, &cmd) == SLIM_OK && cmd.type) {
		switch (cmd.type) {
		case SLIM_CMD_FILL:
			add_rect(c, &cmd.fill.r);
			break;
		case SLIM_CMD_SET:
			add_rect(c, &cmd.set.r);
			break;
		case SLIM_CMD_BITMAP:
			add_rect(c, &cmd.bitmap.r);
			break;
		case SLIM_CMD_PALETTE:
			add_rect(c, &cmd.palette.r);
			break;
		case SLIM_CMD_CACHE_DRAW:
			add_rect(c, &cmd.cache.r);
			break;
		case SLIM_CMD_CSCS:
			add_rect(c, &cmd.cscs.pdst);
			break;
		case SLIM_CMD_COPY:
			c->copies++;
			break;
		default:
			break;
		}
	}
}

static void receive(struct bench_console *c)
{
	static uint8_t buf[65536];
	for (int i = 0; i < 4096; i++) {
		uint64_t arrived;
		ssize_t len = slim_net_recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT, NULL, NULL,
			&arrived);
		if (len <= 0) {
			return;
		}
		uint64_t now = slim_now_us();
		const uint8_t *out;
		size_t out_len;
		switch (slim_sec_client_receive(c->sec, buf, (size_t)len, &out, &out_len)) {
		case SLIM_SEC_DATA:
			note_datagram(c, out, out_len, arrived);
			slim_console_core_receive_at(c->core, out, out_len, arrived);
			break;
		case SLIM_SEC_ESTABLISHED:
			display_hello(c, now);
			break;
		case SLIM_SEC_FAILED:
		case SLIM_SEC_CLOSED:
			slim_log(SLIM_LOG_DEBUG, "console %s: %s", c->id, slim_sec_client_error(c->sec));
			break;
		default:
			break;
		}
	}
}

static void tick(struct bench_console *c, uint64_t now)
{
	slim_console_manager_tick(c->mgr, now);
	if (c->fd < 0) {
		return;
	}
	if (!slim_sec_client_established(c->sec)) {
		/* handshake flights again, or a new connection once this one failed */
		if (slim_sec_client_tick(c->sec, now) == SLIM_SEC_FAILED) {
			start_display(c, now);
		}
		return;
	}
	if (!c->attached && now >= c->hello_due_us) {
		/* the same association, HELLO again: it was lost, or the compositor was not ready */
		slim_console_core_hello(c->core, c->id, c->assoc);
		c->hello_backoff_ms = c->hello_backoff_ms * 2 > HELLO_MAX_MS ? HELLO_MAX_MS :
			c->hello_backoff_ms * 2;
		c->hello_due_us = now + c->hello_backoff_ms * 1000ull;
	} else if (c->attached && now >= c->ping_due_us) {
		slim_console_core_ping(c->core);
		c->ping_due_us = now + PING_MS * 1000ull;
	}
}

static int timeout_of(const struct bench_console *c, uint64_t now)
{
	int t = slim_console_manager_timeout_ms(c->mgr, now);
	if (c->fd >= 0) {
		int d = slim_sec_client_timeout_ms(c->sec, now);
		if (slim_sec_client_established(c->sec)) {
			uint64_t due = c->attached ? c->ping_due_us : c->hello_due_us;
			d = due <= now ? 0 : (int)((due - now + 999) / 1000);
		}
		t = t < 0 || (d >= 0 && d < t) ? d : t;
	}
	return t;
}

bool bench_consoles_run(struct bench_console *const *cs, size_t n, int timeout_ms,
		bool (*done)(void *data), void *data)
{
	uint64_t end = slim_now_us() + (uint64_t)timeout_ms * 1000;
	/* two a console: the control association's and the display association's */
	struct pollfd *p = calloc(n ? 2 * n : 1, sizeof(*p));
	if (!p) {
		return false;
	}
	/*
	 * A hundred consoles or more: at most a round every n/100 ms, so that one
	 * round serves many datagrams rather than one (each round polls every
	 * socket and ticks every console); a timer is late by that at most.
	 */
	uint64_t round_us = n >= 100 ? (uint64_t)n * 10 : 0, last_round = 0;
	bool result;
	for (;;) {
		if (round_us) {
			uint64_t since = slim_now_us() - last_round;
			if (since < round_us) {
				usleep((useconds_t)(round_us - since));
			}
			last_round = slim_now_us();
		}
		if (done && done(data)) {
			result = true;
			break;
		}
		uint64_t now = slim_now_us();
		if (now >= end) {
			result = done ? done(data) : true;
			break;
		}
		int wait = (int)((end - now + 999) / 1000);
		size_t np = 0;
		for (size_t i = 0; i < n; i++) {
			p[np++] = (struct pollfd){ .fd = slim_console_manager_fd(cs[i]->mgr),
					.events = POLLIN };
			p[np++] = (struct pollfd){ .fd = cs[i]->fd, .events = POLLIN };
			int t = timeout_of(cs[i], now);
			if (t >= 0 && t < wait) {
				wait = t;
			}
		}
		if (poll(p, np, wait) < 0 && errno != EINTR) {
			result = false;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			if (p[2 * i].revents) {
				slim_console_manager_dispatch(cs[i]->mgr);
			}
			/* after the manager's: a REDIRECT may have replaced the socket */
			if (p[2 * i + 1].revents && cs[i]->fd == p[2 * i + 1].fd) {
				receive(cs[i]);
			}
			tick(cs[i], slim_now_us());
		}
	}
	free(p);
	return result;
}

uint32_t bench_console_complete_frame(const struct bench_console *c, bool *first_only)
{
	*first_only = false;
	uint32_t frames = c->frames < BENCH_CONSOLE_FRAMES ? c->frames : BENCH_CONSOLE_FRAMES;
	if (frames == 0) {
		return 0;
	}
	size_t w = c->width, h = c->height;
	uint8_t *covered = calloc(w * h, 1);
	if (!covered) {
		return 0;
	}
	size_t total = 0, next = 0;
	uint32_t complete = 0;
	for (uint32_t f = 0; f < frames && !complete; f++) {
		/* rects that arrived before frame f+1 was presented belong to it (or before) */
		for (; next < c->n_rects && c->rects[next].frame <= f; next++) {
			const struct bench_rect *r = &c->rects[next];
			for (size_t y = r->y; y < (size_t)r->y + r->h && y < h; y++) {
				uint8_t *row = covered + y * w;
				for (size_t x = r->x; x < (size_t)r->x + r->w && x < w; x++) {
					total += !row[x];
					row[x] = 1;
				}
			}
		}
		if (total == w * h) {
			complete = f + 1;
		}
	}
	free(covered);
	*first_only = complete == 1;
	return complete;
}

uint16_t bench_console_port(const struct bench_console *c)
{
	if (c->fd < 0) {
		return 0;
	}
	if (c->peer.ss_family == AF_INET) {
		return ntohs(((const struct sockaddr_in *)&c->peer)->sin_port);
	}
	return ntohs(((const struct sockaddr_in6 *)&c->peer)->sin6_port);
}
