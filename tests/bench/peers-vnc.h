/*
 * A VNC viewer for bench-peers, on libvncclient as real viewers are: it
 * asks for one encoding, and for an incremental update after every update
 * it gets (libvncclient does so itself), so a VNC server sends what changed
 * as fast as it is taken. Its messages are handled on a thread of its own,
 * so that the benchmark's main loop can keep the slimland console fed
 * meanwhile.
 */
#ifndef SLIM_BENCH_PEERS_VNC_H
#define SLIM_BENCH_PEERS_VNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bench_vnc;

/*
 * Connects to a VNC server on loopback `port` asking for `encoding`
 * ("zrle", "tight") alone; NULL, with why in `err`, if it cannot.
 */
struct bench_vnc *bench_vnc_connect(uint16_t port, const char *encoding, char *err,
		size_t err_size);
void bench_vnc_destroy(struct bench_vnc *v);

/* False once the connection is gone. */
bool bench_vnc_alive(struct bench_vnc *v);
/* Bytes received on the viewer's socket so far: all the server sent. */
uint64_t bench_vnc_bytes(struct bench_vnc *v);
/* What the viewer sent on the wire: payload, and IPv4 and TCP headers of every segment. */
uint64_t bench_vnc_wire_bytes_sent(struct bench_vnc *v);
/* Updates with pixels in them so far, and when the last was decoded. */
uint64_t bench_vnc_updates(struct bench_vnc *v);
uint64_t bench_vnc_last_update_us(struct bench_vnc *v);
/*
 * The first update with pixels decoded since the last mark, 0 if none yet:
 * what a key sent after the mark has changed reaches the viewer there.
 */
void bench_vnc_mark(struct bench_vnc *v);
uint64_t bench_vnc_first_update_us(struct bench_vnc *v);
/* A key (an X keysym) pressed or released at the server, as a viewer sends it. */
bool bench_vnc_key(struct bench_vnc *v, uint32_t keysym, bool down);

#endif
