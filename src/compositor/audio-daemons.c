#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "audio-daemons.h"
#include "sched.h"
#include "slim-log.h"
#include "slim-pw-mark.h"

/* How long a daemon may take to answer, on a loaded machine. */
#define ANSWER_TIMEOUT_MS 5000
/* How long a daemon may take to leave when told to. */
#define EXIT_TIMEOUT_MS 1000

enum daemon { BUS, PIPEWIRE, WIREPLUMBER, PULSE, N_DAEMONS };

static const char *const names[N_DAEMONS] = {
	[BUS] = "dbus-daemon", [PIPEWIRE] = "pipewire",
	[WIREPLUMBER] = "wireplumber", [PULSE] = "pipewire-pulse",
};

struct slim_audio_daemons {
	pid_t pid[N_DAEMONS]; /* 0: not started here */
	int mark_fd;          /* the PipeWire's mark as a session's (slim-pw-mark.h), or -1 */
};

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static bool socket_answers(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(addr.sun_path)) {
		return false;
	}
	strcpy(addr.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return false;
	}
	bool ok = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0;
	close(fd);
	return ok;
}

/*
 * Starts argv[0] from PATH with `keep_fd` (or -1) left open across exec.
 * 0 if it could not be executed (said in the log): the exec's own errno
 * comes back through a close-on-exec pipe, whose end of file means it ran.
 */
static pid_t start(const char *const argv[], int keep_fd, struct slim_sched *sched)
{
	int report[2];
	if (pipe2(report, O_CLOEXEC) < 0) {
		return 0;
	}
	pid_t pid = fork();
	if (pid == 0) {
		sigset_t all;
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		/* a compositor that dies, even by SIGKILL, takes its sound server along */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
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
		slim_log(SLIM_LOG_ERROR, "audio: cannot start %s: %s", argv[0],
			strerror(pid < 0 ? errno : err));
		if (pid > 0) {
			waitpid(pid, NULL, 0);
		}
		return 0;
	}
	slim_sched_server(sched, pid);
	return pid;
}

/* A session bus of the session's own, its address read from the daemon itself. */
static bool start_bus(struct slim_audio_daemons *d, const char *runtime,
		struct slim_sched *sched)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		return false;
	}
	char address[512], print[32];
	snprintf(address, sizeof(address), "--address=unix:dir=%s", runtime);
	snprintf(print, sizeof(print), "--print-address=%d", p[1]);
	const char *const argv[] = { names[BUS], "--session", "--nofork", "--nopidfile",
		address, print, NULL };
	d->pid[BUS] = start(argv, p[1], sched);
	close(p[1]);
	char line[512];
	size_t len = 0;
	struct pollfd pfd = { .fd = p[0], .events = POLLIN };
	while (d->pid[BUS] && len < sizeof(line) - 1 && !memchr(line, '\n', len) &&
			poll(&pfd, 1, ANSWER_TIMEOUT_MS) == 1) {
		ssize_t n = read(p[0], line + len, sizeof(line) - 1 - len);
		if (n <= 0) {
			break;
		}
		len += (size_t)n;
	}
	close(p[0]);
	char *nl = memchr(line, '\n', len);
	if (!nl) {
		slim_log(SLIM_LOG_ERROR, "audio: the session bus did not say its address");
		return false;
	}
	*nl = '\0';
	setenv("DBUS_SESSION_BUS_ADDRESS", line, true);
	return true;
}

struct slim_audio_daemons *slim_audio_daemons_start(struct slim_sched *sched)
{
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	if (!runtime || runtime[0] != '/') {
		slim_log(SLIM_LOG_ERROR, "audio: no XDG_RUNTIME_DIR: the session has no sound");
		return NULL;
	}
	struct slim_audio_daemons *d = calloc(1, sizeof(*d));
	if (!d) {
		return NULL;
	}
	char socket_path[512];
	snprintf(socket_path, sizeof(socket_path), "%s/pipewire-0", runtime);
	/* before the PipeWire is there, or the session's nodes are: no console can miss it */
	d->mark_fd = slim_pw_mark(socket_path);
	if (d->mark_fd < 0) {
		slim_log(SLIM_LOG_ERROR, "audio: cannot mark %s as the session's: %s (a console "
			"beside the session may play into it)", socket_path, strerror(errno));
	}
	if (socket_answers(socket_path)) {
		slim_log(SLIM_LOG_INFO, "audio: the user's PipeWire runs already");
		return d;
	}
	if (!getenv("DBUS_SESSION_BUS_ADDRESS") && !start_bus(d, runtime, sched)) {
		goto fail;
	}
	const char *const pipewire[] = { names[PIPEWIRE], NULL };
	if (!(d->pid[PIPEWIRE] = start(pipewire, -1, sched))) {
		goto fail;
	}
	/* WirePlumber and pipewire-pulse give up on a PipeWire that does not answer yet */
	int waited = 0;
	while (!socket_answers(socket_path)) {
		if (waited >= ANSWER_TIMEOUT_MS || waitpid(d->pid[PIPEWIRE], NULL, WNOHANG) != 0) {
			slim_log(SLIM_LOG_ERROR, "audio: pipewire did not answer at %s", socket_path);
			goto fail;
		}
		sleep_ms(5);
		waited += 5;
	}
	const char *const wireplumber[] = { names[WIREPLUMBER], NULL };
	const char *const pulse[] = { names[PULSE], NULL };
	if (!(d->pid[WIREPLUMBER] = start(wireplumber, -1, sched))) {
		goto fail;
	}
	/* without it PulseAudio clients have no server; the rest still works */
	d->pid[PULSE] = start(pulse, -1, sched);
	slim_log(SLIM_LOG_INFO, "audio: PipeWire started for this session");
	return d;
fail:
	slim_audio_daemons_stop(d);
	return NULL;
}

void slim_audio_daemons_stop(struct slim_audio_daemons *d)
{
	if (!d) {
		return;
	}
	for (int i = N_DAEMONS - 1; i >= 0; i--) {
		if (d->pid[i] > 0) {
			kill(d->pid[i], SIGTERM);
		}
	}
	/* the event loop's SIGCHLD handler no longer runs: reap them here, boundedly */
	for (int i = N_DAEMONS - 1; i >= 0; i--) {
		for (int waited = 0; d->pid[i] > 0; waited += 5) {
			pid_t r = waitpid(d->pid[i], NULL, WNOHANG);
			if (r != 0) {
				break; /* gone, or reaped by the SIGCHLD handler already */
			}
			if (waited >= EXIT_TIMEOUT_MS) {
				slim_log(SLIM_LOG_ERROR, "audio: %s did not exit: killed", names[i]);
				kill(d->pid[i], SIGKILL);
				waitpid(d->pid[i], NULL, 0);
				break;
			}
			sleep_ms(5);
		}
	}
	if (d->mark_fd >= 0) {
		close(d->mark_fd);
	}
	free(d);
}
