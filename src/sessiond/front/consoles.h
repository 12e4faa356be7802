/*
 * The UDP side: consoles' control associations (§1). HELLO, PING and CARD
 * come in and go to the table; what goes out is the table's to say
 * (console-send.h).
 *
 * Every datagram goes through the secure transport (slim-secure.h): a
 * console's control association is a DTLS connection in which it proved
 * its key, and its id is derived from that key, so no one else can claim
 * it, and nothing here runs for anyone who has not completed a handshake.
 * Which proven keys the manager serves at all is the enrollment's
 * business (enroll.h). Over clear transport (loopback benchmarks) the id is
 * what HELLO says, believed only from the address that said it.
 */
#ifndef SLIM_SESSIOND_CONSOLES_H
#define SLIM_SESSIOND_CONSOLES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "slim-secure.h"

struct slim_manager;
struct slim_console;
struct slim_udp;

/* Who sent an authenticated datagram. */
struct slim_peer {
	struct slim_sec_conn *conn;
	const uint8_t *key; /* the key it proved; NULL over clear transport */
	const struct sockaddr *from;
	socklen_t from_len;
	const struct sockaddr *local; /* the address it reached us at; may be NULL */
	socklen_t local_len;
};

/*
 * Binds the listening socket (config `listen`) and watches it on the loop;
 * `identity` is the host key (NULL over clear transport). NULL with the
 * reason logged.
 */
struct slim_udp *slim_udp_create(struct slim_manager *mgr, const char *listen,
		const struct slim_sec_identity *identity);
void slim_udp_destroy(struct slim_udp *udp);
const struct slim_sec_stats *slim_udp_stats(const struct slim_udp *udp);

/* One authenticated datagram from `peer`. Everything consoles send comes through here. */
void slim_consoles_receive(struct slim_manager *mgr, const struct slim_peer *peer,
		const uint8_t *buf, size_t len);
/* A connection ended: no console keeps it; with `goodbye` (the console quit) its console is gone. */
void slim_consoles_closed(struct slim_manager *mgr, struct slim_sec_conn *conn, bool goodbye);

#endif
