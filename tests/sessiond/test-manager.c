/*
 * The session manager's state machine, driven through its API: consoles as
 * datagrams into slim_consoles_receive, compositors as real child processes
 * (for pidfds and SIGTERM) whose control sockets are socketpairs the test
 * speaks for, PAM as a fake that accepts the password "right".
 *
 * Time is the test's: the manager's clock (ops.now) and its event loop
 * timers (wl_event_loop_add_timer and friends, wrapped at link time with
 * --wrap) run on a fake clock that advance_ms moves, firing each timer
 * as its moment comes. Only real processes exiting are waited for.
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
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>
#include <cmocka.h>
#include "consoles.h"
#include "ctl.h"
#include "greeter-socket.h"
#include "slim-lines.h"
#include "slim-hex.h"
#include "sessions.h"
#include "slim-codec.h"
#include "state.h"

struct fake_compositor {
	bool used;
	bool greeter;
	char user[64];
	char console_env[64];
	char runtime[256]; /* its XDG_RUNTIME_DIR */
	uid_t uid;         /* the uid it runs as, a greeter's own (req->as_uid) */
	pid_t pid;
	int fd; /* the compositor's end of the control socket */
	struct slim_lines lines;
	int sent_before; /* datagrams the manager had sent when it was started */
};

struct sent {
	uint8_t buf[2048];
	size_t len;
	struct sockaddr_in to;
};

static struct {
	struct wl_event_loop *loop;
	struct slim_manager *mgr;
	struct fake_compositor comps[32];
	int n_comps;
	struct sent sent[256];
	int n_sent;
	int logins, logouts;
	uint64_t now_us; /* the manager's clock (ops.now) and its timers' */
	char last_expect[256]; /* the last `expect` a compositor was told */
	/* what ops.greeter_clear was given; it answers "gone" unless the uid lingers */
	struct {
		uid_t uid;
		char dir[256];
	} cleared[64];
	int n_cleared;
	uid_t lingering; /* a uid whose processes take a while to die (0: none) */
	bool admitted[32]; /* console n's connection was admitted (ops.admit) */
} t;

__attribute__((format(printf, 2, 0)))
static void quiet(enum slim_log_level level, const char *fmt, va_list args)
{
	if (getenv("TEST_VERBOSE")) {
		vfprintf(stderr, fmt, args);
		fputc('\n', stderr);
	}
}

static bool fake_spawn(void *data, const struct slim_spawn_request *req,
		struct slim_spawn_result *out, int *control_fd)
{
	assert_true(t.n_comps < 32);
	struct fake_compositor *fc = &t.comps[t.n_comps++];
	memset(fc, 0, sizeof(*fc));
	fc->used = true;
	fc->sent_before = t.n_sent;
	snprintf(fc->user, sizeof(fc->user), "%s", req->user);
	fc->uid = req->as_uid;
	for (char *const *e = req->env; e && *e; e++) {
		if (strncmp(*e, "SLIMLAND_CONSOLE=", 17) == 0) {
			fc->greeter = true;
			snprintf(fc->console_env, sizeof(fc->console_env), "%s", *e + 17);
		}
	}
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		/* no control socket ends here: the test's closing one must be seen */
		syscall(SYS_close_range, 3, ~0u, 0);
		for (;;) {
			pause();
		}
	}
	fc->pid = pid;
	fc->fd = sv[1];
	slim_lines_init(&fc->lines);
	out->pid = pid;
	out->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	assert_true(out->pidfd >= 0);
	snprintf(out->control_path, sizeof(out->control_path), "/nonexistent/%d", pid);
	for (char *const *e = req->env; e && *e; e++) {
		if (strncmp(*e, "XDG_RUNTIME_DIR=", 16) == 0) {
			/* a greeter's, as slim_spawn_compositor says it */
			snprintf(out->control_path, sizeof(out->control_path), "%s/slimland-control",
				*e + 16);
			snprintf(fc->runtime, sizeof(fc->runtime), "%s", *e + 16);
		}
	}
	*control_fd = sv[0];
	return true;
}

/*
 * The login worker's fake: the verdict comes from the event loop, as the
 * real one's does, and the "compositor" is a fake_spawn one.
 */
struct slim_login {
	struct wl_event_source *idle;
	char user[64];
	bool right;
	bool started;
	struct slim_login_callbacks cb;
	void *data;
};

static void fake_login_run(void *data)
{
	struct slim_login *l = data;
	wl_event_source_remove(l->idle);
	l->idle = NULL;
	if (!l->right) {
		l->cb.authenticated(l->data, "Wrong password");
		free(l);
		return;
	}
	t.logins++;
	if (!l->cb.authenticated(l->data, NULL)) {
		t.logouts++; /* the worker ends PAM there */
		free(l);
		return;
	}
	struct slim_spawn_request req = { .user = l->user };
	struct slim_spawn_result res = { .pid = -1, .pidfd = -1 };
	int control_fd = -1;
	fake_spawn(NULL, &req, &res, &control_fd);
	l->started = true;
	/* l belongs to the manager's session from here on: not touched again */
	l->cb.started(l->data, &res, control_fd);
}

static struct slim_login *fake_login(void *data, struct wl_event_loop *loop,
		const struct slim_login_request *req,
		const struct slim_login_callbacks *cb, void *cb_data)
{
	struct slim_login *l = calloc(1, sizeof(*l));
	assert_non_null(l);
	snprintf(l->user, sizeof(l->user), "%s", req->user);
	l->right = strcmp(req->password, "right") == 0;
	l->cb = *cb;
	l->data = cb_data;
	l->idle = wl_event_loop_add_idle(loop, fake_login_run, l);
	assert_non_null(l->idle);
	return l;
}

static void fake_login_cancel(void *data, struct slim_login *l)
{
	if (l->idle) {
		wl_event_source_remove(l->idle);
	}
	if (l->started) {
		t.logouts++; /* the worker closes the PAM session */
	}
	free(l);
}

static struct sockaddr_in addr_of(int n);

/*
 * Console n's connection, as the secure transport would hand it over: the
 * manager never looks inside one, only gives it back to send.
 */
static struct slim_sec_conn *conn_of(int n)
{
	return (struct slim_sec_conn *)(uintptr_t)(0x1000 + n);
}

static void fake_send(void *data, struct slim_sec_conn *conn, const uint8_t *buf, size_t len)
{
	assert_true(t.n_sent < 256);
	assert_true(len <= sizeof(t.sent[0].buf));
	struct sent *s = &t.sent[t.n_sent++];
	memcpy(s->buf, buf, len);
	s->len = len;
	s->to = addr_of((int)((uintptr_t)conn - 0x1000));
}

static void fake_admit(void *data, struct slim_sec_conn *conn)
{
	size_t n = (size_t)((uintptr_t)conn - 0x1000);
	assert_true(n < sizeof(t.admitted) / sizeof(t.admitted[0]));
	t.admitted[n] = true;
}

static uint64_t fake_now(void *data)
{
	return t.now_us;
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
	ft->due_us = ms_delay > 0 ? t.now_us + (uint64_t)ms_delay * 1000 : 0;
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

static bool fake_greeter_clear(void *data, uid_t uid, const char *runtime_dir)
{
	assert_true(t.n_cleared < 64);
	t.cleared[t.n_cleared].uid = uid;
	snprintf(t.cleared[t.n_cleared++].dir, sizeof(t.cleared[0].dir), "%s", runtime_dir);
	return uid != t.lingering;
}

/* How often ops.greeter_clear was asked to clear uid (its directory /tmp/greeter-UID). */
static int times_cleared(uid_t uid)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/greeter-%u", (unsigned)uid);
	int n = 0;
	for (int i = 0; i < t.n_cleared; i++) {
		if (t.cleared[i].uid == uid) {
			assert_string_equal(t.cleared[i].dir, dir);
			n++;
		}
	}
	return n;
}

static const struct slim_manager_ops ops = {
	.spawn = fake_spawn,
	.login = fake_login,
	.login_cancel = fake_login_cancel,
	.send = fake_send,
	.admit = fake_admit,
	.now = fake_now,
	.greeter_clear = fake_greeter_clear,
};

/* Runs the loop until nothing is ready now: sockets, pidfds, idle callbacks. */
static void settle(void)
{
	struct pollfd p = { .fd = wl_event_loop_get_fd(t.loop), .events = POLLIN };
	do {
		wl_event_loop_dispatch(t.loop, 0);
	} while (poll(&p, 1, 0) > 0);
}

/* Moves the fake clock on by ms, firing the timers as they fall due, in order. */
static void advance_ms(unsigned ms)
{
	uint64_t end = t.now_us + (uint64_t)ms * 1000;
	settle();
	struct fake_timer *ft;
	while ((ft = next_timer(end))) {
		if (ft->due_us > t.now_us) {
			t.now_us = ft->due_us;
		}
		ft->due_us = 0;
		ft->func(ft->data);
		settle();
	}
	t.now_us = end;
	settle();
}

/* Runs the loop until done(), moving the fake clock on to each timer in turn. */
static bool run_until(bool (*done)(void *data), void *data)
{
	settle();
	while (!done(data)) {
		struct fake_timer *ft = next_timer(UINT64_MAX);
		if (!ft) {
			return false;
		}
		advance_ms((unsigned)((ft->due_us - t.now_us + 999) / 1000));
	}
	return true;
}

static bool alive(pid_t pid)
{
	int status;
	return waitpid(pid, &status, WNOHANG) == 0;
}

static bool login_done(void *data)
{
	return ((struct slim_console *)data)->login.worker == NULL;
}

/* A login at c's greeter, waited for: what the greeter would be told. */
static bool login(struct slim_console *c, const char *user, const char *password,
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
static void wait_gone(pid_t pid)
{
	uint64_t deadline = slim_now_us() + 1000000;
	while (alive(pid) && slim_now_us() < deadline) {
		wl_event_loop_dispatch(t.loop, 5);
	}
	assert_false(alive(pid));
	settle();
}

/* The next line the manager has sent this compositor, or NULL. */
static char *comp_line(struct fake_compositor *fc)
{
	settle();
	char *line = slim_lines_next(&fc->lines);
	if (!line) {
		slim_lines_fill(&fc->lines, fc->fd);
		line = slim_lines_next(&fc->lines);
	}
	return line;
}

static void comp_say(struct fake_compositor *fc, const char *line)
{
	assert_true(slim_line_send(fc->fd, "%s", line));
	settle();
}

static struct sockaddr_in addr_of(int n)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(40000 + n) };
	a.sin_addr.s_addr = htonl(0x0a000000 + n);
	return a;
}

/* A datagram of console n, having proved `key` (DTLS) or nothing (NULL: clear). */
static void console_send_keyed(int n, uint32_t assoc, uint32_t seq, int type, const void *body,
		const uint8_t *key);

static void console_send(int n, uint32_t assoc, uint32_t seq, int type, const void *body)
{
	console_send_keyed(n, assoc, seq, type, body, NULL);
}

static void console_send_keyed(int n, uint32_t assoc, uint32_t seq, int type, const void *body,
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
	size_t len = slim_writer_finish(&w, seq, slim_now_us());
	struct sockaddr_in from = addr_of(n), local = { .sin_family = AF_INET };
	local.sin_addr.s_addr = htonl(0xc0a80001);
	/* clear transport's rules: the id is HELLO's, believed from its address */
	struct slim_peer peer = {
		.conn = conn_of(n),
		.key = key,
		.from = (struct sockaddr *)&from, .from_len = sizeof(from),
		.local = (struct sockaddr *)&local, .local_len = sizeof(local),
	};
	slim_consoles_receive(t.mgr, &peer, buf, len);
	settle();
}

static void hello(int n, uint32_t assoc, const char *id)
{
	struct slim_wire_hello h = { .version = 1, .width = 640, .height = 480, .mtu = 1400 };
	memcpy(h.console_id, id, strnlen(id, sizeof(h.console_id)));
	console_send(n, assoc, 1, SLIM_CMD_HELLO, &h);
}

static void card(int n, uint32_t assoc, uint32_t seq, bool insert, uint8_t id)
{
	struct slim_wire_card c = { .event = insert, .kind = 1, .len = 4 };
	c.token[0] = 0xca;
	c.token[1] = 0xfe;
	c.token[3] = id;
	console_send(n, assoc, seq, SLIM_CMD_CARD, &c);
}

/* The last datagram sent to console n of this type, or NULL. */
static struct slim_cmd *last_sent(int n, uint8_t type, struct slim_cmd *cmd)
{
	struct sockaddr_in a = addr_of(n);
	for (int i = t.n_sent - 1; i >= 0; i--) {
		if (t.sent[i].to.sin_addr.s_addr != a.sin_addr.s_addr) {
			continue;
		}
		struct slim_reader r;
		struct slim_dgram hdr;
		assert_int_equal(slim_reader_init(&r, &hdr, t.sent[i].buf, t.sent[i].len, false,
			640, 480), SLIM_OK);
		if (slim_reader_next(&r, cmd) == SLIM_OK && cmd->type == type) {
			return cmd;
		}
	}
	return NULL;
}

/* The reason of the last REFUSE sent to console n (one must have been sent). */
static uint8_t refused(int n)
{
	struct slim_cmd cmd;
	assert_non_null(last_sent(n, SLIM_CMD_REFUSE, &cmd));
	return cmd.refuse.reason;
}

/* The index in t.sent of the first datagram to console n of this type, or -1. */
static int first_sent(int n, uint8_t type)
{
	struct sockaddr_in a = addr_of(n);
	for (int i = 0; i < t.n_sent; i++) {
		struct slim_reader r;
		struct slim_dgram hdr;
		struct slim_cmd cmd;
		if (t.sent[i].to.sin_addr.s_addr == a.sin_addr.s_addr &&
				slim_reader_init(&r, &hdr, t.sent[i].buf, t.sent[i].len, false,
					640, 480) == SLIM_OK &&
				slim_reader_next(&r, &cmd) == SLIM_OK && cmd.type == type) {
			return i;
		}
	}
	return -1;
}

static struct fake_compositor *last_comp(void)
{
	return t.n_comps ? &t.comps[t.n_comps - 1] : NULL;
}

/* The compositor says hello; returns the token of the `expect` it gets. */
static void comp_start(struct fake_compositor *fc, uint16_t port, const char *console)
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

static void attach(struct fake_compositor *fc, const char *console)
{
	char line[120], hex[2 * SLIM_CONSOLE_ID_LEN + 1];
	slim_hex_encode(hex, (const uint8_t *)console, strlen(console));
	snprintf(line, sizeof(line), "attached %s 640x480", hex);
	comp_say(fc, line);
}

static const uint8_t card_key[SLIM_SEC_KEY_LEN] = { 1, 2, 3 };

static struct slim_manager *create_manager(const struct slim_config *config)
{
	return slim_manager_create(t.loop, config, "/tmp", card_key, NULL, NULL, &ops, NULL);
}

/* The defaults, but every console that says HELLO is enrolled (its own tests below). */
static void test_config(struct slim_config *config)
{
	slim_config_defaults(config);
	config->enroll = SLIM_ENROLL_OPEN;
}

static int setup(void **state)
{
	memset(&t, 0, sizeof(t));
	memset(timers, 0, sizeof(timers));
	t.now_us = slim_now_us();
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

static int teardown(void **state)
{
	/* the manager forgets its login workers; they close their PAM sessions */
	slim_manager_destroy(t.mgr);
	for (int i = 0; i < t.n_comps; i++) {
		kill(t.comps[i].pid, SIGKILL);
		waitpid(t.comps[i].pid, NULL, 0);
		close(t.comps[i].fd);
	}
	wl_event_loop_destroy(t.loop);
	return 0;
}

/* HELLO → greeter → REDIRECT with the `expect`ed token, repeated until attached. */
static struct fake_compositor *console_on_greeter(int n, uint32_t assoc, const char *id)
{
	int before = t.n_comps;
	hello(n, assoc, id);
	struct slim_cmd cmd;
	/* the HELLO is answered at once (an empty datagram of its association) */
	assert_true(t.n_sent > 0);
	assert_int_equal(t.n_comps, before + 1);
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
	int sent = t.n_sent;
	advance_ms(450);
	assert_int_equal(t.n_sent, sent + 2);
	attach(g, id);
	assert_int_equal(c->state, SLIM_CONSOLE_GREETER);
	sent = t.n_sent;
	advance_ms(300);
	assert_int_equal(t.n_sent, sent);
	return g;
}

static void test_greeter_and_login(void **state)
{
	struct fake_compositor *g = console_on_greeter(1, 0x111, "c1");
	struct slim_console *c = slim_manager_console(t.mgr, "c1");
	const char *why = NULL;
	assert_false(login(c, "alice", "wrong", &why));
	assert_string_equal(why, "Wrong password");
	assert_false(login(c, "slimland-greeter", "right", &why));
	assert_true(login(c, "alice", "right", &why));
	struct fake_compositor *s = last_comp();
	assert_false(s->greeter);
	assert_string_equal(s->user, "alice");
	/*
	 * The greeter is not told to let go of the console: it shows "Starting
	 * your session…" until the session has the console, and is ended then.
	 */
	char *line = comp_line(g);
	assert_null(line);
	assert_true(alive(g->pid));
	comp_start(s, 8001, "c1");
	attach(s, "c1");
	assert_int_equal(c->state, SLIM_CONSOLE_SESSION);
	/* the greeter is done: SIGTERM, and its exit (pidfd) takes it off the table */
	wait_gone(g->pid);
	assert_null(c->greeter.session);
	/* a second login by alice elsewhere shows the same session */
	struct fake_compositor *g2 = console_on_greeter(2, 0x222, "c2");
	(void)g2;
	struct slim_console *c2 = slim_manager_console(t.mgr, "c2");
	int comps = t.n_comps;
	assert_true(login(c2, "alice", "right", &why));
	assert_int_equal(t.n_comps, comps + 1); /* c1's new greeter, no new session */
	assert_true(last_comp()->greeter);
	assert_string_equal(last_comp()->console_env, "c1");
	line = comp_line(s);
	assert_non_null(line);
	assert_memory_equal(line, "expect ", 7);
	assert_non_null(strstr(line, " 6332")); /* "c2" in hex */
	assert_ptr_equal(c->shows, c->greeter.session);
}

/* alice logged in at c1 with a card tapped first; returns her compositor */
static struct fake_compositor *alice_with_card(void)
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

static void test_cards(void **state)
{
	struct fake_compositor *s = alice_with_card();
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	struct slim_session *session = c1->shows;
	console_on_greeter(2, 0x222, "c2");
	struct slim_console *c2 = slim_manager_console(t.mgr, "c2");
	/* the card at c2: the session moves there, c1 goes to a greeter */
	int comps = t.n_comps;
	t.n_sent = 0;
	card(2, 0x222, 2, true, 7);
	assert_ptr_equal(c2->shows, session);
	assert_int_equal(c1->why, SLIM_WHY_MOVED);
	assert_int_equal(t.n_comps, comps + 1);
	/* c2's REDIRECT left before c1's greeter compositor was started */
	struct fake_compositor *g1 = last_comp();
	assert_true(g1->greeter);
	assert_string_equal(g1->console_env, "c1");
	int redirect = first_sent(2, SLIM_CMD_REDIRECT);
	assert_true(redirect >= 0);
	assert_true(redirect < g1->sent_before);
	assert_ptr_equal(c1->shows, c1->greeter.session);
	assert_ptr_equal(c1->greeter.session->console, c1);
	char *line = comp_line(s);
	assert_non_null(line);
	assert_non_null(strstr(line, " 6332")); /* "c2" in hex */
	struct slim_cmd cmd;
	assert_non_null(last_sent(2, SLIM_CMD_REDIRECT, &cmd));
	assert_int_equal(cmd.redirect.port, 8001);
	char hex[33];
	slim_hex_encode(hex, cmd.redirect.token, 16);
	assert_non_null(strstr(line, hex));
	attach(s, "c2");
	assert_int_equal(c2->state, SLIM_CONSOLE_SESSION);
	/* the same CARD datagram again (a replay) does nothing */
	int sent = t.n_sent;
	card(2, 0x222, 2, true, 7);
	assert_int_equal(t.n_sent, sent);
	/* removal: c2 goes to the greeter, the session keeps running, detached */
	card(2, 0x222, 3, false, 7);
	assert_int_equal(c2->why, SLIM_WHY_CARD_REMOVED);
	assert_null(session->console);
	assert_true(alive(s->pid));
	line = comp_line(s);
	assert_non_null(line);
	assert_string_equal(line, "detach");
	/* the compositor exits: its token is freed, nothing crashes */
	kill(s->pid, SIGTERM);
	wait_gone(s->pid);
	assert_null(slim_manager_session(t.mgr, 2));
	assert_int_equal(wl_list_length(&t.mgr->bindings), 0);
	assert_int_equal(t.logouts, 1);
}

static void test_forgery(void **state)
{
	alice_with_card();
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	struct slim_session *session = c1->shows;
	console_on_greeter(2, 0x222, "c2");
	struct slim_console *c2 = slim_manager_console(t.mgr, "c2");
	/* a CARD from c2's address with a wrong association: refused, nothing moves */
	card(2, 0x999, 5, true, 7);
	struct slim_cmd cmd;
	assert_int_equal(refused(2), SLIM_REFUSE_UNKNOWN);
	assert_ptr_equal(c1->shows, session);
	/* c2's association from another address: refused too */
	t.n_sent = 0;
	card(3, 0x222, 5, true, 7);
	assert_non_null(last_sent(3, SLIM_CMD_REFUSE, &cmd));
	assert_ptr_equal(c1->shows, session);
	/* a HELLO claiming c1 from elsewhere while c1 is alive: BUSY */
	hello(3, 0x333, "c1");
	assert_int_equal(refused(3), SLIM_REFUSE_BUSY);
	assert_int_equal(c1->assoc.id, 0x111);
	/* after 10 s of silence the new address takes it over */
	c1->heard.last_us -= SLIM_CONSOLE_TAKEOVER_US + 1;
	hello(3, 0x333, "c1");
	assert_int_equal(c1->assoc.id, 0x333);
	assert_int_equal(ntohs(((struct sockaddr_in *)&c1->assoc.addr)->sin_port), 40003);
	(void)c2;
	/* a PING of an unknown association is answered REFUSE UNKNOWN */
	t.n_sent = 0;
	console_send(4, 0x444, 2, SLIM_CMD_PING, NULL);
	assert_int_equal(refused(4), SLIM_REFUSE_UNKNOWN);
}

static void test_reauth(void **state)
{
	struct fake_compositor *s = alice_with_card();
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	struct slim_session *session = c1->shows;
	card(1, 0x111, 3, false, 7);
	assert_null(session->console);
	comp_line(s); /* detach */
	card(1, 0x111, 4, true, 7);
	assert_int_equal(c1->why, SLIM_WHY_REAUTH);
	assert_string_equal(c1->greeter.message, "Enter your password to continue");
	assert_ptr_equal(c1->card.reauth, session);
	assert_ptr_equal(c1->shows, c1->greeter.session);
	const char *why;
	assert_false(login(c1, "alice", "wrong", &why));
	int comps = t.n_comps;
	assert_true(login(c1, "alice", "right", &why));
	assert_int_equal(t.n_comps, comps);
	assert_ptr_equal(c1->shows, session);
	char *line = comp_line(s);
	assert_non_null(line);
	assert_memory_equal(line, "expect ", 7);
}

/* reauth = idle:60, with the clock moved by hand rather than waited for */
static void test_reauth_idle(void **state)
{
	const uint64_t two_minutes = 120 * 1000000ull;
	struct fake_compositor *s = alice_with_card();
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	struct slim_session *session = c1->shows;
	console_on_greeter(2, 0x222, "c2");
	struct slim_console *c2 = slim_manager_console(t.mgr, "c2");
	/* shown with a video playing: in use however long nobody types */
	comp_say(s, "inhibit 1");
	session->active_us -= two_minutes;
	card(2, 0x222, 2, true, 7);
	assert_ptr_equal(c2->shows, session);
	/* the video stopped two minutes ago: idle since */
	comp_say(s, "inhibit 0");
	session->active_us -= two_minutes;
	card(1, 0x111, 3, true, 7);
	assert_int_equal(c1->why, SLIM_WHY_REAUTH);
	assert_ptr_equal(c1->card.reauth, session);
	assert_ptr_equal(c2->shows, session);
	/* someone typed at c2 since: no password */
	comp_say(s, "active");
	card(1, 0x111, 4, true, 7);
	assert_ptr_equal(c1->shows, session);
	/* detached, a video playing into nobody's screen is not use */
	card(1, 0x111, 5, false, 7);
	assert_null(session->console);
	comp_say(s, "inhibit 1");
	session->active_us -= two_minutes;
	card(1, 0x111, 6, true, 7);
	assert_int_equal(c1->why, SLIM_WHY_REAUTH);
	/* what the compositor says is checked like every line */
	comp_say(s, "inhibit 2");
	comp_say(s, "active now");
	assert_true(session->inhibited);
}

static void test_control_closed(void **state)
{
	struct fake_compositor *s = alice_with_card();
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	int comps = t.n_comps;
	close(s->fd);
	s->fd = -1;
	settle();
	/* gone from the table, SIGTERMed, tokens freed, the console on a new greeter */
	assert_int_equal(wl_list_length(&t.mgr->bindings), 0);
	assert_int_equal(c1->why, SLIM_WHY_SESSION_ENDED);
	assert_int_equal(t.n_comps, comps + 1);
	wait_gone(s->pid);
}

static pid_t paused_child(void)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		for (;;) {
			pause();
		}
	}
	return pid;
}

static bool fd_closed(int fd)
{
	return fcntl(fd, F_GETFD) < 0 && errno == EBADF;
}

/*
 * A compositor whose control socket or exit the manager cannot watch (epoll
 * takes no memfd) is not added: it is ended, and the fds it came with are
 * closed, as slim_session_add promises.
 */
static void test_unwatchable(void **state)
{
	int sessions = wl_list_length(&t.mgr->sessions);
	pid_t pid = paused_child();
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int control = memfd_create("not a socket", MFD_CLOEXEC);
	assert_true(pidfd >= 0 && control >= 0);
	assert_null(slim_session_add(t.mgr, 0, "alice", getuid(), pid, pidfd, NULL, control,
		false));
	assert_true(fd_closed(pidfd) && fd_closed(control));
	assert_int_equal(waitpid(pid, NULL, 0), pid); /* SIGTERMed */

	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	int not_pidfd = memfd_create("not a pidfd", MFD_CLOEXEC);
	assert_null(slim_session_add(t.mgr, 0, "alice", getuid(), -1, not_pidfd, NULL, sv[0],
		false));
	assert_true(fd_closed(not_pidfd) && fd_closed(sv[0]));
	close(sv[1]);
	assert_int_equal(wl_list_length(&t.mgr->sessions), sessions);
}

static void test_detached_timeout(void **state)
{
	struct fake_compositor *s = alice_with_card();
	t.mgr->config.detached_timeout_s = 1;
	card(1, 0x111, 3, false, 7);
	advance_ms(999);
	assert_true(alive(s->pid));
	advance_ms(1);
	wait_gone(s->pid);
}

/* Moves the manager's clock on and runs the sweep its timer would. */
static void advance_s(unsigned s)
{
	advance_ms(s * 1000);
	slim_manager_console_sweep(t.mgr);
	settle();
}

struct out {
	char text[4096];
};

static void collect(void *data, const char *line)
{
	struct out *o = data;
	strcat(o->text, line);
	strcat(o->text, "\n");
}

/* What `slimlandctl REQUEST` answers now. */
static const char *ctl_says(const char *request)
{
	static struct out o;
	memset(&o, 0, sizeof(o));
	slim_ctl_run(t.mgr, NULL, request, collect, &o);
	return o.text;
}

/*
 * A report line of the compositor's (`audio`, `link`): kept for the
 * console shown and listed by `slimlandctl WORD` as `listed`; each of the
 * bad lines changes nothing; a report of another console is not listed.
 */
static struct slim_session *check_report(const char *word, const char *good,
		const char *listed, const char *const *bad, const char *other)
{
	struct fake_compositor *s = alice_with_card();
	struct slim_session *session = slim_manager_console(t.mgr, "c1")->shows;
	char prefix[32], want[160];
	snprintf(prefix, sizeof(prefix), "%s c1", word);
	assert_null(strstr(ctl_says(word), prefix));
	comp_say(s, good);
	snprintf(want, sizeof(want), "%s c1 %u %s\n", word, session->id, listed);
	assert_non_null(strstr(ctl_says(word), want));
	for (; *bad; bad++) {
		comp_say(s, *bad);
	}
	assert_non_null(strstr(ctl_says(word), want));
	comp_say(s, other);
	snprintf(prefix, sizeof(prefix), "%s c", word);
	assert_null(strstr(ctl_says(word), prefix));
	return session;
}

/* `audio` lines: how sound fares, listed by `slimlandctl audio`. */
static void test_audio_report(void **state)
{
	static const char *const bad[] = {
		"audio 6331 mp3 64 30 0 0", "audio 6331 opus 64 30 1001 0",
		"audio 6331 opus 64 30 0", "audio zz opus 64 30 0 0", NULL,
	};
	struct slim_session *session = check_report("audio", "audio 6331 opus 64 30 52 3",
		"opus 64 30 5.2 0.3", bad, "audio 6332 pcm 1536 20 0 0");
	assert_string_equal(session->audio.codec, "pcm");
}

/* `link` lines: the pacer's view of the link, listed by `slimlandctl link`. */
static void test_link_report(void **state)
{
	static const char *const bad[] = {
		"link 6331 1900 1805 1200 23450 3000 7",   /* minimum above the round trip */
		"link 6331 1900 1805 23450 1200 3000",      /* a field short */
		"link 6331 1900 1805 23450 1200 3000 -7",
		"link 6331 999999999 0 23450 1200 3000 7", /* past any link */
		"link zz 1900 1805 23450 1200 3000 7", NULL,
	};
	struct slim_session *session = check_report("link", "link 6331 1900 1805 23450 1200 3000 7",
		"1900 1805 23.450 1.200 3000 7", bad, "link 6332 0 0 300 200 0 0");
	assert_int_equal(session->net.rtt_us, 300);
}

static void test_console_timeout(void **state)
{
	assert_int_equal(t.mgr->config.console_timeout_s, 30);
	struct fake_compositor *s = alice_with_card();
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	struct slim_session *session = c1->shows;
	struct fake_compositor *g2 = console_on_greeter(2, 0x222, "c2");
	/* a forged HELLO with an invented id: a greeter is started for it */
	int comps = t.n_comps;
	hello(3, 0x333, "forged");
	assert_int_equal(t.n_comps, comps + 1);
	struct fake_compositor *g3 = last_comp();
	assert_string_equal(g3->console_env, "forged");
	assert_true(alive(g3->pid));

	/* 20 s on, c2 PINGs; nothing is due yet */
	advance_s(20);
	int sent = t.n_sent;
	console_send(2, 0x222, 3, SLIM_CMD_PING, NULL);
	/* answered, with no more than it carried: a console tells a silent manager by it */
	assert_int_equal(t.n_sent, sent + 1);
	assert_int_equal(ntohs(t.sent[sent].to.sin_port), ntohs(addr_of(2).sin_port));
	assert_true(t.sent[sent].len <= sizeof(struct slim_wire_dgram) + 4);
	assert_int_equal(wl_list_length(&t.mgr->consoles), 3);
	assert_false(c1->heard.away);

	/* 35 s: the silent console on a greeter is forgotten, its greeter ended */
	advance_s(15);
	assert_null(slim_manager_console(t.mgr, "forged"));
	wait_gone(g3->pid);
	/* the one showing a session is only marked away: the session keeps it */
	assert_ptr_equal(slim_manager_console(t.mgr, "c1"), c1);
	assert_true(c1->heard.away);
	struct out o = { 0 };
	slim_ctl_run(t.mgr, NULL, "list", collect, &o);
	assert_non_null(strstr(o.text, "console c1 10.0.0.1:40001 away "));
	assert_ptr_equal(c1->shows, session);
	assert_ptr_equal(session->console, c1);
	assert_int_equal(c1->state, SLIM_CONSOLE_SESSION);
	assert_true(alive(s->pid));
	assert_null(comp_line(s)); /* no detach */
	assert_true(alive(g2->pid));
	assert_non_null(slim_manager_console(t.mgr, "c2"));

	/* c1 is heard again: no longer away, still on its session */
	console_send(1, 0x111, 5, SLIM_CMD_PING, NULL);
	assert_false(c1->heard.away);
	assert_ptr_equal(c1->shows, session);

	/* 35 s more: c2 (on its greeter) is forgotten; c1 away again */
	advance_s(35);
	assert_null(slim_manager_console(t.mgr, "c2"));
	wait_gone(g2->pid);
	assert_true(c1->heard.away);
	assert_true(alive(s->pid));

	/* a forgotten console that comes back is new: HELLO, greeter */
	comps = t.n_comps;
	hello(2, 0x2222, "c2");
	assert_non_null(slim_manager_console(t.mgr, "c2"));
	assert_int_equal(t.n_comps, comps + 1);
	assert_true(last_comp()->greeter);
}

/*
 * A HELLO over SLIM_MAX_SCREEN_PIXELS is refused before anything changes; a
 * console that says goodbye is gone at once, as if silent for
 * console_timeout; a greeter gone takes its runtime directory along.
 */
static void test_goodbye_and_size(void **state)
{
	struct fake_compositor *s = alice_with_card();
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	struct fake_compositor *g1 = &t.comps[0];
	struct fake_compositor *g2 = console_on_greeter(2, 0x222, "c2");
	struct slim_console *c2 = slim_manager_console(t.mgr, "c2");
	int comps = t.n_comps, consoles = wl_list_length(&t.mgr->consoles);
	/*
	 * c1's greeter ended when alice's session took the console: its uid
	 * was cleared (as it was taken, and as it ended), its directory with it
	 */
	wait_gone(g1->pid);
	assert_int_equal(times_cleared(g1->uid), 2);
	assert_int_equal(slim_uid_pool_state(&t.mgr->greeters.uids, g1->uid), SLIM_UID_FREE);

	/* 8192x8192, a new console and a known one: refused, no greeter, no change */
	struct slim_wire_hello h = { .version = 1, .width = 8192, .height = 8192, .mtu = 1400 };
	memcpy(h.console_id, "huge", 4);
	console_send(3, 0x333, 1, SLIM_CMD_HELLO, &h);
	assert_int_equal(refused(3), SLIM_REFUSE_TOO_LARGE);
	assert_null(slim_manager_console(t.mgr, "huge"));
	memset(h.console_id, 0, sizeof(h.console_id));
	memcpy(h.console_id, "c2", 2);
	h.width = 3841 * 2; /* one pixel a row over two 4K heads */
	h.height = 2160;
	console_send(2, 0x2223, 1, SLIM_CMD_HELLO, &h);
	assert_int_equal(refused(2), SLIM_REFUSE_TOO_LARGE);
	assert_int_equal(c2->assoc.id, 0x222);
	assert_int_equal(c2->assoc.width, 640);
	assert_int_equal(t.n_comps, comps);
	assert_int_equal(wl_list_length(&t.mgr->consoles), consoles);
	/* two 4K heads exactly: served */
	h.width = 3840 * 2;
	console_send(2, 0x2224, 1, SLIM_CMD_HELLO, &h);
	assert_int_equal(c2->assoc.id, 0x2224);
	assert_int_equal(c2->assoc.width, 3840 * 2);

	/* c2 (on its greeter) says goodbye: forgotten now, its greeter ended and cleaned up */
	slim_consoles_closed(t.mgr, conn_of(2), true);
	assert_null(slim_manager_console(t.mgr, "c2"));
	wait_gone(g2->pid);
	assert_int_equal(times_cleared(g2->uid), 2);
	assert_int_equal(slim_uid_pool_state(&t.mgr->greeters.uids, g2->uid), SLIM_UID_FREE);

	/* c1 (on alice's session) says goodbye: away, the session keeps it and runs on */
	slim_consoles_closed(t.mgr, conn_of(1), true);
	assert_ptr_equal(slim_manager_console(t.mgr, "c1"), c1);
	assert_true(c1->heard.away);
	assert_false(c1->heard.known);
	/* its compositor then reports it gone: no greeter is started for a console that quit */
	comps = t.n_comps;
	char line[120], hex[2 * SLIM_CONSOLE_ID_LEN + 1];
	slim_hex_encode(hex, (const uint8_t *)"c1", 2);
	snprintf(line, sizeof(line), "detached %s", hex);
	comp_say(s, line);
	assert_int_equal(t.n_comps, comps);
	assert_true(alive(s->pid));

	/* a connection closed without a goodbye (replaced, idle) forgets nothing */
	console_on_greeter(4, 0x444, "c4");
	slim_consoles_closed(t.mgr, conn_of(4), false);
	assert_non_null(slim_manager_console(t.mgr, "c4"));
}

/* What a greeter client hears, through its end of the socket: "" for nothing. */
static const char *client_heard(int fd)
{
	static char buf[256];
	settle();
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* A greeter client that says hello twice belongs to the second console only. */
static void test_greeter_hello_twice(void **state)
{
	struct slim_console *c1 = slim_manager_console_create(t.mgr, "c1");
	struct slim_console *c2 = slim_manager_console_create(t.mgr, "c2");
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
	assert_non_null(slim_greeter_client_create(t.mgr, sv[0]));
	assert_true(slim_line_send(sv[1], "hello c2"));
	settle();
	slim_console_message(c2, "for c2");
	assert_string_equal(client_heard(sv[1]), "message for c2\n");
	assert_true(slim_line_send(sv[1], "hello c1"));
	settle();
	slim_console_message(c2, "nobody hears this");
	slim_console_message(c1, "for c1");
	assert_string_equal(client_heard(sv[1]), "message for c1\n");
	/* a second client for c1 takes it: the first hears nothing more of it */
	int sv2[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv2), 0);
	assert_non_null(slim_greeter_client_create(t.mgr, sv2[0]));
	assert_true(slim_line_send(sv2[1], "hello c1"));
	assert_string_equal(client_heard(sv2[1]), "message for c1\n");
	slim_console_message(c1, "again");
	assert_string_equal(client_heard(sv[1]), "");
	assert_string_equal(client_heard(sv2[1]), "message again\n");
	/* the clients go, then the console: nothing points at what is gone */
	close(sv[1]);
	close(sv2[1]);
	settle();
	slim_console_message(c1, "nobody hears this");
	slim_console_revoke(c2);
}

/*
 * Each greeter a uid of its own from greeter_uids, its runtime directory
 * named after it; a uid goes back to the pool only once nothing of it
 * runs; after a restart each greeter found again has its own uid back, and
 * one whose uid is taken already or is none of the pool's is ended.
 */
static void test_greeter_uids(void **state)
{
	struct slim_uid_pool *pool = &t.mgr->greeters.uids;
	struct fake_compositor *g1 = console_on_greeter(1, 0x111, "c1");
	struct fake_compositor *g2 = console_on_greeter(2, 0x222, "c2");
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	assert_true(slim_uid_pool_has(pool, g1->uid));
	assert_true(slim_uid_pool_has(pool, g2->uid));
	assert_int_not_equal(g1->uid, g2->uid);
	assert_int_equal(slim_uid_pool_state(pool, g1->uid), SLIM_UID_USED);
	assert_int_equal(c1->greeter.session->uid, g1->uid);
	assert_string_equal(g1->user, "slimland-greeter"); /* its name, group and home */
	char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/greeter-%u", (unsigned)g1->uid);
	assert_string_equal(g1->runtime, dir);
	/* whatever ran as it before was ended first */
	assert_int_equal(times_cleared(g1->uid), 1);

	/* c1's greeter dies and something of its uid takes a while: the uid waits */
	t.lingering = g1->uid;
	kill(g1->pid, SIGKILL);
	wait_gone(g1->pid);
	assert_int_equal(slim_uid_pool_state(pool, g1->uid), SLIM_UID_ENDING);
	/* tried again meanwhile; c1's next greeter, after its pause, has another uid */
	advance_ms(2100); /* SLIM_GREETER_RETRY_FIRST_MS, and a little */
	assert_true(times_cleared(g1->uid) > 3);
	struct fake_compositor *g3 = last_comp();
	assert_true(g3->greeter);
	assert_string_equal(g3->console_env, "c1");
	assert_int_not_equal(g3->uid, g1->uid);
	assert_int_not_equal(g3->uid, g2->uid);
	assert_int_equal(slim_uid_pool_state(pool, g1->uid), SLIM_UID_ENDING);
	/* nothing of it runs any more: free */
	t.lingering = 0;
	advance_ms(300);
	assert_int_equal(slim_uid_pool_state(pool, g1->uid), SLIM_UID_FREE);
	comp_start(g3, 7003, "c1");
	attach(g3, "c1");

	/*
	 * A restart, with two greeters more in the state file: one runs as
	 * c2's greeter's uid, one as a uid outside greeter_uids.
	 */
	struct slim_spawn_request req = { .user = "slimland-greeter" };
	struct slim_spawn_result res;
	int fds[2];
	fake_spawn(NULL, &req, &res, &fds[0]);
	struct fake_compositor *same = last_comp();
	close(res.pidfd);
	fake_spawn(NULL, &req, &res, &fds[1]);
	struct fake_compositor *outside = last_comp();
	close(res.pidfd);
	close(fds[0]);
	close(fds[1]);
	size_t len;
	char *text = slim_state_format(t.mgr, &len);
	assert_non_null(text);
	char extra[512];
	snprintf(extra, sizeof(extra), "%s"
		"session 90 %u slimland-greeter %d 7090 /tmp/x/slimland-control\nconsole c9 90\n"
		"session 91 1000 slimland-greeter %d 7091 /tmp/y/slimland-control\nconsole c8 91\n",
		text, (unsigned)g2->uid, (int)same->pid, (int)outside->pid);
	free(text);
	struct slim_state st;
	assert_true(slim_state_parse(extra, strlen(extra), "t", &st));
	struct slim_manager *old = t.mgr;
	struct slim_config config;
	test_config(&config);
	t.mgr = create_manager(&config);
	slim_state_apply(t.mgr, &st, false);
	slim_state_finish(&st);
	pool = &t.mgr->greeters.uids;
	assert_int_equal(slim_uid_pool_state(pool, g2->uid), SLIM_UID_USED);
	assert_int_equal(slim_uid_pool_state(pool, g3->uid), SLIM_UID_USED);
	assert_int_equal(slim_manager_console(t.mgr, "c1")->greeter.session->uid, g3->uid);
	struct slim_session *dup = slim_manager_session(t.mgr, 90);
	assert_true(dup->ending);
	assert_true(slim_manager_session(t.mgr, 91)->ending);
	wait_gone(same->pid);
	wait_gone(outside->pid);
	/* the one that shared a uid ends without taking it from the greeter that has it */
	slim_session_destroy(dup);
	assert_int_equal(slim_uid_pool_state(pool, g2->uid), SLIM_UID_USED);
	slim_manager_destroy(t.mgr);
	t.mgr = old;
}

/* With every uid of greeter_uids taken, a console waits for one to be free. */
static void test_greeter_uids_run_out(void **state)
{
	struct slim_uid_pool *pool = &t.mgr->greeters.uids;
	assert_int_equal(pool->count, 2);
	struct fake_compositor *g1 = console_on_greeter(1, 0x111, "c1");
	console_on_greeter(2, 0x222, "c2");
	int comps = t.n_comps;
	hello(3, 0x333, "c3");
	struct slim_console *c3 = slim_manager_console(t.mgr, "c3");
	assert_non_null(c3);
	assert_null(c3->greeter.session);
	assert_int_equal(t.n_comps, comps);
	/* c1's greeter is ended (its console is forgotten): c3's next try has its uid */
	slim_consoles_closed(t.mgr, conn_of(1), true);
	wait_gone(g1->pid);
	advance_ms(2000); /* SLIM_GREETER_RETRY_FIRST_MS */
	assert_non_null(c3->greeter.session);
	assert_int_equal(c3->greeter.session->uid, g1->uid);
}

static void test_ctl(void **state)
{
	struct slim_ctl_request req;
	const char *err;
	assert_true(slim_ctl_parse("list", &req, &err));
	assert_int_equal(req.cmd, SLIM_CTL_LIST);
	assert_true(slim_ctl_parse("detach 12", &req, &err));
	assert_int_equal(req.cmd, SLIM_CTL_DETACH);
	assert_int_equal(req.session, 12);
	assert_true(slim_ctl_parse("end 4294967295", &req, &err));
	assert_int_equal(req.session, 4294967295u);
	assert_true(slim_ctl_parse("why c1", &req, &err));
	assert_string_equal(req.console, "c1");
	const char *bad[] = { "", "list x", "detach", "detach 0", "detach -1", "detach 1x",
		"end 4294967296", "why", "why a b", "frobnicate", "detach  1",
		"why 0123456789012345678901234567890123" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(slim_ctl_parse(bad[i], &req, &err));
		assert_non_null(err);
	}
	struct fake_compositor *s = alice_with_card();
	struct out o = { 0 };
	slim_ctl_run(t.mgr, NULL, "list", collect, &o);
	assert_non_null(strstr(o.text, "console c1 10.0.0.1:40001 session 2\n"));
	assert_non_null(strstr(o.text, "session 2 alice"));
	assert_non_null(strstr(o.text, " attached c1\n"));
	assert_non_null(strstr(o.text, "\nok\n"));
	memset(&o, 0, sizeof(o));
	slim_ctl_run(t.mgr, NULL, "detach 2", collect, &o);
	assert_string_equal(o.text, "ok\n");
	assert_string_equal(comp_line(s), "detach");
	memset(&o, 0, sizeof(o));
	slim_ctl_run(t.mgr, NULL, "why c1", collect, &o);
	assert_string_equal(o.text, "detached by an administrator\nok\n");
	memset(&o, 0, sizeof(o));
	slim_ctl_run(t.mgr, NULL, "detach 2", collect, &o);
	assert_memory_equal(o.text, "error ", 6);
	memset(&o, 0, sizeof(o));
	slim_ctl_run(t.mgr, NULL, "end 1", collect, &o); /* a greeter is no session */
	assert_memory_equal(o.text, "error ", 6);
	memset(&o, 0, sizeof(o));
	slim_ctl_run(t.mgr, NULL, "end 2", collect, &o);
	assert_string_equal(o.text, "ok\n");
	wait_gone(s->pid);
	assert_null(slim_manager_session(t.mgr, 2));
}


/* The key of an attach: in the compositor's `expect` and in the console's REDIRECT alone. */
static void test_attach_key(void **state)
{
	console_on_greeter(1, 0x111, "c1");
	char token_hex[33], id_hex[65], key_hex[65];
	assert_int_equal(sscanf(t.last_expect, "expect %32s %64s %64s", token_hex, id_hex, key_hex), 3);
	assert_int_equal(strlen(key_hex), 64);
	struct slim_cmd cmd;
	assert_non_null(last_sent(1, SLIM_CMD_REDIRECT, &cmd));
	char hex[65];
	slim_hex_encode(hex, cmd.redirect.token, sizeof(cmd.redirect.token));
	assert_string_equal(hex, token_hex);
	slim_hex_encode(hex, cmd.redirect.key, sizeof(cmd.redirect.key));
	assert_string_equal(hex, key_hex);
	/* a second console gets a key of its own */
	console_on_greeter(2, 0x222, "c2");
	char key2[65];
	assert_int_equal(sscanf(t.last_expect, "expect %*32s %*64s %64s", key2), 1);
	assert_string_not_equal(key2, key_hex);
}

/* Over DTLS a console is its key: HELLO must carry the key's id, from any address. */
static void test_key_is_the_console(void **state)
{
	uint8_t key[SLIM_SEC_FINGERPRINT_LEN] = { 0x42 };
	char id[SLIM_CONSOLE_ID_LEN + 1];
	slim_sec_fingerprint_id(key, id);
	/* an id that is not its key's: dropped, nothing started */
	struct slim_wire_hello h = { .version = SLIM_VERSION, .width = 640, .height = 480,
		.mtu = 1400 };
	memcpy(h.console_id, "c1", 2);
	console_send_keyed(1, 0x111, 1, SLIM_CMD_HELLO, &h, key);
	assert_int_equal(t.n_comps, 0);
	assert_null(slim_manager_console(t.mgr, "c1"));
	/* its own id: a greeter */
	memcpy(h.console_id, id, SLIM_CONSOLE_ID_LEN);
	console_send_keyed(1, 0x111, 1, SLIM_CMD_HELLO, &h, key);
	assert_int_equal(t.n_comps, 1);
	struct slim_console *c = slim_manager_console(t.mgr, id);
	assert_non_null(c);
	/* the same key from another address at once: the console moved, it is the same one */
	console_send_keyed(5, 0x555, 1, SLIM_CMD_HELLO, &h, key);
	assert_ptr_equal(slim_manager_console(t.mgr, id), c);
	assert_int_equal(c->assoc.id, 0x555);
	assert_int_equal(ntohs(((struct sockaddr_in *)&c->assoc.addr)->sin_port), 40005);
	assert_int_equal(t.n_comps, 1);
}

/* enroll = approve: a new console waits, with nothing started, until approved. */
static void test_enroll_approve(void **state)
{
	hello(1, 0x111, "c1");
	assert_int_equal(refused(1), SLIM_REFUSE_PENDING);
	assert_int_equal(t.n_comps, 0);
	assert_null(slim_manager_console(t.mgr, "c1"));
	/* its connection stays among those any other key not enrolled may push out */
	assert_false(t.admitted[1]);
	struct out o = { "" };
	slim_ctl_run(t.mgr, NULL, "consoles", collect, &o);
	assert_non_null(strstr(o.text, "console c1 pending 10.0.0.1:40001 "));
	/* many keys made up by one host: the waiting list stays bounded */
	for (int i = 0; i < SLIM_ENROLL_PENDING_MAX + 20; i++) {
		char id[16];
		snprintf(id, sizeof(id), "x%d", i);
		hello(9, (uint32_t)(0x9000 + i), id);
	}
	assert_int_equal(t.mgr->enroll.n_pending, SLIM_ENROLL_PENDING_MAX);
	assert_int_equal(t.n_comps, 0);
	assert_int_equal(wl_list_length(&t.mgr->consoles), 0);
	assert_false(t.admitted[9]);
	/* approved while it waits, connected: told at once to say HELLO again */
	hello(1, 0x111, "c1");
	t.n_sent = 0;
	o.text[0] = '\0';
	slim_ctl_run(t.mgr, NULL, "approve c1", collect, &o);
	assert_string_equal(o.text, "console c1 approved\nok\n");
	assert_int_equal(refused(1), SLIM_REFUSE_UNKNOWN);
	assert_false(t.admitted[1]);
	hello(1, 0x112, "c1");
	assert_int_equal(t.n_comps, 1);
	assert_true(last_comp()->greeter);
	assert_true(t.admitted[1]);
	/* a prefix too short, or of nobody */
	o.text[0] = '\0';
	slim_ctl_run(t.mgr, NULL, "approve x", collect, &o);
	assert_non_null(strstr(o.text, "error "));
}

/* enroll = closed: refused, nothing started. */
static void test_enroll_closed(void **state)
{
	hello(1, 0x111, "c1");
	assert_int_equal(refused(1), SLIM_REFUSE_DENIED);
	assert_int_equal(t.n_comps, 0);
	assert_null(slim_manager_console(t.mgr, "c1"));
	assert_false(t.admitted[1]);
}

/* Revoked: refused, out of the table, its session detached and running. */
static void test_revoke(void **state)
{
	struct fake_compositor *s = alice_with_card();
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	struct slim_session *session = c1->shows;
	t.n_sent = 0;
	struct out o = { "" };
	slim_ctl_run(t.mgr, NULL, "revoke c1", collect, &o);
	assert_string_equal(o.text, "console c1 revoked\nok\n");
	assert_int_equal(refused(1), SLIM_REFUSE_DENIED);
	assert_null(slim_manager_console(t.mgr, "c1"));
	assert_null(session->console);
	char *line = comp_line(s);
	assert_non_null(line);
	assert_string_equal(line, "detach");
	assert_true(alive(s->pid));
	/* its HELLO is refused from now on, and nothing starts */
	int comps = t.n_comps;
	t.n_sent = 0;
	hello(1, 0x999, "c1");
	assert_int_equal(refused(1), SLIM_REFUSE_DENIED);
	assert_int_equal(t.n_comps, comps);
	o.text[0] = '\0';
	slim_ctl_run(t.mgr, NULL, "consoles", collect, &o);
	assert_non_null(strstr(o.text, "console c1 revoked - - -\n"));
}

static void test_state_round_trip(void **state)
{
	alice_with_card();
	size_t len;
	char *text = slim_state_format(t.mgr, &len);
	assert_non_null(text);
	/* the card's keyed hash is kept, never its token */
	struct slim_wire_card tapped = { .event = 1, .kind = 1, .len = 4, .token = { 0xca, 0xfe, 0, 7 } };
	struct slim_card_hash hash;
	slim_manager_hash_card(t.mgr, &tapped, &hash);
	char line[128], hex[65];
	slim_hex_encode(hex, hash.bytes, sizeof(hash.bytes));
	snprintf(line, sizeof(line), "token %s 2\n", hex);
	assert_non_null(strstr(text, line));
	assert_null(strstr(text, "cafe0007"));
	assert_non_null(strstr(text, "console c1 2\n"));
	struct slim_state st;
	assert_true(slim_state_parse(text, len, "t", &st));
	/* c1's greeter is ending (c1 shows alice's session): it is not kept */
	assert_int_equal(st.n_sessions, 1);
	assert_int_equal(st.n_tokens, 1);
	assert_int_equal(st.n_consoles, 1);

	/* a second manager (a restart) takes it over */
	struct slim_manager *old = t.mgr;
	struct slim_config config;
	test_config(&config);
	t.mgr = create_manager(&config);
	slim_state_apply(t.mgr, &st, false);
	slim_state_finish(&st);
	size_t len2;
	char *text2 = slim_state_format(t.mgr, &len2);
	assert_string_equal(text, text2);
	free(text2);
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	assert_non_null(c1);
	assert_false(c1->heard.known);
	/* its PING is refused UNKNOWN; its HELLO is answered but nothing is redirected */
	t.n_sent = 0;
	console_send(1, 0x111, 9, SLIM_CMD_PING, NULL);
	struct slim_cmd cmd;
	assert_non_null(last_sent(1, SLIM_CMD_REFUSE, &cmd));
	hello(1, 0x5555, "c1");
	advance_ms(300);
	assert_null(last_sent(1, SLIM_CMD_REDIRECT, &cmd));
	assert_int_equal(c1->state, SLIM_CONSOLE_SESSION);
	assert_int_equal(c1->shows->id, 2);
	/* and its card still opens the session */
	/* and its card still opens the session: the same card key, the same hash */
	assert_non_null(slim_manager_binding(t.mgr, &hash));
	slim_manager_destroy(t.mgr);
	t.mgr = old;

	/* damage: a truncated file, garbage lines; what is good is kept, nothing crashes */
	assert_false(slim_state_parse(text, len - 3, "t", &st));
	assert_true(st.truncated);
	assert_int_equal(st.n_consoles, 0);
	assert_int_equal(st.n_sessions, 1);
	slim_state_finish(&st);
	const char *bad =
		"session 1 0 root\n"
		"session x 0 root 5 5 /p\n"
		"session 3 0 root 1 70000 /p\n"
		"token zz 1\n"
		"token cafe 0\n"
		"console  1\n"
		"\x01\x02\xff\n"
		"console c9 4\n";
	assert_false(slim_state_parse(bad, strlen(bad), "t", &st));
	assert_int_equal(st.bad_lines, 7);
	assert_int_equal(st.n_consoles, 1);
	/* a console whose session is not there is simply not restored */
	struct slim_manager *m2 = create_manager(&config);
	slim_state_apply(m2, &st, true);
	assert_null(slim_manager_console(m2, "c9"));
	slim_manager_destroy(m2);
	slim_state_finish(&st);
	assert_true(slim_state_parse("", 0, "t", &st));
	slim_state_finish(&st);
	free(text);
}

static void test_state_file(void **state)
{
	alice_with_card();
	char path[] = "/tmp/slim-state-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_true(slim_state_write(t.mgr, path));
	/* a restart that checks PIDs: the fake compositors are not slimland */
	struct slim_config config;
	test_config(&config);
	struct slim_manager *m2 = create_manager(&config);
	assert_true(slim_state_restore(m2, path));
	assert_int_equal(wl_list_length(&m2->sessions), 0);
	slim_manager_destroy(m2);
	/* a garbage file */
	FILE *f = fopen(path, "w");
	fwrite("\0\0\0garbage", 1, 10, f);
	fclose(f);
	m2 = create_manager(&config);
	assert_true(slim_state_restore(m2, path));
	assert_int_equal(wl_list_length(&m2->sessions), 0);
	slim_manager_destroy(m2);
	unlink(path);
	int pidfd;
	assert_false(slim_state_check_pid(getpid(), (uid_t)-1, &pidfd)); /* not slimland */
}

int main(void)
{
	slim_log_init(SLIM_LOG_DEBUG, quiet);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_greeter_and_login, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cards, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forgery, setup, teardown),
		cmocka_unit_test_prestate_setup_teardown(test_reauth, setup, teardown,
			"reauth = always\n"),
		cmocka_unit_test_prestate_setup_teardown(test_reauth_idle, setup, teardown,
			"reauth = idle:60\n"),
		cmocka_unit_test_setup_teardown(test_audio_report, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_report, setup, teardown),
		cmocka_unit_test_setup_teardown(test_control_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unwatchable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_detached_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_console_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_greeter_hello_twice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_greeter_uids, setup, teardown),
		cmocka_unit_test_prestate_setup_teardown(test_greeter_uids_run_out, setup, teardown,
			"greeter_uids = 70000-70001\n"),
		cmocka_unit_test_setup_teardown(test_goodbye_and_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ctl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attach_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_is_the_console, setup, teardown),
		cmocka_unit_test_prestate_setup_teardown(test_enroll_approve, setup, teardown,
			"enroll = approve\n"),
		cmocka_unit_test_prestate_setup_teardown(test_enroll_closed, setup, teardown,
			"enroll = closed\n"),
		cmocka_unit_test_setup_teardown(test_revoke, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
