/*
 * What bench-audio sets up around a session and its console (audio-rig.c):
 * a relay on the console's way to the compositor that counts what crosses
 * it, and a PipeWire client in the session that plays clicks or a tone into
 * "Console speaker" and hears clicks on "Console microphone", each with the
 * time it was played or heard.
 */
#ifndef SLIM_BENCH_AUDIO_RIG_H
#define SLIM_BENCH_AUDIO_RIG_H

#include <netinet/in.h>
#include <pipewire/pipewire.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define RATE 48000
#define WIDTH 640
#define HEIGHT 480
#define CLICK_FRAMES 240        /* 5 ms */
#define CLICK_GAP_US 300000
#define CLICK_LEVEL 16000.0     /* half scale */
/* Louder than this (of 32767) is the click heard; quiet this long before it. */
#define HEARD_LEVEL 4000
#define QUIET_FRAMES (RATE / 10)
#define MIC_BLOCK 480           /* 10 ms, what the console reads at a time */
/* An ear time this long after the mouth is no answer to it. */
#define PAIR_WINDOW_US 250000
#define MAX_EVENTS 1024
/* IPv4 and UDP headers: what a datagram costs on the wire beyond its payload. */
#define UDP_IP_HEADERS 28

/* A log of times, written by one thread and read by another. */
struct times {
	uint64_t t[MAX_EVENTS];
	_Atomic size_t n;
};

static inline void times_add(struct times *l, uint64_t t)
{
	size_t n = atomic_load_explicit(&l->n, memory_order_relaxed);
	if (n < MAX_EVENTS) {
		l->t[n] = t;
		atomic_store_explicit(&l->n, n + 1, memory_order_release);
	}
}

static inline size_t times_count(struct times *l)
{
	return atomic_load_explicit(&l->n, memory_order_acquire);
}

/* --- the relay */

struct relay {
	int front;   /* the console's side: it sends here */
	int back;    /* connected to the compositor */
	int wake;    /* an eventfd: stop */
	bool clear;  /* datagrams readable: AUDIO told from the rest */
	uint16_t port;
	pthread_t thread;
	bool started;
	struct sockaddr_in console;
	bool have_console;
	_Atomic uint64_t down_bytes, down_dgrams, audio_bytes, audio_dgrams, up_bytes, up_dgrams;
	_Atomic uint64_t coded_bytes; /* the new packet's payload, without the copies after it */
};

struct counts {
	uint64_t down_bytes, down_dgrams, audio_bytes, audio_dgrams, up_bytes, up_dgrams;
	uint64_t coded_bytes, us;
};

/* Listens on a port of its own and forwards to the compositor's; `clear`: AUDIO is told apart. */
bool relay_start(struct relay *r, uint16_t compositor_port, bool clear);
void relay_stop(struct relay *r);
/* What crossed the relay so far, and when asked. */
struct counts relay_counts(struct relay *r);

/* --- the session's side */

enum play_mode { PLAY_SILENCE, PLAY_CLICKS, PLAY_TONE };

struct pw_side {
	struct pw_thread_loop *thread;
	struct pw_context *context;
	struct pw_core *core;
	struct pw_stream *out, *in;
	struct spa_hook out_listener, in_listener;
	_Atomic int mode;
	_Atomic int clicks_left;
	atomic_uint out_calls, in_calls;
	/* the data thread's own */
	uint64_t next_click_us;
	double phase;
	unsigned in_quiet;
	struct times clicks; /* mouth: queued, plus the click's offset */
	struct times heard;  /* ear: the capture's process call */
};

/* Connects to the session's PipeWire ($XDG_RUNTIME_DIR); `ear`: hears the microphone too. */
bool pw_side_start(struct pw_side *pw, bool ear);
void pw_side_stop(struct pw_side *pw);

#endif
