/*
 * A server group's consoles: the administrator's decisions (approve,
 * revoke) shared through the registry, so that a console approved on one
 * server is served by every server of the group and one revoked on any is
 * refused by all (session-manager.md §9):
 *
 *   PREFIX consoles/ID  {"v":1, "state":"approved"|"revoked", "key":HEX|"", "name"}
 *
 * No lease: a decision outlives the server it was made on. What the
 * registry says wins over a server's own file, which follows it; what a
 * server decides (slimlandctl, enroll = open) goes to the registry at
 * once, and what its file holds that the registry lacks goes there when it
 * has read the registry.
 */
#include <stdio.h>
#include <string.h>
#include "console-send.h"
#include "group-internal.h"
#include "sessions.h"
#include "slim-hex.h"
#include "slim-log.h"

static void record(const struct slim_enrolled *c, char *out, size_t size)
{
	char hex[2 * SLIM_SEC_FINGERPRINT_LEN + 1] = "";
	if (c->has_key) {
		slim_hex_encode(hex, c->key, sizeof(c->key));
	}
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "v", json_object_new_int(GROUP_FORMAT));
	json_object_object_add(o, "state", json_object_new_string(c->revoked ? "revoked" :
		"approved"));
	json_object_object_add(o, "key", json_object_new_string(hex));
	json_object_object_add(o, "name", json_object_new_string(c->name));
	snprintf(out, size, "%s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}

static const struct slim_enrolled *enrolled(struct slim_manager *mgr, const char *id)
{
	for (size_t i = 0; i < mgr->enroll.n; i++) {
		if (strcmp(mgr->enroll.list[i].id, id) == 0) {
			return &mgr->enroll.list[i];
		}
	}
	return NULL;
}

void slim_group_console_decided(struct slim_group *group, const char *id)
{
	const struct slim_enrolled *c = group ? enrolled(group->mgr, id) : NULL;
	if (!c) {
		return;
	}
	char key[128], value[GROUP_VALUE_MAX];
	snprintf(key, sizeof(key), "consoles/%s", id);
	record(c, value, sizeof(value));
	slim_group_write_key(group, key, value, false);
}

void slim_group_consoles_seed(struct slim_group *group)
{
	if (!group->mirror_ok) {
		return;
	}
	for (size_t i = 0; i < group->mgr->enroll.n; i++) {
		char key[128];
		snprintf(key, sizeof(key), "consoles/%s", group->mgr->enroll.list[i].id);
		if (!slim_group_kv_find(&group->mirror, key)) {
			slim_group_console_decided(group, group->mgr->enroll.list[i].id);
		}
	}
}

/* The registry's record for console `id`: false if it is not one of this version. */
static bool parse(const char *id, const char *value, struct slim_enrolled *out)
{
	memset(out, 0, sizeof(*out));
	struct json_object *o = json_tokener_parse(value), *v;
	bool ok = o && json_object_is_type(o, json_type_object) && strlen(id) < sizeof(out->id) &&
		json_object_object_get_ex(o, "v", &v) && json_object_get_int(v) == GROUP_FORMAT;
	const char *state = ok && json_object_object_get_ex(o, "state", &v) ?
		json_object_get_string(v) : NULL;
	const char *hex = ok && json_object_object_get_ex(o, "key", &v) ?
		json_object_get_string(v) : NULL;
	const char *name = ok && json_object_object_get_ex(o, "name", &v) ?
		json_object_get_string(v) : "";
	ok = state && hex && name && (strcmp(state, "approved") == 0 ||
		strcmp(state, "revoked") == 0) && (name[0] == '\0' || slim_enroll_name_valid(name)) &&
		(hex[0] == '\0' || slim_hex_decode(out->key, sizeof(out->key), hex));
	if (ok) {
		snprintf(out->id, sizeof(out->id), "%s", id);
		out->revoked = strcmp(state, "revoked") == 0;
		out->has_key = hex[0] != '\0';
		snprintf(out->name, sizeof(out->name), "%s", name);
	}
	json_object_put(o);
	return ok;
}

void slim_group_console_adopt(struct slim_group *group, const char *id, const char *value)
{
	struct slim_manager *mgr = group->mgr;
	struct slim_enrolled decision;
	struct slim_sec_conn *conn;
	uint32_t assoc;
	if (!parse(id, value, &decision) ||
			!slim_enroll_adopt(&mgr->enroll, &decision, &conn, &assoc)) {
		return;
	}
	slim_log(SLIM_LOG_INFO, "group: console %s %s by the group", id,
		decision.revoked ? "revoked" : "approved");
	struct slim_console *c = slim_manager_console(mgr, id);
	if (decision.revoked && c) {
		slim_console_revoke(c);
	} else if (conn) {
		/* it waits, connected: its next HELLO is admitted, so ask for one now */
		slim_consoles_nudge(mgr, conn, assoc);
	}
}
