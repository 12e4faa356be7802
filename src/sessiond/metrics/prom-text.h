/*
 * The Prometheus text exposition format, version 0.0.4: families with
 * their HELP and TYPE, samples with escaped label values, into a buffer
 * that grows up to a bound. Nothing here knows the manager.
 */
#ifndef SLIM_PROM_TEXT_H
#define SLIM_PROM_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What one scrape may take; past it the text is refused whole. */
#define SLIM_PROM_MAX_BYTES (8u << 20)

struct slim_prom {
	char *buf;
	size_t len, cap;
	bool failed; /* out of memory or past SLIM_PROM_MAX_BYTES */
};

struct slim_prom_label {
	const char *name, *value;
};

void slim_prom_init(struct slim_prom *p);
/* The text (NUL-terminated, the caller's to free) and its length; NULL if it failed. */
char *slim_prom_take(struct slim_prom *p, size_t *len);
void slim_prom_finish(struct slim_prom *p);

/* `# HELP` and `# TYPE` (counter, gauge, histogram); each family once. */
void slim_prom_family(struct slim_prom *p, const char *name, const char *type,
		const char *help);
/* NAME{LABELS} VALUE, as an integer or as a double. */
void slim_prom_u64(struct slim_prom *p, const char *name,
		const struct slim_prom_label *labels, size_t n, uint64_t value);
void slim_prom_f64(struct slim_prom *p, const char *name,
		const struct slim_prom_label *labels, size_t n, double value);

/*
 * A label value as the format wants it between its quotes: `\` `"` and
 * newline escaped; other control bytes and anything outside ASCII (names
 * come from users and consoles) become `?`, so the text is always UTF-8.
 */
void slim_prom_escape(struct slim_prom *p, const char *value);

#endif
