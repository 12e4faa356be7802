/*
 * The compositor's end of the cgroup policy (src/cgroup/cgroup.h): it is
 * the one party that knows, without trusting any client, which program
 * the user is talking to, since it delivers the input and owns the focus.
 *
 *   the focused client and its descendants      interactive
 *   every other client                          background
 *   every client while no console shows us      hidden
 *   Xwayland (it draws for every X11 client)     compositor
 *
 * The session manager built the classes and handed them to the user; this
 * only moves processes, found by the Wayland clients' peer credentials.
 * A process forked later starts in its parent's class (the kernel's rule),
 * and goes with it at the next move. No wlroots here.
 */
#ifndef SLIM_SCHED_H
#define SLIM_SCHED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct slim_sched_stats {
	uint64_t moves;        /* processes moved */
	uint64_t last_us;      /* the last focus change or attach, all its moves */
	uint64_t max_us;
};

/*
 * The policy of the session whose compositor class this process is in,
 * under `root` (/sys/fs/cgroup). Always an object: without a tree to move
 * clients in (a standalone session, no cgroups, no permission) it says so
 * in one log line and does nothing.
 */
struct slim_sched *slim_sched_create(const char *root);
void slim_sched_destroy(struct slim_sched *sched);
bool slim_sched_enabled(const struct slim_sched *sched);

/* A new client: background, or hidden while detached. */
void slim_sched_client(struct slim_sched *sched, pid_t pid);
/*
 * Keyboard focus moved to `pid`'s client (0: to nobody), and a console
 * attached or the last one went: noted here, done by slim_sched_apply.
 * A move costs a write to the cgroup file system per hierarchy, and each
 * waits for the kernel (a console's attach took 18 ms on cgroup v1): the
 * compositor sends the frame the user waits for first, then applies.
 */
void slim_sched_focus(struct slim_sched *sched, pid_t pid);
void slim_sched_attached(struct slim_sched *sched, bool attached);
/* Whether slim_sched_apply has anything to move. */
bool slim_sched_pending(const struct slim_sched *sched);
void slim_sched_apply(struct slim_sched *sched);
/*
 * A process that works for every client, as the compositor does (Xwayland,
 * drawing every X11 window): into the compositor's class, whatever has the
 * focus or shows us. Its clients are classed as any others.
 */
void slim_sched_server(struct slim_sched *sched, pid_t pid);
/*
 * In a child the compositor forked, before exec: into the class a new
 * client gets, so that what it starts never runs as the compositor.
 */
void slim_sched_child(const struct slim_sched *sched);
const struct slim_sched_stats *slim_sched_stats(const struct slim_sched *sched);

#endif
