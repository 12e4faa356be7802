/*
 * What group.c (the lease, publishing, the copy of the registry) and
 * group-view.c (what the copy says: slimlandctl group, where a console
 * goes) share.
 */
#ifndef SLIM_SESSIOND_GROUP_INTERNAL_H
#define SLIM_SESSIOND_GROUP_INTERNAL_H

#include <stdint.h>
#include <wayland-server-core.h>
#include "etcd.h"
#include "group.h"
#include "slim-log.h"

#define GROUP_CALL_TIMEOUT_MS 2000
#define GROUP_RETRY_MS 1000
#define GROUP_KEEPALIVE_RETRY_MS 200
/*
 * What the copy of the registry holds at most (a list, sorted as it is
 * read): a group of hundreds of users, a record, a session and a card
 * each, is far less.
 */
#define GROUP_MIRROR_MAX 4096
#define GROUP_VALUE_MAX 1024
#define GROUP_SERVERS_MAX 256
#define GROUP_FORMAT 1

/* One key of the registry, as the watch last saw it (or as we published it). */
struct group_kv {
	struct wl_list link;
	char *key;   /* without the prefix */
	char *value;
	int64_t revision; /* the mirror's: its mod_revision; published cards: our write's */
};

enum group_stage {
	GROUP_GRANTING,    /* asking for a lease */
	GROUP_CLAIMING,    /* claiming servers/NAME under it */
	GROUP_REGISTERED,  /* holding the name: publishing */
};

struct slim_group {
	struct slim_manager *mgr;
	struct slim_group_config config;
	struct slim_etcd *etcd;
	enum group_stage stage;
	int64_t lease;
	uint64_t renewed_us;            /* the lease was granted or kept alive (slim_now_us) */
	uint64_t call_sent_us;          /* the grant or keepalive in flight was sent */
	/*
	 * The lease lives until then at least in etcd: its TTL from the moment
	 * the last grant or keepalive that succeeded was sent.
	 */
	uint64_t lease_until_us;
	struct wl_event_source *doubt;  /* at lease_until_us: the bindings are looked at */
	struct wl_event_source *tick;   /* keepalive, retries, publishing */
	struct slim_etcd_call *call;    /* the grant, claim or keepalive in flight */
	bool reachable;
	bool name_taken_said;
	struct slim_ratelimit write_rl; /* failed writes, said at most once a second */
	char claimed_key[192], claimed_value[GROUP_VALUE_MAX]; /* servers/NAME as claimed */

	/* The copy of the registry: a range, then a watch from the next revision. */
	struct wl_list mirror; /* group_kv */
	int mirror_len;
	bool mirror_ok;
	int64_t revision;
	struct slim_etcd_call *sync; /* the range or the watch */
	uint64_t watch_since_us;     /* the watch began (slim_now_us) */
	struct wl_event_source *sync_retry;

	/* What we published: the server's record, its sessions and cards. */
	struct wl_list published; /* group_kv, keys without the prefix */
	struct wl_list claims;    /* slim_card_claim: cards/HASH being claimed */
	struct wl_list bound;     /* group_bound: cards BOUND here, as logged */
};

/* group-view.c: the group's answers to the table (slim_manager_elsewhere). */
extern const struct slim_manager_elsewhere slim_group_elsewhere;

/* The key in `list` (group_kv), or NULL. */
struct group_kv *slim_group_kv_find(struct wl_list *list, const char *key);
/* group-consoles.c: the registry's decision on console `id`, taken here. */
void slim_group_console_adopt(struct slim_group *group, const char *id, const char *value);
/* What this server's consoles file holds that the registry lacks goes there. */
void slim_group_consoles_seed(struct slim_group *group);

/* A put (value) or a delete (NULL) of a key under the prefix; with our lease if `leased`. */
void slim_group_write_key(struct slim_group *group, const char *key, const char *value,
		bool leased);
/* A write's answer: etcd answers (or a failure, said at most once a second). */
void slim_group_put_done(void *data, struct json_object *result, const char *error);
/* Whether etcd answered (said once per change: an outage, its end). */
void slim_group_reachable(struct slim_group *group, bool ok, const char *error);
/* `key` = `value` in the copy of the registry, as read at `revision` (not older than it has). */
void slim_group_mirror_set(struct slim_group *group, const char *key, const char *value,
		int64_t revision);
/* `key` = `value` in what we published, written at `revision`. */
void slim_group_published_set(struct slim_group *group, const char *key, const char *value,
		int64_t revision);

/* group-cards.c: cards/HASH, claimed, and what each binding here is. */
void slim_group_card_key(const uint8_t hash[32], char *out, size_t size);
/* A card record of ours deleted only while it is still ours (compared on its value). */
void slim_group_card_delete(struct slim_group *group, const struct group_kv *kv);
/* The key a transaction's failure branch read (its first range's first kv), or NULL. */
struct json_object *slim_group_txn_read(struct json_object *result);
/* Our record for session `id`. */
void slim_group_card_value(const struct slim_group *group, uint32_t id, char *out, size_t size);
/* A card record's server and session; false if it is not one of this version. */
bool slim_group_card_record(const char *value, char *server, size_t size, uint32_t *id);
struct slim_card_claim *slim_group_claim_card(struct slim_group *group, const uint8_t hash[32],
		uint32_t id, bool takeover, slim_claim_done done, void *done_data);
void slim_group_claim_cancel(struct slim_card_claim *claim);
/* A binding here the registry lacks: claimed, unless it is being claimed already. */
void slim_group_claim_binding(struct slim_group *group, const uint8_t hash[32], uint32_t id);
void slim_group_claims_destroy(struct slim_group *group);
/* An answer to a claim of a card (a fixed one, for session 1), as if one were in flight. */
void slim_group_claim_answer(struct slim_group *group, struct json_object *result,
		const char *error);
/* Each binding's state (BOUND, UNCONFIRMED, ELSEWHERE) from the registry and the lease. */
void slim_group_cards_update(struct slim_group *group);
void slim_group_bound_destroy(struct slim_group *group);
/* group-view.c: session `id` of `server` as the copy of the registry has it. */
void slim_group_session_at(struct slim_group *group, const char *server, uint32_t id,
		struct slim_card_session *out);

#endif
