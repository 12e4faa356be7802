#define _GNU_SOURCE /* struct ucred, SOCK_CLOEXEC, explicit_bzero */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "greeter-socket.h"
#include "slim-lines.h"
#include "sessions.h"

struct slim_greeter_server {
	struct slim_manager *mgr;
	int fd;
	struct wl_event_source *source;
};

struct slim_greeter_client {
	struct slim_manager *mgr;
	int fd;
	struct wl_event_source *source;
	struct wl_event_source *error_timer;
	struct slim_lines lines;
	struct slim_console *console; /* after `hello` */
	pid_t peer_pid;
	uid_t peer_uid;
	char error[256]; /* the `error` line waiting for its delay */
	struct wl_listener console_destroy;
	struct wl_listener console_message;
	struct wl_listener console_choice;
	struct wl_listener console_login_done;
	struct wl_listener manager_destroy;
};

/* The client no longer serves its console (it goes, or serves another). */
static void client_unhook(struct slim_greeter_client *client)
{
	if (client->console) {
		wl_list_remove(&client->console_destroy.link);
		wl_list_remove(&client->console_message.link);
		wl_list_remove(&client->console_choice.link);
		wl_list_remove(&client->console_login_done.link);
		client->console = NULL;
	}
}

static void client_destroy(struct slim_greeter_client *client)
{
	client_unhook(client);
	wl_list_remove(&client->manager_destroy.link);
	wl_event_source_remove(client->source);
	wl_event_source_remove(client->error_timer);
	close(client->fd);
	free(client);
}

static void handle_console_destroy(struct wl_listener *listener, void *data)
{
	struct slim_greeter_client *client = wl_container_of(listener, client, console_destroy);
	client_unhook(client);
}

static void handle_console_message(struct wl_listener *listener, void *data)
{
	struct slim_greeter_client *client = wl_container_of(listener, client, console_message);
	const char *text = data;
	slim_line_send(client->fd, "message %s", text);
}

/* `choice TEXT<tab>LABEL<tab>LABEL...`: the greeter shows a button for each label. */
static void send_choice(struct slim_greeter_client *client, const struct slim_console_choice *ch)
{
	char line[SLIM_CHOICE_MAX * 81 + 256];
	snprintf(line, sizeof(line), "%s", ch->text);
	for (int i = 0; i < ch->n_labels; i++) {
		size_t n = strlen(line);
		snprintf(line + n, sizeof(line) - n, "\t%s", ch->labels[i]);
	}
	slim_line_send(client->fd, "choice %s", line);
}

static void handle_console_choice(struct wl_listener *listener, void *data)
{
	struct slim_greeter_client *client = wl_container_of(listener, client, console_choice);
	send_choice(client, data);
}

/* A login at its console ended: `ok` now, or `error TEXT` after the failure's delay. */
static void handle_console_login_done(struct wl_listener *listener, void *data)
{
	struct slim_greeter_client *client = wl_container_of(listener, client, console_login_done);
	const struct slim_console_login_done *done = data;
	if (!done->error) {
		slim_line_send(client->fd, "ok");
		return;
	}
	snprintf(client->error, sizeof(client->error), "%s", done->error);
	wl_event_source_timer_update(client->error_timer, (int)done->delay_ms);
}

/* The manager goes: its greeters keep running, and connect to the next one. */
static void handle_manager_destroy(struct wl_listener *listener, void *data)
{
	struct slim_greeter_client *client = wl_container_of(listener, client, manager_destroy);
	client_destroy(client);
}

/* The client serves `c`, the only one to: a client that served it before lets go. */
static void client_hook(struct slim_greeter_client *client, struct slim_console *c)
{
	struct wl_listener *other = wl_signal_get(&c->events.message, handle_console_message);
	if (other) {
		struct slim_greeter_client *before = wl_container_of(other, before, console_message);
		client_unhook(before);
	}
	client->console = c;
	client->console_destroy.notify = handle_console_destroy;
	wl_signal_add(&c->events.destroy, &client->console_destroy);
	client->console_message.notify = handle_console_message;
	wl_signal_add(&c->events.message, &client->console_message);
	client->console_choice.notify = handle_console_choice;
	wl_signal_add(&c->events.choice, &client->console_choice);
	client->console_login_done.notify = handle_console_login_done;
	wl_signal_add(&c->events.login_done, &client->console_login_done);
}

static int handle_error_timer(void *data)
{
	struct slim_greeter_client *client = data;
	if (client->error[0]) {
		slim_line_send(client->fd, "error %s", client->error);
		client->error[0] = '\0';
	}
	return 0;
}

/*
 * Whether the peer is the console's greeter: of its uid, and inside its
 * compositor (its session).
 */
static bool peer_belongs(struct slim_greeter_client *client, struct slim_console *c)
{
	if (!client->mgr->greeters.check_peer) {
		return true;
	}
	struct slim_session *g = c->greeter.session;
	if (!g || client->peer_pid <= 0 || client->peer_uid != g->uid) {
		return false;
	}
	/* spawn.c starts every compositor with setsid: its clients share its session */
	pid_t sid = getsid(client->peer_pid);
	return sid == g->pid;
}

static void handle_hello(struct slim_greeter_client *client, const char *id)
{
	struct slim_console *c = slim_manager_console(client->mgr, id);
	if (!c || !peer_belongs(client, c)) {
		slim_line_send(client->fd, "error No such console");
		return;
	}
	if (client->console != c) {
		/* a second hello, for another console: the first no longer has this client */
		client_unhook(client);
		client_hook(client, c);
	}
	if (c->choice.kind != SLIM_CHOICE_NONE) {
		send_choice(client, &c->choice);
	} else if (c->greeter.message[0]) {
		slim_line_send(client->fd, "message %s", c->greeter.message);
	}
}

/* `chose N`: the person at the greeter chose the Nth label (from 0). */
static void handle_chose(struct slim_greeter_client *client, const char *n)
{
	char *end;
	long i = strtol(n, &end, 10);
	if (!client->console || *end || end == n || i < 0 || i >= SLIM_CHOICE_MAX ||
			!slim_console_chose(client->console, (int)i)) {
		slim_line_send(client->fd, "error Bad request");
	}
}

static void handle_login(struct slim_greeter_client *client, const char *user, const char *hex)
{
	struct slim_console *c = client->console;
	struct slim_manager *mgr = client->mgr;
	if (!c) {
		slim_line_send(client->fd, "error Say hello first");
		return;
	}
	uint64_t now = slim_now_us();
	if (client->error[0] || c->login.worker || now < c->login.blocked_until_us) {
		/* a login runs, or the previous failure's delay: nothing is tried meanwhile */
		slim_line_send(client->fd, "error Please wait a moment");
		return;
	}
	char password[512];
	size_t n = strlen(hex) / 2;
	if (strlen(hex) % 2 || n >= sizeof(password) ||
			!slim_hex_decode((uint8_t *)password, n, hex) ||
			memchr(password, '\0', n) || strlen(user) > 64) {
		slim_line_send(client->fd, "error Bad request");
		return;
	}
	password[n] = '\0';
	const char *why = "Login failed";
	/* the worker has its own copy of the password: ours goes at once */
	bool started = slim_manager_login(mgr, c, user, password, &why);
	explicit_bzero(password, sizeof(password));
	if (!started) {
		slim_console_login_done(c, why);
	}
	/* else the answer comes when the login worker reports */
}

static void handle_line(struct slim_greeter_client *client, char *line)
{
	char *f[3];
	int n = slim_split(line, f, 3);
	if (n == 2 && strcmp(f[0], "hello") == 0) {
		handle_hello(client, f[1]);
	} else if (n == 2 && strcmp(f[0], "chose") == 0) {
		handle_chose(client, f[1]);
	} else if (n == 3 && strcmp(f[0], "login") == 0) {
		handle_login(client, f[1], f[2]);
	} else {
		slim_line_send(client->fd, "error Bad request");
	}
}

static int handle_client(int fd, uint32_t mask, void *data)
{
	struct slim_greeter_client *client = data;
	enum slim_lines_status status = (mask & WL_EVENT_READABLE) ?
		slim_lines_fill(&client->lines, fd) : SLIM_LINES_CLOSED;
	char *line;
	while ((line = slim_lines_next(&client->lines))) {
		handle_line(client, line);
	}
	if (client->lines.len == 0) {
		/* the buffer may have held a password: wipe it once nothing is pending */
		explicit_bzero(client->lines.buf, sizeof(client->lines.buf));
		slim_lines_init(&client->lines);
	}
	if (status == SLIM_LINES_CLOSED) {
		client_destroy(client);
	}
	return 0;
}

struct slim_greeter_client *slim_greeter_client_create(struct slim_manager *mgr, int fd)
{
	struct slim_greeter_client *client = calloc(1, sizeof(*client));
	if (!client) {
		close(fd);
		return NULL;
	}
	client->mgr = mgr;
	client->fd = fd;
	slim_lines_init(&client->lines);
	client->peer_uid = (uid_t)-1;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
		client->peer_pid = cred.pid;
		client->peer_uid = cred.uid;
	}
	client->source = wl_event_loop_add_fd(mgr->loop, fd, WL_EVENT_READABLE,
		handle_client, client);
	client->error_timer = wl_event_loop_add_timer(mgr->loop, handle_error_timer, client);
	if (!client->source || !client->error_timer) {
		if (client->source) {
			wl_event_source_remove(client->source);
		}
		close(fd);
		free(client);
		return NULL;
	}
	client->manager_destroy.notify = handle_manager_destroy;
	wl_signal_add(&mgr->events.destroy, &client->manager_destroy);
	return client;
}

/* Whether a greeter in the table runs as uid (each has one of greeter_uids). */
static bool greeter_uid(struct slim_manager *mgr, uid_t uid)
{
	struct slim_session *s;
	wl_list_for_each(s, &mgr->sessions, link) {
		if (s->greeter && !s->ending && s->uid == uid) {
			return true;
		}
	}
	return false;
}

static int handle_accept(int fd, uint32_t mask, void *data)
{
	struct slim_greeter_server *server = data;
	int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (cfd < 0) {
		return 0;
	}
	/*
	 * Peer check: the uid of a greeter that runs, whatever the file's mode
	 * says; then `hello` takes only a process of that console's greeter,
	 * of its uid and in its compositor's session (peer_belongs).
	 */
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1 };
	socklen_t len = sizeof(cred);
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
			!greeter_uid(server->mgr, cred.uid)) {
		if (slim_ratelimit(&server->mgr->log_rl, slim_now_us())) {
			slim_log(SLIM_LOG_ERROR, "greeter socket: refused pid %d of uid %u: "
				"no greeter's", (int)cred.pid, (unsigned)cred.uid);
		}
		close(cfd);
		return 0;
	}
	slim_greeter_client_create(server->mgr, cfd);
	return 0;
}

struct slim_greeter_server *slim_greeter_server_create(struct slim_manager *mgr)
{
	struct slim_greeter_server *server = calloc(1, sizeof(*server));
	if (!server) {
		return NULL;
	}
	server->mgr = mgr;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(mgr->greeters.socket) >= sizeof(sun.sun_path)) {
		free(server);
		return NULL;
	}
	memcpy(sun.sun_path, mgr->greeters.socket, strlen(mgr->greeters.socket) + 1);
	server->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (server->fd < 0) {
		goto fail;
	}
	unlink(sun.sun_path);
	/* created 0600 and opened up only after the group is set: never too open */
	mode_t old = umask(0177);
	int ret = bind(server->fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (ret < 0 || listen(server->fd, 16) < 0) {
		slim_log(SLIM_LOG_ERROR, "greeter socket %s: %s", sun.sun_path, strerror(errno));
		goto fail;
	}
	/* the greeters' group: each greeter's uid has the greeter user's gid */
	struct passwd *pw = getpwnam(mgr->config.greeter_user);
	if (pw) {
		if (chown(sun.sun_path, 0, pw->pw_gid) < 0 && geteuid() == 0) {
			slim_log(SLIM_LOG_ERROR, "greeter socket: chown: %s", strerror(errno));
		}
	} else {
		slim_log(SLIM_LOG_ERROR, "greeter user %s does not exist", mgr->config.greeter_user);
	}
	chmod(sun.sun_path, 0660);
	server->source = wl_event_loop_add_fd(mgr->loop, server->fd, WL_EVENT_READABLE,
		handle_accept, server);
	if (!server->source) {
		goto fail;
	}
	return server;
fail:
	if (server->fd >= 0) {
		close(server->fd);
	}
	free(server);
	return NULL;
}

void slim_greeter_server_destroy(struct slim_greeter_server *server)
{
	if (!server) {
		return;
	}
	wl_event_source_remove(server->source);
	close(server->fd);
	unlink(server->mgr->greeters.socket);
	free(server);
}
