/*
 * What bench-peers measures and keeps (bench-peers.c runs the work,
 * peers-report.c prints it): viewers, rows, and a cell for each.
 */
#ifndef SLIM_BENCH_PEERS_H
#define SLIM_BENCH_PEERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "session.h"

/* keystrokes timed alone: wayvnc sends at most 30 frames a second by default */
#define LATENCY_INTERVAL_MS 40
#define TICKER_FPS 20
#define SWEEP_MAX 8

enum viewer_id { VIEWER_SLIM, VIEWER_ZRLE, VIEWER_TIGHT, VIEWER_WAYPIPE, VIEWERS };

enum row {
	ROW_TYPING, ROW_SEQ, ROW_DRAG, ROW_MENUS, ROW_IDLE,
	ROW_WPM75, ROW_WPM100, ROW_PGDN, ROW_TICKER, ROWS,
};

extern const char *const peers_viewer_names[VIEWERS];
/* banner loop lengths of the cache sweep, full and --quick */
extern const unsigned peers_sweep_full[SWEEP_MAX], peers_sweep_quick[3];

/* One row as one viewer saw it. */
struct peers_cell {
	bool ran;
	uint64_t bytes, cpu_us, compositor_us, us;
};

struct peers_viewer {
	const char *missing; /* the program it needs, if not installed */
	bool failed, active, record;
	pid_t server;        /* wayvnc, or `waypipe client` */
	struct bench_vnc *vnc;
	struct bench_relay *relay;
	char client_sock[128], relay_sock[128];
	uint64_t total_bytes;
};

struct peers_bench {
	struct bench_session s;
	bool quick, client_failed;
	/* nothing new for this long: every viewer has the final picture */
	int quiet_ms;
	pid_t app;           /* the workload's client (its process group), or 0 */
	struct peers_viewer v[VIEWERS];
	struct peers_cell cells[ROWS][VIEWERS];
	/* key to pixels in the same run: [0] slimland's console, [1] the ZRLE viewer */
	uint64_t *latency[2];
	size_t latency_n[2], latency_missed[2];
	/* what each sent upstream for its own keys, on the wire (IPv4, UDP or TCP headers) */
	uint64_t upstream_bytes[2];
	size_t upstream_keys[2];
	unsigned sweep_n;
	double sweep_bytes_per_s[SWEEP_MAX];
};

/* peers-viewers.c: processes and viewers */

/* Whether `name` is a program on $PATH. */
bool peers_have(const char *name);
/*
 * Starts `argv` in a process group of its own, in the session's runtime
 * directory; with `out`, its stdout is readable there.
 */
pid_t peers_spawn(struct peers_bench *b, char *const argv[], int *out);
/* Stops a process group, keeping the console fed meanwhile. */
void peers_stop_group(struct peers_bench *b, pid_t pid);
/* Keeps the console fed for `ms`. */
void peers_pump(struct peers_bench *b, int ms);
/* CPU time of waypipe's server side: the process started, and the handlers it forked. */
uint64_t peers_waypipe_cpu_us(pid_t server);
/* Attaches a viewer (slimland's console always is); false if it cannot run. */
bool peers_viewer_start(struct peers_bench *b, enum viewer_id i);
void peers_viewer_stop(struct peers_bench *b, enum viewer_id i);
/* A peer whose connection went during a pass failed it. */
void peers_viewer_check(struct peers_bench *b, enum viewer_id i);

/* The table, or with `json` one JSON object; sorts the latency samples. */
void peers_report(struct peers_bench *b, bool json);

#endif
