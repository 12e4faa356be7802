/*
 * The wire the secure transport's tests run on: real GnuTLS on both ends,
 * datagrams kept in memory, so that a test decides what is lost, replayed,
 * forged or spoofed, and counts every byte each address gets.
 */
#ifndef SECURE_WIRE_H
#define SECURE_WIRE_H

#include <netinet/in.h>
#include "slim-secure.h"

#define MAX_DGRAMS 4096
#define MAX_CLIENTS 8

struct dgram {
	uint8_t buf[2048];
	size_t len;
	struct sockaddr_in addr; /* from (to the server), or to (from the server) */
};

struct client {
	struct slim_sec_client *c;
	struct sockaddr_in addr;
	struct slim_sec_conn *conn; /* the server's end, once established (pump_with) */
	int ended; /* times the server ended it */
	int established, failed, forgotten, closed;
	int data;
	uint8_t last[2048];
	size_t last_len;
};

struct secure_wire {
	struct slim_sec_server *srv;
	struct dgram up[MAX_DGRAMS], down[MAX_DGRAMS];
	size_t n_up, n_down;
	struct client clients[MAX_CLIENTS];
	size_t n_clients;
	/* the server's side */
	int established, closed, datagrams;
	struct slim_sec_conn *conn; /* the latest established */
	uint8_t last[2048];
	size_t last_len;
	/* what left the server, by destination port */
	uint64_t sent_to[65536];
	struct slim_sec_identity *server_id, *client_id;
	uint8_t psk[SLIM_SEC_KEY_LEN];
	const char *refuse_server; /* what check_server answers */
	bool admit; /* on_established admits the connection */
	uint8_t checked_fp[SLIM_SEC_FINGERPRINT_LEN];
};

/* The wire, cleared by setup (but for the identities). */
extern struct secure_wire wire;

/* The server's pre-shared keys: "token-1" and the pairing identity, both wire.psk. */
bool psk_lookup(void *data, const char *identity, uint8_t key[SLIM_SEC_KEY_LEN]);
struct sockaddr_in addr_of(uint32_t ip, uint16_t port);
/* A client at 127.0.0.2:port. */
struct client *add_client(uint16_t port);
struct client *client_at(const struct sockaddr_in *a);
struct slim_sec_client_config psk_config(const uint8_t key[SLIM_SEC_KEY_LEN]);
/* With wire.client_id, the server checked by wire.refuse_server. */
struct slim_sec_client_config cert_config(void);
void make_server(const struct slim_sec_server_config *cfg);
void make_psk_server(void);
int setup(void **state);
int teardown(void **state);
/* Counts what the client's receive said. */
void client_event(struct client *cl, enum slim_sec_event ev, const uint8_t *out,
		size_t out_len);
/* Delivers everything in flight, both ways, until the wire is quiet. */
void pump(void);
/*
 * Delivers what is in flight both ways until the wire is quiet, and before
 * each step `n` copies of `flood` from the address of `cl` (`same_port`:
 * its port too, else any other port of its IP address).
 */
void pump_with(struct client *cl, const struct dgram *flood, int n, bool same_port);
void connect_psk(struct client *cl, const uint8_t key[SLIM_SEC_KEY_LEN]);
/* A slim datagram holding a PING. */
size_t slim_dgram(uint8_t *buf, size_t size, uint32_t seq, bool upstream);

#endif
