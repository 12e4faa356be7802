/*
 * The cgroup tree of slimland sessions, on cgroup v2 or v1, shared by the
 * session manager (which builds a session's part of the tree as root and
 * delegates it to the user) and the compositor (which, as the user, moves
 * its clients between the session's classes):
 *
 *   slimland.slice/                    the manager's (slimland.conf's
 *                                      cgroup_slice)
 *     user-UID.slice/                  one per user, equal weights; idle
 *                                      while none of the user's sessions
 *                                      has a console (`detached = idle`)
 *       session-N/                     the user's, delegated
 *         compositor/                  the compositor itself
 *         interactive/                 the client with keyboard focus
 *         background/                  the other clients
 *         hidden/                      every client while no console shows
 *                                      the session
 *
 * v2: one hierarchy, cpu.weight, cpu.idle, memory.low, the cpu and memory
 * controllers enabled down the tree. v1: the same tree in each of the cpu,
 * cpuacct and memory hierarchies mounted, cpu.shares (weight × 1024 / 100),
 * cpu.idle, memory.soft_limit_in_bytes. No wlroots, no Wayland here.
 */
#ifndef SLIM_CGROUP_H
#define SLIM_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum slim_cgroup_class {
	SLIM_CGROUP_COMPOSITOR,
	SLIM_CGROUP_INTERACTIVE,
	SLIM_CGROUP_BACKGROUND,
	SLIM_CGROUP_HIDDEN,
	SLIM_CGROUP_CLASSES,
};

const char *slim_cgroup_class_name(enum slim_cgroup_class class);

/* The knobs, from slimland.conf (§6 of protocol/session-manager.md). */
struct slim_cgroup_policy {
	bool enabled;
	unsigned weight[SLIM_CGROUP_CLASSES]; /* cpu.weight, 1 to 10000 (100: the default) */
	bool hidden_idle;       /* hidden gets cpu.idle where the kernel has it */
	uint64_t memory_low;    /* v2 memory.low of compositor and interactive, bytes */
	uint64_t background_soft_limit; /* v1 memory.soft_limit_in_bytes of background, hidden */
	bool detached_idle;     /* a user none of whose sessions has a console: cpu.idle */
	char slice[64];         /* the top of the manager's tree: "slimland.slice" */
};

void slim_cgroup_policy_defaults(struct slim_cgroup_policy *policy);
/*
 * One slimland.conf key of the policy: cgroups = on|off, weight_CLASS = 1
 * to 10000, hidden = idle|weight, detached = idle|fair, memory_low and
 * background_soft_limit = MiB, cgroup_slice = a directory's name (letters,
 * digits, '.', '_', '-', not starting with '.'). 1 applied, 0 a bad value
 * (nothing changed), -1 not a key of the policy.
 */
int slim_cgroup_policy_apply(struct slim_cgroup_policy *policy, const char *key,
		const char *value);

#define SLIM_CGROUP_MAX_HIER 3
#define SLIM_CGROUP_PATH 256

/*
 * "slimland.slice/user-UID.slice", and with "/session-ID" (id not 0), below
 * the base slim_cgroup_manager_base set (none: the hierarchy's root), in
 * the slice it was given (none: slimland.slice).
 */
void slim_cgroup_path(char *out, size_t size, uid_t uid, uint32_t session_id);

/* Where the hierarchies are mounted. */
struct slim_cgroup_fs {
	int version;    /* 0: none usable, 1 or 2 */
	size_t n;       /* hierarchies: v2 one; v1 cpu, cpuacct (when apart), memory */
	char mount[SLIM_CGROUP_MAX_HIER][128];
	char controllers[SLIM_CGROUP_MAX_HIER][32]; /* v1: "cpu", "cpuacct", "memory" */
};

/*
 * Finds the hierarchies under `root` (/sys/fs/cgroup): v2 where the
 * unified hierarchy is mounted there with the cpu controller, else the v1
 * cpu hierarchy (with cpuacct and memory when mounted). False, with why,
 * when there is neither.
 */
bool slim_cgroup_fs_detect(struct slim_cgroup_fs *fs, const char *root, char *why, size_t why_len);

/*
 * The manager at its start: where its tree goes, `slice` its top (the
 * policy's, e.g. "slimland.slice"). Run by systemd as a
 * service (v2, its cgroup delegated with Delegate=yes): inside that
 * cgroup, the manager itself moved to a child "manager" (a v2 cgroup
 * whose children have controllers holds no process). Elsewhere: at the
 * root. Says where in `where`.
 */
void slim_cgroup_manager_base(const struct slim_cgroup_fs *fs, const char *slice,
		char *where, size_t where_len);

/*
 * The manager, as root: creates `rel` (e.g. "slimland.slice/user-1000.slice/
 * session-3") and its classes in every hierarchy with the policy's knobs,
 * then hands session-N and everything below it to uid:gid (the policy
 * off: rel alone, no classes). False, with why, when the session cannot
 * be prioritised (it then runs where it is).
 */
bool slim_cgroup_session_create(const struct slim_cgroup_fs *fs,
		const struct slim_cgroup_policy *policy, const char *rel, uid_t uid, gid_t gid,
		char *why, size_t why_len);
/* Removes the session's cgroups once empty (a no-op for any still in use). */
void slim_cgroup_session_remove(const struct slim_cgroup_fs *fs, const char *rel);
/* The manager: `rel` a user slice, idle (cpu.idle, or the least weight) or not. */
bool slim_cgroup_set_idle(const struct slim_cgroup_fs *fs, const char *rel, bool idle);

/*
 * The cgroup.procs files of `rel`'s class (SLIM_CGROUP_CLASSES: of rel
 * itself) in every hierarchy, into procs (at most SLIM_CGROUP_MAX_HIER);
 * how many.
 */
size_t slim_cgroup_procs_paths(const struct slim_cgroup_fs *fs, const char *rel,
		enum slim_cgroup_class class, char procs[][SLIM_CGROUP_PATH + 32]);

/*
 * Moves `pid` (its whole thread group) into the class in every hierarchy.
 * 0, or an errno: ESRCH for a process that is gone, others for the tree.
 */
int slim_cgroup_move(const struct slim_cgroup_fs *fs, const char *rel,
		enum slim_cgroup_class class, pid_t pid);

/*
 * Up to `max` pids of processes in the class (into pids) and the CPU its
 * processes used, µs (from cpu.stat or cpuacct.usage). How many pids there
 * are, or -1 when the class is not there.
 */
long slim_cgroup_class_read(const struct slim_cgroup_fs *fs, const char *rel,
		enum slim_cgroup_class class, pid_t *pids, size_t max, uint64_t *cpu_us);

/* The memory `rel` and everything below it use (memory.current, v1 usage_in_bytes). */
bool slim_cgroup_memory_read(const struct slim_cgroup_fs *fs, const char *rel, uint64_t *bytes);
/*
 * The relative path of the cgroup process `pid` is in, in the hierarchy
 * that decides CPU (v2's, or v1's cpu), into rel. False if none.
 */
bool slim_cgroup_of(const struct slim_cgroup_fs *fs, pid_t pid, char *rel, size_t rel_len);

/*
 * The processes descending from `pid` (not pid itself), from
 * /proc/PID/task/TID/children, up to max; how many.
 */
size_t slim_cgroup_descendants(pid_t pid, pid_t *out, size_t max);

#endif
