#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "slim-lines.h"
#include "slim-log.h"
#include "slim-proto.h"
#include "uid-pool.h"

#ifndef SLIMLAND_BINARY
#define SLIMLAND_BINARY "slimland"
#endif

void slim_config_defaults(struct slim_config *config)
{
	*config = (struct slim_config){
		.reauth = SLIM_REAUTH_NEVER,
		.card_removal_detach = true,
		.detached_timeout_s = 0,
		.console_timeout_s = 30,
		.max_consoles = SLIM_MAX_CONSOLES_DEFAULT,
		.greeter_uid_first = SLIM_GREETER_UIDS_FIRST,
		.greeter_uid_last = SLIM_GREETER_UIDS_LAST,
	};
	snprintf(config->listen, sizeof(config->listen), "0.0.0.0:%d", SLIM_SESSIOND_PORT);
	snprintf(config->startup, sizeof(config->startup), "slimland-session");
	snprintf(config->greeter, sizeof(config->greeter), "slimland-greeter");
	snprintf(config->greeter_user, sizeof(config->greeter_user), "slimland-greeter");
	snprintf(config->state, sizeof(config->state), "/run/slimland/state");
	snprintf(config->pam_service, sizeof(config->pam_service), "slimland");
	snprintf(config->slimland, sizeof(config->slimland), "%s", SLIMLAND_BINARY);
	snprintf(config->key_dir, sizeof(config->key_dir), "/var/lib/slimland");
	config->enroll = SLIM_ENROLL_APPROVE;
	config->transport = SLIM_SEC_DTLS;
	slim_cgroup_policy_defaults(&config->cgroups);
	slim_group_config_defaults(&config->group);
	config->video_budget = SLIM_VIDEO_BUDGET_DEFAULT;
	snprintf(config->video_codec, sizeof(config->video_codec), "auto");
}

bool slim_parse_address(const char *text, unsigned port,
		struct sockaddr_storage *out, socklen_t *out_len)
{
	char host[128];
	const char *port_text = NULL;
	size_t n = strlen(text);
	if (n == 0 || n >= sizeof(host)) {
		return false;
	}
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (!close || (close[1] != '\0' && close[1] != ':')) {
			return false;
		}
		n = (size_t)(close - text - 1);
		memcpy(host, text + 1, n);
		host[n] = '\0';
		port_text = close[1] == ':' ? close + 2 : NULL;
	} else {
		const char *colon = strchr(text, ':');
		if (colon && strchr(colon + 1, ':')) {
			/* bare IPv6: no port */
			memcpy(host, text, n + 1);
		} else if (colon) {
			n = (size_t)(colon - text);
			memcpy(host, text, n);
			host[n] = '\0';
			port_text = colon + 1;
		} else {
			memcpy(host, text, n + 1);
		}
	}
	if (port_text) {
		char *end;
		errno = 0;
		unsigned long p = strtoul(port_text, &end, 10);
		if (port_text[0] < '0' || port_text[0] > '9' || *end != '\0' || errno || p > 65535) {
			return false;
		}
		port = (unsigned)p;
	}
	memset(out, 0, sizeof(*out));
	struct sockaddr_in *in4 = (struct sockaddr_in *)out;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)out;
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		*out_len = sizeof(*in4);
		return true;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*out_len = sizeof(*in6);
		return true;
	}
	return false;
}

/*
 * metrics_listen = off, PORT (on localhost) or ADDRESS:PORT: a port is
 * always said, since the metrics have none of their own.
 */
static bool parse_metrics_listen(struct slim_config *c, const char *value)
{
	if (strcmp(value, "off") == 0) {
		c->metrics_listen[0] = '\0';
		return true;
	}
	char text[sizeof(c->metrics_listen)];
	if (value[0] >= '0' && value[0] <= '9' && strspn(value, "0123456789") == strlen(value)) {
		snprintf(text, sizeof(text), "127.0.0.1:%s", value);
	} else if (value[0] == ':') {
		snprintf(text, sizeof(text), "127.0.0.1%s", value);
	} else {
		snprintf(text, sizeof(text), "%s", value);
	}
	struct sockaddr_storage ss;
	socklen_t len;
	if (strlen(value) >= sizeof(text) - 10 || !slim_parse_address(text, 0, &ss, &len) ||
			(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
			((struct sockaddr_in6 *)&ss)->sin6_port) == 0) {
		return false;
	}
	snprintf(c->metrics_listen, sizeof(c->metrics_listen), "%s", text);
	return true;
}

static bool parse_uint(const char *s, unsigned *out)
{
	char *end;
	if (*s < '0' || *s > '9') {
		return false;
	}
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end != '\0' || errno || v > 1000000000ul) {
		return false;
	}
	*out = (unsigned)v;
	return true;
}

/* FIRST-LAST: no root, at most SLIM_GREETER_UIDS_MAX uids, none past INT32_MAX. */
static bool parse_uid_range(const char *value, uid_t *first, uid_t *last)
{
	char text[32];
	unsigned long a, b;
	size_t n = strlen(value);
	char *dash = strchr(value, '-');
	if (!dash || n >= sizeof(text)) {
		return false;
	}
	memcpy(text, value, n + 1);
	text[dash - value] = '\0';
	if (!slim_parse_ulong(text, INT32_MAX, &a) ||
			!slim_parse_ulong(text + (dash - value) + 1, INT32_MAX, &b) ||
			a == 0 || b < a || b - a >= SLIM_GREETER_UIDS_MAX) {
		return false;
	}
	*first = (uid_t)a;
	*last = (uid_t)b;
	return true;
}

static bool set_string(char *dst, size_t size, const char *value)
{
	size_t n = strlen(value);
	if (n == 0 || n >= size) {
		return false;
	}
	memcpy(dst, value, n + 1);
	return true;
}

void slim_place_weights_defaults(struct slim_place_weights *w)
{
	*w = (struct slim_place_weights){
		.ram_per_user_mb = 200,
		.existing_users_weight = 100,
		.cpu_weight = 100,
	};
}

void slim_group_config_defaults(struct slim_group_config *config)
{
	*config = (struct slim_group_config){ .ttl_s = 5 };
	snprintf(config->prefix, sizeof(config->prefix), "/slimland/");
	slim_place_weights_defaults(&config->weights);
}

bool slim_group_name_valid(const char *name)
{
	size_t n = strlen(name);
	return n > 0 && n < 64 && strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		"abcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* A server group's keys (session-manager.md §9): as apply(), -1 if not one of them. */
static int apply_group(struct slim_group_config *c, const char *key, const char *value)
{
	unsigned n;
	if (strcmp(key, "etcd") == 0) {
		/* URLs, checked when the group starts (etcd.c says which one is wrong) */
		return set_string(c->etcd, sizeof(c->etcd), value);
	} else if (strcmp(key, "etcd_ca") == 0) {
		return value[0] == '/' && set_string(c->etcd_ca, sizeof(c->etcd_ca), value);
	} else if (strcmp(key, "etcd_cert") == 0) {
		return value[0] == '/' && set_string(c->etcd_cert, sizeof(c->etcd_cert), value);
	} else if (strcmp(key, "etcd_key") == 0) {
		return value[0] == '/' && set_string(c->etcd_key, sizeof(c->etcd_key), value);
	} else if (strcmp(key, "group_prefix") == 0) {
		/* a path of its own: /slimland/ and /slimland-test/ never overlap */
		size_t len = strlen(value);
		return len >= 2 && value[0] == '/' && value[len - 1] == '/' &&
			set_string(c->prefix, sizeof(c->prefix), value);
	} else if (strcmp(key, "server_name") == 0) {
		return slim_group_name_valid(value) && set_string(c->name, sizeof(c->name), value);
	} else if (strcmp(key, "group_address") == 0) {
		return strchr(value, ' ') == NULL &&
			set_string(c->address, sizeof(c->address), value);
	} else if (strcmp(key, "group_ttl") == 0) {
		if (!parse_uint(value, &n) || n < 2 || n > 3600) {
			return 0;
		}
		c->ttl_s = n;
		return 1;
	} else if (strcmp(key, "ram_per_user") == 0) {
		if (!parse_uint(value, &n) || n == 0 || n > (1u << 20)) {
			return 0;
		}
		c->weights.ram_per_user_mb = n;
		return 1;
	} else if (strcmp(key, "existing_users_weight") == 0) {
		return parse_uint(value, &c->weights.existing_users_weight);
	} else if (strcmp(key, "cpu_weight") == 0) {
		return parse_uint(value, &c->weights.cpu_weight);
	}
	return -1;
}

/* Applies one key; false (and nothing changed) if the value is not one it takes. */
static bool apply(struct slim_config *c, const char *key, const char *value, const char **why)
{
	*why = "bad value";
	if (strcmp(key, "listen") == 0) {
		struct sockaddr_storage ss;
		socklen_t len;
		return slim_parse_address(value, SLIM_SESSIOND_PORT, &ss, &len) &&
			set_string(c->listen, sizeof(c->listen), value);
	} else if (strcmp(key, "startup") == 0) {
		return set_string(c->startup, sizeof(c->startup), value);
	} else if (strcmp(key, "greeter") == 0) {
		return set_string(c->greeter, sizeof(c->greeter), value);
	} else if (strcmp(key, "greeter_user") == 0) {
		return strchr(value, ' ') == NULL &&
			set_string(c->greeter_user, sizeof(c->greeter_user), value);
	} else if (strcmp(key, "greeter_uids") == 0) {
		return parse_uid_range(value, &c->greeter_uid_first, &c->greeter_uid_last);
	} else if (strcmp(key, "reauth") == 0) {
		unsigned secs;
		if (strcmp(value, "never") == 0) {
			c->reauth = SLIM_REAUTH_NEVER;
		} else if (strcmp(value, "always") == 0) {
			c->reauth = SLIM_REAUTH_ALWAYS;
		} else if (strncmp(value, "idle:", 5) == 0 && parse_uint(value + 5, &secs)) {
			c->reauth = SLIM_REAUTH_IDLE;
			c->reauth_idle_s = secs;
		} else {
			return false;
		}
		return true;
	} else if (strcmp(key, "card_removal") == 0) {
		if (strcmp(value, "detach") == 0) {
			c->card_removal_detach = true;
		} else if (strcmp(value, "keep") == 0) {
			c->card_removal_detach = false;
		} else {
			return false;
		}
		return true;
	} else if (strcmp(key, "shadow") == 0) {
		static const char *const words[] = {
			[SLIM_SHADOW_ASK] = "ask", [SLIM_SHADOW_ALWAYS] = "always",
			[SLIM_SHADOW_NEVER] = "never",
		};
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
			if (strcmp(value, words[i]) == 0) {
				c->shadow = (enum slim_shadow_policy)i;
				return true;
			}
		}
		return false;
	} else if (strcmp(key, "detached_timeout") == 0) {
		return parse_uint(value, &c->detached_timeout_s);
	} else if (strcmp(key, "console_timeout") == 0) {
		return parse_uint(value, &c->console_timeout_s);
	} else if (strcmp(key, "max_consoles") == 0) {
		unsigned n;
		if (!parse_uint(value, &n) || n == 0 || n > SLIM_GREETER_UIDS_MAX) {
			return false;
		}
		c->max_consoles = n;
		return true;
	} else if (strcmp(key, "state") == 0) {
		if (value[0] != '/' || !set_string(c->state, sizeof(c->state), value)) {
			return false;
		}
		c->state_set = true;
		return true;
	} else if (strcmp(key, "pam_service") == 0) {
		return strchr(value, '/') == NULL &&
			set_string(c->pam_service, sizeof(c->pam_service), value);
	} else if (strcmp(key, "slimland") == 0) {
		return set_string(c->slimland, sizeof(c->slimland), value);
	} else if (strcmp(key, "key_dir") == 0) {
		return value[0] == '/' && set_string(c->key_dir, sizeof(c->key_dir), value);
	} else if (strcmp(key, "enroll") == 0) {
		if (strcmp(value, "approve") == 0) {
			c->enroll = SLIM_ENROLL_APPROVE;
		} else if (strcmp(value, "open") == 0) {
			c->enroll = SLIM_ENROLL_OPEN;
		} else if (strcmp(value, "closed") == 0) {
			c->enroll = SLIM_ENROLL_CLOSED;
		} else {
			return false;
		}
		return true;
	} else if (strcmp(key, "transport") == 0) {
		return slim_sec_mode_parse(value, &c->transport);
	} else if (strcmp(key, "video_budget") == 0) {
		unsigned mbit;
		if (!parse_uint(value, &mbit) || mbit > SLIM_VIDEO_BUDGET_MAX) {
			return false;
		}
		c->video_budget = mbit;
		return true;
	} else if (strcmp(key, "metrics_listen") == 0) {
		return parse_metrics_listen(c, value);
	} else if (strcmp(key, "video_codec") == 0) {
		if (strcmp(value, "auto") != 0 && strcmp(value, "software") != 0 &&
				strcmp(value, "vaapi") != 0 && strcmp(value, "none") != 0) {
			return false;
		}
		snprintf(c->video_codec, sizeof(c->video_codec), "%s", value);
		return true;
	}
	int group = apply_group(&c->group, key, value);
	if (group >= 0) {
		return group == 1;
	}
	int policy = slim_cgroup_policy_apply(&c->cgroups, key, value);
	if (policy >= 0) {
		return policy == 1;
	}
	*why = "unknown key";
	return false;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t') {
		s++;
	}
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) {
		s[--n] = '\0';
	}
	return s;
}

int slim_config_parse(struct slim_config *config, const char *text, size_t len,
		const char *name)
{
	int bad = 0;
	unsigned lineno = 0;
	size_t pos = 0;
	char line[1024];
	const char *why;
	while (slim_text_line(text, len, &pos, line, sizeof(line), &why, NULL)) {
		lineno++;
		const char *key = NULL;
		if (!why) {
			line[strcspn(line, "#")] = '\0';
			char *s = trim(line);
			char *eq = strchr(s, '=');
			if (*s && !eq) {
				why = "expected key = value";
			} else if (*s) {
				*eq = '\0';
				key = trim(s);
				if (apply(config, key, trim(eq + 1), &why)) {
					why = NULL;
				}
			}
		}
		/* a local file: every bad line is worth a line of log, no rate limit */
		if (why && key) {
			slim_log(SLIM_LOG_ERROR, "%s:%u: %s: %s; the default is kept",
				name, lineno, key, why);
		} else if (why) {
			slim_log(SLIM_LOG_ERROR, "%s:%u: %s; the default is kept", name, lineno, why);
		}
		bad += why != NULL;
	}
	return bad;
}

int slim_config_check(const struct slim_config *config, const char *name)
{
	int bad = 0;
	struct sockaddr_storage ss;
	socklen_t len;
	if (config->transport == SLIM_SEC_CLEAR &&
			slim_parse_address(config->listen, SLIM_SESSIOND_PORT, &ss, &len) &&
			!slim_sec_clear_allowed((struct sockaddr *)&ss)) {
		slim_log(SLIM_LOG_ERROR, "%s: transport = clear listens on loopback only, not %s",
			name, config->listen);
		bad++;
	}
	if (!getpwnam(config->greeter_user)) {
		slim_log(SLIM_LOG_ERROR, "%s: greeter_user %s: no such user", name,
			config->greeter_user);
		bad++;
	}
	return bad;
}

int slim_config_load(struct slim_config *config, const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		slim_log(SLIM_LOG_ERROR, "config %s: %s", path, strerror(errno));
		return -1;
	}
	char *text = NULL;
	size_t size = 0, len = 0;
	int too_large = 0;
	for (;;) {
		if (len == size) {
			if (size >= (1u << 20)) {
				slim_log(SLIM_LOG_ERROR, "config %s: larger than 1 MiB", path);
				too_large = 1;
				break;
			}
			size = size ? size * 2 : 4096;
			char *grown = realloc(text, size);
			if (!grown) {
				break;
			}
			text = grown;
		}
		size_t n = fread(text + len, 1, size - len, f);
		if (n == 0) {
			break;
		}
		len += n;
	}
	int bad = ferror(f) ? -1 : 0;
	fclose(f);
	if (bad == 0 && text) {
		bad = slim_config_parse(config, text, len, path) + too_large;
	}
	free(text);
	return bad;
}
