/*
 * A server group's registry in etcd (session-manager.md §9). Each server
 * holds a lease and, under the group's prefix, what belongs to it with
 * that lease, so that a server that dies loses it all when the lease
 * expires (a few seconds) and a server that comes back starts again from
 * nothing:
 *
 *   PREFIX servers/NAME        {"v":1, address, sessions, memory, CPU, time}
 *   PREFIX sessions/NAME/ID    {"v":1, user, console, card}
 *   PREFIX cards/HASH          {"v":1, server, session} (no lease: group-cards.c)
 *   PREFIX drain/NAME          "1" (no lease: slimlandctl drain outlives a restart)
 *
 * A watch keeps a copy of the whole prefix here, for placement and for
 * slimlandctl group. While etcd cannot be reached the server goes on with
 * its own consoles and sessions and says so once; when etcd answers again
 * it registers anew under a new lease.
 *
 * With no `etcd` in the configuration there is no group: the manager keeps
 * its state file alone, as a single server always did.
 *
 * The group is above the table: it reads the table to publish it, and the
 * table asks it where consoles go through slim_manager_elsewhere alone.
 */
#ifndef SLIM_SESSIOND_GROUP_H
#define SLIM_SESSIOND_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include "config.h"
#include "sessions.h"
#include "placement.h"
#include "slim-proto.h"

struct slim_manager;
struct slim_group;

/*
 * NULL if `config->etcd` is empty (no group) or on failure (logged). The
 * group answers the table's questions from here on (slim_manager_elsewhere).
 */
struct slim_group *slim_group_create(struct slim_manager *mgr,
		const struct slim_group_config *config);
/* The table asks it nothing more; its lease is left to expire (group.c). */
void slim_group_destroy(struct slim_group *group);

/* The manager's table changed (sessions, consoles): publish it. */
void slim_group_changed(struct slim_group *group);

/* What the copy of the registry says of a card: where its session or sessions are. */
void slim_group_card_lookup(struct slim_group *group, const uint8_t hash[32],
		struct slim_card_where *out);
/*
 * A console about to be shown a greeter: true if its login belongs on
 * another server, one with a session's room more than this one's (or this
 * one drains). False without a group, or while etcd is not answering.
 */
bool slim_group_login_server(struct slim_group *group, struct slim_wire_move *move,
		char *server, size_t size);

/* slimlandctl approve|revoke, enroll = open: the decision on `id` goes to the registry. */
void slim_group_console_decided(struct slim_group *group, const char *id);

/* slimlandctl group: the servers, their load, the sessions, the next placement. */
typedef void (*slim_group_out)(void *data, const char *line);
void slim_group_view(struct slim_group *group, slim_group_out out, void *data);
/*
 * The metrics: whether etcd answers, and each server of this server's
 * copy of the registry as placement sees it (none before it is read).
 */
struct slim_place_server;
typedef void (*slim_group_server_fn)(void *data, const struct slim_place_server *server,
		bool self);
bool slim_group_servers(struct slim_group *group, slim_group_server_fn fn, void *data);
/* slimlandctl drain|undrain NAME. False with *error if it cannot be asked. */
bool slim_group_drain(struct slim_group *group, const char *name, bool drain,
		const char **error);

/*
 * An answer from etcd to one of the group's requests, as bytes, through the
 * parsing and the handlers a real answer takes: fuzz-etcd's way in.
 */
enum slim_group_request {
	SLIM_GROUP_GRANT,
	SLIM_GROUP_CLAIM,
	SLIM_GROUP_KEEPALIVE,
	SLIM_GROUP_RANGE,
	SLIM_GROUP_WATCH, /* one message of the watch's stream */
	SLIM_GROUP_PUT,
	SLIM_GROUP_CARD_CLAIM, /* a card's claim (group-cards.c), as a login's */
};
void slim_group_answer(struct slim_group *group, enum slim_group_request kind,
		const char *text, size_t len);

#endif
