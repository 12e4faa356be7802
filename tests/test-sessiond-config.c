/* slimland.conf (session-manager.md §6): values, defaults, bad lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
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
	assert_int_equal(c.max_consoles, SLIM_MAX_CONSOLES_DEFAULT);
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
		"max_consoles = 5000\n"
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
	assert_int_equal(c.max_consoles, 5000);
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
		"max_consoles = 0\n"
		"max_consoles = 65537\n"
		"max_consoles = many\n"
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
		"greeter_uids = 3000000000-3000000010\n"), 43);
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

/* metrics_listen: off by default, a port alone on localhost, always a port. */
static void test_metrics_listen(void **state)
{
	struct slim_config c;
	slim_config_defaults(&c);
	assert_string_equal(c.metrics_listen, "");
	static const char *const good[][2] = {
		{ "9469", "127.0.0.1:9469" },
		{ ":9100", "127.0.0.1:9100" },
		{ "10.0.0.5:9100", "10.0.0.5:9100" },
		{ "[::1]:9100", "[::1]:9100" },
		{ "off", "" },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char line[128];
		snprintf(line, sizeof(line), "metrics_listen = %s\n", good[i][0]);
		assert_int_equal(parse(&c, line), 0);
		assert_string_equal(c.metrics_listen, good[i][1]);
	}
	assert_int_equal(parse(&c,
		"metrics_listen = 9469x\n"
		"metrics_listen = localhost:9100\n"
		"metrics_listen = 127.0.0.1\n"
		"metrics_listen = 99999\n"
		"metrics_listen = 10.0.0.5:0\n"
		"metrics_listen = 0\n"
		"metrics_listen = ::1\n"), 7);
	assert_string_equal(c.metrics_listen, "");
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

/* the slimland-sessiond binary (argv[1]) */
static const char *sessiond;

/*
 * `slimland-sessiond --check-config` on a file with TEXT: its output into
 * `out`, its exit status returned. --run-dir points where nothing may appear.
 */
static int check_config(const char *dir, const char *text, char *out, size_t size)
{
	char path[300], cmd[1200];
	snprintf(path, sizeof(path), "%s/slimland.conf", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "'%s' --run-dir '%s/run' --check-config '%s' 2>&1",
		sessiond, dir, path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = fread(out, 1, size - 1, p);
	out[n] = '\0';
	int status = pclose(p);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* --check-config names each problem by file and line, exits 1, starts nothing. */
static void test_check_config(void **state)
{
	if (!sessiond) {
		skip();
	}
	char dir[] = "/tmp/slimtest-check-config-XXXXXX", out[4096], want[512], keys[320];
	assert_non_null(mkdtemp(dir));
	snprintf(keys, sizeof(keys), "key_dir = %s/keys\n", dir);
	char text[1024];
	snprintf(text, sizeof(text),
		"# a comment, and a good line\n"
		"listen = 0.0.0.0:5550\n"
		"reauth = sometimes\n"
		"no equals sign\n"
		"colour = blue\n"
		"transport = clear\n"
		"greeter_user = slimtest-nobody-at-all\n"
		"%s", keys);
	assert_int_equal(check_config(dir, text, out, sizeof(out)), 1);
	const char *lines[] = {
		"/slimland.conf:3: reauth: bad value; the default is kept\n",
		"/slimland.conf:4: expected key = value; the default is kept\n",
		"/slimland.conf:5: colour: unknown key; the default is kept\n",
		"/slimland.conf: transport = clear listens on loopback only, not 0.0.0.0:5550\n",
		"/slimland.conf: greeter_user slimtest-nobody-at-all: no such user\n",
	};
	size_t total = 0;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		snprintf(want, sizeof(want), "%s%s", dir, lines[i]);
		if (!strstr(out, want)) {
			fail_msg("missing \"%s\" in:\n%s", want, out);
		}
		total += strlen(want);
	}
	/* nothing but those lines */
	assert_int_equal(strlen(out), total);

	/* started nothing: no run directory, no keys */
	struct stat st;
	char path[400];
	snprintf(path, sizeof(path), "%s/run", dir);
	assert_int_not_equal(stat(path, &st), 0);
	snprintf(path, sizeof(path), "%s/keys", dir);
	assert_int_not_equal(stat(path, &st), 0);

	/* a good file: 0, and says so */
	snprintf(text, sizeof(text), "listen = 127.0.0.1:5550\ntransport = clear\n"
		"greeter_user = root\n%s", keys);
	assert_int_equal(check_config(dir, text, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/slimland.conf: fine\n", dir);
	assert_string_equal(out, want);

	/* the shipped file, but for its greeter user (this machine may lack it) */
	char shipped[8192];
	FILE *f = fopen(SLIM_SHIPPED_CONF, "r");
	assert_non_null(f);
	size_t n = fread(shipped, 1, sizeof(shipped) - 64, f);
	fclose(f);
	snprintf(shipped + n, sizeof(shipped) - n, "\ngreeter_user = root\n");
	assert_int_equal(check_config(dir, shipped, out, sizeof(out)), 0);

	/* a file that is not there */
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "'%s' --check-config %s/absent.conf 2>/dev/null", sessiond, dir);
	int status = system(cmd);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);

	snprintf(path, sizeof(path), "%s/slimland.conf", dir);
	unlink(path);
	rmdir(dir);
}

int main(int argc, char *argv[])
{
	sessiond = argc > 1 ? argv[1] : NULL;
	slim_log_init(SLIM_LOG_DEBUG, quiet);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_metrics_listen),
		cmocka_unit_test(test_shipped_file),
		cmocka_unit_test(test_bad_lines_keep_defaults),
		cmocka_unit_test(test_shadow_policy),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_check_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
