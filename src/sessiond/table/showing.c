/*
 * Which console shows which session (sessions-internal.h lists its
 * files): a console is shown a session by telling the compositor to expect
 * it and the console where to go (REDIRECT, session-manager.md §1-2), and
 * goes to a greeter of its own when it has nothing else to show. What
 * compositors report on their control sockets lands here.
 */
#define _GNU_SOURCE /* explicit_bzero */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "console-send.h"
#include "slim-lines.h"
#include "sessions-internal.h"

static const char *const why_text[] = {
	[SLIM_WHY_NO_CARD] = "no card yet",
	[SLIM_WHY_UNKNOWN_CARD] = "unknown card",
	[SLIM_WHY_CARD_REMOVED] = "card removed",
	[SLIM_WHY_SESSION_ENDED] = "session ended",
	[SLIM_WHY_ADMIN] = "detached by an administrator",
	[SLIM_WHY_MOVED] = "the session moved to another console",
	[SLIM_WHY_REAUTH] = "the card's session needs the password",
	[SLIM_WHY_LOST] = "the session lost the console",
	[SLIM_WHY_SERVER_UNREACHABLE] = "session server unreachable",
	[SLIM_WHY_REGISTRY_UNREACHABLE] = "registry unreachable",
	[SLIM_WHY_CARD_ELSEWHERE] = "card logged in elsewhere",
	[SLIM_WHY_UNCONFIRMED_LOGIN] = "unconfirmed login",
	[SLIM_WHY_SEVERAL_SESSIONS] = "several sessions",
	[SLIM_WHY_SHADOW_ENDED] = "shadowing ended",
};

const char *slim_why_str(enum slim_why why)
{
	return (unsigned)why < sizeof(why_text) / sizeof(why_text[0]) ? why_text[why] : "?";
}

/* A user none of whose sessions shows on a console may run idle (cgroup.h). */
static void user_shown(struct slim_manager *mgr, const struct slim_session *changed)
{
	if (changed->greeter || !mgr->ops->user_shown) {
		return;
	}
	bool shown = false;
	struct slim_session *s;
	wl_list_for_each(s, &mgr->sessions, link) {
		shown |= !s->greeter && s->uid == changed->uid && s->console;
	}
	mgr->ops->user_shown(mgr->ops_data, changed->uid, shown);
}

void slim_show_link(struct slim_console *c, struct slim_session *s)
{
	c->shows = s;
	s->console = c;
	s->active_us = slim_now_us(); /* a card, a login or an administrator showed it */
	user_shown(c->mgr, s);
}

void slim_show_unlink(struct slim_console *c)
{
	struct slim_session *s = c->shows;
	if (s) {
		slim_session_touch(s);
		s->console = NULL;
		c->shows = NULL;
		user_shown(c->mgr, s);
	}
}

void slim_greeter_link(struct slim_console *c, struct slim_session *g)
{
	c->greeter.session = g;
	g->greeter_for = c;
}

void slim_greeter_unlink(struct slim_console *c)
{
	if (c->greeter.session) {
		c->greeter.session->greeter_for = NULL;
		c->greeter.session = NULL;
	}
}

void slim_console_stop_redirect(struct slim_console *c)
{
	c->redirect.active = false;
	/* the attach's key has reached the compositor and the console, or never will */
	explicit_bzero(c->redirect.key, sizeof(c->redirect.key));
	wl_event_source_timer_update(c->redirect.timer, 0);
}

void slim_console_unshow(struct slim_console *c)
{
	struct slim_session *old = c->shows;
	slim_console_stop_redirect(c);
	if (!old) {
		return;
	}
	slim_show_unlink(c);
	old->attached = false;
	/*
	 * The console's own greeter keeps showing ("Starting your session…")
	 * until the console is attached elsewhere, and is ended then: detached
	 * now, the console would have nothing to show until the session is up.
	 */
	if (old != c->greeter.session) {
		slim_compositor_control_send(old->control, "detach");
	}
	if (!old->greeter) {
		slim_session_now_detached(old);
	}
}

void slim_console_maybe_redirect(struct slim_console *c)
{
	struct slim_session *s = c->shows;
	if (!s || !c->heard.known || s->port == 0 || !slim_compositor_control_connected(s->control)) {
		return;
	}
	/* a token and a key for this attach alone, told to the compositor, then the console */
	if (!slim_sec_random(c->redirect.token, sizeof(c->redirect.token)) || !slim_sec_random(c->redirect.key, sizeof(c->redirect.key))) {
		slim_log(SLIM_LOG_ERROR, "getrandom: %s", strerror(errno));
		return;
	}
	char hex[2 * SLIM_ATTACH_TOKEN_LEN + 1], id_hex[2 * SLIM_CONSOLE_ID_LEN + 1];
	char key_hex[2 * SLIM_SEC_KEY_LEN + 1];
	slim_hex_encode(hex, c->redirect.token, sizeof(c->redirect.token));
	/* §2: console ids travel in hex on the control socket, as tokens do */
	slim_hex_encode(id_hex, (const uint8_t *)c->id, strlen(c->id));
	slim_hex_encode(key_hex, c->redirect.key, sizeof(c->redirect.key));
	bool sent = slim_compositor_control_send(s->control, "expect %s %s %s", hex, id_hex, key_hex);
	explicit_bzero(key_hex, sizeof(key_hex));
	if (!sent) {
		slim_log(SLIM_LOG_ERROR, "session %u: cannot send expect", s->id);
		explicit_bzero(c->redirect.key, sizeof(c->redirect.key));
		return;
	}
	c->redirect.active = true;
	c->redirect.sent = 0;
	slim_console_redirect_tick(c);
}

int slim_console_redirect_tick(void *data)
{
	struct slim_console *c = data;
	if (!c->redirect.active || !c->shows) {
		return 0;
	}
	if (c->redirect.sent >= SLIM_REDIRECT_MAX) {
		c->redirect.active = false;
		slim_log(SLIM_LOG_INFO, "console %s: not attached after %d REDIRECTs",
			c->id, SLIM_REDIRECT_MAX);
		return 0;
	}
	c->redirect.sent++;
	slim_console_send_redirect(c, c->shows->port, c->redirect.token, c->redirect.key);
	wl_event_source_timer_update(c->redirect.timer, SLIM_REDIRECT_INTERVAL_MS);
	return 0;
}

void slim_console_show(struct slim_console *c, struct slim_session *s)
{
	if (c->shows == s) {
		if (!s->attached && !c->redirect.active) {
			slim_console_maybe_redirect(c);
		}
		return;
	}
	slim_console_unshow(c);
	struct slim_console *other = s->console;
	if (other) {
		/* `expect` replaces the other console on the compositor's side */
		slim_show_unlink(other);
		slim_console_stop_redirect(other);
	}
	slim_show_link(c, s);
	s->attached = false;
	if (s->detach_timer) {
		wl_event_source_timer_update(s->detach_timer, 0);
	}
	slim_console_transition(c, SLIM_CONSOLE_SHOWN);
	slim_console_maybe_redirect(c);
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

void slim_console_greeter_retry_later(struct slim_console *c)
{
	unsigned ms = SLIM_GREETER_RETRY_FIRST_MS <<
		(c->greeter.failures < 5 ? c->greeter.failures : 5);
	c->greeter.failures++;
	wl_event_source_timer_update(c->greeter.retry,
		ms > SLIM_GREETER_RETRY_MAX_MS ? SLIM_GREETER_RETRY_MAX_MS : (int)ms);
}

int slim_console_greeter_retry(void *data)
{
	struct slim_console *c = data;
	if (!c->shows && !c->shadowed && c->heard.known) {
		slim_console_to_greeter(c, c->why);
	}
	return 0;
}

void slim_console_to_greeter(struct slim_console *c, enum slim_why why)
{
	c->why = why;
	if (!c->heard.known) {
		/* not heard from since we started: a greeter waits for its HELLO */
		slim_console_transition(c, SLIM_CONSOLE_BLANK);
		slim_manager_changed(c->mgr);
		return;
	}
	if (!c->greeter.session && !slim_launch_greeter(c)) {
		slim_console_transition(c, SLIM_CONSOLE_BLANK);
		slim_console_greeter_retry_later(c);
		slim_manager_changed(c->mgr);
		return;
	}
	slim_console_show(c, c->greeter.session);
}

void slim_console_message(struct slim_console *c, const char *text)
{
	snprintf(c->greeter.message, sizeof(c->greeter.message), "%s", text);
	/* a message replaces whatever was offered to choose */
	c->choice.kind = SLIM_CHOICE_NONE;
	c->choice.n_labels = 0;
	wl_signal_emit(&c->events.message, (void *)text);
}

bool slim_session_detach(struct slim_session *s, enum slim_why why)
{
	if (!s->console || s->greeter) {
		return false;
	}
	slim_console_to_greeter(s->console, why);
	return true;
}

/* What compositors say */

static void handle_control_hello(void *data, uint16_t port, pid_t pid)
{
	struct slim_session *s = data;
	if (pid != s->pid) {
		slim_log(SLIM_LOG_INFO, "session %u: control says PID %d, we started %d",
			s->id, (int)pid, (int)s->pid);
	}
	s->port = port;
	/* a console restored from the state file is not known yet: nothing moves */
	if (s->console && !s->attached && !s->console->redirect.active) {
		slim_console_maybe_redirect(s->console);
	}
	slim_manager_changed(s->mgr);
}

static struct slim_console *console_of(struct slim_session *s, const char *id)
{
	return s->console && strcmp(s->console->id, id) == 0 ? s->console : NULL;
}

static void handle_control_attached(void *data, const char *id, uint16_t width,
		uint16_t height)
{
	struct slim_session *s = data;
	struct slim_console *c = console_of(s, id);
	if (!c) {
		slim_log(SLIM_LOG_DEBUG, "session %u: attached %s, not ours", s->id, id);
		return;
	}
	slim_console_stop_redirect(c);
	slim_console_transition(c, SLIM_CONSOLE_ATTACHED);
	if (s->greeter) {
		c->greeter.failures = 0;
	} else if (c->greeter.session) {
		/* the console has a session now: its greeter is done */
		struct slim_session *g = c->greeter.session;
		slim_greeter_unlink(c);
		slim_session_end(g);
	}
	slim_log(SLIM_LOG_INFO, "console %s: attached to session %u (%ux%u)", c->id, s->id,
		width, height);
	slim_manager_changed(s->mgr);
}

static void handle_control_detached(void *data, const char *id)
{
	struct slim_session *s = data;
	struct slim_console *c = console_of(s, id);
	if (!c || c->redirect.active || !s->attached) {
		/* ours to expect: a console we moved, or the one a new token replaces */
		return;
	}
	slim_log(SLIM_LOG_INFO, "console %s: session %u lost it", c->id, s->id);
	if (s->greeter) {
		slim_console_transition(c, SLIM_CONSOLE_BLANK);
		slim_console_transition(c, SLIM_CONSOLE_LOST); /* its next HELLO brings the greeter back */
		slim_manager_changed(s->mgr);
		return;
	}
	bool alive = slim_manager_now(s->mgr) - c->heard.last_us < 5000000ull;
	if (!alive) {
		slim_console_transition(c, SLIM_CONSOLE_LOST);
	}
	slim_console_to_greeter(c, SLIM_WHY_LOST);
}

static void handle_control_closed(void *data)
{
	struct slim_session *s = data;
	/* no control, no session: make sure the compositor goes too */
	if (!s->ending) {
		slim_session_end(s);
	}
	slim_session_destroy(s);
}

static void handle_control_active(void *data)
{
	struct slim_session *s = data;
	s->active_us = slim_now_us();
}

static void handle_control_inhibit(void *data, bool inhibited)
{
	struct slim_session *s = data;
	/* the time shown while inhibited counts as use, up to this moment */
	slim_session_touch(s);
	s->inhibited = inhibited;
}

static void handle_control_audio(void *data, const struct slim_session_audio *audio)
{
	struct slim_session *s = data;
	s->audio = *audio;
}

static void handle_control_net(void *data, const struct slim_session_net *net)
{
	struct slim_session *s = data;
	s->net = *net;
}

static void handle_control_video(void *data, const struct slim_session_video *video)
{
	struct slim_session *s = data;
	s->video = *video;
}

static void handle_control_traffic(void *data, const struct slim_session_traffic *traffic)
{
	struct slim_session *s = data;
	s->traffic = *traffic;
}

static void handle_control_keys(void *data, const struct slim_session_keys *keys)
{
	struct slim_session *s = data;
	s->keys = *keys;
}

const struct slim_compositor_control_handler slim_session_control = {
	.hello = handle_control_hello,
	.attached = handle_control_attached,
	.detached = handle_control_detached,
	.active = handle_control_active,
	.inhibit = handle_control_inhibit,
	.audio = handle_control_audio,
	.net = handle_control_net,
	.video = handle_control_video,
	.shadow_ready = slim_shadow_ready,
	.shadow_refused = slim_shadow_refused,
	.shadow_attached = slim_shadow_attached,
	.shadow_ended = slim_shadow_ended,
	.traffic = handle_control_traffic,
	.keys = handle_control_keys,
	.closed = handle_control_closed,
};
