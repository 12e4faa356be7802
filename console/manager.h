/*
 * --manager: the console's control association with the session manager
 * (protocol/session-manager.md section 1). Its own UDP socket, connected
 * to the manager, and the same life cycle as the display link (assoc.c):
 *
 *   CONNECTING: HELLO now, again after 250 ms, doubling up to 4 s, until
 *               a datagram of the association arrives (its REDIRECT);
 *   ATTACHED:   the manager says something every second (its
 *               heartbeat); 1.3 s without a word and the console asks
 *               (PING, answered at once), 2 s and it says so, 2.5 s and
 *               it goes to the next manager of its list (alone: a new
 *               association with the same one). A PING every 15 s tells
 *               the manager the console lives; its REFUSE UNKNOWN (it
 *               restarted) means HELLO again, on this association only;
 *   BUSY:       the manager refused us: HELLO every 5 s.
 *
 * A server group's manager may MOVE the console to another manager of the
 * group, naming that one's key: the association goes there, judged by that
 * key, and back to the list if it does not answer. A manager left because
 * it did not answer is named in HELLO (its key, for 15 s) so that the next
 * one does not send the console back there.
 *
 * The association is a DTLS connection in which the console proves its
 * key (its id is derived from it) and the manager proves its own, which
 * the console pins (trust.h). CARD events go here, never to the display
 * association. A REDIRECT is believed only from that connection and in
 * the current association, and is handed to the program, which points the
 * display link at it with the per-attach key it carries.
 */
#ifndef SLIM_CONSOLE_MANAGER_H
#define SLIM_CONSOLE_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "console-core.h"
#include "slim-secure.h"

struct slim_console_manager_listener {
	/* HELLO on a new association; `why` is NULL at start. */
	void (*connecting)(void *data, const char *why);
	/* The manager answered the association's HELLO. */
	void (*attached)(void *data, uint32_t assoc);
	/*
	 * The manager refused the console (enum slim_refuse_reason: PENDING
	 * until an administrator enrolls it, DENIED, BUSY); `text` is one
	 * printable line. HELLO goes again every 5 s.
	 */
	void (*refused)(void *data, uint16_t reason, const char *text);
	/*
	 * The manager at `manager` has said nothing for 2 s; the console goes
	 * to `next` in half a second unless it answers (NULL: to the same
	 * manager again, in a new association). Optional.
	 */
	void (*silent)(void *data, const char *manager, const char *next);
	/* It answered after all, in the same association. Optional. */
	void (*answered)(void *data);
	/* REDIRECT: show the picture at `addr` with `key`, saying HELLO with `token`. */
	void (*redirect)(void *data, const struct sockaddr *addr, socklen_t len,
		const uint8_t token[SLIM_ATTACH_TOKEN_LEN], const uint8_t key[SLIM_SEC_KEY_LEN]);
};

struct slim_console_manager_config {
	enum slim_sec_mode mode;
	uint16_t mtu; /* the largest UDP payload */
	/* DTLS: the console's key, and the judge of the manager's (slim_trust_check) */
	const struct slim_sec_identity *identity;
	const char *(*check_server)(void *data, const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN]);
	void *check_data;
	/*
	 * The numeric local address to send from (NULL: the kernel's choice):
	 * benchmarks' consoles on loopback, each an address as on a LAN.
	 */
	const char *source;
};

struct slim_console_manager;

/*
 * Resolves `manager` ("HOST", "HOST:PORT", "[ADDR]" or "[ADDR]:PORT"; the
 * port defaults to SLIM_SESSIOND_PORT), or a comma-separated list of them:
 * the managers of a server group, tried in order, the next when a new
 * association gets no answer in 2.5 s. `core` only lends its HELLO
 * (size, MTU, capabilities). `config` is copied; what it points to must
 * outlive the manager. NULL with a one-line reason in `err`.
 */
struct slim_console_manager *slim_console_manager_create(const char *manager,
		struct slim_console_core *core,
		const char *id, const struct slim_console_manager_config *config,
		const struct slim_console_manager_listener *listener, void *data,
		char *err, size_t err_len);
/*
 * Whether `manager` is written as slim_console_manager_create takes it,
 * resolving nothing; false with a one-line reason in `err`. Once it is,
 * create fails only for a name that does not resolve (yet) or a socket.
 */
bool slim_console_manager_check(const char *manager, char *err, size_t err_len);
/* "HOST:PORT" for `manager` as given to slim_console_manager_create (malloc'd). */
char *slim_console_manager_address_of(const char *manager);
void slim_console_manager_destroy(struct slim_console_manager *m);

/* Says the first HELLO. */
void slim_console_manager_start(struct slim_console_manager *m);
/* As slim_console_link_send_card: kept until attached, the latest per reader. */
void slim_console_manager_send_card(struct slim_console_manager *m,
		const struct slim_wire_card *card);

/*
 * A datagram from the manager's server arrived at `at_us` on another
 * association (the picture of a session there): the manager counts as heard.
 */
void slim_console_manager_heard(struct slim_console_manager *m, uint64_t at_us);

const char *slim_console_manager_address(const struct slim_console_manager *m);
int slim_console_manager_fd(const struct slim_console_manager *m);
void slim_console_manager_dispatch(struct slim_console_manager *m);
void slim_console_manager_tick(struct slim_console_manager *m, uint64_t now_us);
int slim_console_manager_timeout_ms(const struct slim_console_manager *m, uint64_t now_us);

#endif
