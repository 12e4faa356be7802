/* The daemon's side effects: the real PAM, spawning, UDP and state file. */
#ifndef SLIM_SESSIOND_BACKEND_H
#define SLIM_SESSIOND_BACKEND_H

#include "cgroup.h"
#include "sessions.h"

struct slim_udp;

struct slim_backend {
	struct slim_manager *mgr; /* set once created: changes before it are not written */
	struct slim_group *group; /* told of every change (NULL: no group) */
	struct slim_udp *udp;
	char state_path[256];
	/* the cgroup hierarchies (cgroup.h), found at the first need */
	struct slim_cgroup_fs cgroup_fs;
	bool cgroup_checked, have_cgroups, idle_failed;
	bool userdb_unread; /* said once: greeters' records are not resolved */
};

extern const struct slim_manager_ops slim_backend_ops;

#endif
