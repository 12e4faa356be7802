/*
 * PAM, the way a display manager uses it: authenticate, check the account,
 * establish credentials and open a session that stays open until the user's
 * compositor exits. The greeter has already collected the password, so the
 * conversation answers PAM's prompts from it instead of asking anyone.
 */
#define _DEFAULT_SOURCE /* explicit_bzero */
#include <security/pam_appl.h>
#include <stdlib.h>
#include <string.h>
#include "auth.h"
#include "slim-log.h"

/* What the person at the greeter is told; PAM's own words go to the log. */
#define SLIM_AUTH_WRONG "Wrong user name or password"
#define SLIM_AUTH_LOCKED "Account expired or locked"
#define SLIM_AUTH_EXPIRED "Password expired: change it first"
#define SLIM_AUTH_FAILED "Cannot log in now: see the system log"

struct slim_auth {
	pam_handle_t *pam;
	struct pam_conv conv;
	char *user;
	/* Our copy of the password, zeroed and freed right after pam_authenticate. */
	char *password;
	char **env;
	bool cred;
	bool session;
};

static void free_responses(struct pam_response *resp, int n)
{
	for (int i = 0; i < n; i++) {
		if (resp[i].resp) {
			explicit_bzero(resp[i].resp, strlen(resp[i].resp));
			free(resp[i].resp);
		}
	}
	free(resp);
}

/*
 * Answers the password prompt with the password and a user name prompt with
 * the user name. Informational messages are logged, not shown: the greeter
 * has no way to show them in the middle of a login. Any other prompt (a
 * second factor, a new password) cannot be answered, so the conversation
 * fails and so does the login.
 */
static int conversation(int n, const struct pam_message **msg,
		struct pam_response **out, void *data)
{
	struct slim_auth *auth = data;
	if (n <= 0 || n > PAM_MAX_NUM_MSG) {
		return PAM_CONV_ERR;
	}
	struct pam_response *resp = calloc((size_t)n, sizeof(*resp));
	if (!resp) {
		return PAM_BUF_ERR;
	}
	for (int i = 0; i < n; i++) {
		const char *answer = NULL;
		switch (msg[i]->msg_style) {
		case PAM_PROMPT_ECHO_OFF:
			answer = auth->password;
			break;
		case PAM_PROMPT_ECHO_ON:
			answer = auth->user;
			break;
		case PAM_ERROR_MSG:
		case PAM_TEXT_INFO:
			slim_log(SLIM_LOG_INFO, "auth: %s: PAM says: %s", auth->user,
				msg[i]->msg ? msg[i]->msg : "");
			continue;
		default:
			break;
		}
		if (!answer) {
			slim_log(SLIM_LOG_ERROR, "auth: %s: PAM asks what the greeter cannot answer (style %d)",
				auth->user, msg[i]->msg_style);
			free_responses(resp, n);
			return PAM_CONV_ERR;
		}
		resp[i].resp = strdup(answer);
		if (!resp[i].resp) {
			free_responses(resp, n);
			return PAM_BUF_ERR;
		}
	}
	*out = resp;
	return PAM_SUCCESS;
}

/*
 * Modules such as pam_unix sleep about two seconds after a failure. The
 * manager delays failed logins itself (per console, doubling) without
 * blocking its event loop, so PAM's sleep is replaced by nothing.
 */
static void no_fail_delay(int status, unsigned int usec, void *data)
{
}

static void forget_password(struct slim_auth *auth)
{
	if (auth->password) {
		explicit_bzero(auth->password, strlen(auth->password));
		free(auth->password);
		auth->password = NULL;
	}
}

static void auth_free(struct slim_auth *auth, int status)
{
	if (auth->pam) {
		pam_end(auth->pam, status);
	}
	forget_password(auth);
	if (auth->env) {
		for (char **e = auth->env; *e; e++) {
			explicit_bzero(*e, strlen(*e)); /* may hold tickets and the like */
			free(*e);
		}
		free(auth->env);
	}
	free(auth->user);
	free(auth);
}

static const char *why_authenticate(int r)
{
	switch (r) {
	case PAM_AUTH_ERR:
	case PAM_USER_UNKNOWN:
	case PAM_MAXTRIES:
	case PAM_CRED_INSUFFICIENT:
		return SLIM_AUTH_WRONG;
	default:
		return SLIM_AUTH_FAILED;
	}
}

static const char *why_account(int r)
{
	switch (r) {
	case PAM_NEW_AUTHTOK_REQD:
		/* The greeter changes no passwords: a terminal or an admin must. */
		return SLIM_AUTH_EXPIRED;
	case PAM_ACCT_EXPIRED:
	case PAM_PERM_DENIED:
	case PAM_AUTH_ERR:
	case PAM_USER_UNKNOWN:
		return SLIM_AUTH_LOCKED;
	default:
		return SLIM_AUTH_FAILED;
	}
}

struct slim_auth *slim_auth_begin(const char *service, const char *user,
		const char *password, const char **why)
{
	*why = SLIM_AUTH_FAILED;
	if (!user || !*user || !password) {
		*why = SLIM_AUTH_WRONG;
		return NULL;
	}
	struct slim_auth *auth = calloc(1, sizeof(*auth));
	if (!auth) {
		return NULL;
	}
	auth->user = strdup(user);
	auth->password = strdup(password);
	if (!auth->user || !auth->password) {
		auth_free(auth, PAM_BUF_ERR);
		return NULL;
	}
	/* PAM keeps a pointer to conv for as long as the handle lives: it lives in auth. */
	auth->conv = (struct pam_conv){ .conv = conversation, .appdata_ptr = auth };
	int r = pam_start(service, user, &auth->conv, &auth->pam);
	if (r != PAM_SUCCESS) {
		slim_log(SLIM_LOG_ERROR, "auth: pam_start(%s): %s", service,
			pam_strerror(NULL, r));
		auth->pam = NULL;
		auth_free(auth, r);
		return NULL;
	}
	const char *step = "pam_set_item";
	/*
	 * PAM_TTY: pam_unix, pam_access, pam_securetty and logind's session
	 * records name the "terminal" a login comes from; there is no tty here.
	 */
	if ((r = pam_set_item(auth->pam, PAM_TTY, "slimland")) != PAM_SUCCESS ||
			(r = pam_set_item(auth->pam, PAM_FAIL_DELAY,
				(const void *)no_fail_delay)) != PAM_SUCCESS) {
		goto fail;
	}
	/* pam_systemd registers the logind session with these. */
	if ((r = pam_putenv(auth->pam, "XDG_SESSION_TYPE=wayland")) != PAM_SUCCESS ||
			(r = pam_putenv(auth->pam, "XDG_SESSION_CLASS=user")) != PAM_SUCCESS) {
		goto fail;
	}

	step = "pam_authenticate";
	r = pam_authenticate(auth->pam, PAM_DISALLOW_NULL_AUTHTOK);
	forget_password(auth);
	if (r != PAM_SUCCESS) {
		*why = why_authenticate(r);
		goto fail;
	}
	step = "pam_acct_mgmt";
	r = pam_acct_mgmt(auth->pam, PAM_DISALLOW_NULL_AUTHTOK);
	if (r != PAM_SUCCESS) {
		*why = why_account(r);
		goto fail;
	}
	return auth;

fail:
	/* Said for the administrator; the person is told *why, nothing more. */
	slim_log(SLIM_LOG_ERROR, "auth: %s: %s: %s", user, step, pam_strerror(auth->pam, r));
	auth_free(auth, r);
	return NULL;
}

bool slim_auth_open(struct slim_auth *auth, const char **why)
{
	*why = SLIM_AUTH_FAILED;
	const char *step = "pam_setcred";
	int r = pam_setcred(auth->pam, PAM_ESTABLISH_CRED);
	if (r != PAM_SUCCESS) {
		goto fail;
	}
	auth->cred = true;
	step = "pam_open_session";
	r = pam_open_session(auth->pam, 0);
	if (r != PAM_SUCCESS) {
		goto fail;
	}
	auth->session = true;
	/* pam_getenvlist copies: the list stays valid whatever PAM does later. */
	auth->env = pam_getenvlist(auth->pam);
	if (!auth->env) {
		auth->env = calloc(1, sizeof(*auth->env));
		if (!auth->env) {
			step = "pam_getenvlist";
			r = PAM_BUF_ERR;
			goto fail;
		}
	}
	slim_log(SLIM_LOG_INFO, "auth: %s logged in", auth->user);
	return true;

fail:
	/* Said for the administrator; the person is told *why, nothing more. */
	slim_log(SLIM_LOG_ERROR, "auth: %s: %s: %s", auth->user, step,
		pam_strerror(auth->pam, r));
	if (auth->session) {
		pam_close_session(auth->pam, 0);
		auth->session = false;
	}
	if (auth->cred) {
		pam_setcred(auth->pam, PAM_DELETE_CRED);
		auth->cred = false;
	}
	return false;
}

struct slim_auth *slim_auth_login(const char *service, const char *user,
		const char *password, const char **why)
{
	struct slim_auth *auth = slim_auth_begin(service, user, password, why);
	if (auth && !slim_auth_open(auth, why)) {
		auth_free(auth, PAM_SESSION_ERR);
		return NULL;
	}
	return auth;
}

void slim_auth_logout(struct slim_auth *auth)
{
	if (!auth) {
		return;
	}
	int r = PAM_SUCCESS;
	if (auth->session) {
		r = pam_close_session(auth->pam, 0);
		if (r != PAM_SUCCESS) {
			slim_log(SLIM_LOG_ERROR, "auth: %s: pam_close_session: %s", auth->user,
				pam_strerror(auth->pam, r));
		}
	}
	if (auth->cred) {
		int c = pam_setcred(auth->pam, PAM_DELETE_CRED);
		if (c != PAM_SUCCESS) {
			slim_log(SLIM_LOG_ERROR, "auth: %s: pam_setcred(DELETE): %s", auth->user,
				pam_strerror(auth->pam, c));
		}
	}
	slim_log(SLIM_LOG_INFO, "auth: %s logged out", auth->user);
	auth_free(auth, r);
}

char *const *slim_auth_env(const struct slim_auth *auth)
{
	return auth->env;
}

const char *slim_auth_user(const struct slim_auth *auth)
{
	return auth->user;
}
