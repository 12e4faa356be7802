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
	struct slim_wire_move move;
	char server[64];
	switch (!b && card->len ? slim_manager_card_elsewhere(mgr, token.bytes, &move, server,
			sizeof(server)) : SLIM_GROUP_HERE) {
	case SLIM_GROUP_HERE:
		break;
	case SLIM_GROUP_MOVE:
		if (slim_console_unreached(c, move.fingerprint)) {
			/* it came here because it could not reach that server: not sent back */
			char message[160];
			snprintf(message, sizeof(message), "Your session is on %s, which this console "
				"cannot reach now.", server);
			slim_log(SLIM_LOG_INFO, "console %s: card for a session of server %s, which it "
				"cannot reach: not moved", c->id, server);
			slim_console_card_asks(c, NULL, NULL);
			ask_at_greeter(c, SLIM_WHY_SERVER_UNREACHABLE, message);
			return;
		}
		/* a server group: the card's session runs on another server */
		slim_console_move(c, &move, server, "card for a session of another server");
		return;
	case SLIM_GROUP_UNREACHABLE:
		slim_console_card_asks(c, NULL, NULL);
		ask_at_greeter(c, SLIM_WHY_UNKNOWN_CARD, "This card's session is on another "
			"server, which cannot be reached now: try again in a moment");
		return;
	}
	if (!b) {
		/* remembered until someone logs in here (or another card is tapped) */
		slim_console_card_asks(c, card->len > 0 ? &token : NULL, NULL);
		ask_at_greeter(c, SLIM_WHY_UNKNOWN_CARD, "Unknown card: log in to use it");
		return;
	}
	struct slim_session *s = b->session;
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
