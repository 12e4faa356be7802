#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "run-tag.h"

static char run_tag[8];
static char lock_path[320];

static const char *runs_dir(void)
{
	const char *dir = getenv("SLIMTEST_RUNS_DIR");
	return dir && *dir ? dir : "/var/lib/slimtest";
}

/*
 * The lock file is locked before its name appears (made aside, then
 * linked), so a visible TAG.lock nobody holds is a dead run's. The
 * descriptor stays open, and locked, for the life of the process.
 */
static bool claim(void)
{
	static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	const char *dir = runs_dir();
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		return false;
	}
	for (int attempt = 0; attempt < 100; attempt++) {
		unsigned char r[5];
		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
			return false;
		}
		char tag[8] = "st", made[320];
		for (size_t i = 0; i < sizeof(r); i++) {
			tag[2 + i] = alphabet[r[i] % 36];
		}
		snprintf(made, sizeof(made), "%s/.%s.new", dir, tag);
		snprintf(lock_path, sizeof(lock_path), "%s/%s.lock", dir, tag);
		int fd = open(made, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0) {
			if (errno == EEXIST) {
				continue;
			}
			return false;
		}
		bool ok = flock(fd, LOCK_EX) == 0 &&
			dprintf(fd, "pid %d: a C test\n", (int)getpid()) > 0 &&
			link(made, lock_path) == 0;
		unlink(made);
		if (ok) {
			memcpy(run_tag, tag, sizeof(tag));
			setenv("SLIMTEST_RUN", tag, 1); /* what it starts carries it */
			return true;
		}
		close(fd);
	}
	return false;
}

bool run_tag_name(char *out, size_t size, const char *label)
{
	if (!run_tag[0] && !claim()) {
		fprintf(stderr, "no run tag in %s: %s\n", runs_dir(), strerror(errno));
		return false;
	}
	int n = snprintf(out, size, "%s-%s", run_tag, label);
	return n > 0 && (size_t)n < size;
}

void run_tag_release(void)
{
	if (run_tag[0]) {
		unlink(lock_path);
	}
}
