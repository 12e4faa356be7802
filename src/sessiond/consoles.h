/*
 * The UDP side: consoles' control associations (§1). HELLO, PING and CARD
 * come in; REFUSE, REDIRECT and empty answers go out.
 *
 * What binding a console id to an (address, association) pair does and does
 * not protect against, with no cryptography on the wire yet:
 * - A CARD counts only from the address and association that said HELLO
 *   for that console id, and only with a sequence number above the last
 *   CARD's: an off-path attacker must guess a 32-bit association id (and
 *   spoof the console's source address), and a captured CARD datagram cannot
 *   be replayed within its association, nor in a later one (a new HELLO
 *   chooses a new association id).
 * - A HELLO claiming a known console id from another address is refused
 *   (BUSY) while the known one has been heard within 10 s: nobody elsewhere
 *   on the network takes over a live console; a dead one (unplugged, moved)
 *   can be taken over after 10 s, which is what lets a console come back
 *   with a new address.
 * - Not protected: anyone who can see the traffic (same segment, a switch
 *   port mirror, a compromised router) learns the association id and can
 *   forge CARDs and HELLOs from the console's address; anyone who can spoof
 *   the console's address can take over its id at once with a new HELLO
 *   (a new association from the same address is taken as a reboot), and
 *   card tokens themselves travel in clear. The attach tokens of REDIRECT
 *   are one-time and random, but also in clear. Closing these needs keys
 *   shared with consoles (planned: an authenticated association).
 */
#ifndef SLIM_SESSIOND_CONSOLES_H
#define SLIM_SESSIOND_CONSOLES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct slim_manager;
struct slim_console;
struct slim_udp;

/* Binds the listening socket (config `listen`) and watches it on the loop. */
struct slim_udp *slim_udp_create(struct slim_manager *mgr, const char *listen);
void slim_udp_destroy(struct slim_udp *udp);
void slim_udp_send(struct slim_udp *udp, const uint8_t *buf, size_t len,
		const struct sockaddr *to, socklen_t to_len);

/*
 * One datagram from `from`, which reached us at `local` (may be NULL).
 * Everything a console sends goes through here, sockets or not.
 */
void slim_consoles_receive(struct slim_manager *mgr, const uint8_t *buf, size_t len,
		const struct sockaddr *from, socklen_t from_len,
		const struct sockaddr *local, socklen_t local_len);

void slim_console_send_redirect(struct slim_console *console, uint16_t port,
		const uint8_t *token);
/* An empty datagram of its association: "your HELLO arrived". */
void slim_console_send_empty(struct slim_console *console);

#endif
