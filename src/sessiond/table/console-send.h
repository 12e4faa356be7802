/*
 * What the manager says to consoles on their control associations
 * (session-manager.md §1), one datagram each through slim_manager_ops.send:
 * the table's answers, and the front's to senders it has no console for.
 */
#ifndef SLIM_SESSIOND_CONSOLE_SEND_H
#define SLIM_SESSIOND_CONSOLE_SEND_H

#include <stdint.h>
#include <sys/socket.h>
#include "slim-proto.h"

struct slim_manager;
struct slim_console;
struct slim_sec_conn;

void slim_console_send_redirect(struct slim_console *console, uint16_t port,
		const uint8_t *token, const uint8_t *key);
/* An empty datagram of its association: "your HELLO arrived". */
void slim_console_send_empty(struct slim_console *console);
/* MOVE (session-manager.md §9): the console's manager is another server's now. */
void slim_console_send_move(struct slim_console *console, const struct slim_wire_move *move);
/*
 * REFUSE UNKNOWN on `conn` in association `assoc`: the console says HELLO
 * again at once (a console waiting for enrollment, just approved).
 */
void slim_consoles_nudge(struct slim_manager *mgr, struct slim_sec_conn *conn, uint32_t assoc);
/* REFUSE reason (DENIED, ...) with `text`, outside the sequence, in its association. */
void slim_console_send_refuse(struct slim_console *console, uint16_t reason, const char *text);

/*
 * REFUSE `reason` with `text` on `conn` in association `assoc`, to the
 * sender at `to`: rate limited per source and in all, so that a refusal is
 * never a flood.
 */
void slim_manager_send_refuse(struct slim_manager *mgr, struct slim_sec_conn *conn,
		const struct sockaddr *to, uint32_t assoc, uint16_t reason, const char *text);

#endif
