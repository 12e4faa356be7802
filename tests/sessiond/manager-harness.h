/*
 * The session manager's state machine, driven through its API: consoles as
 * datagrams into slim_consoles_receive, compositors as real child processes
 * (for pidfds and SIGTERM) whose control sockets are socketpairs the test
 * speaks for, PAM as a fake that accepts the password "right" (the fake
 * world of fake-manager.h).
 *
 * Time is the test's: the manager's clock (ops.now) and its event loop
 * timers (wl_event_loop_add_timer and friends, wrapped at link time with
 * --wrap) run on a fake clock that advance_ms moves, firing each timer
 * as its moment comes. Only real processes exiting are waited for.
 */
#ifndef SLIM_TEST_MANAGER_HARNESS_H
#define SLIM_TEST_MANAGER_HARNESS_H

#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include "consoles.h"
#include "ctl.h"
#include "fake-manager.h"
#include "greeter-socket.h"
#include "sessions.h"
#include "slim-proto.h"
#include "state.h"

struct harness {
	struct wl_event_loop *loop;
	struct slim_manager *mgr;
	char last_expect[256]; /* the last `expect` a compositor was told */
};
extern struct harness t;

void quiet(enum slim_log_level level, const char *fmt, va_list args);

/* A manager for each test: the defaults, with every console enrolled, and `*state`'s lines. */
int setup(void **state);
int teardown(void **state);
void test_config(struct slim_config *config);
struct slim_manager *create_manager(const struct slim_config *config);

/* Runs the loop until nothing is ready now: sockets, pidfds, idle callbacks. */
void settle(void);
/* Moves the fake clock on by ms, firing the timers as they fall due, in order. */
void advance_ms(unsigned ms);
/* Moves the manager's clock on and runs the sweep its timer would. */
void advance_s(unsigned s);
/* Runs the loop until done(), moving the fake clock on to each timer in turn. */
bool run_until(bool (*done)(void *data), void *data);

bool alive(pid_t pid);
/* Until the child the manager ended has exited, and the manager has seen it go. */
void wait_gone(pid_t pid);
/* How often ops.greeter_clear was asked to clear uid (its directory /tmp/greeter-UID). */
int times_cleared(uid_t uid);

/* A login at c's greeter, waited for: what the greeter would be told. */
bool login_done(void *data);
bool login(struct slim_console *c, const char *user, const char *password, const char **why);

/* The next line the manager has sent this compositor, or NULL. */
char *comp_line(struct fake_compositor *fc);
void comp_say(struct fake_compositor *fc, const char *line);
struct fake_compositor *last_comp(void);
/* The compositor says hello, and is told to `expect` the console (t.last_expect). */
void comp_start(struct fake_compositor *fc, uint16_t port, const char *console);
void attach(struct fake_compositor *fc, const char *console);

/* Console n: its address, and its datagrams, having proved `key` (DTLS) or nothing (clear). */
struct sockaddr_in addr_of(int n);
void console_send_keyed(int n, uint32_t assoc, uint32_t seq, int type, const void *body,
		const uint8_t *key);
void console_send(int n, uint32_t assoc, uint32_t seq, int type, const void *body);
void hello(int n, uint32_t assoc, const char *id);
/* HELLO naming a manager it could not reach (SLIM_CAP_UNREACHED; NULL: none). */
void hello_unreached(int n, uint32_t assoc, const char *id, const uint8_t *unreached);
void card(int n, uint32_t assoc, uint32_t seq, bool insert, uint8_t id);
/* The last datagram sent to console n of this type, or NULL. */
struct slim_cmd *last_sent(int n, uint8_t type, struct slim_cmd *cmd);
/* The reason of the last REFUSE sent to console n (one must have been sent). */
uint8_t refused(int n);
/* The index in fake.sent of the first datagram to console n of this type, or -1. */
int first_sent(int n, uint8_t type);

/* HELLO → greeter → REDIRECT with the `expect`ed token, repeated until attached. */
struct fake_compositor *console_on_greeter(int n, uint32_t assoc, const char *id);
/* alice logged in at c1 with a card tapped first; returns her compositor */
struct fake_compositor *alice_with_card(void);

/* What `slimlandctl REQUEST` answers now. */
struct out {
	char text[32768]; /* the metrics request answers several KiB */
};
void collect(void *data, const char *line);
const char *ctl_says(const char *request);

/* Each file's tests. */
extern const struct CMUnitTest manager_consoles_tests[], manager_sessions_tests[],
	manager_admin_tests[], manager_shadow_tests[];
extern const size_t manager_consoles_tests_n, manager_sessions_tests_n, manager_admin_tests_n,
	manager_shadow_tests_n;

#endif
