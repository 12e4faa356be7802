#define _GNU_SOURCE /* O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "enroll.h"
#include "slim-lines.h"

#define OPEN_RATE_US 1000000ull
#define OPEN_BURST 10
/* The consoles file is a list of lines of ~120 bytes; a huge one is no list of ours. */
#define FILE_MAX (4 << 20)

bool slim_enroll_name_valid(const char *text)
{
	size_t n = strlen(text);
	if (n == 0 || n > SLIM_ENROLL_NAME_MAX) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char ch = text[i];
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
				ch == '.' || ch == '_' || ch == '-')) {
			return false;
		}
	}
	return true;
}

static struct slim_enrolled *find(struct slim_enroll *e, const char *id)
{
	for (size_t i = 0; i < e->n; i++) {
		if (strcmp(e->list[i].id, id) == 0) {
			return &e->list[i];
		}
	}
	return NULL;
}

static struct slim_enrolled *add(struct slim_enroll *e, const char *id)
{
	struct slim_enrolled *found = find(e, id);
	if (found) {
		return found;
	}
	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 16;
		struct slim_enrolled *list = realloc(e->list, cap * sizeof(*list));
		if (!list) {
			return NULL;
		}
		e->list = list;
		e->cap = cap;
	}
	struct slim_enrolled *c = &e->list[e->n++];
	memset(c, 0, sizeof(*c));
	memcpy(c->id, id, strnlen(id, sizeof(c->id) - 1));
	return c;
}

/* An id as HELLO may carry one: what console ids look like in this table. */
static bool id_valid(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n > SLIM_CONSOLE_ID_LEN) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char ch = id[i];
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
				ch == '-' || ch == '_' || ch == '.' || ch == ':')) {
			return false;
		}
	}
	return true;
}

static bool parse_line(struct slim_enroll *e, char *line)
{
	char *f[5];
	int n = 0;
	for (char *save = NULL, *tok = strtok_r(line, " \t", &save); tok && n < 5;
			tok = strtok_r(NULL, " \t", &save)) {
		f[n++] = tok;
	}
	if (n < 3 || n > 4) {
		return false;
	}
	bool revoked = strcmp(f[0], "revoked") == 0;
	uint8_t key[SLIM_SEC_FINGERPRINT_LEN];
	bool has_key = strcmp(f[2], "-") != 0;
	if ((!revoked && strcmp(f[0], "approved") != 0) || !id_valid(f[1]) ||
			(has_key && !slim_sec_fingerprint_parse(f[2], key)) ||
			(n == 4 && !slim_enroll_name_valid(f[3]))) {
		return false;
	}
	if (has_key) {
		/* the id is the key's: a line that says otherwise was not written by us */
		char derived[SLIM_CONSOLE_ID_LEN + 1];
		slim_sec_fingerprint_id(key, derived);
		if (strcmp(derived, f[1]) != 0) {
			return false;
		}
	}
	struct slim_enrolled *c = add(e, f[1]);
	if (!c) {
		return false;
	}
	c->revoked = revoked;
	c->has_key = has_key;
	if (has_key) {
		memcpy(c->key, key, sizeof(key));
	}
	snprintf(c->name, sizeof(c->name), "%s", n == 4 ? f[3] : "");
	return true;
}

int slim_enroll_parse(struct slim_enroll *e, const char *text, size_t len, const char *name)
{
	int bad = 0;
	unsigned lineno = 0;
	size_t pos = 0;
	char line[512];
	const char *why;
	while (slim_text_line(text, len, &pos, line, sizeof(line), &why, NULL)) {
		lineno++;
		if (why || (line[0] != '\0' && line[0] != '#' && !parse_line(e, line))) {
			/* a local file: every bad line is worth a line of log */
			slim_log(SLIM_LOG_ERROR, "%s:%u: not \"approved|revoked ID sha256:HEX|- "
				"[NAME]\"; skipped", name, lineno);
			bad++;
		}
	}
	return bad;
}

bool slim_enroll_init(struct slim_enroll *e, const char *path, enum slim_enroll_mode mode)
{
	memset(e, 0, sizeof(*e));
	e->mode = mode;
	e->open_tokens = OPEN_BURST;
	e->log_rl = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	snprintf(e->path, sizeof(e->path), "%s", path ? path : "");
	if (!path) {
		return true;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT) {
			slim_log(SLIM_LOG_ERROR, "%s: %s", path, strerror(errno));
		}
		return true;
	}
	char *text = malloc(FILE_MAX);
	ssize_t len = text ? read(fd, text, FILE_MAX) : -1;
	close(fd);
	if (len < 0) {
		slim_log(SLIM_LOG_ERROR, "%s: %s", path, text ? strerror(errno) : "out of memory");
	} else {
		slim_enroll_parse(e, text, (size_t)len, path);
	}
	free(text);
	return text != NULL;
}

void slim_enroll_finish(struct slim_enroll *e)
{
	free(e->list);
	e->list = NULL;
	e->n = e->cap = 0;
}

bool slim_enroll_write(const struct slim_enroll *e)
{
	if (e->path[0] == '\0') {
		return true;
	}
	char tmp[320];
	snprintf(tmp, sizeof(tmp), "%s.tmp", e->path);
	FILE *f = NULL;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		f = fdopen(fd, "w");
	}
	if (!f) {
		slim_log(SLIM_LOG_ERROR, "%s: %s", tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
		}
		return false;
	}
	fprintf(f, "# consoles of this session manager (slimlandctl approve/revoke)\n");
	for (size_t i = 0; i < e->n; i++) {
		const struct slim_enrolled *c = &e->list[i];
		char hex[2 * SLIM_SEC_FINGERPRINT_LEN + 1] = "-";
		if (c->has_key) {
			slim_sec_fingerprint_hex(c->key, hex);
		}
		fprintf(f, "%s %s %s%s%s%s\n", c->revoked ? "revoked" : "approved", c->id,
			c->has_key ? "sha256:" : "", hex, c->name[0] ? " " : "", c->name);
	}
	bool ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
	ok = fclose(f) == 0 && ok;
	ok = ok && rename(tmp, e->path) == 0;
	if (!ok) {
		slim_log(SLIM_LOG_ERROR, "%s: %s", e->path, strerror(errno));
		unlink(tmp);
	}
	return ok;
}

static struct slim_pending *find_pending(struct slim_enroll *e, const char *id)
{
	for (size_t i = 0; i < e->n_pending; i++) {
		if (strcmp(e->pending[i].id, id) == 0) {
			return &e->pending[i];
		}
	}
	return NULL;
}

static void remove_pending(struct slim_enroll *e, struct slim_pending *p)
{
	size_t i = (size_t)(p - e->pending);
	memmove(&e->pending[i], &e->pending[i + 1], (e->n_pending - i - 1) * sizeof(*p));
	e->n_pending--;
}

/* Noted (or noted again) as waiting; the one waiting longest makes room. */
static void note_waiting(struct slim_enroll *e, const struct slim_enroll_hello *h,
		uint64_t now_us)
{
	const char *id = h->id;
	struct slim_pending *p = find_pending(e, id);
	if (!p) {
		if (e->n_pending == SLIM_ENROLL_PENDING_MAX) {
			size_t oldest = 0;
			for (size_t i = 1; i < e->n_pending; i++) {
				if (e->pending[i].last_us < e->pending[oldest].last_us) {
					oldest = i;
				}
			}
			remove_pending(e, &e->pending[oldest]);
		}
		p = &e->pending[e->n_pending++];
		memset(p, 0, sizeof(*p));
		snprintf(p->id, sizeof(p->id), "%s", id);
		p->first_us = now_us;
		if (slim_ratelimit(&e->log_rl, slim_now_us())) {
			slim_log(SLIM_LOG_INFO, "console %s: new, waiting for an administrator "
				"(slimlandctl approve %s)", id, id);
		}
	}
	p->has_key = h->key != NULL;
	if (h->key) {
		memcpy(p->key, h->key, sizeof(p->key));
	}
	if ((size_t)h->addr_len <= sizeof(p->addr)) {
		memcpy(&p->addr, h->addr, h->addr_len);
		p->addr_len = h->addr_len;
	}
	p->last_us = now_us;
	p->conn = h->conn;
	p->assoc = h->assoc;
}

/* enroll = open: a token bucket, so that keys made up by one host do not start greeters at speed. */
static bool open_allows(struct slim_enroll *e, uint64_t now_us)
{
	uint64_t earned = (now_us - e->open_last_us) / OPEN_RATE_US;
	if (e->open_last_us == 0 || earned > 0) {
		e->open_tokens = e->open_tokens + earned > OPEN_BURST ? OPEN_BURST :
			(uint32_t)(e->open_tokens + earned);
		e->open_last_us = now_us;
	}
	if (e->open_tokens == 0) {
		return false;
	}
	e->open_tokens--;
	return true;
}

bool slim_enroll_serves(const struct slim_enroll *e, const char *id)
{
	for (size_t i = 0; i < e->n; i++) {
		if (strcmp(e->list[i].id, id) == 0) {
			return !e->list[i].revoked;
		}
	}
	return false;
}

enum slim_enroll_verdict slim_enroll_check(struct slim_enroll *e,
		const struct slim_enroll_hello *h, uint64_t now_us)
{
	struct slim_enrolled *c = find(e, h->id);
	if (c) {
		return c->revoked ? SLIM_ENROLL_REFUSE : SLIM_ENROLL_ADMIT;
	}
	switch (e->mode) {
	case SLIM_ENROLL_CLOSED:
		return SLIM_ENROLL_REFUSE;
	case SLIM_ENROLL_APPROVE:
		note_waiting(e, h, now_us);
		return SLIM_ENROLL_WAIT;
	case SLIM_ENROLL_OPEN:
		break;
	}
	if (!open_allows(e, now_us) || !(c = add(e, h->id))) {
		return SLIM_ENROLL_WAIT; /* its HELLO comes again in a few seconds */
	}
	c->has_key = h->key != NULL;
	if (h->key) {
		memcpy(c->key, h->key, sizeof(c->key));
	}
	slim_log(SLIM_LOG_INFO, "console %s: enrolled (enroll = open)", h->id);
	slim_enroll_write(e);
	return SLIM_ENROLL_ADMIT;
}

/* `which`, a whole id or a prefix of at least 8 digits, among the consoles; NULL with *why if none or many. */
static const char *resolve(struct slim_enroll *e, const char *which, const char **why)
{
	size_t n = strlen(which);
	const char *found = NULL;
	bool many = false;
	for (size_t i = 0; i < e->n_pending + e->n; i++) {
		const char *id = i < e->n_pending ? e->pending[i].id : e->list[i - e->n_pending].id;
		if (strcmp(id, which) == 0) {
			return id; /* a whole id is never ambiguous */
		}
		if (strncmp(id, which, n) == 0) {
			many = many || (found && strcmp(found, id) != 0);
			found = id;
		}
	}
	if (n < 8) {
		*why = "give the console's id, or 8 digits of it at least";
		return NULL;
	}
	if (many) {
		*why = "more than one console has an id that starts so";
		return NULL;
	}
	if (!found) {
		*why = "no such console (slimlandctl consoles lists them)";
	}
	return found;
}

/*
 * Records the administrator's decision on a console: a pending console's key
 * (and, to the caller, its live association) moves into the table.
 */
static struct slim_enrolled *decide(struct slim_enroll *e, const char *resolved, char *id,
		bool revoked, struct slim_sec_conn **conn, uint32_t *assoc, const char **why)
{
	snprintf(id, SLIM_CONSOLE_ID_LEN + 1, "%s", resolved);
	struct slim_pending *p = find_pending(e, id);
	struct slim_enrolled *c = add(e, id);
	if (!c) {
		*why = "out of memory";
		return NULL;
	}
	c->revoked = revoked;
	if (p) {
		c->has_key = p->has_key;
		memcpy(c->key, p->key, sizeof(c->key));
		if (conn) {
			*conn = p->conn;
			*assoc = p->assoc;
		}
		remove_pending(e, p);
	}
	return c;
}

static bool save(struct slim_enroll *e, const char **why)
{
	if (!slim_enroll_write(e)) {
		*why = "cannot write the consoles file (see the log)";
		return false;
	}
	return true;
}

bool slim_enroll_approve(struct slim_enroll *e, const char *which, const char *name, char *id,
		struct slim_sec_conn **conn, uint32_t *assoc, const char **why)
{
	*conn = NULL;
	*assoc = 0;
	const char *resolved = resolve(e, which, why);
	if (!resolved) {
		return false;
	}
	if (name && !slim_enroll_name_valid(name)) {
		*why = "a name is 1 to 63 letters, digits, '.', '_' or '-'";
		return false;
	}
	struct slim_enrolled *c = decide(e, resolved, id, false, conn, assoc, why);
	if (!c) {
		return false;
	}
	if (name) {
		snprintf(c->name, sizeof(c->name), "%s", name);
	}
	return save(e, why);
}

bool slim_enroll_revoke(struct slim_enroll *e, const char *which, char *id, const char **why)
{
	const char *resolved = resolve(e, which, why);
	return resolved && decide(e, resolved, id, true, NULL, NULL, why) && save(e, why);
}

bool slim_enroll_adopt(struct slim_enroll *e, const struct slim_enrolled *from,
		struct slim_sec_conn **conn, uint32_t *assoc)
{
	*conn = NULL;
	*assoc = 0;
	if (!id_valid(from->id)) {
		return false;
	}
	struct slim_enrolled *c = find(e, from->id);
	if (c && c->revoked == from->revoked && c->has_key == from->has_key &&
			memcmp(c->key, from->key, sizeof(c->key)) == 0 &&
			strcmp(c->name, from->name) == 0) {
		return false;
	}
	struct slim_pending *p = find_pending(e, from->id);
	if (!c && !(c = add(e, from->id))) {
		return false;
	}
	*c = *from;
	if (p) {
		/* a console waiting here, approved elsewhere: told at once, as by approve */
		if (!from->revoked && (!from->has_key || (p->has_key &&
				memcmp(p->key, from->key, sizeof(p->key)) == 0))) {
			*conn = p->conn;
			*assoc = p->assoc;
		}
		remove_pending(e, p);
	}
	slim_enroll_write(e);
	return true;
}

void slim_enroll_forget_conn(struct slim_enroll *e, const struct slim_sec_conn *conn)
{
	for (size_t i = 0; i < e->n_pending; i++) {
		if (e->pending[i].conn == conn) {
			e->pending[i].conn = NULL;
		}
	}
}
