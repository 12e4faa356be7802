/*
 * Logins at a greeter (sessions-internal.h lists its files): the form's
 * user and password go to a login worker (login.h), whose reports move the
 * console to the user's session, new or running.
 */
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include "sessions-internal.h"

/* An id reserved for a login that started no session is given back if it was the last. */
static void release_login_id(struct slim_console *c)
{
	if (c->login.id && c->login.id + 1 == c->mgr->next_session_id &&
			!slim_manager_session(c->mgr, c->login.id)) {
		c->mgr->next_session_id = c->login.id;
	}
	c->login.id = 0;
}

static void login_over(struct slim_console *c, const char *error)
{
	c->login.worker = NULL;
	if (error) {
		release_login_id(c);
	}
	c->login.id = 0;
	c->login.ok = !error;
	snprintf(c->login.error, sizeof(c->login.error), "%s", error ? error : "");
	slim_console_login_done(c, error);
}

unsigned slim_login_delay_ms(unsigned failures)
{
	if (failures == 0) {
		return 0;
	}
	unsigned shift = failures - 1 > 8 ? 8 : failures - 1;
	unsigned ms = SLIM_LOGIN_DELAY_FIRST_MS << shift;
	return ms > SLIM_LOGIN_DELAY_MAX_MS ? SLIM_LOGIN_DELAY_MAX_MS : ms;
}

void slim_console_login_done(struct slim_console *c, const char *error)
{
	struct slim_console_login_done done = { .error = error };
	if (!error) {
		c->login.failures = 0;
		c->greeter.message[0] = '\0';
		wl_signal_emit(&c->events.login_done, &done);
		return;
	}
	uint64_t now = slim_now_us();
	c->login.failures++;
	done.delay_ms = slim_login_delay_ms(c->login.failures);
	/* the delay is the greeter client's, on a timer: nothing ever sleeps in the manager */
	c->login.blocked_until_us = now + done.delay_ms * 1000ull;
	if (slim_ratelimit(&c->mgr->log_rl, now)) {
		/* the user name only: the password never reaches a log */
		slim_log(SLIM_LOG_INFO, "console %s: login failed for %.64s (%u in a row)",
			c->id, c->login.user, c->login.failures);
	}
	wl_signal_emit(&c->events.login_done, &done);
}

static void logged_in(struct slim_console *c, struct slim_session *s)
{
	struct slim_manager *mgr = c->mgr;
	slim_log(SLIM_LOG_INFO, "console %s: %s logged in, session %u", c->id, s->user, s->id);
	if (c->card.unknown) {
		c->card.takeover = false;
		slim_manager_bind(mgr, &c->card.hash, s);
		slim_console_card_asks(c, NULL, c->card.reauth);
	}
	login_over(c, NULL);
	slim_console_show(c, s);
}

/* A login held for its card ends without a word: the greeter asks something else. */
static void login_dropped(struct slim_console *c)
{
	c->login.held = false;
	c->login.worker = NULL;
	release_login_id(c);
}

void slim_console_login_proceed(struct slim_console *c, bool start)
{
	struct slim_manager *mgr = c->mgr;
	if (!c->login.held || !c->login.worker) {
		return;
	}
	struct slim_login *login = c->login.worker;
	if (start) {
		c->login.held = false;
		mgr->ops->login_proceed(mgr->ops_data, login, true);
		return;
	}
	login_dropped(c);
	mgr->ops->login_proceed(mgr->ops_data, login, false);
}

void slim_console_login_forget(struct slim_console *c)
{
	struct slim_manager *mgr = c->mgr;
	if (c->login.claim && mgr->elsewhere) {
		mgr->elsewhere->claim_cancel(mgr->elsewhere_data, c->login.claim);
		c->login.claim = NULL;
	}
	if (c->login.held && c->login.worker) {
		struct slim_login *login = c->login.worker;
		login_dropped(c);
		mgr->ops->login_proceed(mgr->ops_data, login, false);
	} else if (c->login.worker) {
		mgr->ops->login_cancel(mgr->ops_data, c->login.worker);
	}
	c->login.worker = NULL;
}

/* What the registry said of the card this login is to bind. */
static void handle_claim_done(void *data, enum slim_claim_result result,
		const struct slim_card_session *holder)
{
	struct slim_console *c = data;
	c->login.claim = NULL;
	switch (result) {
	case SLIM_CLAIM_OURS:
		slim_console_login_proceed(c, true);
		return;
	case SLIM_CLAIM_ELSEWHERE: {
		/* two logins with one card at once: the first claim wins, and says where */
		char text[160], label[96];
		slim_log(SLIM_LOG_INFO, "console %s: the card logged in on %s first: "
			"no session started here", c->id, holder->server);
		slim_console_login_proceed(c, false);
		snprintf(text, sizeof(text), "This card has just logged in on %s.", holder->server);
		snprintf(label, sizeof(label), "Go to %s", holder->server);
		c->why = SLIM_WHY_CARD_ELSEWHERE;
		slim_console_choose(c, SLIM_CHOICE_GO_THERE, text, label);
		c->choice.sessions[0] = *holder;
		return;
	}
	case SLIM_CLAIM_GONE:
		/* its server left the registry between the tap and the login */
		slim_console_login_proceed(c, false);
		slim_console_away(c, holder, true, "cannot be reached from here now");
		return;
	case SLIM_CLAIM_UNREACHABLE:
		c->why = SLIM_WHY_UNCONFIRMED_LOGIN;
		slim_console_choose(c, SLIM_CHOICE_ANYWAY, "The registry cannot be reached to "
			"confirm that this card has no other session.",
			"Start the session anyway|Cancel");
		return;
	}
}

static enum slim_login_next login_authenticated(void *data, const char *error)
{
	struct slim_console *c = data;
	struct slim_manager *mgr = c->mgr;
	if (error) {
		login_over(c, error);
		return SLIM_LOGIN_STOP;
	}
	struct slim_session *s = NULL;
	if (c->card.reauth && strcmp(c->card.reauth->user, c->login.user) == 0) {
		s = c->card.reauth;
	} else {
		/* one session a user: a second login shows the one that runs */
		struct slim_session *it;
		wl_list_for_each(it, &mgr->sessions, link) {
			if (!it->greeter && !it->ending && strcmp(it->user, c->login.user) == 0) {
				s = it;
				break;
			}
		}
	}
	/* the card's unknown hash, if any, waits for the session to bind it to */
	slim_console_card_asks(c, c->card.unknown ? &c->card.hash : NULL, NULL);
	if (s) {
		release_login_id(c);
		logged_in(c, s);
		return SLIM_LOGIN_STOP;
	}
	if (!c->card.unknown || !mgr->elsewhere) {
		return SLIM_LOGIN_START; /* the worker opens the PAM session, starts the compositor */
	}
	/*
	 * A server group: one session a card, decided before it starts. The
	 * card is claimed in the registry first; the worker waits.
	 */
	c->login.claim = mgr->elsewhere->claim_card(mgr->elsewhere_data, c->card.hash.bytes,
		c->login.id, c->card.takeover, handle_claim_done, c);
	c->login.held = true;
	if (!c->login.claim) {
		handle_claim_done(c, SLIM_CLAIM_UNREACHABLE, NULL); /* asks: nothing proceeds now */
	}
	return SLIM_LOGIN_HOLD;
}

static void login_started(void *data, const struct slim_spawn_result *res, int control_fd)
{
	struct slim_console *c = data;
	struct slim_manager *mgr = c->mgr;
	struct slim_login *login = c->login.worker;
	struct passwd *pw = getpwnam(c->login.user);
	slim_log(SLIM_LOG_INFO, "session %u: compositor %d for %s", c->login.id, res->pid,
		c->login.user);
	struct slim_session *s = slim_session_add(mgr, c->login.id, c->login.user,
		pw ? pw->pw_uid : (uid_t)-1, res->pid, res->pidfd, res->control_path,
		control_fd, false);
	if (!s) {
		c->login.worker = NULL;
		mgr->ops->login_cancel(mgr->ops_data, login);
		login_over(c, "The session could not be started");
		return;
	}
	s->login = login;
	c->login.worker = NULL;
	logged_in(c, s);
}

static void login_failed(void *data, const char *error)
{
	struct slim_console *c = data;
	slim_log(SLIM_LOG_ERROR, "console %s: the session of %s could not be started: %s",
		c->id, c->login.user, error);
	login_over(c, error);
}

static const struct slim_login_callbacks login_callbacks = {
	.authenticated = login_authenticated,
	.started = login_started,
	.failed = login_failed,
};

bool slim_manager_login(struct slim_manager *mgr, struct slim_console *c,
		const char *user, const char *password, const char **why)
{
	snprintf(c->login.user, sizeof(c->login.user), "%s", user);
	if (c->login.worker) {
		*why = "Please wait a moment";
		return false;
	}
	if (strcmp(user, mgr->config.greeter_user) == 0 || user[0] == '\0') {
		*why = "This account cannot log in here";
		return false;
	}
	if (!slim_ratelimit(&mgr->login_rl, slim_now_us())) {
		*why = "Too many attempts; try again in a moment";
		return false;
	}
	/* the session's id is known now: its cgroup and log are named after it */
	uint32_t id = mgr->next_session_id++;
	char log_name[80];
	snprintf(log_name, sizeof(log_name), "session-%u", id);
	struct slim_launch_bufs b;
	struct slim_login_request req = {
		.service = mgr->config.pam_service,
		.user = user,
		.password = password,
		.console = c->id,
		.spawn = slim_launch_request(mgr, id, user, mgr->config.startup, NULL, log_name,
			false, c, &b),
	};
	c->login.id = id;
	c->login.ok = false;
	c->login.error[0] = '\0';
	c->login.worker = mgr->ops->login(mgr->ops_data, mgr->loop, &req, &login_callbacks, c);
	if (!c->login.worker) {
		release_login_id(c);
		*why = "Cannot log in now: see the system log";
		return false;
	}
	return true;
}
