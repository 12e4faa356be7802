#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "run-tag.h"

/* slimrun.py's UIDS_FIRST, UIDS_LAST and UID_BLOCK */
#define UIDS_FIRST 80000u
#define UIDS_LAST 99999u
#define UID_BLOCK 32u

static char run_tag[8];
static char lock_path[320];
static unsigned uid_block; /* its first uid; 0: none claimed */
static unsigned uid_blocks; /* how many blocks from it */

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

static bool any_user(unsigned first, unsigned last)
{
	for (unsigned uid = first; uid <= last; uid++) {
		if (getpwuid(uid)) {
			return true;
		}
	}
	return false;
}

/* The claim file of the block at `first`; false if it is another run's, or a user's. */
static bool claim_block(unsigned first)
{
	char path[320];
	snprintf(path, sizeof(path), "%s/uids-%u", runs_dir(), first);
	if (any_user(first, first + UID_BLOCK - 1)) {
		return false;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		return false;
	}
	bool ok = dprintf(fd, "%s %u %u\n", run_tag, first, first + UID_BLOCK - 1) > 0;
	close(fd);
	if (!ok) {
		unlink(path);
	}
	return ok;
}

static void release_block(unsigned first)
{
	for (unsigned uid = first; uid < first + UID_BLOCK; uid++) {
		char link[64], target[256], path[320];
		snprintf(link, sizeof(link), "/run/userdb/%u.user", uid);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		if (n > 0 && !memchr(target, '/', (size_t)n)) {
			target[n] = '\0';
			snprintf(path, sizeof(path), "/run/userdb/%s", target);
			unlink(path);
		}
		unlink(link);
	}
	char path[320];
	snprintf(path, sizeof(path), "%s/uids-%u", runs_dir(), first);
	unlink(path);
}

bool run_tag_uids_at_least(unsigned count, unsigned *first, unsigned *last)
{
	char tag_name[16];
	unsigned char r[2];
	unsigned need = count ? (count + UID_BLOCK - 1) / UID_BLOCK : 1;
	unsigned blocks = (UIDS_LAST - UIDS_FIRST + 1) / UID_BLOCK;
	if (uid_block || need > blocks || !run_tag_name(tag_name, sizeof(tag_name), "x") ||
			getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		return false;
	}
	/* `need` neighbouring blocks, each claimed as slimrun.py claims one */
	unsigned starts = blocks - need + 1;
	unsigned start = (unsigned)(r[0] << 8 | r[1]) % starts;
	for (unsigned i = 0; i < starts; i++) {
		unsigned f = UIDS_FIRST + (start + i) % starts * UID_BLOCK, got = 0;
		while (got < need && claim_block(f + got * UID_BLOCK)) {
			got++;
		}
		if (got == need) {
			uid_block = *first = f;
			uid_blocks = need;
			*last = f + need * UID_BLOCK - 1;
			return true;
		}
		while (got > 0) {
			release_block(f + --got * UID_BLOCK);
		}
	}
	return false;
}

bool run_tag_uids(unsigned *first, unsigned *last)
{
	return run_tag_uids_at_least(UID_BLOCK, first, last);
}

void run_tag_release(void)
{
	for (unsigned i = 0; uid_block && i < uid_blocks; i++) {
		release_block(uid_block + i * UID_BLOCK);
	}
	uid_block = uid_blocks = 0;
	if (run_tag[0]) {
		unlink(lock_path);
	}
}
