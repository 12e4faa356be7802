/*
 * Cards in a server group's registry (session-manager.md §9): one session a
 * card in the whole group, decided before a session starts, and told the
 * truth about when the network splits.
 *
 * `cards/HASH` names the server and session the card opens. It has no
 * lease: it outlives its server's, so that a card tapped elsewhere while
 * that server is cut off learns where its session is rather than being
 * taken for unknown. Its server deletes it when the session ends, or when
 * it (re)registers without that session. It is claimed by a transaction
 * (created only if absent) after PAM succeeds and before the compositor is
 * spawned; it is taken over from a server gone from the registry only as
 * the person at the console chose, by a transaction that checks the
 * record is still the one seen and that the server's record is still gone.
 *
 * A binding here opens its session without asking only while it is BOUND:
 * the registry names it and this server's lease is alive. The lease's life
 * is counted from when its keepalive was sent, so that it ends here no
 * later than in etcd: by the time another server can see this one gone and
 * take the card over, this one has stopped opening it. Each change in or
 * out of BOUND is logged with the monotonic time, one host's clock for every
 * server of a test, so that the intervals can be checked never to overlap.
 */
#define _GNU_SOURCE /* strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "group-internal.h"
#include "sessions.h"
#include "slim-hex.h"
#include "slim-log.h"

/* A claim that found the record changed under it tries again this often. */
#define CLAIM_TRIES 3

struct slim_card_claim {
	struct wl_list link; /* slim_group.claims */
	struct slim_group *group;
	char key[80];        /* cards/HEX */
	char value[160];     /* the record naming our session */
	uint32_t id;
	bool takeover;
	int tries;
	/* NULL: publish's own claim (a binding here already), or cancelled */
	slim_claim_done done;
	void *done_data;
	bool cancelled;
};

void slim_group_card_key(const uint8_t hash[32], char *out, size_t size)
{
	char hex[65];
	slim_hex_encode(hex, hash, 32);
	snprintf(out, size, "cards/%s", hex);
}

void slim_group_card_value(const struct slim_group *group, uint32_t id, char *out, size_t size)
{
	snprintf(out, size, "{\"v\":%d,\"server\":\"%s\",\"session\":%u}", GROUP_FORMAT,
		group->config.name, id);
}

bool slim_group_card_record(const char *value, char *server, size_t size, uint32_t *id)
{
	struct json_object *o = json_tokener_parse(value), *v;
	bool ok = o && json_object_is_type(o, json_type_object) &&
		json_object_object_get_ex(o, "v", &v) && json_object_get_int(v) == GROUP_FORMAT &&
		json_object_object_get_ex(o, "server", &v) &&
		json_object_is_type(v, json_type_string) &&
		strlen(json_object_get_string(v)) < size &&
		slim_group_name_valid(json_object_get_string(v));
	if (ok) {
		snprintf(server, size, "%s", json_object_get_string(v));
		int64_t n = json_object_object_get_ex(o, "session", &v) ?
			json_object_get_int64(v) : 0;
		ok = n > 0 && n <= UINT32_MAX;
		*id = ok ? (uint32_t)n : 0;
	}
	json_object_put(o);
	return ok;
}

/* ---- transactions ---- */

static struct json_object *compare(const char *full, const char *target, const char *field,
		struct json_object *value)
{
	struct json_object *cmp = json_object_new_object();
	json_object_object_add(cmp, "key", slim_etcd_b64_str(full));
	json_object_object_add(cmp, "target", json_object_new_string(target));
	json_object_object_add(cmp, "result", json_object_new_string("EQUAL"));
	json_object_object_add(cmp, field, value);
	return cmp;
}

static struct json_object *txn(struct json_object *compares, struct json_object *success,
		struct json_object *failure)
{
	struct json_object *body = json_object_new_object();
	json_object_object_add(body, "compare", compares);
	json_object_object_add(body, "success", success);
	json_object_object_add(body, "failure", failure);
	return body;
}

static struct json_object *one(const char *kind, const char *field, const char *full,
		const char *value)
{
	struct json_object *req = json_object_new_object();
	json_object_object_add(req, "key", slim_etcd_b64_str(full));
	if (value) {
		json_object_object_add(req, field, slim_etcd_b64_str(value));
	}
	struct json_object *op = json_object_new_object();
	json_object_object_add(op, kind, req);
	struct json_object *list = json_object_new_array();
	json_object_array_add(list, op);
	return list;
}

static void full_key(const struct slim_group *group, const char *key, char *out, size_t size)
{
	snprintf(out, size, "%s%s", group->config.prefix, key);
}

struct json_object *slim_group_txn_read(struct json_object *result)
{
	struct json_object *responses, *range, *kvs;
	size_t n;
	if (!(responses = slim_etcd_array(result, "responses", &n)) || n < 1 ||
			!json_object_object_get_ex(json_object_array_get_idx(responses, 0),
				"response_range", &range) ||
			!(kvs = slim_etcd_array(range, "kvs", &n)) || n < 1) {
		return NULL;
	}
	return json_object_array_get_idx(kvs, 0);
}

/* The record a failed claim read: its value and mod_revision (false: none). */
static bool read_back(struct json_object *result, char *value, size_t size, int64_t *revision)
{
	struct json_object *kv = slim_group_txn_read(result);
	if (!kv) {
		return false;
	}
	*revision = slim_etcd_int(kv, "mod_revision");
	return slim_etcd_unb64(json_object_object_get(kv, "value"), value, size, NULL);
}

static bool succeeded(struct json_object *result)
{
	struct json_object *ok;
	return json_object_object_get_ex(result, "succeeded", &ok) && json_object_get_boolean(ok);
}

void slim_group_card_delete(struct slim_group *group, const struct group_kv *kv)
{
	char full[256];
	full_key(group, kv->key, full, sizeof(full));
	struct json_object *cmps = json_object_new_array();
	json_object_array_add(cmps, compare(full, "VALUE", "value", slim_etcd_b64_str(kv->value)));
	slim_etcd_post(group->etcd, "/v3/kv/txn", txn(cmps,
		one("request_delete_range", NULL, full, NULL), json_object_new_array()),
		GROUP_CALL_TIMEOUT_MS, slim_group_put_done, group);
}

/* ---- claims ---- */

static void claim_post(struct slim_card_claim *claim, struct json_object *body);

static void claim_finish(struct slim_card_claim *claim, enum slim_claim_result result,
		const struct slim_card_session *holder, int64_t revision)
{
	struct slim_group *group = claim->group;
	if (result == SLIM_CLAIM_OURS) {
		/* confirmed: what slim_group_cards_update calls BOUND while the lease lives */
		slim_group_published_set(group, claim->key, claim->value, revision);
		slim_group_mirror_set(group, claim->key, claim->value, revision);
	}
	wl_list_remove(&claim->link);
	if (claim->done && !claim->cancelled) {
		claim->done(claim->done_data, result, holder);
	}
	free(claim);
	slim_group_cards_update(group);
}

/* Creates the record if nobody has one; reads it back if someone has. */
static void claim_create(struct slim_card_claim *claim)
{
	char full[256];
	full_key(claim->group, claim->key, full, sizeof(full));
	struct json_object *cmps = json_object_new_array();
	json_object_array_add(cmps, compare(full, "CREATE", "create_revision",
		json_object_new_string("0")));
	/* no lease: the record outlives this server's */
	claim_post(claim, txn(cmps, one("request_put", "value", full, claim->value),
		one("request_range", NULL, full, NULL)));
}

/*
 * Replaces the record read at `revision`, if it is still that one (and,
 * for a takeover, if `gone`'s server record is still absent).
 */
static void claim_replace(struct slim_card_claim *claim, int64_t revision, const char *gone)
{
	char full[256], server_key[256];
	full_key(claim->group, claim->key, full, sizeof(full));
	struct json_object *cmps = json_object_new_array();
	char rev[24];
	snprintf(rev, sizeof(rev), "%lld", (long long)revision);
	json_object_array_add(cmps, compare(full, "MOD", "mod_revision",
		json_object_new_string(rev)));
	if (gone) {
		char key[128];
		snprintf(key, sizeof(key), "servers/%s", gone);
		full_key(claim->group, key, server_key, sizeof(server_key));
		json_object_array_add(cmps, compare(server_key, "CREATE", "create_revision",
			json_object_new_string("0")));
	}
	claim_post(claim, txn(cmps, one("request_put", "value", full, claim->value),
		one("request_range", NULL, full, NULL)));
}

static void handle_claim_answer(void *data, struct json_object *result, const char *error)
{
	struct slim_card_claim *claim = data;
	struct slim_group *group = claim->group;
	struct json_object *header;
	int64_t revision = json_object_object_get_ex(result, "header", &header) ?
		slim_etcd_int(header, "revision") : 0;
	if (error) {
		finish_unreachable:
		claim_finish(claim, SLIM_CLAIM_UNREACHABLE, NULL, 0);
		return;
	}
	slim_group_reachable(group, true, NULL);
	if (succeeded(result)) {
		claim_finish(claim, SLIM_CLAIM_OURS, NULL, revision);
		return;
	}
	char value[GROUP_VALUE_MAX], server[64];
	int64_t mod = 0;
	uint32_t id = 0;
	if (!read_back(result, value, sizeof(value), &mod)) {
		/* gone between the two: create it */
		if (++claim->tries > CLAIM_TRIES) {
			goto finish_unreachable;
		}
		claim_create(claim);
		return;
	}
	/* fresher than the copy, whose watch may lag (or hang on a member cut off) */
	slim_group_mirror_set(group, claim->key, value, mod);
	if (strcmp(value, claim->value) == 0) {
		claim_finish(claim, SLIM_CLAIM_OURS, NULL, mod);
		return;
	}
	bool readable = slim_group_card_record(value, server, sizeof(server), &id);
	bool ours = readable && strcmp(server, group->config.name) == 0;
	struct slim_card_session holder = { 0 };
	if (readable && !ours) {
		slim_group_session_at(group, server, id, &holder);
		if (holder.movable) {
			claim_finish(claim, SLIM_CLAIM_ELSEWHERE, &holder, 0);
			return;
		}
		if (!claim->takeover) {
			claim_finish(claim, SLIM_CLAIM_GONE, &holder, 0);
			return;
		}
		slim_log(SLIM_LOG_INFO, "group: card %.16s taken over from %s (gone from the "
			"registry) for session %u, as chosen at the console", claim->key + 6, server,
			claim->id);
	} else if (!readable) {
		slim_log(SLIM_LOG_ERROR, "group: card %.16s had a record this version cannot "
			"read: replaced", claim->key + 6);
	}
	/* ours, of another session here (the newest login wins), or unreadable: replaced */
	if (++claim->tries > CLAIM_TRIES) {
		goto finish_unreachable;
	}
	claim_replace(claim, mod, readable && !ours ? server : NULL);
}

static void claim_post(struct slim_card_claim *claim, struct json_object *body)
{
	if (!slim_etcd_post(claim->group->etcd, "/v3/kv/txn", body, GROUP_CALL_TIMEOUT_MS,
			handle_claim_answer, claim)) {
		handle_claim_answer(claim, NULL, "out of memory");
	}
}

static struct slim_card_claim *claim_start(struct slim_group *group, const uint8_t hash[32],
		uint32_t id, bool takeover, slim_claim_done done, void *done_data)
{
	struct slim_card_claim *claim = calloc(1, sizeof(*claim));
	if (!claim) {
		return NULL;
	}
	claim->group = group;
	claim->id = id;
	claim->takeover = takeover;
	claim->done = done;
	claim->done_data = done_data;
	slim_group_card_key(hash, claim->key, sizeof(claim->key));
	slim_group_card_value(group, id, claim->value, sizeof(claim->value));
	wl_list_insert(&group->claims, &claim->link);
	claim_create(claim);
	return claim;
}

struct slim_card_claim *slim_group_claim_card(struct slim_group *group, const uint8_t hash[32],
		uint32_t id, bool takeover, slim_claim_done done, void *done_data)
{
	return claim_start(group, hash, id, takeover, done, done_data);
}

void slim_group_claim_cancel(struct slim_card_claim *claim)
{
	if (claim) {
		/* its answer still comes, and frees it */
		claim->cancelled = true;
	}
}

void slim_group_claim_answer(struct slim_group *group, struct json_object *result,
		const char *error)
{
	static const uint8_t hash[32] = { 0x5a };
	struct slim_card_claim *claim = calloc(1, sizeof(*claim));
	if (!claim) {
		return;
	}
	claim->group = group;
	claim->id = 1;
	claim->takeover = true;
	slim_group_card_key(hash, claim->key, sizeof(claim->key));
	slim_group_card_value(group, claim->id, claim->value, sizeof(claim->value));
	wl_list_insert(&group->claims, &claim->link);
	handle_claim_answer(claim, result, error);
}

/* A binding of ours being claimed already (by a login or by publish). */
static bool claiming(struct slim_group *group, const char *key)
{
	struct slim_card_claim *claim;
	wl_list_for_each(claim, &group->claims, link) {
		if (strcmp(claim->key, key) == 0) {
			return true;
		}
	}
	return false;
}

void slim_group_claim_binding(struct slim_group *group, const uint8_t hash[32], uint32_t id)
{
	char key[80];
	slim_group_card_key(hash, key, sizeof(key));
	if (!claiming(group, key)) {
		claim_start(group, hash, id, false, NULL, NULL);
	}
}

void slim_group_claims_destroy(struct slim_group *group)
{
	struct slim_card_claim *claim, *tmp;
	wl_list_for_each_safe(claim, tmp, &group->claims, link) {
		wl_list_remove(&claim->link);
		free(claim);
	}
}

/* ---- what each binding here is ---- */

/* A card BOUND here, as last logged (so that each change is logged once). */
struct group_bound {
	struct wl_list link; /* slim_group.bound */
	uint8_t hash[32];
	uint32_t id;
};

static double seconds(uint64_t us)
{
	return (double)us / 1e6;
}

static void log_bound(const uint8_t hash[32], uint32_t id, uint64_t at_us)
{
	char hex[65];
	slim_hex_encode(hex, hash, 32);
	slim_log(SLIM_LOG_INFO, "group: card %.16s bound here to session %u at %.6f", hex, id,
		seconds(at_us));
}

static void log_unbound(const uint8_t hash[32], const char *why, uint64_t at_us)
{
	char hex[65];
	slim_hex_encode(hex, hash, 32);
	slim_log(SLIM_LOG_INFO, "group: card %.16s not bound here (%s) at %.6f", hex, why,
		seconds(at_us));
}

static enum slim_binding_state binding_state(struct slim_group *group,
		const struct slim_binding *b, bool alive, const char **why)
{
	char key[80], value[160];
	slim_group_card_key(b->token.bytes, key, sizeof(key));
	slim_group_card_value(group, b->session->id, value, sizeof(value));
	struct group_kv *mine = slim_group_kv_find(&group->published, key);
	struct group_kv *seen = group->mirror_ok ? slim_group_kv_find(&group->mirror, key) : NULL;
	bool confirmed = mine && strcmp(mine->value, value) == 0;
	if (seen && strcmp(seen->value, value) != 0 &&
			(!confirmed || seen->revision > mine->revision)) {
		*why = "the registry names another session";
		return SLIM_BINDING_ELSEWHERE;
	}
	if (confirmed && alive) {
		return SLIM_BINDING_BOUND;
	}
	*why = !alive ? "this server's lease may have expired" : "not confirmed by the registry";
	return b->state == SLIM_BINDING_ELSEWHERE && !alive ? SLIM_BINDING_ELSEWHERE :
		SLIM_BINDING_UNCONFIRMED;
}

void slim_group_cards_update(struct slim_group *group)
{
	struct slim_manager *mgr = group->mgr;
	uint64_t now = slim_manager_now(mgr);
	bool alive = group->stage == GROUP_REGISTERED && now < group->lease_until_us;
	/* the lease's end, if that is why: the moment it ended, not the moment we looked */
	uint64_t at = !alive && group->lease_until_us && group->lease_until_us < now ?
		group->lease_until_us : now;
	struct group_bound *gb, *tmp;
	wl_list_for_each_safe(gb, tmp, &group->bound, link) {
		struct slim_card_hash token;
		memcpy(token.bytes, gb->hash, 32);
		struct slim_binding *b = slim_manager_binding(mgr, &token);
		const char *why = "its session ended";
		if (b && b->session && b->session->id == gb->id && !b->session->greeter) {
			if (binding_state(group, b, alive, &why) == SLIM_BINDING_BOUND) {
				continue;
			}
		} else if (b && b->session && !b->session->greeter) {
			why = "the card opens another session here now";
		}
		log_unbound(gb->hash, why, at);
		wl_list_remove(&gb->link);
		free(gb);
	}
	struct slim_binding *b;
	wl_list_for_each(b, &mgr->bindings, link) {
		if (!b->session || b->session->greeter) {
			continue;
		}
		const char *why;
		enum slim_binding_state state = binding_state(group, b, alive, &why);
		bool logged = false;
		wl_list_for_each(gb, &group->bound, link) {
			logged |= memcmp(gb->hash, b->token.bytes, 32) == 0;
		}
		if (state == SLIM_BINDING_BOUND && !logged && (gb = calloc(1, sizeof(*gb)))) {
			memcpy(gb->hash, b->token.bytes, 32);
			gb->id = b->session->id;
			wl_list_insert(&group->bound, &gb->link);
			log_bound(b->token.bytes, b->session->id, now);
		}
		b->state = state;
	}
	/* looked at again when the lease would end */
	if (alive) {
		uint64_t ms = (group->lease_until_us - now + 999) / 1000;
		wl_event_source_timer_update(group->doubt, ms > 0 ? (int)ms : 1);
	}
}

void slim_group_bound_destroy(struct slim_group *group)
{
	struct group_bound *gb, *tmp;
	wl_list_for_each_safe(gb, tmp, &group->bound, link) {
		wl_list_remove(&gb->link);
		free(gb);
	}
}
