/*
 * slimland beside the remote displays a Wayland session already has: on
 * one slimland session (1280x720), the same scripted work seen by
 *
 *   slimland     its own console (this process, a per-attach DTLS key, as
 *                bench-latency's attach link): every byte on its socket
 *   wayvnc ZRLE  wayvnc on the session (wlr-screencopy), a libvncclient
 *   wayvnc Tight viewer asking for that encoding alone: every byte on the
 *                viewer's socket
 *   waypipe lz4  each client run under `waypipe --compress lz4 server`, its
 *                `waypipe client` drawing onto the session itself; bytes
 *                counted by a relay between the two (server to client)
 *
 * Rows: foot, 270 characters of prose typed (a key every 12 ms), `seq 1
 * 4000`, a window dragged 400 px, gtk3-demo's menus walked from the
 * keyboard, 60 s idle; then Wong and Seltzer's micro-benchmarks: typing at
 * 75 and 100 words a minute, 20 PgDn through a long file in less, a banner
 * and news ticker (slim-ticker), and their cache sweep: banner loops of N
 * distinct frames, bytes per second against N (slimland's console).
 *
 * Each viewer has a pass of its own over the rows, so that the CPU a
 * server spends is that viewer's: slimland, the compositor's; wayvnc,
 * its own and the compositor's (the compositor renders the frames it
 * copies; it also keeps feeding its console, which stays attached: with
 * no console it draws 4 frames a second, output.c); waypipe, its server
 * side's processes. All input goes through the console's input path,
 * identical in every pass. A row starts once every viewer of the pass has
 * the settled screen and ends once each has the final picture (nothing
 * new for a while). Idle is the exception: nothing moves, so the viewers
 * have nothing to compete for, and it is measured once with all of them
 * attached at the same time.
 *
 * Key to pixels for slimland's console and a VNC viewer in the same run
 * (the ZRLE pass): keys go to foot in blocks through the console and
 * through the viewer, each timed to its own viewer having the pixels
 * decoded (see latency()).
 *
 *   bench-peers [--json] [--quick]
 */
#define _GNU_SOURCE
#include <linux/input-event-codes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "peers-relay.h"
#include "peers-vnc.h"
#include "peers.h"

#define KEY_INTERVAL_MS 12
#define MAX_LATENCY_KEYS 1000
/* keys a path in turn, the first ones left out (see latency()) */
#define LATENCY_BLOCK 10
#define LATENCY_BLOCK_WARMUP 2
#define XK_BACKSPACE 0xff08
#define XK_A 0x0061

struct counters {
	uint64_t us, compositor_us;
	uint64_t bytes[VIEWERS], cpu_us[VIEWERS];
};

/* When the active peers last got something, 0 if never. */
static uint64_t peers_last_us(struct peers_bench *b)
{
	uint64_t last = 0;
	for (int i = VIEWER_ZRLE; i < VIEWERS; i++) {
		struct peers_viewer *v = &b->v[i];
		uint64_t t = !v->active ? 0 : v->vnc ? bench_vnc_last_update_us(v->vnc) :
			v->relay ? bench_relay_last_us(v->relay) : 0;
		last = t > last ? t : last;
	}
	return last;
}

/*
 * Until every active viewer has the final picture: nothing new on the
 * console and at the peers for `quiet_ms` (or `max_ms` passed).
 */
static void settle(struct peers_bench *b, int quiet_ms, int max_ms)
{
	uint64_t end = bench_now_us() + (uint64_t)max_ms * 1000;
	for (uint64_t now; (now = bench_now_us()) < end;) {
		bench_session_settle(&b->s, quiet_ms, (int)((end - now) / 1000) + 1);
		now = bench_now_us();
		if (now - peers_last_us(b) >= (uint64_t)quiet_ms * 1000) {
			break;
		}
	}
}

static struct counters snapshot(struct peers_bench *b)
{
	struct counters c = { .us = bench_now_us() };
	c.compositor_us = bench_process_cpu_us(b->s.compositor);
	c.bytes[VIEWER_SLIM] = b->s.bytes_received;
	c.cpu_us[VIEWER_SLIM] = c.compositor_us;
	for (int i = VIEWER_ZRLE; i <= VIEWER_TIGHT; i++) {
		if (b->v[i].active) {
			c.bytes[i] = bench_vnc_bytes(b->v[i].vnc);
			c.cpu_us[i] = bench_process_cpu_us(b->v[i].server) + c.compositor_us;
		}
	}
	if (b->v[VIEWER_WAYPIPE].active) {
		c.bytes[VIEWER_WAYPIPE] = bench_relay_bytes(b->v[VIEWER_WAYPIPE].relay);
		c.cpu_us[VIEWER_WAYPIPE] = b->app > 0 ? peers_waypipe_cpu_us(b->app) : 0;
	}
	return c;
}

static void row_end(struct peers_bench *b, enum row row, struct counters start)
{
	struct counters end = snapshot(b);
	for (int i = 0; i < VIEWERS; i++) {
		if (b->v[i].record) {
			b->cells[row][i] = (struct peers_cell){
				.ran = true,
				.bytes = end.bytes[i] - start.bytes[i],
				.cpu_us = end.cpu_us[i] - start.cpu_us[i],
				.compositor_us = end.compositor_us - start.compositor_us,
				.us = end.us - start.us,
			};
			b->v[i].total_bytes += end.bytes[i] - start.bytes[i];
		}
	}
}

/*
 * The workload's client, under waypipe while waypipe is attached; true
 * once it drew its window (and, with `ready`, said so on stdout).
 * Animations never settle: they get half a second instead.
 */
static bool app_start(struct peers_bench *b, char *const argv[], bool ready, bool animated)
{
	char *wrapped[32] = { "waypipe", "--compress", "lz4", "-s",
		b->v[VIEWER_WAYPIPE].relay_sock, "server", "--" };
	size_t n = 7;
	for (size_t i = 0; argv[i] && n + 1 < sizeof(wrapped) / sizeof(wrapped[0]); i++) {
		wrapped[n++] = argv[i];
	}
	uint32_t before = b->s.presented;
	int out = -1;
	b->app = peers_spawn(b, b->v[VIEWER_WAYPIPE].active ? wrapped : argv, ready ? &out : NULL);
	bool ok = b->app > 0;
	if (ok && ready) {
		/*
		 * the console fed meanwhile: the compositor draws the client's
		 * frames only for a console that takes them
		 */
		char line[64];
		uint64_t end = bench_now_us() + 20000000;
		while (!(ok = bench_read_line(out, line, sizeof(line), 5)) && bench_now_us() < end) {
			bench_session_wait_frame(&b->s, 5);
		}
	}
	if (out >= 0) {
		close(out);
	}
	/*
	 * a client that says nothing: its first frame, however slow (foot
	 * under waypipe, under sanitizers), before the screen may settle
	 */
	for (uint64_t end = bench_now_us() + 20000000; ok && !ready &&
			b->s.presented == before && bench_now_us() < end;) {
		bench_session_wait_frame(&b->s, 100);
	}
	if (animated) {
		peers_pump(b, 500);
	} else {
		settle(b, b->quiet_ms + 200, 20000);
	}
	ok = ok && b->s.presented != before && waitpid(b->app, NULL, WNOHANG) == 0;
	if (!ok) {
		fprintf(stderr, "bench-peers: %s did not start%s\n", argv[0],
			b->v[VIEWER_WAYPIPE].active ? " under waypipe" : "");
		b->client_failed = true;
		peers_stop_group(b, b->app);
		b->app = 0;
	}
	return ok;
}

static void app_stop(struct peers_bench *b)
{
	peers_stop_group(b, b->app);
	b->app = 0;
	settle(b, b->quiet_ms, 3000);
}

/* One key, then whatever the screen does until the next is due. */
static void press(struct peers_bench *b, uint32_t code, int interval_ms)
{
	uint64_t t0 = bench_now_us();
	bench_session_key(&b->s, code, true);
	bench_session_key(&b->s, code, false);
	int rest = interval_ms - (int)((bench_now_us() - t0) / 1000);
	peers_pump(b, rest > 0 ? rest : 1);
}

static void type(struct peers_bench *b, const char *text, size_t n, int interval_ms)
{
	for (size_t i = 0; i < n && text[i]; i++) {
		press(b, bench_keycode(text[i]), interval_ms);
	}
}

static void ctrl_u(struct peers_bench *b)
{
	bench_session_key(&b->s, KEY_LEFTCTRL, true);
	press(b, KEY_U, KEY_INTERVAL_MS);
	bench_session_key(&b->s, KEY_LEFTCTRL, false);
	settle(b, b->quiet_ms, 2000);
}

static const char prose[] =
	"the console is only a framebuffer and the server holds all true state "
	"so a user can walk to another desk and carry on where they left off "
	"the protocol sends low level commands that compress the pixels of "
	"text and user interfaces by taking advantage of their redundancy ";

/* A typist at `wpm` words a minute (a word: 5 characters and a space, as typing tests count). */
static void row_wpm(struct peers_bench *b, enum row row, int wpm)
{
	size_t chars = b->quick ? 8 : 60;
	struct counters start = snapshot(b);
	type(b, prose, chars, 60000 / (wpm * 6));
	settle(b, b->quiet_ms, 2000);
	row_end(b, row, start);
	ctrl_u(b);
}

/* foot: typing, seq, the typists, PgDn; with `idle`, only the idle row. */
static void rows_foot(struct peers_bench *b, bool idle)
{
	char *argv[] = { "foot", "-o", "cursor.blink=no", "sh", NULL };
	if (!app_start(b, argv, false, false)) {
		return;
	}
	if (idle) {
		/* the window is the measurement: a screen where nothing changes */
		struct counters start = snapshot(b);
		peers_pump(b, b->quick ? 10000 : 60000);
		row_end(b, ROW_IDLE, start);
		app_stop(b);
		return;
	}
	struct counters start = snapshot(b);
	type(b, prose, b->quick ? 20 : sizeof(prose) - 1, KEY_INTERVAL_MS);
	settle(b, b->quiet_ms, 2000);
	row_end(b, ROW_TYPING, start);
	ctrl_u(b);

	start = snapshot(b);
	type(b, "seq 1 4000\n", 11, KEY_INTERVAL_MS);
	settle(b, b->quiet_ms, 30000);
	row_end(b, ROW_SEQ, start);
	type(b, "clear\n", 6, KEY_INTERVAL_MS);
	settle(b, b->quiet_ms, 2000);

	row_wpm(b, ROW_WPM75, 75);
	row_wpm(b, ROW_WPM100, 100);

	type(b, "less long.txt\n", 14, KEY_INTERVAL_MS);
	settle(b, b->quiet_ms, 5000);
	start = snapshot(b);
	for (int i = 0; i < (b->quick ? 5 : 20); i++) {
		press(b, KEY_PAGEDOWN, KEY_INTERVAL_MS);
		settle(b, 150, 2000);
	}
	row_end(b, ROW_PGDN, start);
	press(b, KEY_Q, KEY_INTERVAL_MS);
	app_stop(b);
}

/* slim-echo's 256x256 window dragged 400 px with Alt and the button, as bench-bandwidth does. */
static void row_drag(struct peers_bench *b)
{
	char *argv[] = { SLIM_ECHO_BIN, NULL };
	if (!app_start(b, argv, true, false)) {
		return;
	}
	/* the only window is placed at (32, 32) below its title bar: grab it inside */
	double x = 160, y = 160;
	struct counters start = snapshot(b);
	bench_session_pointer(&b->s, x, y);
	bench_session_key(&b->s, KEY_LEFTALT, true);
	bench_session_button(&b->s, BTN_LEFT, true);
	for (int i = 0; i < 40; i++) {
		x += 10;
		y += 5;
		bench_session_pointer(&b->s, x, y);
		bench_session_wait_frame(&b->s, 1000);
	}
	bench_session_button(&b->s, BTN_LEFT, false);
	bench_session_key(&b->s, KEY_LEFTALT, false);
	settle(b, b->quiet_ms, 3000);
	row_end(b, ROW_DRAG, start);
	app_stop(b);
}

static void row_menus(struct peers_bench *b)
{
	char *argv[] = { "gtk3-demo", "--run=menus", NULL };
	if (!app_start(b, argv, false, false)) {
		return;
	}
	static const uint32_t walk[] = {
		KEY_F10, KEY_RIGHT, KEY_RIGHT, KEY_DOWN, KEY_DOWN, KEY_RIGHT, KEY_LEFT,
		KEY_LEFT, KEY_ESC, KEY_ESC, KEY_ESC,
	};
	struct counters start = snapshot(b);
	for (int i = 0; i < (b->quick ? 1 : 4); i++) {
		for (size_t k = 0; k < sizeof(walk) / sizeof(walk[0]); k++) {
			press(b, walk[k], KEY_INTERVAL_MS);
			settle(b, 150, 1500);
		}
	}
	row_end(b, ROW_MENUS, start);
	app_stop(b);
}

static void row_ticker(struct peers_bench *b)
{
	char fps[8];
	snprintf(fps, sizeof(fps), "%d", TICKER_FPS);
	char *argv[] = { SLIM_TICKER_BIN, "--fps", fps, NULL };
	if (!app_start(b, argv, true, true)) {
		return;
	}
	/* the window is the measurement: an animation has no final picture */
	struct counters start = snapshot(b);
	peers_pump(b, b->quick ? 1500 : 10000);
	row_end(b, ROW_TICKER, start);
	app_stop(b);
}

/*
 * Wong and Seltzer's cache sweep: banner loops of N distinct frames,
 * bytes a second at the console once every frame of the loop was shown.
 */
static void sweep(struct peers_bench *b)
{
	const unsigned *loops = b->quick ? peers_sweep_quick : peers_sweep_full;
	b->sweep_n = b->quick ? 3 : 8;
	for (unsigned i = 0; i < b->sweep_n; i++) {
		char loop[16], fps[8];
		snprintf(loop, sizeof(loop), "%u", loops[i]);
		snprintf(fps, sizeof(fps), "%d", TICKER_FPS);
		char *argv[] = { SLIM_TICKER_BIN, "--loop", loop, "--fps", fps, "--no-ticker", NULL };
		if (!app_start(b, argv, true, true)) {
			return;
		}
		/*
		 * twice round the loop first: the console keeps a tile the second
		 * time it is sent, so a cache that can hold the loop holds it now
		 */
		peers_pump(b, (int)(2 * loops[i] * 1000 / TICKER_FPS));
		/* the window is the measurement */
		int window_ms = b->quick ? 1000 : 5000;
		uint64_t bytes = b->s.bytes_received, t0 = bench_now_us();
		peers_pump(b, window_ms);
		b->sweep_bytes_per_s[i] = (double)(b->s.bytes_received - bytes) * 1e6 /
			(double)(bench_now_us() - t0);
		app_stop(b);
	}
}

/*
 * Key to pixels through slimland's console and through the ZRLE viewer on
 * one foot, in blocks of LATENCY_BLOCK keys a path in turn. Not key by
 * key: wayvnc types on a virtual keyboard, which brings its own keymap,
 * and every change of keyboard sends foot a keymap to compile (several
 * ms); the first keys of a block pay for that and are left out. Each key
 * is timed to the first picture its own viewer gets after it, and both
 * viewers catch up before the next, so that a key never waits behind the
 * other's frame.
 */
static void latency(struct peers_bench *b)
{
	struct bench_vnc *vnc = b->v[VIEWER_ZRLE].vnc;
	char *argv[] = { "foot", "-o", "cursor.blink=no", "sh", "-c", "exec cat >/dev/null", NULL };
	if (!app_start(b, argv, false, false)) {
		return;
	}
	size_t keys = b->quick ? 30 : 200;
	while (b->latency_n[1] + b->latency_missed[1] < keys) {
		for (int via = 0; via < 2; via++) {
			for (int k = 0; k < LATENCY_BLOCK; k++) {
				bool erase = k & 1;
				uint32_t presented = b->s.presented;
				bench_vnc_mark(vnc);
				uint64_t up0 = via == 0 ? b->s.wire_bytes_sent :
					bench_vnc_wire_bytes_sent(vnc);
				uint64_t t0 = bench_now_us();
				if (via == 0) {
					bench_session_key(&b->s, erase ? KEY_BACKSPACE : KEY_A, true);
					bench_session_key(&b->s, erase ? KEY_BACKSPACE : KEY_A, false);
				} else {
					bench_vnc_key(vnc, erase ? XK_BACKSPACE : XK_A, true);
					bench_vnc_key(vnc, erase ? XK_BACKSPACE : XK_A, false);
				}
				uint64_t console_at = 0, end = t0 + 2000000;
				while (bench_now_us() < end &&
						(!console_at || !bench_vnc_first_update_us(vnc))) {
					bench_session_wait_frame(&b->s, 1);
					if (!console_at && b->s.presented != presented) {
						console_at = b->s.last.applied_us;
					}
				}
				uint64_t at = via == 0 ? console_at : bench_vnc_first_update_us(vnc);
				int rest = LATENCY_INTERVAL_MS - (int)((bench_now_us() - t0) / 1000);
				peers_pump(b, rest > 0 ? rest : 1);
				if (k < LATENCY_BLOCK_WARMUP) {
					continue;
				}
				/* the key, its acknowledgements, the ACKs of its answer: all until the next */
				b->upstream_bytes[via] += (via == 0 ? b->s.wire_bytes_sent :
					bench_vnc_wire_bytes_sent(vnc)) - up0;
				b->upstream_keys[via]++;
				if (at <= t0) {
					b->latency_missed[via]++;
				} else {
					b->latency[via][b->latency_n[via]++] = at - t0;
				}
			}
		}
	}
	app_stop(b);
}

/* One viewer's pass over the rows (idle apart). */
static void pass(struct peers_bench *b, enum viewer_id i)
{
	if (!peers_viewer_start(b, i)) {
		return;
	}
	for (int k = 0; k < VIEWERS; k++) {
		b->v[k].record = k == (int)i;
	}
	settle(b, b->quiet_ms, 5000);
	rows_foot(b, false);
	row_drag(b);
	row_menus(b);
	row_ticker(b);
	if (i == VIEWER_ZRLE) {
		latency(b);
	}
	if (i == VIEWER_SLIM) {
		sweep(b);
	}
	peers_viewer_check(b, i);
	peers_viewer_stop(b, i);
}

/* Idle, with every viewer attached at once (see the top of the file). */
static void idle(struct peers_bench *b)
{
	for (int i = 0; i < VIEWERS; i++) {
		peers_viewer_start(b, i);
	}
	settle(b, b->quiet_ms, 5000);
	rows_foot(b, true);
	for (int i = 0; i < VIEWERS; i++) {
		peers_viewer_check(b, i);
		peers_viewer_stop(b, i);
	}
}

/* A file to page through: numbered lines of prose. */
static bool long_file(struct peers_bench *b)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/long.txt", b->s.runtime_dir);
	FILE *f = fopen(path, "w");
	if (!f) {
		return false;
	}
	for (int i = 0; i < 4000; i++) {
		size_t at = (size_t)(i * 37) % (sizeof(prose) - 80);
		fprintf(f, "%5d  %.70s\n", i + 1, prose + at);
	}
	return fclose(f) == 0;
}

/* GTK without animations (a spinner would be all there is to measure); no user's settings. */
static bool environment(struct peers_bench *b)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/gtk-3.0", b->s.runtime_dir);
	if (mkdir(path, 0700) != 0) {
		return false;
	}
	snprintf(path, sizeof(path), "%s/gtk-3.0/settings.ini", b->s.runtime_dir);
	FILE *f = fopen(path, "w");
	if (!f) {
		return false;
	}
	fputs("[Settings]\ngtk-enable-animations=false\ngtk-cursor-blink=false\n", f);
	fclose(f);
	/* wayvnc reads its configuration (a password, say) from here too: there is none */
	setenv("XDG_CONFIG_HOME", b->s.runtime_dir, true);
	setenv("NO_AT_BRIDGE", "1", true);
	setenv("PS1", "$ ", true);
	unsetenv("LESS");
	unsetenv("LESSOPEN");
	return long_file(b);
}

int main(int argc, char *argv[])
{
	bool json;
	struct peers_bench b = { 0 };
	if (!bench_options(argc, argv, &json, &b.quick)) {
		return 2;
	}
	/* the peers' output and failures go to stderr: a broken pipe must not end the run */
	signal(SIGPIPE, SIG_IGN);
	b.quiet_ms = b.quick ? 200 : 300;
	b.v[VIEWER_ZRLE].missing = b.v[VIEWER_TIGHT].missing = peers_have("wayvnc") ? NULL : "wayvnc";
	b.v[VIEWER_WAYPIPE].missing = peers_have("waypipe") ? NULL : "waypipe";
	for (int via = 0; via < 2; via++) {
		b.latency[via] = calloc(MAX_LATENCY_KEYS, sizeof(uint64_t));
	}
	bool ok = b.latency[0] && b.latency[1] &&
		bench_session_start(&b.s, SLIMLAND_BIN, 1280, 720, BENCH_LINK_ATTACH) &&
		environment(&b);
	if (!ok) {
		fprintf(stderr, "bench-peers: cannot start a session\n");
		bench_session_stop(&b.s);
		return 1;
	}
	settle(&b, 300, 5000);
	for (int i = 0; i < VIEWERS; i++) {
		pass(&b, i);
	}
	idle(&b);
	bench_session_stop(&b.s);

	peers_report(&b, json);

	/* Numbers never fail the run; a viewer or client that did not work does. */
	ok = !b.client_failed;
	for (int i = 0; i < VIEWERS; i++) {
		struct peers_viewer *v = &b.v[i];
		if (v->missing) {
			fprintf(stderr, "bench-peers: %s: %s not installed\n", peers_viewer_names[i],
				v->missing);
			ok = ok && !b.quick;
		} else if (v->failed || v->total_bytes == 0) {
			fprintf(stderr, "bench-peers: %s %s\n", peers_viewer_names[i],
				v->failed ? "failed" : "received nothing");
			ok = false;
		}
	}
	if (!b.v[VIEWER_ZRLE].missing && (b.latency_n[0] == 0 || b.latency_n[1] == 0)) {
		fprintf(stderr, "bench-peers: no keystroke reached its pixels\n");
		ok = false;
	}
	free(b.latency[0]);
	free(b.latency[1]);
	return ok ? 0 : 1;
}

