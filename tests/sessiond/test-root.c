#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "test-root.h"

static void (*cleanup_fn)(void);
static char run_tag[8];
static char run_lock_path[320];

static const char *runs_dir(void)
{
	const char *dir = getenv("SLIMTEST_RUNS_DIR");
	return dir && *dir ? dir : "/var/lib/slimtest";
}

/*
 * "st" and five letters or digits, free among the live runs: the lock file
 * is locked before its name appears (made aside, then linked), so a
 * visible TAG.lock nobody holds is a dead run's. The descriptor stays open,
 * and locked, for the life of the process.
 */
static bool claim_tag(void)
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
		snprintf(run_lock_path, sizeof(run_lock_path), "%s/%s.lock", dir, tag);
		int fd = open(made, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0) {
			if (errno == EEXIST) {
				continue;
			}
			return false;
		}
		bool ok = flock(fd, LOCK_EX) == 0 && dprintf(fd, "pid %d: a C test\n", (int)getpid()) > 0 &&
			link(made, run_lock_path) == 0;
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

void root_name(char *out, size_t size, const char *label)
{
	if (!run_tag[0] && !claim_tag()) {
		fprintf(stderr, "no run tag in %s: %s\n", runs_dir(), strerror(errno));
		exit(1);
	}
	snprintf(out, size, "%s-%s", run_tag, label);
}

int root_run(const char *cmd)
{
	int status = system(cmd);
	return status == -1 ? -1 : WEXITSTATUS(status);
}

int root_require(const char *test, const char *const *tools)
{
	if (geteuid() != 0) {
		fprintf(stderr, "%s: needs root: skipped\n", test);
		return 77;
	}
	for (; *tools; tools++) {
		if (access(*tools, X_OK) != 0) {
			fprintf(stderr, "%s: needs %s: skipped\n", test, *tools);
			return 77;
		}
	}
	return 0;
}

static void on_signal(int sig)
{
	cleanup_fn();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void at_exit(void)
{
	cleanup_fn();
	if (run_tag[0]) {
		unlink(run_lock_path); /* cleaned up: nothing left to sweep */
	}
}

void root_cleanup_on_exit(void (*cleanup)(void))
{
	cleanup_fn = cleanup;
	signal(SIGTERM, on_signal); /* meson's timeout */
	signal(SIGINT, on_signal);
	atexit(at_exit);
}

bool root_add_user(const char *user, const char *password, const char *service_path,
		const char *pam_text)
{
	FILE *f = fopen(service_path, "w");
	if (!f) {
		return false;
	}
	fputs(pam_text, f);
	if (fclose(f) != 0) {
		return false;
	}
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "useradd -M -d /nonexistent -s /bin/sh %s", user);
	if (root_run(cmd) != 0) {
		return false;
	}
	snprintf(cmd, sizeof(cmd), "echo '%s:%s' | chpasswd", user, password);
	return root_run(cmd) == 0;
}

void root_remove_user(const char *user, const char *service_path)
{
	char cmd[256];
	if (service_path) {
		unlink(service_path);
	}
	snprintf(cmd, sizeof(cmd), "userdel -r %s >/dev/null 2>&1", user);
	root_run(cmd);
}
