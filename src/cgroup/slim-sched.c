/*
 * The compositor's end of the cgroup policy: see slim-sched.h. The kernel's
 * cgroup membership is the only state: nothing here lists clients.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cgroup.h"
#include "slim-sched.h"
#include "slim-log.h"

/* a client's process tree, at most: a terminal running a build is large */
#define MAX_TREE 1024

struct slim_sched {
	struct slim_cgroup_fs fs;
	char rel[SLIM_CGROUP_PATH]; /* the session's cgroup, relative to each mount */
	bool enabled;
	bool attached; /* what the classes say now */
	pid_t focused;
	bool want_attached; /* what slim_sched_apply will make them say */
	pid_t want_focused;
	/* what slim_sched_child writes to, made ready before any fork */
	char child_procs[2][SLIM_CGROUP_MAX_HIER][SLIM_CGROUP_PATH + 32];
	size_t n_child_procs;
	uint64_t logged; /* a bit per errno (63: any above): each cause is said once */
	struct slim_sched_stats stats;
	pid_t tree[MAX_TREE];
};

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

struct slim_sched *slim_sched_create(const char *root)
{
	struct slim_sched *s = calloc(1, sizeof(*s));
	if (!s) {
		return NULL;
	}
	char why[256], own[SLIM_CGROUP_PATH];
	if (!slim_cgroup_fs_detect(&s->fs, root, why, sizeof(why))) {
		slim_log(SLIM_LOG_INFO, "cgroups: %s: clients run unprioritised", why);
		return s;
	}
	/* .../session-N/compositor, put there by the session manager */
	char *slash;
	if (!slim_cgroup_of(&s->fs, getpid(), own, sizeof(own)) ||
			!(slash = strrchr(own, '/')) || strcmp(slash + 1, "compositor") != 0) {
		slim_log(SLIM_LOG_INFO, "cgroups: not in a session's compositor class (not started "
			"by slimland-sessiond, or cgroups = off): clients run unprioritised");
		return s;
	}
	*slash = '\0';
	snprintf(s->rel, sizeof(s->rel), "%s", own);
	char procs[SLIM_CGROUP_MAX_HIER][SLIM_CGROUP_PATH + 32];
	size_t n = slim_cgroup_procs_paths(&s->fs, s->rel, SLIM_CGROUP_INTERACTIVE, procs);
	for (size_t i = 0; i < n; i++) {
		if (access(procs[i], W_OK) != 0) {
			slim_log(SLIM_LOG_INFO, "cgroups: cannot move processes into %s (%s): clients "
				"run unprioritised", procs[i], strerror(errno));
			return s;
		}
	}
	s->n_child_procs = slim_cgroup_procs_paths(&s->fs, s->rel, SLIM_CGROUP_HIDDEN,
		s->child_procs[0]);
	slim_cgroup_procs_paths(&s->fs, s->rel, SLIM_CGROUP_BACKGROUND, s->child_procs[1]);
	s->enabled = true;
	slim_log(SLIM_LOG_INFO, "cgroups: v%d, clients classed in %s", s->fs.version, s->rel);
	return s;
}

void slim_sched_destroy(struct slim_sched *s)
{
	free(s);
}

bool slim_sched_enabled(const struct slim_sched *s)
{
	return s && s->enabled;
}

const struct slim_sched_stats *slim_sched_stats(const struct slim_sched *s)
{
	return &s->stats;
}

/* A process in this session's cgroups, and not the compositor itself? */
static bool ours(struct slim_sched *s, pid_t pid)
{
	char rel[SLIM_CGROUP_PATH];
	size_t len = strlen(s->rel);
	return pid > 0 && pid != getpid() && slim_cgroup_of(&s->fs, pid, rel, sizeof(rel)) &&
		strncmp(rel, s->rel, len) == 0 && rel[len] == '/';
}

static void move_one(struct slim_sched *s, pid_t pid, enum slim_cgroup_class class)
{
	int err = slim_cgroup_move(&s->fs, s->rel, class, pid);
	if (err == 0) {
		s->stats.moves++;
		return;
	}
	if (err == ESRCH) {
		return; /* it exited meanwhile */
	}
	uint64_t bit = 1ull << (err < 63 ? err : 63);
	if (!(s->logged & bit)) {
		s->logged |= bit;
		slim_log(SLIM_LOG_ERROR, "cgroups: cannot move process %d to %s: %s", (int)pid,
			slim_cgroup_class_name(class), strerror(err));
	}
	if (err == ENOENT) {
		/* the manager removed the tree, or someone else did */
		slim_log(SLIM_LOG_ERROR, "cgroups: the classes of %s are gone: clients run "
			"unprioritised from now", s->rel);
		s->enabled = false;
	}
}

/* A client's process and every process it started, as they are now. */
static void move_tree(struct slim_sched *s, pid_t pid, enum slim_cgroup_class class)
{
	if (!s->enabled || !ours(s, pid)) {
		return;
	}
	size_t n = slim_cgroup_descendants(pid, s->tree, MAX_TREE);
	move_one(s, pid, class);
	for (size_t i = 0; i < n && s->enabled; i++) {
		if (ours(s, s->tree[i])) {
			move_one(s, s->tree[i], class);
		}
	}
}

/* Everything in class `from` to `to` (attach and detach). */
static void move_class(struct slim_sched *s, enum slim_cgroup_class from,
		enum slim_cgroup_class to)
{
	uint64_t cpu_us;
	long n = slim_cgroup_class_read(&s->fs, s->rel, from, s->tree, MAX_TREE, &cpu_us);
	for (long i = 0; i < n && i < MAX_TREE && s->enabled; i++) {
		move_one(s, s->tree[i], to);
	}
}

static void timed_end(struct slim_sched *s, uint64_t start, uint64_t moves, const char *what)
{
	s->stats.last_us = now_us() - start;
	if (s->stats.last_us > s->stats.max_us) {
		s->stats.max_us = s->stats.last_us;
	}
	slim_log(SLIM_LOG_DEBUG, "cgroups: %s: %llu processes moved in %llu us", what,
		(unsigned long long)(s->stats.moves - moves), (unsigned long long)s->stats.last_us);
}

void slim_sched_client(struct slim_sched *s, pid_t pid)
{
	if (slim_sched_enabled(s) && pid != s->focused) {
		move_tree(s, pid, s->attached ? SLIM_CGROUP_BACKGROUND : SLIM_CGROUP_HIDDEN);
	}
}

void slim_sched_focus(struct slim_sched *s, pid_t pid)
{
	if (slim_sched_enabled(s)) {
		s->want_focused = pid;
	}
}

void slim_sched_server(struct slim_sched *s, pid_t pid)
{
	if (slim_sched_enabled(s) && pid > 0 && pid != s->focused) {
		move_one(s, pid, SLIM_CGROUP_COMPOSITOR);
	}
}

void slim_sched_attached(struct slim_sched *s, bool attached)
{
	if (slim_sched_enabled(s)) {
		s->want_attached = attached;
	}
}

bool slim_sched_pending(const struct slim_sched *s)
{
	return slim_sched_enabled(s) &&
		(s->want_attached != s->attached || s->want_focused != s->focused);
}

void slim_sched_apply(struct slim_sched *s)
{
	if (!slim_sched_pending(s)) {
		return;
	}
	uint64_t start = now_us(), moves = s->stats.moves;
	pid_t old = s->focused;
	bool was_attached = s->attached;
	s->attached = s->want_attached;
	s->focused = s->want_focused;
	const char *what = "focus";
	if (s->attached && !was_attached) {
		move_class(s, SLIM_CGROUP_HIDDEN, SLIM_CGROUP_BACKGROUND);
		if (s->focused) {
			move_tree(s, s->focused, SLIM_CGROUP_INTERACTIVE);
		}
		what = "attached";
	} else if (!s->attached && was_attached) {
		move_class(s, SLIM_CGROUP_INTERACTIVE, SLIM_CGROUP_HIDDEN);
		move_class(s, SLIM_CGROUP_BACKGROUND, SLIM_CGROUP_HIDDEN);
		what = "detached";
	} else if (s->attached) {
		/* one client may own several windows: the old focus could be the new */
		if (old) {
			move_tree(s, old, SLIM_CGROUP_BACKGROUND);
		}
		if (s->focused) {
			move_tree(s, s->focused, SLIM_CGROUP_INTERACTIVE);
		}
	}
	timed_end(s, start, moves, what);
}

void slim_sched_child(const struct slim_sched *s)
{
	if (!slim_sched_enabled(s)) {
		return;
	}
	/* between fork and exec: open and write only */
	for (size_t i = 0; i < s->n_child_procs; i++) {
		int fd = open(s->child_procs[s->attached][i], O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (write(fd, "0", 1) != 1) {
				/* it runs in the compositor's class: not worth failing a start */
			}
			close(fd);
		}
	}
}
