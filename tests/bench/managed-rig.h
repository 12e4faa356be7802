/*
 * What a benchmark of the session manager sets up, for bench-migration and
 * bench-capacity: a temporary directory, throwaway users (password
 * RIG_PASSWORD) and their PAM service (pam_unix), a greeter user, the
 * run's greeter uids and cgroup slice (all named by the run's tag,
 * run-tag.h), slimland-sessiond as root with a configuration of its own,
 * and the in-process consoles (managed.h) every wait runs. Everything is
 * removed at exit, on failure and on SIGINT/SIGTERM/SIGHUP, with every
 * process the users and greeters still run.
 */
#ifndef SLIM_BENCH_MANAGED_RIG_H
#define SLIM_BENCH_MANAGED_RIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "managed.h"
#include "slim-secure.h"

#define RIG_PASSWORD "m1gr8bench"
#define RIG_MAX_SESSIONDS 3

/* The temporary directory, and -v. */
extern char rig_tmpdir[64];
extern bool rig_verbose;
/* What the next managers start in a new session (sh -c); the default: slim-echo. */
extern const char *rig_startup;
/* The managers' `greeter =` program; the default: slimland-greeter. */
extern const char *rig_greeter;
/* Greeter uids each manager has (greeter_uids), set before rig_setup; the default: 10. */
extern unsigned rig_greeters;
/* Called at cleanup once the managers are stopped (e.g. stopping etcd); NULL: nothing. */
extern void (*rig_at_cleanup)(void);

/*
 * Claims the run's names, makes the directory, the PAM service and the
 * greeter user, and arms the cleanup. `label` names them ("mig": user
 * TAG-mig's PAM service, TAG-mig-gr greets); `prog` prefixes messages.
 * Root only.
 */
bool rig_setup(const char *prog, const char *label);
/* A user TAG-LABEL with RIG_PASSWORD and a home in rig_tmpdir; its name into `name`. */
bool rig_add_user(const char *label, char *name, size_t size);
/* Everything gone: managers, our users' processes, users, files. Also at exit. */
void rig_cleanup(void);

/*
 * slimland-sessiond with a configuration of its own, `name` naming its
 * files in rig_tmpdir (slimland-NAME.conf, run-NAME/, sessiond-NAME.log);
 * `extra`: more lines of slimland.conf (NULL: none). True once its
 * control socket is up (consoles can say HELLO); stopped at
 * rig_stop_sessionds() or at exit.
 */
bool rig_start_sessiond(const char *name, uint16_t port, enum slim_sec_mode mode,
		const char *key_dir, const char *extra);
/* The pid of the last manager started (-1: none). */
int rig_sessiond_pid(void);
/* Every manager started, then what our users still run. */
void rig_stop_sessionds(void);
/* Whether the log of manager `name` has a line with `text`. */
bool rig_sessiond_said(const char *name, const char *text);
/* The managers' and the sessions' logs' last lines, on stderr. */
void rig_show_logs(void);

/* The consoles every wait runs, in the order added. */
void rig_consoles_add(struct bench_console *c);
/* Back to the first n. */
void rig_consoles_truncate(size_t n);
/* Runs them all for timeout_ms, or until done(data) (managed.h). */
bool rig_consoles_run(int timeout_ms, bool (*done)(void *data), void *data);

/* c follows a new REDIRECT and presents `frames` frames there; false if not in timeout_ms. */
bool rig_wait_redirected(struct bench_console *c, uint32_t redirects_before,
		uint32_t frames, int timeout_ms);
/* Runs the consoles until c has presented no frame for quiet_ms, at most max_ms. */
void rig_settle(struct bench_console *c, int quiet_ms, int max_ms);
/* The key of a character of lower case, digits, '-', ' ', '.', '\n' (0: none). */
uint32_t rig_key_for(char ch);
/* Keys for `text` (rig_key_for's characters) on c's display association. */
void rig_type_text(struct bench_console *c, const char *text);
/* c follows a new REDIRECT (more than redirects_before) to a greeter that shows its window. */
bool rig_wait_greeter(struct bench_console *c, uint32_t redirects_before, int timeout_ms);
/*
 * After a tap at c: runs until c shows the display association at
 * `session_port`, newly redirected there (more REDIRECTs than
 * redirects_before), and has presented a complete frame of it; that
 * frame's time (0: not within timeout_ms, or redirected elsewhere last).
 */
uint64_t rig_wait_session(struct bench_console *c, uint32_t redirects_before,
		uint16_t session_port, int timeout_ms, bool *first_only);
/*
 * A new console c (id, key at rig_tmpdir/console-ID.key) at `manager`
 * gets a greeter, and `user` logs in there: true once it has presented
 * a frame of a display association other than the greeter's. c is added
 * to the consoles the waits run (also when false: stop it after removing).
 */
bool rig_console_login(struct bench_console *c, const char *manager, const char *id,
		uint32_t width, uint32_t height, enum slim_sec_mode mode, const char *user);

#endif
