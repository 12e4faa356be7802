/*
 * Starting compositors (sessions-internal.h lists its files): what a
 * user's session or a console's greeter is started with, through
 * slim_manager_ops so that tests start fakes. A user's session starts in a
 * login worker (logins.c); a greeter directly, as the greeter user.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lines.h"
#include "sessions-internal.h"

/* RUN_DIR/greeter-CONSOLE: a greeter's runtime directory */
#define GREETER_DIR "greeter-"

static const char *listen_any(struct slim_manager *mgr, char *buf, size_t size)
{
	/* compositors listen where the manager does, on a port of their own */
	struct sockaddr_storage ss;
	socklen_t len;
	char host[INET6_ADDRSTRLEN] = "0.0.0.0";
	if (slim_parse_address(mgr->config.listen, 0, &ss, &len)) {
		if (ss.ss_family == AF_INET6) {
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
			snprintf(buf, size, "[%s]:0", host);
			return buf;
		}
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
	}
	snprintf(buf, size, "%s:0", host);
	return buf;
}

struct slim_spawn_request slim_launch_request(struct slim_manager *mgr, uint32_t id,
		const char *user, const char *startup, char *const *env, const char *log_name,
		bool greeter, const struct slim_console *console, struct slim_launch_bufs *b)
{
	struct passwd *pw = getpwnam(user);
	uid_t uid = pw ? pw->pw_uid : (uid_t)-1;
	/*
	 * The compositor opens its log as the user: RUN_DIR/log/USER/ is theirs.
	 * Without it (no such user, no permission) its output goes nowhere.
	 */
	bool have_log = false;
	if (pw) {
		char dir[300];
		snprintf(dir, sizeof(dir), "%s/log", mgr->run_dir);
		mkdir(dir, 0755);
		snprintf(dir, sizeof(dir), "%s/log/%s", mgr->run_dir, user);
		have_log = (mkdir(dir, 0700) == 0 || errno == EEXIST) &&
			(geteuid() != 0 || chown(dir, pw->pw_uid, pw->pw_gid) == 0);
		snprintf(b->log_path, sizeof(b->log_path), "%s/%s.log", dir, log_name);
	}
	slim_cgroup_path(b->cgroup, sizeof(b->cgroup), uid, id);
	snprintf(b->video_budget, sizeof(b->video_budget), "%u", mgr->config.video_budget);
	/* the console's size from the start: clients that size themselves once see it */
	bool sized = console && console->width && console->height;
	if (sized) {
		snprintf(b->size, sizeof(b->size), "%ux%u", console->width, console->height);
	}
	return (struct slim_spawn_request){
		.user = user,
		.slimland = mgr->config.slimland,
		.listen = listen_any(mgr, b->listen, sizeof(b->listen)),
		.startup = startup,
		.env = env,
		.cgroup = greeter ? NULL : b->cgroup,
		.cgroups = &mgr->config.cgroups,
		.log_path = have_log ? b->log_path : NULL,
		.clear = mgr->config.transport == SLIM_SEC_CLEAR,
		.video_budget = b->video_budget,
		.size = sized ? b->size : NULL,
		.no_audio = greeter,
	};
}

static struct slim_session *spawn(struct slim_manager *mgr, const char *user,
		const char *startup, char *const *env, const char *log_name, bool greeter,
		const struct slim_console *console)
{
	struct passwd *pw = getpwnam(user);
	uid_t uid = pw ? pw->pw_uid : (uid_t)-1;
	uint32_t id = mgr->next_session_id;
	struct slim_launch_bufs b;
	struct slim_spawn_request req = slim_launch_request(mgr, id, user, startup, env, log_name,
		greeter, console, &b);
	struct slim_spawn_result res = { .pid = -1, .pidfd = -1 };
	int control_fd = -1;
	if (!mgr->ops->spawn(mgr->ops_data, &req, &res, &control_fd)) {
		slim_log(SLIM_LOG_ERROR, "cannot start a compositor for %s", user);
		return NULL;
	}
	slim_log(SLIM_LOG_INFO, "session %u: compositor %d for %s%s", id, res.pid, user,
		greeter ? " (greeter)" : "");
	return slim_session_add(mgr, id, user, uid, res.pid, res.pidfd,
		res.control_path, control_fd, greeter);
}

struct slim_session *slim_launch_greeter(struct slim_console *c)
{
	struct slim_manager *mgr = c->mgr;
	char sock_env[300], console_env[64], log_name[64], runtime_env[360];
	snprintf(sock_env, sizeof(sock_env), "SLIMLAND_GREETER_SOCKET=%s", mgr->greeter_socket);
	snprintf(console_env, sizeof(console_env), "SLIMLAND_CONSOLE=%s", c->id);
	snprintf(log_name, sizeof(log_name), "greeter-%s", c->id);
	/*
	 * Every greeter runs as the same user: a runtime directory each, or
	 * they would all want the same $XDG_RUNTIME_DIR/slimland-control
	 * (whose peer check keeps the other greeters out of this one's).
	 */
	snprintf(runtime_env, sizeof(runtime_env), "XDG_RUNTIME_DIR=%s/" GREETER_DIR "%s",
		mgr->run_dir, c->id);
	char *const env[] = { sock_env, console_env, runtime_env, NULL };
	struct slim_session *g = spawn(mgr, mgr->config.greeter_user, mgr->config.greeter,
		env, log_name, true, c);
	if (g) {
		slim_greeter_link(c, g);
	}
	return g;
}

void slim_launch_greeter_ended(struct slim_session *g)
{
	struct slim_manager *mgr = g->mgr;
	if (!mgr->ops->greeter_ended) {
		return;
	}
	/* RUN_DIR/greeter-ID/slimland-control: a directory of ours, not a user's */
	char dir[sizeof(g->control_path)];
	snprintf(dir, sizeof(dir), "%s", g->control_path);
	char *slash = strrchr(dir, '/');
	size_t run_len = strlen(mgr->run_dir);
	if (!slash || strncmp(dir, mgr->run_dir, run_len) != 0 ||
			strncmp(dir + run_len, "/" GREETER_DIR, strlen("/" GREETER_DIR)) != 0 ||
			memchr(dir + run_len + 1, '/', (size_t)(slash - dir) - run_len - 1)) {
		return;
	}
	*slash = '\0';
	/* the console's next greeter may have started already, in the same directory */
	struct slim_session *s;
	wl_list_for_each(s, &mgr->sessions, link) {
		if (s->greeter && strcmp(s->control_path, g->control_path) == 0) {
			return;
		}
	}
	mgr->ops->greeter_ended(mgr->ops_data, dir);
}
