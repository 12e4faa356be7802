/*
 * --manager: the console's control association with the session manager
 * (protocol/session-manager.md section 1). Its own UDP socket, connected
 * to the manager, and the same life cycle as the display link (assoc.c):
 *
 *   CONNECTING: HELLO now, again after 250 ms, doubling up to 4 s, until
 *               a datagram of the association arrives (its REDIRECT);
 *   ATTACHED:   PING every second; the manager's REFUSE UNKNOWN (it
 *               restarted) means HELLO again, on this association only;
 *   BUSY:       the manager refused us: HELLO every 5 s.
 *
 * CARD events go here, never to the display association. A REDIRECT is
 * believed only from the manager's address (the socket is connected) and
 * in the current association, and is handed to the program, which points
 * the display link at it.
 */
#ifndef SLIM_CONSOLE_MANAGER_H
#define SLIM_CONSOLE_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "console-core.h"

struct slim_manager_listener {
	/* HELLO on a new association; `why` is NULL at start. */
	void (*connecting)(void *data, const char *why);
	/* The manager answered the association's HELLO. */
	void (*attached)(void *data, uint32_t assoc);
	/* REDIRECT: show the picture at `addr`, saying HELLO with `token`. */
	void (*redirect)(void *data, const struct sockaddr *addr, socklen_t len,
		const uint8_t token[SLIM_ATTACH_TOKEN_LEN]);
};

struct slim_manager;

/*
 * Resolves `manager` ("HOST", "HOST:PORT", "[ADDR]" or "[ADDR]:PORT"; the
 * port defaults to SLIM_SESSIOND_PORT). `core` only lends its HELLO
 * (size, MTU, capabilities). NULL with a one-line reason in `err`.
 */
struct slim_manager *slim_manager_create(const char *manager, struct slim_console_core *core,
		const char *id, const struct slim_manager_listener *listener, void *data,
		char *err, size_t err_len);
void slim_manager_destroy(struct slim_manager *m);

/* Says the first HELLO. */
void slim_manager_start(struct slim_manager *m);
/* As slim_link_send_card: kept until attached, the latest per reader. */
void slim_manager_send_card(struct slim_manager *m, const struct slim_wire_card *card);

const char *slim_manager_address(const struct slim_manager *m);
int slim_manager_fd(const struct slim_manager *m);
void slim_manager_dispatch(struct slim_manager *m);
void slim_manager_tick(struct slim_manager *m, uint64_t now_us);
int slim_manager_timeout_ms(const struct slim_manager *m, uint64_t now_us);

#endif
