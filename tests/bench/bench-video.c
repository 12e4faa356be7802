/*
 * Video through H.264, through CSCS and as exact pixels, in one run (cf.
 * SLIM section 5.3: 720x480 video at 20 Hz in 40 Mbit/s). mpv (--vo=wlshm,
 * software decoding) plays a clip fullscreen on a console of the clip's
 * size, or upscaled, and chromium-bsu (OpenGL in software) is played on an
 * 800x600 screen; this process is the console. Each case three ways:
 *
 *   h264   the console decodes H.264 (console/video's decoders, in software)
 *          and says so in HELLO: the compositor encodes with x264
 *   cscs   a console that announces no codec: YUV pieces at the case's budget
 *   exact  --video-budget 0: everything as exact pixels, the path before
 *          video was told apart (not for the game)
 *
 * and for each:
 *
 *   fps        frames a second presented by the console
 *   Mbit/s     bytes received, DTLS records as on the wire
 *   encode     ms a picture, p50 and p99: the server's conversion and
 *              encoding alone (x264 at the preset the compositor settled on;
 *              CSCS pieces and the model; exact pixels), timed in-process
 *              on the clip's frames (ffmpeg's, at the screen's size; the
 *              game's: grim's), one after the other. For h264 also the
 *              compositor's own figure, as it tells a session manager
 *   decode     ms a picture, p50 and p99: h264, each picture's decoding
 *              while measuring; cscs and exact, the console core applying
 *              a frame's datagrams
 *   server     the compositor's CPU, % of one core (all of it: clients' buffers,
 *              rendering, encoding, DTLS)
 *   console    this process's CPU (decrypting, decoding, applying), % of one core
 *   latency    first damage on the server to the frame presented, p50
 *   PSNR, SSIM the console's picture against the server's (grim), same
 *              frame, on luma (BT.601, as PIL's 'L'): mpv stopped, the last
 *              frame taken before the lossless repaint comes. SSIM: 8x8
 *              windows every 4 pixels, C1 = (0.01*255)^2, C2 = (0.03*255)^2
 *   exact      mpv stopped -> the console equal to the server, byte for byte
 *              (the lossless repaint; the bar is 250 ms)
 *
 * with the ratio of h264's latency and bytes to CSCS's. Then typing in
 * foot, alone and beside a playing video (to a console with CSCS only and
 * to one that decodes H.264): keystroke to pixels p50 and the ratios.
 *
 * The clips (lavfi's mandelbrot, scaled: smooth colour, as video has; with
 * BENCH_VIDEO_CLIP=clean, testsrc2: sharp edges and flat colour) are made
 * once with ffmpeg and kept in $XDG_CACHE_HOME/slimland-bench.
 *
 *   bench-video [--json] [--quick]
 *   BENCH_VIDEO_ONLY='1280x720@60' bench-video   (one case, or `typing`, e.g. to profile)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/input-event-codes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "decoders.h"
#include "encoder.h"
#include "h264-encoder.h"
#include "session.h"

#define CLIP_SECONDS 4
#define WARM_MS 1200
/* the clip's frames the encoders are timed on, there and back */
#define ENCODE_FRAMES 30
/* the game's frames (grim's, as it plays) */
#define GAME_FRAMES 6
#define GAME "/usr/games/chromium-bsu"
#define GAME_SETTLE_MS 2500

enum mode { MODE_H264, MODE_CSCS, MODE_EXACT, N_MODES };
static const char *const mode_names[N_MODES] = { "h264", "cscs", "exact" };

struct vcase {
	const char *name;
	uint32_t clip_w, clip_h, fps, screen_w, screen_h, budget;
	bool game; /* chromium-bsu rather than a clip; fps: what the encoders are timed at */
};

static const struct vcase cases[] = {
	{ "720x480@30", 720, 480, 30, 720, 480, 200, false },
	{ "720x480@30_in_40", 720, 480, 30, 720, 480, 40, false },
	{ "1280x720@60", 1280, 720, 60, 1280, 720, 200, false },
	{ "1920x1080@30", 1920, 1080, 30, 1920, 1080, 200, false },
	{ "1920x1080@60", 1920, 1080, 60, 1920, 1080, 200, false },
	{ "640x360@30_to_1080", 640, 360, 30, 1920, 1080, 200, false },
	{ "chromium-bsu_800x600", 0, 0, 60, 800, 600, 200, true },
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

struct result {
	bool ran;
	double fps, mbit, server_pct, console_pct, latency_us, psnr_db, ssim;
	double encode_ms[2], decode_ms[2]; /* p50, p99 */
	double server_encode_ms[2]; /* h264: the compositor's own figure */
	double refresh_ms; /* the client stopped -> the console exact */
	char preset[16];   /* h264: the x264 preset the compositor settled on */
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

static bool clean_clips(void)
{
	const char *clip = getenv("BENCH_VIDEO_CLIP");
	return clip && strcmp(clip, "clean") == 0;
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
	bool clean = clean_clips();
	snprintf(path, size, "%s/%s-%ux%u-%u.mkv", dir, clean ? "testsrc2" : "mandelbrot",
		c->clip_w, c->clip_h, c->fps);
	struct stat st;
	if (stat(path, &st) == 0 && st.st_size > 0) {
		return true;
	}
	char src[128], tmp[700];
	if (clean) {
		snprintf(src, sizeof(src), "testsrc2=size=%ux%u:rate=%u", c->clip_w, c->clip_h,
			c->fps);
	} else {
		/* rendered small and scaled up: the set's detail at any size, made quickly */
		snprintf(src, sizeof(src),
			"mandelbrot=size=480x270:rate=%u,scale=%u:%u:flags=bicubic",
			c->fps, c->clip_w, c->clip_h);
	}
	snprintf(tmp, sizeof(tmp), "%s.part.mkv", path);
	char secs[8];
	snprintf(secs, sizeof(secs), "%d", CLIP_SECONDS);
	char *argv[] = { "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", src, "-t", secs,
		"-c:v", "mpeg4", "-q:v", "2", tmp, NULL };
	fprintf(stderr, "making %s\n", path);
	return run_cmd(argv) && rename(tmp, path) == 0;
}

/* Pictures of w x h in XRGB read from a command's stdout: raw (bgr0) or one PPM. */
static uint32_t *read_pictures(const char *cmd, bool ppm, uint32_t w, uint32_t h, size_t max,
		size_t *n)
{
	FILE *f = popen(cmd, "r");
	if (!f) {
		return NULL;
	}
	size_t frame = (size_t)w * h;
	uint32_t *px = malloc(frame * 4 * max);
	uint8_t *row = malloc((size_t)w * 4);
	unsigned gw, gh, top;
	*n = 0;
	if (ppm && (fscanf(f, "P6 %u %u %u", &gw, &gh, &top) != 3 || gw != w || gh != h ||
			top != 255 || fgetc(f) == EOF)) {
		max = 0;
	}
	size_t bpp = ppm ? 3 : 4;
	for (; px && row && *n < max; ++*n) {
		uint32_t *out = px + *n * frame;
		uint32_t y = 0;
		for (; y < h && fread(row, bpp, w, f) == w; y++) {
			for (uint32_t x = 0; x < w; x++) {
				const uint8_t *p = row + bpp * x;
				/* PPM is R, G, B; bgr0 is XRGB little-endian already */
				out[(size_t)y * w + x] = ppm ?
					(uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2] :
					(uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
			}
		}
		if (y < h) {
			break;
		}
	}
	free(row);
	pclose(f);
	if (*n == 0) {
		free(px);
		return NULL;
	}
	return px;
}

/* grim's picture of the server's screen. */
static uint32_t *grim_screen(uint32_t w, uint32_t h)
{
	size_t n;
	return read_pictures("grim -t ppm - 2>/dev/null", true, w, h, 1, &n);
}

/* The clip's first frames as mpv shows them fullscreen: at the screen's size. */
static uint32_t *clip_frames(const char *clip, uint32_t w, uint32_t h, size_t *n)
{
	char cmd[900];
	snprintf(cmd, sizeof(cmd), "ffmpeg -v error -i '%s' -frames:v %d -vf scale=%u:%u:flags=bicubic "
		"-f rawvideo -pix_fmt bgr0 - 2>/dev/null", clip, ENCODE_FRAMES, w, h);
	return read_pictures(cmd, false, w, h, ENCODE_FRAMES, n);
}

/* Luma as PIL's 'L' has it (ITU-R 601 weights, rounded). */
static uint8_t *luma(const uint32_t *px, uint32_t w, uint32_t h, size_t stride)
{
	uint8_t *y = malloc((size_t)w * h);
	for (uint32_t r = 0; y && r < h; r++) {
		for (uint32_t x = 0; x < w; x++) {
			uint32_t p = px[(size_t)r * stride + x];
			y[(size_t)r * w + x] = (uint8_t)(((p >> 16 & 0xff) * 19595 +
				(p >> 8 & 0xff) * 38470 + (p & 0xff) * 7471 + 0x8000) >> 16);
		}
	}
	return y;
}

static double psnr_luma(const uint8_t *a, const uint8_t *b, size_t n)
{
	double sq = 0;
	for (size_t i = 0; i < n; i++) {
		double d = (double)a[i] - b[i];
		sq += d * d;
	}
	double mse = sq / (double)n;
	return mse == 0 ? 99.0 : 10 * log10(255.0 * 255.0 / mse);
}

/* Mean SSIM over 8x8 windows every 4 pixels (Wang et al.'s constants). */
static double ssim_luma(const uint8_t *a, const uint8_t *b, uint32_t w, uint32_t h)
{
	const double c1 = (0.01 * 255) * (0.01 * 255), c2 = (0.03 * 255) * (0.03 * 255);
	double sum = 0;
	size_t n = 0;
	for (uint32_t y = 0; y + 8 <= h; y += 4) {
		for (uint32_t x = 0; x + 8 <= w; x += 4) {
			uint64_t sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
			for (uint32_t j = 0; j < 8; j++) {
				const uint8_t *pa = a + (size_t)(y + j) * w + x;
				const uint8_t *pb = b + (size_t)(y + j) * w + x;
				for (uint32_t i = 0; i < 8; i++) {
					sa += pa[i];
					sb += pb[i];
					saa += (uint32_t)pa[i] * pa[i];
					sbb += (uint32_t)pb[i] * pb[i];
					sab += (uint32_t)pa[i] * pb[i];
				}
			}
			double ma = sa / 64.0, mb = sb / 64.0;
			double va = saa / 64.0 - ma * ma, vb = sbb / 64.0 - mb * mb;
			double cov = sab / 64.0 - ma * mb;
			sum += (2 * ma * mb + c1) * (2 * cov + c2) /
				((ma * ma + mb * mb + c1) * (va + vb + c2));
			n++;
		}
	}
	return n ? sum / (double)n : 0;
}

/* A copy of the console's picture (it goes on changing). */
static uint32_t *console_copy(const struct slim_fb *fb)
{
	uint32_t *px = malloc((size_t)fb->width * fb->height * 4);
	for (uint32_t y = 0; px && y < fb->height; y++) {
		memcpy(px + (size_t)y * fb->width, slim_fb_row(fb, 0, y), (size_t)fb->width * 4);
	}
	return px;
}

static bool console_exact(const struct slim_fb *fb, const uint32_t *ref)
{
	for (uint32_t y = 0; y < fb->height; y++) {
		const uint32_t *a = slim_fb_row(fb, 0, y), *b = ref + (size_t)y * fb->width;
		for (uint32_t x = 0; x < fb->width; x++) {
			if ((a[x] ^ b[x]) & 0xffffff) {
				return false;
			}
		}
	}
	return true;
}

static void null_send(void *data, const uint8_t *buf, size_t len)
{
}

static void quantiles(uint64_t *v, size_t n, double out_ms[2])
{
	qsort(v, n, sizeof(*v), bench_cmp_u64);
	out_ms[0] = n ? (double)v[n / 2] / 1000 : 0;
	out_ms[1] = n ? (double)v[n * 99 / 100] / 1000 : 0;
}

/*
 * What the compositor says of its busiest H.264 stream on its control
 * socket, with each link report (session-manager.md: `video CONSOLE KIND
 * DEVICE KBIT ENCODE_P50_US ENCODE_P99_US W H`): the x264 preset, and the
 * encode time over its encoder's last pictures. The latest said is kept.
 */
static void read_video_reports(struct bench_session *s, struct result *r)
{
	char line[256], kind[16], device[16];
	unsigned long long kbit, p50, p99;
	struct pollfd p = { .fd = s->control, .events = POLLIN };
	while (s->control >= 0 && poll(&p, 1, 0) > 0 &&
			bench_read_line(s->control, line, sizeof(line), 100)) {
		if (sscanf(line, "video %*s %15s %15s %llu %llu %llu", kind, device, &kbit, &p50,
				&p99) == 5 && strcmp(kind, "software") == 0) {
			snprintf(r->preset, sizeof(r->preset), "%s", device);
			r->server_encode_ms[0] = (double)p50 / 1000;
			r->server_encode_ms[1] = (double)p99 / 1000;
		}
	}
}

/*
 * The server's encoding alone, a picture at a time, on the case's pictures
 * there and back (consecutive frames, as the compositor sees them): the
 * conversion to YUV (h264, cscs) and the encoder, here in-process so that
 * the compositor's other work (clients, rendering) is not counted. h264
 * at the bit rate the session carried, with the compositor's preset.
 */
static void encode_ms(enum mode mode, const uint32_t *frames, size_t n_frames, uint32_t w,
		uint32_t h, const struct vcase *c, double mbit, const char *preset, double out_ms[2])
{
	struct slim_encoder_config cfg = { .assoc = 1, .lz4 = true, .rgb888 = true,
		.cscs = true, .palette = true, .zstd = true, .cache = true, .history = true,
		.detect_scroll = true };
	struct slim_encoder *enc = mode == MODE_H264 ? NULL :
		slim_encoder_create(w, h, &cfg, null_send, NULL);
	struct slim_h264_config hcfg = { .width = (uint16_t)w, .height = (uint16_t)h, .fps = c->fps,
		.bitrate_bps = (uint64_t)(mbit * 1e6) > 200000 ? (uint64_t)(mbit * 1e6) : 200000,
		.device = SLIM_H264_SOFTWARE, .x264_preset = preset };
	struct slim_h264_encoder *h264 = mode == MODE_H264 ? slim_h264_encoder_create(&hcfg) : NULL;
	if (!enc && !h264) {
		return;
	}
	struct slim_yuv_planes planes = { 0 };
	struct slim_rect box = { 0, 0, (uint16_t)w, (uint16_t)h };
	uint16_t sw = (uint16_t)w, sh = (uint16_t)h;
	if (mode == MODE_CSCS) {
		slim_yuv_fit((uint64_t)c->budget * 1000000, c->fps, w, h, &sw, &sh);
	}
	size_t rounds = n_frames > 1 ? 2 * n_frames - 2 : 1, n = 0;
	uint64_t *took = calloc(rounds, sizeof(*took));
	for (size_t i = 0; took && i < rounds; i++) {
		size_t k = i < n_frames ? i : 2 * n_frames - 2 - i;
		struct slim_fb fb = { .px = (uint32_t *)frames + k * w * h, .width = w, .height = h,
			.stride = w };
		uint64_t t0 = bench_now_us();
		struct slim_yuv_image img = { 0 };
		if (mode != MODE_EXACT) {
			slim_yuv_from_fb(&img, &planes, &fb, box, sw, sh);
		}
		if (h264) {
			struct slim_h264_planes in = { .y = img.y, .u = img.u, .v = img.v,
				.y_stride = img.y_stride, .c_stride = img.c_stride };
			struct slim_h264_au au;
			slim_h264_encode(h264, &in, t0, i == 0, &au);
		} else {
			struct slim_frame f = { .fb = &fb, .yuv = mode == MODE_CSCS ? &img : NULL,
				.n_yuv = mode == MODE_CSCS };
			slim_encoder_frame(enc, &f);
			slim_encoder_timeout(enc); /* nothing in flight stays unconfirmed */
		}
		/* the first pictures are the whole screen, or a key picture: not counted */
		if (i >= 2) {
			took[n++] = bench_now_us() - t0;
		}
	}
	quantiles(took, n, out_ms);
	free(took);
	slim_yuv_planes_finish(&planes);
	slim_encoder_destroy(enc);
	slim_h264_encoder_destroy(h264);
}

/*
 * The console's decoders, each picture's decoding timed while `timing`
 * (the decoders' own figures cover their last pictures, warm-up included).
 */
struct timed_decoders {
	struct console_decoders *cd;
	bool timing;
	uint64_t took[4096];
	size_t n;
};

static bool timed_decode(void *data, uint8_t stream, const uint8_t *au, size_t size,
		bool start, struct slim_console_picture *pic)
{
	struct timed_decoders *td = data;
	uint64_t t0 = bench_now_us();
	bool ok = console_decoders_impl.decode(td->cd, stream, au, size, start, pic);
	if (td->timing && ok && td->n < sizeof(td->took) / sizeof(td->took[0])) {
		td->took[td->n++] = bench_now_us() - t0;
	}
	return ok;
}

static const struct slim_console_video_impl timed_impl = { .decode = timed_decode };

/* The next consoles decode H.264 (software) with `td`, or nothing with NULL. */
static bool use_decoders(struct timed_decoders *td)
{
	static struct slim_wire_codec caps;
	if (!td) {
		bench_session_video(NULL, NULL, NULL, 0);
		return true;
	}
	*td = (struct timed_decoders){ .cd = console_decoders_create(false) };
	if (!td->cd) {
		return false;
	}
	console_decoders_caps(td->cd, &caps);
	bench_session_video(&timed_impl, td, &caps, 1);
	return true;
}

/* Video the console has seen: CSCS pieces or decoded pictures. */
static uint64_t video_seen(const struct bench_session *s)
{
	return slim_console_core_stats(s->core)->commands[SLIM_CMD_CSCS] +
		slim_console_core_video_stats(s->core)->pictures;
}

/*
 * Until the client plays as it will be measured: its first pictures seen as
 * video (the compositor tells video apart after some frames), or with no
 * video path (exact) some frames presented; then WARM_MS more.
 */
static void warm_up(struct bench_session *s, bool as_video)
{
	uint32_t frames = s->presented;
	uint64_t end = bench_now_us() + 15000000;
	while ((as_video ? video_seen(s) == 0 : s->presented - frames < 30) &&
			bench_now_us() < end) {
		bench_session_wait_frame(s, 200);
	}
	end = bench_now_us() + WARM_MS * 1000;
	while (bench_now_us() < end) {
		bench_session_wait_frame(s, 200);
	}
}

/* chromium-bsu, drawn with OpenGL in software, its sound nowhere. */
static pid_t start_game(struct bench_session *s)
{
	static const char *const env[][2] = { { "LIBGL_ALWAYS_SOFTWARE", "1" },
		{ "SDL_VIDEODRIVER", "wayland" }, { "SDL_AUDIODRIVER", "dummy" },
		{ "ALSOFT_DRIVERS", "null" } };
	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++) {
		setenv(env[i][0], env[i][1], 1);
	}
	char *argv[] = { GAME, NULL };
	pid_t pid = bench_session_client(s, argv, NULL);
	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++) {
		unsetenv(env[i][0]);
	}
	/* its title screen, as video; then Enter starts play */
	uint64_t end = bench_now_us() + 30000000;
	while (video_seen(s) < 30 && bench_now_us() < end) {
		bench_session_wait_frame(s, 200);
	}
	bench_session_key(s, KEY_ENTER, true);
	bench_session_key(s, KEY_ENTER, false);
	/* play's first frames redraw little: the compositor tells it is video again later */
	end = bench_now_us() + GAME_SETTLE_MS * 1000;
	while (bench_now_us() < end) {
		bench_session_wait_frame(s, 200);
	}
	return pid;
}

/* The game's pictures as it plays, from grim, the console kept receiving between. */
static uint32_t *game_frames(struct bench_session *s, size_t *n)
{
	size_t frame = (size_t)s->width * s->height;
	uint32_t *px = malloc(frame * 4 * GAME_FRAMES);
	*n = 0;
	for (size_t i = 0; px && i < GAME_FRAMES; i++) {
		uint32_t *one = grim_screen(s->width, s->height);
		if (one) {
			memcpy(px + *n * frame, one, frame * 4);
			++*n;
		}
		free(one);
		bench_session_wait_frame(s, 30);
	}
	return px;
}

static bool run_case(const struct vcase *c, enum mode mode, int measure_ms, struct result *r)
{
	char clip[640];
	if (!c->game && !clip_path(c, clip, sizeof(clip))) {
		fprintf(stderr, "%s: cannot make the clip (ffmpeg)\n", c->name);
		return false;
	}
	char budget[16];
	snprintf(budget, sizeof(budget), "%u", mode == MODE_EXACT ? 0 : c->budget);
	const char *args[] = { "--video-budget", budget, "--video-codec", "software", NULL };
	bench_session_compositor_args(args);
	static struct timed_decoders td;
	struct timed_decoders *h264 = mode == MODE_H264 ? &td : NULL;
	if (!use_decoders(h264)) {
		return false;
	}
	struct bench_session s;
	if (!bench_session_start(&s, SLIMLAND_BIN, c->screen_w, c->screen_h, BENCH_LINK_ATTACH)) {
		fprintf(stderr, "%s: cannot start a session\n", c->name);
		bench_session_stop(&s);
		console_decoders_destroy(td.cd);
		return false;
	}
	pid_t client;
	if (c->game) {
		client = start_game(&s);
	} else {
		char *argv[] = { "mpv", "--vo=wlshm", "--no-audio", "--loop=inf", "--hwdec=no",
			"--fs", "--osd-level=0", "--no-osc", "--no-input-default-bindings",
			"--really-quiet", clip, NULL };
		client = bench_session_client(&s, argv, NULL);
	}
	warm_up(&s, mode != MODE_EXACT);
	uint64_t t0 = bench_now_us(), bytes0 = s.bytes_received;
	uint64_t srv0 = bench_process_cpu_us(s.compositor), con0 = self_cpu_us();
	uint32_t frames0 = s.presented;
	size_t n_lat = 0, cap = 4096;
	uint64_t *lat = calloc(cap, sizeof(*lat)), *apply = calloc(cap, sizeof(*apply));
	uint64_t end = t0 + (uint64_t)measure_ms * 1000;
	td.timing = true;
	while (bench_now_us() < end) {
		read_video_reports(&s, r);
		if (bench_session_wait_frame(&s, 200) && lat && apply && n_lat < cap &&
				s.last.encode_us && s.last.applied_us > s.last.encode_us) {
			apply[n_lat] = s.last.apply_us;
			lat[n_lat++] = s.last.applied_us - s.last.encode_us;
		}
	}
	td.timing = false;
	double secs = (double)(bench_now_us() - t0) / 1e6;
	r->fps = (s.presented - frames0) / secs;
	r->mbit = (double)(s.bytes_received - bytes0) * 8 / secs / 1e6;
	r->server_pct = (double)(bench_process_cpu_us(s.compositor) - srv0) / 1e4 / secs;
	r->console_pct = (double)(self_cpu_us() - con0) / 1e4 / secs;
	qsort(lat, n_lat, sizeof(*lat), bench_cmp_u64);
	r->latency_us = n_lat ? (double)lat[n_lat / 2] : 0;
	if (h264) {
		quantiles(td.took, td.n, r->decode_ms);
	} else {
		quantiles(apply, n_lat, r->decode_ms);
	}
	free(lat);
	free(apply);
	if (getenv("BENCH_VIDEO_DEBUG")) {
		const struct slim_console_stats *st = slim_console_core_stats(s.core);
		const struct slim_console_video_stats *vs = slim_console_core_video_stats(s.core);
		struct slim_h264_decoder_info info = { .kind = "none" };
		if (h264) {
			console_decoders_info(td.cd, &info);
		}
		fprintf(stderr, "%s %s: %llu CSCS, %llu pictures (%ux%u), %llu errors; decoder %s: "
			"p50 %.2f p99 %.2f ms over its last pictures\n", c->name, mode_names[mode],
			(unsigned long long)st->commands[SLIM_CMD_CSCS],
			(unsigned long long)vs->pictures, vs->src_w, vs->src_h,
			(unsigned long long)vs->errors, info.kind, info.decode_ms_p50,
			info.decode_ms_p99);
	}
	/* the game's pictures to time the encoders on, as it plays; then it plays on a while */
	size_t n_frames = 0;
	uint32_t *frames = c->game ? game_frames(&s, &n_frames) : NULL;
	end = bench_now_us() + WARM_MS * 1000;
	while (c->game && bench_now_us() < end) {
		bench_session_wait_frame(&s, 200);
	}
	/*
	 * Quality: the client stopped, the frame it last drew received in full
	 * (no datagram for 40 ms, well inside the 150 ms after which the
	 * lossless repaint is sent; a decoded H.264 picture stays in the
	 * console's framebuffer until then), then both pictures of it.
	 */
	kill(client, SIGSTOP);
	uint64_t stopped_us = bench_now_us();
	while (bench_session_wait_frame(&s, 40)) {
	}
	const struct slim_fb *fb = slim_console_core_fb(s.core);
	uint32_t *shown = console_copy(fb);
	uint32_t *ref = shown ? grim_screen(fb->width, fb->height) : NULL;
	uint8_t *ya = ref ? luma(shown, fb->width, fb->height, fb->width) : NULL;
	uint8_t *yb = ref ? luma(ref, fb->width, fb->height, fb->width) : NULL;
	if (ya && yb) {
		r->psnr_db = psnr_luma(ya, yb, (size_t)fb->width * fb->height);
		r->ssim = ssim_luma(ya, yb, fb->width, fb->height);
	}
	free(ya);
	free(yb);
	/* then the lossless repaint: frames until the console equals the server */
	while (ref && !console_exact(fb, ref) && bench_now_us() - stopped_us < 2000000) {
		bench_session_wait_frame(&s, 500);
	}
	r->refresh_ms = ref && console_exact(fb, ref) ?
		(double)(bench_now_us() - stopped_us) / 1000 : -1;
	kill(client, SIGKILL);
	waitpid(client, NULL, 0);
	uint32_t w = fb->width, h = fb->height;
	bench_session_stop(&s);
	console_decoders_destroy(td.cd);
	td.cd = NULL;
	if (!c->game) {
		frames = clip_frames(clip, w, h, &n_frames);
	}
	if (frames) {
		encode_ms(mode, frames, n_frames, w, h, c, r->mbit, r->preset[0] ? r->preset : NULL,
			r->encode_ms);
	}
	free(frames);
	free(ref);
	free(shown);
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
 * playing video (mpv, 640x360 at 30 fps, windowed), to a console that
 * decodes H.264 or not: 'a' and BackSpace in turn, each timed from the key
 * to the first frame the console presents that changed foot's first line
 * (the video sends frames all along, so frames alone say nothing).
 * Returns the p50 in microseconds.
 */
static double typing_p50(bool with_video, bool h264, size_t keys)
{
	const struct vcase clip_case = { "typing", 640, 360, 30, 1280, 720, 200, false };
	char clip[640];
	if (with_video && !clip_path(&clip_case, clip, sizeof(clip))) {
		return 0;
	}
	const char *args[] = { "--video-codec", "software", NULL };
	bench_session_compositor_args(args);
	static struct timed_decoders td;
	if (!use_decoders(h264 ? &td : NULL)) {
		return 0;
	}
	struct bench_session s;
	if (!bench_session_start(&s, SLIMLAND_BIN, 1280, 720, BENCH_LINK_ATTACH)) {
		bench_session_stop(&s);
		console_decoders_destroy(td.cd);
		td.cd = NULL;
		return 0;
	}
	setenv("SHELL", "/bin/sh", 1);
	setenv("PS1", "$ ", 1);
	/*
	 * one line, clear of the video's window (the shell cascades the next
	 * window 32 pixels down): focusing foot raises it, and a foot of its
	 * default size would then hide the video
	 */
	char *foot_argv[] = { "foot", "--window-size-pixels=1200x30", NULL };
	pid_t foot = bench_session_client(&s, foot_argv, NULL);
	bench_session_settle(&s, 500, 10000);
	pid_t mpv = -1;
	if (with_video) {
		char *argv[] = { "mpv", "--vo=wlshm", "--no-audio", "--loop=inf", "--hwdec=no",
			"--osd-level=0", "--no-osc", "--no-input-default-bindings", "--really-quiet",
			clip, NULL };
		mpv = bench_session_client(&s, argv, NULL);
		warm_up(&s, true);
	}
	/* foot's first line, above where the video's window starts: focus it there */
	bench_session_pointer(&s, 300, 45);
	bench_session_button(&s, BTN_LEFT, true);
	bench_session_button(&s, BTN_LEFT, false);
	bench_session_settle(&s, 100, 1000);
	uint64_t *lat = calloc(keys, sizeof(*lat));
	size_t n = 0;
	const struct slim_fb *fb = slim_console_core_fb(s.core);
	uint64_t seen0 = video_seen(&s);
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
		fprintf(stderr, "typing%s%s: %zu of %zu keys seen, %llu CSCS pieces, %llu pictures, "
			"%llu of them while typing\n", with_video ? " beside video" : "",
			h264 ? " (h264)" : "", n, keys,
			(unsigned long long)st->commands[SLIM_CMD_CSCS],
			(unsigned long long)slim_console_core_video_stats(s.core)->pictures,
			(unsigned long long)(video_seen(&s) - seen0));
	}
	free(lat);
	if (mpv > 0) {
		kill(mpv, SIGKILL);
		waitpid(mpv, NULL, 0);
	}
	kill(foot, SIGKILL);
	waitpid(foot, NULL, 0);
	bench_session_stop(&s);
	console_decoders_destroy(td.cd);
	td.cd = NULL;
	return p50;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static void print_json(const struct result res[][N_MODES], size_t n_cases, const double typing[3])
{
	printf("{\"typing_idle_p50_us\": %.0f, \"typing_cscs_video_p50_us\": %.0f, "
		"\"typing_h264_video_p50_us\": %.0f, \"typing_cscs_video_per_idle\": %.2f, "
		"\"typing_h264_video_per_idle\": %.2f", typing[0], typing[1], typing[2],
		ratio(typing[1], typing[0]), ratio(typing[2], typing[0]));
	for (size_t i = 0; i < n_cases; i++) {
		const char *k = cases[i].name;
		if (!res[i][MODE_CSCS].ran) {
			continue;
		}
		printf(", \"%s_budget_mbit_per_s\": %u", k, cases[i].budget);
		for (int m = 0; m < N_MODES; m++) {
			const struct result *r = &res[i][m];
			const char *p = mode_names[m];
			if (!r->ran) {
				continue;
			}
			printf(", \"%s_%s_fps\": %.1f, \"%s_%s_mbit_per_s\": %.2f, "
				"\"%s_%s_encode_ms_p50\": %.2f, \"%s_%s_encode_ms_p99\": %.2f, "
				"\"%s_%s_decode_ms_p50\": %.2f, \"%s_%s_decode_ms_p99\": %.2f, "
				"\"%s_%s_server_cpu_pct\": %.1f, \"%s_%s_console_cpu_pct\": %.1f, "
				"\"%s_%s_latency_p50_us\": %.0f, \"%s_%s_psnr_y_db\": %.1f, "
				"\"%s_%s_ssim_y\": %.4f, \"%s_%s_exact_after_ms\": %.0f",
				k, p, r->fps, k, p, r->mbit, k, p, r->encode_ms[0], k, p, r->encode_ms[1],
				k, p, r->decode_ms[0], k, p, r->decode_ms[1], k, p, r->server_pct, k, p,
				r->console_pct, k, p, r->latency_us, k, p, r->psnr_db, k, p, r->ssim,
				k, p, r->refresh_ms);
		}
		const struct result *h = &res[i][MODE_H264];
		printf(", \"%s_latency_h264_per_cscs\": %.2f, \"%s_mbit_h264_per_cscs\": %.3f, "
			"\"%s_h264_x264_preset\": \"%s\", \"%s_h264_server_encode_ms_p50\": %.2f, "
			"\"%s_h264_server_encode_ms_p99\": %.2f", k,
			ratio(h->latency_us, res[i][MODE_CSCS].latency_us), k,
			ratio(h->mbit, res[i][MODE_CSCS].mbit), k, h->preset, k,
			h->server_encode_ms[0], k, h->server_encode_ms[1]);
	}
	printf("}\n");
}

static void print_table(const struct result res[][N_MODES], size_t n_cases,
		const double typing[3], bool typed)
{
	printf("Video: H.264 (x264 on the server, libavcodec on the console), CSCS at the "
		"case's budget and exact pixels (--video-budget 0), same run\n\n");
	printf("%-21s %-5s %5s %7s %11s %11s %7s %8s %8s %6s %6s %6s\n", "case", "mode", "fps",
		"Mbit/s", "encode ms", "decode ms", "server%", "console%", "lat p50", "PSNR-Y",
		"SSIM-Y", "exact");
	printf("%-21s %-5s %5s %7s %11s %11s\n", "", "", "", "", "p50/p99", "p50/p99");
	for (size_t i = 0; i < n_cases; i++) {
		for (int m = 0; m < N_MODES; m++) {
			const struct result *r = &res[i][m];
			if (!r->ran) {
				continue;
			}
			char psnr_s[16] = "exact", ssim_s[16] = "1", enc_s[24], dec_s[24];
			if (r->psnr_db < 99) {
				snprintf(psnr_s, sizeof(psnr_s), "%.1f", r->psnr_db);
				snprintf(ssim_s, sizeof(ssim_s), "%.3f", r->ssim);
			}
			snprintf(enc_s, sizeof(enc_s), "%.1f/%.1f", r->encode_ms[0], r->encode_ms[1]);
			snprintf(dec_s, sizeof(dec_s), "%.1f/%.1f", r->decode_ms[0], r->decode_ms[1]);
			printf("%-21s %-5s %5.1f %7.1f %11s %11s %7.1f %8.1f %6.1fms %6s %6s %4.0fms\n",
				m == 0 ? cases[i].name : "", mode_names[m], r->fps, r->mbit, enc_s,
				dec_s, r->server_pct, r->console_pct, r->latency_us / 1000, psnr_s,
				ssim_s, r->refresh_ms);
		}
		if (res[i][MODE_H264].ran && res[i][MODE_CSCS].ran) {
			const struct result *h = &res[i][MODE_H264];
			printf("%-21s h264/cscs: latency %.2fx, bytes %.3fx; in the compositor: x264 %s, "
				"encode %.1f/%.1f ms\n", "", ratio(h->latency_us, res[i][MODE_CSCS].latency_us),
				ratio(h->mbit, res[i][MODE_CSCS].mbit), h->preset[0] ? h->preset : "-",
				h->server_encode_ms[0], h->server_encode_ms[1]);
		}
	}
	printf("\nbudget: 200 Mbit/s unless the case says; PSNR and SSIM on luma (BT.601)\n");
	if (typed) {
		printf("\nTyping in foot, key to pixels p50: %.2f ms alone; beside a 640x360 video "
			"%.2f ms with CSCS (%.2fx), %.2f ms with H.264 (%.2fx)\n", typing[0] / 1000,
			typing[1] / 1000, ratio(typing[1], typing[0]), typing[2] / 1000,
			ratio(typing[2], typing[0]));
	}
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
	bool game = access(GAME, X_OK) == 0;
	size_t n_cases = quick ? 1 : N_CASES;
	int measure_ms = quick ? 1000 : 2500;
	static struct result res[N_CASES][N_MODES];
	const char *only = getenv("BENCH_VIDEO_ONLY");
	for (size_t i = 0; i < n_cases; i++) {
		if ((only && strcmp(only, cases[i].name) != 0) || (cases[i].game && !game)) {
			continue;
		}
		for (int m = 0; m < N_MODES; m++) {
			if (cases[i].game && m == MODE_EXACT) {
				continue;
			}
			if (!run_case(&cases[i], (enum mode)m, measure_ms, &res[i][m])) {
				return 1;
			}
		}
	}
	size_t keys = quick ? 20 : 100;
	bool typed = !only || strcmp(only, "typing") == 0;
	double typing[3] = { 0 };
	if (typed) {
		typing[0] = typing_p50(false, true, keys);
		typing[1] = typing_p50(true, false, keys);
		typing[2] = typing_p50(true, true, keys);
	}
	if (json) {
		print_json(res, n_cases, typing);
	} else {
		print_table(res, n_cases, typing, typed);
	}
	return 0;
}
