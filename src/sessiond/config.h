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
#include "slim-secure.h"

#define SLIM_CONFIG_DEFAULT_PATH "/etc/slimland/slimland.conf"
/* Mbit/s: a fifth of a 1 Gbit/s LAN for one console's video (slimland's default too) */
#define SLIM_VIDEO_BUDGET_DEFAULT 200
#define SLIM_VIDEO_BUDGET_MAX 100000
/*
 * Consoles in the table at most (max_consoles): a bound on what console
 * ids, each of which may start a greeter, can cost; enough for a floor of
 * desks. A console past it is not answered until one is forgotten.
 */
#define SLIM_MAX_CONSOLES_DEFAULT 2000

/* Which consoles may connect (session-manager.md §7). */
enum slim_enroll_mode {
	SLIM_ENROLL_APPROVE, /* a new console waits for `slimlandctl approve` */
	SLIM_ENROLL_OPEN,    /* every console that proves a key is enrolled */
	SLIM_ENROLL_CLOSED,  /* no new console */
};

/* shadow = ask|always|never: whether a console may watch a session, and who says yes */
enum slim_shadow_policy {
	SLIM_SHADOW_ASK,    /* the session's user, in a question on their screen */
	SLIM_SHADOW_ALWAYS, /* the policy: the user is not asked (the bar still shows) */
	SLIM_SHADOW_NEVER,
};

enum slim_reauth {
	SLIM_REAUTH_NEVER,
	SLIM_REAUTH_ALWAYS,
	SLIM_REAUTH_IDLE, /* after reauth_idle_s seconds without a console */
};

/*
 * A server group's part (group.h): where its registry is, this server's
 * name and lease, and how placement weighs a server's room (placement.h).
 */
struct slim_place_weights {
	unsigned ram_per_user_mb;      /* what a session is expected to take */
	unsigned existing_users_weight; /* per cent of a session's room each one costs */
	unsigned cpu_weight;           /* per cent of a session's room an idle CPU adds */
};

struct slim_group_config {
	char etcd[512];    /* endpoints, comma-separated; "": no group */
	/* https: the members' CA, this server's certificate and key (etcd.h) */
	char etcd_ca[256], etcd_cert[256], etcd_key[256];
	char prefix[64];   /* the registry's keys, e.g. /slimland/ */
	char name[64];     /* this server's name; "": its host name */
	char address[128]; /* where consoles reach this server; "": `listen` */
	unsigned ttl_s;    /* its lease */
	struct slim_place_weights weights;
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
	unsigned max_consoles; /* the console table's bound: each console may start a greeter */
	enum slim_shadow_policy shadow;
	char state[256];
	bool state_set; /* given in the file: --state and --run-dir do not override it */
	char pam_service[64];
	/* the host key, the card-token key and the enrolled consoles live here */
	char key_dir[256];
	enum slim_enroll_mode enroll;
	enum slim_sec_mode transport; /* clear: loopback `listen` only (benchmarks) */
	struct slim_cgroup_policy cgroups; /* the classes of a session's clients */
	unsigned video_budget; /* Mbit/s a session's video may take (slimland --video-budget) */
	char video_codec[16];  /* slimland --video-codec: auto, software, vaapi or none */
	struct slim_group_config group; /* etcd = ...: a server group (group.h) */
	/* Prometheus metrics (metrics/): ADDRESS:PORT; "": off */
	char metrics_listen[128];
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
/*
 * Reads and applies a file. Returns the number of bad lines, or -1 if it
 * cannot be read (the defaults stay).
 */
int slim_config_load(struct slim_config *config, const char *path);
/*
 * What no single line shows but would stop the manager: a clear transport
 * beyond loopback, a greeter_user the user database lacks. Each is logged
 * with `name`; returns how many.
 */
int slim_config_check(const struct slim_config *config, const char *name);

/* ADDRESS[:PORT], IPv6 as [ADDR]:PORT or bare; the port defaults to `port`. */
bool slim_parse_address(const char *text, unsigned port,
		struct sockaddr_storage *out, socklen_t *out_len);

void slim_place_weights_defaults(struct slim_place_weights *w);
void slim_group_config_defaults(struct slim_group_config *config);
/* A server's name: letters, digits, `.`, `_` and `-`, at most 63. */
bool slim_group_name_valid(const char *name);

#endif
