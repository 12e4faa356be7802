/*
 * Helpdesk shadowing, the manager's part (session-manager.md §2 and §4):
 * a console that shows nothing of a user's (nothing, or its greeter) is
 * lent to watch a session. The session's compositor asks its user and
 * opens a link of its own for the watching console (`shadow-ready
 * PORT`); the console is then REDIRECTed there, as it is to a session,
 * and goes back to its greeter when the watching ends, whoever ends it.
 */
#define _GNU_SOURCE /* explicit_bzero */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "console-send.h"
#include "sessions-internal.h"
#include "slim-hex.h"

/*
 * The compositor answers within its own SHADOW_ASK_S (30 s); one that
 * does not has this long before the manager gives up on it.
 */
#define SHADOW_ANSWER_MS 45000

static const char *const state_text[] = {
	[SLIM_SHADOW_ASKING] = "asking",
	[SLIM_SHADOW_ATTACHING] = "attaching",
	[SLIM_SHADOW_WATCHING] = "watching",
};

const char *slim_shadow_state_str(enum slim_shadow_state state)
{
	return state_text[state];
}

static void outcome(struct slim_session *s, const char *console, const char *why)
{
	snprintf(s->shadow_last, sizeof(s->shadow_last), "%s over %s", console, why);
	slim_log(SLIM_LOG_INFO, "session %u: shadowing from console %s over: %s", s->id, console,
		why);
}

/* Both sides let go of it; the console it had, or NULL if it was asking still. */
static struct slim_console *watch_free(struct slim_shadow_watch *w, const char *why)
{
	struct slim_session *s = w->session;
	struct slim_console *c = w->console;
	outcome(s, c->id, why);
	s->shadow = NULL;
	c->shadowed = NULL;
	wl_list_remove(&w->session_destroy.link);
	wl_list_remove(&w->console_destroy.link);
	wl_event_source_remove(w->timer);
	bool lent = w->state != SLIM_SHADOW_ASKING;
	explicit_bzero(w, sizeof(*w));
	free(w);
	return lent ? c : NULL;
}

/* The watching ends; its console goes back to its greeter, if nothing else took it. */
static void watch_end(struct slim_shadow_watch *w, const char *why)
{
	struct slim_manager *mgr = w->session->mgr;
	struct slim_console *c = watch_free(w, why);
	if (c && !c->shows) {
		slim_console_to_greeter(c, SLIM_WHY_SHADOW_ENDED);
	}
	slim_manager_changed(mgr);
}

static void handle_session_destroy(struct wl_listener *listener, void *data)
{
	struct slim_shadow_watch *w = wl_container_of(listener, w, session_destroy);
	watch_end(w, "session-ended");
}

/* Forgotten: no greeter to go back to. */
static void handle_console_destroy(struct wl_listener *listener, void *data)
{
	struct slim_shadow_watch *w = wl_container_of(listener, w, console_destroy);
	slim_compositor_control_send(w->session->control, "unshadow");
	watch_free(w, "console-forgotten");
}

/* Asking: the compositor did not answer. Attaching: the REDIRECTs, every 200 ms. */
static int handle_timer(void *data)
{
	struct slim_shadow_watch *w = data;
	if (w->state == SLIM_SHADOW_ASKING) {
		slim_compositor_control_send(w->session->control, "unshadow");
		watch_end(w, "no-answer");
		return 0;
	}
	if (w->state != SLIM_SHADOW_ATTACHING || w->sent >= SLIM_REDIRECT_MAX) {
		return 0; /* the compositor ends it when no console comes */
	}
	w->sent++;
	slim_console_send_redirect(w->console, w->port, w->token, w->key);
	wl_event_source_timer_update(w->timer, SLIM_REDIRECT_INTERVAL_MS);
	return 0;
}

bool slim_shadow_start(struct slim_session *s, struct slim_console *c, bool control,
		const char **why)
{
	if (s->greeter || !s->console || !s->attached) {
		*why = "the session is not on a console: nobody to ask";
		return false;
	}
	if (s->mgr->config.shadow == SLIM_SHADOW_NEVER) {
		*why = "shadowing is off (shadow = never in slimland.conf)";
		return false;
	}
	if (s->shadow) {
		*why = "the session is watched already (or its user is being asked)";
		return false;
	}
	if (c == s->console || c->shadowed || (c->shows && !c->shows->greeter)) {
		*why = "the console shows a session: it must show nothing or its greeter";
		return false;
	}
	if (!c->heard.known || c->heard.away) {
		*why = "the console is not connected";
		return false;
	}
	struct slim_shadow_watch *w = calloc(1, sizeof(*w));
	if (!w) {
		*why = "out of memory";
		return false;
	}
	w->timer = wl_event_loop_add_timer(s->mgr->loop, handle_timer, w);
	if (!w->timer || !slim_sec_random(w->token, sizeof(w->token)) ||
			!slim_sec_random(w->key, sizeof(w->key))) {
		if (w->timer) {
			wl_event_source_remove(w->timer);
		}
		free(w);
		*why = "cannot make an attach's key";
		return false;
	}
	char hex[2 * SLIM_ATTACH_TOKEN_LEN + 1], id_hex[2 * SLIM_CONSOLE_ID_LEN + 1];
	char key_hex[2 * SLIM_SEC_KEY_LEN + 1];
	slim_hex_encode(hex, w->token, sizeof(w->token));
	slim_hex_encode(id_hex, (const uint8_t *)c->id, strlen(c->id));
	slim_hex_encode(key_hex, w->key, sizeof(w->key));
	bool sent = slim_compositor_control_send(s->control, "shadow %s %s %s %s %s", hex, id_hex,
		key_hex, s->mgr->config.shadow == SLIM_SHADOW_ALWAYS ? "always" : "ask",
		control ? "control" : "view");
	explicit_bzero(key_hex, sizeof(key_hex));
	if (!sent) {
		wl_event_source_remove(w->timer);
		explicit_bzero(w, sizeof(*w));
		free(w);
		*why = "the session's compositor does not answer";
		return false;
	}
	w->session = s;
	w->console = c;
	w->control = control;
	w->state = SLIM_SHADOW_ASKING;
	s->shadow = w;
	c->shadowed = w;
	w->session_destroy.notify = handle_session_destroy;
	wl_signal_add(&s->events.destroy, &w->session_destroy);
	w->console_destroy.notify = handle_console_destroy;
	wl_signal_add(&c->events.destroy, &w->console_destroy);
	wl_event_source_timer_update(w->timer, SHADOW_ANSWER_MS);
	slim_log(SLIM_LOG_INFO, "session %u: console %s asks to watch%s", s->id, c->id,
		control ? ", with control" : "");
	slim_manager_changed(s->mgr);
	return true;
}

bool slim_shadow_stop(struct slim_session *s)
{
	if (!s->shadow) {
		return false;
	}
	/* the compositor says shadow-ended (or shadow-refused), and the console goes back then */
	slim_compositor_control_send(s->control, "unshadow");
	return true;
}

/* What the compositor says */

void slim_shadow_ready(void *data, uint16_t port)
{
	struct slim_session *s = data;
	struct slim_shadow_watch *w = s->shadow;
	if (!w || w->state != SLIM_SHADOW_ASKING || port == 0) {
		return;
	}
	struct slim_console *c = w->console;
	if (c->shows && !c->shows->greeter) {
		/* it was given a session meanwhile: that wins */
		slim_compositor_control_send(s->control, "unshadow");
		watch_end(w, "console-taken");
		return;
	}
	/* its greeter keeps running, told to let the console go; it shows it again after */
	struct slim_session *greeter = c->shows;
	slim_console_unshow(c);
	if (greeter) {
		greeter->attached = false;
		slim_compositor_control_send(greeter->control, "detach");
	}
	w->state = SLIM_SHADOW_ATTACHING;
	w->port = port;
	w->sent = 0;
	slim_log(SLIM_LOG_INFO, "session %u: its user lets console %s watch", s->id, c->id);
	handle_timer(w);
	slim_manager_changed(s->mgr);
}

void slim_shadow_refused(void *data, const char *why)
{
	struct slim_session *s = data;
	if (s->shadow) {
		watch_end(s->shadow, why);
	}
}

void slim_shadow_attached(void *data, const char *console)
{
	struct slim_session *s = data;
	struct slim_shadow_watch *w = s->shadow;
	if (!w || strcmp(w->console->id, console) != 0) {
		return;
	}
	w->state = SLIM_SHADOW_WATCHING;
	wl_event_source_timer_update(w->timer, 0);
	explicit_bzero(w->key, sizeof(w->key));
	slim_log(SLIM_LOG_INFO, "session %u: console %s watches%s", s->id, console,
		w->control ? ", with control" : "");
	slim_manager_changed(s->mgr);
}

void slim_shadow_ended(void *data, const char *why)
{
	slim_shadow_refused(data, why);
}
