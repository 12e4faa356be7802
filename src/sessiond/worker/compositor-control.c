#define _GNU_SOURCE /* SOCK_NONBLOCK, SOCK_CLOEXEC, struct ucred */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "compositor-control.h"
#include "slim-hex.h"
#include "slim-lines.h"

struct slim_compositor_control {
	struct slim_compositor_control_owner owner;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int fd;
	bool connected;
	unsigned attempts;
	struct wl_event_source *fd_source;
	struct wl_event_source *retry_timer;
	struct slim_lines lines;
	bool *destroyed; /* set while its handlers run: one may destroy it */
};

/* A console id as the control socket says it (§2: lowercase hex of its bytes). */
static bool parse_console(const char *hex, char out[SLIM_CONSOLE_ID_LEN + 1])
{
	size_t n = strlen(hex) / 2;
	if (n == 0 || n > SLIM_CONSOLE_ID_LEN || strlen(hex) % 2 ||
			!slim_hex_decode((uint8_t *)out, n, hex) || memchr(out, '\0', n)) {
		return false;
	}
	out[n] = '\0';
	return true;
}

/* `audio CONSOLE CODEC KBIT DEPTH_MS LOSS LOST` (§2), fields after the word. */
static bool parse_audio(char **f, struct slim_session_audio *audio)
{
	unsigned long v[4];
	if (!parse_console(f[0], audio->console) ||
			(strcmp(f[1], "opus") != 0 && strcmp(f[1], "pcm") != 0)) {
		return false;
	}
	static const unsigned long max[4] = { 100000, 60000, 1000, 1000 };
	for (int i = 0; i < 4; i++) {
		if (!slim_parse_ulong(f[2 + i], max[i], &v[i])) {
			return false;
		}
	}
	snprintf(audio->codec, sizeof(audio->codec), "%s", f[1]);
	audio->kbit = (unsigned)v[0];
	audio->depth_ms = (unsigned)v[1];
	audio->loss_permille = (unsigned)v[2];
	audio->lost_permille = (unsigned)v[3];
	return true;
}

/*
 * `link CONSOLE RATE_KBIT PACING_KBIT RTT_US MIN_RTT_US QUEUE_BYTES
 * DROPPED` (§2), fields after the word; each bounded by what a link can be.
 */
static bool parse_link(char **f, struct slim_session_net *net)
{
	static const unsigned long max[6] = {
		100000000, 100000000, 60000000, 60000000, 1ul << 30, 0xffffffff,
	};
	unsigned long v[6];
	for (int i = 0; i < 6; i++) {
		if (!slim_parse_ulong(f[1 + i], max[i], &v[i])) {
			return false;
		}
	}
	/* a minimum above the round trip it is the minimum of is no report */
	if (v[3] > v[2]) {
		return false;
	}
	*net = (struct slim_session_net){
		.rate_kbit = v[0], .pacing_kbit = v[1], .rtt_us = v[2], .min_rtt_us = v[3],
		.queue_bytes = v[4], .dropped = v[5],
	};
	return parse_console(f[0], net->console);
}

/* A word of letters, digits and `._-/`, shorter than `size`: nothing else reaches a listing. */
static bool word(const char *w, size_t size)
{
	size_t n = strlen(w);
	return n > 0 && n < size && strspn(w, "abcdefghijklmnopqrstuvwxyz"
		"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") == n;
}

/*
 * `video CONSOLE KIND DEVICE KBIT ENCODE_P50_US ENCODE_P99_US WIDTH HEIGHT`
 * (§2), fields after the word.
 */
static bool parse_video(char **f, struct slim_session_video *video)
{
	unsigned long v[5];
	static const unsigned long max[5] = { 100000000, 60000000, 60000000, SLIM_MAX_DIM,
		SLIM_MAX_DIM };
	for (int i = 0; i < 5; i++) {
		if (!slim_parse_ulong(f[3 + i], max[i], &v[i])) {
			return false;
		}
	}
	if ((strcmp(f[1], "software") != 0 && strcmp(f[1], "vaapi") != 0) ||
			!word(f[2], sizeof(video->device)) || v[1] > v[2]) {
		return false;
	}
	*video = (struct slim_session_video){
		.kbit = v[0], .encode_p50_us = v[1], .encode_p99_us = v[2],
		.width = (unsigned)v[3], .height = (unsigned)v[4],
	};
	snprintf(video->kind, sizeof(video->kind), "%s", f[1]);
	snprintf(video->device, sizeof(video->device), "%s", f[2]);
	return parse_console(f[0], video->console);
}

/* A shadow's reason: a short word of lowercase letters and dashes. */
static bool reason_word(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 24) {
		return false;
	}
	return strspn(s, "abcdefghijklmnopqrstuvwxyz-") == n;
}

/* Counters from the wire: each at most 2^53, so that sums and rates stay exact. */
static bool parse_counters(char **f, int n, uint64_t *out)
{
	for (int i = 0; i < n; i++) {
		unsigned long v;
		if (!slim_parse_ulong(f[i], 1ul << 53, &v)) {
			return false;
		}
		out[i] = v;
	}
	return true;
}

/* `traffic CONSOLE BYTES DATAGRAMS REPAIRED RESENT` (§2), fields after the word. */
static bool parse_traffic(char **f, struct slim_session_traffic *t)
{
	uint64_t v[4];
	if (!parse_counters(f + 1, 4, v)) {
		return false;
	}
	*t = (struct slim_session_traffic){
		.bytes = v[0], .datagrams = v[1], .repaired = v[2], .resent = v[3],
	};
	return parse_console(f[0], t->console);
}

/*
 * `keys CONSOLE COUNT SUM_US` and a count for each of SLIM_KEY_BUCKETS
 * (§2): the buckets cannot hold more than the count.
 */
static bool parse_keys(char **f, struct slim_session_keys *k)
{
	uint64_t v[2 + SLIM_KEY_BUCKETS];
	if (!parse_counters(f + 1, 2 + SLIM_KEY_BUCKETS, v)) {
		return false;
	}
	uint64_t in_buckets = 0;
	for (int i = 0; i < SLIM_KEY_BUCKETS; i++) {
		k->latency.buckets[i] = v[2 + i];
		in_buckets += v[2 + i];
	}
	if (in_buckets > v[0]) {
		return false;
	}
	k->latency.count = v[0];
	k->latency.sum_us = v[1];
	return parse_console(f[0], k->console);
}

static void handle_line(struct slim_compositor_control *control, char *line)
{
	const struct slim_compositor_control_handler *h = control->owner.handler;
	void *data = control->owner.data;
	char *f[4 + SLIM_KEY_BUCKETS];
	int n = slim_split(line, f, 4 + SLIM_KEY_BUCKETS);
	struct slim_session_traffic traffic;
	struct slim_session_keys keys;
	struct slim_session_video video;
	struct slim_session_audio audio;
	struct slim_session_net net;
	unsigned long a, b;
	char console[SLIM_CONSOLE_ID_LEN + 1];
	if (n == 3 && strcmp(f[0], "hello") == 0 && slim_parse_ulong(f[1], 65535, &a) &&
			a > 0 && slim_parse_ulong(f[2], 0x7fffffff, &b)) {
		h->hello(data, (uint16_t)a, (pid_t)b);
	} else if (n == 3 && strcmp(f[0], "attached") == 0) {
		char *x = strchr(f[2], 'x');
		if (!x || !parse_console(f[1], console)) {
			goto bad;
		}
		*x = '\0';
		if (!slim_parse_ulong(f[2], SLIM_MAX_DIM, &a) || !slim_parse_ulong(x + 1, SLIM_MAX_DIM, &b)) {
			goto bad;
		}
		h->attached(data, console, (uint16_t)a, (uint16_t)b);
	} else if (n == 2 && strcmp(f[0], "detached") == 0 && parse_console(f[1], console)) {
		h->detached(data, console);
	} else if (n == 1 && strcmp(f[0], "active") == 0) {
		h->active(data);
	} else if (n == 2 && strcmp(f[0], "inhibit") == 0 &&
			(strcmp(f[1], "0") == 0 || strcmp(f[1], "1") == 0)) {
		h->inhibit(data, f[1][0] == '1');
	} else if (n == 7 && strcmp(f[0], "audio") == 0 && parse_audio(f + 1, &audio)) {
		h->audio(data, &audio);
	} else if (n == 8 && strcmp(f[0], "link") == 0 && parse_link(f + 1, &net)) {
		h->net(data, &net);
	} else if (n == 9 && strcmp(f[0], "video") == 0 && parse_video(f + 1, &video)) {
		h->video(data, &video);
	} else if (n == 2 && strcmp(f[0], "shadow-ready") == 0 &&
			slim_parse_ulong(f[1], 65535, &a) && a > 0) {
		h->shadow_ready(data, (uint16_t)a);
	} else if (n == 2 && strcmp(f[0], "shadow-attached") == 0 && parse_console(f[1], console)) {
		h->shadow_attached(data, console);
	} else if (n == 2 && strcmp(f[0], "shadow-refused") == 0 && reason_word(f[1])) {
		h->shadow_refused(data, f[1]);
	} else if (n == 2 && strcmp(f[0], "shadow-ended") == 0 && reason_word(f[1])) {
		h->shadow_ended(data, f[1]);
	} else if (n == 6 && strcmp(f[0], "traffic") == 0 && parse_traffic(f + 1, &traffic)) {
		h->traffic(data, &traffic);
	} else if (n == 4 + SLIM_KEY_BUCKETS && strcmp(f[0], "keys") == 0 &&
			parse_keys(f + 1, &keys)) {
		h->keys(data, &keys);
	} else if (n == 1 && strcmp(f[0], "ping") == 0) {
		slim_compositor_control_send(control, "pong");
	} else if (n == 1 && strcmp(f[0], "pong") == 0) {
		/* liveness only */
	} else {
		goto bad;
	}
	return;
bad:
	/* the compositor runs as the user: what it says is untrusted, and rate limited */
	if (slim_ratelimit(control->owner.log_rl, slim_now_us())) {
		slim_log(SLIM_LOG_ERROR, "session %u: bad control line", control->owner.session);
	}
}

static int handle_readable(int fd, uint32_t mask, void *data)
{
	struct slim_compositor_control *control = data;
	enum slim_lines_status status = SLIM_LINES_DATA;
	if (mask & WL_EVENT_READABLE) {
		status = slim_lines_fill(&control->lines, fd);
	} else if (mask & (WL_EVENT_HANGUP | WL_EVENT_ERROR)) {
		status = SLIM_LINES_CLOSED;
	}
	char *line;
	bool destroyed = false;
	control->destroyed = &destroyed;
	while ((line = slim_lines_next(&control->lines))) {
		handle_line(control, line);
		/* a line can end the session, and this control with it */
		if (destroyed) {
			return 0;
		}
	}
	control->destroyed = NULL;
	if (status == SLIM_LINES_CLOSED) {
		slim_log(SLIM_LOG_INFO, "session %u: control socket closed", control->owner.session);
		control->owner.handler->closed(control->owner.data);
	}
	return 0;
}

/* Takes `fd`: watched from now on, or closed. */
static bool adopt(struct slim_compositor_control *control, int fd)
{
	control->fd_source = wl_event_loop_add_fd(control->owner.loop, fd, WL_EVENT_READABLE,
		handle_readable, control);
	if (!control->fd_source) {
		close(fd);
		return false;
	}
	control->fd = fd;
	control->connected = true;
	return true;
}

static bool try_connect(struct slim_compositor_control *control)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return false;
	}
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	memcpy(sun.sun_path, control->path, sizeof(sun.sun_path));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		close(fd);
		return false;
	}
	/*
	 * Peer check: the compositor we started, listening as its user. A
	 * socket another process put at this path is not the session's: it is
	 * tried again until the compositor's own is there, or we give up.
	 */
	const struct slim_compositor_control_owner *owner = &control->owner;
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1 };
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
			cred.uid != owner->uid || cred.pid != owner->pid) {
		if (slim_ratelimit(owner->log_rl, slim_now_us())) {
			slim_log(SLIM_LOG_ERROR, "session %u: %s is held by pid %d uid %d, "
				"not by its compositor", owner->session, control->path, (int)cred.pid,
				(int)cred.uid);
		}
		close(fd);
		return false;
	}
	return adopt(control, fd);
}

static int handle_retry(void *data)
{
	struct slim_compositor_control *control = data;
	if (try_connect(control)) {
		slim_log(SLIM_LOG_DEBUG, "session %u: control socket connected",
			control->owner.session);
		return 0;
	}
	if (++control->attempts * SLIM_CONTROL_RETRY_MS >= SLIM_CONTROL_GIVE_UP_MS) {
		slim_log(SLIM_LOG_ERROR, "session %u: no control socket at %s",
			control->owner.session, control->path);
		control->owner.handler->closed(control->owner.data);
		return 0;
	}
	wl_event_source_timer_update(control->retry_timer, SLIM_CONTROL_RETRY_MS);
	return 0;
}

struct slim_compositor_control *slim_compositor_control_create(
		const struct slim_compositor_control_owner *owner, const char *path, int fd)
{
	struct slim_compositor_control *control = calloc(1, sizeof(*control));
	if (!control) {
		if (fd >= 0) {
			close(fd);
		}
		return NULL;
	}
	control->owner = *owner;
	control->fd = -1;
	slim_lines_init(&control->lines);
	if (fd >= 0) {
		if (!adopt(control, fd)) {
			free(control);
			return NULL;
		}
		return control;
	}
	if (!path || strlen(path) >= sizeof(control->path)) {
		free(control);
		return NULL;
	}
	snprintf(control->path, sizeof(control->path), "%s", path);
	control->retry_timer = wl_event_loop_add_timer(owner->loop, handle_retry, control);
	if (!control->retry_timer) {
		free(control);
		return NULL;
	}
	/* not at once: the compositor was started a moment ago (or, after a restart, is there) */
	wl_event_source_timer_update(control->retry_timer, owner->at_once ? 1 :
		SLIM_CONTROL_RETRY_MS);
	return control;
}

void slim_compositor_control_destroy(struct slim_compositor_control *control)
{
	if (!control) {
		return;
	}
	if (control->destroyed) {
		*control->destroyed = true;
	}
	if (control->fd_source) {
		wl_event_source_remove(control->fd_source);
	}
	if (control->retry_timer) {
		wl_event_source_remove(control->retry_timer);
	}
	if (control->fd >= 0) {
		close(control->fd);
	}
	free(control);
}

bool slim_compositor_control_connected(const struct slim_compositor_control *control)
{
	return control && control->connected;
}

bool slim_compositor_control_send(struct slim_compositor_control *control, const char *fmt, ...)
{
	if (!control || !control->connected) {
		return false;
	}
	char buf[SLIM_LINE_MAX];
	va_list args;
	va_start(args, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, args);
	va_end(args);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		return false;
	}
	return slim_line_send(control->fd, "%s", buf);
}
