#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "prom-text.h"

void slim_prom_init(struct slim_prom *p)
{
	*p = (struct slim_prom){ 0 };
}

void slim_prom_finish(struct slim_prom *p)
{
	free(p->buf);
	*p = (struct slim_prom){ 0 };
}

char *slim_prom_take(struct slim_prom *p, size_t *len)
{
	if (p->failed || !p->buf) {
		slim_prom_finish(p);
		return NULL;
	}
	char *buf = p->buf;
	*len = p->len;
	*p = (struct slim_prom){ 0 };
	return buf;
}

static bool reserve(struct slim_prom *p, size_t more)
{
	if (p->failed) {
		return false;
	}
	if (more > SLIM_PROM_MAX_BYTES - p->len) {
		p->failed = true;
		return false;
	}
	size_t need = p->len + more + 1;
	if (need <= p->cap) {
		return true;
	}
	size_t cap = p->cap ? p->cap : 4096;
	while (cap < need) {
		cap *= 2;
	}
	char *buf = realloc(p->buf, cap);
	if (!buf) {
		p->failed = true;
		return false;
	}
	p->buf = buf;
	p->cap = cap;
	return true;
}

static void put(struct slim_prom *p, const char *s, size_t n)
{
	if (reserve(p, n)) {
		memcpy(p->buf + p->len, s, n);
		p->len += n;
		p->buf[p->len] = '\0';
	}
}

__attribute__((format(printf, 2, 3)))
static void putf(struct slim_prom *p, const char *fmt, ...)
{
	char tmp[512];
	va_list args;
	va_start(args, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, args);
	va_end(args);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		p->failed = true; /* no name or number of ours is this long */
		return;
	}
	put(p, tmp, (size_t)n);
}

void slim_prom_escape(struct slim_prom *p, const char *value)
{
	for (const unsigned char *c = (const unsigned char *)value; *c; c++) {
		if (*c == '\\') {
			put(p, "\\\\", 2);
		} else if (*c == '"') {
			put(p, "\\\"", 2);
		} else if (*c == '\n') {
			put(p, "\\n", 2);
		} else if (*c < 0x20 || *c >= 0x7f) {
			put(p, "?", 1);
		} else {
			put(p, (const char *)c, 1);
		}
	}
}

void slim_prom_family(struct slim_prom *p, const char *name, const char *type,
		const char *help)
{
	/* our own HELP texts: no backslash or newline to escape */
	putf(p, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void sample_start(struct slim_prom *p, const char *name,
		const struct slim_prom_label *labels, size_t n)
{
	put(p, name, strlen(name));
	for (size_t i = 0; i < n; i++) {
		putf(p, "%s%s=\"", i ? "," : "{", labels[i].name);
		slim_prom_escape(p, labels[i].value);
		put(p, "\"", 1);
	}
	if (n) {
		put(p, "}", 1);
	}
}

void slim_prom_u64(struct slim_prom *p, const char *name,
		const struct slim_prom_label *labels, size_t n, uint64_t value)
{
	sample_start(p, name, labels, n);
	putf(p, " %llu\n", (unsigned long long)value);
}

void slim_prom_f64(struct slim_prom *p, const char *name,
		const struct slim_prom_label *labels, size_t n, double value)
{
	sample_start(p, name, labels, n);
	putf(p, " %.15g\n", value);
}
