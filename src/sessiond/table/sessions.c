/*
 * The session manager's table (sessions-internal.h lists its files): the
 * manager itself, and its sessions, each a compositor it started or found
 * again after a restart, from the moment it is added until it exits.
 */
#define _GNU_SOURCE /* pidfd_send_signal via syscall, explicit_bzero */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sessions-internal.h"
#include "slim-alloc.h"

/* The manager */

uint64_t slim_manager_now(struct slim_manager *mgr)
{
	return mgr->ops->now ? mgr->ops->now(mgr->ops_data) : slim_now_us();
}

void slim_manager_changed(struct slim_manager *mgr)
{
	if (mgr->ops->changed && !mgr->restoring) {
		mgr->ops->changed(mgr->ops_data);
	}
}

void slim_manager_card_where(struct slim_manager *mgr, const uint8_t hash[32],
		struct slim_card_where *out)
{
	memset(out, 0, sizeof(*out));
	if (mgr->elsewhere) {
		mgr->elsewhere->card_lookup(mgr->elsewhere_data, hash, out);
	}
}

bool slim_manager_login_elsewhere(struct slim_manager *mgr, struct slim_wire_move *move,
		char *server, size_t size)
{
	return mgr->elsewhere &&
		mgr->elsewhere->login_server(mgr->elsewhere_data, move, server, size);
}

struct slim_manager *slim_manager_create(struct wl_event_loop *loop,
		const struct slim_config *config, const char *run_dir,
		const uint8_t card_key[SLIM_SEC_KEY_LEN], const char *enroll_path,
		const uint8_t *host_key, const struct slim_manager_ops *ops, void *ops_data)
{
	struct slim_manager *mgr = slim_znew(struct slim_manager);
	if (!slim_enroll_init(&mgr->enroll, enroll_path, config->enroll)) {
		free(mgr);
		return NULL;
	}
	memcpy(mgr->card_key, card_key, sizeof(mgr->card_key));
	if (host_key) {
		memcpy(mgr->host_key, host_key, sizeof(mgr->host_key));
	}
	mgr->loop = loop;
	mgr->config = *config;
	mgr->ops = ops;
	mgr->ops_data = ops_data;
	mgr->greeters.check_peer = true;
	snprintf(mgr->run_dir, sizeof(mgr->run_dir), "%s", run_dir);
	snprintf(mgr->greeters.socket, sizeof(mgr->greeters.socket), "%s/greeter.sock", run_dir);
	wl_list_init(&mgr->sessions);
	wl_list_init(&mgr->consoles);
	wl_list_init(&mgr->bindings);
	wl_signal_init(&mgr->events.destroy);
	mgr->next_session_id = 1;
	mgr->log_rl = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	mgr->login_rl = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	for (size_t i = 0; i < sizeof(mgr->refuse.source) / sizeof(mgr->refuse.source[0]); i++) {
		mgr->refuse.source[i] = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(2);
	}
	mgr->refuse.all = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(200);
	mgr->sweep.timer = wl_event_loop_add_timer(loop, slim_manager_console_sweep, mgr);
	mgr->heartbeat.timer = wl_event_loop_add_timer(loop, slim_manager_heartbeat, mgr);
	mgr->greeters.uid_timer = wl_event_loop_add_timer(loop, slim_launch_uid_retry, mgr);
	if (!mgr->sweep.timer || !mgr->heartbeat.timer || !mgr->greeters.uid_timer ||
			!slim_uid_pool_init(&mgr->greeters.uids, config->greeter_uid_first,
				config->greeter_uid_last)) {
		if (mgr->sweep.timer) {
			wl_event_source_remove(mgr->sweep.timer);
		}
		if (mgr->heartbeat.timer) {
			wl_event_source_remove(mgr->heartbeat.timer);
		}
		if (mgr->greeters.uid_timer) {
			wl_event_source_remove(mgr->greeters.uid_timer);
		}
		slim_enroll_finish(&mgr->enroll);
		free(mgr);
		return NULL;
	}
	/* a greeter must never share a uid with a user, nor with a user's container */
	mgr->greeters.uids.greeter_user = mgr->config.greeter_user;
	slim_uid_pool_refuse_users(&mgr->greeters.uids, "/etc/subuid");
	return mgr;
}

/*
 * What the session holds of the outside: its control, its exit's watch,
 * its timer, its pidfd and its login worker (whose PAM session stays open
 * until the compositor exits).
 */
static void session_release(struct slim_session *s)
{
	struct slim_manager *mgr = s->mgr;
	slim_compositor_control_destroy(s->control);
	s->control = NULL;
	if (s->pidfd_source) {
		wl_event_source_remove(s->pidfd_source);
	}
	if (s->detach_timer) {
		wl_event_source_remove(s->detach_timer);
	}
	if (s->pidfd >= 0) {
		close(s->pidfd);
	}
	if (s->login) {
		mgr->ops->login_cancel(mgr->ops_data, s->login);
	}
}

void slim_manager_destroy(struct slim_manager *mgr)
{
	if (!mgr) {
		return;
	}
	/*
	 * Compositors keep running and PAM sessions stay open: a restarted
	 * manager finds them in the state file. Only our own handles go.
	 */
	/* the front's clients of the manager first: they point into the table */
	wl_signal_emit(&mgr->events.destroy, mgr);
	struct slim_console *c, *ctmp;
	wl_list_for_each_safe(c, ctmp, &mgr->consoles, link) {
		slim_console_destroy(c);
	}
	/* the greeters keep running too, and connect to the next manager */
	struct slim_binding *b, *btmp;
	wl_list_for_each_safe(b, btmp, &mgr->bindings, link) {
		wl_list_remove(&b->link);
		free(b);
	}
	struct slim_session *s, *stmp;
	wl_list_for_each_safe(s, stmp, &mgr->sessions, link) {
		wl_list_remove(&s->link);
		session_release(s);
		free(s);
	}
	wl_event_source_remove(mgr->sweep.timer);
	wl_event_source_remove(mgr->heartbeat.timer);
	wl_event_source_remove(mgr->greeters.uid_timer);
	slim_uid_pool_finish(&mgr->greeters.uids);
	slim_enroll_finish(&mgr->enroll);
	explicit_bzero(mgr->card_key, sizeof(mgr->card_key));
	free(mgr);
}

struct slim_session *slim_manager_session(struct slim_manager *mgr, uint32_t id)
{
	struct slim_session *s;
	wl_list_for_each(s, &mgr->sessions, link) {
		if (s->id == id) {
			return s;
		}
	}
	return NULL;
}

/* Sessions */

static int handle_detach_timeout(void *data)
{
	struct slim_session *s = data;
	if (!s->console && !s->ending) {
		slim_log(SLIM_LOG_INFO, "session %u (%s): detached for %u s, ending it",
			s->id, s->user, s->mgr->config.detached_timeout_s);
		slim_session_end(s);
	}
	return 0;
}

void slim_session_now_detached(struct slim_session *s)
{
	unsigned timeout = s->mgr->config.detached_timeout_s;
	if (s->greeter || timeout == 0) {
		return;
	}
	if (!s->detach_timer) {
		s->detach_timer = wl_event_loop_add_timer(s->mgr->loop, handle_detach_timeout, s);
	}
	if (s->detach_timer) {
		wl_event_source_timer_update(s->detach_timer,
			timeout > 2000000 ? 2000000000 : (int)(timeout * 1000));
	}
}

static int handle_pidfd(int fd, uint32_t mask, void *data)
{
	struct slim_session *s = data;
	slim_log(SLIM_LOG_INFO, "session %u (%s): compositor %d exited", s->id, s->user, s->pid);
	slim_session_destroy(s);
	return 0;
}

struct slim_session *slim_session_add(struct slim_manager *mgr, uint32_t id,
		const char *user, uid_t uid, pid_t pid, int pidfd,
		const char *control_path, int control_fd, bool greeter)
{
	struct slim_session *s = calloc(1, sizeof(*s));
	if (!s) {
		goto fail;
	}
	if (id == 0) {
		id = mgr->next_session_id;
	}
	if (id >= mgr->next_session_id) {
		mgr->next_session_id = id + 1;
	}
	s->mgr = mgr;
	s->id = id;
	s->greeter = greeter;
	snprintf(s->user, sizeof(s->user), "%s", user);
	s->uid = uid;
	s->pid = pid;
	s->pidfd = pidfd;
	snprintf(s->control_path, sizeof(s->control_path), "%s", control_path ? control_path : "");
	s->active_us = slim_now_us();
	wl_signal_init(&s->events.destroy);
	wl_list_insert(mgr->sessions.prev, &s->link);
	if (pidfd >= 0) {
		s->pidfd_source = wl_event_loop_add_fd(mgr->loop, pidfd, WL_EVENT_READABLE,
			handle_pidfd, s);
	}
	/* control_fd is the control's from here, made or not */
	struct slim_compositor_control_owner owner = {
		.loop = mgr->loop,
		.session = id,
		.uid = uid,
		.pid = pid,
		.at_once = mgr->restoring,
		.log_rl = &mgr->log_rl,
		.handler = &slim_session_control,
		.data = s,
	};
	s->control = slim_compositor_control_create(&owner, control_path, control_fd);
	if (!s->control || (pidfd >= 0 && !s->pidfd_source)) {
		/* one that could not be told anything, or whose exit would go unheard */
		slim_log(SLIM_LOG_ERROR, "session %u: cannot watch its %s", id,
			s->control ? "compositor" : "control socket");
		slim_session_end(s);
		slim_session_destroy(s);
		return NULL;
	}
	slim_manager_changed(mgr);
	return s;
fail:
	if (pidfd >= 0) {
		close(pidfd);
	}
	if (control_fd >= 0) {
		close(control_fd);
	}
	return NULL;
}

void slim_session_end(struct slim_session *s)
{
	s->ending = true;
	/* the pidfd, where there is one, cannot hit a recycled PID */
	if (s->pidfd >= 0) {
		if (syscall(SYS_pidfd_send_signal, s->pidfd, SIGTERM, NULL, 0) < 0 &&
				errno != ESRCH) {
			slim_log(SLIM_LOG_ERROR, "session %u: SIGTERM: %s", s->id, strerror(errno));
		}
	} else if (s->pid > 0) {
		kill(s->pid, SIGTERM);
	}
}

void slim_session_destroy(struct slim_session *s)
{
	if (!s) {
		return;
	}
	struct slim_manager *mgr = s->mgr;
	/* what points at it lets go (a console whose card asked for it) */
	wl_signal_emit(&s->events.destroy, s);
	wl_list_remove(&s->link);
	wl_list_init(&s->link);
	struct slim_binding *b, *btmp;
	wl_list_for_each_safe(b, btmp, &mgr->bindings, link) {
		if (b->session == s) {
			wl_list_remove(&b->link);
			free(b);
		}
	}
	if (!s->greeter && s->pid > 0 && mgr->ops->session_ended) {
		mgr->ops->session_ended(mgr->ops_data, s->uid, s->id);
	}
	/* the worker closes the PAM session once the compositor has exited */
	session_release(s);
	if (s->greeter) {
		slim_launch_greeter_ended(s);
	}
	struct slim_console *shown_on = s->console;
	if (s->greeter_for && s->greeter_for->greeter.session == s) {
		slim_greeter_unlink(s->greeter_for);
	}
	if (shown_on) {
		slim_show_unlink(shown_on);
		slim_console_stop_redirect(shown_on);
		if (s->greeter) {
			/* the greeter died under its console: start another, after a pause */
			slim_console_transition(shown_on, SLIM_CONSOLE_BLANK);
			slim_console_greeter_retry_later(shown_on);
		} else {
			slim_console_to_greeter(shown_on, SLIM_WHY_SESSION_ENDED);
		}
	}
	free(s);
	slim_manager_changed(mgr);
}

/* The idle clock */

void slim_session_touch(struct slim_session *s)
{
	if (s->console && s->inhibited) {
		s->active_us = slim_now_us();
	}
}

uint64_t slim_session_idle_us(struct slim_session *s)
{
	slim_session_touch(s);
	uint64_t now = slim_now_us();
	return now > s->active_us ? now - s->active_us : 0;
}
