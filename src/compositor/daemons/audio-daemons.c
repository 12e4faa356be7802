#define _GNU_SOURCE /* struct ucred */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "audio-daemons.h"
#include "daemons.h"
#include "slim-log.h"
#include "slim-pw-mark.h"

/* Waiting connections a socket holds while its daemon starts. */
#define BACKLOG 64

enum daemon { PIPEWIRE, WIREPLUMBER, PULSE, N_DAEMONS };

struct slim_audio_daemons {
	enum slim_audio_daemons_state state;
	struct slim_sched *sched;
	struct slim_daemon d[N_DAEMONS];
	/* PipeWire's socket and PulseAudio's, the compositor's own, or -1 */
	int sockets[SLIM_AUDIO_SOCKETS];
	char paths[SLIM_AUDIO_SOCKETS][sizeof(((struct sockaddr_un *)0)->sun_path)];
	int mark_fd; /* the PipeWire's mark as a session's (slim-pw-mark.h), or -1 */
};

static bool make_address(struct sockaddr_un *addr, const char *path)
{
	*addr = (struct sockaddr_un){ .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(addr->sun_path)) {
		return false;
	}
	strcpy(addr->sun_path, path);
	return true;
}

static bool socket_answers(const char *path)
{
	struct sockaddr_un addr;
	if (!make_address(&addr, path)) {
		return false;
	}
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

/*
 * A listening socket at `path`, where the daemon would make its own: one a
 * crashed session left is replaced, one that answers is not (-1).
 */
static int listen_at(const char *path)
{
	struct sockaddr_un addr;
	if (!make_address(&addr, path) || socket_answers(path)) {
		errno = EADDRINUSE;
		return -1;
	}
	unlink(path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		return -1;
	}
	/* the runtime directory is the user's alone (0700): the socket needs no mode of its own */
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, BACKLOG) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

static void close_sockets(struct slim_audio_daemons *d)
{
	for (int i = 0; i < SLIM_AUDIO_SOCKETS; i++) {
		if (d->sockets[i] >= 0) {
			close(d->sockets[i]);
			unlink(d->paths[i]);
			d->sockets[i] = -1;
		}
	}
}

struct slim_audio_daemons *slim_audio_daemons_create(struct slim_sched *sched)
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
	d->sched = sched;
	d->sockets[0] = d->sockets[1] = -1;
	if (snprintf(d->paths[0], sizeof(d->paths[0]), "%s/pipewire-0", runtime) >=
			(int)sizeof(d->paths[0])) {
		slim_log(SLIM_LOG_ERROR, "audio: XDG_RUNTIME_DIR is too long: the session has "
			"no sound");
		free(d);
		return NULL;
	}
	/* before the PipeWire is there, or the session's nodes are: no console can miss it */
	d->mark_fd = slim_pw_mark(d->paths[0]);
	if (d->mark_fd < 0) {
		slim_log(SLIM_LOG_ERROR, "audio: cannot mark %s as the session's: %s (a console "
			"beside the session may play into it)", d->paths[0], strerror(errno));
	}
	if (socket_answers(d->paths[0])) {
		slim_log(SLIM_LOG_INFO, "audio: the user's PipeWire runs already");
		d->state = SLIM_AUDIO_USERS;
		return d;
	}
	d->sockets[0] = listen_at(d->paths[0]);
	if (d->sockets[0] < 0) {
		slim_log(SLIM_LOG_ERROR, "audio: cannot listen at %s: %s: the session has no sound",
			d->paths[0], strerror(errno));
		slim_audio_daemons_destroy(d);
		return NULL;
	}
	/* without it PulseAudio clients have no server; the rest still works */
	int n = snprintf(d->paths[1], sizeof(d->paths[1]), "%s/pulse", runtime);
	if (n > 0 && (size_t)n < sizeof(d->paths[1])) {
		mkdir(d->paths[1], 0700);
	}
	n = snprintf(d->paths[1], sizeof(d->paths[1]), "%s/pulse/native", runtime);
	d->sockets[1] = n > 0 && (size_t)n < sizeof(d->paths[1]) ? listen_at(d->paths[1]) : -1;
	if (d->sockets[1] < 0) {
		slim_log(SLIM_LOG_ERROR, "audio: cannot listen at %s: %s: PulseAudio clients "
			"have no sound", d->paths[1], strerror(errno));
	}
	d->state = SLIM_AUDIO_LISTENING;
	slim_log(SLIM_LOG_INFO, "audio: PipeWire starts when a client first asks for sound");
	return d;
}

enum slim_audio_daemons_state slim_audio_daemons_state(const struct slim_audio_daemons *d)
{
	return d->state;
}

int slim_audio_daemons_socket(const struct slim_audio_daemons *d, int i)
{
	return d->state == SLIM_AUDIO_LISTENING ? d->sockets[i] : -1;
}

static void stop(struct slim_audio_daemons *d)
{
	slim_daemons_stop(d->d, N_DAEMONS);
}

/*
 * The one transition function: LISTENING -> STARTING starts PipeWire and
 * pipewire-pulse on the sockets, STARTING -> RUNNING WirePlumber, back to
 * LISTENING ends them (the sockets stay, and the next connection waits in
 * them), anything -> NONE gives sound up.
 */
static void set_state(struct slim_audio_daemons *d, enum slim_audio_daemons_state to)
{
	if (d->state == to) {
		return;
	}
	switch (to) {
	case SLIM_AUDIO_STARTING: {
		const char *const pipewire[] = { "pipewire", NULL };
		const char *const pulse[] = { "pipewire-pulse", NULL };
		/*
		 * Both at once: a connection to a socket that is handed over
		 * waits in it until its daemon takes it, so neither needs the
		 * other to answer first.
		 */
		if (!slim_daemon_activate(&d->d[PIPEWIRE], pipewire, d->sockets[0], d->sched,
				"audio")) {
			set_state(d, SLIM_AUDIO_NONE);
			return;
		}
		if (d->sockets[1] >= 0) {
			slim_daemon_activate(&d->d[PULSE], pulse, d->sockets[1], d->sched, "audio");
		}
		break;
	}
	case SLIM_AUDIO_RUNNING: {
		const char *const wireplumber[] = { "wireplumber", NULL };
		if (!slim_daemon_start(&d->d[WIREPLUMBER], wireplumber, -1, d->sched, "audio")) {
			set_state(d, SLIM_AUDIO_NONE);
			return;
		}
		slim_log(SLIM_LOG_INFO, "audio: PipeWire started for this session");
		break;
	}
	case SLIM_AUDIO_LISTENING:
		stop(d);
		slim_log(SLIM_LOG_INFO, "audio: PipeWire stopped: no client for a while");
		break;
	case SLIM_AUDIO_NONE:
		stop(d);
		close_sockets(d);
		slim_log(SLIM_LOG_ERROR, "audio: the session has no sound");
		break;
	case SLIM_AUDIO_USERS:
		return; /* only ever the first state */
	}
	d->state = to;
}

bool slim_audio_daemons_wake(struct slim_audio_daemons *d)
{
	if (d->state == SLIM_AUDIO_LISTENING) {
		set_state(d, SLIM_AUDIO_STARTING);
	}
	return d->state != SLIM_AUDIO_NONE;
}

void slim_audio_daemons_link(struct slim_audio_daemons *d)
{
	if (d->state == SLIM_AUDIO_STARTING) {
		set_state(d, SLIM_AUDIO_RUNNING);
	}
}

void slim_audio_daemons_sleep(struct slim_audio_daemons *d)
{
	if (d->state == SLIM_AUDIO_STARTING || d->state == SLIM_AUDIO_RUNNING) {
		set_state(d, SLIM_AUDIO_LISTENING);
	}
}

void slim_audio_daemons_destroy(struct slim_audio_daemons *d)
{
	if (!d) {
		return;
	}
	stop(d);
	close_sockets(d);
	if (d->mark_fd >= 0) {
		close(d->mark_fd);
	}
	free(d);
}
