/*
 * Logging people in through PAM (service "slimland" unless configured), in
 * a login worker (login.c), never in the manager's own process:
 * authentication, account checks, credentials and a PAM session that stays
 * open as long as the user's compositor runs, so that pam_systemd, limits
 * and the like apply to it.
 */
#ifndef SLIM_SESSIOND_AUTH_H
#define SLIM_SESSIOND_AUTH_H

#include <stdbool.h>

struct slim_auth;

/*
 * Authenticates USER with PASSWORD and, on success, opens the PAM session.
 * On failure returns NULL and points *why at a message fit to show the
 * person at the greeter (never the password, never PAM's internals).
 */
struct slim_auth *slim_auth_login(const char *service, const char *user,
		const char *password, const char **why);
/*
 * The two halves of slim_auth_login, for a login worker that reports the
 * verdict before it opens the session: begin authenticates and checks the
 * account (NULL and *why on failure); open establishes credentials and opens
 * the session (false and *why on failure: the handle is then still to be
 * given to slim_auth_logout, which ends PAM).
 */
struct slim_auth *slim_auth_begin(const char *service, const char *user,
		const char *password, const char **why);
bool slim_auth_open(struct slim_auth *auth, const char **why);
/* Closes the PAM session, if open, and ends PAM (the compositor has exited). NULL: no-op. */
void slim_auth_logout(struct slim_auth *auth);
/* The environment PAM modules set for the session (NULL-terminated; owned by auth). */
char *const *slim_auth_env(const struct slim_auth *auth);
const char *slim_auth_user(const struct slim_auth *auth);

#endif
