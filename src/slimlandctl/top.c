/*
 * slimlandctl top: every second, the manager's metrics (the `metrics`
 * request: the Prometheus text of metrics-render.h) as a table of the
 * consoles and one of the sessions, with rates from the last second.
 * ANSI escapes, no curses; q or Ctrl-C ends it.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include "top-parse.h"
#include "top.h"

#define TOP_ROWS 64

struct top_console {
	char id[96], state[16], session[16], user[96];
	double rtt, rate, bytes, keys, key_sum, key_p50;
	double buckets[16], bucket_le[16];
	int n_buckets;
};

struct top_session {
	char id[16], user[96], state[16], console[96];
	double cpu, memory;
};

struct top_view {
	struct top_console consoles[TOP_ROWS];
	int n_consoles;
	struct top_session sessions[TOP_ROWS];
	int n_sessions;
	double manager_cpu, manager_rss;
};

static volatile sig_atomic_t stop;

static void handle_signal(int sig)
{
	stop = 1;
}

static struct top_console *console_row(struct top_view *v, const char *id)
{
	for (int i = 0; i < v->n_consoles; i++) {
		if (strcmp(v->consoles[i].id, id) == 0) {
			return &v->consoles[i];
		}
	}
	if (!id[0] || v->n_consoles == TOP_ROWS) {
		return NULL;
	}
	struct top_console *c = &v->consoles[v->n_consoles++];
	snprintf(c->id, sizeof(c->id), "%s", id);
	snprintf(c->state, sizeof(c->state), "-");
	return c;
}

static struct top_session *session_row(struct top_view *v, const char *id)
{
	for (int i = 0; i < v->n_sessions; i++) {
		if (strcmp(v->sessions[i].id, id) == 0) {
			return &v->sessions[i];
		}
	}
	if (!id[0] || v->n_sessions == TOP_ROWS) {
		return NULL;
	}
	struct top_session *s = &v->sessions[v->n_sessions++];
	snprintf(s->id, sizeof(s->id), "%s", id);
	return s;
}

static void take(struct top_view *v, const struct top_sample *s)
{
	const char *name = s->name;
	if (strcmp(name, "process_cpu_seconds_total") == 0) {
		v->manager_cpu = s->value;
	} else if (strcmp(name, "process_resident_memory_bytes") == 0) {
		v->manager_rss = s->value;
	} else if (strncmp(name, "slimland_console_", 17) == 0) {
		struct top_console *c = console_row(v, top_label(s, "console"));
		if (!c) {
			return;
		}
		if (top_label(s, "session")[0]) {
			snprintf(c->session, sizeof(c->session), "%s", top_label(s, "session"));
			snprintf(c->user, sizeof(c->user), "%s", top_label(s, "user"));
		}
		if (strcmp(name, "slimland_console_state") == 0 && s->value == 1) {
			snprintf(c->state, sizeof(c->state), "%s", top_label(s, "state"));
		} else if (strcmp(name, "slimland_console_round_trip_seconds") == 0) {
			c->rtt = s->value;
		} else if (strcmp(name, "slimland_console_link_rate_bytes_per_second") == 0) {
			c->rate = s->value;
		} else if (strcmp(name, "slimland_console_sent_bytes_total") == 0) {
			c->bytes = s->value;
		} else if (strcmp(name, "slimland_console_key_to_pixels_seconds_count") == 0) {
			c->keys = s->value;
		} else if (strcmp(name, "slimland_console_key_to_pixels_seconds_sum") == 0) {
			c->key_sum = s->value;
		} else if (strcmp(name, "slimland_console_key_to_pixels_seconds_bucket") == 0 &&
				c->n_buckets < 16) {
			c->bucket_le[c->n_buckets] = strtod(top_label(s, "le"), NULL);
			c->buckets[c->n_buckets++] = s->value;
		}
	} else if (strncmp(name, "slimland_session_", 17) == 0) {
		struct top_session *row = session_row(v, top_label(s, "session"));
		if (!row) {
			return;
		}
		snprintf(row->user, sizeof(row->user), "%s", top_label(s, "user"));
		if (strcmp(name, "slimland_session_info") == 0) {
			snprintf(row->state, sizeof(row->state), "%s", top_label(s, "state"));
			snprintf(row->console, sizeof(row->console), "%s", top_label(s, "console"));
		} else if (strcmp(name, "slimland_session_cpu_seconds_total") == 0) {
			row->cpu += s->value;
		} else if (strcmp(name, "slimland_session_memory_bytes") == 0) {
			row->memory = s->value;
		}
	}
}

/* The manager's metrics now; false (said) if it cannot be asked. */
static bool fetch(const char *path, struct top_view *v)
{
	memset(v, 0, sizeof(*v));
	int fd = slimlandctl_connect(path);
	if (fd < 0) {
		return false;
	}
	FILE *in = fdopen(fd, "r+");
	if (!in) {
		close(fd);
		return false;
	}
	fputs("metrics\n", in);
	fflush(in);
	char line[2048];
	bool ok = false;
	while (fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line, "ok") == 0) {
			ok = true;
			break;
		}
		if (strncmp(line, "error ", 6) == 0) {
			fprintf(stderr, "slimlandctl: %s\n", line + 6);
			break;
		}
		struct top_sample s;
		if (top_parse_sample(line, &s)) {
			take(v, &s);
		}
	}
	fclose(in);
	/* Ctrl-C in the middle of an answer is no failure of the manager's */
	if (!ok && !stop) {
		fprintf(stderr, "slimlandctl: the session manager did not answer `metrics`\n");
	}
	return ok;
}

static const struct top_console *was_console(const struct top_view *v, const char *id)
{
	for (int i = 0; i < v->n_consoles; i++) {
		if (strcmp(v->consoles[i].id, id) == 0) {
			return &v->consoles[i];
		}
	}
	return NULL;
}

static const struct top_session *was_session(const struct top_view *v, const char *id)
{
	for (int i = 0; i < v->n_sessions; i++) {
		if (strcmp(v->sessions[i].id, id) == 0) {
			return &v->sessions[i];
		}
	}
	return NULL;
}

/* The keystroke-to-pixels median since the console's association began, ms; -1: none. */
static double median_ms(const struct top_console *c)
{
	if (c->keys < 1) {
		return -1;
	}
	for (int i = 0; i < c->n_buckets; i++) {
		if (c->buckets[i] >= c->keys / 2) {
			return c->bucket_le[i] * 1000;
		}
	}
	return -1;
}

static void show(const struct top_view *now, const struct top_view *before, double secs)
{
	char when[32];
	time_t t = time(NULL);
	strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
	/* home, clear: the whole view each time */
	printf("\033[H\033[2Jslimlandctl top  %s  manager: cpu %.1f%%  rss %.1f MiB   (q quits)\n\n",
		when, secs > 0 ? (now->manager_cpu - before->manager_cpu) / secs * 100 : 0.0,
		now->manager_rss / 1048576);
	printf("\033[7m%-32s %-8s %-7s %-12s %8s %10s %10s %6s %8s %8s\033[0m\n", "CONSOLE",
		"STATE", "SESSION", "USER", "RTT ms", "RATE Mb/s", "SENT kB/s", "KEYS/s",
		"KEY ms", "P50 ms");
	for (int i = 0; i < now->n_consoles; i++) {
		const struct top_console *c = &now->consoles[i];
		const struct top_console *b = was_console(before, c->id);
		double bytes = b && c->bytes >= b->bytes ? c->bytes - b->bytes : 0;
		double keys = b && c->keys >= b->keys ? c->keys - b->keys : 0;
		double key_ms = keys > 0 ? (c->key_sum - b->key_sum) / keys * 1000 : -1;
		double p50 = median_ms(c);
		char key_text[16] = "-", p50_text[16] = "-";
		if (key_ms >= 0) {
			snprintf(key_text, sizeof(key_text), "%.1f", key_ms);
		}
		if (p50 >= 0) {
			snprintf(p50_text, sizeof(p50_text), "<%.0f", p50);
		}
		printf("%-32.32s %-8s %-7s %-20.20s %8.1f %10.1f %10.1f %6.1f %8s %8s\n", c->id,
			c->state, c->session[0] ? c->session : "-", c->user[0] ? c->user : "-",
			c->rtt * 1000, c->rate * 8 / 1e6, secs > 0 ? bytes / secs / 1000 : 0.0,
			secs > 0 ? keys / secs : 0.0, key_text, p50_text);
	}
	printf("\n\033[7m%-7s %-20s %-10s %-32s %8s %10s\033[0m\n", "SESSION", "USER", "STATE",
		"CONSOLE", "CPU %", "MEM MiB");
	for (int i = 0; i < now->n_sessions; i++) {
		const struct top_session *s = &now->sessions[i];
		const struct top_session *b = was_session(before, s->id);
		double cpu = b && secs > 0 && s->cpu >= b->cpu ? (s->cpu - b->cpu) / secs * 100 : 0;
		printf("%-7s %-20.20s %-10s %-32.32s %8.1f %10.1f\n", s->id, s->user,
			s->state[0] ? s->state : "-", s->console[0] ? s->console : "-", cpu,
			s->memory / 1048576);
	}
	fflush(stdout);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int slimlandctl_top(const char *path)
{
	static struct top_view views[2];
	struct termios saved;
	bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
	if (tty) {
		/* a key at a time, not echoed; Ctrl-C still a signal */
		struct termios raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	struct sigaction sa = { .sa_handler = handle_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	int status = 0, cur = 0;
	double before_s = 0;
	bool have_before = false;
	while (!stop) {
		if (!fetch(path, &views[cur])) {
			status = stop ? 0 : 1;
			break;
		}
		double t = now_s();
		show(&views[cur], &views[!cur], have_before ? t - before_s : 0);
		have_before = true;
		before_s = t;
		cur = !cur;
		/* a second, or a key: q ends it, anything else redraws at once */
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
		if (poll(&p, 1, 1000) > 0) {
			char key;
			ssize_t n = read(STDIN_FILENO, &key, 1);
			if (n <= 0 || key == 'q' || key == 'Q') {
				break;
			}
		}
	}
	if (tty) {
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	}
	printf("\n");
	return status;
}
