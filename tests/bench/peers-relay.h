/*
 * A counting relay for bench-peers: a Unix socket that forwards every
 * connection made to it to another Unix socket, counting the bytes that
 * go from the connecting side to the other. waypipe's server connects to
 * it where it would connect to waypipe's client, so that what the relay
 * counts is all waypipe sends to the viewer's side. It forwards on a
 * thread of its own.
 */
#ifndef SLIM_BENCH_PEERS_RELAY_H
#define SLIM_BENCH_PEERS_RELAY_H

#include <stdint.h>

struct bench_relay;

/* Listens at `path`, forwarding to `upstream`; NULL if it cannot listen. */
struct bench_relay *bench_relay_start(const char *path, const char *upstream);
void bench_relay_stop(struct bench_relay *r);

/* Bytes forwarded towards `upstream` so far, and when the last came. */
uint64_t bench_relay_bytes(struct bench_relay *r);
uint64_t bench_relay_last_us(struct bench_relay *r);

#endif
