#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fake-manager.h"

struct fake_world fake;

static volatile uint32_t sink;

/* What no fake can go on from: the test or fuzzer stops at once. */
static void require(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fake-manager: %s\n", what);
		abort();
	}
}

void fake_reset(void)
{
	struct fake_world kept = fake;
	memset(&fake, 0, sizeof(fake));
	fake.processes = kept.processes;
	fake.eager = kept.eager;
	fake.logins = kept.logins;
	fake.keep_sent = kept.keep_sent;
	fake.check_sent = kept.check_sent;
}

void fake_compositors_end(void)
{
	for (int i = 0; i < fake.n_comps; i++) {
		struct fake_compositor *fc = &fake.comps[i];
		if (fc->pid > 0) {
			kill(fc->pid, SIGKILL);
			waitpid(fc->pid, NULL, 0);
		}
		if (fc->fd >= 0) {
			close(fc->fd);
		}
	}
	fake.n_comps = 0;
}

struct slim_sec_conn *fake_conn(int n)
{
	return (struct slim_sec_conn *)(uintptr_t)(0x1000 + n);
}

static int conn_index(struct slim_sec_conn *conn)
{
	return (int)((uintptr_t)conn - 0x1000);
}

/* A child that waits to be ended, with none of the manager's sockets. */
static pid_t waiting_child(void)
{
	pid_t pid = fork();
	require(pid >= 0, "fork");
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		/* no control socket ends here: the test's closing one must be seen */
		syscall(SYS_close_range, 3, ~0u, 0);
		for (;;) {
			pause();
		}
	}
	return pid;
}

bool fake_spawn(void *data, const struct slim_spawn_request *req,
		struct slim_spawn_result *out, int *control_fd)
{
	int sv[2];
	if (fake.n_comps >= FAKE_COMPOSITORS ||
			socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
		return false;
	}
	struct fake_compositor *fc = &fake.comps[fake.n_comps++];
	memset(fc, 0, sizeof(*fc));
	fc->sent_before = fake.n_sent;
	snprintf(fc->user, sizeof(fc->user), "%s", req->user);
	fc->uid = req->as_uid;
	fc->fd = sv[1];
	slim_lines_init(&fc->lines);
	*out = (struct slim_spawn_result){ .pid = 0, .pidfd = -1 };
	if (fake.processes) {
		fc->pid = waiting_child();
		out->pid = fc->pid;
		out->pidfd = (int)syscall(SYS_pidfd_open, fc->pid, 0);
		require(out->pidfd >= 0, "pidfd_open");
	}
	snprintf(out->control_path, sizeof(out->control_path), "/nonexistent/%d", (int)fc->pid);
	for (char *const *e = req->env; e && *e; e++) {
		if (strncmp(*e, "SLIMLAND_CONSOLE=", 17) == 0) {
			fc->greeter = true;
			snprintf(fc->console_env, sizeof(fc->console_env), "%s", *e + 17);
		} else if (strncmp(*e, "XDG_RUNTIME_DIR=", 16) == 0) {
			/* a greeter's, as slim_spawn_compositor says it */
			snprintf(out->control_path, sizeof(out->control_path), "%s/slimland-control",
				*e + 16);
			snprintf(fc->runtime, sizeof(fc->runtime), "%s", *e + 16);
		}
	}
	*control_fd = sv[0];
	if (fake.eager) {
		/* the compositor is up at once */
		slim_line_send(fc->fd, "hello %d %d", 6000 + fake.n_comps, (int)fc->pid);
	}
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
	bool held; /* authenticated, waiting for fake_login_proceed */
	struct slim_login_callbacks cb;
	void *data;
};

static void fake_login_start(struct slim_login *l);

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
	fake.logins_done++;
	enum slim_login_next next = l->cb.authenticated(l->data, NULL);
	if (next == SLIM_LOGIN_HOLD) {
		l->held = true; /* until fake_login_proceed */
		return;
	}
	if (next == SLIM_LOGIN_STOP) {
		fake.logouts++; /* the worker ends PAM there */
		free(l);
		return;
	}
	fake_login_start(l);
}

static void fake_login_start(struct slim_login *l)
{
	struct slim_spawn_request req = { .user = l->user };
	struct slim_spawn_result res = { .pid = -1, .pidfd = -1 };
	int control_fd = -1;
	require(fake_spawn(NULL, &req, &res, &control_fd), "no room for a compositor");
	l->started = true;
	/* l belongs to the manager's session from here on: not touched again */
	l->cb.started(l->data, &res, control_fd);
}

static struct slim_login *fake_login(void *data, struct wl_event_loop *loop,
		const struct slim_login_request *req,
		const struct slim_login_callbacks *cb, void *cb_data)
{
	if (!fake.logins) {
		return NULL; /* refused at once: "Cannot log in now" */
	}
	struct slim_login *l = calloc(1, sizeof(*l));
	require(l != NULL, "out of memory");
	snprintf(l->user, sizeof(l->user), "%s", req->user);
	l->right = strcmp(req->password, "right") == 0;
	l->cb = *cb;
	l->data = cb_data;
	l->idle = wl_event_loop_add_idle(loop, fake_login_run, l);
	require(l->idle != NULL, "wl_event_loop_add_idle");
	return l;
}

static void fake_login_proceed(void *data, struct slim_login *l, bool start)
{
	if (!l->held) {
		return;
	}
	l->held = false;
	if (start) {
		fake_login_start(l);
		return;
	}
	fake.logouts++;
	free(l);
}

static void fake_login_cancel(void *data, struct slim_login *l)
{
	if (l->idle) {
		wl_event_source_remove(l->idle);
	}
	if (l->started) {
		fake.logouts++; /* the worker closes the PAM session */
	}
	free(l);
}

static void fake_send(void *data, struct slim_sec_conn *conn, const uint8_t *buf, size_t len)
{
	if (fake.check_sent) {
		fake.check_sent(buf, len);
	}
	sink += (uint32_t)len + (uint32_t)(uintptr_t)conn;
	if (!fake.keep_sent) {
		return;
	}
	require(fake.n_sent < FAKE_SENT && len <= sizeof(fake.sent[0].buf), "too much sent");
	struct fake_sent *s = &fake.sent[fake.n_sent++];
	memcpy(s->buf, buf, len);
	s->len = len;
	s->console = conn_index(conn);
}

static void fake_close(void *data, struct slim_sec_conn *conn)
{
	sink += (uint32_t)(uintptr_t)conn;
}

static void fake_admit(void *data, struct slim_sec_conn *conn)
{
	int n = conn_index(conn);
	if (n >= 0 && (size_t)n < sizeof(fake.admitted) / sizeof(fake.admitted[0])) {
		fake.admitted[n] = true;
	}
}

static uint64_t fake_now(void *data)
{
	return fake.now_us;
}

static bool fake_greeter_clear(void *data, uid_t uid, const char *runtime_dir)
{
	if (fake.n_cleared < 64) {
		fake.cleared[fake.n_cleared].uid = uid;
		snprintf(fake.cleared[fake.n_cleared++].dir, sizeof(fake.cleared[0].dir), "%s",
			runtime_dir);
	}
	return uid != fake.lingering;
}

const struct slim_manager_ops fake_ops = {
	.spawn = fake_spawn,
	.login = fake_login,
	.login_cancel = fake_login_cancel,
	.login_proceed = fake_login_proceed,
	.send = fake_send,
	.close = fake_close,
	.admit = fake_admit,
	.now = fake_now,
	.greeter_clear = fake_greeter_clear,
};

void fake_peer_drain(int fd, bool compositor)
{
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		sink += (uint32_t)n;
		if (!compositor) {
			continue;
		}
		char *save = NULL;
		for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char token[40], console[80];
			if (sscanf(line, "expect %39s %79s %*s", token, console) == 2) {
				slim_line_send(fd, "attached %s 64x48", console);
			}
		}
	}
}

void fake_compositors_answer(void)
{
	for (int i = 0; i < fake.n_comps; i++) {
		fake_peer_drain(fake.comps[i].fd, true);
	}
}
