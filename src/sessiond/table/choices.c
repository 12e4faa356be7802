/*
 * What a console's greeter offers to choose (sessions-internal.h lists its
 * files) and what each choice does. A server group asks the person at the
 * console rather than guessing when the registry cannot say what a card
 * opens: wait for a session out of reach or start another, open a session
 * the registry does not confirm, go where the card just logged in, start a
 * login etcd cannot confirm, or pick one of the card's sessions.
 */
#include <stdio.h>
#include <string.h>
#include "sessions-internal.h"

void slim_console_choose(struct slim_console *c, enum slim_choice_kind kind, const char *text,
		const char *labels)
{
	struct slim_console_choice *ch = &c->choice;
	memset(ch, 0, sizeof(*ch));
	ch->kind = kind;
	snprintf(ch->text, sizeof(ch->text), "%s", text);
	for (const char *p = labels; *p && ch->n_labels < SLIM_CHOICE_MAX; ) {
		size_t n = strcspn(p, "|");
		snprintf(ch->labels[ch->n_labels++], sizeof(ch->labels[0]), "%.*s", (int)n, p);
		p += n + (p[n] == '|');
	}
	/* the text is the greeter's message too (slimlandctl why says it) */
	snprintf(c->greeter.message, sizeof(c->greeter.message), "%s", text);
	wl_signal_emit(&c->events.choice, ch);
}

static void wait_for(struct slim_console *c, const char *server)
{
	char text[160];
	if (server[0]) {
		snprintf(text, sizeof(text), "Waiting for %s: your session will be shown when it "
			"can be reached.", server);
	} else {
		snprintf(text, sizeof(text), "Waiting for the registry: your session will be "
			"shown when it can be looked up.");
	}
	slim_console_message(c, text);
	c->card.waiting = true;
}

/* One of the card's sessions, as chosen: here, or on its server. */
static void open_chosen(struct slim_console *c, const struct slim_card_session *where)
{
	if (!where->server[0]) {
		struct slim_session *s = slim_manager_session(c->mgr, where->id);
		if (s && !s->ending) {
			slim_console_open(c, s);
		} else {
			slim_console_message(c, "That session has ended.");
		}
	} else if (where->movable && slim_console_unreached(c, where->move.fingerprint)) {
		slim_console_away(c, where, false, "this console cannot reach now");
	} else if (where->movable) {
		slim_console_move_to(c, where, "the card's session chosen at the greeter");
	} else {
		slim_console_away(c, where, false, "cannot be reached from here now");
	}
}

bool slim_console_chose(struct slim_console *c, int n)
{
	struct slim_console_choice ch = c->choice;
	if (ch.kind == SLIM_CHOICE_NONE || n < 0 || n >= ch.n_labels) {
		return false;
	}
	c->choice.kind = SLIM_CHOICE_NONE;
	c->choice.n_labels = 0;
	slim_log(SLIM_LOG_INFO, "console %s: chose \"%s\"", c->id, ch.labels[n]);
	switch (ch.kind) {
	case SLIM_CHOICE_NONE:
		break;
	case SLIM_CHOICE_AWAY:
		if (n == 0) {
			wait_for(c, ch.sessions[0].server);
			break;
		}
		/* the next login here starts a session this card opens */
		slim_console_card_asks(c, &c->card.hash, NULL);
		c->card.takeover = ch.takeover;
		slim_console_message(c, "Log in to start a new session: this card will open it.");
		break;
	case SLIM_CHOICE_UNCONFIRMED:
		if (n == 0) {
			open_chosen(c, &ch.sessions[0]);
		} else {
			wait_for(c, "");
		}
		break;
	case SLIM_CHOICE_GO_THERE:
		open_chosen(c, &ch.sessions[0]);
		break;
	case SLIM_CHOICE_ANYWAY:
		slim_console_login_proceed(c, n == 0);
		if (n != 0) {
			slim_console_message(c, "Nothing was started.");
		}
		break;
	case SLIM_CHOICE_SESSIONS:
		open_chosen(c, &ch.sessions[n]);
		break;
	}
	return true;
}
