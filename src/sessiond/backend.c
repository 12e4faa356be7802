/*
 * The daemon's slim_manager_ops: PAM (auth.c), spawning (spawn.c), the UDP
 * socket and the state file. Tests and fuzzers supply their own.
 */
#include <stdlib.h>
#include "auth.h"
#include "backend.h"
#include "consoles.h"
#include "state.h"

static bool do_spawn(void *data, const struct slim_spawn_request *req,
		struct slim_spawn_result *out, int *control_fd)
{
	*control_fd = -1;
	return slim_spawn_compositor(req, out);
}

static struct slim_auth *do_login(void *data, const char *service, const char *user,
		const char *password, const char **why)
{
	return slim_auth_login(service, user, password, why);
}

static void do_logout(void *data, struct slim_auth *auth)
{
	slim_auth_logout(auth);
}

static char *const *do_env(void *data, const struct slim_auth *auth)
{
	return slim_auth_env(auth);
}

static void do_send(void *data, const uint8_t *buf, size_t len,
		const struct sockaddr *to, socklen_t to_len)
{
	struct slim_backend *backend = data;
	if (backend->udp) {
		slim_udp_send(backend->udp, buf, len, to, to_len);
	}
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
	.logout = do_logout,
	.auth_env = do_env,
	.send = do_send,
	.changed = do_changed,
};
