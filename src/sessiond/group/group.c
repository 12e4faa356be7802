#define _GNU_SOURCE /* strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "etcd.h"
#include "group-internal.h"
#include "sessions.h"
#include "slim-hex.h"
#include "slim-log.h"

static void kv_free(struct group_kv *kv)
{
	wl_list_remove(&kv->link);
	free(kv->key);
	free(kv->value);
	free(kv);
}

struct group_kv *slim_group_kv_find(struct wl_list *list, const char *key)
{
	struct group_kv *kv;
	wl_list_for_each(kv, list, link) {
		if (strcmp(kv->key, key) == 0) {
			return kv;
		}
	}
	return NULL;
}

/* Sets key to value (NULL: removes it). False if nothing changed. */
static bool kv_set(struct wl_list *list, const char *key, const char *value)
{
	struct group_kv *kv = slim_group_kv_find(list, key);
	if (!value) {
		if (kv) {
			kv_free(kv);
			return true;
		}
		return false;
	}
	if (kv) {
		if (strcmp(kv->value, value) == 0) {
			return false;
		}
		char *copy = strdup(value);
		if (!copy) {
			return false;
		}
		free(kv->value);
		kv->value = copy;
		return true;
	}
	kv = calloc(1, sizeof(*kv));
	if (!kv || !(kv->key = strdup(key)) || !(kv->value = strdup(value))) {
		if (kv) {
			free(kv->key);
			free(kv);
		}
		return false;
	}
	/* sorted, so that slimlandctl group reads in key order */
	struct group_kv *at;
	wl_list_for_each(at, list, link) {
		if (strcmp(at->key, key) > 0) {
			break;
		}
	}
	wl_list_insert(at->link.prev, &kv->link);
	return true;
}

static void kv_clear(struct wl_list *list)
{
	struct group_kv *kv, *tmp;
	wl_list_for_each_safe(kv, tmp, list, link) {
		kv_free(kv);
	}
}

static void full_key(const struct slim_group *group, const char *key, char *out, size_t size)
{
	snprintf(out, size, "%s%s", group->config.prefix, key);
}

static void sync_start(struct slim_group *group);

void slim_group_reachable(struct slim_group *group, bool ok, const char *error)
{
	bool changed = ok != group->reachable;
	if (ok && !group->reachable && group->mirror_ok) {
		/*
		 * The watch may have hung on a member cut off meanwhile, its copy
		 * stale: read everything again.
		 */
		sync_start(group);
	}
	if (ok && !group->reachable) {
		slim_log(SLIM_LOG_INFO, "group: etcd at %s answers", slim_etcd_endpoint(group->etcd));
	} else if (!ok && group->reachable) {
		/* once per outage: the console's own server goes on alone meanwhile */
		slim_log(SLIM_LOG_ERROR, "group: etcd unreachable (%s): serving this server's "
			"consoles and sessions alone until it answers", error);
	}
	group->reachable = ok;
	if (changed) {
		/* what a card is, and what a console waits for, may have changed with it */
		slim_group_cards_update(group);
		slim_manager_registry_changed(group->mgr);
	}
}

void slim_group_mirror_set(struct slim_group *group, const char *key, const char *value,
		int64_t revision)
{
	struct group_kv *kv = slim_group_kv_find(&group->mirror, key);
	if (!group->mirror_ok || (kv && kv->revision > revision) ||
			(!kv && group->mirror_len >= GROUP_MIRROR_MAX)) {
		return;
	}
	group->mirror_len += !kv;
	kv_set(&group->mirror, key, value);
	if ((kv = slim_group_kv_find(&group->mirror, key))) {
		kv->revision = revision;
	}
}

void slim_group_published_set(struct slim_group *group, const char *key, const char *value,
		int64_t revision)
{
	kv_set(&group->published, key, value);
	struct group_kv *kv = slim_group_kv_find(&group->published, key);
	if (kv) {
		kv->revision = revision;
	}
}

/* ---- publishing: the server's record and its sessions ---- */

static void server_record(struct slim_group *group, char *out, size_t size)
{
	unsigned sessions = 0;
	struct slim_session *s;
	wl_list_for_each(s, &group->mgr->sessions, link) {
		sessions += !s->greeter;
	}
	unsigned long mem_kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");
	if (f) {
		char line[128];
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "MemAvailable: %lu kB", &mem_kb) == 1) {
				break;
			}
		}
		fclose(f);
	}
	double load = 0;
	f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &load) != 1) {
			load = 0;
		}
		fclose(f);
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "v", json_object_new_int(GROUP_FORMAT));
	json_object_object_add(o, "address", json_object_new_string(group->config.address));
	/* what a console moved here checks this server's key against (MOVE) */
	char hex[2 * SLIM_SEC_FINGERPRINT_LEN + 1];
	slim_hex_encode(hex, group->mgr->host_key, sizeof(group->mgr->host_key));
	json_object_object_add(o, "host_key", json_object_new_string(hex));
	/*
	 * Rounded (16 MB, 0.05 of a CPU), so that a record is written again
	 * when the load has moved, not at every keepalive.
	 */
	json_object_object_add(o, "sessions", json_object_new_int((int)sessions));
	json_object_object_add(o, "mem_avail_mb",
		json_object_new_int64((int64_t)(mem_kb / 1024 / 16 * 16)));
	json_object_object_add(o, "cpus", json_object_new_int(cpus > 0 ? (int)cpus : 1));
	json_object_object_add(o, "load_pct", json_object_new_int((int)(load * 20 + 0.5) * 5));
	snprintf(out, size, "%s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}

void slim_group_put_done(void *data, struct json_object *result, const char *error)
{
	struct slim_group *group = data;
	if (!error) {
		slim_group_reachable(group, true, NULL);
	} else if (slim_ratelimit(&group->write_rl, slim_now_us())) {
		/* what the lease holds is written again at a keepalive; a drain or a decision is not */
		slim_log(SLIM_LOG_ERROR, "group: a write to etcd failed (%s)", error);
	}
}

/* A put (value) or a delete (NULL) of a key under the prefix; with our lease if `leased`. */
void slim_group_write_key(struct slim_group *group, const char *key, const char *value,
		bool leased)
{
	char full[256];
	full_key(group, key, full, sizeof(full));
	struct json_object *body = json_object_new_object();
	json_object_object_add(body, "key", slim_etcd_b64_str(full));
	if (value) {
		json_object_object_add(body, "value", slim_etcd_b64_str(value));
		if (leased) {
			json_object_object_add(body, "lease", json_object_new_int64(group->lease));
		}
	}
	slim_etcd_post(group->etcd, value ? "/v3/kv/put" : "/v3/kv/deleterange", body,
		GROUP_CALL_TIMEOUT_MS, slim_group_put_done, group);
}

/*
 * A transaction that puts `key` = `value` under our lease only if nobody
 * holds the key, and else reads who does (holder() says).
 */
static struct json_object *create_txn(struct slim_group *group, const char *key,
		const char *value)
{
	char full[256];
	full_key(group, key, full, sizeof(full));
	struct json_object *cmp = json_object_new_object();
	json_object_object_add(cmp, "key", slim_etcd_b64_str(full));
	json_object_object_add(cmp, "target", json_object_new_string("CREATE"));
	json_object_object_add(cmp, "result", json_object_new_string("EQUAL"));
	json_object_object_add(cmp, "create_revision", json_object_new_string("0"));
	struct json_object *put = json_object_new_object();
	json_object_object_add(put, "key", slim_etcd_b64_str(full));
	json_object_object_add(put, "value", slim_etcd_b64_str(value));
	json_object_object_add(put, "lease", json_object_new_int64(group->lease));
	struct json_object *op = json_object_new_object();
	json_object_object_add(op, "request_put", put);
	struct json_object *get = json_object_new_object();
	json_object_object_add(get, "key", slim_etcd_b64_str(full));
	struct json_object *read = json_object_new_object();
	json_object_object_add(read, "request_range", get);
	struct json_object *compare = json_object_new_array(),
		*success = json_object_new_array(), *failure = json_object_new_array();
	json_object_array_add(compare, cmp);
	json_object_array_add(success, op);
	json_object_array_add(failure, read);
	struct json_object *body = json_object_new_object();
	json_object_object_add(body, "compare", compare);
	json_object_object_add(body, "success", success);
	json_object_object_add(body, "failure", failure);
	return body;
}

/* The lease of the key a failed create_txn read: 0 if none. */
static int64_t holder(struct json_object *result)
{
	return slim_etcd_int(slim_group_txn_read(result), "lease");
}

/* Whether a create_txn's answer leaves the key ours (created, or ours already). */
static bool created(const struct slim_group *group, struct json_object *result)
{
	struct json_object *ok;
	return (json_object_object_get_ex(result, "succeeded", &ok) &&
		json_object_get_boolean(ok)) || holder(result) == group->lease;
}

/* A login at one of our consoles about to start a session for this card (claimed already). */
static bool card_starting(struct slim_group *group, const char *key)
{
	struct slim_console *c;
	wl_list_for_each(c, &group->mgr->consoles, link) {
		char mine[80];
		slim_group_card_key(c->card.hash.bytes, mine, sizeof(mine));
		if (c->login.worker && c->card.unknown && strcmp(mine, key) == 0) {
			return true;
		}
	}
	return false;
}

/* A card record naming us whose binding (or login about to start) is here. */
static bool held_here(struct slim_group *group, const struct group_kv *kv)
{
	struct slim_binding *b;
	char value[160];
	wl_list_for_each(b, &group->mgr->bindings, link) {
		char key[80];
		slim_group_card_key(b->token.bytes, key, sizeof(key));
		if (b->session && strcmp(key, kv->key) == 0) {
			slim_group_card_value(group, b->session->id, value, sizeof(value));
			return strcmp(value, kv->value) == 0;
		}
	}
	return card_starting(group, kv->key) || slim_group_kv_find(&group->published, kv->key);
}

/*
 * What this server holds now (its record, its sessions, the cards bound to
 * them), against what it published: only the difference goes to etcd.
 */
static void publish(struct slim_group *group)
{
	if (group->stage != GROUP_REGISTERED) {
		return;
	}
	char key[192], value[GROUP_VALUE_MAX];
	struct wl_list now;
	wl_list_init(&now);
	server_record(group, value, sizeof(value));
	snprintf(key, sizeof(key), "servers/%s", group->config.name);
	kv_set(&now, key, value);
	struct slim_session *s;
	struct slim_binding *b;
	wl_list_for_each(s, &group->mgr->sessions, link) {
		if (s->greeter) {
			continue;
		}
		/* the card it is bound to here, whatever the registry says: the chooser's */
		char card[17] = "";
		wl_list_for_each(b, &group->mgr->bindings, link) {
			if (b->session == s) {
				slim_hex_encode(card, b->token.bytes, 8);
			}
		}
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "v", json_object_new_int(GROUP_FORMAT));
		json_object_object_add(o, "user", json_object_new_string(s->user));
		json_object_object_add(o, "console", json_object_new_string(
			s->console && s->attached ? s->console->id : ""));
		json_object_object_add(o, "card", json_object_new_string(card));
		snprintf(key, sizeof(key), "sessions/%s/%u", group->config.name, s->id);
		kv_set(&now, key, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	}
	/* the cards the registry does not name elsewhere: ours, or to be claimed */
	wl_list_for_each(b, &group->mgr->bindings, link) {
		if (!b->session || b->session->greeter || b->state == SLIM_BINDING_ELSEWHERE) {
			continue;
		}
		slim_group_card_key(b->token.bytes, key, sizeof(key));
		slim_group_card_value(group, b->session->id, value, sizeof(value));
		kv_set(&now, key, value);
	}
	struct group_kv *kv, *tmp;
	wl_list_for_each_safe(kv, tmp, &group->published, link) {
		bool card = strncmp(kv->key, "cards/", 6) == 0;
		if (slim_group_kv_find(&now, kv->key) || (card && card_starting(group, kv->key))) {
			continue;
		}
		if (card) {
			slim_group_card_delete(group, kv);
		} else {
			slim_group_write_key(group, kv->key, NULL, false);
		}
		kv_free(kv);
	}
	wl_list_for_each(kv, &now, link) {
		if (strncmp(kv->key, "cards/", 6) == 0) {
			/* a card is ours once a claim says so (group-cards.c) */
			struct group_kv *mine = slim_group_kv_find(&group->published, kv->key);
			uint8_t hash[32];
			uint32_t id = 0;
			char server[64];
			if ((!mine || strcmp(mine->value, kv->value) != 0) &&
					slim_hex_decode(hash, sizeof(hash), kv->key + 6) &&
					slim_group_card_record(kv->value, server, sizeof(server), &id)) {
				slim_group_claim_binding(group, hash, id);
			}
		} else if (kv_set(&group->published, kv->key, kv->value)) {
			slim_group_write_key(group, kv->key, kv->value, true);
		}
	}
	kv_clear(&now);
	slim_group_cards_update(group);
}

void slim_group_changed(struct slim_group *group)
{
	if (group) {
		publish(group);
	}
}

/* ---- the lease: grant, claim the name, keep alive ---- */

static void grant(struct slim_group *group);

static void arm_tick(struct slim_group *group, unsigned ms)
{
	wl_event_source_timer_update(group->tick, ms ? (int)ms : 1);
}

static void handle_claim_done(void *data, struct json_object *result, const char *error)
{
	struct slim_group *group = data;
	group->call = NULL;
	slim_group_reachable(group, error == NULL || strstr(error, "lease not found"), error);
	if (error && strstr(error, "lease not found")) {
		grant(group); /* it expired before the claim: a new one */
		return;
	}
	if (error) {
		arm_tick(group, GROUP_RETRY_MS);
		return;
	}
	if (!created(group, result)) {
		/*
		 * Someone holds the name under a live lease: another server
		 * configured with it, or this one before a restart, whose lease
		 * has not expired yet. Never taken over: waited out.
		 */
		if (!group->name_taken_said) {
			group->name_taken_said = true;
			slim_log(SLIM_LOG_ERROR, "group: the name %s is held by a live lease; "
				"waiting for it to expire", group->config.name);
		}
		arm_tick(group, GROUP_RETRY_MS);
		return;
	}
	group->name_taken_said = false;
	group->stage = GROUP_REGISTERED;
	/* the claim wrote the record: it counts as published */
	kv_clear(&group->published);
	kv_set(&group->published, group->claimed_key, group->claimed_value);
	slim_log(SLIM_LOG_INFO, "group: %s registered under %s (lease %lld, %u s)",
		group->config.name, group->config.prefix, (long long)group->lease,
		group->config.ttl_s);
	/* everything else again: what was published under an old lease went with it */
	publish(group);
	arm_tick(group, group->config.ttl_s * 1000 / 3);
}

/* servers/NAME, created only if nobody holds it (compare-and-swap). */
static void claim(struct slim_group *group)
{
	snprintf(group->claimed_key, sizeof(group->claimed_key), "servers/%s", group->config.name);
	server_record(group, group->claimed_value, sizeof(group->claimed_value));
	group->stage = GROUP_CLAIMING;
	group->call = slim_etcd_post(group->etcd, "/v3/kv/txn",
		create_txn(group, group->claimed_key, group->claimed_value), GROUP_CALL_TIMEOUT_MS,
		handle_claim_done, group);
	if (!group->call) {
		arm_tick(group, GROUP_RETRY_MS);
	}
}

static void handle_grant_done(void *data, struct json_object *result, const char *error)
{
	struct slim_group *group = data;
	group->call = NULL;
	slim_group_reachable(group, error == NULL, error);
	int64_t id = slim_etcd_int(result, "ID");
	if (error || id == 0) {
		arm_tick(group, GROUP_RETRY_MS);
		return;
	}
	group->lease = id;
	group->renewed_us = slim_manager_now(group->mgr);
	group->lease_until_us = group->call_sent_us + group->config.ttl_s * 1000000ull;
	claim(group);
}

static void grant(struct slim_group *group)
{
	struct json_object *body = json_object_new_object();
	json_object_object_add(body, "TTL", json_object_new_int((int)group->config.ttl_s));
	group->stage = GROUP_GRANTING;
	group->lease = 0;
	group->lease_until_us = 0;
	group->call_sent_us = slim_manager_now(group->mgr);
	group->call = slim_etcd_post(group->etcd, "/v3/lease/grant", body, GROUP_CALL_TIMEOUT_MS,
		handle_grant_done, group);
	if (!group->call) {
		arm_tick(group, GROUP_RETRY_MS);
	}
}

/*
 * What this server published, as etcd has it (the copy the watch keeps):
 * a write that failed is then missing there and goes again, a delete that
 * failed goes again too. Writes still in flight may go twice: a put is
 * idempotent.
 */
static void reconcile(struct slim_group *group)
{
	if (!group->mirror_ok) {
		return;
	}
	char own[128], record[128], card_of[96];
	snprintf(own, sizeof(own), "sessions/%s/", group->config.name);
	snprintf(record, sizeof(record), "servers/%s", group->config.name);
	snprintf(card_of, sizeof(card_of), "\"server\":\"%s\"", group->config.name);
	/*
	 * Cards are ours only as our own claims said (the copy may be stale);
	 * a record naming us that no binding here has any more goes.
	 */
	struct group_kv *kv, *tmp;
	wl_list_for_each_safe(kv, tmp, &group->published, link) {
		if (strncmp(kv->key, "cards/", 6) != 0) {
			kv_free(kv);
		}
	}
	wl_list_for_each(kv, &group->mirror, link) {
		bool card = strncmp(kv->key, "cards/", 6) == 0;
		if (card && strstr(kv->value, card_of) && !held_here(group, kv)) {
			slim_group_card_delete(group, kv);
		} else if (!card && (strcmp(kv->key, record) == 0 ||
				strncmp(kv->key, own, strlen(own)) == 0)) {
			slim_group_published_set(group, kv->key, kv->value, kv->revision);
		}
	}
}

/* One member's share of the lease's life: a keepalive tries each before it ends. */
static unsigned keepalive_timeout_ms(const struct slim_group *group)
{
	unsigned ms = group->config.ttl_s * 1000 / 6;
	return ms < 300 ? 300 : ms < GROUP_CALL_TIMEOUT_MS ? ms : GROUP_CALL_TIMEOUT_MS;
}

static void handle_keepalive_done(void *data, struct json_object *result, const char *error)
{
	struct slim_group *group = data;
	group->call = NULL;
	uint64_t now = slim_manager_now(group->mgr);
	if (error && now - group->renewed_us < group->config.ttl_s * 1000000ull) {
		/*
		 * No member answered this round: an election (a second or so
		 * after the leader died) or a slow member. The lease lives on
		 * until its TTL has passed: tried again soon, said only then.
		 */
		arm_tick(group, GROUP_KEEPALIVE_RETRY_MS);
		return;
	}
	slim_group_reachable(group, error == NULL, error);
	struct json_object *r = NULL;
	if (!error && json_object_object_get_ex(result, "result", &r) &&
			slim_etcd_int(r, "TTL") <= 0) {
		/*
		 * The lease expired while etcd could not be reached: the group
		 * has forgotten this server. It registers as a new one.
		 */
		slim_log(SLIM_LOG_ERROR, "group: lease %lld expired; registering again",
			(long long)group->lease);
		grant(group);
		return;
	}
	if (!error) {
		group->renewed_us = now;
		group->lease_until_us = group->call_sent_us + group->config.ttl_s * 1000000ull;
		/*
		 * The load moves on: the record follows it, under a lease just
		 * renewed (never under one that expired: etcd would refuse it).
		 * What a failed write left out is written again.
		 */
		reconcile(group);
		publish(group);
		slim_group_consoles_seed(group);
	}
	arm_tick(group, group->config.ttl_s * 1000 / 3);
}

static int handle_tick(void *data)
{
	struct slim_group *group = data;
	if (group->call) {
		return 0; /* its answer re-arms the tick */
	}
	switch (group->stage) {
	case GROUP_GRANTING:
		grant(group);
		break;
	case GROUP_CLAIMING:
		claim(group);
		break;
	case GROUP_REGISTERED: {
		struct json_object *body = json_object_new_object();
		json_object_object_add(body, "ID", json_object_new_int64(group->lease));
		group->call_sent_us = slim_manager_now(group->mgr);
		group->call = slim_etcd_post(group->etcd, "/v3/lease/keepalive", body,
			keepalive_timeout_ms(group), handle_keepalive_done, group);
		if (!group->call) {
			arm_tick(group, GROUP_RETRY_MS);
		}
		break;
	}
	}
	return 0;
}

/* ---- the copy of the registry: a range, then a watch ---- */

/* A key and value from etcd (base64), into the copy; NULL value: deleted. */
static void mirror_apply(struct slim_group *group, struct json_object *kv, bool deleted)
{
	char full[512], value[GROUP_VALUE_MAX];
	size_t n = strlen(group->config.prefix);
	if (!slim_etcd_unb64(json_object_object_get(kv, "key"), full, sizeof(full), NULL) ||
			strncmp(full, group->config.prefix, n) != 0) {
		return;
	}
	if (deleted) {
		group->mirror_len -= kv_set(&group->mirror, full + n, NULL);
		return;
	}
	bool existed = slim_group_kv_find(&group->mirror, full + n) != NULL;
	if (!slim_etcd_unb64(json_object_object_get(kv, "value"), value, sizeof(value), NULL) ||
			(!existed && group->mirror_len >= GROUP_MIRROR_MAX)) {
		return; /* not ours to show: too large for any record of this version */
	}
	bool changed = kv_set(&group->mirror, full + n, value);
	struct group_kv *at = slim_group_kv_find(&group->mirror, full + n);
	if (at) {
		at->revision = slim_etcd_int(kv, "mod_revision");
	}
	if (!changed) {
		return;
	}
	group->mirror_len += !existed;
	if (strncmp(full + n, "consoles/", 9) == 0) {
		slim_group_console_adopt(group, full + n + 9, value);
	}
}

/* The copy changed: the bindings here, and the consoles waiting for a session, look again. */
static void registry_read(struct slim_group *group)
{
	slim_group_cards_update(group);
	slim_manager_registry_changed(group->mgr);
}

static int handle_sync_retry(void *data)
{
	sync_start(data);
	return 0;
}

static void handle_watch_event(void *data, struct json_object *result, const char *error)
{
	struct slim_group *group = data;
	if (error) {
		/*
		 * The member the watch was on is gone, not etcd: the others may
		 * have quorum. The re-read, which tries every member in turn,
		 * says whether etcd answers; meanwhile the copy stays as last
		 * seen (slimlandctl group, placement).
		 */
		group->sync = NULL;
		/* at once after a watch that lasted; a watch that keeps ending waits */
		wl_event_source_timer_update(group->sync_retry,
			slim_manager_now(group->mgr) - group->watch_since_us > GROUP_RETRY_MS * 1000ull ?
			1 : GROUP_RETRY_MS);
		return;
	}
	struct json_object *flag;
	if ((json_object_object_get_ex(result, "canceled", &flag) && json_object_get_boolean(flag)) ||
			slim_etcd_int(result, "compact_revision") > 0) {
		/* the revision it asked for is gone: read everything again */
		slim_etcd_cancel(group->sync);
		group->sync = NULL;
		group->mirror_ok = false;
		wl_event_source_timer_update(group->sync_retry, 1);
		return;
	}
	size_t n;
	struct json_object *events = slim_etcd_array(result, "events", &n);
	for (size_t i = 0; i < n; i++) {
		struct json_object *ev = json_object_array_get_idx(events, i), *type, *kv;
		bool deleted = json_object_object_get_ex(ev, "type", &type) &&
			json_object_is_type(type, json_type_string) &&
			strcmp(json_object_get_string(type), "DELETE") == 0;
		if (json_object_object_get_ex(ev, "kv", &kv)) {
			mirror_apply(group, kv, deleted);
			int64_t rev = slim_etcd_int(kv, "mod_revision");
			if (rev > group->revision) {
				group->revision = rev;
			}
		}
	}
	if (n > 0) {
		registry_read(group);
	}
}

static struct json_object *range_body(const struct slim_group *group)
{
	char end[80];
	slim_etcd_prefix_end(group->config.prefix, end, sizeof(end));
	struct json_object *body = json_object_new_object();
	json_object_object_add(body, "key", slim_etcd_b64_str(group->config.prefix));
	json_object_object_add(body, "range_end", slim_etcd_b64_str(end));
	return body;
}

static void handle_range_done(void *data, struct json_object *result, const char *error)
{
	struct slim_group *group = data;
	group->sync = NULL;
	if (!error) {
		slim_group_reachable(group, true, NULL);
	}
	if (error) {
		wl_event_source_timer_update(group->sync_retry, GROUP_RETRY_MS);
		return;
	}
	kv_clear(&group->mirror);
	group->mirror_len = 0;
	struct json_object *header;
	size_t n;
	struct json_object *kvs = slim_etcd_array(result, "kvs", &n);
	for (size_t i = 0; i < n; i++) {
		mirror_apply(group, json_object_array_get_idx(kvs, i), false);
	}
	json_object_object_get_ex(result, "header", &header);
	group->revision = slim_etcd_int(header, "revision");
	group->mirror_ok = true;
	slim_group_consoles_seed(group);
	registry_read(group);
	struct json_object *create = range_body(group);
	/* the watch goes on from the revision after (one that says INT64_MAX: no etcd's) */
	int64_t next = group->revision < INT64_MAX ? group->revision + 1 : INT64_MAX;
	json_object_object_add(create, "start_revision", json_object_new_int64(next));
	struct json_object *body = json_object_new_object();
	json_object_object_add(body, "create_request", create);
	group->watch_since_us = slim_manager_now(group->mgr);
	group->sync = slim_etcd_watch(group->etcd, body, handle_watch_event, group);
	if (!group->sync) {
		wl_event_source_timer_update(group->sync_retry, GROUP_RETRY_MS);
	}
}

static void sync_start(struct slim_group *group)
{
	slim_etcd_cancel(group->sync);
	group->sync = slim_etcd_post(group->etcd, "/v3/kv/range", range_body(group),
		GROUP_CALL_TIMEOUT_MS, handle_range_done, group);
	if (!group->sync) {
		wl_event_source_timer_update(group->sync_retry, GROUP_RETRY_MS);
	}
}

/* ---- the group's life ---- */

/* The lease may have ended unrenewed: the bindings it confirmed are no longer BOUND. */
static int handle_doubt(void *data)
{
	slim_group_cards_update(data);
	return 0;
}

struct slim_group *slim_group_create(struct slim_manager *mgr,
		const struct slim_group_config *config)
{
	if (config->etcd[0] == '\0') {
		return NULL;
	}
	struct slim_group *group = calloc(1, sizeof(*group));
	if (!group) {
		return NULL;
	}
	group->mgr = mgr;
	group->config = *config;
	wl_list_init(&group->mirror);
	wl_list_init(&group->published);
	wl_list_init(&group->claims);
	wl_list_init(&group->bound);
	if (group->config.name[0] == '\0') {
		gethostname(group->config.name, sizeof(group->config.name) - 1);
	}
	if (group->config.address[0] == '\0') {
		snprintf(group->config.address, sizeof(group->config.address), "%s",
			mgr->config.listen);
	}
	if (group->config.ttl_s < 2) {
		group->config.ttl_s = 2;
	}
	group->reachable = true; /* the first failure is said */
	group->write_rl = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(1);
	struct slim_etcd_tls tls;
	snprintf(tls.ca, sizeof(tls.ca), "%s", config->etcd_ca);
	snprintf(tls.cert, sizeof(tls.cert), "%s", config->etcd_cert);
	snprintf(tls.key, sizeof(tls.key), "%s", config->etcd_key);
	group->etcd = slim_etcd_create(mgr->loop, config->etcd, &tls);
	group->tick = wl_event_loop_add_timer(mgr->loop, handle_tick, group);
	group->sync_retry = wl_event_loop_add_timer(mgr->loop, handle_sync_retry, group);
	group->doubt = wl_event_loop_add_timer(mgr->loop, handle_doubt, group);
	if (!group->etcd || !group->tick || !group->sync_retry || !group->doubt) {
		slim_log(SLIM_LOG_ERROR, "group: cannot use etcd at %s", config->etcd);
		slim_group_destroy(group);
		return NULL;
	}
	slim_log(SLIM_LOG_INFO, "group: server %s, etcd %s, prefix %s", group->config.name,
		config->etcd, group->config.prefix);
	grant(group);
	sync_start(group);
	mgr->elsewhere = &slim_group_elsewhere;
	mgr->elsewhere_data = group;
	snprintf(mgr->server_name, sizeof(mgr->server_name), "%s", group->config.name);
	return group;
}

void slim_group_destroy(struct slim_group *group)
{
	if (!group) {
		return;
	}
	/*
	 * The lease is left to expire rather than revoked: the compositors
	 * keep running across a restart of the manager, and the next one
	 * registers them again under a lease of its own.
	 */
	if (group->mgr->elsewhere_data == group) {
		group->mgr->elsewhere = NULL;
		group->mgr->elsewhere_data = NULL;
	}
	slim_etcd_destroy(group->etcd);
	if (group->tick) {
		wl_event_source_remove(group->tick);
	}
	if (group->sync_retry) {
		wl_event_source_remove(group->sync_retry);
	}
	if (group->doubt) {
		wl_event_source_remove(group->doubt);
	}
	kv_clear(&group->mirror);
	kv_clear(&group->published);
	slim_group_claims_destroy(group);
	slim_group_bound_destroy(group);
	free(group);
}

void slim_group_answer(struct slim_group *group, enum slim_group_request kind,
		const char *text, size_t len)
{
	struct json_object *result = NULL;
	char error[160];
	struct json_object *obj = slim_etcd_parse(text, len, kind == SLIM_GROUP_WATCH, &result,
		error, sizeof(error));
	const char *why = obj ? NULL : error;
	if (kind == SLIM_GROUP_GRANT || kind == SLIM_GROUP_CLAIM || kind == SLIM_GROUP_KEEPALIVE) {
		/* as if the request in flight had been this one */
		slim_etcd_cancel(group->call);
		group->call = NULL;
	}
	switch (kind) {
	case SLIM_GROUP_GRANT:
		handle_grant_done(group, result, why);
		break;
	case SLIM_GROUP_CLAIM:
		handle_claim_done(group, result, why);
		break;
	case SLIM_GROUP_KEEPALIVE:
		group->stage = GROUP_REGISTERED;
		handle_keepalive_done(group, result, why);
		break;
	case SLIM_GROUP_RANGE:
		slim_etcd_cancel(group->sync);
		group->sync = NULL;
		handle_range_done(group, result, why);
		break;
	case SLIM_GROUP_WATCH:
		handle_watch_event(group, result, why);
		break;
	case SLIM_GROUP_PUT:
		slim_group_put_done(group, result, why);
		break;
	case SLIM_GROUP_CARD_CLAIM:
		slim_group_claim_answer(group, result, why);
		break;
	}
	json_object_put(obj);
}

