/*
 * One association of the console over a connected UDP socket: the life
 * cycle that the display link (link.c) and the control association with
 * the session manager (manager.c) have in common.
 *
 *   CONNECTING: a new DTLS connection (slim-secure.h): its handshake, then
 *               HELLO, again after 250 ms, doubling up to 4 s, until a
 *               datagram of the association says the peer heard us. A
 *               handshake that fails is said (why) and tried again after
 *               1 s, doubling up to 8 s;
 *   ATTACHED:   PING every 5 s (or as set), so that a peer that forgot
 *               us (it restarted) says so and we start again;
 *   BUSY:       the peer refused us for now: HELLO every 5 s;
 *   IDLE:       no socket yet (slim_assoc_set_fd gives one).
 *
 * Every association is its own DTLS connection, and every datagram of it
 * one record: what reaches the user has been authenticated, in order of
 * arrival, replays removed. A peer that went away shows up as
 * ECONNREFUSED (the ICMP port unreachable that the connected socket
 * reports), a peer that restarted as its "forgotten" hint (cleartext,
 * believed at most every 2 s) or its close: both start over. What the
 * datagrams hold, and so which of them mean "attached", "busy" or
 * "forgotten" in the slim protocol, is the user's business: it says so
 * with the calls below.
 *
 * Card events go through here too: kept while not attached (the latest
 * per reader) and told again to every new association while the card is
 * still on its reader, since a peer that restarted knows no card.
 */
#ifndef SLIM_CONSOLE_ASSOC_H
#define SLIM_CONSOLE_ASSOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "slim-proto.h"
#include "slim-secure.h"

enum slim_assoc_state {
	SLIM_ASSOC_CONNECTING,
	SLIM_ASSOC_ATTACHED,
	SLIM_ASSOC_BUSY,
	SLIM_ASSOC_IDLE,
};

/* What the user of an association does at its turns; `data` is its own. */
struct slim_assoc_impl {
	/* A new association is being set up, before its handshake; `why` is
	 * NULL when nothing went wrong (the start, a REDIRECT). Optional. */
	void (*connecting)(void *data, const char *why);
	/*
	 * How the new connection proves itself and knows its peer: a key and a
	 * judge of the peer's, or a pre-shared key. False, with a reason for
	 * people, if it cannot be had now (tried again later).
	 */
	bool (*security)(void *data, struct slim_sec_client_config *config, char *why,
		size_t why_len);
	/* Say HELLO in association `id`. */
	void (*send_hello)(void *data, uint32_t id);
	/* Say PING, so that a peer that forgot us says so. */
	void (*send_ping)(void *data);
	/* The peer answered association `id`'s HELLO; before the kept cards go. Optional. */
	void (*attached)(void *data, uint32_t id);
	/* Send a card event; false if it did not go and is to be kept. */
	bool (*send_card)(void *data, const struct slim_wire_card *card);
	/* An authenticated datagram of the connection, and when it arrived (slim-net.h). */
	void (*datagram)(void *data, const uint8_t *buf, size_t len, uint64_t arrived_us);
	/*
	 * The peer's port is unreachable (ECONNREFUSED): true if the user
	 * went elsewhere (slim_assoc_set_fd and slim_assoc_connect), else the
	 * association starts over with the same peer. Optional.
	 */
	bool (*refused)(void *data, uint64_t now_us);
	/*
	 * The peer, for people ("the session manager at HOST:PORT"): what
	 * ended a connection is named. Optional.
	 */
	const char *(*peer)(void *data);
};

struct slim_assoc;

/*
 * Takes over `fd` (a connected UDP socket, or -1 for IDLE); `name` begins
 * its log lines and must outlive it. NULL (and `fd` closed) when out of
 * memory.
 */
struct slim_assoc *slim_assoc_create(const char *name, int fd,
		const struct slim_assoc_impl *impl, void *data);
void slim_assoc_destroy(struct slim_assoc *assoc);

/*
 * A UDP socket connected to `server` ("HOST:PORT" or "[ADDR]:PORT"), or -1
 * with a one-line reason in `err` that starts with `what` (the option).
 * `source`: the numeric local address it sends from (NULL: the kernel's
 * choice).
 */
int slim_udp_connect(const char *what, const char *server, const char *source, char *err,
		size_t err_len);
/*
 * Whether `server` is written as slim_udp_connect takes it, resolving
 * nothing: a name that does not resolve now may later (the network comes up).
 */
bool slim_udp_address_check(const char *what, const char *server, char *err, size_t err_len);
/* A UDP socket connected to `addr`, as slim_udp_connect's; -1 and errno. */
int slim_udp_connect_addr(const struct sockaddr *addr, socklen_t len, const char *source);

/* A new endpoint: closes the old socket, whose queue belongs to the old association. */
void slim_assoc_set_fd(struct slim_assoc *assoc, int fd);

/*
 * Starts a new association now: at start, or when the endpoint or what
 * HELLO presents changed (`why` says what, NULL when nothing went wrong).
 * What the old one's socket refused is forgotten.
 */
void slim_assoc_connect(struct slim_assoc *assoc, const char *why, uint64_t now_us);
/*
 * The peer forgot us or went away (`why`): a new association, unless one
 * is CONNECTING already, whose HELLO retries keep their backoff so that a
 * confused peer cannot drive a HELLO loop at network speed.
 */
void slim_assoc_restart(struct slim_assoc *assoc, const char *why, uint64_t now_us);
/* ATTACHED: a PING every `ms` (5000 unless set), the next one `ms` from now at the latest. */
void slim_assoc_set_ping_ms(struct slim_assoc *assoc, uint32_t ms, uint64_t now_us);
/* A PING now, out of turn (a peer that fell silent is asked whether it is there). */
void slim_assoc_ping(struct slim_assoc *assoc);
/* A datagram of the association that is no refusal: the HELLO got through. */
void slim_assoc_heard(struct slim_assoc *assoc, uint64_t now_us);
/* The peer refused us for now: HELLO again now and then, unchanged. */
void slim_assoc_busy(struct slim_assoc *assoc, uint64_t now_us);

/*
 * Sends a datagram (one record); nothing before the handshake is done.
 * ECONNREFUSED is acted on in slim_assoc_tick.
 */
void slim_assoc_send(struct slim_assoc *assoc, const uint8_t *buf, size_t len);
/*
 * Reads what the socket has (a bounded burst, so that other work gets its
 * turn in a flood): handshake steps, and authenticated datagrams for
 * impl->datagram.
 */
void slim_assoc_dispatch(struct slim_assoc *assoc);
/* A card event for the peer: sent now if attached, else kept. */
void slim_assoc_send_card(struct slim_assoc *assoc, const struct slim_wire_card *card);

/* Runs what is due at `now_us` (retries, pings, a refused connection). */
void slim_assoc_tick(struct slim_assoc *assoc, uint64_t now_us);
/* How long poll() may wait before slim_assoc_tick has work, in ms; -1 while IDLE. */
int slim_assoc_timeout_ms(const struct slim_assoc *assoc, uint64_t now_us);

int slim_assoc_fd(const struct slim_assoc *assoc);
enum slim_assoc_state slim_assoc_state(const struct slim_assoc *assoc);
/* The current association's number, 0 before the first. */
uint32_t slim_assoc_id(const struct slim_assoc *assoc);

#endif
