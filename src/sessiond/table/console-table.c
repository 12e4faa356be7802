/*
 * The consoles the manager knows (sessions-internal.h lists its files):
 * an entry from an approved console's first HELLO, heard from by
 * consoles.c, forgotten after console_timeout of silence or revoked.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "console-send.h"
#include "sessions-internal.h"

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

/* How it fell silent, for the log. */
static const char *silence(const struct slim_console *c, char buf[32])
{
	if (c->heard.gone) {
		return "said goodbye";
	}
	snprintf(buf, 32, "silent for %u s", c->mgr->config.console_timeout_s);
	return buf;
}

void slim_console_transition(struct slim_console *c, enum slim_console_event event)
{
	char buf[32];
	switch (event) {
	case SLIM_CONSOLE_SHOWN:
		c->state = SLIM_CONSOLE_WAITING;
		break;
	case SLIM_CONSOLE_ATTACHED:
		c->shows->attached = true;
		c->state = c->shows->greeter ? SLIM_CONSOLE_GREETER : SLIM_CONSOLE_SESSION;
		break;
	case SLIM_CONSOLE_BLANK:
		slim_console_unshow(c);
		c->state = SLIM_CONSOLE_GREETER;
		break;
	case SLIM_CONSOLE_HELLO:
		c->heard.known = true;
		break;
	case SLIM_CONSOLE_HEARD:
		c->heard.gone = false;
		if (c->heard.away) {
			c->heard.away = false;
			slim_log(SLIM_LOG_INFO, "console %s: heard again", c->id);
		}
		break;
	case SLIM_CONSOLE_SILENT:
		/* its session keeps it, as with card_removal = keep; looked at again later */
		if (!c->heard.away) {
			c->heard.away = true;
			slim_log(SLIM_LOG_INFO, "console %s: %s, away from session %u", c->id,
				silence(c, buf), c->shows->id);
		}
		break;
	case SLIM_CONSOLE_GOODBYE:
		c->heard.gone = true;
		c->heard.known = false;
		break;
	case SLIM_CONSOLE_LOST:
		c->heard.known = false;
		break;
	}
}

static void handle_reauth_destroy(struct wl_listener *listener, void *data)
{
	struct slim_console *c = wl_container_of(listener, c, card.reauth_destroy);
	slim_console_card_asks(c, c->card.unknown ? &c->card.hash : NULL, NULL);
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

static void arm_sweep(struct slim_manager *mgr, uint64_t in_us)
{
	uint64_t ms = (in_us + 999) / 1000;
	wl_event_source_timer_update(mgr->sweep.timer,
		ms == 0 ? 1 : ms > 2000000000 ? 2000000000 : (int)ms);
	mgr->sweep.armed = true;
}

struct slim_console *slim_manager_console_create(struct slim_manager *mgr, const char *id)
{
	if (strlen(id) == 0 || strlen(id) > SLIM_CONSOLE_ID_LEN ||
			wl_list_length(&mgr->consoles) >= (int)mgr->config.max_consoles) {
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
	c->card.reauth_destroy.notify = handle_reauth_destroy;
	wl_signal_init(&c->events.destroy);
	wl_signal_init(&c->events.message);
	wl_signal_init(&c->events.login_done);
	wl_signal_init(&c->events.choice);
	c->redirect.timer = wl_event_loop_add_timer(mgr->loop, slim_console_redirect_tick, c);
	c->greeter.retry = wl_event_loop_add_timer(mgr->loop, slim_console_greeter_retry, c);
	if (!c->redirect.timer || !c->greeter.retry) {
		if (c->redirect.timer) {
			wl_event_source_remove(c->redirect.timer);
		}
		free(c);
		return NULL;
	}
	wl_list_insert(mgr->consoles.prev, &c->link);
	/* a console restored from the state file, too, has console_timeout to say HELLO */
	c->heard.last_us = slim_manager_now(mgr);
	if (!mgr->sweep.armed && mgr->config.console_timeout_s) {
		arm_sweep(mgr, mgr->config.console_timeout_s * 1000000ull);
	}
	return c;
}

void slim_console_destroy(struct slim_console *c)
{
	slim_console_login_forget(c);
	wl_signal_emit(&c->events.destroy, c);
	slim_console_card_asks(c, NULL, NULL);
	slim_show_unlink(c);
	slim_greeter_unlink(c);
	wl_event_source_remove(c->redirect.timer);
	wl_event_source_remove(c->greeter.retry);
	wl_list_remove(&c->link);
	free(c);
}

void slim_console_heard(struct slim_console *c, uint64_t now)
{
	struct slim_manager *mgr = c->mgr;
	c->heard.last_us = now;
	slim_console_transition(c, SLIM_CONSOLE_HEARD);
	if (!mgr->sweep.armed && mgr->config.console_timeout_s) {
		arm_sweep(mgr, mgr->config.console_timeout_s * 1000000ull);
	}
}

int slim_manager_console_sweep(void *data)
{
	struct slim_manager *mgr = data;
	mgr->sweep.armed = false;
	if (mgr->config.console_timeout_s == 0) {
		return 0;
	}
	uint64_t timeout = mgr->config.console_timeout_s * 1000000ull;
	char buf[32];
	uint64_t now = slim_manager_now(mgr);
	uint64_t next = UINT64_MAX;
	bool changed = false;
	struct slim_console *c, *tmp;
	wl_list_for_each_safe(c, tmp, &mgr->consoles, link) {
		uint64_t deadline = c->heard.last_us + timeout;
		if (now < deadline && !c->heard.gone) {
			next = deadline < next ? deadline : next;
			continue;
		}
		if (c->shows && !c->shows->greeter) {
			slim_console_transition(c, SLIM_CONSOLE_SILENT);
			next = now + timeout < next ? now + timeout : next;
			continue;
		}
		if (c->login.worker) {
			/* a login under way finishes first (its outcome moves the console) */
			next = now + 1000000 < next ? now + 1000000 : next;
			continue;
		}
		if (slim_ratelimit(&mgr->log_rl, slim_now_us())) {
			slim_log(SLIM_LOG_INFO, "console %s: %s, forgotten", c->id, silence(c, buf));
		}
		slim_console_forget(c);
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

int slim_manager_heartbeat(void *data)
{
	struct slim_manager *mgr = data;
	uint64_t now = slim_manager_now(mgr);
	bool any = false;
	/* a console a retry moves elsewhere leaves the table */
	struct slim_console *c, *tmp;
	wl_list_for_each_safe(c, tmp, &mgr->consoles, link) {
		/* one that went silent (or away) is no longer listening */
		if (!c->heard.known || !c->assoc.conn || c->heard.away) {
			continue;
		}
		any = true;
		if (now - c->assoc.sent_us >= SLIM_HEARTBEAT_US) {
			slim_console_send_empty(c);
		}
		if (c->card.waiting && c->has_unreached && now >= c->unreached_until_us) {
			/* the server it could not reach may be tried again */
			c->has_unreached = false;
			slim_console_retry_wait(c);
		}
	}
	mgr->heartbeat.armed = any;
	if (any) {
		wl_event_source_timer_update(mgr->heartbeat.timer, SLIM_HEARTBEAT_TICK_MS);
	}
	return 0;
}

bool slim_console_unreached(const struct slim_console *c,
		const uint8_t fingerprint[SLIM_UNREACHED_LEN])
{
	return c->has_unreached && slim_manager_now(c->mgr) < c->unreached_until_us &&
		memcmp(c->unreached, fingerprint, SLIM_UNREACHED_LEN) == 0;
}

void slim_console_goodbye(struct slim_console *c)
{
	/* its next HELLO is a new start: what detaches it now brings no greeter to it */
	slim_console_transition(c, SLIM_CONSOLE_GOODBYE);
	slim_manager_console_sweep(c->mgr);
}

void slim_console_forget(struct slim_console *c)
{
	struct slim_session *g = c->greeter.session;
	if (!g && c->shows && c->shows->greeter) {
		g = c->shows;
	}
	slim_console_unshow(c);
	slim_console_destroy(c);
	if (g && !g->ending) {
		slim_session_end(g);
	}
}

void slim_console_revoke(struct slim_console *c)
{
	struct slim_manager *mgr = c->mgr;
	slim_log(SLIM_LOG_INFO, "console %s: revoked", c->id);
	slim_console_send_refuse(c, SLIM_REFUSE_DENIED, "this console was revoked");
	if (c->assoc.conn && mgr->ops->close) {
		mgr->ops->close(mgr->ops_data, c->assoc.conn);
	}
	c->assoc.conn = NULL;
	slim_console_forget(c);
	slim_manager_changed(mgr);
}

void slim_console_move(struct slim_console *c, const struct slim_wire_move *move,
		const char *server, const char *why)
{
	struct slim_manager *mgr = c->mgr;
	slim_log(SLIM_LOG_INFO, "console %s: %s: moved to server %s", c->id, why, server);
	slim_console_send_move(c, move);
	/* it belongs to the other server now: nothing of it stays here */
	if (c->assoc.conn && mgr->ops->close) {
		mgr->ops->close(mgr->ops_data, c->assoc.conn);
	}
	c->assoc.conn = NULL;
	slim_console_forget(c);
	slim_manager_changed(mgr);
}

void slim_console_restore(struct slim_console *c, struct slim_session *s)
{
	/* not known until its next HELLO, and then not redirected anywhere new */
	slim_show_link(c, s);
	slim_console_transition(c, SLIM_CONSOLE_ATTACHED);
	if (s->greeter) {
		slim_greeter_link(c, s);
	}
}

/* What consoles say */

void slim_console_hello(struct slim_console *c, bool new_assoc)
{
	if (!new_assoc) {
		/* our answer was lost: answer again */
		if (c->redirect.active && c->shows) {
			slim_console_send_redirect(c, c->shows->port, c->redirect.token, c->redirect.key);
		} else {
			slim_console_send_empty(c);
		}
		return;
	}
	bool was_known = c->heard.known;
	slim_console_transition(c, SLIM_CONSOLE_HELLO);
	/* any datagram of its association tells the console we serve it */
	slim_console_send_empty(c);
	if (!c->mgr->heartbeat.armed) {
		c->mgr->heartbeat.armed = true;
		wl_event_source_timer_update(c->mgr->heartbeat.timer, SLIM_HEARTBEAT_TICK_MS);
	}
	if (!was_known && c->shows) {
		/*
		 * Restored from the state file: its display association still
		 * shows c->shows (§1: a restarted manager redirects it nowhere new).
		 */
		slim_console_transition(c, SLIM_CONSOLE_ATTACHED);
		slim_log(SLIM_LOG_INFO, "console %s: back, showing session %u", c->id, c->shows->id);
		return;
	}
	if (c->shows) {
		/* a new association (reboot, resize): it needs its picture again */
		c->shows->attached = false;
		slim_console_stop_redirect(c);
		slim_console_maybe_redirect(c);
		return;
	}
	/*
	 * A server group: the login may belong on a server with more room,
	 * unless a MOVE sent the console here. It was placed already, or sent
	 * for the card on its reader (told once we answer): placed again, it
	 * would go back and forth between the card's server and the roomiest.
	 */
	struct slim_wire_move move;
	char server[64];
	if (c->assoc.caps & SLIM_CAP_MOVED) {
		/*
		 * Most likely sent for the card on its reader, which it tells us
		 * as soon as we answer: a greeter started now would be ended a
		 * round trip later. It waits a moment for the card.
		 */
		wl_event_source_timer_update(c->greeter.retry, SLIM_MOVED_GREETER_MS);
		return;
	}
	/* not to a server it could not reach: the login stays here then */
	if (slim_manager_login_elsewhere(c->mgr, &move, server, sizeof(server)) &&
			!slim_console_unreached(c, move.fingerprint)) {
		slim_console_move(c, &move, server, "a login goes where there is room");
		return;
	}
	slim_console_to_greeter(c, c->why);
}
