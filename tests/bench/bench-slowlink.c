/*
 * SLIM's Figure 6: the delay a slow link adds to everyday work. The
 * compositor runs in a network namespace of its own, joined to this one by
 * a veth pair; this process is the console (DTLS, a per-attach key). The
 * server's side of the link is shaped with a token bucket (tc tbf: 1, 2, 5,
 * 10, 20 and 100 Mbit/s, a queue of 200 ms at most) or left alone, and for
 * each rate the same input is timed from the console sending it to the
 * console presenting the last frame it caused (nothing new for QUIET_MS):
 *
 *   typing     'a' and BackSpace in turn in foot
 *   scrolling  PgDn in less, in foot, through the licences in
 *              /usr/share/common-licenses (new text each time)
 *   dragging   slim-echo's window moved 10 px a step with Alt and the button
 *   menus      gtk3-demo's menus walked from the keyboard
 *   typing_video  typing in foot (a key every KEY_GAP_MS) while mpv plays a
 *              640x360 clip of CLIP_FPS frames a second beside it, to a
 *              console that decodes H.264 (console/video's decoders, in
 *              software), as slimland-console does: timed to the frame in
 *              which foot's line changed, as the video's frames never let
 *              the screen settle; and the video's pictures the console
 *              decoded a second meanwhile
 *   typing_video_cscs  the same to a console that decodes nothing, the
 *              video as CSCS (unshaped, 20 and 2 Mbit/s; not --quick)
 *
 * Added delay = p50 at a rate - p50 unshaped, the same run. The issue's
 * target: at 20 Mbit/s the video keeps its 30 frames a second and typing
 * beside it stays within 2x typing alone unshaped. Root only (namespaces,
 * tc); each workload's client is started once and every rate runs against it.
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
#include "decoders.h"
#include "session.h"

#define RATES 7
#define MAX_EVENTS 64
#define QUIET_MS 120
#define CLIP_FPS 30
/* beside the video: a fast typist's pace, so that the video's rate is taken over seconds */
#define KEY_GAP_MS 100
/* the target: this rate, typing beside the video within TARGET_RATIO of typing alone */
#define TARGET_MBIT 20
#define TARGET_RATIO 2.0

enum workload { TYPING, SCROLLING, DRAGGING, MENUS, TYPING_VIDEO, TYPING_VIDEO_CSCS, WORKLOADS };

/* 0: unshaped */
static const unsigned rates_mbit[RATES] = { 0, 100, 20, 10, 5, 2, 1 };
static const char *const workload_names[WORKLOADS] = {
	"typing", "scrolling", "dragging", "menus", "typing_video", "typing_video_cscs",
};

struct cell {
	bool ran;
	size_t n, missed;
	uint64_t p50_us, p99_us;
	/* beside the video: the shaper's queue as each key was sent (tc's backlog at the rate) */
	size_t queue_n;
	uint64_t queue_p50_us, queue_max_us;
	/* beside the video, while typing: H.264 pictures decoded a second, and what came */
	double video_fps, mbit;
};

static struct cell cells[WORKLOADS][RATES];

/* --quick: unshaped, TARGET_MBIT and 2 Mbit/s; the CSCS comparison runs those alone */
static bool rate_runs(enum workload w, int r, bool quick)
{
	unsigned m = rates_mbit[r];
	return !(quick || w == TYPING_VIDEO_CSCS) || m == 0 || m == TARGET_MBIT || m == 2;
}

static bool beside_video(enum workload w)
{
	return w == TYPING_VIDEO || w == TYPING_VIDEO_CSCS;
}

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

/*
 * FNV-1a of what the console shows of foot's line (its window is at 32, 32,
 * 30 px high; the video's starts at 64, 64).
 */
static uint64_t echo_area(struct bench_session *s)
{
	const struct slim_fb *fb = slim_console_core_fb(s->core);
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint32_t y = 32; y < 62; y++) {
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

/*
 * Each key timed to the frame that changed foot's line, a key every
 * KEY_GAP_MS at most; the video's pictures decoded from the first key on.
 */
static struct cell measure_echo(struct bench_session *s, input_fn input, size_t events,
		unsigned mbit)
{
	uint64_t t[MAX_EVENTS], q[MAX_EVENTS];
	struct cell c = { 0 };
	uint64_t start_us = bench_now_us(), bytes0 = s->bytes_received;
	uint64_t pictures0 = slim_console_core_video_stats(s->core)->pictures;
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
		/* what the video sends until the next key */
		uint64_t next = t0 + KEY_GAP_MS * 1000;
		for (uint64_t now; (now = bench_now_us()) < next;) {
			bench_session_wait_frame(s, (int)((next - now + 999) / 1000));
		}
	}
	double secs = (double)(bench_now_us() - start_us) / 1e6;
	c.video_fps = (double)(slim_console_core_video_stats(s->core)->pictures - pictures0) / secs;
	c.mbit = (double)(s->bytes_received - bytes0) * 8 / secs / 1e6;
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
static bool workload(struct bench_session *s, enum workload w, char *const argv[], bool ready,
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
	if (ok && w == DRAGGING) {
		bench_session_pointer(s, drag_x, drag_y);
		bench_session_key(s, KEY_LEFTALT, true);
		bench_session_button(s, BTN_LEFT, true);
	}
	for (int r = 0; ok && r < RATES; r++) {
		if (!rate_runs(w, r, quick)) {
			continue;
		}
		ok = shape(rates_mbit[r]);
		bench_session_settle(s, QUIET_MS, 2000);
		if (beside_video(w) && rates_mbit[r]) {
			/*
			 * The video filled the shaper before the link was known to
			 * be slow (the rate just fell 50-fold): measured once the
			 * server has learnt it and the queue has drained.
			 */
			for (uint64_t end = bench_now_us() + 5000000; bench_now_us() < end;) {
				bench_session_wait_frame(s, 200);
			}
		}
		cells[w][r] = beside_video(w) ? measure_echo(s, input, events, rates_mbit[r]) :
			measure(s, input, events);
		cells[w][r].ran = true;
		/*
		 * the link may stall a workload (reported as such); without a
		 * shaper it must not
		 */
		ok = ok && (cells[w][r].n > 0 || rates_mbit[r] != 0);
	}
	shape(0);
	if (w == DRAGGING) {
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

/* A video cell's p50 over typing alone unshaped (0: either missing). */
static double over_typing(const struct cell *c)
{
	const struct cell *alone = &cells[TYPING][0];
	return c->n && alone->n ? (double)c->p50_us / (double)alone->p50_us : 0;
}

static void report_json(void)
{
	printf("{\"clip_fps\": %d", CLIP_FPS);
	for (int w = 0; w < WORKLOADS; w++) {
		for (int r = 0; r < RATES; r++) {
			const struct cell *c = &cells[w][r];
			if (!c->ran) {
				continue;
			}
			char k[64];
			snprintf(k, sizeof(k), rates_mbit[r] ? "%s_%umbit" : "%s_unshaped",
				workload_names[w], rates_mbit[r]);
			int64_t added = (int64_t)c->p50_us - (int64_t)cells[w][0].p50_us;
			/* a stalled cell: no input got its frame within 5 s */
			printf(", \"%s_inputs\": %zu, \"%s_missed\": %zu", k, c->n, k, c->missed);
			if (c->n) {
				printf(", \"%s_p50_us\": %llu, \"%s_p99_us\": %llu, \"%s_added_p50_us\": %lld",
					k, (unsigned long long)c->p50_us, k, (unsigned long long)c->p99_us,
					k, (long long)added);
			}
			if (c->queue_n) {
				printf(", \"%s_queue_p50_us\": %llu, \"%s_queue_max_us\": %llu", k,
					(unsigned long long)c->queue_p50_us, k,
					(unsigned long long)c->queue_max_us);
			}
			if (beside_video(w)) {
				printf(", \"%s_received_mbit_per_s\": %.2f", k, c->mbit);
				if (c->n) {
					printf(", \"%s_p50_over_typing_unshaped_ratio\": %.2f", k,
						over_typing(c));
				}
			}
			if (w == TYPING_VIDEO) {
				printf(", \"%s_video_fps\": %.1f", k, c->video_fps);
			}
		}
	}
	printf("}\n");
}

static void report(bool json, bool quick)
{
	if (json) {
		report_json();
		return;
	}
	printf("SLIM Figure 6: delay a slow link adds, input to the last frame it caused "
		"(p50, ms; added over unshaped in brackets)\n\n%-18s", "workload");
	for (int r = 0; r < RATES; r++) {
		char h[24];
		snprintf(h, sizeof(h), rates_mbit[r] ? "%u Mbit/s" : "unshaped", rates_mbit[r]);
		if (rate_runs(TYPING, r, quick)) {
			printf("%16s", h);
		}
	}
	/* the p50 rows, then beside the video: H.264 (CSCS in brackets) */
	static const char *const extra[] = { "video fps", "Mbit/s", "x typing alone" };
	for (int row = 0; row < WORKLOADS + 3; row++) {
		if (row == TYPING_VIDEO_CSCS && quick) {
			continue;
		}
		printf("\n%-18s", row < WORKLOADS ? workload_names[row] : extra[row - WORKLOADS]);
		for (int r = 0; r < RATES; r++) {
			if (!rate_runs(TYPING, r, quick)) {
				continue;
			}
			const struct cell *c = &cells[row < WORKLOADS ? row : TYPING_VIDEO][r];
			const struct cell *cscs = &cells[TYPING_VIDEO_CSCS][r];
			const struct cell *base = &cells[row < WORKLOADS ? row : TYPING_VIDEO][0];
			char v[32] = "", b[16] = "";
			if (row < WORKLOADS) {
				snprintf(v, sizeof(v), !c->n ? "stalled" : r == 0 ? "%.1f" : "%.1f (%+.1f)",
					c->p50_us / 1000.0,
					((double)c->p50_us - (double)base->p50_us) / 1000.0);
			} else if (row == WORKLOADS) {
				snprintf(v, sizeof(v), "%.1f", c->video_fps);
			} else if (row == WORKLOADS + 1) {
				snprintf(v, sizeof(v), "%.2f", c->mbit);
				snprintf(b, sizeof(b), " (%.2f)", cscs->mbit);
			} else {
				snprintf(v, sizeof(v), "%.2f", over_typing(c));
				snprintf(b, sizeof(b), " (%.2f)", over_typing(cscs));
			}
			if (row >= WORKLOADS + 1 && cscs->ran) {
				strncat(v, b, sizeof(v) - strlen(v) - 1);
			}
			printf("%16s", c->ran ? v : "");
		}
	}
	printf("\n\ntbf on the server's side of a veth pair, 200 ms of queue at most; "
		"the console over DTLS.\nBeside the video (mpv, 640x360 at %d frames a second, "
		"a key every %d ms): H.264 pictures the console\ndecoded a second while typing, "
		"what it received, and the p50 over typing alone unshaped\n(CSCS in brackets).\n\n"
		"The shaper's queue as each key was sent beside the video (p50 / max, ms):",
		CLIP_FPS, KEY_GAP_MS);
	for (int r = 1; r < RATES; r++) {
		const struct cell *c = &cells[TYPING_VIDEO][r];
		if (c->queue_n) {
			printf(" %u Mbit/s %.1f / %.1f;", rates_mbit[r], c->queue_p50_us / 1000.0,
				c->queue_max_us / 1000.0);
		}
	}
	for (int r = 0; r < RATES; r++) {
		const struct cell *c = &cells[TYPING_VIDEO][r];
		if (rates_mbit[r] == TARGET_MBIT && c->n) {
			double x = over_typing(c);
			printf("\n\nAt %d Mbit/s: typing beside the video %.1f ms, %.2fx typing alone "
				"unshaped (%.1f ms; target %.0fx: %s); the video %.1f of the clip's %d "
				"frames a second (%.0f%%).", TARGET_MBIT, c->p50_us / 1000.0, x,
				cells[TYPING][0].p50_us / 1000.0, TARGET_RATIO,
				x <= TARGET_RATIO ? "met" : "missed", c->video_fps, CLIP_FPS,
				100.0 * c->video_fps / CLIP_FPS);
		}
	}
	printf("\n");
}

/*
 * Typing beside the video: foot one line high, and the video cascaded below
 * it (a new window goes 32 px right and down), the two apart so that the
 * video is one uncovered rectangle (covered in part it would go as CSCS);
 * a click on foot gives it the keyboard, the pointer then out of the way.
 */
static bool video_workload(struct bench_session *s, enum workload w, size_t events, bool quick)
{
	char *term_argv[] = { "foot", "-o", "cursor.blink=no", "--window-size-pixels=1200x30",
		"sh", "-c", "exec cat >/dev/null", NULL };
	char clip[64];
	snprintf(clip, sizeof(clip), "av://lavfi:testsrc2=size=640x360:rate=%d", CLIP_FPS);
	char *video[] = { "mpv", "--vo=wlshm", "--no-audio", "--hwdec=no", "--loop=inf",
		"--really-quiet", "--no-input-default-bindings", "--osd-level=0", "--no-osc", clip,
		NULL };
	pid_t term = bench_session_client(s, term_argv, NULL);
	bench_session_settle(s, 500, 10000);
	pid_t mpv = term > 0 ? bench_session_client(s, video, NULL) : -1;
	for (uint64_t end = bench_now_us() + 2000000; mpv > 0 && bench_now_us() < end;) {
		bench_session_wait_frame(s, 200);
	}
	bench_session_pointer(s, 300, 45);
	bench_session_button(s, BTN_LEFT, true);
	bench_session_button(s, BTN_LEFT, false);
	bench_session_pointer(s, 1200, 700);
	bool ok = mpv > 0 && workload(s, w, NULL, false, typing_input, events, quick);
	for (pid_t *p = (pid_t[]){ mpv, term }, *e = p + 2; p < e; p++) {
		if (*p > 0) {
			kill(*p, SIGTERM);
			waitpid(*p, NULL, 0);
		}
	}
	return ok;
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
	/* the console decodes H.264 as slimland-console does */
	struct console_decoders *cd = console_decoders_create(false);
	struct slim_wire_codec caps;
	if (!cd) {
		fprintf(stderr, "bench-slowlink: no H.264 decoder\n");
		return 1;
	}
	console_decoders_caps(cd, &caps);
	bench_session_video(&console_decoders_impl, cd, &caps, 1);
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
	char *scrolling[] = { "foot", "-o", "cursor.blink=no", "sh", "-c", less, NULL };
	char *dragging[] = { SLIM_ECHO_BIN, NULL };
	char *menus[] = { "gtk3-demo", "--run=menus", NULL };
	ok = ok && workload(&s, TYPING, typing, false, typing_input, events, quick);
	/* 15 pages a rate: 105 in all, each new */
	ok = ok && workload(&s, SCROLLING, scrolling, false, scrolling_input, quick ? 10 : 15,
		quick);
	ok = ok && workload(&s, DRAGGING, dragging, true, dragging_input, events, quick);
	ok = ok && workload(&s, MENUS, menus, false, menus_input, quick ? 11 : 22, quick);
	ok = ok && video_workload(&s, TYPING_VIDEO, events, quick);
	/* the video went as H.264: the console decoded its pictures */
	if (ok && cells[TYPING_VIDEO][0].video_fps == 0) {
		fprintf(stderr, "bench-slowlink: the video did not go as H.264\n");
		ok = false;
	}
	bench_session_stop(&s);
	if (ok && !quick) {
		/* the same to a console that decodes nothing: the video as CSCS */
		bench_session_video(NULL, NULL, NULL, 0);
		ok = bench_session_start(&s, SLIMLAND_BIN, 1280, 720, BENCH_LINK_ATTACH) &&
			video_workload(&s, TYPING_VIDEO_CSCS, events, quick);
		bench_session_stop(&s);
	}
	console_decoders_destroy(cd);
	report(json, quick);
	return ok ? 0 : 1;
}
