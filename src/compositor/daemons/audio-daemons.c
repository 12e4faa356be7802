#define _GNU_SOURCE /* struct ucred */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "audio-daemons.h"
#include "daemons.h"
#include "slim-log.h"
#include "slim-pw-mark.h"

/* How long PipeWire may take to answer, on a loaded machine. */
#define ANSWER_TIMEOUT_MS 5000

enum daemon { PIPEWIRE, WIREPLUMBER, PULSE, N_DAEMONS };

struct slim_audio_daemons {
	struct slim_daemon d[N_DAEMONS]; /* pid 0: not started here */
	int mark_fd; /* the PipeWire's mark as a session's (slim-pw-mark.h), or -1 */
};

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
	/* Peer check: nothing is said on it, but only a daemon of our own uid is the user's */
	struct ucred cred;
	socklen_t len = sizeof(cred);
	bool ok = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 &&
		getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == getuid();
	close(fd);
	return ok;
}

static bool start(struct slim_audio_daemons *d, enum daemon which, const char *name,
		struct slim_sched *sched)
{
	const char *const argv[] = { name, NULL };
	return slim_daemon_start(&d->d[which], argv, -1, sched, "audio");
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
	if (!start(d, PIPEWIRE, "pipewire", sched)) {
		goto fail;
	}
	/* WirePlumber and pipewire-pulse give up on a PipeWire that does not answer yet */
	int waited = 0;
	while (!socket_answers(socket_path)) {
		if (waited >= ANSWER_TIMEOUT_MS ||
				waitpid(d->d[PIPEWIRE].pid, NULL, WNOHANG) != 0) {
			slim_log(SLIM_LOG_ERROR, "audio: pipewire did not answer at %s", socket_path);
			goto fail;
		}
		poll(NULL, 0, 5);
		waited += 5;
	}
	if (!start(d, WIREPLUMBER, "wireplumber", sched)) {
		goto fail;
	}
	/* without it PulseAudio clients have no server; the rest still works */
	start(d, PULSE, "pipewire-pulse", sched);
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
	slim_daemons_stop(d->d, N_DAEMONS);
	if (d->mark_fd >= 0) {
		close(d->mark_fd);
	}
	free(d);
}
