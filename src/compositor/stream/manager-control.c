#define _GNU_SOURCE /* accept4, explicit_bzero, struct ucred */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "manager-control.h"
#include "pacer.h"
#include "slim-log.h"

#define CONTROL_NAME "slimland-control"
/*
 * `active` is said at most this often: the manager's idle clock needs no
 * finer step, and typing must not become a stream of lines.
 */
#define ACTIVE_EVERY_US (10 * 1000000ull)

struct slim_control {
	int listen_fd, fd;
	struct wl_event_loop *loop;
	struct wl_event_source *listening, *readable;
	const struct slim_control_handler *handler;
	void *data;
	uint16_t port;
	uid_t manager_uid; /* the one peer allowed: the session manager's uid */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool created; /* the file at `path` is ours to remove */

	/* a line being received: at most SLIM_CONTROL_LINE_MAX bytes and its '\n' */
	char buf[SLIM_CONTROL_LINE_MAX + 1];
	size_t len;
	struct slim_ratelimit log_limit;

	uint64_t active_said_us; /* when `active` was last said; 0: not to this manager */
	bool inhibited;          /* what `inhibit` last said */
};

static void close_connection(struct slim_control *ctl, const char *why)
{
	if (ctl->fd < 0) {
		return;
	}
	slim_log(SLIM_LOG_INFO, "control: manager connection closed: %s", why);
	wl_event_source_remove(ctl->readable);
	ctl->readable = NULL;
	close(ctl->fd);
	ctl->fd = -1;
	ctl->len = 0;
}

__attribute__((format(printf, 2, 3)))
static void send_line(struct slim_control *ctl, const char *fmt, ...)
{
	if (ctl->fd < 0) {
		return;
	}
	char line[SLIM_CONTROL_LINE_MAX + 1];
	va_list args;
	va_start(args, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, args);
	va_end(args);
	if (n < 0 || (size_t)n >= sizeof(line) - 1) {
		return; /* no line of ours is this long */
	}
	line[n++] = '\n';
	/*
	 * A few bytes into an empty socket buffer: a manager that lets it fill
	 * up is not reading, and waiting for it would stall the session.
	 */
	if (send(ctl->fd, line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) != n) {
		close_connection(ctl, errno == EAGAIN ? "the manager does not read" : strerror(errno));
	}
}

static void run_line(struct slim_control *ctl, const char *line, size_t len)
{
	struct slim_control_line req;
	const char *why = NULL;
	if (!slim_control_line_parse(line, len, &req, &why)) {
		/* its first word only: an expect line carries a key */
		const char *space = memchr(line, ' ', len);
		size_t word = space ? (size_t)(space - line) : len;
		if (slim_ratelimit(&ctl->log_limit, slim_now_us())) {
			slim_log(SLIM_LOG_ERROR, "control: ignored a line (%s): %.*s...", why,
				(int)(word > 16 ? 16 : word), line);
		}
		return;
	}
	switch (req.request) {
	case SLIM_CONTROL_EXPECT:
		ctl->handler->expect(ctl->data, req.token, req.console_id, req.key);
		explicit_bzero(req.key, sizeof(req.key));
		break;
	case SLIM_CONTROL_DETACH:
		ctl->handler->detach(ctl->data);
		break;
	case SLIM_CONTROL_SHADOW:
		ctl->handler->shadow(ctl->data, &req);
		explicit_bzero(req.key, sizeof(req.key));
		break;
	case SLIM_CONTROL_UNSHADOW:
		ctl->handler->unshadow(ctl->data);
		break;
	case SLIM_CONTROL_PING:
		send_line(ctl, "pong");
		break;
	case SLIM_CONTROL_PONG:
		break;
	}
}

static int handle_readable(int fd, uint32_t mask, void *data)
{
	struct slim_control *ctl = data;
	ssize_t n = read(fd, ctl->buf + ctl->len, sizeof(ctl->buf) - ctl->len);
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			return 0;
		}
		close_connection(ctl, n == 0 ? "end of stream" : strerror(errno));
		return 0;
	}
	ctl->len += (size_t)n;
	size_t start = 0;
	char *nl;
	/* a handler may close the connection (a send that failed): check fd each time */
	while (ctl->fd >= 0 && (nl = memchr(ctl->buf + start, '\n', ctl->len - start))) {
		run_line(ctl, ctl->buf + start, (size_t)(nl - (ctl->buf + start)));
		start = (size_t)(nl - ctl->buf) + 1;
	}
	if (ctl->fd < 0) {
		return 0;
	}
	memmove(ctl->buf, ctl->buf + start, ctl->len - start);
	ctl->len -= start;
	/* what was read may have held a key: no copy of it stays behind */
	explicit_bzero(ctl->buf + ctl->len, start);
	if (ctl->len == sizeof(ctl->buf)) {
		/* no newline within the limit: this is no manager speaking the protocol */
		close_connection(ctl, "a line longer than 1024 bytes");
	}
	return 0;
}

static int handle_connection(int fd, uint32_t mask, void *data)
{
	struct slim_control *ctl = data;
	int conn = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (conn < 0) {
		if (errno != EAGAIN && slim_ratelimit(&ctl->log_limit, slim_now_us())) {
			slim_log(SLIM_LOG_ERROR, "control: accept: %s", strerror(errno));
		}
		return 0;
	}
	/*
	 * Peer check: the manager's uid, nobody else. The file's mode is not
	 * enough: any process of this compositor's own uid (its clients) could
	 * otherwise take this socket from the manager, which would then end
	 * this session. The manager's connection is kept.
	 */
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1 };
	socklen_t len = sizeof(cred);
	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
			cred.uid != ctl->manager_uid) {
		if (slim_ratelimit(&ctl->log_limit, slim_now_us())) {
			slim_log(SLIM_LOG_ERROR, "control: refused a connection from uid %d (pid %d): "
				"only the session manager's uid %u may connect", (int)cred.uid,
				(int)cred.pid, (unsigned)ctl->manager_uid);
		}
		close(conn);
		return 0;
	}
	/* the manager restarted, or reconnects: it alone speaks for this session */
	close_connection(ctl, "replaced by a new connection");
	ctl->readable = wl_event_loop_add_fd(ctl->loop, conn, WL_EVENT_READABLE,
		handle_readable, ctl);
	if (!ctl->readable) {
		close(conn);
		return 0;
	}
	ctl->fd = conn;
	slim_log(SLIM_LOG_INFO, "control: session manager connected");
	send_line(ctl, "hello %u %ld", ctl->port, (long)getpid());
	ctl->active_said_us = 0;
	if (ctl->inhibited) {
		send_line(ctl, "inhibit 1");
	}
	return 0;
}

/*
 * A file left at `path` by a compositor that died is taken over; a live one
 * is not. Peer check: none to make, nothing is said on this connection.
 */
static bool path_in_use(const struct sockaddr_un *addr)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return false;
	}
	bool live = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0;
	close(fd);
	return live;
}

static bool open_socket(struct slim_control *ctl)
{
	const char *dir = getenv("XDG_RUNTIME_DIR");
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (!dir || dir[0] != '/') {
		slim_log(SLIM_LOG_ERROR, "control: --managed needs XDG_RUNTIME_DIR");
		return false;
	}
	int n = snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/" CONTROL_NAME, dir);
	if (n < 0 || (size_t)n >= sizeof(addr.sun_path)) {
		slim_log(SLIM_LOG_ERROR, "control: XDG_RUNTIME_DIR is too long for a socket path");
		return false;
	}
	memcpy(ctl->path, addr.sun_path, sizeof(ctl->path));
	if (path_in_use(&addr)) {
		slim_log(SLIM_LOG_ERROR, "control: %s: another compositor is listening there",
			ctl->path);
		return false;
	}
	unlink(ctl->path);
	ctl->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ctl->listen_fd < 0) {
		slim_log(SLIM_LOG_ERROR, "control: socket: %s", strerror(errno));
		return false;
	}
	/* 0600 from the start: the umask decides the mode bind() creates the file with */
	mode_t old = umask(0177);
	int bound = bind(ctl->listen_fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old);
	if (bound != 0 || listen(ctl->listen_fd, 4) != 0) {
		slim_log(SLIM_LOG_ERROR, "control: cannot listen at %s: %s", ctl->path,
			strerror(errno));
		return false;
	}
	ctl->created = true;
	return chmod(ctl->path, 0600) == 0;
}

struct slim_control *slim_control_create(struct wl_event_loop *loop, uint16_t port,
		uid_t manager_uid, const struct slim_control_handler *handler, void *data)
{
	struct slim_control *ctl = calloc(1, sizeof(*ctl));
	if (!ctl) {
		return NULL;
	}
	ctl->listen_fd = ctl->fd = -1;
	ctl->loop = loop;
	ctl->port = port;
	ctl->manager_uid = manager_uid;
	ctl->handler = handler;
	ctl->data = data;
	ctl->log_limit = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	if (!open_socket(ctl)) {
		slim_control_destroy(ctl);
		return NULL;
	}
	ctl->listening = wl_event_loop_add_fd(loop, ctl->listen_fd, WL_EVENT_READABLE,
		handle_connection, ctl);
	if (!ctl->listening) {
		slim_control_destroy(ctl);
		return NULL;
	}
	slim_log(SLIM_LOG_INFO, "control: managed; the session manager connects to %s",
		ctl->path);
	return ctl;
}

void slim_control_destroy(struct slim_control *ctl)
{
	if (!ctl) {
		return;
	}
	close_connection(ctl, "the compositor exits");
	if (ctl->listening) {
		wl_event_source_remove(ctl->listening);
	}
	if (ctl->listen_fd >= 0) {
		close(ctl->listen_fd);
	}
	if (ctl->created) {
		unlink(ctl->path);
	}
	free(ctl);
}

void slim_control_attached(struct slim_control *ctl, const char console_id[SLIM_CONSOLE_ID_LEN],
		uint32_t width, uint32_t height)
{
	if (!ctl) {
		return; /* not managed */
	}
	char hex[2 * SLIM_CONSOLE_ID_LEN + 1];
	slim_control_console_hex(console_id, hex);
	send_line(ctl, "attached %s %ux%u", hex, width, height);
}

void slim_control_detached(struct slim_control *ctl, const char console_id[SLIM_CONSOLE_ID_LEN])
{
	if (!ctl) {
		return;
	}
	char hex[2 * SLIM_CONSOLE_ID_LEN + 1];
	slim_control_console_hex(console_id, hex);
	send_line(ctl, "detached %s", hex);
}

void slim_control_active(struct slim_control *ctl)
{
	uint64_t now = slim_now_us();
	if (!ctl || ctl->fd < 0 ||
			(ctl->active_said_us && now - ctl->active_said_us < ACTIVE_EVERY_US)) {
		return;
	}
	ctl->active_said_us = now;
	send_line(ctl, "active");
}

void slim_control_audio(struct slim_control *ctl, const char console_id[SLIM_CONSOLE_ID_LEN],
		const char *codec, unsigned kbit, unsigned depth_ms, unsigned loss_permille,
		unsigned lost_permille)
{
	if (!ctl) {
		return;
	}
	char hex[2 * SLIM_CONSOLE_ID_LEN + 1];
	slim_control_console_hex(console_id, hex);
	send_line(ctl, "audio %s %s %u %u %u %u", hex, codec, kbit, depth_ms, loss_permille,
		lost_permille);
}

void slim_control_link(struct slim_control *ctl, const char console_id[SLIM_CONSOLE_ID_LEN],
		const struct slim_pacer_stats *st)
{
	if (!ctl) {
		return;
	}
	char hex[2 * SLIM_CONSOLE_ID_LEN + 1];
	slim_control_console_hex(console_id, hex);
	send_line(ctl, "link %s %llu %llu %llu %llu %llu %llu", hex,
		(unsigned long long)(st->rate_bps / 1000), (unsigned long long)(st->pacing_bps / 1000),
		(unsigned long long)st->rtt_us, (unsigned long long)st->min_rtt_us,
		(unsigned long long)st->backlog_bytes, (unsigned long long)st->dropped);
}

void slim_control_video(struct slim_control *ctl, const char console_id[SLIM_CONSOLE_ID_LEN],
		const struct slim_control_video *v)
{
	if (!ctl) {
		return;
	}
	char hex[2 * SLIM_CONSOLE_ID_LEN + 1];
	slim_control_console_hex(console_id, hex);
	/* the device is a preset's or a node's name: one word, no spaces */
	char device[64];
	snprintf(device, sizeof(device), "%s", v->device);
	for (char *c = device; *c; c++) {
		*c = (*c == ' ' || *c == '\t') ? '_' : *c;
	}
	send_line(ctl, "video %s %s %s %llu %llu %llu %u %u", hex, v->kind, device,
		(unsigned long long)(v->bitrate_bps / 1000),
		(unsigned long long)(v->encode_ms_p50 * 1000),
		(unsigned long long)(v->encode_ms_p99 * 1000), v->width, v->height);
}

void slim_control_traffic(struct slim_control *ctl, const char console_id[SLIM_CONSOLE_ID_LEN],
		const struct slim_encoder_stats *st, const struct slim_key_latency *keys)
{
	if (!ctl) {
		return;
	}
	char hex[2 * SLIM_CONSOLE_ID_LEN + 1];
	slim_control_console_hex(console_id, hex);
	send_line(ctl, "traffic %s %llu %llu %llu %llu", hex, (unsigned long long)st->bytes,
		(unsigned long long)st->datagrams, (unsigned long long)st->recovered_seqs,
		(unsigned long long)st->video_resent);
	char line[SLIM_KEY_BUCKETS * 21 + 1] = "";
	size_t used = 0;
	for (int i = 0; i < SLIM_KEY_BUCKETS; i++) {
		used += (size_t)snprintf(line + used, sizeof(line) - used, " %llu",
			(unsigned long long)keys->buckets[i]);
	}
	send_line(ctl, "keys %s %llu %llu%s", hex, (unsigned long long)keys->count,
		(unsigned long long)keys->sum_us, line);
}

void slim_control_inhibit(struct slim_control *ctl, bool inhibited)
{
	if (!ctl || ctl->inhibited == inhibited) {
		return;
	}
	ctl->inhibited = inhibited;
	send_line(ctl, "inhibit %d", inhibited ? 1 : 0);
}

void slim_control_shadow_ready(struct slim_control *ctl, uint16_t port)
{
	if (ctl) {
		send_line(ctl, "shadow-ready %u", port);
	}
}

void slim_control_shadow_refused(struct slim_control *ctl, const char *why)
{
	if (ctl) {
		send_line(ctl, "shadow-refused %s", why);
	}
}

void slim_control_shadow_attached(struct slim_control *ctl,
		const char console_id[SLIM_CONSOLE_ID_LEN])
{
	if (ctl) {
		char hex[2 * SLIM_CONSOLE_ID_LEN + 1];
		slim_control_console_hex(console_id, hex);
		send_line(ctl, "shadow-attached %s", hex);
	}
}

void slim_control_shadow_ended(struct slim_control *ctl, const char *why)
{
	if (ctl) {
		send_line(ctl, "shadow-ended %s", why);
	}
}
