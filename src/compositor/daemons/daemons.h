/*
 * The session's daemons: programs the compositor starts for its clients
 * (a session bus, a sound server) as its own children, in the compositor's
 * cgroup class, ending with it (a compositor killed by SIGKILL too: they
 * get SIGTERM when it dies).
 *
 * No wlroots here: only processes. Nothing of the session's (server.h) or
 * of the other rooms is called from here.
 */
#ifndef SLIM_DAEMONS_H
#define SLIM_DAEMONS_H

#include <stdbool.h>
#include <sys/types.h>

struct slim_sched;

struct slim_daemon {
	const char *name;
	pid_t pid; /* 0: not started here */
	/*
	 * A process group of its own, ended as a whole: what the daemon
	 * starts (a bus's activated services) ends with it. Starting one
	 * makes the compositor its subreaper (PR_SET_CHILD_SUBREAPER): what
	 * its session orphans is its child, reaped by its SIGCHLD handler.
	 */
	bool group;
};

/*
 * Starts argv[0] from PATH, with `keep_fd` (or -1) left open across exec
 * and stdout to /dev/null; argv[0] stays its name (a string that lives as
 * long). False (said in the log, `what` first) if it could not be executed.
 */
bool slim_daemon_start(struct slim_daemon *d, const char *const argv[], int keep_fd,
	struct slim_sched *sched, const char *what);
/*
 * As slim_daemon_start, with `listen_fd` handed over the way a socket-
 * activated daemon takes it (sd_listen_fds(3): fd 3, LISTEN_FDS=1 and its
 * own LISTEN_PID). The caller keeps its copy: the socket outlives the
 * daemon, and connections wait in it while none runs.
 */
bool slim_daemon_activate(struct slim_daemon *d, const char *const argv[], int listen_fd,
	struct slim_sched *sched, const char *what);
/*
 * Ends them, the last first: SIGTERM, then SIGKILL to what has not left
 * within a second (a group: every member). Only the compositor's exit
 * calls it (its SIGCHLD handler no longer runs): they are reaped here.
 */
void slim_daemons_stop(struct slim_daemon daemons[], int n);

#endif
