#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "daemons.h"
#include "slim-sched.h"
#include "slim-log.h"

/* How long a daemon may take to leave when told to. */
#define EXIT_TIMEOUT_MS 1000

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/*
 * The exec's own errno comes back through a close-on-exec pipe, whose end
 * of file means it ran.
 */
bool slim_daemon_start(struct slim_daemon *d, const char *const argv[], int keep_fd,
		struct slim_sched *sched, const char *what)
{
	d->name = argv[0];
	d->pid = 0;
	int report[2];
	if (pipe2(report, O_CLOEXEC) < 0) {
		slim_log(SLIM_LOG_ERROR, "%s: cannot start %s: %s", what, argv[0], strerror(errno));
		return false;
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
	pid_t pid = fork();
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
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
		}
		execvp(argv[0], (char *const *)argv);
		int err = errno;
		(void)!write(report[1], &err, sizeof(err));
		_exit(127);
	}
	close(report[1]);
	int err = 0;
	ssize_t n = pid > 0 ? read(report[0], &err, sizeof(err)) : -1;
	close(report[0]);
	if (pid < 0 || n != 0) {
		slim_log(SLIM_LOG_ERROR, "%s: cannot start %s: %s", what, argv[0],
			strerror(pid < 0 ? errno : err));
		if (pid > 0) {
			waitpid(pid, NULL, 0);
		}
		return false;
	}
	slim_sched_server(sched, pid);
	d->pid = pid;
	return true;
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
