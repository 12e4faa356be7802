/*
 * Login workers (login.h). The manager and a worker exchange fixed-size
 * messages over a SOCK_SEQPACKET socketpair:
 *
 *   worker → manager  OK | ERROR text             PAM's verdict
 *   manager → worker  START | STOP                go on, or end PAM there
 *   worker → manager  STARTED pid dirs | ERROR    the compositor runs, or not
 *
 * then the worker waits for the compositor and closes the PAM session; its
 * end of the socket closing tells the manager nothing it needs.
 */
#define _GNU_SOURCE /* close_range, explicit_bzero, pidfd_open via syscall */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "auth.h"
#include "login.h"
#include "slim-log.h"

#define LOGIN_FAILED "Cannot log in now: see the system log"
#define START_FAILED "The session could not be started"

enum login_msg_type {
	MSG_OK = 1,
	MSG_ERROR,
	MSG_START,
	MSG_STOP,
	MSG_STARTED,
};

struct login_msg {
	uint32_t type;
	int32_t pid;
	char text[128];
	char runtime_dir[256];
	char control_path[320];
};

enum login_stage {
	STAGE_AUTH,    /* waiting for the verdict */
	STAGE_HELD,    /* authenticated: waiting for slim_login_proceed */
	STAGE_START,   /* told to start: waiting for STARTED */
	STAGE_RUNNING, /* the compositor runs: no more callbacks */
};

struct slim_login {
	int fd;
	struct wl_event_source *source;
	pid_t worker;
	struct slim_login_callbacks cb;
	void *data;
	enum login_stage stage;
	bool in_callback;
	bool cancelled;
};

static bool send_msg(int fd, const struct login_msg *m)
{
	ssize_t n;
	do {
		n = send(fd, m, sizeof(*m), MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(*m);
}

static bool send_type(int fd, uint32_t type, const char *text)
{
	struct login_msg m = { .type = type };
	if (text) {
		snprintf(m.text, sizeof(m.text), "%s", text);
	}
	return send_msg(fd, &m);
}

/* The worker */

static char **merge_env(char *const *a, char *const *b)
{
	size_t n = 0;
	for (char *const *e = a; e && *e; e++) {
		n++;
	}
	for (char *const *e = b; e && *e; e++) {
		n++;
	}
	char **env = calloc(n + 1, sizeof(*env));
	if (!env) {
		return NULL;
	}
	size_t i = 0;
	for (char *const *e = a; e && *e; e++) {
		env[i++] = *e;
	}
	for (char *const *e = b; e && *e; e++) {
		env[i++] = *e;
	}
	return env;
}

static void __attribute__((noreturn)) worker_main(int fd, const struct slim_login_request *req)
{
	/* The manager's signal mask and handlers (signalfd) are not ours. */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++) {
		signal(sig, SIG_DFL);
	}
	/* A manager that stops or dies leaves us running: the PAM session is ours to close. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	setsid();
	/* Nothing of the manager's (its UDP port, its sockets) stays open in here. */
	if (fd != 3) {
		dup2(fd, 3);
		close(fd);
		fd = 3;
	}
	syscall(SYS_close_range, 4, ~0u, 0);

	char password[512];
	snprintf(password, sizeof(password), "%s", req->password ? req->password : "");
	if (req->password) {
		explicit_bzero((char *)req->password, strlen(req->password));
	}
	const char *why = LOGIN_FAILED;
	struct slim_auth *auth = slim_auth_begin(req->service, req->user, password, &why);
	explicit_bzero(password, sizeof(password));
	if (!auth) {
		send_type(fd, MSG_ERROR, why);
		_exit(1);
	}
	send_type(fd, MSG_OK, NULL);
	struct login_msg m;
	ssize_t n;
	do {
		n = recv(fd, &m, sizeof(m), 0);
	} while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(m) || m.type != MSG_START) {
		slim_auth_logout(auth);
		_exit(0);
	}
	if (!slim_auth_open(auth, &why)) {
		send_type(fd, MSG_ERROR, why);
		slim_auth_logout(auth);
		_exit(1);
	}
	struct slim_spawn_request sreq = req->spawn;
	sreq.user = req->user;
	char **env = merge_env(slim_auth_env(auth), req->spawn.env);
	sreq.env = env;
	struct slim_spawn_result res = { .pid = -1, .pidfd = -1 };
	if (!env || !slim_spawn_compositor(&sreq, &res)) {
		send_type(fd, MSG_ERROR, START_FAILED);
		slim_auth_logout(auth);
		_exit(1);
	}
	free(env);
	memset(&m, 0, sizeof(m));
	m.type = MSG_STARTED;
	m.pid = res.pid;
	snprintf(m.runtime_dir, sizeof(m.runtime_dir), "%s", res.runtime_dir);
	snprintf(m.control_path, sizeof(m.control_path), "%s", res.control_path);
	if (!send_msg(fd, &m)) {
		/* the manager forgot this login before the session was its: no session */
		slim_log(SLIM_LOG_INFO, "login %s: the manager is gone, ending the compositor",
			req->user);
		kill(res.pid, SIGTERM);
	}
	close(fd);
	int status = 0;
	while (waitpid(res.pid, &status, 0) < 0 && errno == EINTR) {
	}
	if (WIFSIGNALED(status)) {
		slim_log(SLIM_LOG_INFO, "login %s: compositor %d killed by signal %d", req->user,
			(int)res.pid, WTERMSIG(status));
	} else {
		slim_log(SLIM_LOG_INFO, "login %s: compositor %d exited with status %d", req->user,
			(int)res.pid, WEXITSTATUS(status));
	}
	close(res.pidfd);
	slim_auth_logout(auth);
	_exit(0);
}

/* The manager's side */

static void login_free(struct slim_login *l)
{
	if (l->source) {
		wl_event_source_remove(l->source);
	}
	if (l->fd >= 0) {
		close(l->fd);
	}
	free(l);
}

static int handle_worker(int fd, uint32_t mask, void *data)
{
	struct slim_login *l = data;
	struct login_msg m;
	ssize_t n = recv(fd, &m, sizeof(m), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		return 0;
	}
	bool got = n == (ssize_t)sizeof(m);
	if (got) {
		m.text[sizeof(m.text) - 1] = '\0';
		m.runtime_dir[sizeof(m.runtime_dir) - 1] = '\0';
		m.control_path[sizeof(m.control_path) - 1] = '\0';
	}
	if (l->stage == STAGE_RUNNING) {
		/* the worker is done with us; it closes the PAM session on its own */
		wl_event_source_remove(l->source);
		l->source = NULL;
		close(l->fd);
		l->fd = -1;
		return 0;
	}
	bool over = true;
	l->in_callback = true;
	if (l->stage == STAGE_AUTH) {
		if (got && m.type == MSG_OK) {
			enum slim_login_next next = l->cb.authenticated(l->data, NULL);
			if (!l->cancelled && next == SLIM_LOGIN_HOLD) {
				l->stage = STAGE_HELD;
				over = false;
			} else if (!l->cancelled) {
				send_type(l->fd, next == SLIM_LOGIN_START ? MSG_START : MSG_STOP, NULL);
				if (next == SLIM_LOGIN_START) {
					l->stage = STAGE_START;
					over = false;
				}
			}
		} else {
			l->cb.authenticated(l->data, got && m.type == MSG_ERROR ? m.text : LOGIN_FAILED);
		}
	} else if (l->stage == STAGE_HELD) {
		/* the worker went away while held: nothing was started */
		l->cb.failed(l->data, got && m.type == MSG_ERROR ? m.text : START_FAILED);
	} else if (got && m.type == MSG_STARTED) {
		struct slim_spawn_result res = { .pid = m.pid, .pidfd = -1 };
		memcpy(res.runtime_dir, m.runtime_dir, sizeof(res.runtime_dir));
		memcpy(res.control_path, m.control_path, sizeof(res.control_path));
		res.pidfd = m.pid > 0 ? (int)syscall(SYS_pidfd_open, m.pid, 0) : -1;
		if (res.pidfd < 0) {
			slim_log(SLIM_LOG_ERROR, "login: compositor %d: pidfd_open: %s", (int)m.pid,
				strerror(errno));
			l->cb.failed(l->data, START_FAILED);
		} else {
			l->stage = STAGE_RUNNING;
			over = false;
			l->cb.started(l->data, &res, -1);
		}
	} else {
		l->cb.failed(l->data, got && m.type == MSG_ERROR ? m.text : START_FAILED);
	}
	l->in_callback = false;
	if (over || l->cancelled) {
		login_free(l);
	}
	return 0;
}

struct slim_login *slim_login_start(struct wl_event_loop *loop,
		const struct slim_login_request *req,
		const struct slim_login_callbacks *cb, void *data)
{
	struct slim_login *l = calloc(1, sizeof(*l));
	if (!l) {
		return NULL;
	}
	l->cb = *cb;
	l->data = data;
	l->fd = -1;
	/* Peer check: none to make, a socketpair whose other end is our own fork */
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		slim_log(SLIM_LOG_ERROR, "login: socketpair: %s", strerror(errno));
		free(l);
		return NULL;
	}
	l->worker = fork();
	if (l->worker < 0) {
		slim_log(SLIM_LOG_ERROR, "login: fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		free(l);
		return NULL;
	}
	if (l->worker == 0) {
		close(sv[0]);
		worker_main(sv[1], req);
	}
	close(sv[1]);
	l->fd = sv[0];
	l->source = wl_event_loop_add_fd(loop, l->fd, WL_EVENT_READABLE, handle_worker, l);
	if (!l->source) {
		/* the worker finds its socket closed: it ends PAM and exits */
		login_free(l);
		return NULL;
	}
	slim_log(SLIM_LOG_INFO, "login: %s at %s: worker %d", req->user,
		req->console ? req->console : "?", (int)l->worker);
	return l;
}

void slim_login_proceed(struct slim_login *login, bool start)
{
	if (!login || login->stage != STAGE_HELD) {
		return;
	}
	if (start && send_type(login->fd, MSG_START, NULL)) {
		login->stage = STAGE_START;
		return;
	}
	/* told to stop (or its socket is gone): it ends PAM and exits */
	send_type(login->fd, MSG_STOP, NULL);
	login_free(login);
}

void slim_login_cancel(struct slim_login *login)
{
	if (!login) {
		return;
	}
	if (login->in_callback) {
		login->cancelled = true;
		return;
	}
	login_free(login);
}
