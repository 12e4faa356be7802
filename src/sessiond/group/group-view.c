/*
 * What a server group's registry says, from this server's copy of it
 * (group.c): slimlandctl group and drain, and where a console goes that
 * this server has no session for (the table asks through
 * slim_group_elsewhere).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "group-internal.h"
#include "sessions.h"
#include "slim-hex.h"
#include "slim-log.h"

static unsigned field_uint(struct json_object *o, const char *name)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, name, &v)) {
		return 0;
	}
	int64_t n = json_object_get_int64(v);
	return n < 0 ? 0 : n > 0x7fffffff ? 0x7fffffff : (unsigned)n;
}

/*
 * A string field for a line of slimlandctl's answer: what etcd holds is
 * input, and a space or a newline in it must not make lines of its own.
 */
static const char *field_str(struct json_object *o, const char *name, char *buf, size_t size)
{
	struct json_object *v;
	if (!o || !json_object_object_get_ex(o, name, &v) ||
			!json_object_is_type(v, json_type_string)) {
		return "?";
	}
	snprintf(buf, size, "%s", json_object_get_string(v));
	for (char *p = buf; *p; p++) {
		if (*p <= ' ' || *p == 0x7f) {
			*p = '?';
		}
	}
	return buf;
}

/* The servers of the copy of the registry, with their records (to put). */
struct group_servers {
	struct slim_place_server at[GROUP_SERVERS_MAX];
	struct json_object *record[GROUP_SERVERS_MAX];
	int n;
};

static void servers_collect(struct slim_group *group, struct group_servers *s)
{
	s->n = 0;
	struct group_kv *kv;
	wl_list_for_each(kv, &group->mirror, link) {
		if (strncmp(kv->key, "servers/", 8) != 0 || s->n == GROUP_SERVERS_MAX ||
				!slim_group_name_valid(kv->key + 8)) {
			continue;
		}
		struct json_object *o = json_tokener_parse(kv->value);
		if (!o || !json_object_is_type(o, json_type_object) ||
				field_uint(o, "v") != GROUP_FORMAT) {
			json_object_put(o);
			continue; /* an entry of another version: not a server we can place on */
		}
		char drain_key[128];
		snprintf(drain_key, sizeof(drain_key), "drain/%s", kv->key + 8);
		s->record[s->n] = o;
		s->at[s->n] = (struct slim_place_server){
			.name = kv->key + 8,
			.sessions = field_uint(o, "sessions"),
			.mem_avail_mb = field_uint(o, "mem_avail_mb"),
			.cpus = field_uint(o, "cpus"),
			.load_pct = field_uint(o, "load_pct"),
			.drain = slim_group_kv_find(&group->mirror, drain_key) != NULL,
		};
		s->n++;
	}
}

static void servers_release(struct group_servers *s)
{
	for (int i = 0; i < s->n; i++) {
		json_object_put(s->record[i]);
	}
	s->n = 0;
}

static int servers_find(const struct group_servers *s, const char *name)
{
	for (int i = 0; i < s->n; i++) {
		if (strcmp(s->at[i].name, name) == 0) {
			return i;
		}
	}
	return -1;
}

/* Server i's manager as a MOVE names it: false if its record says no usable address or key. */
static bool move_to(struct slim_group *group, const struct group_servers *s, int i,
		struct slim_wire_move *move)
{
	char address[128], hex[2 * SLIM_SEC_FINGERPRINT_LEN + 1];
	struct sockaddr_storage ss;
	socklen_t len;
	field_str(s->record[i], "address", address, sizeof(address));
	field_str(s->record[i], "host_key", hex, sizeof(hex));
	memset(move, 0, sizeof(*move));
	if (!slim_parse_address(address, SLIM_SESSIOND_PORT, &ss, &len) ||
			!slim_hex_decode(move->fingerprint, sizeof(move->fingerprint), hex)) {
		return false;
	}
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *in4 = (const void *)&ss;
		move->family = 4;
		move->port = ntohs(in4->sin_port);
		memcpy(move->addr, &in4->sin_addr, 4);
		/* a wildcard (listen = 0.0.0.0) is no address a console can reach */
		return in4->sin_addr.s_addr != htonl(INADDR_ANY) && move->port != 0;
	}
	const struct sockaddr_in6 *in6 = (const void *)&ss;
	move->family = 6;
	move->port = ntohs(in6->sin6_port);
	memcpy(move->addr, &in6->sin6_addr, 16);
	return !IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr) && move->port != 0;
}

void slim_group_session_at(struct slim_group *group, const char *server, uint32_t id,
		struct slim_card_session *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->server, sizeof(out->server), "%s", server);
	out->id = id;
	struct group_servers s;
	servers_collect(group, &s);
	int i = servers_find(&s, server);
	/* a server whose lease expired is gone from here: out of reach, not moved to */
	out->movable = i >= 0 && strcmp(server, group->config.name) != 0 &&
		move_to(group, &s, i, &out->move);
	servers_release(&s);
}

/* Sessions of other servers published with this card (HASH16), but for `skip`'s. */
static void card_others(struct slim_group *group, const char *hash16,
		const struct slim_card_session *skip, struct slim_card_where *out)
{
	struct group_kv *kv;
	wl_list_for_each(kv, &group->mirror, link) {
		char server[64];
		unsigned id;
		int end = 0;
		if (strncmp(kv->key, "sessions/", 9) != 0 || !strstr(kv->value, hash16) ||
				sscanf(kv->key + 9, "%63[^/]/%u%n", server, &id, &end) != 2 ||
				kv->key[9 + end] != '\0' || !slim_group_name_valid(server) ||
				strcmp(server, group->config.name) == 0 ||
				(strcmp(server, skip->server) == 0 && id == skip->id)) {
			continue;
		}
		struct json_object *o = json_tokener_parse(kv->value);
		char card[32];
		bool match = o && field_uint(o, "v") == GROUP_FORMAT &&
			strcmp(field_str(o, "card", card, sizeof(card)), hash16) == 0;
		json_object_put(o);
		if (match && out->n_others < SLIM_CARD_OTHERS_MAX) {
			slim_group_session_at(group, server, id, &out->others[out->n_others++]);
		}
	}
}

void slim_group_card_lookup(struct slim_group *group, const uint8_t hash[32],
		struct slim_card_where *out)
{
	memset(out, 0, sizeof(*out));
	if (!group->mirror_ok || group->stage != GROUP_REGISTERED || !group->reachable) {
		/* the copy may be stale: nobody can say where the card's session is */
		out->registry = SLIM_CARD_UNREACHABLE;
		return;
	}
	char key[80], hash16[17], server[64];
	uint32_t id = 0;
	slim_group_card_key(hash, key, sizeof(key));
	snprintf(hash16, sizeof(hash16), "%.16s", key + 6);
	struct group_kv *kv = slim_group_kv_find(&group->mirror, key);
	if (kv && !slim_group_card_record(kv->value, server, sizeof(server), &id)) {
		if (slim_ratelimit(&group->write_rl, slim_now_us())) {
			slim_log(SLIM_LOG_ERROR, "group: card %s: a record this version cannot read "
				"is ignored", hash16);
		}
		kv = NULL;
	}
	if (!kv) {
		out->registry = SLIM_CARD_NONE;
	} else if (strcmp(server, group->config.name) == 0) {
		out->registry = SLIM_CARD_HERE;
		snprintf(out->holder.server, sizeof(out->holder.server), "%s", server);
		out->holder.id = id;
	} else {
		slim_group_session_at(group, server, id, &out->holder);
		out->registry = out->holder.movable ? SLIM_CARD_SERVER : SLIM_CARD_GONE;
	}
	card_others(group, hash16, &out->holder, out);
}

bool slim_group_login_server(struct slim_group *group, struct slim_wire_move *move,
		char *server, size_t size)
{
	if (!group || !group->mirror_ok || group->stage != GROUP_REGISTERED ||
			!group->reachable) {
		return false;
	}
	struct group_servers s;
	servers_collect(group, &s);
	int best = slim_place(s.at, s.n, &group->config.weights, NULL);
	int self = servers_find(&s, group->config.name);
	/*
	 * Another server, only if this one drains or has a session's room less:
	 * two servers whose copies differ a little never send a console back
	 * and forth.
	 */
	bool ok = best >= 0 && self >= 0 && best != self &&
		(s.at[self].drain || slim_place_room(&s.at[best], &group->config.weights) -
			slim_place_room(&s.at[self], &group->config.weights) >= 100) &&
		move_to(group, &s, best, move);
	if (ok) {
		snprintf(server, size, "%s", s.at[best].name);
	}
	servers_release(&s);
	return ok;
}

bool slim_group_servers(struct slim_group *group, slim_group_server_fn fn, void *data)
{
	if (group->mirror_ok) {
		struct group_servers s;
		servers_collect(group, &s);
		for (int i = 0; i < s.n; i++) {
			fn(data, &s.at[i], strcmp(s.at[i].name, group->config.name) == 0);
		}
		servers_release(&s);
	}
	return group->reachable;
}

void slim_group_view(struct slim_group *group, slim_group_out out, void *data)
{
	char line[512];
	snprintf(line, sizeof(line), "group %s server %s etcd %s %s%s", group->config.prefix,
		group->config.name, slim_etcd_endpoint(group->etcd),
		group->reachable ? "reachable" : "unreachable",
		group->stage == GROUP_REGISTERED ? "" : " (not registered)");
	out(data, line);
	if (!group->mirror_ok) {
		out(data, "registry not read yet: etcd has not answered");
		return;
	}
	struct group_servers s;
	servers_collect(group, &s);
	char field[128], field2[128];
	for (int i = 0; i < s.n; i++) {
		const struct slim_place_server *at = &s.at[i];
		snprintf(line, sizeof(line), "server %s address %s sessions %u mem_avail_mb %u "
			"cpus %u load %u.%02u room %ld%s%s", at->name,
			field_str(s.record[i], "address", field, sizeof(field)), at->sessions,
			at->mem_avail_mb, at->cpus, at->load_pct / 100, at->load_pct % 100,
			slim_place_room(at, &group->config.weights), at->drain ? " drain" : "",
			strcmp(at->name, group->config.name) == 0 ? " (this)" : "");
		out(data, line);
	}
	struct group_kv *kv;
	wl_list_for_each(kv, &group->mirror, link) {
		size_t n_key = strlen(kv->key);
		if (strncmp(kv->key, "sessions/", 9) != 0 || n_key > 9 + 64 + 11 ||
				strspn(kv->key + 9, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					"0123456789._-/") != n_key - 9) {
			continue;
		}
		struct json_object *o = json_tokener_parse(kv->value);
		const char *console = field_str(o, "console", field, sizeof(field));
		snprintf(line, sizeof(line), "session %s user %s console %s", kv->key + 9,
			field_str(o, "user", field2, sizeof(field2)), console[0] ? console : "-");
		out(data, line);
		json_object_put(o);
	}
	int next = slim_place(s.at, s.n, &group->config.weights, NULL);
	snprintf(line, sizeof(line), "next login %s", next < 0 ? "nowhere (every server drains)" :
		s.at[next].name);
	out(data, line);
	servers_release(&s);
}

bool slim_group_drain(struct slim_group *group, const char *name, bool drain,
		const char **error)
{
	if (!group->reachable) {
		*error = "etcd unreachable: try again when it answers";
		return false;
	}
	if (!slim_group_name_valid(name)) {
		*error = "not a server name";
		return false;
	}
	char key[128];
	snprintf(key, sizeof(key), "drain/%s", name);
	slim_group_write_key(group, key, drain ? "1" : NULL, false);
	return true;
}

static void elsewhere_card(void *data, const uint8_t hash[32], struct slim_card_where *out)
{
	slim_group_card_lookup(data, hash, out);
}

static struct slim_card_claim *elsewhere_claim(void *data, const uint8_t hash[32], uint32_t id,
		bool takeover, slim_claim_done done, void *done_data)
{
	return slim_group_claim_card(data, hash, id, takeover, done, done_data);
}

static void elsewhere_claim_cancel(void *data, struct slim_card_claim *claim)
{
	slim_group_claim_cancel(claim);
}

static bool elsewhere_login(void *data, struct slim_wire_move *move, char *server, size_t size)
{
	return slim_group_login_server(data, move, server, size);
}

const struct slim_manager_elsewhere slim_group_elsewhere = {
	.card_lookup = elsewhere_card,
	.claim_card = elsewhere_claim,
	.claim_cancel = elsewhere_claim_cancel,
	.login_server = elsewhere_login,
};
