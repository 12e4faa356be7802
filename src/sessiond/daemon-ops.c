/*
 * The daemon's slim_manager_ops: logins in worker processes (login.c, which
 * runs PAM and spawn.c there), spawning greeters and ending what their
 * uids left (spawn.c), the UDP socket and the state file. Tests and
 * fuzzers supply their own.
 */
#include <pwd.h>
#include <stdlib.h>
#include "login.h"
#include "daemon-ops.h"
#include "consoles.h"
#include "group.h"
#include "slim-log.h"
#include "state.h"
#include "userdb.h"

/*
 * A greeter's uid, as_name in the user database for as long as it runs
 * (userdb.h), with the greeter user's group, home and shell.
 */
static void add_greeter_record(struct slim_backend *backend, const struct slim_spawn_request *req)
{
	struct passwd *pw = getpwnam(req->user);
	if (!pw || !slim_userdb_add(SLIM_USERDB_DIR, req->as_name, req->as_uid, pw->pw_gid,
			pw->pw_dir, pw->pw_shell)) {
		return;
	}
	if (!getpwuid(req->as_uid) && !backend->userdb_unread) {
		backend->userdb_unread = true;
		slim_log(SLIM_LOG_ERROR, "greeter uid %u: not in the user database although in "
			"%s (no `systemd` on nsswitch.conf's passwd line?): greeters run without a "
			"session bus", (unsigned)req->as_uid, SLIM_USERDB_DIR);
	}
}

static bool do_spawn(void *data, const struct slim_spawn_request *req,
		struct slim_spawn_result *out, int *control_fd)
{
	*control_fd = -1;
	if (req->as_uid && req->as_name) {
		add_greeter_record(data, req);
	}
	return slim_spawn_compositor(req, out);
}

static bool do_greeter_clear(void *data, uid_t uid, const char *runtime_dir)
{
	/* killed first: nothing of the uid can fill the directory again as it goes */
	bool gone = slim_spawn_end_uid(uid);
	slim_spawn_remove_runtime_dir(runtime_dir);
	if (gone) {
		slim_userdb_remove(SLIM_USERDB_DIR, uid);
	}
	return gone;
}

static struct slim_login *do_login(void *data, struct wl_event_loop *loop,
		const struct slim_login_request *req,
		const struct slim_login_callbacks *cb, void *cb_data)
{
	return slim_login_start(loop, req, cb, cb_data);
}

static void do_login_cancel(void *data, struct slim_login *login)
{
	slim_login_cancel(login);
}

static void do_login_proceed(void *data, struct slim_login *login, bool start)
{
	slim_login_proceed(login, start);
}

static void do_send(void *data, struct slim_sec_conn *conn, const uint8_t *buf, size_t len)
{
	slim_sec_conn_send(conn, buf, len);
}

static void do_close(void *data, struct slim_sec_conn *conn)
{
	slim_sec_conn_close(conn);
}

static void do_admit(void *data, struct slim_sec_conn *conn)
{
	slim_sec_conn_admit(conn);
}

static void do_changed(void *data)
{
	struct slim_backend *backend = data;
	if (backend->mgr) {
		slim_state_write(backend->mgr, backend->state_path);
		slim_group_changed(backend->group);
	}
}

/* The hierarchies, found once; NULL where there are none. */
static const struct slim_cgroup_fs *cgroup_fs(struct slim_backend *backend)
{
	if (!backend->cgroup_checked) {
		char why[256];
		backend->cgroup_checked = true;
		backend->have_cgroups = backend->mgr->config.cgroups.enabled &&
			slim_cgroup_fs_detect(&backend->cgroup_fs, "/sys/fs/cgroup", why, sizeof(why));
	}
	return backend->have_cgroups ? &backend->cgroup_fs : NULL;
}

static void do_user_shown(void *data, uid_t uid, bool shown)
{
	struct slim_backend *backend = data;
	const struct slim_cgroup_fs *fs = backend->mgr ? cgroup_fs(backend) : NULL;
	if (!fs || !backend->mgr->config.cgroups.detached_idle) {
		return;
	}
	char rel[SLIM_CGROUP_PATH];
	slim_cgroup_path(rel, sizeof(rel), uid, 0);
	if (!slim_cgroup_set_idle(fs, rel, !shown) && !backend->idle_failed) {
		backend->idle_failed = true;
		slim_log(SLIM_LOG_ERROR, "cgroups: cannot make %s idle: detached users run at "
			"their full weight", rel);
	}
}

static void do_session_ended(void *data, uid_t uid, uint32_t id)
{
	struct slim_backend *backend = data;
	const struct slim_cgroup_fs *fs = backend->mgr ? cgroup_fs(backend) : NULL;
	if (fs) {
		char rel[SLIM_CGROUP_PATH];
		slim_cgroup_path(rel, sizeof(rel), uid, id);
		slim_cgroup_session_remove(fs, rel);
	}
}

const struct slim_manager_ops slim_backend_ops = {
	.spawn = do_spawn,
	.login = do_login,
	.login_cancel = do_login_cancel,
	.login_proceed = do_login_proceed,
	.send = do_send,
	.close = do_close,
	.admit = do_admit,
	.changed = do_changed,
	.user_shown = do_user_shown,
	.session_ended = do_session_ended,
	.greeter_clear = do_greeter_clear,
};
