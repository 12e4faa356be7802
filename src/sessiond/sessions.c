#define _GNU_SOURCE /* pidfd_send_signal via syscall, explicit_bzero */
#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "consoles.h"
#include "control.h"
#include "greeter.h"
#include "lines.h"
#include "sessions.h"

/* More would only be someone inventing console ids: each may start a greeter. */
#define MAX_CONSOLES 512
#define GREETER_RETRY_FIRST_MS 2000
#define GREETER_RETRY_MAX_MS 60000

static const char *const why_text[] = {
	[SLIM_WHY_NO_CARD] = "no card yet",
	[SLIM_WHY_UNKNOWN_CARD] = "unknown card",
	[SLIM_WHY_CARD_REMOVED] = "card removed",
	[SLIM_WHY_SESSION_ENDED] = "session ended",
	[SLIM_WHY_ADMIN] = "detached by an administrator",
	[SLIM_WHY_MOVED] = "the session moved to another console",
	[SLIM_WHY_REAUTH] = "the card's session needs the password",
	[SLIM_WHY_LOST] = "the session lost the console",
};

const char *slim_why_str(enum slim_why why)
{
	return (unsigned)why < sizeof(why_text) / sizeof(why_text[0]) ? why_text[why] : "?";
}

const char *slim_console_state_str(enum slim_console_state state)
{
	switch (state) {
	case SLIM_CONSOLE_GREETER:
		return "greeter";
	case SLIM_CONSOLE_SESSION:
		return "session";
	case SLIM_CONSOLE_WAITING:
		return "waiting";
	}
	return "?";
}

uint64_t slim_manager_now(struct slim_manager *mgr)
{
	return mgr->ops->now ? mgr->ops->now(mgr->ops_data) : slim_now_us();
}

void slim_manager_changed(struct slim_manager *mgr)
{
	if (mgr->ops->changed && !mgr->restoring) {
		mgr->ops->changed(mgr->ops_data);
	}
}

struct slim_manager *slim_manager_create(struct wl_event_loop *loop,
		const struct slim_config *config, const char *run_dir,
		const uint8_t card_key[SLIM_SEC_KEY_LEN], const char *enroll_path,
		const uint8_t *host_key, const struct slim_manager_ops *ops, void *ops_data)
{
	struct slim_manager *mgr = calloc(1, sizeof(*mgr));
	if (!mgr) {
		return NULL;
	}
	if (!slim_enroll_init(&mgr->enroll, enroll_path, config->enroll)) {
		free(mgr);
		return NULL;
	}
	memcpy(mgr->card_key, card_key, sizeof(mgr->card_key));
	if (host_key) {
		memcpy(mgr->host_key, host_key, sizeof(mgr->host_key));
	}
	mgr->loop = loop;
	mgr->config = *config;
	mgr->ops = ops;
	mgr->ops_data = ops_data;
	mgr->check_greeter_peer = true;
	snprintf(mgr->run_dir, sizeof(mgr->run_dir), "%s", run_dir);
	snprintf(mgr->greeter_socket, sizeof(mgr->greeter_socket), "%s/greeter.sock", run_dir);
	wl_list_init(&mgr->sessions);
	wl_list_init(&mgr->consoles);
	wl_list_init(&mgr->bindings);
	mgr->next_session_id = 1;
	mgr->log_rl = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	mgr->login_rl = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	for (size_t i = 0; i < sizeof(mgr->refuse_rl) / sizeof(mgr->refuse_rl[0]); i++) {
		mgr->refuse_rl[i] = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(2);
	}
	mgr->refuse_all_rl = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(200);
	mgr->sweep_timer = wl_event_loop_add_timer(loop, slim_manager_console_sweep, mgr);
	if (!mgr->sweep_timer) {
		slim_enroll_finish(&mgr->enroll);
		free(mgr);
		return NULL;
	}
	return mgr;
}

static void console_destroy(struct slim_console *c);
static void console_forget(struct slim_console *c);

void slim_manager_destroy(struct slim_manager *mgr)
{
	if (!mgr) {
		return;
	}
	/*
	 * Compositors keep running and PAM sessions stay open: a restarted
	 * manager finds them in the state file. Only our own handles go.
	 */
	struct slim_console *c, *ctmp;
	wl_list_for_each_safe(c, ctmp, &mgr->consoles, link) {
		console_destroy(c);
	}
	struct slim_binding *b, *btmp;
	wl_list_for_each_safe(b, btmp, &mgr->bindings, link) {
		wl_list_remove(&b->link);
		free(b);
	}
	struct slim_session *s, *stmp;
	wl_list_for_each_safe(s, stmp, &mgr->sessions, link) {
		wl_list_remove(&s->link);
		if (s->login) {
			/* its worker keeps the PAM session open until the compositor exits */
			mgr->ops->login_cancel(mgr->ops_data, s->login);
		}
		slim_control_destroy(s->control);
		if (s->pidfd_source) {
			wl_event_source_remove(s->pidfd_source);
		}
		if (s->detach_timer) {
			wl_event_source_remove(s->detach_timer);
		}
		if (s->pidfd >= 0) {
			close(s->pidfd);
		}
		free(s);
	}
	wl_event_source_remove(mgr->sweep_timer);
	slim_enroll_finish(&mgr->enroll);
	explicit_bzero(mgr->card_key, sizeof(mgr->card_key));
	free(mgr);
}

struct slim_session *slim_manager_session(struct slim_manager *mgr, uint32_t id)
{
	struct slim_session *s;
	wl_list_for_each(s, &mgr->sessions, link) {
		if (s->id == id) {
			return s;
		}
	}
	return NULL;
}

struct slim_console *slim_manager_console(struct slim_manager *mgr, const char *id)
{
	struct slim_console *c;
	wl_list_for_each(c, &mgr->consoles, link) {
		if (strcmp(c->id, id) == 0) {
			return c;
		}
	}
	return NULL;
}

static int handle_greeter_retry(void *data);

static void arm_sweep(struct slim_manager *mgr, uint64_t in_us)
{
	uint64_t ms = (in_us + 999) / 1000;
	wl_event_source_timer_update(mgr->sweep_timer,
		ms == 0 ? 1 : ms > 2000000000 ? 2000000000 : (int)ms);
	mgr->sweep_armed = true;
}

struct slim_console *slim_manager_console_create(struct slim_manager *mgr, const char *id)
{
	if (strlen(id) == 0 || strlen(id) > SLIM_CONSOLE_ID_LEN ||
			wl_list_length(&mgr->consoles) >= MAX_CONSOLES) {
		return NULL;
	}
	struct slim_console *c = calloc(1, sizeof(*c));
	if (!c) {
		return NULL;
	}
	c->mgr = mgr;
	snprintf(c->id, sizeof(c->id), "%s", id);
	c->state = SLIM_CONSOLE_GREETER;
	c->why = SLIM_WHY_NO_CARD;
	c->redirect_timer = wl_event_loop_add_timer(mgr->loop, slim_console_redirect_tick, c);
	c->greeter_retry = wl_event_loop_add_timer(mgr->loop, handle_greeter_retry, c);
	if (!c->redirect_timer || !c->greeter_retry) {
		if (c->redirect_timer) {
			wl_event_source_remove(c->redirect_timer);
		}
		free(c);
		return NULL;
	}
	wl_list_insert(mgr->consoles.prev, &c->link);
	/* a console restored from the state file, too, has console_timeout to say HELLO */
	c->last_heard_us = slim_manager_now(mgr);
	if (!mgr->sweep_armed && mgr->config.console_timeout_s) {
		arm_sweep(mgr, mgr->config.console_timeout_s * 1000000ull);
	}
	return c;
}

static void console_destroy(struct slim_console *c)
{
	if (c->login) {
		c->mgr->ops->login_cancel(c->mgr->ops_data, c->login);
		c->login = NULL;
	}
	slim_greeter_client_forget(c);
	if (c->shows) {
		c->shows->console = NULL;
	}
	if (c->greeter) {
		c->greeter->greeter_for = NULL;
	}
	struct slim_session *s;
	wl_list_for_each(s, &c->mgr->sessions, link) {
		if (s->console == c) {
			s->console = NULL;
		}
	}
	wl_event_source_remove(c->redirect_timer);
	wl_event_source_remove(c->greeter_retry);
	wl_list_remove(&c->link);
	free(c);
}

void slim_console_heard(struct slim_console *c, uint64_t now)
{
	struct slim_manager *mgr = c->mgr;
	c->last_heard_us = now;
	if (c->away) {
		c->away = false;
		slim_log(SLIM_LOG_INFO, "console %s: heard again", c->id);
	}
	if (!mgr->sweep_armed && mgr->config.console_timeout_s) {
		arm_sweep(mgr, mgr->config.console_timeout_s * 1000000ull);
	}
}

int slim_manager_console_sweep(void *data)
{
	struct slim_manager *mgr = data;
	mgr->sweep_armed = false;
	if (mgr->config.console_timeout_s == 0) {
		return 0;
	}
	uint64_t timeout = mgr->config.console_timeout_s * 1000000ull;
	uint64_t now = slim_manager_now(mgr);
	uint64_t next = UINT64_MAX;
	bool changed = false;
	struct slim_console *c, *tmp;
	wl_list_for_each_safe(c, tmp, &mgr->consoles, link) {
		uint64_t deadline = c->last_heard_us + timeout;
		if (now < deadline) {
			next = deadline < next ? deadline : next;
			continue;
		}
		if (c->shows && !c->shows->greeter) {
			/* its session keeps it, as with card_removal = keep; looked at again later */
			if (!c->away) {
				c->away = true;
				slim_log(SLIM_LOG_INFO, "console %s: silent for %u s, away from session %u",
					c->id, mgr->config.console_timeout_s, c->shows->id);
			}
			next = now + timeout < next ? now + timeout : next;
			continue;
		}
		if (c->login) {
			/* a login under way finishes first (its outcome moves the console) */
			next = now + 1000000 < next ? now + 1000000 : next;
			continue;
		}
		if (slim_ratelimit(&mgr->log_rl, slim_now_us())) {
			slim_log(SLIM_LOG_INFO, "console %s: silent for %u s, forgotten", c->id,
				mgr->config.console_timeout_s);
		}
		console_forget(c);
		changed = true;
	}
	if (next != UINT64_MAX) {
		arm_sweep(mgr, next - now);
	}
	if (changed) {
		slim_manager_changed(mgr);
	}
	return 0;
}

/* Bindings */

void slim_manager_hash_card(const struct slim_manager *mgr, const struct slim_wire_card *card,
		struct slim_card_hash *out)
{
	/* kind and length first: the same bytes of another kind are another card */
	uint8_t msg[2 + SLIM_CARD_TOKEN_MAX];
	size_t len = card->len < SLIM_CARD_TOKEN_MAX ? card->len : SLIM_CARD_TOKEN_MAX;
	msg[0] = card->kind;
	msg[1] = (uint8_t)len;
	memcpy(msg + 2, card->token, len);
	if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, mgr->card_key, sizeof(mgr->card_key), msg, 2 + len,
			out->bytes) != 0) {
		memset(out->bytes, 0, sizeof(out->bytes)); /* matches no card bound with a hash */
	}
	explicit_bzero(msg, sizeof(msg));
}

struct slim_binding *slim_manager_binding(struct slim_manager *mgr,
		const struct slim_card_hash *token)
{
	struct slim_binding *b;
	wl_list_for_each(b, &mgr->bindings, link) {
		if (memcmp(b->token.bytes, token->bytes, sizeof(token->bytes)) == 0) {
			return b;
		}
	}
	return NULL;
}

bool slim_manager_bind(struct slim_manager *mgr, const struct slim_card_hash *token,
		struct slim_session *session)
{
	struct slim_binding *b = slim_manager_binding(mgr, token);
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b) {
			return false;
		}
		b->token = *token;
		wl_list_insert(mgr->bindings.prev, &b->link);
	}
	/* a card opens one session: the newest login with it wins */
	b->session = session;
	slim_manager_changed(mgr);
	return true;
}

/* Sessions */

static void stop_redirect(struct slim_console *c)
{
	c->redirecting = false;
	/* the attach's key has reached the compositor and the console, or never will */
	explicit_bzero(c->key, sizeof(c->key));
	wl_event_source_timer_update(c->redirect_timer, 0);
}

static int handle_detach_timeout(void *data)
{
	struct slim_session *s = data;
	if (!s->console && !s->ending) {
		slim_log(SLIM_LOG_INFO, "session %u (%s): detached for %u s, ending it",
			s->id, s->user, s->mgr->config.detached_timeout_s);
		slim_session_end(s);
	}
	return 0;
}

static void session_now_detached(struct slim_session *s)
{
	s->detached_since_us = slim_now_us();
	unsigned timeout = s->mgr->config.detached_timeout_s;
	if (s->greeter || timeout == 0) {
		return;
	}
	if (!s->detach_timer) {
		s->detach_timer = wl_event_loop_add_timer(s->mgr->loop, handle_detach_timeout, s);
	}
	if (s->detach_timer) {
		wl_event_source_timer_update(s->detach_timer,
			timeout > 2000000 ? 2000000000 : (int)(timeout * 1000));
	}
}

static int handle_pidfd(int fd, uint32_t mask, void *data)
{
	struct slim_session *s = data;
	slim_log(SLIM_LOG_INFO, "session %u (%s): compositor %d exited", s->id, s->user, s->pid);
	slim_session_destroy(s);
	return 0;
}

struct slim_session *slim_session_add(struct slim_manager *mgr, uint32_t id,
		const char *user, uid_t uid, pid_t pid, int pidfd,
		const char *control_path, int control_fd, bool greeter)
{
	struct slim_session *s = calloc(1, sizeof(*s));
	if (!s) {
		goto fail;
	}
	if (id == 0) {
		id = mgr->next_session_id;
	}
	if (id >= mgr->next_session_id) {
		mgr->next_session_id = id + 1;
	}
	s->mgr = mgr;
	s->id = id;
	s->greeter = greeter;
	snprintf(s->user, sizeof(s->user), "%s", user);
	s->uid = uid;
	s->pid = pid;
	s->pidfd = pidfd;
	snprintf(s->control_path, sizeof(s->control_path), "%s", control_path ? control_path : "");
	s->detached_since_us = slim_now_us();
	wl_list_insert(mgr->sessions.prev, &s->link);
	if (pidfd >= 0) {
		s->pidfd_source = wl_event_loop_add_fd(mgr->loop, pidfd, WL_EVENT_READABLE,
			handle_pidfd, s);
	}
	s->control = slim_control_create(s, control_path, control_fd);
	if (!s->control) {
		slim_log(SLIM_LOG_ERROR, "session %u: cannot watch its control socket", id);
		control_fd = -1; /* owned by nobody now */
		slim_session_end(s);
		slim_session_destroy(s);
		return NULL;
	}
	slim_manager_changed(mgr);
	return s;
fail:
	if (pidfd >= 0) {
		close(pidfd);
	}
	if (control_fd >= 0) {
		close(control_fd);
	}
	return NULL;
}

void slim_session_end(struct slim_session *s)
{
	s->ending = true;
	/* the pidfd, where there is one, cannot hit a recycled PID */
	if (s->pidfd >= 0) {
		if (syscall(SYS_pidfd_send_signal, s->pidfd, SIGTERM, NULL, 0) < 0 &&
				errno != ESRCH) {
			slim_log(SLIM_LOG_ERROR, "session %u: SIGTERM: %s", s->id, strerror(errno));
		}
	} else if (s->pid > 0) {
		kill(s->pid, SIGTERM);
	}
}

void slim_session_destroy(struct slim_session *s)
{
	if (!s) {
		return;
	}
	struct slim_manager *mgr = s->mgr;
	wl_list_remove(&s->link);
	wl_list_init(&s->link);
	struct slim_binding *b, *btmp;
	wl_list_for_each_safe(b, btmp, &mgr->bindings, link) {
		if (b->session == s) {
			wl_list_remove(&b->link);
			free(b);
		}
	}
	struct slim_console *c;
	wl_list_for_each(c, &mgr->consoles, link) {
		if (c->reauth == s) {
			c->reauth = NULL;
		}
	}
	slim_control_destroy(s->control);
	s->control = NULL;
	if (s->pidfd_source) {
		wl_event_source_remove(s->pidfd_source);
	}
	if (s->detach_timer) {
		wl_event_source_remove(s->detach_timer);
	}
	if (s->pidfd >= 0) {
		close(s->pidfd);
	}
	if (s->login) {
		/* the worker closes the PAM session once the compositor has exited */
		mgr->ops->login_cancel(mgr->ops_data, s->login);
	}
	struct slim_console *shown_on = s->console;
	if (s->greeter_for && s->greeter_for->greeter == s) {
		s->greeter_for->greeter = NULL;
	}
	if (shown_on) {
		shown_on->shows = NULL;
		stop_redirect(shown_on);
		s->console = NULL;
		if (s->greeter) {
			/* the greeter died under its console: start another, after a pause */
			shown_on->state = SLIM_CONSOLE_GREETER;
			unsigned ms = GREETER_RETRY_FIRST_MS << (shown_on->greeter_failures < 5 ?
				shown_on->greeter_failures : 5);
			shown_on->greeter_failures++;
			wl_event_source_timer_update(shown_on->greeter_retry,
				ms > GREETER_RETRY_MAX_MS ? GREETER_RETRY_MAX_MS : (int)ms);
		} else {
			slim_console_to_greeter(shown_on, SLIM_WHY_SESSION_ENDED);
		}
	}
	free(s);
	slim_manager_changed(mgr);
}

/* Consoles and what they show */

static void unshow(struct slim_console *c)
{
	struct slim_session *old = c->shows;
	stop_redirect(c);
	if (!old) {
		return;
	}
	c->shows = NULL;
	old->console = NULL;
	old->attached = false;
	/*
	 * The console's own greeter keeps showing ("Starting your session…")
	 * until the console is attached elsewhere, and is ended then: detached
	 * now, the console would have nothing to show until the session is up.
	 */
	if (old != c->greeter) {
		slim_control_send(old->control, "detach");
	}
	if (!old->greeter) {
		session_now_detached(old);
	}
}

/*
 * The console leaves the table: its session (if a user's) is detached and
 * runs on, its greeter is ended.
 */
static void console_forget(struct slim_console *c)
{
	struct slim_session *g = c->greeter;
	if (!g && c->shows && c->shows->greeter) {
		g = c->shows;
	}
	unshow(c);
	console_destroy(c);
	if (g && !g->ending) {
		slim_session_end(g);
	}
}

void slim_console_revoke(struct slim_console *c)
{
	struct slim_manager *mgr = c->mgr;
	slim_log(SLIM_LOG_INFO, "console %s: revoked", c->id);
	slim_console_send_refuse(c, SLIM_REFUSE_DENIED, "this console was revoked");
	if (c->conn && mgr->ops->close) {
		mgr->ops->close(mgr->ops_data, c->conn);
	}
	c->conn = NULL;
	console_forget(c);
	slim_manager_changed(mgr);
}

/* Sends `expect` and starts the REDIRECTs, once both ends can take them. */
static void maybe_redirect(struct slim_console *c)
{
	struct slim_session *s = c->shows;
	if (!s || !c->known || s->port == 0 || !slim_control_connected(s->control)) {
		return;
	}
	/* a token and a key for this attach alone, told to the compositor, then the console */
	if (!slim_sec_random(c->token, sizeof(c->token)) || !slim_sec_random(c->key, sizeof(c->key))) {
		slim_log(SLIM_LOG_ERROR, "getrandom: %s", strerror(errno));
		return;
	}
	char hex[2 * SLIM_ATTACH_TOKEN_LEN + 1], id_hex[2 * SLIM_CONSOLE_ID_LEN + 1];
	char key_hex[2 * SLIM_SEC_KEY_LEN + 1];
	slim_hex_encode(hex, c->token, sizeof(c->token));
	/* §2: console ids travel in hex on the control socket, as tokens do */
	slim_hex_encode(id_hex, (const uint8_t *)c->id, strlen(c->id));
	slim_hex_encode(key_hex, c->key, sizeof(c->key));
	bool sent = slim_control_send(s->control, "expect %s %s %s", hex, id_hex, key_hex);
	explicit_bzero(key_hex, sizeof(key_hex));
	if (!sent) {
		slim_log(SLIM_LOG_ERROR, "session %u: cannot send expect", s->id);
		explicit_bzero(c->key, sizeof(c->key));
		return;
	}
	c->redirecting = true;
	c->redirect_sent = 0;
	slim_console_redirect_tick(c);
}

int slim_console_redirect_tick(void *data)
{
	struct slim_console *c = data;
	if (!c->redirecting || !c->shows) {
		return 0;
	}
	if (c->redirect_sent >= SLIM_REDIRECT_MAX) {
		c->redirecting = false;
		slim_log(SLIM_LOG_INFO, "console %s: not attached after %d REDIRECTs",
			c->id, SLIM_REDIRECT_MAX);
		return 0;
	}
	c->redirect_sent++;
	slim_console_send_redirect(c, c->shows->port, c->token, c->key);
	wl_event_source_timer_update(c->redirect_timer, SLIM_REDIRECT_INTERVAL_MS);
	return 0;
}

void slim_console_show(struct slim_console *c, struct slim_session *s)
{
	if (c->shows == s) {
		if (!s->attached && !c->redirecting) {
			maybe_redirect(c);
		}
		return;
	}
	unshow(c);
	struct slim_console *other = s->console;
	if (other) {
		/* `expect` replaces the other console on the compositor's side */
		other->shows = NULL;
		s->console = NULL;
		stop_redirect(other);
	}
	c->shows = s;
	s->console = c;
	s->attached = false;
	s->detached_since_us = 0;
	if (s->detach_timer) {
		wl_event_source_timer_update(s->detach_timer, 0);
	}
	c->state = SLIM_CONSOLE_WAITING;
	maybe_redirect(c);
	if (other) {
		/*
		 * Only now the console the session left gets its greeter: the
		 * session's new console has its `expect` and REDIRECT under way
		 * first, not after a compositor has been started.
		 */
		slim_console_to_greeter(other, SLIM_WHY_MOVED);
	}
	slim_manager_changed(c->mgr);
}

static const char *listen_any(struct slim_manager *mgr, char *buf, size_t size)
{
	/* compositors listen where the manager does, on a port of their own */
	struct sockaddr_storage ss;
	socklen_t len;
	char host[INET6_ADDRSTRLEN] = "0.0.0.0";
	if (slim_parse_address(mgr->config.listen, 0, &ss, &len)) {
		if (ss.ss_family == AF_INET6) {
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
			snprintf(buf, size, "[%s]:0", host);
			return buf;
		}
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
	}
	snprintf(buf, size, "%s:0", host);
	return buf;
}

struct spawn_bufs {
	char listen[80], log_path[400], cgroup[128];
};

/* What starting a compositor for USER as session ID takes (strings in b). */
static struct slim_spawn_request spawn_request(struct slim_manager *mgr, uint32_t id,
		const char *user, const char *startup, char *const *env, const char *log_name,
		bool greeter, struct spawn_bufs *b)
{
	struct passwd *pw = getpwnam(user);
	uid_t uid = pw ? pw->pw_uid : (uid_t)-1;
	/*
	 * The compositor opens its log as the user: RUN_DIR/log/USER/ is theirs.
	 * Without it (no such user, no permission) its output goes nowhere.
	 */
	bool have_log = false;
	if (pw) {
		char dir[300];
		snprintf(dir, sizeof(dir), "%s/log", mgr->run_dir);
		mkdir(dir, 0755);
		snprintf(dir, sizeof(dir), "%s/log/%s", mgr->run_dir, user);
		have_log = (mkdir(dir, 0700) == 0 || errno == EEXIST) &&
			(geteuid() != 0 || chown(dir, pw->pw_uid, pw->pw_gid) == 0);
		snprintf(b->log_path, sizeof(b->log_path), "%s/%s.log", dir, log_name);
	}
	snprintf(b->cgroup, sizeof(b->cgroup), "slimland.slice/user-%u.slice/session-%u",
		(unsigned)uid, id);
	return (struct slim_spawn_request){
		.user = user,
		.slimland = mgr->config.slimland,
		.listen = listen_any(mgr, b->listen, sizeof(b->listen)),
		.startup = startup,
		.env = env,
		.cgroup = greeter ? NULL : b->cgroup,
		.log_path = have_log ? b->log_path : NULL,
		.clear = mgr->config.transport == SLIM_SEC_CLEAR,
	};
}

static struct slim_session *spawn(struct slim_manager *mgr, const char *user,
		const char *startup, char *const *env, const char *log_name, bool greeter)
{
	struct passwd *pw = getpwnam(user);
	uid_t uid = pw ? pw->pw_uid : (uid_t)-1;
	uint32_t id = mgr->next_session_id;
	struct spawn_bufs b;
	struct slim_spawn_request req = spawn_request(mgr, id, user, startup, env, log_name,
		greeter, &b);
	struct slim_spawn_result res = { .pid = -1, .pidfd = -1 };
	int control_fd = -1;
	if (!mgr->ops->spawn(mgr->ops_data, &req, &res, &control_fd)) {
		slim_log(SLIM_LOG_ERROR, "cannot start a compositor for %s", user);
		return NULL;
	}
	slim_log(SLIM_LOG_INFO, "session %u: compositor %d for %s%s", id, res.pid, user,
		greeter ? " (greeter)" : "");
	return slim_session_add(mgr, id, user, uid, res.pid, res.pidfd,
		res.control_path, control_fd, greeter);
}

static struct slim_session *spawn_greeter(struct slim_console *c)
{
	struct slim_manager *mgr = c->mgr;
	char sock_env[300], console_env[64], log_name[64], runtime_env[360];
	snprintf(sock_env, sizeof(sock_env), "SLIMLAND_GREETER_SOCKET=%s", mgr->greeter_socket);
	snprintf(console_env, sizeof(console_env), "SLIMLAND_CONSOLE=%s", c->id);
	snprintf(log_name, sizeof(log_name), "greeter-%s", c->id);
	/*
	 * Every greeter runs as the same user: a runtime directory each, or
	 * they would all want the same $XDG_RUNTIME_DIR/slimland-control.
	 */
	snprintf(runtime_env, sizeof(runtime_env), "XDG_RUNTIME_DIR=%s/greeter-%s",
		mgr->run_dir, c->id);
	char *const env[] = { sock_env, console_env, runtime_env, NULL };
	struct slim_session *g = spawn(mgr, mgr->config.greeter_user, mgr->config.greeter,
		env, log_name, true);
	if (g) {
		g->greeter_for = c;
		c->greeter = g;
	}
	return g;
}

static int handle_greeter_retry(void *data)
{
	struct slim_console *c = data;
	if (!c->shows && c->known) {
		slim_console_to_greeter(c, c->why);
	}
	return 0;
}

void slim_console_to_greeter(struct slim_console *c, enum slim_why why)
{
	c->why = why;
	if (!c->known) {
		/* not heard from since we started: a greeter waits for its HELLO */
		unshow(c);
		c->state = SLIM_CONSOLE_GREETER;
		slim_manager_changed(c->mgr);
		return;
	}
	if (!c->greeter && !spawn_greeter(c)) {
		unshow(c);
		c->state = SLIM_CONSOLE_GREETER;
		unsigned ms = GREETER_RETRY_FIRST_MS << (c->greeter_failures < 5 ? c->greeter_failures : 5);
		c->greeter_failures++;
		wl_event_source_timer_update(c->greeter_retry,
			ms > GREETER_RETRY_MAX_MS ? GREETER_RETRY_MAX_MS : (int)ms);
		slim_manager_changed(c->mgr);
		return;
	}
	slim_console_show(c, c->greeter);
}

void slim_console_message(struct slim_console *c, const char *text)
{
	snprintf(c->message, sizeof(c->message), "%s", text);
	slim_greeter_client_message(c, text);
}

bool slim_session_detach(struct slim_session *s, enum slim_why why)
{
	if (!s->console || s->greeter) {
		return false;
	}
	slim_console_to_greeter(s->console, why);
	return true;
}

/* What consoles say */

void slim_console_hello(struct slim_console *c, bool new_assoc)
{
	if (!new_assoc) {
		/* our answer was lost: answer again */
		if (c->redirecting && c->shows) {
			slim_console_send_redirect(c, c->shows->port, c->token, c->key);
		} else {
			slim_console_send_empty(c);
		}
		return;
	}
	bool was_known = c->known;
	c->known = true;
	/* any datagram of its association tells the console we serve it */
	slim_console_send_empty(c);
	if (!was_known && c->shows) {
		/*
		 * Restored from the state file: its display association still
		 * shows c->shows (§1: a restarted manager redirects it nowhere new).
		 */
		c->shows->attached = true;
		c->state = c->shows->greeter ? SLIM_CONSOLE_GREETER : SLIM_CONSOLE_SESSION;
		slim_log(SLIM_LOG_INFO, "console %s: back, showing session %u", c->id, c->shows->id);
		return;
	}
	if (c->shows) {
		/* a new association (reboot, resize): it needs its picture again */
		c->shows->attached = false;
		stop_redirect(c);
		maybe_redirect(c);
		return;
	}
	slim_console_to_greeter(c, c->why);
}

static bool needs_password(struct slim_session *s)
{
	const struct slim_config *config = &s->mgr->config;
	switch (config->reauth) {
	case SLIM_REAUTH_NEVER:
		return false;
	case SLIM_REAUTH_ALWAYS:
		return true;
	case SLIM_REAUTH_IDLE:
		return !s->console && s->detached_since_us != 0 &&
			slim_now_us() - s->detached_since_us >= config->reauth_idle_s * 1000000ull;
	}
	return true;
}

void slim_console_card(struct slim_console *c, const struct slim_wire_card *card)
{
	struct slim_manager *mgr = c->mgr;
	struct slim_card_hash token;
	slim_manager_hash_card(mgr, card, &token);
	if (card->event == 0) {
		if (!mgr->config.card_removal_detach || !c->shows || c->shows->greeter) {
			return;
		}
		slim_log(SLIM_LOG_INFO, "console %s: card removed, session %u detached",
			c->id, c->shows->id);
		slim_session_detach(c->shows, SLIM_WHY_CARD_REMOVED);
		return;
	}
	struct slim_binding *b = card->len ? slim_manager_binding(mgr, &token) : NULL;
	if (!b) {
		/* remembered until someone logs in here (or another card is tapped) */
		c->has_pending = card->len > 0;
		c->pending = token;
		c->reauth = NULL;
		if (!c->shows || !c->shows->greeter) {
			slim_console_to_greeter(c, SLIM_WHY_UNKNOWN_CARD);
		} else {
			c->why = SLIM_WHY_UNKNOWN_CARD;
		}
		slim_console_message(c, "Unknown card: log in to use it");
		return;
	}
	struct slim_session *s = b->session;
	c->has_pending = false;
	if (c->shows == s) {
		return;
	}
	if (needs_password(s)) {
		c->reauth = s;
		if (!c->shows || !c->shows->greeter) {
			slim_console_to_greeter(c, SLIM_WHY_REAUTH);
		} else {
			c->why = SLIM_WHY_REAUTH;
		}
		slim_console_message(c, "Enter your password to continue");
		return;
	}
	c->reauth = NULL;
	slim_log(SLIM_LOG_INFO, "console %s: card for session %u (%s)", c->id, s->id, s->user);
	slim_console_show(c, s);
}

/* What compositors say */

void slim_session_control_hello(struct slim_session *s, uint16_t port, pid_t pid)
{
	if (pid != s->pid) {
		slim_log(SLIM_LOG_INFO, "session %u: control says PID %d, we started %d",
			s->id, (int)pid, (int)s->pid);
	}
	s->port = port;
	/* a console restored from the state file is not known yet: nothing moves */
	if (s->console && !s->attached && !s->console->redirecting) {
		maybe_redirect(s->console);
	}
	slim_manager_changed(s->mgr);
}

static struct slim_console *console_of(struct slim_session *s, const char *id)
{
	return s->console && strcmp(s->console->id, id) == 0 ? s->console : NULL;
}

void slim_session_control_attached(struct slim_session *s, const char *id,
		uint16_t width, uint16_t height)
{
	struct slim_console *c = console_of(s, id);
	if (!c) {
		slim_log(SLIM_LOG_DEBUG, "session %u: attached %s, not ours", s->id, id);
		return;
	}
	s->attached = true;
	stop_redirect(c);
	c->state = s->greeter ? SLIM_CONSOLE_GREETER : SLIM_CONSOLE_SESSION;
	if (s->greeter) {
		c->greeter_failures = 0;
	} else if (c->greeter) {
		/* the console has a session now: its greeter is done */
		struct slim_session *g = c->greeter;
		c->greeter = NULL;
		g->greeter_for = NULL;
		slim_session_end(g);
	}
	slim_log(SLIM_LOG_INFO, "console %s: attached to session %u (%ux%u)", c->id, s->id,
		width, height);
	slim_manager_changed(s->mgr);
}

void slim_session_control_detached(struct slim_session *s, const char *id)
{
	struct slim_console *c = console_of(s, id);
	if (!c || c->redirecting || !s->attached) {
		/* ours to expect: a console we moved, or the one a new token replaces */
		return;
	}
	slim_log(SLIM_LOG_INFO, "console %s: session %u lost it", c->id, s->id);
	if (s->greeter) {
		unshow(c);
		c->state = SLIM_CONSOLE_GREETER;
		c->known = false; /* its next HELLO brings the greeter back */
		slim_manager_changed(s->mgr);
		return;
	}
	bool alive = slim_manager_now(s->mgr) - c->last_heard_us < 5000000ull;
	if (!alive) {
		c->known = false;
	}
	slim_console_to_greeter(c, SLIM_WHY_LOST);
}

void slim_session_control_closed(struct slim_session *s)
{
	/* no control, no session: make sure the compositor goes too */
	if (!s->ending) {
		slim_session_end(s);
	}
	slim_session_destroy(s);
}

/* Logins */

/* An id reserved for a login that started no session is given back if it was the last. */
static void release_login_id(struct slim_console *c)
{
	if (c->login_id && c->login_id + 1 == c->mgr->next_session_id &&
			!slim_manager_session(c->mgr, c->login_id)) {
		c->mgr->next_session_id = c->login_id;
	}
	c->login_id = 0;
}

static void login_over(struct slim_console *c, const char *error)
{
	c->login = NULL;
	if (error) {
		release_login_id(c);
	}
	c->login_id = 0;
	c->login_ok = !error;
	snprintf(c->login_error, sizeof(c->login_error), "%s", error ? error : "");
	slim_greeter_login_done(c, error);
}

static void logged_in(struct slim_console *c, struct slim_session *s)
{
	struct slim_manager *mgr = c->mgr;
	slim_log(SLIM_LOG_INFO, "console %s: %s logged in, session %u", c->id, s->user, s->id);
	if (c->has_pending) {
		c->has_pending = false;
		slim_manager_bind(mgr, &c->pending, s);
	}
	login_over(c, NULL);
	slim_console_show(c, s);
}

static bool login_authenticated(void *data, const char *error)
{
	struct slim_console *c = data;
	struct slim_manager *mgr = c->mgr;
	if (error) {
		login_over(c, error);
		return false;
	}
	struct slim_session *s = NULL;
	if (c->reauth && strcmp(c->reauth->user, c->login_user) == 0) {
		s = c->reauth;
	} else {
		/* one session a user: a second login shows the one that runs */
		struct slim_session *it;
		wl_list_for_each(it, &mgr->sessions, link) {
			if (!it->greeter && !it->ending && strcmp(it->user, c->login_user) == 0) {
				s = it;
				break;
			}
		}
	}
	c->reauth = NULL;
	if (!s) {
		return true; /* the worker opens the PAM session and starts the compositor */
	}
	release_login_id(c);
	logged_in(c, s);
	return false;
}

static void login_started(void *data, const struct slim_spawn_result *res, int control_fd)
{
	struct slim_console *c = data;
	struct slim_manager *mgr = c->mgr;
	struct slim_login *login = c->login;
	struct passwd *pw = getpwnam(c->login_user);
	slim_log(SLIM_LOG_INFO, "session %u: compositor %d for %s", c->login_id, res->pid,
		c->login_user);
	struct slim_session *s = slim_session_add(mgr, c->login_id, c->login_user,
		pw ? pw->pw_uid : (uid_t)-1, res->pid, res->pidfd, res->control_path,
		control_fd, false);
	if (!s) {
		c->login = NULL;
		mgr->ops->login_cancel(mgr->ops_data, login);
		login_over(c, "The session could not be started");
		return;
	}
	s->login = login;
	c->login = NULL;
	logged_in(c, s);
}

static void login_failed(void *data, const char *error)
{
	struct slim_console *c = data;
	slim_log(SLIM_LOG_ERROR, "console %s: the session of %s could not be started: %s",
		c->id, c->login_user, error);
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
	snprintf(c->login_user, sizeof(c->login_user), "%s", user);
	if (c->login) {
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
	struct spawn_bufs b;
	struct slim_login_request req = {
		.service = mgr->config.pam_service,
		.user = user,
		.password = password,
		.console = c->id,
		.spawn = spawn_request(mgr, id, user, mgr->config.startup, NULL, log_name,
			false, &b),
	};
	c->login_id = id;
	c->login_ok = false;
	c->login_error[0] = '\0';
	c->login = mgr->ops->login(mgr->ops_data, mgr->loop, &req, &login_callbacks, c);
	if (!c->login) {
		release_login_id(c);
		*why = "Cannot log in now: see the system log";
		return false;
	}
	return true;
}
