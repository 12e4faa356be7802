#define _GNU_SOURCE /* struct ucred, accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "console-send.h"
#include "ctl.h"
#include "group.h"
#include "metrics-render.h"
#include "slim-hex.h"
#include "slim-lines.h"
#include "sessions.h"

struct slim_ctl_server {
	struct slim_manager *mgr;
	struct slim_group *group;
	int fd;
	char path[108];
	struct wl_event_source *source;
};

/*
 * An answer larger than the socket takes at once (`list` at a thousand
 * consoles) waits here for the client to read it: a line is never
 * dropped, and nothing else waits for a slow reader.
 */
#define CTL_OUT_MAX (8u << 20)

struct ctl_client {
	int fd;
	struct wl_event_source *source;
	struct slim_manager *mgr;
	struct slim_group *group;
	struct slim_lines lines;
	char *out;           /* what the socket has not taken yet */
	size_t out_len, out_sent, out_cap;
	bool out_failed;     /* over CTL_OUT_MAX, out of memory or a write failed */
	bool closing;        /* the client is done asking: end once the answer is out */
};

static bool parse_id(const char *s, uint32_t *out)
{
	char *end;
	if (*s < '1' || *s > '9') {
		return false;
	}
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end != '\0' || errno || v > UINT32_MAX) {
		return false;
	}
	*out = (uint32_t)v;
	return true;
}

bool slim_ctl_parse(const char *line, struct slim_ctl_request *req, const char **error)
{
	char buf[SLIM_LINE_MAX + 1];
	if (strlen(line) > SLIM_LINE_MAX) {
		*error = "request too long";
		return false;
	}
	snprintf(buf, sizeof(buf), "%s", line);
	char *f[4];
	int n = slim_split(buf, f, 4);
	memset(req, 0, sizeof(*req));
	*error = "unknown request (list, detach SESSION, end SESSION, why CONSOLE, consoles, "
		"approve CONSOLE [NAME], revoke CONSOLE, key, classes, audio, link, video, group, "
		"drain SERVER, undrain SERVER, metrics, shadow SESSION CONSOLE [control], "
		"unshadow SESSION)";
	static const struct { const char *word; enum slim_ctl_cmd cmd; } plain[] = {
		{ "list", SLIM_CTL_LIST }, { "consoles", SLIM_CTL_CONSOLES }, { "key", SLIM_CTL_KEY },
		{ "classes", SLIM_CTL_CLASSES }, { "audio", SLIM_CTL_AUDIO }, { "link", SLIM_CTL_LINK },
		{ "video", SLIM_CTL_VIDEO },
		{ "group", SLIM_CTL_GROUP }, { "metrics", SLIM_CTL_METRICS },
	};
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		if (strcmp(f[0], plain[i].word) == 0) {
			req->cmd = plain[i].cmd;
			if (n != 1) {
				*error = "this request takes no arguments";
				return false;
			}
			return true;
		}
	}
	if (strcmp(f[0], "approve") == 0 || strcmp(f[0], "revoke") == 0) {
		bool approve = f[0][0] == 'a';
		req->cmd = approve ? SLIM_CTL_APPROVE : SLIM_CTL_REVOKE;
		if (n < 2 || n > (approve ? 3 : 2) || f[1][0] == '\0' ||
				strlen(f[1]) > SLIM_CONSOLE_ID_LEN ||
				(n == 3 && strlen(f[2]) >= sizeof(req->name))) {
			*error = approve ? "usage: approve CONSOLE [NAME]" : "usage: revoke CONSOLE";
			return false;
		}
		snprintf(req->console, sizeof(req->console), "%s", f[1]);
		snprintf(req->name, sizeof(req->name), "%s", n == 3 ? f[2] : "");
		return true;
	}
	if (strcmp(f[0], "detach") == 0 || strcmp(f[0], "end") == 0) {
		req->cmd = f[0][0] == 'd' ? SLIM_CTL_DETACH : SLIM_CTL_END;
		if (n != 2 || !parse_id(f[1], &req->session)) {
			*error = req->cmd == SLIM_CTL_DETACH ? "usage: detach SESSION" :
				"usage: end SESSION";
			return false;
		}
		return true;
	}
	if (strcmp(f[0], "shadow") == 0) {
		req->cmd = SLIM_CTL_SHADOW;
		if (n < 3 || n > 4 || !parse_id(f[1], &req->session) || f[2][0] == '\0' ||
				strlen(f[2]) > SLIM_CONSOLE_ID_LEN ||
				(n == 4 && strcmp(f[3], "control") != 0)) {
			*error = "usage: shadow SESSION CONSOLE [control]";
			return false;
		}
		snprintf(req->console, sizeof(req->console), "%s", f[2]);
		req->control = n == 4;
		return true;
	}
	if (strcmp(f[0], "unshadow") == 0) {
		req->cmd = SLIM_CTL_UNSHADOW;
		if (n != 2 || !parse_id(f[1], &req->session)) {
			*error = "usage: unshadow SESSION";
			return false;
		}
		return true;
	}
	if (strcmp(f[0], "drain") == 0 || strcmp(f[0], "undrain") == 0) {
		req->cmd = f[0][0] == 'd' ? SLIM_CTL_DRAIN : SLIM_CTL_UNDRAIN;
		if (n != 2 || !slim_group_name_valid(f[1])) {
			*error = req->cmd == SLIM_CTL_DRAIN ? "usage: drain SERVER" :
				"usage: undrain SERVER";
			return false;
		}
		snprintf(req->name, sizeof(req->name), "%s", f[1]);
		return true;
	}
	if (strcmp(f[0], "why") == 0) {
		req->cmd = SLIM_CTL_WHY;
		if (n != 2 || f[1][0] == '\0' || strlen(f[1]) > SLIM_CONSOLE_ID_LEN) {
			*error = "usage: why CONSOLE";
			return false;
		}
		snprintf(req->console, sizeof(req->console), "%s", f[1]);
		return true;
	}
	return false;
}

__attribute__((format(printf, 3, 4)))
static void outf(slim_ctl_out out, void *data, const char *fmt, ...)
{
	char line[SLIM_LINE_MAX];
	va_list args;
	va_start(args, fmt);
	vsnprintf(line, sizeof(line), fmt, args);
	va_end(args);
	out(data, line);
}

static void format_sockaddr(const struct sockaddr_storage *a, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN];
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *in4 = (const void *)a;
		inet_ntop(AF_INET, &in4->sin_addr, host, sizeof(host));
		snprintf(buf, size, "%s:%u", host, ntohs(in4->sin_port));
	} else if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)a;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, size, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		snprintf(buf, size, "-");
	}
}

/* Where the console said HELLO from; "-" if it has not since this manager started. */
static void format_addr(const struct slim_console *c, char *buf, size_t size)
{
	if (!c->heard.known) {
		snprintf(buf, size, "-");
	} else {
		format_sockaddr(&c->assoc.addr, buf, size);
	}
}

/* `console ID STATE ADDRESS SECONDS NAME`, waiting ones first; "-" for what is not known. */
static void list_consoles(struct slim_manager *mgr, slim_ctl_out out, void *data)
{
	uint64_t now = slim_manager_now(mgr);
	const struct slim_enroll *e = &mgr->enroll;
	for (size_t i = 0; i < e->n_pending; i++) {
		const struct slim_pending *p = &e->pending[i];
		char addr[80];
		format_sockaddr(&p->addr, addr, sizeof(addr));
		outf(out, data, "console %s pending %s %llu -", p->id, addr,
			(unsigned long long)((now - p->last_us) / 1000000));
	}
	for (size_t i = 0; i < e->n; i++) {
		const struct slim_enrolled *en = &e->list[i];
		struct slim_console *c = slim_manager_console(mgr, en->id);
		char addr[80] = "-", seen[24] = "-";
		if (c && c->heard.known) {
			format_addr(c, addr, sizeof(addr));
			snprintf(seen, sizeof(seen), "%llu",
				(unsigned long long)((now - c->heard.last_us) / 1000000));
		}
		outf(out, data, "console %s %s %s %s %s", en->id, en->revoked ? "revoked" : "approved",
			addr, seen, en->name[0] ? en->name : "-");
	}
}

static bool run_approve(struct slim_manager *mgr, struct slim_group *group,
		const struct slim_ctl_request *req, slim_ctl_out out, void *data)
{
	char id[SLIM_CONSOLE_ID_LEN + 1];
	const char *why;
	struct slim_sec_conn *conn;
	uint32_t assoc;
	if (!slim_enroll_approve(&mgr->enroll, req->console, req->name[0] ? req->name : NULL, id,
			&conn, &assoc, &why)) {
		outf(out, data, "error %s", why);
		return false;
	}
	slim_log(SLIM_LOG_INFO, "ctl: console %s approved", id);
	slim_group_console_decided(group, id);
	if (conn) {
		/* it waits, connected: its next HELLO is admitted, so ask for one now */
		slim_consoles_nudge(mgr, conn, assoc);
	}
	outf(out, data, "console %s approved", id);
	return true;
}

static bool run_revoke(struct slim_manager *mgr, struct slim_group *group,
		const struct slim_ctl_request *req, slim_ctl_out out, void *data)
{
	char id[SLIM_CONSOLE_ID_LEN + 1];
	const char *why;
	if (!slim_enroll_revoke(&mgr->enroll, req->console, id, &why)) {
		outf(out, data, "error %s", why);
		return false;
	}
	struct slim_console *c = slim_manager_console(mgr, id);
	if (c) {
		slim_console_revoke(c);
	}
	slim_log(SLIM_LOG_INFO, "ctl: console %s revoked", id);
	slim_group_console_decided(group, id);
	outf(out, data, "console %s revoked", id);
	return true;
}

static const char *session_state(const struct slim_session *s)
{
	if (s->greeter) {
		return "greeter";
	}
	if (s->ending) {
		return "ending";
	}
	if (!s->console) {
		return "detached";
	}
	return s->attached ? "attached" : "attaching";
}

/* A process's name, from /proc/PID/comm. */
static void comm_of(pid_t pid, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f || !fgets(buf, (int)size, f)) {
		snprintf(buf, size, "?");
	}
	buf[strcspn(buf, "\n")] = '\0';
	if (f) {
		fclose(f);
	}
}

/*
 * "class SESSION CLASS CPU_MS PID:NAME ...": the processes of each class and
 * the CPU the class used, or "unprioritised SESSION" without classes.
 */
static void list_classes(struct slim_manager *mgr, slim_ctl_out out, void *data)
{
	struct slim_cgroup_fs fs;
	char why[256];
	bool have = slim_cgroup_fs_detect(&fs, "/sys/fs/cgroup", why, sizeof(why));
	struct slim_session *s;
	wl_list_for_each(s, &mgr->sessions, link) {
		if (s->greeter) {
			continue;
		}
		char rel[SLIM_CGROUP_PATH];
		slim_cgroup_path(rel, sizeof(rel), s->uid, s->id);
		bool any = false;
		for (int class = 0; have && class < SLIM_CGROUP_CLASSES; class++) {
			pid_t pids[16];
			uint64_t cpu_us;
			long n = slim_cgroup_class_read(&fs, rel, class, pids, 16, &cpu_us);
			if (n < 0) {
				continue;
			}
			any = true;
			char line[SLIM_LINE_MAX - 64] = "";
			size_t used = 0;
			for (long i = 0; i < n && i < 16; i++) {
				char name[32];
				comm_of(pids[i], name, sizeof(name));
				int w = snprintf(line + used, sizeof(line) - used, " %d:%s",
					(int)pids[i], name);
				if (w < 0 || (size_t)w >= sizeof(line) - used) {
					break;
				}
				used += (size_t)w;
			}
			outf(out, data, "class %u %s %llu%s%s", s->id, slim_cgroup_class_name(class),
				(unsigned long long)(cpu_us / 1000), line, n > 16 ? " ..." : "");
		}
		if (!any) {
			outf(out, data, "unprioritised %u", s->id);
		}
	}
}

/*
 * "audio CONSOLE SESSION CODEC KBIT DEPTH_MS LOSS% LOST%" for each console
 * showing a session whose compositor told how its sound fares there.
 */
static void list_audio(struct slim_manager *mgr, slim_ctl_out out, void *data)
{
	struct slim_session *s;
	wl_list_for_each(s, &mgr->sessions, link) {
		const struct slim_session_audio *a = &s->audio;
		if (s->greeter || !s->console || strcmp(a->console, s->console->id) != 0) {
			continue;
		}
		outf(out, data, "audio %s %u %s %u %u %u.%u %u.%u", a->console, s->id, a->codec,
			a->kbit, a->depth_ms, a->loss_permille / 10, a->loss_permille % 10,
			a->lost_permille / 10, a->lost_permille % 10);
	}
}

/*
 * "link CONSOLE SESSION RATE_KBIT PACING_KBIT RTT_MS MIN_RTT_MS QUEUE_BYTES
 * DROPPED" for each console showing a session whose compositor told what
 * its pacer knows of the link (a rate of 0: none learnt, nothing held back).
 */
static void list_link(struct slim_manager *mgr, slim_ctl_out out, void *data)
{
	struct slim_session *s;
	wl_list_for_each(s, &mgr->sessions, link) {
		const struct slim_session_net *l = &s->net;
		if (s->greeter || !s->console || strcmp(l->console, s->console->id) != 0) {
			continue;
		}
		outf(out, data, "link %s %u %lu %lu %lu.%03lu %lu.%03lu %lu %lu", l->console, s->id,
			l->rate_kbit, l->pacing_kbit, l->rtt_us / 1000, l->rtt_us % 1000,
			l->min_rtt_us / 1000, l->min_rtt_us % 1000, l->queue_bytes, l->dropped);
	}
}

/*
 * "video CONSOLE SESSION KIND DEVICE KBIT ENCODE_P50_MS ENCODE_P99_MS WxH"
 * for each console showing a session whose compositor sends it H.264.
 */
static void list_video(struct slim_manager *mgr, slim_ctl_out out, void *data)
{
	struct slim_session *s;
	wl_list_for_each(s, &mgr->sessions, link) {
		const struct slim_session_video *v = &s->video;
		if (s->greeter || !s->console || strcmp(v->console, s->console->id) != 0) {
			continue;
		}
		outf(out, data, "video %s %u %s %s %lu %lu.%03lu %lu.%03lu %ux%u", v->console, s->id,
			v->kind, v->device, v->kbit, v->encode_p50_us / 1000, v->encode_p50_us % 1000,
			v->encode_p99_us / 1000, v->encode_p99_us % 1000, v->width, v->height);
	}
}

/* `console ID ADDR STATE [SESSION]` and `session ID USER PID PORT STATE [CONSOLE]` lines. */
static void list_table(struct slim_manager *mgr, slim_ctl_out out, void *data)
{
	struct slim_console *c;
	wl_list_for_each(c, &mgr->consoles, link) {
		char addr[80];
		format_addr(c, addr, sizeof(addr));
		/* silent, but its session keeps it: say so rather than "session" */
		const char *state = c->heard.away ? "away" : slim_console_state_str(c->state);
		if (c->shows) {
			outf(out, data, "console %s %s %s %u", c->id, addr, state, c->shows->id);
		} else {
			outf(out, data, "console %s %s %s", c->id, addr, state);
		}
	}
	struct slim_session *s;
	wl_list_for_each(s, &mgr->sessions, link) {
		if (s->console) {
			outf(out, data, "session %u %s %d %u %s %s", s->id, s->user,
				(int)s->pid, s->port, session_state(s), s->console->id);
		} else {
			outf(out, data, "session %u %s %d %u %s", s->id, s->user,
				(int)s->pid, s->port, session_state(s));
		}
	}
	/* what watches a session, or last did: `shadow SESSION CONSOLE STATE [WHY]` */
	wl_list_for_each(s, &mgr->sessions, link) {
		if (s->shadow) {
			outf(out, data, "shadow %u %s %s", s->id, s->shadow->console->id,
				slim_shadow_state_str(s->shadow->state));
		} else if (s->shadow_last[0]) {
			outf(out, data, "shadow %u %s", s->id, s->shadow_last);
		}
	}
	/* the cards, by the first 16 digits of their hash (the registry's, not the token) */
	static const char *const binding_state[] = {
		[SLIM_BINDING_UNCONFIRMED] = "unconfirmed",
		[SLIM_BINDING_BOUND] = "bound",
		[SLIM_BINDING_ELSEWHERE] = "elsewhere",
	};
	struct slim_binding *b;
	wl_list_for_each(b, &mgr->bindings, link) {
		char hex[17];
		slim_hex_encode(hex, b->token.bytes, 8);
		if (b->session) {
			outf(out, data, "card %s session %u %s", hex, b->session->id,
				binding_state[b->state]);
		}
	}
}

/* A user's session, by the request's id: NULL (said) if there is none. */
static struct slim_session *user_session(struct slim_manager *mgr,
		const struct slim_ctl_request *req, slim_ctl_out out, void *data)
{
	struct slim_session *s = slim_manager_session(mgr, req->session);
	if (!s || s->greeter) {
		outf(out, data, "error no session %u", req->session);
		return NULL;
	}
	return s;
}

static bool run_detach(struct slim_manager *mgr, const struct slim_ctl_request *req,
		slim_ctl_out out, void *data)
{
	struct slim_session *s = user_session(mgr, req, out, data);
	if (!s) {
		return false;
	}
	if (!slim_session_detach(s, SLIM_WHY_ADMIN)) {
		outf(out, data, "error session %u is not on a console", s->id);
		return false;
	}
	slim_log(SLIM_LOG_INFO, "ctl: session %u detached", s->id);
	return true;
}

static bool run_end(struct slim_manager *mgr, const struct slim_ctl_request *req,
		slim_ctl_out out, void *data)
{
	struct slim_session *s = user_session(mgr, req, out, data);
	if (!s) {
		return false;
	}
	slim_log(SLIM_LOG_INFO, "ctl: ending session %u", s->id);
	slim_session_end(s);
	return true;
}

/* shadow SESSION CONSOLE [control]: the user is asked (shadowing.c); `list` says how it went. */
static bool run_shadow(struct slim_manager *mgr, const struct slim_ctl_request *req,
		slim_ctl_out out, void *data)
{
	struct slim_session *s = user_session(mgr, req, out, data);
	if (!s) {
		return false;
	}
	/* only consoles the manager serves enter its table (enroll.h) */
	struct slim_console *c = slim_manager_console(mgr, req->console);
	const char *why;
	if (!c && !slim_enroll_serves(&mgr->enroll, req->console)) {
		outf(out, data, "error console %s is not enrolled (slimlandctl consoles, approve)",
			req->console);
		return false;
	}
	if (!c) {
		outf(out, data, "error console %s is not connected", req->console);
		return false;
	}
	if (!slim_shadow_start(s, c, req->control, &why)) {
		outf(out, data, "error %s", why);
		return false;
	}
	outf(out, data, "shadow %u %s asking", s->id, c->id);
	return true;
}

static bool run_unshadow(struct slim_manager *mgr, const struct slim_ctl_request *req,
		slim_ctl_out out, void *data)
{
	struct slim_session *s = user_session(mgr, req, out, data);
	if (!s) {
		return false;
	}
	if (!slim_shadow_stop(s)) {
		outf(out, data, "error no console watches session %u", s->id);
		return false;
	}
	return true;
}

static bool run_key(struct slim_manager *mgr, slim_ctl_out out, void *data)
{
	static const uint8_t zero[SLIM_SEC_FINGERPRINT_LEN];
	if (memcmp(mgr->host_key, zero, sizeof(zero)) == 0) {
		outf(out, data, "error no host key: the transport is clear");
		return false;
	}
	char hex[65];
	slim_sec_fingerprint_hex(mgr->host_key, hex);
	outf(out, data, "sha256:%s", hex);
	return true;
}

/* group, drain SERVER, undrain SERVER. */
static bool run_group(struct slim_group *group, const struct slim_ctl_request *req,
		slim_ctl_out out, void *data)
{
	const char *why;
	if (!group) {
		outf(out, data, "error no group: etcd is not configured");
		return false;
	}
	if (req->cmd == SLIM_CTL_GROUP) {
		slim_group_view(group, out, data);
	} else if (!slim_group_drain(group, req->name, req->cmd == SLIM_CTL_DRAIN, &why)) {
		outf(out, data, "error %s", why);
		return false;
	}
	return true;
}

static bool run_why(struct slim_manager *mgr, const struct slim_ctl_request *req,
		slim_ctl_out out, void *data)
{
	struct slim_console *c = slim_manager_console(mgr, req->console);
	if (!c) {
		outf(out, data, "error no console %s", req->console);
		return false;
	}
	if (c->shows && !c->shows->greeter) {
		outf(out, data, "console %s shows session %u", c->id, c->shows->id);
	} else {
		outf(out, data, "%s", slim_why_str(c->why));
		if (c->greeter.message[0]) {
			outf(out, data, "message %s", c->greeter.message);
		}
		char labels[SLIM_CHOICE_MAX * 81] = "";
		for (int i = 0; i < c->choice.n_labels; i++) {
			size_t n = strlen(labels);
			snprintf(labels + n, sizeof(labels) - n, "%s%s", i ? "|" : "",
				c->choice.labels[i]);
		}
		if (labels[0]) {
			outf(out, data, "choice %s", labels);
		}
	}
	return true;
}

/* The metrics' text, a line at a time (none is longer than a line may be). */
static bool run_metrics(struct slim_manager *mgr, struct slim_group *group,
		slim_ctl_out out, void *data)
{
	size_t len;
	char *text = slim_metrics_render(mgr, group, &len);
	if (!text) {
		outf(out, data, "error no memory for the metrics");
		return false;
	}
	/* every line of it ends with a newline */
	for (char *line = text, *end; (end = strchr(line, '\n')); line = end + 1) {
		*end = '\0';
		out(data, line);
	}
	free(text);
	return true;
}

/* One request: what it answers, but its last line; false if that was an error. */
static bool run(struct slim_manager *mgr, struct slim_group *group,
		const struct slim_ctl_request *req, slim_ctl_out out, void *data)
{
	switch (req->cmd) {
	case SLIM_CTL_LIST:
		list_table(mgr, out, data);
		return true;
	case SLIM_CTL_DETACH:
		return run_detach(mgr, req, out, data);
	case SLIM_CTL_END:
		return run_end(mgr, req, out, data);
	case SLIM_CTL_CONSOLES:
		list_consoles(mgr, out, data);
		return true;
	case SLIM_CTL_APPROVE:
		return run_approve(mgr, group, req, out, data);
	case SLIM_CTL_REVOKE:
		return run_revoke(mgr, group, req, out, data);
	case SLIM_CTL_CLASSES:
		list_classes(mgr, out, data);
		return true;
	case SLIM_CTL_AUDIO:
		list_audio(mgr, out, data);
		return true;
	case SLIM_CTL_LINK:
		list_link(mgr, out, data);
		return true;
	case SLIM_CTL_VIDEO:
		list_video(mgr, out, data);
		return true;
	case SLIM_CTL_KEY:
		return run_key(mgr, out, data);
	case SLIM_CTL_GROUP:
	case SLIM_CTL_DRAIN:
	case SLIM_CTL_UNDRAIN:
		return run_group(group, req, out, data);
	case SLIM_CTL_WHY:
		return run_why(mgr, req, out, data);
	case SLIM_CTL_SHADOW:
		return run_shadow(mgr, req, out, data);
	case SLIM_CTL_UNSHADOW:
		return run_unshadow(mgr, req, out, data);
	case SLIM_CTL_METRICS:
		return run_metrics(mgr, group, out, data);
	}
	return false;
}

void slim_ctl_run(struct slim_manager *mgr, struct slim_group *group, const char *line,
		slim_ctl_out out, void *data)
{
	struct slim_ctl_request req;
	const char *error;
	if (!slim_ctl_parse(line, &req, &error)) {
		outf(out, data, "error %s", error);
		return;
	}
	if (run(mgr, group, &req, out, data)) {
		out(data, "ok");
	}
}

static void client_out(void *data, const char *line)
{
	struct ctl_client *client = data;
	size_t len = strlen(line) + 1;
	if (client->out_failed) {
		return;
	}
	if (client->out_len + len > client->out_cap) {
		size_t cap = client->out_cap ? client->out_cap : 4096;
		while (cap < client->out_len + len) {
			cap *= 2;
		}
		char *grown = cap <= CTL_OUT_MAX ? realloc(client->out, cap) : NULL;
		if (!grown) {
			client->out_failed = true;
			return;
		}
		client->out = grown;
		client->out_cap = cap;
	}
	memcpy(client->out + client->out_len, line, len - 1);
	client->out[client->out_len + len - 1] = '\n';
	client->out_len += len;
}

static void client_destroy(struct ctl_client *client)
{
	wl_event_source_remove(client->source);
	close(client->fd);
	free(client->out);
	free(client);
}

/* What the socket takes of the answer; false once it cannot go on. */
static bool client_flush(struct ctl_client *client)
{
	while (client->out_sent < client->out_len) {
		/* MSG_NOSIGNAL: a peer that went away is an error here, not SIGPIPE */
		ssize_t n = send(client->fd, client->out + client->out_sent,
			client->out_len - client->out_sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		}
		client->out_sent += (size_t)n;
	}
	client->out_len = client->out_sent = 0;
	return true;
}

static int handle_client(int fd, uint32_t mask, void *data)
{
	struct ctl_client *client = data;
	if (mask & (WL_EVENT_READABLE | WL_EVENT_HANGUP | WL_EVENT_ERROR)) {
		enum slim_lines_status status = (mask & WL_EVENT_READABLE) ?
			slim_lines_fill(&client->lines, fd) : SLIM_LINES_CLOSED;
		char *line;
		while ((line = slim_lines_next(&client->lines))) {
			slim_ctl_run(client->mgr, client->group, line, client_out, client);
		}
		client->closing = client->closing || status == SLIM_LINES_CLOSED ||
			(mask & (WL_EVENT_HANGUP | WL_EVENT_ERROR));
	}
	if (client->out_failed || !client_flush(client) ||
			(client->closing && client->out_len == 0) ||
			(client->closing && (mask & (WL_EVENT_HANGUP | WL_EVENT_ERROR)))) {
		client_destroy(client);
		return 0;
	}
	/* the rest of the answer first, then the next request; a closed reader is not read */
	wl_event_source_fd_update(client->source, client->out_len ? WL_EVENT_WRITABLE :
		WL_EVENT_READABLE);
	return 0;
}

static int handle_accept(int fd, uint32_t mask, void *data)
{
	struct slim_ctl_server *server = data;
	int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (cfd < 0) {
		return 0;
	}
	/*
	 * Peer check: root, or the manager's own uid. The socket is 0600
	 * already; this also holds if someone chmods it.
	 */
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
			(cred.uid != 0 && cred.uid != geteuid())) {
		close(cfd);
		return 0;
	}
	slim_ctl_client_create(server->mgr, server->group, cfd);
	return 0;
}

bool slim_ctl_client_create(struct slim_manager *mgr, struct slim_group *group, int fd)
{
	struct ctl_client *client = calloc(1, sizeof(*client));
	if (!client) {
		close(fd);
		return false;
	}
	client->fd = fd;
	client->mgr = mgr;
	client->group = group;
	slim_lines_init(&client->lines);
	client->source = wl_event_loop_add_fd(mgr->loop, fd, WL_EVENT_READABLE,
		handle_client, client);
	if (!client->source) {
		close(fd);
		free(client);
		return false;
	}
	return true;
}

struct slim_ctl_server *slim_ctl_server_create(struct slim_manager *mgr,
		struct slim_group *group, const char *path)
{
	struct slim_ctl_server *server = calloc(1, sizeof(*server));
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	if (!server || len >= sizeof(sun.sun_path) || len >= sizeof(server->path)) {
		free(server);
		return NULL;
	}
	server->mgr = mgr;
	server->group = group;
	memcpy(server->path, path, len + 1);
	memcpy(sun.sun_path, path, len + 1);
	server->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (server->fd < 0) {
		free(server);
		return NULL;
	}
	unlink(path);
	mode_t old = umask(0177);
	int ret = bind(server->fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (ret < 0 || listen(server->fd, 4) < 0) {
		slim_log(SLIM_LOG_ERROR, "ctl socket %s: %s", path, strerror(errno));
		close(server->fd);
		free(server);
		return NULL;
	}
	chmod(path, 0600);
	server->source = wl_event_loop_add_fd(mgr->loop, server->fd, WL_EVENT_READABLE,
		handle_accept, server);
	return server;
}

void slim_ctl_server_destroy(struct slim_ctl_server *server)
{
	if (!server) {
		return;
	}
	wl_event_source_remove(server->source);
	close(server->fd);
	unlink(server->path);
	free(server);
}
