/*
 * The daemon's slim_manager_ops: logins in worker processes (login.c, which
 * runs PAM and spawn.c there), spawning greeters (spawn.c), the UDP
 * socket and the state file. Tests and fuzzers supply their own.
 */
#include <stdlib.h>
#include "login.h"
#include "backend.h"
#include "consoles.h"
#include "state.h"

static bool do_spawn(void *data, const struct slim_spawn_request *req,
		struct slim_spawn_result *out, int *control_fd)
{
	*control_fd = -1;
	return slim_spawn_compositor(req, out);
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

static void do_send(void *data, struct slim_sec_conn *conn, const uint8_t *buf, size_t len)
{
	slim_sec_conn_send(conn, buf, len);
}

static void do_close(void *data, struct slim_sec_conn *conn)
{
	slim_sec_conn_close(conn);
}

static void do_changed(void *data)
{
	struct slim_backend *backend = data;
	if (backend->mgr) {
		slim_state_write(backend->mgr, backend->state_path);
	}
}

const struct slim_manager_ops slim_backend_ops = {
	.spawn = do_spawn,
	.login = do_login,
	.login_cancel = do_login_cancel,
	.send = do_send,
	.close = do_close,
	.changed = do_changed,
};
