/*
 * Logins in a worker process of their own, as greetd and gdm do them: PAM
 * never runs in the manager. For each login the manager forks a worker
 * (root) and talks to it over a socketpair in its event loop. The worker
 * authenticates and checks the account (auth.c) and reports; told to go on,
 * it establishes credentials, opens the PAM session (so pam_systemd,
 * pam_limits and the like act on the worker and, inherited, on the
 * compositor, never on the manager), starts the user's compositor (spawn.c,
 * with PAM's environment), reports it, waits for it to exit and closes the
 * PAM session. A worker outlives a manager that restarts.
 */
#ifndef SLIM_SESSIOND_LOGIN_H
#define SLIM_SESSIOND_LOGIN_H

#include <stdbool.h>
#include <wayland-server-core.h>
#include "spawn.h"

struct slim_login;

struct slim_login_request {
	const char *service;  /* the PAM service */
	const char *user;
	const char *password; /* the worker has its copy: the caller wipes its own at once */
	const char *console;  /* for the log */
	/* The compositor to start; the worker sets user and adds PAM's environment to env. */
	struct slim_spawn_request spawn;
};

/* What an authenticated login does next (slim_login_callbacks.authenticated). */
enum slim_login_next {
	SLIM_LOGIN_STOP,  /* ends there: the worker ends PAM, the login is over */
	SLIM_LOGIN_START, /* opens the PAM session and starts the compositor */
	SLIM_LOGIN_HOLD,  /* waits, authenticated, for slim_login_proceed */
};

/* Called from the event loop, never from slim_login_start itself. */
struct slim_login_callbacks {
	/*
	 * PAM's verdict. error NULL: authenticated; the answer says what
	 * follows. error set: refused, a text for the person at the greeter;
	 * the login is over (the answer is not read).
	 */
	enum slim_login_next (*authenticated)(void *data, const char *error);
	/*
	 * The compositor runs: res->pidfd (opened by the manager) now belongs
	 * to the callee; control_fd is a connected control socket or -1. No
	 * callback follows: the handle stays with the session, for
	 * slim_login_cancel once it ends.
	 */
	void (*started)(void *data, const struct slim_spawn_result *res, int control_fd);
	/* The session could not be opened or started (or the worker died); the login is over. */
	void (*failed)(void *data, const char *error);
};

/* NULL if no worker could be started. */
struct slim_login *slim_login_start(struct wl_event_loop *loop,
		const struct slim_login_request *req,
		const struct slim_login_callbacks *cb, void *data);
/*
 * A login held after authenticated (SLIM_LOGIN_HOLD) goes on: `start`, as
 * SLIM_LOGIN_START would have, or not (over, freed: no more callbacks).
 */
void slim_login_proceed(struct slim_login *login, bool start);
/*
 * Forgets a login that is not over (no more callbacks) and frees it. An
 * authenticating worker ends PAM and exits; one that started a compositor
 * keeps the PAM session open until that compositor exits, whatever the
 * manager does meanwhile.
 */
void slim_login_cancel(struct slim_login *login);

#endif
