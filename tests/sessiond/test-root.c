#define _DEFAULT_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "run-tag.h"
#include "test-root.h"

static void (*cleanup_fn)(void);

void root_name(char *out, size_t size, const char *label)
{
	if (!run_tag_name(out, size, label)) {
		exit(1);
	}
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
	run_tag_release(); /* cleaned up: nothing left to sweep */
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
