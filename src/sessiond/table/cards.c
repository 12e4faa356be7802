/*
 * Cards (sessions-internal.h lists its files): what the manager keeps of a
 * card (a keyed hash of its token, bound to the session it opens) and what
 * a tap on a console does.
 */
#define _GNU_SOURCE /* explicit_bzero */
#include <gnutls/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sessions-internal.h"

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
	if (b->session != session) {
		/* a server group's registry confirms it (group-cards.c); alone, it is so */
		b->state = mgr->elsewhere ? SLIM_BINDING_UNCONFIRMED : SLIM_BINDING_BOUND;
	}
	b->session = session;
	slim_manager_changed(mgr);
	return true;
}

void slim_manager_unbind(struct slim_manager *mgr, const uint8_t hash[32])
{
	struct slim_card_hash token;
	memcpy(token.bytes, hash, sizeof(token.bytes));
	struct slim_binding *b = slim_manager_binding(mgr, &token);
	if (b) {
		wl_list_remove(&b->link);
		free(b);
		slim_manager_changed(mgr);
	}
}

/* What a tap does */

void slim_console_card_asks(struct slim_console *c, const struct slim_card_hash *unknown,
		struct slim_session *reauth)
{
	c->card.unknown = unknown != NULL;
	if (unknown && unknown != &c->card.hash) {
		c->card.hash = *unknown;
	}
	if (c->card.reauth == reauth) {
		return;
	}
	if (c->card.reauth) {
		wl_list_remove(&c->card.reauth_destroy.link);
	}
	c->card.reauth = reauth;
	if (reauth) {
		wl_signal_add(&reauth->events.destroy, &c->card.reauth_destroy);
	}
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
		return slim_session_idle_us(s) >= config->reauth_idle_s * 1000000ull;
	}
	return true;
}

/* The console's greeter (started if need be) asks the person at it for something. */
static void ask_at_greeter(struct slim_console *c, enum slim_why why, const char *message)
{
	if (!c->shows || !c->shows->greeter) {
		slim_console_to_greeter(c, why);
	} else {
		c->why = why;
	}
	slim_console_message(c, message);
}

/* As ask_at_greeter, with a choice (choices.c says what each does). */
static void offer_at_greeter(struct slim_console *c, enum slim_why why,
		enum slim_choice_kind kind, const char *text, const char *labels)
{
	if (!c->shows || !c->shows->greeter) {
		slim_console_to_greeter(c, why);
	} else {
		c->why = why;
	}
	slim_console_choose(c, kind, text, labels);
}

void slim_console_move_to(struct slim_console *c, const struct slim_card_session *where,
		const char *why)
{
	slim_console_move(c, &where->move, where->server, why);
}

void slim_console_open(struct slim_console *c, struct slim_session *s)
{
	if (c->shows == s) {
		slim_console_card_asks(c, NULL, c->card.reauth);
		return;
	}
	if (needs_password(s)) {
		slim_console_card_asks(c, NULL, s);
		ask_at_greeter(c, SLIM_WHY_REAUTH, "Enter your password to continue");
		return;
	}
	slim_console_card_asks(c, NULL, NULL);
	slim_log(SLIM_LOG_INFO, "console %s: card for session %u (%s)", c->id, s->id, s->user);
	slim_console_show(c, s);
}

void slim_console_away(struct slim_console *c, const struct slim_card_session *where,
		bool takeover, const char *why)
{
	char text[256], labels[160];
	snprintf(text, sizeof(text), "Your session is on %s, which %s.", where->server, why);
	snprintf(labels, sizeof(labels), "Wait for %s|Start a new session here", where->server);
	offer_at_greeter(c, SLIM_WHY_SERVER_UNREACHABLE, SLIM_CHOICE_AWAY, text, labels);
	c->choice.sessions[0] = *where;
	c->choice.takeover = takeover;
}

/*
 * Every session the card opens, in the group: this server's, the
 * registry's record's and any other server's published with the card
 * (after a partition healed). More than one: the person chooses.
 */
static bool offer_sessions(struct slim_console *c, const struct slim_binding *b,
		const struct slim_card_where *where)
{
	struct slim_card_session all[SLIM_CHOICE_MAX];
	int n = 0;
	if (b && b->session) {
		all[n++] = (struct slim_card_session){ .id = b->session->id };
	}
	if (where->registry == SLIM_CARD_SERVER || where->registry == SLIM_CARD_GONE) {
		all[n++] = where->holder;
	}
	for (int i = 0; i < where->n_others && n < SLIM_CHOICE_MAX; i++) {
		all[n++] = where->others[i];
	}
	if (n < 2) {
		return false;
	}
	char text[128], labels[SLIM_CHOICE_MAX * 80] = "";
	const char *here = c->mgr->server_name[0] ? c->mgr->server_name : "here";
	snprintf(text, sizeof(text), "This card has %d sessions: choose one.", n);
	for (int i = 0; i < n; i++) {
		size_t len = strlen(labels);
		snprintf(labels + len, sizeof(labels) - len, "%s%.63s/%u", i ? "|" : "",
			all[i].server[0] ? all[i].server : here, all[i].id);
	}
	offer_at_greeter(c, SLIM_WHY_SEVERAL_SESSIONS, SLIM_CHOICE_SESSIONS, text, labels);
	memcpy(c->choice.sessions, all, sizeof(all[0]) * (size_t)n);
	slim_log(SLIM_LOG_INFO, "console %s: the card opens %d sessions: the person chooses",
		c->id, n);
	return true;
}

void slim_console_tap(struct slim_console *c, const struct slim_card_hash *token)
{
	struct slim_manager *mgr = c->mgr;
	if (c->login.held) {
		/* a login waiting for its card's claim or a choice: this tap asks anew */
		slim_console_login_forget(c);
	}
	c->card.hash = *token;
	c->card.waiting = false;
	c->card.takeover = false;
	struct slim_binding *b = slim_manager_binding(mgr, token);
	if (b && b->session && b->session->ending) {
		b = NULL; /* being ended (a logout): nothing to open */
	}
	struct slim_card_where where;
	slim_manager_card_where(mgr, token->bytes, &where);
	if (offer_sessions(c, b, &where)) {
		slim_console_card_asks(c, NULL, NULL);
		return;
	}
	if (b && (b->state == SLIM_BINDING_BOUND || !mgr->elsewhere)) {
		slim_console_open(c, b->session);
		return;
	}
	if (b) {
		/*
		 * Its session here, which the registry does not confirm (etcd
		 * out of reach, or this server's lease in doubt): a session
		 * elsewhere may have taken the card meanwhile.
		 */
		char text[256], labels[96];
		snprintf(text, sizeof(text), "This server cannot reach the server group's "
			"registry to confirm that this card opens session %u here.", b->session->id);
		snprintf(labels, sizeof(labels), "Open session %u here|Wait", b->session->id);
		slim_console_card_asks(c, NULL, NULL);
		offer_at_greeter(c, SLIM_WHY_REGISTRY_UNREACHABLE, SLIM_CHOICE_UNCONFIRMED, text,
			labels);
		c->choice.sessions[0] = (struct slim_card_session){ .id = b->session->id };
		return;
	}
	switch (where.registry) {
	case SLIM_CARD_NONE:
	case SLIM_CARD_HERE: /* a record of ours without its session: gone at the next reconcile */
		/* remembered until someone logs in here (or another card is tapped) */
		slim_console_card_asks(c, token, NULL);
		ask_at_greeter(c, SLIM_WHY_UNKNOWN_CARD, "Unknown card: log in to use it");
		return;
	case SLIM_CARD_SERVER:
		slim_console_card_asks(c, NULL, NULL);
		if (slim_console_unreached(c, where.holder.move.fingerprint)) {
			/* it came here because it could not reach that server: not sent back */
			slim_log(SLIM_LOG_INFO, "console %s: card for a session of server %s, which it "
				"cannot reach: not moved", c->id, where.holder.server);
			slim_console_away(c, &where.holder, false, "this console cannot reach now");
			return;
		}
		/* a server group: the card's session runs on another server */
		slim_console_move_to(c, &where.holder, "card for a session of another server");
		return;
	case SLIM_CARD_GONE:
		slim_console_card_asks(c, NULL, NULL);
		slim_console_away(c, &where.holder, true, "cannot be reached from here now");
		return;
	case SLIM_CARD_UNREACHABLE:
		slim_console_card_asks(c, NULL, NULL);
		offer_at_greeter(c, SLIM_WHY_REGISTRY_UNREACHABLE, SLIM_CHOICE_AWAY,
			"The server group's registry cannot be reached now, so this card's "
			"session cannot be looked up.", "Wait|Start a new session here");
		c->choice.sessions[0] = (struct slim_card_session){ 0 };
		return;
	}
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
	if (card->len == 0) {
		slim_console_card_asks(c, NULL, NULL);
		ask_at_greeter(c, SLIM_WHY_UNKNOWN_CARD, "Unknown card: log in to use it");
		return;
	}
	slim_console_tap(c, &token);
}

void slim_console_retry_wait(struct slim_console *c)
{
	if (!c->card.waiting || (c->shows && !c->shows->greeter)) {
		return;
	}
	/* only what ends the wait: a session to show, or its server within reach */
	struct slim_binding *b = slim_manager_binding(c->mgr, &c->card.hash);
	struct slim_card_where where;
	slim_manager_card_where(c->mgr, c->card.hash.bytes, &where);
	if ((b && b->state == SLIM_BINDING_BOUND) || (!b &&
			where.registry == SLIM_CARD_SERVER && where.n_others == 0 &&
			!slim_console_unreached(c, where.holder.move.fingerprint))) {
		slim_log(SLIM_LOG_INFO, "console %s: the card's session can be reached now", c->id);
		slim_console_tap(c, &c->card.hash);
	}
}

void slim_manager_registry_changed(struct slim_manager *mgr)
{
	/* a console moved elsewhere leaves the table */
	struct slim_console *c, *tmp;
	wl_list_for_each_safe(c, tmp, &mgr->consoles, link) {
		slim_console_retry_wait(c);
	}
}
