/*
 * Where a new session goes in a group: the server with the most room by
 * what each reports in its lease (sessions, memory, CPU), weighted as
 * ThinLinc's `ram_per_user` and `existing_users_weight` weigh them, or the
 * server of the user's previous session while it has room. Pure: no etcd,
 * no clock, so that tests try it on any group.
 */
#ifndef SLIM_SESSIOND_PLACEMENT_H
#define SLIM_SESSIOND_PLACEMENT_H

#include <stdbool.h>
#include "config.h"

struct slim_place_server {
	const char *name;
	unsigned sessions;
	unsigned mem_avail_mb;
	unsigned cpus;
	unsigned load_pct; /* the 1-minute load average × 100 */
	bool drain;        /* slimlandctl drain: no new sessions */
};


/*
 * A server's room in sessions × 100: how many more sessions its free
 * memory holds, plus its idle CPUs' share, less what its sessions weigh.
 */
long slim_place_room(const struct slim_place_server *s, const struct slim_place_weights *w);

/*
 * The index of the server a new session of a user goes to, or -1 if every
 * server is draining. `previous` (NULL: none) is where the user's last
 * session ran: kept while it is not draining and has room for one more.
 * Ties go to fewer sessions, then to the first name.
 */
int slim_place(const struct slim_place_server *servers, int n,
		const struct slim_place_weights *w, const char *previous);

#endif
