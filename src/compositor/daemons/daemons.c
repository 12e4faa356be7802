#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "daemons.h"
#include "slim-sched.h"
#include "slim-log.h"

/* Where a socket-activated daemon finds its socket (sd_listen_fds(3)). */
#define SD_LISTEN_FDS_START 3

/* How long a daemon may take to leave when told to. */
#define EXIT_TIMEOUT_MS 1000

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* Writes `n` in decimal at `out` (room for 20 digits): async-signal-safe, for a child. */
static void put_decimal(char *out, unsigned long n)
{
	char digits[20];
	int len = 0;
	do {
		digits[len++] = (char)('0' + n % 10);
		n /= 10;
	} while (n > 0 && len < (int)sizeof(digits));
	for (int i = 0; i < len; i++) {
		out[i] = digits[len - 1 - i];
	}
	out[len] = '\0';
}

/*
 * The environment of a socket-activated child: the compositor's without
 * LISTEN_*, then LISTEN_FDS=1 and LISTEN_PID, whose number the child
 * writes into `pid_slot` itself (it is known only there). Made before the
 * fork: a child of a threaded process may not allocate.
 */
static char **activation_environment(char **pid_slot)
{
	size_t n = 0;
	while (environ[n]) {
		n++;
	}
	char **envp = calloc(n + 3, sizeof(*envp));
	char *pid = malloc(sizeof("LISTEN_PID=") + 20);
	if (!envp || !pid) {
		free(envp);
		free(pid);
		return NULL;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(environ[i], "LISTEN_", 7) != 0) {
			envp[k++] = environ[i];
		}
	}
	envp[k++] = "LISTEN_FDS=1";
	strcpy(pid, "LISTEN_PID=");
	envp[k++] = pid;
	*pid_slot = pid + strlen("LISTEN_PID=");
	return envp;
}

/*
 * The exec's own errno comes back through a close-on-exec pipe, whose end
 * of file means it ran.
 */
static bool spawn(struct slim_daemon *d, const char *const argv[], int keep_fd, int listen_fd,
		struct slim_sched *sched, const char *what)
{
	d->name = argv[0];
	d->pid = 0;
	char **envp = environ, *pid_slot = NULL;
	if (listen_fd >= 0 && !(envp = activation_environment(&pid_slot))) {
		slim_log(SLIM_LOG_ERROR, "%s: cannot start %s: out of memory", what, argv[0]);
		return false;
	}
	int report[2];
	if (pipe2(report, O_CLOEXEC) < 0) {
		slim_log(SLIM_LOG_ERROR, "%s: cannot start %s: %s", what, argv[0], strerror(errno));
		goto out;
	}
	/* the child's fd 3 is the activated socket: the report's end must not be there */
	if (listen_fd >= 0 && report[1] == SD_LISTEN_FDS_START) {
		int moved = fcntl(report[1], F_DUPFD_CLOEXEC, SD_LISTEN_FDS_START + 1);
		close(report[1]);
		report[1] = moved;
	}
	/*
	 * A group's members outlive the parents that started them (a bus's
	 * activated services are its grandchildren): orphaned, they come to
	 * the compositor, not to init, so that it reaps them and knows when
	 * the last has gone.
	 */
	if (d->group) {
		prctl(PR_SET_CHILD_SUBREAPER, 1);
	}
	pid_t pid = report[1] >= 0 ? fork() : -1;
	if (pid == 0) {
		sigset_t all;
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		/* a compositor that dies, even by SIGKILL, takes its daemons along */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (d->group) {
			setpgid(0, 0);
		}
		if (keep_fd >= 0) {
			fcntl(keep_fd, F_SETFD, 0);
		}
		if (listen_fd == SD_LISTEN_FDS_START) {
			fcntl(listen_fd, F_SETFD, 0);
		} else if (listen_fd >= 0) {
			dup2(listen_fd, SD_LISTEN_FDS_START); /* not close-on-exec */
		}
		if (pid_slot) {
			put_decimal(pid_slot, (unsigned long)getpid());
		}
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
		}
		execvpe(argv[0], (char *const *)argv, envp);
		int err = errno;
		(void)!write(report[1], &err, sizeof(err));
		_exit(127);
	}
	if (report[1] >= 0) {
		close(report[1]);
	}
	int err = 0;
	ssize_t n = pid > 0 ? read(report[0], &err, sizeof(err)) : -1;
	close(report[0]);
	if (pid < 0 || n != 0) {
		slim_log(SLIM_LOG_ERROR, "%s: cannot start %s: %s", what, argv[0],
			strerror(pid < 0 ? errno : err));
		if (pid > 0) {
			waitpid(pid, NULL, 0);
		}
		goto out;
	}
	slim_sched_server(sched, pid);
	d->pid = pid;
out:
	if (pid_slot) {
		free(pid_slot - strlen("LISTEN_PID="));
		free(envp);
	}
	return d->pid > 0;
}

bool slim_daemon_start(struct slim_daemon *d, const char *const argv[], int keep_fd,
		struct slim_sched *sched, const char *what)
{
	return spawn(d, argv, keep_fd, -1, sched, what);
}

bool slim_daemon_activate(struct slim_daemon *d, const char *const argv[], int listen_fd,
		struct slim_sched *sched, const char *what)
{
	return spawn(d, argv, -1, listen_fd, sched, what);
}

static void signal_daemon(const struct slim_daemon *d, int sig)
{
	kill(d->group ? -d->pid : d->pid, sig);
}

/* Reaps what of it has left; true while any of it runs. */
static bool still_runs(const struct slim_daemon *d)
{
	if (!d->group) {
		/* -1: reaped by the SIGCHLD handler already */
		return waitpid(d->pid, NULL, WNOHANG) == 0;
	}
	/* its members, orphaned as their parents leave, are ours (the subreaper) */
	while (waitpid(-d->pid, NULL, WNOHANG) > 0) {
	}
	return kill(-d->pid, 0) == 0;
}

static bool wait_gone(const struct slim_daemon *d)
{
	for (int waited = 0; still_runs(d); waited += 5) {
		if (waited >= EXIT_TIMEOUT_MS) {
			return false;
		}
		sleep_ms(5);
	}
	return true;
}

void slim_daemons_stop(struct slim_daemon daemons[], int n)
{
	for (int i = n - 1; i >= 0; i--) {
		if (daemons[i].pid > 0) {
			signal_daemon(&daemons[i], SIGTERM);
		}
	}
	for (int i = n - 1; i >= 0; i--) {
		struct slim_daemon *d = &daemons[i];
		if (d->pid > 0 && !wait_gone(d)) {
			slim_log(SLIM_LOG_ERROR, "%s did not exit: killed", d->name);
			signal_daemon(d, SIGKILL);
			wait_gone(d);
		}
		d->pid = 0;
	}
}
