/*
 * What a server group's copy of its registry decides (group.c,
 * group-view.c): where a card's session runs, where a login goes, and
 * what a drain, a server gone or a bad entry changes. The registry's
 * answers go in as bytes, through the parsing and handlers a real answer
 * from etcd takes (slim_group_answer); the etcd endpoint is a port nobody
 * listens on and the event loop never runs, so nothing leaves. The group
 * against a real etcd cluster is tests/integration/test_group.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include "fake-manager.h"
#include "group.h"
#include "metrics-render.h"
#include "sessions.h"
#include "slim-hex.h"
#include "slim-log.h"


struct fixture {
	struct wl_event_loop *loop;
	struct slim_manager *mgr;
	struct slim_group *group;
};

static void quiet(enum slim_log_level level, const char *fmt, va_list args)
{
}

static const uint8_t host_key[32] = { 0xb0, 0xb1, 0xb2 };
static const uint8_t key_a[32] = { 0xa0, 0xa1, 0xa2 };

static void b64(const char *in, char *out)
{
	static const char t[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(in), o = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)in[i] << 16;
		v |= i + 1 < n ? (unsigned char)in[i + 1] << 8 : 0;
		v |= i + 2 < n ? (unsigned char)in[i + 2] : 0;
		out[o++] = t[(v >> 18) & 63];
		out[o++] = t[(v >> 12) & 63];
		out[o++] = i + 1 < n ? t[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? t[v & 63] : '=';
	}
	out[o] = '\0';
}

/* A kv of a range answer: {"key":..., "value":...} */
static void kv(char *buf, size_t size, const char *key, const char *value)
{
	char k[512], v[1500];
	b64(key, k);
	b64(value, v);
	size_t n = strlen(buf);
	snprintf(buf + n, size - n, "%s{\"key\":\"%s\",\"value\":\"%s\"}", n > 1 ? "," : "", k, v);
}

static void server(char *buf, size_t size, const char *name, const char *address,
		const uint8_t fp[32], unsigned sessions)
{
	char key[128], value[512], hex[65];
	slim_hex_encode(hex, fp, 32);
	snprintf(key, sizeof(key), "/slimland/servers/%s", name);
	snprintf(value, sizeof(value), "{\"v\":1,\"address\":\"%s\",\"host_key\":\"%s\","
		"\"sessions\":%u,\"mem_avail_mb\":4000,\"cpus\":4,\"load_pct\":0}", address, hex,
		sessions);
	kv(buf, size, key, value);
}

static void card(char *buf, size_t size, uint8_t byte, const char *on)
{
	uint8_t hash[32];
	char hex[65], key[128], value[128];
	memset(hash, byte, sizeof(hash));
	slim_hex_encode(hex, hash, sizeof(hash));
	snprintf(key, sizeof(key), "/slimland/cards/%s", hex);
	snprintf(value, sizeof(value), "{\"v\":1,\"server\":\"%s\",\"session\":3}", on);
	kv(buf, size, key, value);
}

static void answer(struct fixture *f, enum slim_group_request kind, const char *text)
{
	slim_group_answer(f->group, kind, text, strlen(text));
}

/* The registry as a range answer: `kvs` is the inside of its array. */
static void registry(struct fixture *f, const char *kvs)
{
	char text[16384];
	snprintf(text, sizeof(text), "{\"header\":{\"revision\":\"7\"},\"kvs\":[%s]}", kvs);
	answer(f, SLIM_GROUP_RANGE, text);
}

static int setup(void **state)
{
	static struct fixture f;
	slim_log_init(SLIM_LOG_DEBUG, quiet);
	f.loop = wl_event_loop_create();
	/* the manager's clock, which the group's lease is timed by: moved on by the tests */
	fake = (struct fake_world){ .now_us = slim_now_us() };
	struct slim_config config;
	slim_config_defaults(&config);
	uint8_t card_key[SLIM_SEC_KEY_LEN] = { 1 };
	f.mgr = slim_manager_create(f.loop, &config, "/nonexistent", card_key, NULL, host_key,
		&fake_ops, NULL);
	assert_non_null(f.mgr);
	struct slim_group_config gc;
	slim_group_config_defaults(&gc);
	snprintf(gc.etcd, sizeof(gc.etcd), "http://127.0.0.1:9");
	snprintf(gc.name, sizeof(gc.name), "b");
	snprintf(gc.address, sizeof(gc.address), "10.0.0.2:5550");
	f.group = slim_group_create(f.mgr, &gc);
	assert_non_null(f.group);
	/* a lease, and the name claimed under it */
	answer(&f, SLIM_GROUP_GRANT, "{\"ID\":\"42\",\"TTL\":\"5\"}");
	answer(&f, SLIM_GROUP_CLAIM, "{\"succeeded\":true}");
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	slim_group_destroy(f->group);
	slim_manager_destroy(f->mgr);
	wl_event_loop_destroy(f->loop);
	return 0;
}

/* What the registry says of the card whose hash is 32 × `byte`: the record's server in `name`. */
static enum slim_card_registry card_where(struct fixture *f, uint8_t byte,
		struct slim_wire_move *move, char *name)
{
	uint8_t hash[32];
	memset(hash, byte, sizeof(hash));
	struct slim_card_where where;
	slim_group_card_lookup(f->group, hash, &where);
	*move = where.holder.move;
	snprintf(name, 64, "%s", where.holder.server);
	return where.registry;
}

static void test_card_on_another_server(void **state)
{
	struct fixture *f = *state;
	struct slim_wire_move move;
	char name[64];
	/* nothing read yet: nobody can say */
	assert_int_equal(card_where(f, 0x11, &move, name), SLIM_CARD_UNREACHABLE);
	char kvs[8192] = "";
	server(kvs, sizeof(kvs), "a", "10.0.0.1:5551", key_a, 1);
	server(kvs, sizeof(kvs), "b", "10.0.0.2:5550", host_key, 0);
	card(kvs, sizeof(kvs), 0x11, "a");
	card(kvs, sizeof(kvs), 0x22, "b");
	card(kvs, sizeof(kvs), 0x33, "z");
	card(kvs, sizeof(kvs), 0x44, "a b");
	registry(f, kvs);
	assert_int_equal(card_where(f, 0x11, &move, name), SLIM_CARD_SERVER);
	assert_string_equal(name, "a");
	assert_int_equal(move.family, 4);
	assert_int_equal(move.port, 5551);
	assert_memory_equal(move.addr, "\x0a\x00\x00\x01", 4);
	assert_memory_equal(move.fingerprint, key_a, 32);
	/*
	 * This server's own card; a server the registry does not have (gone,
	 * or cut off: its card's record outlives its lease); a record that is
	 * no server's name (ignored); no record.
	 */
	assert_int_equal(card_where(f, 0x22, &move, name), SLIM_CARD_HERE);
	assert_int_equal(card_where(f, 0x33, &move, name), SLIM_CARD_GONE);
	assert_string_equal(name, "z");
	assert_int_equal(card_where(f, 0x44, &move, name), SLIM_CARD_NONE);
	assert_int_equal(card_where(f, 0x55, &move, name), SLIM_CARD_NONE);

	/* a's lease expires: the watch deletes its record; its card says where it was */
	char del[512], k[128];
	b64("/slimland/servers/a", k);
	snprintf(del, sizeof(del), "{\"result\":{\"events\":[{\"type\":\"DELETE\","
		"\"kv\":{\"key\":\"%s\",\"mod_revision\":\"8\"}}]}}", k);
	answer(f, SLIM_GROUP_WATCH, del);
	assert_int_equal(card_where(f, 0x11, &move, name), SLIM_CARD_GONE);
	assert_string_equal(name, "a");
}

/* After a partition healed, a card may open a session on two servers: both are listed. */
static void test_card_with_two_sessions(void **state)
{
	struct fixture *f = *state;
	char kvs[8192] = "", hex[65];
	uint8_t hash[32];
	memset(hash, 0x11, sizeof(hash));
	slim_hex_encode(hex, hash, sizeof(hash));
	server(kvs, sizeof(kvs), "a", "10.0.0.1:5551", key_a, 1);
	server(kvs, sizeof(kvs), "b", "10.0.0.2:5550", host_key, 0);
	server(kvs, sizeof(kvs), "c", "10.0.0.3:5550", key_a, 1);
	card(kvs, sizeof(kvs), 0x11, "a");
	char value[160];
	snprintf(value, sizeof(value), "{\"v\":1,\"user\":\"u\",\"console\":\"\",\"card\":\"%.16s\"}",
		hex);
	kv(kvs, sizeof(kvs), "/slimland/sessions/c/9", value);
	kv(kvs, sizeof(kvs), "/slimland/sessions/a/3", value);
	registry(f, kvs);
	struct slim_card_where where;
	slim_group_card_lookup(f->group, hash, &where);
	assert_int_equal(where.registry, SLIM_CARD_SERVER);
	assert_string_equal(where.holder.server, "a");
	assert_int_equal(where.holder.id, 3);
	/* the record's own session is not listed twice */
	assert_int_equal(where.n_others, 1);
	assert_string_equal(where.others[0].server, "c");
	assert_int_equal(where.others[0].id, 9);
	assert_true(where.others[0].movable);
}

/* etcd does not answer: the copy may be stale, so nobody is sent anywhere on its word. */
static void test_unreachable_moves_nobody(void **state)
{
	struct fixture *f = *state;
	struct slim_wire_move move;
	char name[64];
	char kvs[8192] = "";
	server(kvs, sizeof(kvs), "a", "10.0.0.1:5550", key_a, 0);
	server(kvs, sizeof(kvs), "b", "10.0.0.2:5550", host_key, 4);
	card(kvs, sizeof(kvs), 0x11, "a");
	registry(f, kvs);
	assert_int_equal(card_where(f, 0x11, &move, name), SLIM_CARD_SERVER);
	assert_true(slim_group_login_server(f->group, &move, name, sizeof(name)));
	/* a keepalive no member answered: tried again while the lease lives */
	const char *timed_out = "{\"error\":\"etcdserver: request timed out\",\"code\":14}";
	answer(f, SLIM_GROUP_KEEPALIVE, timed_out);
	assert_int_equal(card_where(f, 0x11, &move, name), SLIM_CARD_SERVER);
	/* and said once its time (5 s) has passed */
	fake.now_us += 6000000;
	answer(f, SLIM_GROUP_KEEPALIVE, timed_out);
	assert_int_equal(card_where(f, 0x11, &move, name), SLIM_CARD_UNREACHABLE);
	assert_false(slim_group_login_server(f->group, &move, name, sizeof(name)));
	/* it answers again */
	answer(f, SLIM_GROUP_KEEPALIVE, "{\"result\":{\"ID\":\"42\",\"TTL\":\"5\"}}");
	assert_int_equal(card_where(f, 0x11, &move, name), SLIM_CARD_SERVER);
}

static void test_login_goes_where_there_is_room(void **state)
{
	struct fixture *f = *state;
	struct slim_wire_move move;
	char name[64];
	char kvs[8192] = "";
	server(kvs, sizeof(kvs), "a", "10.0.0.1:5550", key_a, 1);
	server(kvs, sizeof(kvs), "b", "10.0.0.2:5550", host_key, 2);
	server(kvs, sizeof(kvs), "c", "10.0.0.3:5550", key_a, 1);
	registry(f, kvs);
	/* a and c have a session's room more than b: a, the first name */
	assert_true(slim_group_login_server(f->group, &move, name, sizeof(name)));
	assert_string_equal(name, "a");
	assert_memory_equal(move.addr, "\x0a\x00\x00\x01", 4);

	/* within a session's room of the best: it stays */
	kvs[0] = '\0';
	server(kvs, sizeof(kvs), "a", "10.0.0.1:5550", key_a, 1);
	server(kvs, sizeof(kvs), "b", "10.0.0.2:5550", host_key, 1);
	registry(f, kvs);
	assert_false(slim_group_login_server(f->group, &move, name, sizeof(name)));

	/* a draining server sends even a tie away, and none is sent to one */
	char drain[4096];
	snprintf(drain, sizeof(drain), "%s", kvs);
	kv(drain, sizeof(drain), "/slimland/drain/b", "1");
	registry(f, drain);
	assert_true(slim_group_login_server(f->group, &move, name, sizeof(name)));
	assert_string_equal(name, "a");
	snprintf(drain, sizeof(drain), "%s", kvs);
	kv(drain, sizeof(drain), "/slimland/drain/a", "1");
	registry(f, drain);
	assert_false(slim_group_login_server(f->group, &move, name, sizeof(name)));

	/* a better server that gave no address consoles can reach: it stays */
	kvs[0] = '\0';
	server(kvs, sizeof(kvs), "a", "0.0.0.0:5550", key_a, 0);
	server(kvs, sizeof(kvs), "b", "10.0.0.2:5550", host_key, 5);
	registry(f, kvs);
	assert_false(slim_group_login_server(f->group, &move, name, sizeof(name)));
}

static const struct slim_enrolled *enrolled(struct fixture *f, const char *id)
{
	for (size_t i = 0; i < f->mgr->enroll.n; i++) {
		if (strcmp(f->mgr->enroll.list[i].id, id) == 0) {
			return &f->mgr->enroll.list[i];
		}
	}
	return NULL;
}

/* The administrator's decisions on consoles, made on any server, hold on this one. */
static void test_consoles_follow_the_registry(void **state)
{
	struct fixture *f = *state;
	char kvs[8192] = "", hex[65];
	slim_hex_encode(hex, key_a, sizeof(key_a));
	char value[256];
	snprintf(value, sizeof(value), "{\"v\":1,\"state\":\"approved\",\"key\":\"%s\","
		"\"name\":\"front-desk\"}", hex);
	kv(kvs, sizeof(kvs), "/slimland/consoles/desk-1", value);
	/* not records of this version: a bad state, a bad key, a name with a space */
	kv(kvs, sizeof(kvs), "/slimland/consoles/desk-2", "{\"v\":1,\"state\":\"maybe\","
		"\"key\":\"\",\"name\":\"\"}");
	kv(kvs, sizeof(kvs), "/slimland/consoles/desk-3", "{\"v\":1,\"state\":\"approved\","
		"\"key\":\"12\",\"name\":\"\"}");
	kv(kvs, sizeof(kvs), "/slimland/consoles/desk-4", "{\"v\":1,\"state\":\"approved\","
		"\"key\":\"\",\"name\":\"a b\"}");
	registry(f, kvs);
	const struct slim_enrolled *c = enrolled(f, "desk-1");
	assert_non_null(c);
	assert_false(c->revoked);
	assert_true(c->has_key);
	assert_memory_equal(c->key, key_a, sizeof(key_a));
	assert_string_equal(c->name, "front-desk");
	assert_null(enrolled(f, "desk-2"));
	assert_null(enrolled(f, "desk-3"));
	assert_null(enrolled(f, "desk-4"));
	/* revoked on another server: revoked here too */
	char ev[1024], k[128], v[512];
	b64("/slimland/consoles/desk-1", k);
	snprintf(value, sizeof(value), "{\"v\":1,\"state\":\"revoked\",\"key\":\"%s\","
		"\"name\":\"front-desk\"}", hex);
	b64(value, v);
	snprintf(ev, sizeof(ev), "{\"result\":{\"events\":[{\"kv\":{\"key\":\"%s\","
		"\"value\":\"%s\",\"mod_revision\":\"9\"}}]}}", k, v);
	answer(f, SLIM_GROUP_WATCH, ev);
	c = enrolled(f, "desk-1");
	assert_non_null(c);
	assert_true(c->revoked);
}

static void test_bad_entries_are_not_servers(void **state)
{
	struct fixture *f = *state;
	struct slim_wire_move move;
	char name[64];
	char kvs[8192] = "";
	server(kvs, sizeof(kvs), "b", "10.0.0.2:5550", host_key, 3);
	/* not JSON, a name with a slash, an address that is no address, a short key */
	kv(kvs, sizeof(kvs), "/slimland/servers/x", "not json");
	kv(kvs, sizeof(kvs), "/slimland/servers/y/z", "{\"sessions\":0}");
	char value[512];
	snprintf(value, sizeof(value), "{\"v\":1,\"address\":\"somewhere\",\"host_key\":\"00\","
		"\"sessions\":0,\"mem_avail_mb\":9000,\"cpus\":8}");
	kv(kvs, sizeof(kvs), "/slimland/servers/w", value);
	/* a record of another version, however roomy, is not placed on */
	snprintf(value, sizeof(value), "{\"v\":2,\"address\":\"10.0.0.9:5550\",\"host_key\":"
		"\"%064d\",\"sessions\":0,\"mem_avail_mb\":9000,\"cpus\":8}", 0);
	kv(kvs, sizeof(kvs), "/slimland/servers/v2", value);
	registry(f, kvs);
	assert_false(slim_group_login_server(f->group, &move, name, sizeof(name)));
	/* etcd's error instead of a range: the copy stays as it was */
	answer(f, SLIM_GROUP_RANGE, "{\"error\":\"etcdserver: no leader\",\"code\":14}");
	assert_false(slim_group_login_server(f->group, &move, name, sizeof(name)));
}

struct view_lines {
	char text[16][512];
	int n;
};

static void view_out(void *data, const char *line)
{
	struct view_lines *lines = data;
	if (lines->n < 16) {
		snprintf(lines->text[lines->n++], sizeof(lines->text[0]), "%s", line);
	}
}

static void test_view_lines(void **state)
{
	struct fixture *f = *state;
	char kvs[8192] = "";
	server(kvs, sizeof(kvs), "a", "10.0.0.1:5550", key_a, 1);
	kv(kvs, sizeof(kvs), "/slimland/sessions/a/3",
		"{\"v\":1,\"user\":\"al ice\\n\",\"console\":\"\"}");
	registry(f, kvs);
	struct view_lines lines = { .n = 0 };
	slim_group_view(f->group, view_out, &lines);
	assert_int_equal(lines.n, 4);
	assert_non_null(strstr(lines.text[1], "server a address 10.0.0.1:5550 sessions 1"));
	/* what etcd holds cannot make lines of its own */
	assert_string_equal(lines.text[2], "session a/3 user al?ice? console -");
	assert_string_equal(lines.text[3], "next login a");
}

/* The metrics: each server of the registry's copy, this one marked, a drain said. */
static void test_metrics_servers(void **state)
{
	struct fixture *f = *state;
	char kvs[8192] = "";
	server(kvs, sizeof(kvs), "a", "10.0.0.1:5550", key_a, 3);
	server(kvs, sizeof(kvs), "b", "10.0.0.2:5550", host_key, 0);
	kv(kvs, sizeof(kvs), "/slimland/drain/a", "{}");
	registry(f, kvs);
	size_t len;
	char *text = slim_metrics_render(f->mgr, f->group, &len);
	assert_non_null(text);
	static const char *const lines[] = {
		"# TYPE slimland_group_server_sessions gauge\n",
		"slimland_group_server_sessions{server=\"a\",this=\"0\"} 3\n",
		"slimland_group_server_sessions{server=\"b\",this=\"1\"} 0\n",
		"slimland_group_server_memory_available_bytes{server=\"a\",this=\"0\"} 4194304000\n",
		"slimland_group_server_cpus{server=\"b\",this=\"1\"} 4\n",
		"slimland_group_server_load1{server=\"a\",this=\"0\"} 0\n",
		"slimland_group_server_draining{server=\"a\",this=\"0\"} 1\n",
		"slimland_group_server_draining{server=\"b\",this=\"1\"} 0\n",
		"# TYPE slimland_group_etcd_reachable gauge\n",
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		if (!strstr(text, lines[i])) {
			fail_msg("no %s in:\n%s", lines[i], text);
		}
	}
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_card_on_another_server, setup, teardown),
		cmocka_unit_test_setup_teardown(test_card_with_two_sessions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreachable_moves_nobody, setup, teardown),
		cmocka_unit_test_setup_teardown(test_login_goes_where_there_is_room, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_entries_are_not_servers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_consoles_follow_the_registry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metrics_servers, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
