/* slimland.conf (session-manager.md §6): values, defaults, bad lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <netinet/in.h>
#include "config.h"
#include "slim-log.h"

static void quiet(enum slim_log_level level, const char *fmt, va_list args)
{
}

static int parse(struct slim_config *c, const char *text)
{
	slim_config_defaults(c);
	return slim_config_parse(c, text, strlen(text), "test.conf");
}

static void test_defaults(void **state)
{
	struct slim_config c;
	slim_config_defaults(&c);
	assert_string_equal(c.listen, "0.0.0.0:5550");
	assert_string_equal(c.startup, "slimland-session");
	assert_string_equal(c.greeter, "slimland-greeter");
	assert_string_equal(c.greeter_user, "slimland-greeter");
	assert_int_equal(c.greeter_uid_first, 70000);
	assert_int_equal(c.greeter_uid_last, 70999);
	assert_int_equal(c.reauth, SLIM_REAUTH_NEVER);
	assert_true(c.card_removal_detach);
	assert_int_equal(c.detached_timeout_s, 0);
	assert_int_equal(c.console_timeout_s, 30);
	assert_string_equal(c.state, "/run/slimland/state");
	assert_false(c.state_set);
	assert_string_equal(c.pam_service, "slimland");
	assert_string_equal(c.key_dir, "/var/lib/slimland");
	assert_int_equal(c.enroll, SLIM_ENROLL_APPROVE);
	assert_int_equal(c.transport, SLIM_SEC_DTLS);
	/* no group: the state file alone */
	assert_string_equal(c.group.etcd, "");
	assert_string_equal(c.group.prefix, "/slimland/");
	assert_int_equal(c.group.ttl_s, 5);
}

/* The file shipped in data/ shows every key with its default, and nothing else. */
static void test_shipped_file(void **state)
{
	struct slim_config c, d;
	slim_config_defaults(&c);
	slim_config_defaults(&d);
	FILE *f = fopen(SLIM_SHIPPED_CONF, "r");
	assert_non_null(f);
	char text[8192];
	size_t n = fread(text, 1, sizeof(text), f);
	fclose(f);
	assert_true(n < sizeof(text));
	assert_int_equal(slim_config_parse(&c, text, n, SLIM_SHIPPED_CONF), 0);
	/* state_set says a value was given, the rest must be the defaults */
	assert_true(c.state_set);
	c.state_set = false;
	assert_memory_equal(&c, &d, sizeof(c));
}

static void test_values(void **state)
{
	struct slim_config c;
	assert_int_equal(parse(&c,
		"# a comment\n"
		"\n"
		"listen = 127.0.0.1:6000\n"
		"  startup=foot --title x   # trailing comment\n"
		"greeter = /usr/bin/slimland-greeter\r\n"
		"greeter_user = gdm\n"
		"greeter_uids = 80000-145535\n"
		"reauth = idle:300\n"
		"card_removal = keep\n"
		"detached_timeout = 3600\n"
		"console_timeout = 0\n"
		"state = /tmp/x/state\n"
		"pam_service = login\n"
		"key_dir = /etc/slimland/keys\n"
		"enroll = open\n"
		"transport = clear\n"
		"cgroups = off\n"
		"weight_interactive = 5000\n"
		"hidden = weight\n"
		"detached = fair\n"
		"memory_low = 1024\n"
		"video_budget = 0\n"
		"video_codec = none\n"
		"etcd = http://10.0.0.1:2379,http://10.0.0.2:2379\n"
		"etcd_ca = /etc/slimland/etcd-ca.pem\n"
		"etcd_cert = /etc/slimland/etcd.pem\n"
		"etcd_key = /etc/slimland/etcd.key\n"
		"group_prefix = /site/\n"
		"server_name = srv-1.a\n"
		"group_address = 10.0.0.5:5550\n"
		"group_ttl = 3\n"
		"ram_per_user = 500\n"
		"existing_users_weight = 50\n"
		"cpu_weight = 0\n"
		"slimland = /opt/slimland"), 0);
	assert_string_equal(c.group.etcd, "http://10.0.0.1:2379,http://10.0.0.2:2379");
	assert_string_equal(c.group.etcd_ca, "/etc/slimland/etcd-ca.pem");
	assert_string_equal(c.group.etcd_cert, "/etc/slimland/etcd.pem");
	assert_string_equal(c.group.etcd_key, "/etc/slimland/etcd.key");
	assert_string_equal(c.group.prefix, "/site/");
	assert_string_equal(c.group.name, "srv-1.a");
	assert_string_equal(c.group.address, "10.0.0.5:5550");
	assert_int_equal(c.group.ttl_s, 3);
	assert_int_equal(c.group.weights.ram_per_user_mb, 500);
	assert_int_equal(c.group.weights.existing_users_weight, 50);
	assert_int_equal(c.group.weights.cpu_weight, 0);
	assert_string_equal(c.listen, "127.0.0.1:6000");
	assert_string_equal(c.startup, "foot --title x");
	assert_string_equal(c.greeter, "/usr/bin/slimland-greeter");
	assert_string_equal(c.greeter_user, "gdm");
	assert_int_equal(c.greeter_uid_first, 80000);
	assert_int_equal(c.greeter_uid_last, 145535); /* 65536 uids, the most */
	assert_int_equal(c.reauth, SLIM_REAUTH_IDLE);
	assert_int_equal(c.reauth_idle_s, 300);
	assert_false(c.card_removal_detach);
	assert_int_equal(c.detached_timeout_s, 3600);
	assert_int_equal(c.console_timeout_s, 0);
	assert_string_equal(c.state, "/tmp/x/state");
	assert_true(c.state_set);
	assert_string_equal(c.pam_service, "login");
	assert_string_equal(c.slimland, "/opt/slimland");
	assert_string_equal(c.key_dir, "/etc/slimland/keys");
	assert_int_equal(c.enroll, SLIM_ENROLL_OPEN);
	assert_int_equal(c.transport, SLIM_SEC_CLEAR);
	assert_false(c.cgroups.enabled);
	assert_int_equal(c.cgroups.weight[SLIM_CGROUP_INTERACTIVE], 5000);
	assert_false(c.cgroups.hidden_idle);
	assert_false(c.cgroups.detached_idle);
	assert_true(c.cgroups.memory_low == 1024ull << 20);
	assert_int_equal(c.video_budget, 0);
	assert_string_equal(c.video_codec, "none");
	assert_int_equal(parse(&c, "reauth = always\nenroll = closed\n"), 0);
	assert_int_equal(c.reauth, SLIM_REAUTH_ALWAYS);
	assert_int_equal(c.enroll, SLIM_ENROLL_CLOSED);
}

static void test_shadow_policy(void **state)
{
	struct slim_config c;
	slim_config_defaults(&c);
	assert_int_equal(c.shadow, SLIM_SHADOW_ASK);
	assert_int_equal(parse(&c, "shadow = never\n"), 0);
	assert_int_equal(c.shadow, SLIM_SHADOW_NEVER);
	assert_int_equal(parse(&c, "shadow = always\n"), 0);
	assert_int_equal(c.shadow, SLIM_SHADOW_ALWAYS);
	assert_int_equal(parse(&c, "shadow = Ask\nshadow = yes\nshadow =\n"), 3);
	assert_int_equal(c.shadow, SLIM_SHADOW_ASK);
}

static void test_bad_lines_keep_defaults(void **state)
{
	struct slim_config c;
	assert_int_equal(parse(&c,
		"listen = 300.1.1.1:5550\n"
		"listen = 1.2.3.4:99999\n"
		"reauth = sometimes\n"
		"reauth = idle:\n"
		"reauth = idle:-5\n"
		"card_removal = explode\n"
		"detached_timeout = ten\n"
		"console_timeout = -1\n"
		"state = relative/path\n"
		"no equals sign\n"
		"colour = blue\n"
		"startup =\n"
		"pam_service = ../evil\n"
		"key_dir = keys\n"
		"enroll = everyone\n"
		"transport = tls\n"
		"cgroups = yes\n"
		"weight_background = 0\n"
		"weight_everyone = 10\n"
		"memory_low = lots\n"
		"video_budget = -5\n"
		"video_budget = 100001\n"
		"video_codec = h265\n"
		"group_prefix = site\n"
		"group_prefix = /site\n"
		"server_name = a b\n"
		"server_name = a/b\n"
		"group_ttl = 1\n"
		"group_ttl = soon\n"
		"ram_per_user = 0\n"
		"existing_users_weight = -1\n"
		"etcd_ca = relative.pem\n"
		"greeter_uids = 0-10\n"
		"greeter_uids = 90-80\n"
		"greeter_uids = 80000-145536\n"
		"greeter_uids = 80000\n"
		"greeter_uids = 80000-\n"
		"greeter_uids = -5-10\n"
		"greeter_uids = 80000 - 80010\n"
		"greeter_uids = 3000000000-3000000010\n"), 40);
	struct slim_config d;
	slim_config_defaults(&d);
	assert_memory_equal(&c, &d, sizeof(c));
	/* a bad line between good ones: both good ones count */
	assert_int_equal(parse(&c, "startup = a\nreauth = 7\ngreeter = b\n"), 1);
	assert_string_equal(c.startup, "a");
	assert_string_equal(c.greeter, "b");
	assert_int_equal(c.reauth, SLIM_REAUTH_NEVER);
	/* NUL bytes and over-long lines */
	char text[3000];
	memset(text, 'x', sizeof(text));
	memcpy(text, "startup = ", 10);
	text[sizeof(text) - 1] = '\n';
	slim_config_defaults(&c);
	assert_int_equal(slim_config_parse(&c, text, sizeof(text), "t"), 1);
	assert_int_equal(slim_config_parse(&c, "startup = a\0b\n", 14, "t"), 1);
	assert_string_equal(c.startup, "slimland-session");
}

static void test_addresses(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;
	assert_true(slim_parse_address("10.0.0.1", 5550, &ss, &len));
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 5550);
	assert_true(slim_parse_address("[::1]:7000", 5550, &ss, &len));
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 7000);
	assert_true(slim_parse_address("::", 5550, &ss, &len));
	assert_false(slim_parse_address("", 1, &ss, &len));
	assert_false(slim_parse_address("host.example:1", 1, &ss, &len));
	assert_false(slim_parse_address("[::1", 1, &ss, &len));
	assert_false(slim_parse_address("1.2.3.4:", 1, &ss, &len));
	assert_false(slim_parse_address("1.2.3.4:+5", 1, &ss, &len));
}

int main(void)
{
	slim_log_init(SLIM_LOG_DEBUG, quiet);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_shipped_file),
		cmocka_unit_test(test_bad_lines_keep_defaults),
		cmocka_unit_test(test_shadow_policy),
		cmocka_unit_test(test_addresses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
