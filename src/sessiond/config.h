/*
 * slimland.conf (session-manager.md §6): `key = value` lines and `#`
 * comments. Every value lives in fixed-size fields, so that a config is a
 * plain value to copy, compare and throw away, with nothing to free.
 */
#ifndef SLIM_SESSIOND_CONFIG_H
#define SLIM_SESSIOND_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include "cgroup.h"
#include "group.h"
#include "slim-secure.h"

#define SLIM_CONFIG_DEFAULT_PATH "/etc/slimland/slimland.conf"
/* Mbit/s: a fifth of a 1 Gbit/s LAN for one console's video (slimland's default too) */
#define SLIM_VIDEO_BUDGET_DEFAULT 200
#define SLIM_VIDEO_BUDGET_MAX 100000

/* Which consoles may connect (session-manager.md §7). */
enum slim_enroll_mode {
	SLIM_ENROLL_APPROVE, /* a new console waits for `slimlandctl approve` */
	SLIM_ENROLL_OPEN,    /* every console that proves a key is enrolled */
	SLIM_ENROLL_CLOSED,  /* no new console */
};

enum slim_reauth {
	SLIM_REAUTH_NEVER,
	SLIM_REAUTH_ALWAYS,
	SLIM_REAUTH_IDLE, /* after reauth_idle_s seconds without a console */
};

struct slim_config {
	char listen[128];
	char startup[512];
	char greeter[512];
	char greeter_user[64];
	uid_t greeter_uid_first, greeter_uid_last; /* greeter_uids: a uid per greeter (uid-pool.h) */
	enum slim_reauth reauth;
	unsigned reauth_idle_s;
	bool card_removal_detach; /* card_removal = detach (true) or keep */
	unsigned detached_timeout_s; /* 0: never */
	unsigned console_timeout_s; /* a silent console is forgotten; 0: never */
	char state[256];
	bool state_set; /* given in the file: --state and --run-dir do not override it */
	char pam_service[64];
	/* the host key, the card-token key and the enrolled consoles live here */
	char key_dir[256];
	enum slim_enroll_mode enroll;
	enum slim_sec_mode transport; /* clear: loopback `listen` only (benchmarks) */
	struct slim_cgroup_policy cgroups; /* the classes of a session's clients */
	unsigned video_budget; /* Mbit/s a session's video may take (slimland --video-budget) */
	struct slim_group_config group; /* etcd = ...: a server group (group.h) */
	/* Not in §6's table, for tests and unusual installs: the compositor binary. */
	char slimland[256];
};

void slim_config_defaults(struct slim_config *config);
/*
 * Applies `len` bytes of config text. A bad line is reported with `name`
 * and its number, and the value it would have set keeps its previous value.
 * Returns the number of bad lines.
 */
int slim_config_parse(struct slim_config *config, const char *text, size_t len,
		const char *name);
/* Reads and applies a file. False if it cannot be read (the defaults stay). */
bool slim_config_load(struct slim_config *config, const char *path);

/* ADDRESS[:PORT], IPv6 as [ADDR]:PORT or bare; the port defaults to `port`. */
bool slim_parse_address(const char *text, unsigned port,
		struct sockaddr_storage *out, socklen_t *out_len);

#endif
