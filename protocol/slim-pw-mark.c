#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "slim-pw-mark.h"

#define SUFFIX ".slimland-session"
/* libpipewire's own default, when PIPEWIRE_REMOTE does not say */
#define DEFAULT_REMOTE "pipewire-0"

static bool mark_path(char *buf, size_t len, const char *socket_path)
{
	int n = snprintf(buf, len, "%s" SUFFIX, socket_path);
	return n > 0 && (size_t)n < len;
}

/* Only a file of this user's marks: another's (a runtime directory others may write to) does not. */
static bool ours(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid();
}

int slim_pw_mark(const char *socket_path)
{
	char path[4096];
	if (!mark_path(path, sizeof(path), socket_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		return -1;
	}
	if (!ours(fd)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	/* shared: a second session on the same PipeWire marks it too; waits out a console's test */
	while (flock(fd, LOCK_SH) < 0) {
		if (errno != EINTR) {
			int err = errno;
			close(fd);
			errno = err;
			return -1;
		}
	}
	return fd;
}

bool slim_pw_marked(void)
{
	const char *remote = getenv("PIPEWIRE_REMOTE");
	if (!remote || !remote[0]) {
		remote = DEFAULT_REMOTE;
	}
	const char *dir = getenv("PIPEWIRE_RUNTIME_DIR");
	if (!dir) {
		dir = getenv("XDG_RUNTIME_DIR");
	}
	char socket_path[4096], path[4096];
	int n = remote[0] == '/' ? snprintf(socket_path, sizeof(socket_path), "%s", remote) :
		dir ? snprintf(socket_path, sizeof(socket_path), "%s/%s", dir, remote) : -1;
	if (n < 0 || (size_t)n >= sizeof(socket_path) ||
			!mark_path(path, sizeof(path), socket_path)) {
		return false;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		return false;
	}
	if (!ours(fd)) {
		close(fd);
		return false;
	}
	/* held by a session if an exclusive lock cannot be had; had, it goes at once */
	bool held = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd);
	return held;
}
