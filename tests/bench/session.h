/*
 * A slimland session for benchmarks: the compositor started for real, and
 * this process as its console (the console core on a UDP socket), so that
 * times are taken where the console sends and applies, with no pipes or
 * other processes in between. Clients are started with WAYLAND_DISPLAY set.
 * The console speaks DTLS as slimland-console does (with the key a session
 * manager would hand it, or the session's pairing key), or the clear
 * transport, to measure what DTLS costs.
 */
#ifndef SLIM_BENCH_SESSION_H
#define SLIM_BENCH_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "console-core.h"
#include "slim-desk.h"
#include "bench-options.h"
#include "slim-secure.h"

/* What a datagram or a segment costs on the wire beyond its payload (loopback, IPv4). */
#define BENCH_IPV4_UDP_HEADERS 28
#define BENCH_IPV4_TCP_HEADERS 52 /* with the timestamps option Linux uses */

struct bench_frame {
	uint32_t id;
	uint64_t first_rx_us;  /* console: first datagram of the frame received */
	uint64_t applied_us;   /* console: presented */
	uint64_t encode_us;    /* server: encoding started */
	uint64_t encoded_us;   /* server: encoding done */
	uint64_t bytes;        /* the frame as on the wire (records, in DTLS) */
	uint64_t apply_us;     /* console: time spent applying its datagrams (decoding video too) */
};

enum bench_link {
	BENCH_LINK_CLEAR,   /* no DTLS at all: the baseline */
	/*
	 * `slimland --managed`, told on its control socket to expect this
	 * console with a per-attach key, as slimland-sessiond does (PSK)
	 */
	BENCH_LINK_ATTACH,
	BENCH_LINK_PAIRING, /* `slimland --listen`, its pairing key (ECDHE-PSK) */
};

const char *bench_link_name(enum bench_link link);

struct bench_session {
	enum bench_link link;
	pid_t compositor;
	int control;  /* BENCH_LINK_ATTACH: the compositor's control socket */
	uint16_t port;
	char runtime_dir[64];
	char wayland_display[32];
	int fd;
	struct slim_sec_client *sec;
	struct slim_console_backend *backend;
	struct slim_console_core *core;
	uint32_t width, height;
	/* set between start_detached and attach: the heads and keyboard HELLO says (NULL: one head) */
	const struct slim_desk *desk;
	/* bench_session_shadow: the session this console watches, and its attach's key */
	struct bench_session *shadow_of;
	uint8_t shadow_token[SLIM_ATTACH_TOKEN_LEN];
	uint8_t shadow_key[SLIM_SEC_KEY_LEN];

	/* the frame being received, and the last one presented */
	struct bench_frame current, last;
	uint32_t presented;
	uint64_t bytes_received;
	/* upstream on the wire: each datagram with its IPv4 and UDP headers */
	uint64_t wire_bytes_sent;
};

/* Arguments the next compositors started get besides their own (NULL-terminated). */
void bench_session_compositor_args(const char *const *args);
/*
 * What the next consoles decode: `impl` the compressed video HELLO
 * announces as `codecs` (n of them); NULL: none, CSCS only.
 */
void bench_session_video(const struct slim_console_video_impl *impl, void *data,
		const struct slim_wire_codec *codecs, size_t n);
/*
 * Where the next compositors run: argv put before slimland's (NULL: none;
 * e.g. `ip netns exec NAME`), and the IPv4 address they listen on and the
 * console goes to (NULL: 127.0.0.1).
 */
void bench_session_network(const char *const *prefix, const char *host);
/* Starts slimland (path `slimland`) and attaches as a console of width x height. */
bool bench_session_start(struct bench_session *s, const char *slimland, uint32_t width,
		uint32_t height, enum bench_link link);
/* The same in two steps: the compositor with no console yet, then the console. */
bool bench_session_start_detached(struct bench_session *s, const char *slimland,
		uint32_t width, uint32_t height, enum bench_link link);
bool bench_session_attach(struct bench_session *s);
void bench_session_stop(struct bench_session *s);
/*
 * `sh` becomes a second console watching `owner`'s session (a
 * BENCH_LINK_ATTACH one), as a helpdesk's does (session-manager.md §2:
 * `shadow ... always view` on its control socket, then HELLO at the port
 * the compositor answers with). bench_session_stop(sh) lets it go.
 */
bool bench_session_shadow(struct bench_session *owner, struct bench_session *sh);

/* Starts `argv` as a client; with `out`, its stdout is readable there. */
pid_t bench_session_client(struct bench_session *s, char *const argv[], int *out);
/* Reads a line from a client's stdout (within timeout_ms); false on timeout or EOF. */
bool bench_read_line(int fd, char *line, size_t size, int timeout_ms);

/* Receives datagrams until a frame is presented; false after timeout_ms without one. */
bool bench_session_wait_frame(struct bench_session *s, int timeout_ms);
/* Receives until no frame has come for quiet_ms (or max_ms passed). */
void bench_session_settle(struct bench_session *s, int quiet_ms, int max_ms);
void bench_session_input(struct bench_session *s, const struct slim_wire_input *ev, size_t n);
void bench_session_key(struct bench_session *s, uint32_t code, bool down);
void bench_session_pointer(struct bench_session *s, double x, double y);
void bench_session_button(struct bench_session *s, uint32_t button, bool down);

/* The key of a character of lowercase prose on a us layout (others: KEY_DOT). */
uint32_t bench_keycode(char c);
/* A free loopback port of this type (SOCK_DGRAM, SOCK_STREAM): the kernel picks it. */
uint16_t bench_free_port(int type);

uint64_t bench_now_us(void);
/* CPU time a process (all its threads) has used, in microseconds. */
uint64_t bench_process_cpu_us(pid_t pid);
int bench_cmp_u64(const void *a, const void *b);
/*
 * Waits up to timeout_ms for child `pid` to exit (its pidfd, no polling)
 * and reaps it; false if it still runs.
 */
bool bench_wait_exit(pid_t pid, int timeout_ms);

#endif
