/*
 * libFuzzer target: the session manager's local line protocols, through the
 * code the sockets use: the greeter socket (greeter-socket.c, §3), a compositor's
 * control socket as the manager parses it (compositor-control.c, §2) and slimlandctl's
 * socket (ctl.c, §4). Each gets a socketpair whose manager end is adopted
 * the way the listener or the connect would (slim_greeter_client_create,
 * slim_session_add, slim_ctl_client_create); the input is written to the
 * other end and the event loop reads it (slim_lines_fill and the handlers).
 *
 * The input is text: split at '\n', each piece's first byte says where the
 * rest goes: 'g' the greeter client, 'c' the session's control socket, 'k'
 * slimlandctl (any other byte: its value mod 3). Lowercase appends the '\n',
 * uppercase does not, so that a line can arrive in parts. For example
 *   ghello c1
 *   clogin alice 7269676874     (to the control socket: a bad line)
 *   kdetach 1
 * The manager has two consoles, c1 (showing the session) and c2; greeter
 * compositors it starts are fakes that answer `expect` with `attached`.
 * Logins are refused at once (no PAM here). Each input gets a fresh manager.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "ctl.h"
#include "fuzz-common.h"
#include "fuzz-sessiond-fakes.h"
#include "greeter-socket.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { TO_GREETER, TO_CONTROL, TO_CTL, N_TARGETS };

static struct wl_event_loop *loop;
static struct slim_manager *mgr;
static volatile uint32_t sink;

static struct slim_console *known_console(const char *id, int n)
{
	struct slim_console *c = slim_manager_console_create(mgr, id);
	if (!c) {
		abort();
	}
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(40000) };
	a.sin_addr.s_addr = htonl(0x0a000001 + n);
	memcpy(&c->assoc.addr, &a, sizeof(a));
	c->assoc.addr_len = sizeof(a);
	c->assoc.id = FUZZ_ASSOC + n;
	slim_console_transition(c, SLIM_CONSOLE_HELLO);
	return c;
}

static int pair(int *peer)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
		abort();
	}
	*peer = sv[1];
	return sv[0];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!loop) {
		slim_log_init(SLIM_LOG_DEBUG, fuzz_quiet_log);
		loop = wl_event_loop_create();
	}
	mgr = fuzz_manager_create(loop, SLIM_ENROLL_OPEN);

	struct slim_console *c1 = known_console("c1", 0);
	known_console("c2", 1);
	int peer[N_TARGETS];
	/* a user's session, shown on c1; its compositor is what the input says */
	struct slim_session *s = slim_session_add(mgr, 0, "fuzz", (uid_t)-1, 0, -1,
		"/nonexistent", pair(&peer[TO_CONTROL]), false);
	if (!s) {
		abort();
	}
	uint32_t session_id = s->id;
	slim_console_show(c1, s);
	if (!slim_greeter_client_create(mgr, pair(&peer[TO_GREETER])) ||
			!slim_ctl_client_create(mgr, NULL, pair(&peer[TO_CTL]))) {
		abort();
	}

	size_t pos = 0;
	while (pos < size) {
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t end = nl ? (size_t)(nl - data) : size;
		uint8_t sel = data[pos];
		int target = sel == 'g' || sel == 'G' ? TO_GREETER :
			sel == 'c' || sel == 'C' ? TO_CONTROL :
			sel == 'k' || sel == 'K' ? TO_CTL : sel % N_TARGETS;
		bool newline = nl && !(sel >= 'A' && sel <= 'Z');
		size_t len = end - pos - 1 + (newline ? 1 : 0);
		/* whole, or not at all: a short write would split what the input says */
		if (len > 0 && peer[target] >= 0) {
			sink += (uint32_t)send(peer[target], data + pos + 1, len,
				MSG_NOSIGNAL | MSG_DONTWAIT);
		}
		pos = nl ? end + 1 : size;
		wl_event_loop_dispatch(loop, 0);
		/* a line can end the session: its control socket is closed then */
		if (peer[TO_CONTROL] >= 0 && !slim_manager_session(mgr, session_id)) {
			close(peer[TO_CONTROL]);
			peer[TO_CONTROL] = -1;
		}
		for (int i = 0; i < N_TARGETS; i++) {
			if (peer[i] >= 0) {
				fake_peer_drain(peer[i], i == TO_CONTROL);
			}
		}
		fake_compositors_answer();
		wl_event_loop_dispatch(loop, 0);
	}

	/* the clients see their peers hang up and go, as they would */
	for (int i = 0; i < N_TARGETS; i++) {
		if (peer[i] >= 0) {
			close(peer[i]);
		}
	}
	for (int i = 0; i < 16; i++) {
		/* what they had not read yet first (a read a dispatch), then the hang-up */
		wl_event_loop_dispatch(loop, 0);
	}
	fuzz_manager_destroy(mgr);
	return 0;
}
