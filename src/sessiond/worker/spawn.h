/*
 * Starting a managed compositor as a user: a user's session after login,
 * or a greeter for a console, as the unprivileged greeter user.
 */
#ifndef SLIM_SESSIOND_SPAWN_H
#define SLIM_SESSIOND_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>
#include "cgroup.h"

struct slim_spawn_request {
	const char *user;       /* runs as this user (uid, gid, supplementary groups) */
	/*
	 * Not 0: runs as this uid instead of the user's, with the user's gid,
	 * groups, name and home (a greeter's own uid, uid-pool.h); its log is
	 * then opened by the manager, in a directory of the manager's.
	 */
	uid_t as_uid;
	const char *as_name;    /* with as_uid: its name (USER, LOGNAME), or the user's */
	const char *slimland;   /* path of the slimland binary */
	const char *listen;     /* --listen, e.g. "0.0.0.0:0" */
	const char *startup;    /* -s: the session's first client */
	char *const *env;       /* extra NAME=VALUE entries (PAM's, the greeter's), or NULL */
	const char *cgroup;     /* e.g. "slimland.slice/user-1000.slice/session-3", or NULL */
	const struct slim_cgroup_policy *cgroups; /* its classes (NULL: the defaults) */
	const char *log_path;   /* the compositor's stderr, or NULL for /dev/null */
	bool clear;             /* --transport clear: the manager's own is (loopback benchmarks) */
	const char *video_budget; /* --video-budget, Mbit/s, or NULL for slimland's default */
	const char *video_codec;  /* --video-codec, or NULL for slimland's default */
	const char *size;       /* --size WxH (the console's), or NULL */
	bool no_audio;          /* --no-audio: a greeter has no sound */
};

struct slim_spawn_result {
	pid_t pid;
	int pidfd;               /* pidfd_open(pid): readable when it exits */
	char runtime_dir[256];   /* its XDG_RUNTIME_DIR */
	char control_path[320];  /* runtime_dir + "/slimland-control" */
};

/*
 * Forks and execs `slimland --managed --manager-uid EUID --listen L
 * [--video-budget B] [--size WxH] -s STARTUP`
 * as the user (or as_uid), in a clean environment (HOME, USER, LOGNAME, SHELL, PATH,
 * LANG if set, XDG_RUNTIME_DIR, then req->env), with XDG_RUNTIME_DIR created when missing
 * (/run/user/UID if /run/user exists, else /run/slimland/user-UID; mode 0700,
 * owned by the uid it runs as), in its own session (setsid) and, when req->cgroup is
 * set, in that cgroup's compositor class (src/cgroup/cgroup.h; with the
 * policy off, in the cgroup itself; a failure there is a warning, not an
 * error).
 */
bool slim_spawn_compositor(const struct slim_spawn_request *req, struct slim_spawn_result *out);
/*
 * A greeter's runtime directory and all in it, once the greeter is gone
 * (its user may have left symlinks there: none is followed).
 */
void slim_spawn_remove_runtime_dir(const char *dir);
/*
 * SIGKILL to every process of uid (its real or saved uid), from a child
 * that takes that uid and calls kill(-1): the kernel signals them all at
 * once, so a process forking meanwhile leaves no child behind. True once
 * none of them runs any more (a zombie has ended: only its parent's wait
 * is missing); one that takes a moment to die makes it false, for the
 * caller to ask again.
 */
bool slim_spawn_end_uid(uid_t uid);

#endif
