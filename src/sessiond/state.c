#define _GNU_SOURCE /* pidfd_open via syscall */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "slim-lines.h"
#include "sessions.h"
#include "state.h"

struct buf {
	char *p;
	size_t len, size;
	bool failed;
};

__attribute__((format(printf, 2, 3)))
static void put(struct buf *b, const char *fmt, ...)
{
	for (;;) {
		va_list args;
		va_start(args, fmt);
		size_t room = b->size - b->len;
		int n = b->p ? vsnprintf(b->p + b->len, room, fmt, args) : -1;
		va_end(args);
		if (n >= 0 && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t size = b->size ? b->size * 2 : 4096;
		char *p = realloc(b->p, size);
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->size = size;
	}
}

char *slim_state_format(struct slim_manager *mgr, size_t *len)
{
	struct buf b = { 0 };
	put(&b, "%s", "");
	struct slim_session *s;
	wl_list_for_each(s, &mgr->sessions, link) {
		if (s->ending || s->control_path[0] == '\0' || strchr(s->control_path, ' ')) {
			continue;
		}
		put(&b, "session %u %u %s %d %u %s\n", s->id, (unsigned)s->uid, s->user,
			(int)s->pid, s->port, s->control_path);
	}
	struct slim_binding *bind;
	wl_list_for_each(bind, &mgr->bindings, link) {
		/* the card's keyed hash: this file never holds a token */
		char hex[2 * sizeof(bind->token.bytes) + 1];
		slim_hex_encode(hex, bind->token.bytes, sizeof(bind->token.bytes));
		put(&b, "token %s %u\n", hex, bind->session->id);
	}
	struct slim_console *c;
	wl_list_for_each(c, &mgr->consoles, link) {
		if (c->shows && !c->shows->ending) {
			put(&b, "console %s %u\n", c->id, c->shows->id);
		}
	}
	if (b.failed) {
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p;
}

bool slim_state_write(struct slim_manager *mgr, const char *path)
{
	size_t len;
	char *text = slim_state_format(mgr, &len);
	if (!text) {
		return false;
	}
	char tmp[512];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	bool ok = false;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		size_t done = 0;
		while (done < len) {
			ssize_t n = write(fd, text + done, len - done);
			if (n < 0 && errno == EINTR) {
				continue;
			}
			if (n <= 0) {
				break;
			}
			done += (size_t)n;
		}
		/* fsync before rename: after a crash the file is the old or the new one */
		ok = done == len && fsync(fd) == 0;
		ok = close(fd) == 0 && ok;
		ok = ok && rename(tmp, path) == 0;
		if (!ok) {
			unlink(tmp);
		}
	}
	if (!ok) {
		slim_log(SLIM_LOG_ERROR, "state %s: %s", path, strerror(errno));
	}
	free(text);
	return ok;
}

static bool grow(void **p, size_t n, size_t elem)
{
	/* powers of two: grown when n reaches one */
	if (n & (n - 1)) {
		return true;
	}
	void *q = realloc(*p, (n ? n * 2 : 4) * elem);
	if (!q) {
		return false;
	}
	*p = q;
	return true;
}

static bool parse_line(char *line, struct slim_state *st)
{
	char *f[8];
	int n = slim_split(line, f, 8);
	unsigned long a, b, c, d;
	if (n == 7 && strcmp(f[0], "session") == 0) {
		if (!slim_parse_ulong(f[1], UINT32_MAX, &a) || a == 0 ||
				!slim_parse_ulong(f[2], UINT32_MAX, &b) ||
				f[3][0] == '\0' || strlen(f[3]) >= 64 ||
				!slim_parse_ulong(f[4], 0x7fffffff, &c) || c < 2 ||
				!slim_parse_ulong(f[5], 65535, &d) || f[6][0] != '/' || strlen(f[6]) >= 320 ||
				!grow((void **)&st->sessions, st->n_sessions, sizeof(*st->sessions))) {
			return false;
		}
		struct slim_state_session *s = &st->sessions[st->n_sessions++];
		memset(s, 0, sizeof(*s));
		s->id = (uint32_t)a;
		s->uid = (uid_t)b;
		snprintf(s->user, sizeof(s->user), "%s", f[3]);
		s->pid = (pid_t)c;
		s->port = (uint16_t)d;
		snprintf(s->control, sizeof(s->control), "%s", f[6]);
		return true;
	}
	if (n == 3 && strcmp(f[0], "token") == 0) {
		struct slim_card_hash t;
		if (!slim_hex_decode(t.bytes, sizeof(t.bytes), f[1]) ||
				!slim_parse_ulong(f[2], UINT32_MAX, &a) || a == 0 ||
				!grow((void **)&st->tokens, st->n_tokens, sizeof(*st->tokens))) {
			return false;
		}
		st->tokens[st->n_tokens].token = t;
		st->tokens[st->n_tokens++].session = (uint32_t)a;
		return true;
	}
	if (n == 3 && strcmp(f[0], "console") == 0) {
		if (f[1][0] == '\0' || strlen(f[1]) > SLIM_CONSOLE_ID_LEN ||
				!slim_parse_ulong(f[2], UINT32_MAX, &a) || a == 0 ||
				!grow((void **)&st->consoles, st->n_consoles, sizeof(*st->consoles))) {
			return false;
		}
		struct slim_state_console *sc = &st->consoles[st->n_consoles++];
		snprintf(sc->id, sizeof(sc->id), "%s", f[1]);
		sc->session = (uint32_t)a;
		return true;
	}
	return false;
}

bool slim_state_parse(const char *text, size_t len, const char *name, struct slim_state *st)
{
	memset(st, 0, sizeof(*st));
	size_t pos = 0;
	unsigned lineno = 0;
	char line[SLIM_LINE_MAX + 1];
	const char *why;
	bool ended;
	while (slim_text_line(text, len, &pos, line, sizeof(line), &why, &ended)) {
		lineno++;
		if (!ended) {
			/* we always end with '\n': a file cut short, whatever wrote it */
			st->truncated = true;
			slim_log(SLIM_LOG_ERROR, "state %s:%u: truncated line dropped", name, lineno);
			break;
		}
		if (why || (line[0] != '\0' && !parse_line(line, st))) {
			st->bad_lines++;
			slim_log(SLIM_LOG_ERROR, "state %s:%u: bad line skipped", name, lineno);
		}
	}
	return st->bad_lines == 0 && !st->truncated;
}

void slim_state_finish(struct slim_state *st)
{
	free(st->sessions);
	free(st->tokens);
	free(st->consoles);
	memset(st, 0, sizeof(*st));
}

bool slim_state_check_pid(pid_t pid, uid_t uid, int *pidfd)
{
	/* the pidfd first: from here on, a recycled PID cannot fool us */
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0) {
		return false;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	char cmdline[4096];
	ssize_t n = -1;
	int cfd = open(path, O_RDONLY | O_CLOEXEC);
	if (cfd >= 0) {
		n = read(cfd, cmdline, sizeof(cmdline) - 1);
		close(cfd);
	}
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	bool ok = n > 0 && stat(path, &st) == 0 && (uid == (uid_t)-1 || st.st_uid == uid);
	if (ok) {
		/* the arguments are NUL-separated: look at the whole of them */
		for (ssize_t i = 0; i < n; i++) {
			if (cmdline[i] == '\0') {
				cmdline[i] = ' ';
			}
		}
		cmdline[n] = '\0';
		ok = strstr(cmdline, "slimland") != NULL;
	}
	/* still the same process as the pidfd? (it might have exited meanwhile) */
	if (ok && kill(pid, 0) < 0 && errno == ESRCH) {
		ok = false;
	}
	if (!ok) {
		close(fd);
		return false;
	}
	*pidfd = fd;
	return true;
}

void slim_state_apply(struct slim_manager *mgr, const struct slim_state *st, bool check)
{
	mgr->restoring = true;
	for (size_t i = 0; i < st->n_sessions; i++) {
		const struct slim_state_session *ss = &st->sessions[i];
		if (slim_manager_session(mgr, ss->id)) {
			slim_log(SLIM_LOG_ERROR, "state: session %u twice", ss->id);
			continue;
		}
		int pidfd = -1;
		if (check && !slim_state_check_pid(ss->pid, ss->uid, &pidfd)) {
			slim_log(SLIM_LOG_INFO, "state: session %u (%s): PID %d is gone", ss->id,
				ss->user, (int)ss->pid);
			continue;
		}
		bool greeter = strcmp(ss->user, mgr->config.greeter_user) == 0;
		/* a greeter's uid is its own again (taken before the session can end) */
		bool uid_ok = !greeter || slim_uid_pool_claim(&mgr->greeters.uids, ss->uid);
		struct slim_session *s = slim_session_add(mgr, ss->id, ss->user, ss->uid, ss->pid,
			pidfd, ss->control, -1, greeter);
		if (s && !uid_ok) {
			/* an earlier version's (all of one uid), or a uid another greeter has */
			slim_log(SLIM_LOG_INFO, "state: greeter %u runs as uid %u, not a free one of "
				"greeter_uids: ended", s->id, (unsigned)s->uid);
			slim_session_end(s);
		} else if (s) {
			s->port = ss->port;
			slim_log(SLIM_LOG_INFO, "state: session %u (%s) found again", s->id, s->user);
		}
	}
	for (size_t i = 0; i < st->n_tokens; i++) {
		struct slim_session *s = slim_manager_session(mgr, st->tokens[i].session);
		if (s && !s->greeter) {
			slim_manager_bind(mgr, &st->tokens[i].token, s);
		}
	}
	for (size_t i = 0; i < st->n_consoles; i++) {
		const struct slim_state_console *sc = &st->consoles[i];
		struct slim_session *s = slim_manager_session(mgr, sc->session);
		if (!s || s->console || slim_manager_console(mgr, sc->id)) {
			continue;
		}
		struct slim_console *c = slim_manager_console_create(mgr, sc->id);
		if (!c) {
			continue;
		}
		slim_console_restore(c, s);
	}
	/* greeters whose console is not in the file serve nobody */
	struct slim_session *s, *tmp;
	wl_list_for_each_safe(s, tmp, &mgr->sessions, link) {
		if (s->greeter && !s->greeter_for) {
			slim_session_end(s);
		}
	}
	mgr->restoring = false;
	slim_manager_changed(mgr);
}

bool slim_state_restore(struct slim_manager *mgr, const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		if (errno != ENOENT) {
			slim_log(SLIM_LOG_ERROR, "state %s: %s", path, strerror(errno));
			return false;
		}
		return true;
	}
	char *text = NULL;
	size_t size = 0, len = 0;
	bool ok = true;
	for (;;) {
		if (len == size) {
			if (size >= (4u << 20)) {
				slim_log(SLIM_LOG_ERROR, "state %s: larger than 4 MiB, ignored", path);
				ok = false;
				break;
			}
			char *grown = realloc(text, size ? size * 2 : 4096);
			if (!grown) {
				ok = false;
				break;
			}
			text = grown;
			size = size ? size * 2 : 4096;
		}
		size_t n = fread(text + len, 1, size - len, f);
		if (n == 0) {
			break;
		}
		len += n;
	}
	fclose(f);
	if (ok) {
		struct slim_state st;
		if (!slim_state_parse(text, len, path, &st)) {
			slim_log(SLIM_LOG_ERROR, "state %s: damaged; keeping what could be read "
				"(%zu sessions)", path, st.n_sessions);
		}
		slim_state_apply(mgr, &st, true);
		slim_state_finish(&st);
	}
	free(text);
	return ok;
}
