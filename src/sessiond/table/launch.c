/*
 * Starting compositors (sessions-internal.h lists its files): what a
 * user's session or a console's greeter is started with, through
 * slim_manager_ops so that tests start fakes. A user's session starts in a
 * login worker (logins.c); a greeter directly, as a uid of its own from
 * greeter_uids (uid-pool.h) with the greeter user's group and home.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "slim-lines.h"
#include "sessions-internal.h"

/* How often a uid whose processes were slow to die is tried again. */
#define UID_RETRY_MS 200

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
	 * A user's compositor opens its log as the user: RUN_DIR/log/USER/ is
	 * theirs. A greeter's is opened by the manager (spawn.c) in
	 * RUN_DIR/log/GREETER_USER/, which stays root's (an earlier version's,
	 * the greeter user's, becomes root's), where no greeter uid can put
	 * anything. Without it (no such user, no permission) the output goes
	 * nowhere.
	 */
	bool have_log = false;
	if (pw) {
		char dir[300];
		snprintf(dir, sizeof(dir), "%s/log", mgr->run_dir);
		mkdir(dir, 0755);
		snprintf(dir, sizeof(dir), "%s/log/%s", mgr->run_dir, user);
		have_log = (mkdir(dir, 0700) == 0 || errno == EEXIST) && (geteuid() != 0 ||
			(greeter ? chown(dir, 0, 0) == 0 && chmod(dir, 0700) == 0 :
				chown(dir, pw->pw_uid, pw->pw_gid) == 0));
		snprintf(b->log_path, sizeof(b->log_path), "%s/%s.log", dir, log_name);
	}
	slim_cgroup_path(b->cgroup, sizeof(b->cgroup), uid, id);
	snprintf(b->video_budget, sizeof(b->video_budget), "%u", mgr->config.video_budget);
	/* the console's size from the start: clients that size themselves once see it */
	bool sized = console && console->assoc.width && console->assoc.height;
	if (sized) {
		snprintf(b->size, sizeof(b->size), "%ux%u", console->assoc.width, console->assoc.height);
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
		.video_codec = mgr->config.video_codec,
		.size = sized ? b->size : NULL,
		.no_audio = greeter,
	};
}

/* A greeter's compositor, as uid (one of greeter_uids). */
static struct slim_session *spawn_greeter(struct slim_manager *mgr, uid_t uid,
		char *const *env, const char *log_name, const struct slim_console *console)
{
	const char *user = mgr->config.greeter_user;
	uint32_t id = mgr->next_session_id;
	struct slim_launch_bufs b;
	struct slim_spawn_request req = slim_launch_request(mgr, id, user, mgr->config.greeter,
		env, log_name, true, console, &b);
	char name[96];
	slim_uid_pool_name(&mgr->greeters.uids, uid, name, sizeof(name));
	req.as_uid = uid;
	req.as_name = name;
	struct slim_spawn_result res = { .pid = -1, .pidfd = -1 };
	int control_fd = -1;
	if (!mgr->ops->spawn(mgr->ops_data, &req, &res, &control_fd)) {
		slim_log(SLIM_LOG_ERROR, "cannot start a compositor for %s", user);
		return NULL;
	}
	slim_log(SLIM_LOG_INFO, "session %u: compositor %d for %s (greeter, uid %u)", id, res.pid,
		user, (unsigned)uid);
	return slim_session_add(mgr, id, user, uid, res.pid, res.pidfd,
		res.control_path, control_fd, true);
}

/* RUN_DIR/greeter-UID: the runtime directory of the greeter that runs as uid. */
static void greeter_dir(struct slim_manager *mgr, uid_t uid, char *buf, size_t size)
{
	snprintf(buf, size, "%s/greeter-%u", mgr->run_dir, (unsigned)uid);
}

/*
 * Ends whatever runs as uid and removes its runtime directory: true when
 * nothing of it is left. Otherwise the uid waits, ENDING, for the timer.
 */
static bool clear_uid(struct slim_manager *mgr, uid_t uid)
{
	char dir[300];
	greeter_dir(mgr, uid, dir, sizeof(dir));
	if (!mgr->ops->greeter_clear || mgr->ops->greeter_clear(mgr->ops_data, uid, dir)) {
		return true;
	}
	if (slim_uid_pool_state(&mgr->greeters.uids, uid) != SLIM_UID_ENDING &&
			slim_ratelimit(&mgr->log_rl, slim_now_us())) {
		slim_log(SLIM_LOG_INFO, "greeter uid %u: processes still die; it waits", (unsigned)uid);
	}
	slim_uid_pool_set(&mgr->greeters.uids, uid, SLIM_UID_ENDING);
	wl_event_source_timer_update(mgr->greeters.uid_timer, UID_RETRY_MS);
	return false;
}

/* Its greeter is gone: the uid is free once nothing of it runs. */
static void release_uid(struct slim_manager *mgr, uid_t uid)
{
	if (clear_uid(mgr, uid)) {
		slim_uid_pool_set(&mgr->greeters.uids, uid, SLIM_UID_FREE);
		slim_log(SLIM_LOG_DEBUG, "greeter uid %u: nothing of it runs; free", (unsigned)uid);
	}
}

int slim_launch_uid_retry(void *data)
{
	struct slim_manager *mgr = data;
	struct slim_uid_pool *pool = &mgr->greeters.uids;
	for (uint32_t i = 0; i < pool->count && pool->ending; i++) {
		if (pool->state[i] == SLIM_UID_ENDING) {
			release_uid(mgr, pool->first + i);
		}
	}
	return 0;
}

/*
 * A uid for a new greeter, with nothing running as it: what a greeter the
 * manager lost track of (a crash before the state file said it) left
 * behind is ended first, and a uid whose processes are slow to die is
 * passed over.
 */
static uid_t take_uid(struct slim_manager *mgr)
{
	for (int tries = 0; tries < 8; tries++) {
		uid_t uid = slim_uid_pool_take(&mgr->greeters.uids);
		if (uid == (uid_t)-1 || clear_uid(mgr, uid)) {
			return uid;
		}
	}
	return (uid_t)-1;
}

struct slim_session *slim_launch_greeter(struct slim_console *c)
{
	struct slim_manager *mgr = c->mgr;
	uid_t uid = take_uid(mgr);
	if (uid == (uid_t)-1) {
		if (slim_ratelimit(&mgr->log_rl, slim_now_us())) {
			slim_log(SLIM_LOG_ERROR, "console %s: no greeter uid is free (greeter_uids "
				"%u-%u)", c->id, (unsigned)mgr->config.greeter_uid_first,
				(unsigned)mgr->config.greeter_uid_last);
		}
		return NULL;
	}
	char sock_env[300], console_env[64], log_name[64], runtime_env[360], dir[300];
	snprintf(sock_env, sizeof(sock_env), "SLIMLAND_GREETER_SOCKET=%s", mgr->greeters.socket);
	snprintf(console_env, sizeof(console_env), "SLIMLAND_CONSOLE=%s", c->id);
	snprintf(log_name, sizeof(log_name), "greeter-%s", c->id);
	/* its uid's own, mode 0700: no other greeter can enter it */
	greeter_dir(mgr, uid, dir, sizeof(dir));
	snprintf(runtime_env, sizeof(runtime_env), "XDG_RUNTIME_DIR=%s", dir);
	char *const env[] = { sock_env, console_env, runtime_env, NULL };
	struct slim_session *g = spawn_greeter(mgr, uid, env, log_name, c);
	if (!g) {
		/* what a failed start may have left goes, and the uid with it */
		release_uid(mgr, uid);
		return NULL;
	}
	slim_greeter_link(c, g);
	return g;
}

void slim_launch_greeter_ended(struct slim_session *g)
{
	struct slim_manager *mgr = g->mgr;
	if (slim_uid_pool_state(&mgr->greeters.uids, g->uid) != SLIM_UID_USED) {
		return;
	}
	/* a greeter that shared its uid (a damaged state file's): the uid stays its */
	struct slim_session *s;
	wl_list_for_each(s, &mgr->sessions, link) {
		if (s->greeter && s->uid == g->uid) {
			return;
		}
	}
	release_uid(mgr, g->uid);
}
