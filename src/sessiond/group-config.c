/* The group's keys of slimland.conf (session-manager.md §6 and §9). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "group.h"

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

static bool parse_uint(const char *s, unsigned max, unsigned *out)
{
	char *end;
	if (*s < '0' || *s > '9') {
		return false;
	}
	unsigned long v = strtoul(s, &end, 10);
	if (*end != '\0' || v > max) {
		return false;
	}
	*out = (unsigned)v;
	return true;
}

static bool set(char *dst, size_t size, const char *value)
{
	size_t n = strlen(value);
	if (n == 0 || n >= size) {
		return false;
	}
	memcpy(dst, value, n + 1);
	return true;
}

int slim_group_config_apply(struct slim_group_config *c, const char *key, const char *value)
{
	if (strcmp(key, "etcd") == 0) {
		/* URLs, checked when the group starts (etcd.c says which one is wrong) */
		return set(c->etcd, sizeof(c->etcd), value);
	} else if (strcmp(key, "group_prefix") == 0) {
		/* a path of its own: /slimland/ and /slimland-test/ never overlap */
		size_t n = strlen(value);
		return n >= 2 && value[0] == '/' && value[n - 1] == '/' &&
			set(c->prefix, sizeof(c->prefix), value);
	} else if (strcmp(key, "server_name") == 0) {
		return slim_group_name_valid(value) && set(c->name, sizeof(c->name), value);
	} else if (strcmp(key, "group_address") == 0) {
		return strchr(value, ' ') == NULL && set(c->address, sizeof(c->address), value);
	} else if (strcmp(key, "group_ttl") == 0) {
		unsigned s;
		if (!parse_uint(value, 3600, &s) || s < 2) {
			return 0;
		}
		c->ttl_s = s;
		return 1;
	} else if (strcmp(key, "ram_per_user") == 0) {
		unsigned mb;
		if (!parse_uint(value, 1u << 20, &mb) || mb == 0) {
			return 0;
		}
		c->weights.ram_per_user_mb = mb;
		return 1;
	} else if (strcmp(key, "existing_users_weight") == 0) {
		return parse_uint(value, 100000, &c->weights.existing_users_weight);
	} else if (strcmp(key, "cpu_weight") == 0) {
		return parse_uint(value, 100000, &c->weights.cpu_weight);
	}
	return -1;
}
