/*
 * SLIM's Figure 6: the delay a slow link adds to everyday work. The
 * compositor runs in a network namespace of its own, joined to this one by
 * a veth pair; this process is the console (DTLS, a per-attach key). The
 * server's side of the link is shaped with a token bucket (tc tbf: 1, 2, 5,
 * 10 and 100 Mbit/s, a queue of 200 ms at most) or left alone, and for each
 * rate the same input is timed from the console sending it to the console
 * presenting the last frame it caused (nothing new for QUIET_MS):
 *
 *   typing     'a' and BackSpace in turn in foot
 *   scrolling  PgDn in less, in foot, through the licences in
 *              /usr/share/common-licenses (new text each time)
 *   dragging   slim-echo's window moved 10 px a step with Alt and the button
 *   menus      gtk3-demo's menus walked from the keyboard
 *   typing_video  typing in foot while mpv plays a 640x360 video beside it:
 *              timed to the frame in which foot's first line changed, as
 *              the video's frames never let the screen settle
 *
 * Added delay = p50 at a rate - p50 unshaped, the same run. Root only
 * (namespaces, tc); each workload's client is started once and every rate
 * runs against it.
 *
 *   bench-slowlink [--json] [--quick]
 */
#include <linux/input-event-codes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "session.h"

#define RATES 6
#define WORKLOADS 5
#define MAX_EVENTS 64
#define QUIET_MS 120

/* 0: unshaped */
static const unsigned rates_mbit[RATES] = { 0, 100, 10, 5, 2, 1 };
static const char *const workload_names[WORKLOADS] = {
	"typing", "scrolling", "dragging", "menus", "typing_video",
};

struct cell {
	size_t n, missed;
	uint64_t p50_us, p99_us;
	/* typing_video: the shaper's queue as each key was sent (tc's backlog at the rate) */
	size_t queue_n;
	uint64_t queue_p50_us, queue_max_us;
};

static struct cell cells[WORKLOADS][RATES];
static char netns[32], host_if[16], ns_if[16];
static bool netns_made;

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int run(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void teardown(void)
{
	if (netns_made) {
		run("ip netns delete %s 2>/dev/null", netns); /* its veth end goes with it */
		netns_made = false;
	}
}

static void handle_signal(int sig)
{
	teardown();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* 10.98.P.1 here, 10.98.P.2 in the namespace, P from our pid. */
static bool make_network(char *server_addr, size_t size)
{
	unsigned p = (unsigned)getpid() % 250 + 1;
	snprintf(netns, sizeof(netns), "slimslow%u", (unsigned)getpid());
	snprintf(host_if, sizeof(host_if), "ssh%u", (unsigned)getpid() % 100000);
	snprintf(ns_if, sizeof(ns_if), "ssn%u", (unsigned)getpid() % 100000);
	snprintf(server_addr, size, "10.98.%u.2", p);
	atexit(teardown);
	signal(SIGINT, handle_signal);
	signal(SIGTERM, handle_signal);
	netns_made = run("ip netns add %s", netns) == 0;
	return netns_made &&
		run("ip link add %s type veth peer name %s netns %s", host_if, ns_if, netns) == 0 &&
		run("ip addr add 10.98.%u.1/24 dev %s && ip link set %s up", p, host_if,
			host_if) == 0 &&
		run("ip netns exec %s sh -c 'ip addr add 10.98.%u.2/24 dev %s && "
			"ip link set %s up && ip link set lo up'", netns, p, ns_if, ns_if) == 0;
}

/* The server's side of the link at `mbit` (0: as fast as veth goes). */
static bool shape(unsigned mbit)
{
	if (mbit == 0) {
		run("ip netns exec %s tc qdisc del dev %s root 2>/dev/null", netns, ns_if);
		return true;
	}
	/* a bucket of 10 ms of the rate (a few packets at least), 200 ms of queue */
	unsigned burst = mbit * 1000 * 10 / 8;
	burst = burst > 4000 ? burst : 4000;
	return run("ip netns exec %s tc qdisc replace dev %s root tbf rate %umbit "
		"burst %u latency 200ms", netns, ns_if, mbit, burst) == 0;
}

typedef void (*input_fn)(struct bench_session *s, size_t i);

static void key_tap(struct bench_session *s, uint32_t code)
{
	bench_session_key(s, code, true);
	bench_session_key(s, code, false);
}

static void typing_input(struct bench_session *s, size_t i)
{
	key_tap(s, (i & 1) ? KEY_BACKSPACE : KEY_A);
}

/* always on: a page nobody saw yet, as reading goes (back and forth would be the cache's) */
static void scrolling_input(struct bench_session *s, size_t i)
{
	key_tap(s, KEY_PAGEDOWN);
}

static double drag_x = 160, drag_y = 160;

static void dragging_input(struct bench_session *s, size_t i)
{
	/* back and forth, so that the window stays on the screen */
	double dx = (i / 10) & 1 ? -10 : 10;
	drag_x += dx;
	drag_y += dx / 2;
	bench_session_pointer(s, drag_x, drag_y);
}

static void menus_input(struct bench_session *s, size_t i)
{
	static const uint32_t walk[] = {
		KEY_F10, KEY_RIGHT, KEY_RIGHT, KEY_DOWN, KEY_DOWN, KEY_RIGHT, KEY_LEFT,
		KEY_LEFT, KEY_ESC, KEY_ESC, KEY_ESC,
	};
	key_tap(s, walk[i % (sizeof(walk) / sizeof(walk[0]))]);
}

/* `events` inputs, each timed to the last frame it caused. */
/* FNV-1a of what the console shows of foot's first lines (its window is at 32, 32). */
static uint64_t echo_area(struct bench_session *s)
{
	const struct slim_fb *fb = slim_console_core_fb(s->core);
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint32_t y = 32; y < 80; y++) {
		const uint32_t *row = slim_fb_row(fb, 32, y);
		for (uint32_t x = 0; x < 200; x++) {
			h = (h ^ row[x]) * 0x100000001b3ull;
		}
	}
	return h;
}

/* Bytes waiting in the shaper now (tc's backlog), or -1 without one. */
static long shaper_backlog(void)
{
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "ip netns exec %s tc -s qdisc show dev %s", netns, ns_if);
	FILE *f = popen(cmd, "r");
	if (!f) {
		return -1;
	}
	char line[256];
	long bytes = -1;
	while (bytes < 0 && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "backlog "), *end;
		if (!p) {
			continue;
		}
		double v = strtod(p + 8, &end);
		/* tc says 1514b, 3Kb or 1Mb */
		bytes = (long)(v * (*end == 'K' ? 1024 : *end == 'M' ? 1048576 : 1));
	}
	pclose(f);
	return bytes;
}

/* Each key timed to the frame that changed foot's first lines. */
static struct cell measure_echo(struct bench_session *s, input_fn input, size_t events,
		unsigned mbit)
{
	uint64_t t[MAX_EVENTS], q[MAX_EVENTS];
	struct cell c = { 0 };
	for (size_t i = 0; i < events; i++) {
		long backlog = mbit ? shaper_backlog() : -1;
		if (backlog >= 0) {
			q[c.queue_n++] = (uint64_t)backlog * 8 / mbit;
		}
		uint64_t h = echo_area(s), t0 = bench_now_us();
		input(s, i);
		bool seen = false;
		while (!seen && bench_now_us() - t0 < 5000000 && bench_session_wait_frame(s, 5000)) {
			seen = echo_area(s) != h;
		}
		if (!seen) {
			c.missed++;
			continue;
		}
		t[c.n++] = s->last.applied_us - t0;
		bench_session_settle(s, 20, 50); /* what the video sends meanwhile */
	}
	qsort(t, c.n, sizeof(t[0]), bench_cmp_u64);
	c.p50_us = c.n ? t[c.n / 2] : 0;
	c.p99_us = c.n ? t[(size_t)(0.99 * (double)(c.n - 1))] : 0;
	qsort(q, c.queue_n, sizeof(q[0]), bench_cmp_u64);
	c.queue_p50_us = c.queue_n ? q[c.queue_n / 2] : 0;
	c.queue_max_us = c.queue_n ? q[c.queue_n - 1] : 0;
	return c;
}

static struct cell measure(struct bench_session *s, input_fn input, size_t events)
{
	uint64_t t[MAX_EVENTS];
	struct cell c = { 0 };
	for (size_t i = 0; i < events; i++) {
		uint32_t presented = s->presented;
		uint64_t t0 = bench_now_us();
		input(s, i);
		bench_session_settle(s, QUIET_MS, 5000);
		if (s->presented == presented) {
			c.missed++;
			continue;
		}
		t[c.n++] = s->last.applied_us - t0;
	}
	qsort(t, c.n, sizeof(t[0]), bench_cmp_u64);
	c.p50_us = c.n ? t[c.n / 2] : 0;
	c.p99_us = c.n ? t[(size_t)(0.99 * (double)(c.n - 1))] : 0;
	return c;
}

/* One workload's client (argv NULL: those running already), every rate against it. */
static bool workload(struct bench_session *s, int w, char *const argv[], bool ready,
		input_fn input, size_t events, bool quick)
{
	int out = -1;
	pid_t client = argv ? bench_session_client(s, argv, ready ? &out : NULL) : 0;
	char line[64];
	bool ok = client >= 0 && (!ready || bench_read_line(out, line, sizeof(line), 10000));
	if (out >= 0) {
		close(out);
	}
	if (argv) {
		bench_session_settle(s, 500, 10000);
	}
	if (ok && w == 2) {
		bench_session_pointer(s, drag_x, drag_y);
		bench_session_key(s, KEY_LEFTALT, true);
		bench_session_button(s, BTN_LEFT, true);
	}
	for (int r = 0; ok && r < RATES; r++) {
		if (quick && rates_mbit[r] != 0 && rates_mbit[r] != 2) {
			continue;
		}
		ok = shape(rates_mbit[r]);
		bench_session_settle(s, QUIET_MS, 2000);
		if (w == 4 && rates_mbit[r]) {
			/*
			 * The video filled the shaper before the link was known to
			 * be slow (the rate just fell 50-fold): measured once the
			 * server has learnt it and the queue has drained.
			 */
			for (uint64_t end = bench_now_us() + 5000000; bench_now_us() < end;) {
				bench_session_wait_frame(s, 200);
			}
		}
		cells[w][r] = w == 4 ? measure_echo(s, input, events, rates_mbit[r]) :
			measure(s, input, events);
		/*
		 * the link may stall a workload (reported as such); without a
		 * shaper it must not
		 */
		ok = ok && (cells[w][r].n > 0 || rates_mbit[r] != 0);
	}
	shape(0);
	if (w == 2) {
		bench_session_button(s, BTN_LEFT, false);
		bench_session_key(s, KEY_LEFTALT, false);
	}
	if (client > 0) {
		kill(client, SIGTERM);
		waitpid(client, NULL, 0);
	}
	bench_session_settle(s, 300, 3000);
	if (!ok) {
		fprintf(stderr, "bench-slowlink: %s failed\n", workload_names[w]);
	}
	return ok;
}

static void report(bool json, bool quick)
{
	if (json) {
		printf("{");
		const char *sep = "";
		for (int w = 0; w < WORKLOADS; w++) {
			for (int r = 0; r < RATES; r++) {
				const struct cell *c = &cells[w][r];
				char rate[16];
				snprintf(rate, sizeof(rate), rates_mbit[r] ? "%umbit" : "unshaped",
					rates_mbit[r]);
				if (quick && rates_mbit[r] != 0 && rates_mbit[r] != 2) {
					continue;
				}
				int64_t added = (int64_t)c->p50_us - (int64_t)cells[w][0].p50_us;
				/* a stalled cell: no input got its frame within 5 s */
				printf("%s\"%s_%s_inputs\": %zu, \"%s_%s_missed\": %zu", sep,
					workload_names[w], rate, c->n, workload_names[w], rate, c->missed);
				if (c->n) {
					printf(", \"%s_%s_p50_us\": %llu, \"%s_%s_p99_us\": %llu, "
						"\"%s_%s_added_p50_us\": %lld", workload_names[w], rate,
						(unsigned long long)c->p50_us, workload_names[w], rate,
						(unsigned long long)c->p99_us, workload_names[w], rate,
						(long long)added);
				}
				if (c->queue_n) {
					printf(", \"%s_%s_queue_p50_us\": %llu, \"%s_%s_queue_max_us\": %llu",
						workload_names[w], rate, (unsigned long long)c->queue_p50_us,
						workload_names[w], rate, (unsigned long long)c->queue_max_us);
				}
				sep = ", ";
			}
		}
		printf("}\n");
		return;
	}
	printf("SLIM Figure 6: delay a slow link adds, input to the last frame it caused "
		"(p50, ms; added over unshaped in brackets)\n\n%-12s", "workload");
	for (int r = 0; r < RATES; r++) {
		if (rates_mbit[r] == 0) {
			printf("%18s", "unshaped");
		} else if (!quick || rates_mbit[r] == 2) {
			char h[24];
			snprintf(h, sizeof(h), "%u Mbit/s", rates_mbit[r]);
			printf("%18s", h);
		}
	}
	printf("\n");
	for (int w = 0; w < WORKLOADS; w++) {
		printf("%-12s", workload_names[w]);
		for (int r = 0; r < RATES; r++) {
			const struct cell *c = &cells[w][r];
			if (quick && rates_mbit[r] != 0 && rates_mbit[r] != 2) {
				continue;
			}
			char v[32];
			snprintf(v, sizeof(v), r == 0 ? "%.1f" : "%.1f (%+.1f)", c->p50_us / 1000.0,
				((double)c->p50_us - (double)cells[w][0].p50_us) / 1000.0);
			printf("%18s", c->n ? v : "stalled");
		}
		printf("\n");
	}
	printf("\ntbf on the server's side of a veth pair, 200 ms of queue at most; "
		"the console over DTLS.\n\nThe shaper's queue as each key was sent beside the "
		"video (p50 / max, ms):");
	for (int r = 1; r < RATES; r++) {
		const struct cell *c = &cells[4][r];
		if (c->queue_n) {
			printf(" %u Mbit/s %.1f / %.1f;", rates_mbit[r], c->queue_p50_us / 1000.0,
				c->queue_max_us / 1000.0);
		}
	}
	printf("\n");
}

int main(int argc, char *argv[])
{
	bool json, quick;
	if (!bench_options(argc, argv, &json, &quick)) {
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bench-slowlink: needs root (network namespaces, tc)\n");
		return 77;
	}
	char addr[32];
	if (!make_network(addr, sizeof(addr))) {
		fprintf(stderr, "bench-slowlink: cannot make the network namespace and veth\n");
		return 1;
	}
	const char *prefix[] = { "ip", "netns", "exec", netns, NULL };
	bench_session_network(prefix, addr);
	struct bench_session s;
	if (!bench_session_start(&s, SLIMLAND_BIN, 1280, 720, BENCH_LINK_ATTACH)) {
		fprintf(stderr, "bench-slowlink: cannot start a session\n");
		return 1;
	}
	size_t events = quick ? 10 : 30;
	/* real prose to read: the licences every Debian system has (5,900 lines, 150 pages) */
	bool ok = true;
	char less[] = "exec cat /usr/share/common-licenses/* | less";
	char *typing[] = { "foot", "-o", "cursor.blink=no", "sh", "-c", "exec cat >/dev/null",
		NULL };
	/* beside the video: small, so that most of the video stays in sight */
	char *small_typing[] = { "foot", "-o", "cursor.blink=no", "--window-size-chars=40x5",
		"sh", "-c", "exec cat >/dev/null", NULL };
	char *scrolling[] = { "foot", "-o", "cursor.blink=no", "sh", "-c", less, NULL };
	char *dragging[] = { SLIM_ECHO_BIN, NULL };
	char *menus[] = { "gtk3-demo", "--run=menus", NULL };
	ok = ok && workload(&s, 0, typing, false, typing_input, events, quick);
	/* 15 pages a rate: 90 in all, each new */
	ok = ok && workload(&s, 1, scrolling, false, scrolling_input, quick ? 10 : 15, quick);
	ok = ok && workload(&s, 2, dragging, true, dragging_input, events, quick);
	ok = ok && workload(&s, 3, menus, false, menus_input, quick ? 11 : 22, quick);
	/*
	 * The video cascades over foot's window (new windows go 32 px right
	 * and down); a click on the corner it leaves uncovered gives foot the
	 * keyboard and brings it to the front, most of the video still seen.
	 */
	char *video[] = { "mpv", "--vo=wlshm", "--no-audio", "--hwdec=no", "--loop=inf",
		"--really-quiet", "--no-input-default-bindings",
		"av://lavfi:testsrc2=size=640x360:rate=25", NULL };
	pid_t term = ok ? bench_session_client(&s, small_typing, NULL) : -1;
	bench_session_settle(&s, 500, 10000);
	pid_t mpv = term > 0 ? bench_session_client(&s, video, NULL) : -1;
	for (uint64_t end = bench_now_us() + 2000000; mpv > 0 && bench_now_us() < end;) {
		bench_session_wait_frame(&s, 200);
	}
	bench_session_pointer(&s, 40, 40);
	bench_session_button(&s, BTN_LEFT, true);
	bench_session_button(&s, BTN_LEFT, false);
	bench_session_pointer(&s, 1200, 700); /* the pointer out of the way */
	ok = ok && mpv > 0 && workload(&s, 4, NULL, false, typing_input, events, quick);
	for (pid_t *p = (pid_t[]){ mpv, term }, *e = p + 2; p < e; p++) {
		if (*p > 0) {
			kill(*p, SIGTERM);
			waitpid(*p, NULL, 0);
		}
	}
	bench_session_stop(&s);
	report(json, quick);
	return ok ? 0 : 1;
}
