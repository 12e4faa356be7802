/*
 * Starting a compositor as a user. Everything that can be looked up or
 * allocated is done in the parent, before fork(): the child only makes
 * system calls, so it is safe whatever the manager's threads or allocator
 * were doing, and a failure before exec reaches the parent through a
 * close-on-exec pipe, so that slim_spawn_compositor() can say it failed.
 */
#define _GNU_SOURCE /* getgrouplist, setgroups, pipe2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cgroup.h"
#include "slim-log.h"
#include "spawn.h"

/* SLIM_BINDIR: where the build installs slimland-greeter and slimland-session,
 * when that is none of these (meson.build) */
#ifdef SLIM_BINDIR
#define SLIM_SPAWN_PATH SLIM_BINDIR ":/usr/local/bin:/usr/bin:/bin"
#else
#define SLIM_SPAWN_PATH "/usr/local/bin:/usr/bin:/bin"
#endif
#define SLIM_SPAWN_MAX_GROUPS 256
#define SLIM_SPAWN_MAX_ENV 256

/*
 * A sanitizer build (the tests'): the manager's sanitizer options reach its
 * compositors too, so that a test's leak suppressions and halt_on_error hold
 * for them as for the manager. A release build passes none of them.
 */
static const char *const sanitizer_vars[] = {
#ifdef SLIM_SANITIZER_BUILD
	"ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS",
#endif
	NULL,
};

/* What the child reports before exec fails: which step, and errno. */
struct child_error {
	int step;
	int err;
};

enum child_step {
	STEP_SETGROUPS = 1,
	STEP_SETGID,
	STEP_SETUID,
	STEP_VERIFY,
	STEP_EXEC,
};

static const char *const step_names[] = {
	[STEP_SETGROUPS] = "setgroups",
	[STEP_SETGID] = "setgid",
	[STEP_SETUID] = "setuid",
	[STEP_VERIFY] = "dropping privileges did not stick",
	[STEP_EXEC] = "exec",
};

/* Everything the child needs, prepared by the parent. */
struct child_plan {
	uid_t uid;
	gid_t gid;
	gid_t groups[SLIM_SPAWN_MAX_GROUPS];
	int ngroups;
	const char *home;
	const char *log_path;   /* opened by the child, as the user */
	int log_fd;             /* or opened by the manager (-1: none) */
	/* the compositor class's cgroup.procs in each hierarchy, made by the parent */
	char cgroup_procs[SLIM_CGROUP_MAX_HIER][SLIM_CGROUP_PATH + 32];
	size_t n_cgroup_procs;
	char manager_uid[16];
	char *argv[20];
	char *envp[SLIM_SPAWN_MAX_ENV + 1];
	int report_fd;
};

static void child_fail(const struct child_plan *plan, int step)
{
	struct child_error e = { .step = step, .err = errno };
	ssize_t n = write(plan->report_fd, &e, sizeof(e));
	(void)n;
	_exit(127);
}

/*
 * The session's part of the cgroup tree, built and handed to the user, and
 * the class the compositor starts in. Never fails a login: a session that
 * cannot be prioritised runs where it is, said once in the log.
 */
static void plan_cgroup(struct child_plan *plan, const struct slim_spawn_request *req)
{
	struct slim_cgroup_fs fs;
	struct slim_cgroup_policy defaults;
	slim_cgroup_policy_defaults(&defaults);
	const struct slim_cgroup_policy *policy = req->cgroups ? req->cgroups : &defaults;
	char why[512];
	if (!slim_cgroup_fs_detect(&fs, "/sys/fs/cgroup", why, sizeof(why)) ||
			!slim_cgroup_session_create(&fs, policy, req->cgroup, plan->uid,
				plan->gid, why, sizeof(why))) {
		slim_log(SLIM_LOG_ERROR, "spawn: %s runs unprioritised: %s", req->cgroup, why);
		return;
	}
	plan->n_cgroup_procs = slim_cgroup_procs_paths(&fs, req->cgroup,
		policy->enabled ? SLIM_CGROUP_COMPOSITOR : SLIM_CGROUP_CLASSES,
		plan->cgroup_procs);
}

/* In the child, still root. A session outside its cgroup still works: warn. */
static void child_join_cgroup(struct child_plan *plan)
{
	for (size_t i = 0; i < plan->n_cgroup_procs; i++) {
		int fd = open(plan->cgroup_procs[i], O_WRONLY | O_CLOEXEC);
		/* "0" means the writing process in both cgroup versions. */
		if (fd < 0 || write(fd, "0", 1) != 1) {
			dprintf(STDERR_FILENO, "slimland-sessiond: warning: cannot join %s: %s\n",
				plan->cgroup_procs[i], strerror(errno));
		}
		if (fd >= 0) {
			close(fd);
		}
	}
}

static void close_inherited_fds(int keep)
{
	/*
	 * The manager's sockets (consoles, control, greeter, ctl) must not leak
	 * into a user's session. keep (the report pipe) is close-on-exec.
	 */
#ifdef SYS_close_range
	if ((keep <= 3 || syscall(SYS_close_range, 3, keep - 1, 0) == 0) &&
			syscall(SYS_close_range, keep + 1, ~0U, 0) == 0) {
		return;
	}
#endif
	long max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536) {
		max = 65536;
	}
	for (int fd = 3; fd < max; fd++) {
		if (fd != keep) {
			close(fd);
		}
	}
}

static void redirect_std(const struct child_plan *plan)
{
	int null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
	}
	/*
	 * The log is opened as the user: opened as root, a path in the user's
	 * home could be a symlink to any file on the system.
	 */
	int log = -1;
	if (plan->log_fd >= 0) {
		/* child_main has it on stdout and stderr already */
		if (null > STDERR_FILENO) {
			close(null);
		}
		return;
	}
	if (plan->log_path) {
		log = open(plan->log_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0600);
		if (log < 0) {
			dprintf(STDERR_FILENO, "slimland-sessiond: warning: cannot open %s: %s\n",
				plan->log_path, strerror(errno));
		}
	}
	int out = log >= 0 ? log : null;
	if (out >= 0) {
		dup2(out, STDOUT_FILENO);
		dup2(out, STDERR_FILENO);
	}
	if (log > STDERR_FILENO) {
		close(log);
	}
	if (null > STDERR_FILENO) {
		close(null);
	}
}

static void __attribute__((noreturn)) child_main(struct child_plan *plan)
{
	/* The manager may block or ignore signals; exec keeps both. */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++) {
		signal(sig, SIG_DFL);
	}
	/* Its own session: the manager's terminal and process group are not its. */
	setsid();
	if (plan->log_fd >= 0) {
		dup2(plan->log_fd, STDOUT_FILENO);
		dup2(plan->log_fd, STDERR_FILENO);
		/* (a no-op dup2 keeps close-on-exec: the manager had no stdout) */
		fcntl(STDOUT_FILENO, F_SETFD, 0);
		fcntl(STDERR_FILENO, F_SETFD, 0);
	}
	close_inherited_fds(plan->report_fd);
	child_join_cgroup(plan);

	if (setgroups((size_t)plan->ngroups, plan->groups) != 0) {
		child_fail(plan, STEP_SETGROUPS);
	}
	if (setgid(plan->gid) != 0) {
		child_fail(plan, STEP_SETGID);
	}
	if (setuid(plan->uid) != 0) {
		child_fail(plan, STEP_SETUID);
	}
	/* Paranoia that costs nothing: a half-dropped root must never exec. */
	if (getuid() != plan->uid || geteuid() != plan->uid ||
			getgid() != plan->gid || getegid() != plan->gid ||
			(plan->uid != 0 && setuid(0) == 0)) {
		errno = EPERM;
		child_fail(plan, STEP_VERIFY);
	}
	if (chdir(plan->home) != 0 && chdir("/") != 0) {
		dprintf(STDERR_FILENO, "slimland-sessiond: warning: chdir: %s\n", strerror(errno));
	}
	redirect_std(plan);
	execve(plan->argv[0], plan->argv, plan->envp);
	child_fail(plan, STEP_EXEC);
	_exit(127); /* not reached */
}

/*
 * XDG_RUNTIME_DIR: the one PAM gave (pam_systemd's /run/user/UID), else
 * /run/user/UID when /run/user exists, else /run/slimland/user-UID. Created
 * mode 0700 and owned by the user when missing; an existing one must be
 * the user's and private, since the control socket the manager trusts is
 * made there.
 */
static bool prepare_runtime_dir(const char *from_env, uid_t uid, gid_t gid,
		char *dir, size_t size)
{
	struct stat st;
	int n;
	if (from_env) {
		n = snprintf(dir, size, "%s", from_env);
	} else if (stat("/run/user", &st) == 0 && S_ISDIR(st.st_mode)) {
		n = snprintf(dir, size, "/run/user/%u", (unsigned)uid);
	} else {
		if (mkdir("/run/slimland", 0755) != 0 && errno != EEXIST) {
			slim_log(SLIM_LOG_ERROR, "spawn: cannot create /run/slimland: %s", strerror(errno));
			return false;
		}
		n = snprintf(dir, size, "/run/slimland/user-%u", (unsigned)uid);
	}
	if (n < 0 || (size_t)n >= size) {
		slim_log(SLIM_LOG_ERROR, "spawn: runtime directory path too long");
		return false;
	}
	if (mkdir(dir, 0700) == 0) {
		/* Created by root: give it away before the user needs it. */
		if (chown(dir, uid, gid) != 0) {
			slim_log(SLIM_LOG_ERROR, "spawn: chown %s: %s", dir, strerror(errno));
			rmdir(dir);
			return false;
		}
		return true;
	}
	if (errno != EEXIST) {
		slim_log(SLIM_LOG_ERROR, "spawn: cannot create %s: %s", dir, strerror(errno));
		return false;
	}
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid ||
			(st.st_mode & 0077)) {
		slim_log(SLIM_LOG_ERROR, "spawn: %s exists but is not a private directory of uid %u",
			dir, (unsigned)uid);
		return false;
	}
	return true;
}

/*
 * What the directory `dfd` holds, removed as root in a directory its user
 * filled: every step is relative to an open directory and none follows a
 * symlink, so nothing outside it can be reached. Closes `dfd`.
 */
static void remove_contents(int dfd, int depth)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
				unlinkat(dirfd(d), e->d_name, 0) == 0 || errno != EISDIR || depth == 0) {
			continue;
		}
		int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			remove_contents(sub, depth - 1);
			unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
		}
	}
	closedir(d);
}

void slim_spawn_remove_runtime_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		return;
	}
	remove_contents(fd, 8);
	if (rmdir(dir) != 0) {
		slim_log(SLIM_LOG_ERROR, "spawn: cannot remove %s: %s", dir, strerror(errno));
	}
}

static const char *env_value(char *const *env, const char *name)
{
	size_t len = strlen(name);
	for (; env && *env; env++) {
		if (strncmp(*env, name, len) == 0 && (*env)[len] == '=') {
			return *env + len + 1;
		}
	}
	return NULL;
}

/* Adds NAME=VALUE, replacing an earlier NAME (PAM's values win over ours). */
static bool env_add(char **envp, int *n, char *entry)
{
	if (!entry) {
		return false;
	}
	size_t name_len = strcspn(entry, "=");
	for (int i = 0; i < *n; i++) {
		if (strncmp(envp[i], entry, name_len) == 0 && envp[i][name_len] == '=') {
			free(envp[i]);
			envp[i] = entry;
			return true;
		}
	}
	if (*n >= SLIM_SPAWN_MAX_ENV) {
		free(entry);
		return false;
	}
	envp[(*n)++] = entry;
	return true;
}

static char *env_entry(const char *name, const char *value)
{
	char *s;
	return asprintf(&s, "%s=%s", name, value) < 0 ? NULL : s;
}

static void env_free(char **envp)
{
	for (char **e = envp; *e; e++) {
		free(*e);
	}
}

/* Who the child runs as: the user's (or as_uid's) ids, groups, home and log. */
static bool plan_identity(struct child_plan *plan, const struct slim_spawn_request *req,
		const struct passwd *pw)
{
	plan->uid = req->as_uid ? req->as_uid : pw->pw_uid;
	plan->gid = pw->pw_gid;
	plan->home = pw->pw_dir && *pw->pw_dir ? pw->pw_dir : "/";
	plan->log_path = req->as_uid ? NULL : req->log_path;
	plan->log_fd = -1;
	plan->ngroups = SLIM_SPAWN_MAX_GROUPS;
	if (getgrouplist(pw->pw_name, pw->pw_gid, plan->groups, &plan->ngroups) < 0) {
		slim_log(SLIM_LOG_ERROR, "spawn: %s is in more than %d groups", req->user,
			SLIM_SPAWN_MAX_GROUPS);
		return false;
	}
	return true;
}

/* A clean environment: nothing of the manager's but LANG (and sanitizer_vars). */
static bool plan_environment(struct child_plan *plan, const struct slim_spawn_request *req,
		const struct passwd *pw, const char *runtime_dir)
{
	const char *name = req->as_uid && req->as_name ? req->as_name : pw->pw_name;
	int n = 0;
	bool ok = env_add(plan->envp, &n, env_entry("HOME", plan->home)) &&
		env_add(plan->envp, &n, env_entry("USER", name)) &&
		env_add(plan->envp, &n, env_entry("LOGNAME", name)) &&
		env_add(plan->envp, &n, env_entry("SHELL",
			pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh")) &&
		env_add(plan->envp, &n, env_entry("PATH", SLIM_SPAWN_PATH)) &&
		(!getenv("LANG") || env_add(plan->envp, &n, env_entry("LANG", getenv("LANG")))) &&
		env_add(plan->envp, &n, env_entry("XDG_RUNTIME_DIR", runtime_dir));
	for (const char *const *v = sanitizer_vars; ok && *v; v++) {
		ok = !getenv(*v) || env_add(plan->envp, &n, env_entry(*v, getenv(*v)));
	}
	for (char *const *e = req->env; ok && e && *e; e++) {
		if (strchr(*e, '=')) {
			ok = env_add(plan->envp, &n, strdup(*e));
		}
	}
	if (!ok) {
		slim_log(SLIM_LOG_ERROR, "spawn: environment too large");
		env_free(plan->envp);
	}
	return ok;
}

/* `slimland --managed ...` (spawn.h). */
static void plan_argv(struct child_plan *plan, const struct slim_spawn_request *req)
{
	int a = 0;
	plan->argv[a++] = (char *)req->slimland;
	plan->argv[a++] = "--managed";
	/* its control socket takes us alone: not the user's other processes, nor other greeters */
	snprintf(plan->manager_uid, sizeof(plan->manager_uid), "%u", (unsigned)geteuid());
	plan->argv[a++] = "--manager-uid";
	plan->argv[a++] = plan->manager_uid;
	plan->argv[a++] = "--listen";
	plan->argv[a++] = (char *)(req->listen ? req->listen : "0.0.0.0:0");
	if (req->clear) {
		plan->argv[a++] = "--transport";
		plan->argv[a++] = "clear";
	}
	if (req->video_budget) {
		plan->argv[a++] = "--video-budget";
		plan->argv[a++] = (char *)req->video_budget;
	}
	if (req->video_codec) {
		plan->argv[a++] = "--video-codec";
		plan->argv[a++] = (char *)req->video_codec;
	}
	if (req->size) {
		plan->argv[a++] = "--size";
		plan->argv[a++] = (char *)req->size;
	}
	if (req->no_audio) {
		plan->argv[a++] = "--no-audio";
	}
	if (req->startup) {
		plan->argv[a++] = "-s";
		plan->argv[a++] = (char *)req->startup;
	}
	plan->argv[a] = NULL;
}

/*
 * Forks the child that becomes the compositor; -1 if it could not be
 * forked. *report is where the child says why its exec failed (EOF: it did
 * not). Frees the plan's environment either way.
 */
static pid_t fork_child(struct child_plan *plan, const struct slim_spawn_request *req,
		int *report)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0) {
		slim_log(SLIM_LOG_ERROR, "spawn: pipe: %s", strerror(errno));
		env_free(plan->envp);
		return -1;
	}
	plan->report_fd = fds[1];
	if (req->as_uid && req->log_path) {
		/* in a directory of the manager's, where nobody else can put a link */
		plan->log_fd = open(req->log_path,
			O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (plan->log_fd < 0) {
			slim_log(SLIM_LOG_ERROR, "spawn: cannot open %s: %s", req->log_path,
				strerror(errno));
		}
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		child_main(plan);
	}
	if (pid < 0) {
		slim_log(SLIM_LOG_ERROR, "spawn: fork: %s", strerror(errno));
		close(fds[0]);
	}
	close(fds[1]);
	if (plan->log_fd >= 0) {
		close(plan->log_fd);
	}
	env_free(plan->envp);
	*report = fds[0];
	return pid;
}

/* Whether the child got as far as exec; if not, it is said why and reaped. Closes `report`. */
static bool child_execed(int report, pid_t pid, const struct slim_spawn_request *req)
{
	/* EOF: the exec succeeded and closed the pipe. */
	struct child_error e;
	ssize_t got;
	do {
		got = read(report, &e, sizeof(e));
	} while (got < 0 && errno == EINTR);
	close(report);
	if (got != (ssize_t)sizeof(e)) {
		return true;
	}
	const char *step = e.step > 0 && e.step <= STEP_EXEC ? step_names[e.step] : "?";
	slim_log(SLIM_LOG_ERROR, "spawn: %s as %s: %s: %s", req->slimland, req->user,
		step, strerror(e.err));
	waitpid(pid, NULL, 0);
	return false;
}

bool slim_spawn_compositor(const struct slim_spawn_request *req, struct slim_spawn_result *out)
{
	*out = (struct slim_spawn_result){ .pid = -1, .pidfd = -1 };
	struct passwd pw_buf, *pw = NULL;
	char pw_strings[4096];
	int r = getpwnam_r(req->user, &pw_buf, pw_strings, sizeof(pw_strings), &pw);
	if (!pw) {
		slim_log(SLIM_LOG_ERROR, "spawn: no user %s%s%s", req->user,
			r ? ": " : "", r ? strerror(r) : "");
		return false;
	}
	/* Static: large, and slim_spawn_compositor is not reentrant anyway. */
	static struct child_plan plan;
	memset(&plan, 0, sizeof(plan));
	if (!plan_identity(&plan, req, pw)) {
		return false;
	}
	const char *pam_runtime = env_value(req->env, "XDG_RUNTIME_DIR");
	if (!prepare_runtime_dir(pam_runtime, plan.uid, plan.gid,
			out->runtime_dir, sizeof(out->runtime_dir))) {
		return false;
	}
	snprintf(out->control_path, sizeof(out->control_path), "%s/slimland-control",
		out->runtime_dir);
	if (req->cgroup) {
		plan_cgroup(&plan, req);
	}
	if (!plan_environment(&plan, req, pw, out->runtime_dir)) {
		return false;
	}
	plan_argv(&plan, req);
	int report;
	pid_t pid = fork_child(&plan, req, &report);
	if (pid < 0 || !child_execed(report, pid, req)) {
		return false;
	}
	/*
	 * A pidfd names this very process even if the pid is reused later (it
	 * is close-on-exec: no other session inherits it).
	 */
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		slim_log(SLIM_LOG_ERROR, "spawn: pidfd_open: %s", strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return false;
	}
	out->pid = pid;
	out->pidfd = pidfd;
	slim_log(SLIM_LOG_INFO, "spawn: %s (pid %d) as %s (uid %u), runtime directory %s",
		req->slimland, (int)pid, req->user, (unsigned)plan.uid, out->runtime_dir);
	return true;
}

/* Whether a process of uid (real, effective or saved) runs; zombies have ended. */
static bool uid_running(uid_t uid)
{
	DIR *d = opendir("/proc");
	if (!d) {
		return true; /* cannot tell: not gone */
	}
	bool running = false;
	struct dirent *e;
	while (!running && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9') {
			continue;
		}
		char path[300], line[256];
		snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
		FILE *f = fopen(path, "re");
		char state = '?';
		unsigned ids[3];
		while (f && fgets(line, sizeof(line), f)) {
			if (sscanf(line, "State: %c", &state) == 1 && (state == 'Z' || state == 'X')) {
				break;
			}
			if (sscanf(line, "Uid: %u %u %u", &ids[0], &ids[1], &ids[2]) == 3) {
				running = ids[0] == uid || ids[1] == uid || ids[2] == uid;
				break;
			}
		}
		if (f) {
			fclose(f);
		}
	}
	closedir(d);
	return running;
}

bool slim_spawn_end_uid(uid_t uid)
{
	if (uid == 0 || uid == (uid_t)-1) {
		return false; /* never: kill(-1) as root would end everything */
	}
	pid_t pid = fork();
	if (pid < 0) {
		slim_log(SLIM_LOG_ERROR, "spawn: fork: %s", strerror(errno));
		return false;
	}
	if (pid == 0) {
		/* uid alone, no capability left: kill(-1) reaches its processes only */
		if (setgroups(0, NULL) == 0 && setresuid(uid, uid, uid) == 0 &&
				getuid() == uid && geteuid() == uid) {
			kill(-1, SIGKILL);
		}
		_exit(0);
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
	}
	return !uid_running(uid);
}
