/*
 * One sample line of the Prometheus text the manager answers `metrics`
 * with (metrics-render.h): NAME{LABEL="VALUE",...} NUMBER. What does not
 * fit these bounds is no sample (comments are none either).
 */
#ifndef SLIMLANDCTL_TOP_PARSE_H
#define SLIMLANDCTL_TOP_PARSE_H

#include <stdbool.h>

#define TOP_LABELS 8

struct top_sample {
	char name[96];
	int n_labels;
	struct {
		char name[32];
		char value[96]; /* unescaped */
	} labels[TOP_LABELS];
	double value;
};

bool top_parse_sample(const char *line, struct top_sample *out);
/* The value of label `name`, or "" if the sample has none. */
const char *top_label(const struct top_sample *s, const char *name);

#endif
