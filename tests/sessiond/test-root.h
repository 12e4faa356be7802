/*
 * What the tests of the session manager's contact with the system share:
 * they run as root, add a throwaway user and PAM service, and must remove
 * them whatever happens, a meson timeout (SIGTERM) included.
 */
#ifndef SLIM_TEST_ROOT_H
#define SLIM_TEST_ROOT_H

#include <stdbool.h>
#include <stddef.h>

/* This run's name for `label`, "TAG-label" (tests/run-tag.h); exits (1) if none. */
void root_name(char *out, size_t size, const char *label);
int root_run(const char *cmd);
/* 0 when running as root and every tool (NULL-terminated) is there; else 77, said why. */
int root_require(const char *test, const char *const *tools);
/*
 * Calls `cleanup` at exit (then drops the run's lock file) and on SIGTERM or
 * SIGINT, then dies of the signal.
 */
void root_cleanup_on_exit(void (*cleanup)(void));
/* A PAM service file, and a user with a password and no home. */
bool root_add_user(const char *user, const char *password, const char *service_path,
		const char *pam_text);
void root_remove_user(const char *user, const char *service_path);

#endif
