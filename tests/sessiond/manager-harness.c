/*
 * The manager's tests' harness (manager-harness.h): the fake clock its
 * timers run on, consoles as datagrams, compositors as the fake world's
 * (fake-manager.h), a manager for each test.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>
#include <cmocka.h>
#include "manager-harness.h"
#include "slim-codec.h"
#include "slim-hex.h"

struct harness t;

__attribute__((format(printf, 2, 0)))
void quiet(enum slim_log_level level, const char *fmt, va_list args)
{
	if (getenv("TEST_VERBOSE")) {
		vfprintf(stderr, fmt, args);
		fputc('\n', stderr);
	}
}

/*
 * The manager's timers: real event sources (for wl_event_source_remove),
 * never armed; their due times are on the fake clock.
 */
struct fake_timer {
	struct wl_event_source *source;
	wl_event_loop_timer_func_t func;
	void *data;
	uint64_t due_us; /* 0: disarmed */
};

static struct fake_timer timers[128];

struct wl_event_source *__real_wl_event_loop_add_timer(struct wl_event_loop *loop,
		wl_event_loop_timer_func_t func, void *data);
int __real_wl_event_source_timer_update(struct wl_event_source *source, int ms_delay);
int __real_wl_event_source_remove(struct wl_event_source *source);
struct wl_event_source *__wrap_wl_event_loop_add_timer(struct wl_event_loop *loop,
		wl_event_loop_timer_func_t func, void *data);
int __wrap_wl_event_source_timer_update(struct wl_event_source *source, int ms_delay);
int __wrap_wl_event_source_remove(struct wl_event_source *source);

static struct fake_timer *fake_timer(struct wl_event_source *source)
{
	for (size_t i = 0; i < sizeof(timers) / sizeof(timers[0]); i++) {
		if (timers[i].source == source) {
			return &timers[i];
		}
	}
	return NULL;
}

struct wl_event_source *__wrap_wl_event_loop_add_timer(struct wl_event_loop *loop,
		wl_event_loop_timer_func_t func, void *data)
{
	struct wl_event_source *source = __real_wl_event_loop_add_timer(loop, func, data);
	if (source) {
		struct fake_timer *ft = fake_timer(NULL);
		assert_non_null(ft);
		*ft = (struct fake_timer){ .source = source, .func = func, .data = data };
	}
	return source;
}

int __wrap_wl_event_source_timer_update(struct wl_event_source *source, int ms_delay)
{
	struct fake_timer *ft = fake_timer(source);
	if (!ft) {
		return __real_wl_event_source_timer_update(source, ms_delay);
	}
	ft->due_us = ms_delay > 0 ? fake.now_us + (uint64_t)ms_delay * 1000 : 0;
	if (ft->func == slim_manager_heartbeat && !fake.heartbeats) {
		ft->due_us = 0;
	}
	return 0;
}

int __wrap_wl_event_source_remove(struct wl_event_source *source)
{
	struct fake_timer *ft = fake_timer(source);
	if (ft) {
		*ft = (struct fake_timer){ 0 };
	}
	return __real_wl_event_source_remove(source);
}

/* The armed timer due first, if it is due by `by_us`. */
static struct fake_timer *next_timer(uint64_t by_us)
{
	struct fake_timer *next = NULL;
	for (size_t i = 0; i < sizeof(timers) / sizeof(timers[0]); i++) {
		struct fake_timer *ft = &timers[i];
		if (ft->source && ft->due_us && ft->due_us <= by_us &&
				(!next || ft->due_us < next->due_us)) {
			next = ft;
		}
	}
	return next;
}

/* How often ops.greeter_clear was asked to clear uid (its directory /tmp/greeter-UID). */
int times_cleared(uid_t uid)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/greeter-%u", (unsigned)uid);
	int n = 0;
	for (int i = 0; i < fake.n_cleared; i++) {
		if (fake.cleared[i].uid == uid) {
			assert_string_equal(fake.cleared[i].dir, dir);
			n++;
		}
	}
	return n;
}


/* Runs the loop until nothing is ready now: sockets, pidfds, idle callbacks. */
void settle(void)
{
	struct pollfd p = { .fd = wl_event_loop_get_fd(t.loop), .events = POLLIN };
	do {
		wl_event_loop_dispatch(t.loop, 0);
	} while (poll(&p, 1, 0) > 0);
}

/* Moves the fake clock on by ms, firing the timers as they fall due, in order. */
void advance_ms(unsigned ms)
{
	uint64_t end = fake.now_us + (uint64_t)ms * 1000;
	settle();
	struct fake_timer *ft;
	while ((ft = next_timer(end))) {
		if (ft->due_us > fake.now_us) {
			fake.now_us = ft->due_us;
		}
		ft->due_us = 0;
		ft->func(ft->data);
		settle();
	}
	fake.now_us = end;
	settle();
}

/* Runs the loop until done(), moving the fake clock on to each timer in turn. */
bool run_until(bool (*done)(void *data), void *data)
{
	settle();
	while (!done(data)) {
		struct fake_timer *ft = next_timer(UINT64_MAX);
		if (!ft) {
			return false;
		}
		advance_ms((unsigned)((ft->due_us - fake.now_us + 999) / 1000));
	}
	return true;
}

bool alive(pid_t pid)
{
	int status;
	return waitpid(pid, &status, WNOHANG) == 0;
}

bool login_done(void *data)
{
	return ((struct slim_console *)data)->login.worker == NULL;
}

/* A login at c's greeter, waited for: what the greeter would be told. */
bool login(struct slim_console *c, const char *user, const char *password,
		const char **why)
{
	if (!slim_manager_login(t.mgr, c, user, password, why)) {
		return false;
	}
	assert_non_null(c->login.worker);
	assert_true(run_until(login_done, c));
	*why = c->login.error;
	return c->login.ok;
}

/*
 * Until the child the manager ended has exited (real time: a second at
 * most), and the manager has seen it go.
 */
void wait_gone(pid_t pid)
{
	uint64_t deadline = slim_now_us() + 1000000;
	while (alive(pid) && slim_now_us() < deadline) {
		wl_event_loop_dispatch(t.loop, 5);
	}
	assert_false(alive(pid));
	settle();
}

/* The next line the manager has sent this compositor, or NULL. */
char *comp_line(struct fake_compositor *fc)
{
	settle();
	char *line = slim_lines_next(&fc->lines);
	if (!line) {
		slim_lines_fill(&fc->lines, fc->fd);
		line = slim_lines_next(&fc->lines);
	}
	return line;
}

void comp_say(struct fake_compositor *fc, const char *line)
{
	assert_true(slim_line_send(fc->fd, "%s", line));
	settle();
}

struct sockaddr_in addr_of(int n)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(40000 + n) };
	a.sin_addr.s_addr = htonl(0x0a000000 + n);
	return a;
}

/* A datagram of console n, having proved `key` (DTLS) or nothing (NULL: clear). */
void console_send_keyed(int n, uint32_t assoc, uint32_t seq, int type, const void *body,
		const uint8_t *key);

void console_send(int n, uint32_t assoc, uint32_t seq, int type, const void *body)
{
	console_send_keyed(n, assoc, seq, type, body, NULL);
}

static void deliver(int n, const uint8_t *buf, size_t len, const uint8_t *key);

void console_send_keyed(int n, uint32_t assoc, uint32_t seq, int type, const void *body,
		const uint8_t *key)
{
	uint8_t buf[256];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), assoc, true);
	if (type == SLIM_CMD_HELLO) {
		slim_put_hello(&w, body);
	} else if (type == SLIM_CMD_CARD) {
		slim_put_card(&w, body);
	} else {
		slim_put_ping(&w);
	}
	deliver(n, buf, slim_writer_finish(&w, seq, slim_now_us()), key);
}

void hello_unreached(int n, uint32_t assoc, const char *id, const uint8_t *unreached)
{
	struct slim_wire_hello h = { .version = 1, .width = 640, .height = 480, .mtu = 1400 };
	memcpy(h.console_id, id, strnlen(id, sizeof(h.console_id)));
	uint8_t buf[256];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), assoc, true);
	slim_put_hello_ext(&w, &h, &(struct slim_hello_parts){ .unreached = unreached });
	deliver(n, buf, slim_writer_finish(&w, 1, slim_now_us()), NULL);
}

static void deliver(int n, const uint8_t *buf, size_t len, const uint8_t *key)
{
	struct sockaddr_in from = addr_of(n), local = { .sin_family = AF_INET };
	local.sin_addr.s_addr = htonl(0xc0a80001);
	/* clear transport's rules: the id is HELLO's, believed from its address */
	struct slim_peer peer = {
		.conn = fake_conn(n),
		.key = key,
		.from = (struct sockaddr *)&from, .from_len = sizeof(from),
		.local = (struct sockaddr *)&local, .local_len = sizeof(local),
	};
	slim_consoles_receive(t.mgr, &peer, buf, len);
	settle();
}

void hello(int n, uint32_t assoc, const char *id)
{
	struct slim_wire_hello h = { .version = 1, .width = 640, .height = 480, .mtu = 1400 };
	memcpy(h.console_id, id, strnlen(id, sizeof(h.console_id)));
	console_send(n, assoc, 1, SLIM_CMD_HELLO, &h);
}

void card(int n, uint32_t assoc, uint32_t seq, bool insert, uint8_t id)
{
	struct slim_wire_card c = { .event = insert, .kind = 1, .len = 4 };
	c.token[0] = 0xca;
	c.token[1] = 0xfe;
	c.token[3] = id;
	console_send(n, assoc, seq, SLIM_CMD_CARD, &c);
}

/* The last datagram sent to console n of this type, or NULL. */
struct slim_cmd *last_sent(int n, uint8_t type, struct slim_cmd *cmd)
{
	for (int i = fake.n_sent - 1; i >= 0; i--) {
		if (fake.sent[i].console != n) {
			continue;
		}
		struct slim_reader r;
		struct slim_dgram hdr;
		assert_int_equal(slim_reader_init(&r, &hdr, fake.sent[i].buf, fake.sent[i].len, false,
			640, 480), SLIM_OK);
		if (slim_reader_next(&r, cmd) == SLIM_OK && cmd->type == type) {
			return cmd;
		}
	}
	return NULL;
}

/* The reason of the last REFUSE sent to console n (one must have been sent). */
uint8_t refused(int n)
{
	struct slim_cmd cmd;
	assert_non_null(last_sent(n, SLIM_CMD_REFUSE, &cmd));
	return cmd.refuse.reason;
}

/* The index in fake.sent of the first datagram to console n of this type, or -1. */
int first_sent(int n, uint8_t type)
{
	for (int i = 0; i < fake.n_sent; i++) {
		struct slim_reader r;
		struct slim_dgram hdr;
		struct slim_cmd cmd;
		if (fake.sent[i].console == n &&
				slim_reader_init(&r, &hdr, fake.sent[i].buf, fake.sent[i].len, false,
					640, 480) == SLIM_OK &&
				slim_reader_next(&r, &cmd) == SLIM_OK && cmd.type == type) {
			return i;
		}
	}
	return -1;
}

struct fake_compositor *last_comp(void)
{
	return fake.n_comps ? &fake.comps[fake.n_comps - 1] : NULL;
}

/* The compositor says hello; returns the token of the `expect` it gets. */
void comp_start(struct fake_compositor *fc, uint16_t port, const char *console)
{
	char line[64];
	snprintf(line, sizeof(line), "hello %u %d", port, fc->pid);
	comp_say(fc, line);
	char *got = comp_line(fc);
	assert_non_null(got);
	snprintf(t.last_expect, sizeof(t.last_expect), "%s", got);
	/* console ids travel in hex on the control socket (§2) */
	char want[80], hex[2 * SLIM_CONSOLE_ID_LEN + 1];
	slim_hex_encode(hex, (const uint8_t *)console, strlen(console));
	snprintf(want, sizeof(want), " %s", hex);
	assert_memory_equal(got, "expect ", 7);
	assert_non_null(strstr(got, want));
}

void attach(struct fake_compositor *fc, const char *console)
{
	char line[120], hex[2 * SLIM_CONSOLE_ID_LEN + 1];
	slim_hex_encode(hex, (const uint8_t *)console, strlen(console));
	snprintf(line, sizeof(line), "attached %s 640x480", hex);
	comp_say(fc, line);
}

static const uint8_t card_key[SLIM_SEC_KEY_LEN] = { 1, 2, 3 };

struct slim_manager *create_manager(const struct slim_config *config)
{
	return slim_manager_create(t.loop, config, "/tmp", card_key, NULL, NULL, &fake_ops, NULL);
}

/* The defaults, but every console that says HELLO is enrolled (its own tests below). */
void test_config(struct slim_config *config)
{
	slim_config_defaults(config);
	config->enroll = SLIM_ENROLL_OPEN;
}

int setup(void **state)
{
	memset(&t, 0, sizeof(t));
	memset(timers, 0, sizeof(timers));
	fake = (struct fake_world){ .processes = true, .logins = true, .keep_sent = true };
	fake.now_us = slim_now_us();
	t.loop = wl_event_loop_create();
	struct slim_config config;
	test_config(&config);
	const char *reauth = *state;
	if (reauth) {
		slim_config_parse(&config, reauth, strlen(reauth), "test");
	}
	t.mgr = create_manager(&config);
	t.mgr->greeters.check_peer = false;
	return 0;
}

int teardown(void **state)
{
	/* the manager forgets its login workers; they close their PAM sessions */
	slim_manager_destroy(t.mgr);
	fake_compositors_end();
	wl_event_loop_destroy(t.loop);
	return 0;
}

/* HELLO → greeter → REDIRECT with the `expect`ed token, repeated until attached. */
struct fake_compositor *console_on_greeter(int n, uint32_t assoc, const char *id)
{
	int before = fake.n_comps;
	hello(n, assoc, id);
	struct slim_cmd cmd;
	/* the HELLO is answered at once (an empty datagram of its association) */
	assert_true(fake.n_sent > 0);
	assert_int_equal(fake.n_comps, before + 1);
	struct fake_compositor *g = last_comp();
	assert_true(g->greeter);
	assert_string_equal(g->console_env, id);
	comp_start(g, 7000 + n, id);
	assert_non_null(last_sent(n, SLIM_CMD_REDIRECT, &cmd));
	assert_int_equal(cmd.redirect.port, 7000 + n);
	assert_int_equal(cmd.redirect.family, 4);
	struct slim_console *c = slim_manager_console(t.mgr, id);
	assert_int_equal(c->state, SLIM_CONSOLE_WAITING);
	/* repeated every 200 ms until attached */
	int sent = fake.n_sent;
	advance_ms(450);
	assert_int_equal(fake.n_sent, sent + 2);
	attach(g, id);
	assert_int_equal(c->state, SLIM_CONSOLE_GREETER);
	sent = fake.n_sent;
	advance_ms(300);
	assert_int_equal(fake.n_sent, sent);
	return g;
}

/* alice logged in at c1 with a card tapped first; returns her compositor */
struct fake_compositor *alice_with_card(void)
{
	console_on_greeter(1, 0x111, "c1");
	struct slim_console *c = slim_manager_console(t.mgr, "c1");
	card(1, 0x111, 2, true, 7);
	assert_string_equal(c->greeter.message, "Unknown card: log in to use it");
	assert_true(c->card.unknown);
	assert_int_equal(c->why, SLIM_WHY_UNKNOWN_CARD);
	const char *why;
	assert_true(login(c, "alice", "right", &why));
	struct fake_compositor *s = last_comp();
	comp_start(s, 8001, "c1");
	attach(s, "c1");
	assert_false(c->card.unknown);
	assert_int_equal(wl_list_length(&t.mgr->bindings), 1);
	return s;
}


/* Moves the manager's clock on and runs the sweep its timer would. */
void advance_s(unsigned s)
{
	advance_ms(s * 1000);
	slim_manager_console_sweep(t.mgr);
	settle();
}

void collect(void *data, const char *line)
{
	struct out *o = data;
	strcat(o->text, line);
	strcat(o->text, "\n");
}

/* What `slimlandctl REQUEST` answers now. */
const char *ctl_says(const char *request)
{
	static struct out o;
	memset(&o, 0, sizeof(o));
	slim_ctl_run(t.mgr, NULL, request, collect, &o);
	return o.text;
}

