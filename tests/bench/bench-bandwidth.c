/*
 * Bandwidth of everyday work, against raw pixels (cf. SLIM section 5 and
 * Figure 4: the protocol sends 2-10x less than the changed pixels).
 * Scripted workloads in a real session, measured at the console:
 *
 *   typing    foot, 300 characters of prose, one key every 12 ms
 *   scroll    foot, `seq 1 4000`: the terminal scrolls as fast as it can
 *   drag      a 256x256 window dragged 400 px with Alt+button, 40 steps
 *   menus     gtk3-demo's menu demo: F10 opens the menu bar, arrows walk
 *             through menus and submenus, Escape closes them
 *
 * For each: input events, bytes received (datagrams, headers included),
 * bytes per input event, average Mbit/s over the workload, and the raw
 * size of the pixels the console changed (3 bytes a pixel) against it.
 *
 *   bench-bandwidth [--json] [--quick]
 */
#include <linux/input-event-codes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "session.h"

#define KEY_INTERVAL_MS 12

struct workload {
	const char *name, *what;
	uint64_t events, bytes, pixels, us;
	bool ran;
};

struct counters {
	uint64_t bytes, pixels, us;
};

static struct counters snapshot(struct bench_session *s)
{
	const struct slim_console_stats *st = slim_console_core_stats(s->core);
	struct counters c = { .bytes = s->bytes_received, .us = bench_now_us() };
	for (int t = SLIM_CMD_FILL; t <= SLIM_CMD_CSCS; t++) {
		c.pixels += st->pixels[t];
	}
	return c;
}

static void finish(struct workload *w, struct bench_session *s, struct counters start)
{
	struct counters end = snapshot(s);
	w->bytes = end.bytes - start.bytes;
	w->pixels = end.pixels - start.pixels;
	w->us = end.us - start.us;
	w->ran = true;
}

/* One key, then whatever the screen does until the next is due. */
static void press(struct bench_session *s, uint32_t code, uint64_t *events)
{
	uint64_t t0 = bench_now_us();
	bench_session_key(s, code, true);
	bench_session_key(s, code, false);
	*events += 2;
	int rest = KEY_INTERVAL_MS - (int)((bench_now_us() - t0) / 1000);
	bench_session_settle(s, rest > 0 ? rest : 1, rest > 0 ? rest : 1);
}

static void type(struct bench_session *s, const char *text, uint64_t *events)
{
	for (const char *c = text; *c; c++) {
		press(s, bench_keycode(*c), events);
	}
}

static const char prose[] =
	"the console is only a framebuffer and the server holds all true state "
	"so a user can walk to another desk and carry on where they left off "
	"the protocol sends low level commands that compress the pixels of "
	"text and user interfaces by taking advantage of their redundancy ";

static void run_foot(const char *slimland, bool quick, struct workload *typing,
		struct workload *scroll)
{
	struct bench_session s;
	char *argv[] = { "foot", "-o", "cursor.blink=no", "sh", NULL };
	if (!bench_session_start(&s, slimland, 1280, 720, BENCH_LINK_ATTACH)) {
		bench_session_stop(&s);
		return;
	}
	setenv("PS1", "$ ", true);
	pid_t foot = bench_session_client(&s, argv, NULL);
	bench_session_settle(&s, 500, 10000);

	struct counters start = snapshot(&s);
	size_t n = quick ? 60 : strlen(prose);
	char text[sizeof(prose)];
	memcpy(text, prose, n);
	text[n] = '\0';
	type(&s, text, &typing->events);
	bench_session_settle(&s, 300, 2000);
	finish(typing, &s, start);
	/* Throw the line away: Ctrl+U. */
	bench_session_key(&s, KEY_LEFTCTRL, true);
	press(&s, KEY_U, &typing->events);
	bench_session_key(&s, KEY_LEFTCTRL, false);
	bench_session_settle(&s, 300, 2000);

	start = snapshot(&s);
	type(&s, quick ? "seq 1 500\n" : "seq 1 4000\n", &scroll->events);
	bench_session_settle(&s, 300, 30000);
	finish(scroll, &s, start);

	kill(foot, SIGTERM);
	waitpid(foot, NULL, 0);
	bench_session_stop(&s);
}

static void run_drag(const char *slimland, struct workload *drag)
{
	struct bench_session s;
	char *argv[] = { SLIM_ECHO_BIN, NULL };
	if (!bench_session_start(&s, slimland, 1280, 720, BENCH_LINK_ATTACH)) {
		bench_session_stop(&s);
		return;
	}
	int out = -1;
	char line[32];
	pid_t echo = bench_session_client(&s, argv, &out);
	bench_read_line(out, line, sizeof(line), 10000);
	bench_session_settle(&s, 300, 5000);

	/* The first window is placed at (32, 32); grab it in the middle. */
	double x = 160, y = 160;
	struct counters start = snapshot(&s);
	bench_session_pointer(&s, x, y);
	bench_session_key(&s, KEY_LEFTALT, true);
	bench_session_button(&s, BTN_LEFT, true);
	drag->events += 3;
	for (int i = 0; i < 40; i++) {
		x += 10;
		y += 5;
		bench_session_pointer(&s, x, y);
		drag->events++;
		bench_session_wait_frame(&s, 1000);
	}
	bench_session_button(&s, BTN_LEFT, false);
	bench_session_key(&s, KEY_LEFTALT, false);
	drag->events += 2;
	bench_session_settle(&s, 300, 3000);
	finish(drag, &s, start);

	kill(echo, SIGTERM);
	waitpid(echo, NULL, 0);
	bench_session_stop(&s);
}

/* GTK without animations: a spinner would otherwise be all there is to measure. */
static bool gtk_settings(const struct bench_session *s)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/gtk-3.0", s->runtime_dir);
	if (mkdir(path, 0700) != 0) {
		return false;
	}
	snprintf(path, sizeof(path), "%s/gtk-3.0/settings.ini", s->runtime_dir);
	FILE *f = fopen(path, "w");
	if (!f) {
		return false;
	}
	fputs("[Settings]\ngtk-enable-animations=false\ngtk-cursor-blink=false\n", f);
	fclose(f);
	setenv("XDG_CONFIG_HOME", s->runtime_dir, true);
	setenv("NO_AT_BRIDGE", "1", true);
	return true;
}

static void run_menus(const char *slimland, bool quick, struct workload *menus)
{
	struct bench_session s;
	char *argv[] = { "gtk3-demo", "--run=menus", NULL };
	if (!bench_session_start(&s, slimland, 1280, 720, BENCH_LINK_ATTACH) || !gtk_settings(&s)) {
		bench_session_stop(&s);
		return;
	}
	pid_t gtk = bench_session_client(&s, argv, NULL);
	bench_session_settle(&s, 500, 20000);
	static const uint32_t walk[] = {
		KEY_F10, KEY_RIGHT, KEY_RIGHT, KEY_DOWN, KEY_DOWN, KEY_RIGHT, KEY_LEFT,
		KEY_LEFT, KEY_ESC, KEY_ESC, KEY_ESC,
	};
	struct counters start = snapshot(&s);
	for (int i = 0; i < (quick ? 1 : 4); i++) {
		for (size_t k = 0; k < sizeof(walk) / sizeof(walk[0]); k++) {
			press(&s, walk[k], &menus->events);
			bench_session_settle(&s, 150, 1500);
		}
	}
	finish(menus, &s, start);
	kill(gtk, SIGTERM);
	waitpid(gtk, NULL, 0);
	bench_session_stop(&s);
}

int main(int argc, char *argv[])
{
	bool json, quick;
	if (!bench_options(argc, argv, &json, &quick)) {
		return 2;
	}
	struct workload w[] = {
		{ .name = "typing", .what = "foot, prose typed" },
		{ .name = "scroll", .what = "foot, seq scrolling" },
		{ .name = "drag", .what = "window dragged" },
		{ .name = "menus", .what = "GTK menus walked" },
	};
	size_t n = sizeof(w) / sizeof(w[0]);
	run_foot(SLIMLAND_BIN, quick, &w[0], &w[1]);
	run_drag(SLIMLAND_BIN, &w[2]);
	run_menus(SLIMLAND_BIN, quick, &w[3]);

	if (json) {
		printf("{");
		for (size_t i = 0; i < n; i++) {
			double s = (double)w[i].us / 1e6;
			printf("%s\"%s_input_events\": %llu, \"%s_bytes\": %llu, "
				"\"%s_bytes_per_event\": %.1f, \"%s_mbit_per_s\": %.3f, "
				"\"%s_raw_bytes\": %llu, \"%s_raw_to_wire_ratio\": %.2f",
				i ? ", " : "", w[i].name, (unsigned long long)w[i].events, w[i].name,
				(unsigned long long)w[i].bytes, w[i].name,
				w[i].events ? (double)w[i].bytes / (double)w[i].events : 0, w[i].name,
				s > 0 ? (double)w[i].bytes * 8 / s / 1e6 : 0, w[i].name,
				(unsigned long long)(w[i].pixels * 3), w[i].name,
				w[i].bytes ? (double)(w[i].pixels * 3) / (double)w[i].bytes : 0);
		}
		printf("}\n");
		return 0;
	}
	printf("Bandwidth by workload, measured at the console (raw = 3 bytes a changed pixel)\n\n");
	printf("%-8s %-22s %7s %10s %10s %9s %11s %8s\n", "workload", "", "events", "bytes",
		"B/event", "Mbit/s", "raw bytes", "raw/wire");
	for (size_t i = 0; i < n; i++) {
		if (!w[i].ran) {
			printf("%-8s %-22s  (did not run)\n", w[i].name, w[i].what);
			continue;
		}
		double s = (double)w[i].us / 1e6;
		printf("%-8s %-22s %7llu %10llu %10.1f %9.3f %11llu %7.1fx\n", w[i].name, w[i].what,
			(unsigned long long)w[i].events, (unsigned long long)w[i].bytes,
			w[i].events ? (double)w[i].bytes / (double)w[i].events : 0,
			s > 0 ? (double)w[i].bytes * 8 / s / 1e6 : 0,
			(unsigned long long)(w[i].pixels * 3),
			w[i].bytes ? (double)(w[i].pixels * 3) / (double)w[i].bytes : 0);
	}
	return 0;
}
