/*
 * The console's side of the network: one UDP socket connected to the
 * server, and the association's life cycle around the core.
 *
 *   CONNECTING: HELLO now, again after 250 ms, doubling up to 4 s, until
 *               a datagram of the association arrives;
 *   ATTACHED:   PING every 5 s, so that a server that forgot us (it
 *               restarted) says REFUSE UNKNOWN and we say HELLO again;
 *   BUSY:       another console holds the session: HELLO every 5 s;
 *   IDLE:       (--manager) no endpoint yet: the session manager's first
 *               REDIRECT names one and starts CONNECTING.
 *
 * An idle server sends nothing at all, so silence proves nothing; a
 * server that went away shows up as ECONNREFUSED (the ICMP port
 * unreachable that the connected socket reports), which starts over.
 * The life cycle itself is the one the control association shares
 * (assoc.c); what is the link's own is the core and the REDIRECTs.
 *
 * Each association is a DTLS connection with a pre-shared key: a
 * session manager's REDIRECT brings a key for that attach alone (over the
 * manager's own authenticated association); a standalone session is
 * reached with its pairing key, read from a file at every new connection.
 */
#ifndef SLIM_CONSOLE_LINK_H
#define SLIM_CONSOLE_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "console-core.h"
#include "slim-secure.h"

enum slim_console_link_state {
	SLIM_LINK_CONNECTING,
	SLIM_LINK_ATTACHED,
	SLIM_LINK_BUSY,
	SLIM_LINK_IDLE,
};

/* What the program may want to show; every member optional. */
struct slim_console_link_listener {
	/* A new association is being set up; `why` is NULL at start. */
	void (*connecting)(void *data, const char *why);
	/* The first datagram of the association arrived. */
	void (*attached)(void *data, uint32_t assoc);
	/* The server refused us (enum slim_refuse_reason); `text` is its reason,
	 * one printable line (control characters became '?'). */
	void (*refused)(void *data, uint16_t reason, const char *text);
	/* The core presented a frame. */
	void (*presented)(void *data, uint32_t frame, uint64_t applied_us);
	/* An AUDIO command of the association (slim_console_events.audio). */
	void (*audio)(void *data, const struct slim_cmd *cmd, bool again, uint64_t time_us);
};

struct slim_console_link_config {
	enum slim_sec_mode mode;
	uint16_t mtu;            /* the largest UDP payload */
	const char *pairing_key; /* --server: the session's pairing key file */
};

struct slim_console_link;

/*
 * Resolves `server` ("HOST:PORT" or "[ADDR]:PORT") and connects a socket
 * to it. On failure returns NULL with a one-line reason in `err`. `server`
 * NULL: IDLE, with no socket until slim_console_link_redirect. `config` is copied.
 */
struct slim_console_link *slim_console_link_create(const char *server,
		const struct slim_console_link_config *config,
		char *err, size_t err_len);
void slim_console_link_destroy(struct slim_console_link *link);

/*
 * The session manager's REDIRECT: the picture is at `addr`, the connection
 * there proves itself with `key` under the identity `token`, and HELLO
 * presents `token`. A new endpoint or a new token starts a new association
 * (the socket and slim_console_link_fd change with the endpoint); the same
 * endpoint and token again change nothing and return false.
 */
bool slim_console_link_redirect(struct slim_console_link *link, const struct sockaddr *addr,
		socklen_t len,
		const uint8_t token[SLIM_ATTACH_TOKEN_LEN], const uint8_t key[SLIM_SEC_KEY_LEN]);

/* The core's slim_send_fn: `data` is the link. */
void slim_console_link_send(void *data, const uint8_t *buf, size_t len);

/* Takes over the core's events and starts CONNECTING. `id` goes in HELLO. */
void slim_console_link_start(struct slim_console_link *link, struct slim_console_core *core,
		const char *id, const struct slim_console_link_listener *listener, void *data);

/*
 * A card event for the server: sent now if attached, else kept (the
 * latest per reader) and sent once attached. A card still on its reader
 * is told again to every new association.
 */
void slim_console_link_send_card(struct slim_console_link *link, const struct slim_wire_card *card);

/*
 * The console lost its picture (the display came back after a VT switch):
 * HELLO again in the same association, which the server takes as "repaint
 * everything". Until attached a HELLO is on its way anyway.
 */
void slim_console_link_request_repaint(struct slim_console_link *link);
/*
 * The console's screen changed size (`why` says how): a new association,
 * whose HELLO tells the server the size. A managed compositor knows the
 * console by the attach token it keeps presenting.
 */
void slim_console_link_reassociate(struct slim_console_link *link, const char *why);

/*
 * Input for the server: numbered, sent and kept until acknowledged while
 * attached (slim_console_core_send_input); otherwise dropped, the keys
 * held following it. False if it was dropped.
 */
bool slim_console_link_send_input(struct slim_console_link *link,
		const struct slim_wire_input *ev, size_t n);

/* The socket, to poll for input; -1 while IDLE. */
int slim_console_link_fd(const struct slim_console_link *link);
/* Reads and applies what arrived. */
void slim_console_link_dispatch(struct slim_console_link *link);
/*
 * Runs what is due at `now_us` (retries, pings, a refused connection,
 * input the server has not acknowledged, the held keys' keepalive).
 */
void slim_console_link_tick(struct slim_console_link *link, uint64_t now_us);
/* How long poll() may wait before slim_console_link_tick has work, in ms. */
int slim_console_link_timeout_ms(const struct slim_console_link *link, uint64_t now_us);

enum slim_console_link_state slim_console_link_state(const struct slim_console_link *link);
const char *slim_console_link_server(const struct slim_console_link *link);
/* When the last authenticated datagram of the association arrived (slim-net.h); 0: none. */
uint64_t slim_console_link_heard_us(const struct slim_console_link *link);

#endif
