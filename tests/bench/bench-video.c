/*
 * Video through the YUV path against the exact path, in one run (cf. SLIM
 * section 5.3: 720x480 video at 20 Hz in 40 Mbit/s). mpv (--vo=wlshm,
 * software decoding) plays a clip fullscreen on a console of the clip's
 * size, or upscaled; this process is the console. For each case, once
 * with the default video budget (CSCS) and once with --video-budget 0
 * (everything as exact pixels, the path before video was told apart):
 *
 *   fps        frames a second presented by the console
 *   Mbit/s     bytes received, DTLS records as on the wire
 *   server     the compositor's CPU, % of one core (all of it: clients' buffers,
 *              rendering, encoding, DTLS)
 *   encode     of which the encoding (conversion, CSCS pieces, the model) of
 *              a frame at the case's rate, timed in-process on grim's frame
 *   console    this process's CPU (decrypting and applying), % of one core
 *   dropped    frames of the clip that never reached the console
 *   latency    first damage on the server to the frame presented, p50
 *   PSNR       the console's picture against the server's (grim), same
 *              frame: mpv stopped, the last frame taken before the
 *              lossless repaint comes
 *   exact      mpv stopped -> the console equal to the server, byte for byte
 *              (the lossless repaint; the bar is 250 ms)
 *
 * Then typing in foot, alone and beside a playing video: keystroke to
 * pixels p50 both ways and their ratio.
 *
 * The clips (lavfi's mandelbrot, scaled: smooth colour, as video has) are
 * made once with ffmpeg and kept in $XDG_CACHE_HOME/slimland-bench.
 *
 *   bench-video [--json] [--quick]
 *   BENCH_VIDEO_ONLY='1280x720@60' bench-video   (one case, or `typing`, e.g. to profile)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/input-event-codes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "encoder.h"
#include "session.h"

#define CLIP_SECONDS 4
#define WARM_MS 1200

struct vcase {
	const char *name;
	uint32_t clip_w, clip_h, fps, screen_w, screen_h, budget;
};

static const struct vcase cases[] = {
	{ "720x480@30", 720, 480, 30, 720, 480, 200 },
	{ "720x480@30 in 40", 720, 480, 30, 720, 480, 40 },
	{ "1280x720@60", 1280, 720, 60, 1280, 720, 200 },
	{ "1920x1080@30", 1920, 1080, 30, 1920, 1080, 200 },
	{ "1920x1080@60", 1920, 1080, 60, 1920, 1080, 200 },
	{ "640x360@30 to 1080", 640, 360, 30, 1920, 1080, 200 },
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

struct result {
	bool ran;
	double fps, mbit, server_pct, encode_pct, console_pct, dropped, latency_us, psnr_db;
	double refresh_ms; /* the client stopped -> the console exact */
};

static uint64_t self_cpu_us(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
		(uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static bool run_cmd(char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	int status;
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		WEXITSTATUS(status) == 0;
}

/* The clip for a case, made if it is not there yet. */
static bool clip_path(const struct vcase *c, char *path, size_t size)
{
	const char *cache = getenv("XDG_CACHE_HOME");
	char dir[512];
	if (cache && cache[0] == '/') {
		snprintf(dir, sizeof(dir), "%s/slimland-bench", cache);
	} else {
		snprintf(dir, sizeof(dir), "%s/.cache/slimland-bench",
			getenv("HOME") ? getenv("HOME") : "/tmp");
	}
	char mk[600];
	snprintf(mk, sizeof(mk), "mkdir -p '%s'", dir);
	if (system(mk) != 0) {
		return false;
	}
	snprintf(path, size, "%s/mandelbrot-%ux%u-%u.mkv", dir, c->clip_w, c->clip_h, c->fps);
	struct stat st;
	if (stat(path, &st) == 0 && st.st_size > 0) {
		return true;
	}
	char src[128], tmp[700];
	/* rendered small and scaled up: the set's detail at any size, made quickly */
	snprintf(src, sizeof(src), "mandelbrot=size=480x270:rate=%u,scale=%u:%u:flags=bicubic",
		c->fps, c->clip_w, c->clip_h);
	snprintf(tmp, sizeof(tmp), "%s.part.mkv", path);
	char secs[8];
	snprintf(secs, sizeof(secs), "%d", CLIP_SECONDS);
	char *argv[] = { "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", src, "-t", secs,
		"-c:v", "mpeg4", "-q:v", "2", tmp, NULL };
	fprintf(stderr, "making %s\n", path);
	return run_cmd(argv) && rename(tmp, path) == 0;
}

/* grim's picture of the server's screen, as XRGB pixels (PPM read back). */
static uint32_t *grim_screen(uint32_t w, uint32_t h)
{
	FILE *f = popen("grim -t ppm - 2>/dev/null", "r");
	if (!f) {
		return NULL;
	}
	unsigned gw, gh, max;
	uint32_t *px = NULL;
	if (fscanf(f, "P6 %u %u %u", &gw, &gh, &max) == 3 && gw == w && gh == h && max == 255 &&
			fgetc(f) != EOF) {
		px = malloc((size_t)w * h * 4);
		uint8_t *row = malloc((size_t)w * 3);
		for (uint32_t y = 0; px && row && y < h; y++) {
			if (fread(row, 3, w, f) != w) {
				free(px);
				px = NULL;
				break;
			}
			for (uint32_t x = 0; x < w; x++) {
				px[(size_t)y * w + x] = (uint32_t)row[3 * x] << 16 |
					(uint32_t)row[3 * x + 1] << 8 | row[3 * x + 2];
			}
		}
		free(row);
	}
	pclose(f);
	return px;
}

static double psnr(const struct slim_fb *fb, const uint32_t *ref)
{
	double sq = 0;
	for (uint32_t y = 0; y < fb->height; y++) {
		const uint32_t *a = slim_fb_row(fb, 0, y), *b = ref + (size_t)y * fb->width;
		for (uint32_t x = 0; x < fb->width; x++) {
			for (int s = 0; s < 24; s += 8) {
				double d = (double)((a[x] >> s) & 0xff) - (double)((b[x] >> s) & 0xff);
				sq += d * d;
			}
		}
	}
	double mse = sq / ((double)fb->width * fb->height * 3);
	return mse == 0 ? 99.0 : 10 * log10(255.0 * 255.0 / mse);
}

static void null_send(void *data, const uint8_t *buf, size_t len)
{
}

/*
 * The server's encoding alone, per frame, on the frame grim took: what the
 * compositor does for each video frame (the conversion at the budget's
 * size, then the encoder: pieces, the model, datagrams), here in-process
 * so that the compositor's other work (clients, rendering) is not counted.
 */
static double encode_us_per_frame(const uint32_t *px, uint32_t w, uint32_t h, uint32_t budget,
		uint32_t fps)
{
	struct slim_fb fb = { .px = (uint32_t *)px, .width = w, .height = h, .stride = w };
	struct slim_encoder_config cfg = { .assoc = 1, .lz4 = true, .cscs = true };
	struct slim_encoder *enc = slim_encoder_create(w, h, &cfg, null_send, NULL);
	struct slim_yuv_planes planes = { 0 };
	if (!enc) {
		return 0;
	}
	struct slim_rect box = { 0, 0, (uint16_t)w, (uint16_t)h };
	uint16_t sw, sh;
	slim_yuv_fit((uint64_t)budget * 1000000, fps, w, h, &sw, &sh);
	enum { ROUNDS = 30 };
	uint64_t t0 = 0;
	for (int i = -2; i < ROUNDS; i++) {
		if (i == 0) {
			t0 = self_cpu_us();
		}
		struct slim_yuv_image img;
		slim_yuv_from_fb(&img, &planes, &fb, box, sw, sh);
		struct slim_frame f = { .fb = &fb, .yuv = &img, .n_yuv = 1 };
		slim_encoder_frame(enc, &f);
		slim_encoder_timeout(enc); /* nothing in flight stays unconfirmed */
	}
	double us = (double)(self_cpu_us() - t0) / ROUNDS;
	slim_yuv_planes_finish(&planes);
	slim_encoder_destroy(enc);
	return us;
}

static bool run_case(const struct vcase *c, bool cscs, int measure_ms, struct result *r)
{
	char clip[640];
	if (!clip_path(c, clip, sizeof(clip))) {
		fprintf(stderr, "%s: cannot make the clip (ffmpeg)\n", c->name);
		return false;
	}
	char budget[16];
	snprintf(budget, sizeof(budget), "%u", cscs ? c->budget : 0);
	const char *args[] = { "--video-budget", budget, NULL };
	bench_session_compositor_args(args);
	struct bench_session s;
	if (!bench_session_start(&s, SLIMLAND_BIN, c->screen_w, c->screen_h, BENCH_LINK_ATTACH)) {
		fprintf(stderr, "%s: cannot start a session\n", c->name);
		bench_session_stop(&s);
		return false;
	}
	char *argv[] = { "mpv", "--vo=wlshm", "--no-audio", "--loop=inf", "--hwdec=no", "--fs",
		"--osd-level=0", "--no-osc", "--no-input-default-bindings", "--really-quiet",
		clip, NULL };
	pid_t mpv = bench_session_client(&s, argv, NULL);
	uint64_t warm_end = bench_now_us() + WARM_MS * 1000;
	while (bench_now_us() < warm_end) {
		bench_session_wait_frame(&s, 200);
	}
	uint64_t t0 = bench_now_us(), bytes0 = s.bytes_received;
	uint64_t srv0 = bench_process_cpu_us(s.compositor), con0 = self_cpu_us();
	uint32_t frames0 = s.presented;
	size_t n_lat = 0, cap = 4096;
	uint64_t *lat = calloc(cap, sizeof(*lat));
	uint64_t end = t0 + (uint64_t)measure_ms * 1000;
	while (bench_now_us() < end) {
		if (bench_session_wait_frame(&s, 200) && lat && n_lat < cap &&
				s.last.encode_us && s.last.applied_us > s.last.encode_us) {
			lat[n_lat++] = s.last.applied_us - s.last.encode_us;
		}
	}
	double secs = (double)(bench_now_us() - t0) / 1e6;
	if (getenv("BENCH_VIDEO_DEBUG")) {
		const struct slim_console_stats *st = slim_console_core_stats(s.core);
		for (int t = SLIM_CMD_FILL; t <= SLIM_CMD_CSCS; t++) {
			fprintf(stderr, "cmd %d: %llu commands %llu px\n", t,
				(unsigned long long)st->commands[t], (unsigned long long)st->pixels[t]);
		}
	}
	r->fps = (s.presented - frames0) / secs;
	r->mbit = (double)(s.bytes_received - bytes0) * 8 / secs / 1e6;
	r->server_pct = (double)(bench_process_cpu_us(s.compositor) - srv0) / 1e4 / secs;
	r->console_pct = (double)(self_cpu_us() - con0) / 1e4 / secs;
	double expected = c->fps * secs, got = s.presented - frames0;
	r->dropped = got < expected ? (expected - got) / secs : 0;
	qsort(lat, n_lat, sizeof(*lat), bench_cmp_u64);
	r->latency_us = n_lat ? (double)lat[n_lat / 2] : 0;
	free(lat);
	/*
	 * Quality: mpv stopped, the frame it last drew received in full (no
	 * datagram for 40 ms, well inside the 150 ms after which the lossless
	 * repaint is sent), then both pictures of it.
	 */
	kill(mpv, SIGSTOP);
	uint64_t stopped_us = bench_now_us();
	while (bench_session_wait_frame(&s, 40)) {
	}
	const struct slim_fb *fb = slim_console_core_fb(s.core);
	struct slim_fb copy = *fb;
	copy.px = malloc((size_t)fb->width * fb->height * 4);
	copy.stride = fb->width;
	for (uint32_t y = 0; copy.px && y < fb->height; y++) {
		memcpy(slim_fb_row(&copy, 0, y), slim_fb_row(fb, 0, y), (size_t)fb->width * 4);
	}
	uint32_t *ref = copy.px ? grim_screen(fb->width, fb->height) : NULL;
	r->psnr_db = ref ? psnr(&copy, ref) : 0;
	/* then the lossless repaint: frames until the console equals the server */
	while (ref && psnr(fb, ref) < 99 && bench_now_us() - stopped_us < 2000000) {
		bench_session_wait_frame(&s, 500);
	}
	r->refresh_ms = ref && psnr(fb, ref) >= 99 ? (double)(bench_now_us() - stopped_us) / 1000 : -1;
	if (ref && cscs) {
		r->encode_pct = encode_us_per_frame(ref, fb->width, fb->height, c->budget, c->fps) *
			c->fps / 1e4;
	}
	free(ref);
	free(copy.px);
	kill(mpv, SIGKILL);
	waitpid(mpv, NULL, 0);
	bench_session_stop(&s);
	r->ran = true;
	return true;
}

/* A hash of rows [y0, y1) of the console's picture. */
static uint64_t rows_hash(const struct slim_fb *fb, uint32_t y0, uint32_t y1)
{
	uint64_t h = 1469598103934665603ull;
	for (uint32_t y = y0; y < y1 && y < fb->height; y++) {
		const uint32_t *row = slim_fb_row(fb, 0, y);
		for (uint32_t x = 0; x < fb->width; x++) {
			h = (h ^ row[x]) * 1099511628211ull;
		}
	}
	return h;
}

/*
 * Keystroke to pixels in foot, with nothing else on the screen or beside a
 * playing video (mpv, 640x360 at 30 fps, windowed): 'a' and BackSpace in
 * turn, each timed from the key to the first frame the console presents
 * that changed foot's first line (the video sends frames all along, so
 * frames alone say nothing). Returns the p50 in microseconds.
 */
static double typing_p50(bool with_video, size_t keys)
{
	const struct vcase clip_case = { "typing", 640, 360, 30, 1280, 720, 200 };
	char clip[640];
	if (with_video && !clip_path(&clip_case, clip, sizeof(clip))) {
		return 0;
	}
	bench_session_compositor_args(NULL);
	struct bench_session s;
	if (!bench_session_start(&s, SLIMLAND_BIN, 1280, 720, BENCH_LINK_ATTACH)) {
		bench_session_stop(&s);
		return 0;
	}
	setenv("SHELL", "/bin/sh", 1);
	setenv("PS1", "$ ", 1);
	char *foot_argv[] = { "foot", NULL };
	pid_t foot = bench_session_client(&s, foot_argv, NULL);
	bench_session_settle(&s, 500, 10000);
	pid_t mpv = -1;
	if (with_video) {
		char *argv[] = { "mpv", "--vo=wlshm", "--no-audio", "--loop=inf", "--hwdec=no",
			"--osd-level=0", "--no-osc", "--no-input-default-bindings", "--really-quiet",
			clip, NULL };
		mpv = bench_session_client(&s, argv, NULL);
		uint64_t warm_end = bench_now_us() + WARM_MS * 1000;
		while (bench_now_us() < warm_end) {
			bench_session_wait_frame(&s, 200);
		}
	}
	/* foot's first line, above where the video's window starts: focus it there */
	bench_session_pointer(&s, 300, 45);
	bench_session_button(&s, BTN_LEFT, true);
	bench_session_button(&s, BTN_LEFT, false);
	bench_session_settle(&s, 100, 1000);
	uint64_t *lat = calloc(keys, sizeof(*lat));
	size_t n = 0;
	const struct slim_fb *fb = slim_console_core_fb(s.core);
	for (size_t i = 0; lat && i < keys + 10; i++) {
		uint32_t code = (i & 1) ? KEY_BACKSPACE : KEY_A;
		uint64_t before = rows_hash(fb, 32, 64), t0 = bench_now_us(), took = 0;
		bench_session_key(&s, code, true);
		while (bench_now_us() - t0 < 2000000 && bench_session_wait_frame(&s, 2000)) {
			if (rows_hash(fb, 32, 64) != before) {
				took = s.last.applied_us - t0;
				break;
			}
		}
		bench_session_key(&s, code, false);
		bench_session_settle(&s, 12, 12);
		if (i >= 10 && took) {
			lat[n++] = took;
		}
	}
	qsort(lat, n, sizeof(*lat), bench_cmp_u64);
	double p50 = n ? (double)lat[n / 2] : 0;
	if (getenv("BENCH_VIDEO_DEBUG")) {
		const struct slim_console_stats *st = slim_console_core_stats(s.core);
		fprintf(stderr, "typing%s: %zu of %zu keys seen, %llu CSCS pieces\n",
			with_video ? " beside video" : "", n, keys,
			(unsigned long long)st->commands[SLIM_CMD_CSCS]);
	}
	free(lat);
	if (mpv > 0) {
		kill(mpv, SIGKILL);
		waitpid(mpv, NULL, 0);
	}
	kill(foot, SIGKILL);
	waitpid(foot, NULL, 0);
	bench_session_stop(&s);
	return p50;
}

int main(int argc, char *argv[])
{
	bool json, quick;
	if (!bench_options(argc, argv, &json, &quick)) {
		return 2;
	}
	if (system("command -v mpv >/dev/null && command -v ffmpeg >/dev/null && "
			"command -v grim >/dev/null") != 0) {
		fprintf(stderr, "bench-video needs mpv, ffmpeg and grim\n");
		return 77;
	}
	signal(SIGPIPE, SIG_IGN);
	size_t n_cases = quick ? 1 : N_CASES;
	int measure_ms = quick ? 1000 : 2500;
	struct result res[N_CASES][2] = { 0 };
	const char *only = getenv("BENCH_VIDEO_ONLY");
	for (size_t i = 0; i < n_cases; i++) {
		for (int m = 0; m < 2; m++) {
			if (only && strcmp(only, cases[i].name) != 0) {
				continue;
			}
			if (!run_case(&cases[i], m == 0, measure_ms, &res[i][m])) {
				return 1;
			}
		}
	}
	size_t keys = quick ? 20 : 100;
	bool typing = !only || strcmp(only, "typing") == 0;
	double typing_idle = typing ? typing_p50(false, keys) : 0;
	double typing_video = typing ? typing_p50(true, keys) : 0;
	if (json) {
		printf("{\"typing_idle_p50_us\": %.0f, \"typing_video_p50_us\": %.0f, "
			"\"typing_ratio\": %.2f, \"cases\": [", typing_idle, typing_video,
			typing_idle > 0 ? typing_video / typing_idle : 0);
		for (size_t i = 0, first = 1; i < n_cases; i++) {
			if (!res[i][0].ran) {
				continue;
			}
			printf("%s{\"name\": \"%s\", \"budget_mbit_per_s\": %u", first ? "" : ", ",
				cases[i].name, cases[i].budget);
			for (int m = 0; m < 2; m++) {
				const struct result *r = &res[i][m];
				const char *p = m == 0 ? "cscs" : "exact";
				printf(", \"%s_fps\": %.1f, \"%s_mbit_per_s\": %.1f, "
					"\"%s_server_cpu_pct\": %.1f, \"%s_encode_cpu_pct\": %.1f, "
					"\"%s_console_cpu_pct\": %.1f, "
					"\"%s_dropped_per_s\": %.1f, \"%s_latency_p50_us\": %.0f, "
					"\"%s_psnr_db\": %.1f, \"%s_exact_after_ms\": %.0f", p, r->fps, p,
					r->mbit, p, r->server_pct, p, r->encode_pct, p, r->console_pct, p,
					r->dropped, p, r->latency_us, p, r->psnr_db, p, r->refresh_ms);
			}
			printf(", \"mbit_ratio\": %.3f}", res[i][1].mbit > 0 ?
				res[i][0].mbit / res[i][1].mbit : 0);
			first = 0;
		}
		printf("]}\n");
		return 0;
	}
	printf("Video, mpv fullscreen: CSCS at the case's budget against exact pixels "
		"(--video-budget 0), same run\n\n");
	printf("%-20s %-6s %6s %8s %8s %8s %8s %8s %9s %6s %7s\n", "case", "path", "fps",
		"Mbit/s", "server%", "encode%", "console%", "drop/s", "lat p50", "PSNR", "exact");
	for (size_t i = 0; i < n_cases; i++) {
		for (int m = 0; m < 2 && res[i][0].ran; m++) {
			const struct result *r = &res[i][m];
			const char *name = m == 0 ? cases[i].name : "";
			char psnr_s[16] = "exact";
			if (r->psnr_db < 99) {
				snprintf(psnr_s, sizeof(psnr_s), "%.1f", r->psnr_db);
			}
			char enc_s[16] = "-";
			if (m == 0) {
				snprintf(enc_s, sizeof(enc_s), "%.1f", r->encode_pct);
			}
			printf("%-20s %-6s %6.1f %8.1f %8.1f %8s %8.1f %8.1f %7.1fms %6s %5.0fms\n",
				name, m == 0 ? "cscs" : "exact", r->fps, r->mbit, r->server_pct, enc_s,
				r->console_pct, r->dropped, r->latency_us / 1000, psnr_s, r->refresh_ms);
		}
	}
	printf("\nbudget: 200 Mbit/s unless the case says; PSNR in dB over R, G, B\n");
	if (typing) {
		printf("\nTyping in foot, key to pixels p50: %.2f ms alone, %.2f ms beside a 640x360 "
			"video (%.2fx)\n", typing_idle / 1000, typing_video / 1000,
			typing_idle > 0 ? typing_video / typing_idle : 0);
	}
	return 0;
}
