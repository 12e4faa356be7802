/*
 * Sound, mouth to ear: a real session (slimland with the PipeWire it
 * starts) and a real slimland-console on loopback. The console's ALSA
 * device is the file plugin over the null device (no sound card needed);
 * its microphone reads a FIFO this benchmark writes at a microphone's
 * pace. Between the console and the compositor a relay here forwards the
 * datagrams both ways and counts them.
 *
 *   playback  a PipeWire client here (S16 stereo, 48 kHz, quantum 480)
 *             plays silence into "Console speaker" and, every 300 ms, a
 *             click (5 ms of 1 kHz at half scale). Mouth: the time its
 *             buffer was queued plus the click's offset in it. Ear: the
 *             console's `audio onset` (handed to its device, plus what the
 *             device holds). Opus at 64 kbit/s, and PCM in the same run:
 *             the baseline without the codec (and its frame) on the way.
 *   mic       clicks in the console's microphone: the FIFO gets a 10 ms
 *             block of mono s16 every 10 ms (ALSA's file plugin reads what
 *             the console asks for, a 10 ms period every 10 ms; a block
 *             is dropped while two wait unread). Mouth: the moment the
 *             block that starts with the click was written (a real
 *             microphone hands over a period once it is full: it would
 *             add up to 10 ms).
 *             Ear: the process call of a PipeWire capture stream here on
 *             "Console microphone" that delivers the click.
 *   bit rate  bytes of the compositor's AUDIO datagrams a second while the
 *             clicks play (UDP payload; "wire" adds the IPv4 and UDP
 *             headers), and what the microphone sends upstream. Over DTLS
 *             the records cannot be told apart: all that went down, with
 *             nothing on the screen changing.
 *   A/V       mpv (--vo=wlshm --ao=pipewire, fullscreen) plays a clip that
 *             flashes white and starts a 50 ms beep on the same frame once
 *             a second; the console says when it presented the flash
 *             (`watch` on the screen's centre) and when it heard the beep:
 *             onset - flash, positive when the sound is late.
 *   CPU       the compositor's and the console's CPU while a 440 Hz tone
 *             plays, and the same processes with nothing playing (the
 *             console's microphone streams in both: a console sends it
 *             whenever it is attached); the stream's cost is the
 *             difference.
 *
 * Clicks out and clicks in are timed in the same stretch: nothing in the
 * session loops the speaker back to the microphone. They are shared among
 * a few consoles started in turn (see run_session: each is one draw of
 * how its 10 ms periods meet the session's). Targets (printed,
 * never failed on): playback p50 <= 40 ms, A/V offset within +-40 ms, a
 * stream <= 2% of a core on each side. Without --quick, the Opus session
 * is timed over DTLS too (the transport's cost).
 *
 * Skipped (77) if pipewire, wireplumber, dbus-daemon, mpv or ffmpeg is
 * missing. Every process and directory it made is gone at exit, on
 * failure and on SIGINT/SIGTERM/SIGHUP too.
 *
 *   bench-audio [--json] [--quick] [-v]   (-v: the console's other events, its log)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <pipewire/pipewire.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spa/param/audio/format-utils.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "audio-rig.h"
#include "session.h"

#define TARGET_PLAYBACK_MS 40.0
#define TARGET_AV_MS 40.0
#define TARGET_CPU_PERCENT 2.0

static const char asoundrc[] =
	"pcm.slimbench {\n"
	"	type asym\n"
	"	playback.pcm { type file slave.pcm \"null\" file \"/dev/null\" format \"raw\" }\n"
	"	capture.pcm { type file slave.pcm \"null\" file \"/dev/null\" infile \"%s\" "
	"format \"raw\" }\n"
	"}\n";

static bool verbose;

static uint64_t now_us(void)
{
	return bench_now_us();
}

/* What is still alive, for the signal handler and atexit. */
static struct {
	struct bench_session *session;
	pid_t console, mpv;
	char dir[64];
} live = { .console = -1, .mpv = -1 };
static volatile sig_atomic_t cleaning;

/*
 * Sends `sig` (0: none, the process was told to go another way), gives it
 * three seconds to exit, then kills it.
 */
static void kill_wait(pid_t *pid, int sig)
{
	if (*pid <= 0) {
		return;
	}
	if (sig) {
		kill(*pid, sig);
	}
	for (int i = 0; i < 150 && waitpid(*pid, NULL, WNOHANG) == 0; i++) {
		struct timespec ts = { 0, 20000000 };
		nanosleep(&ts, NULL);
	}
	if (waitpid(*pid, NULL, WNOHANG) == 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	*pid = -1;
}

static void cleanup(void)
{
	if (cleaning) {
		return;
	}
	cleaning = 1;
	kill_wait(&live.mpv, SIGKILL);
	kill_wait(&live.console, SIGKILL);
	if (live.session) {
		/* SIGTERM: the compositor stops the session's PipeWire on its way out */
		bench_session_stop(live.session);
		live.session = NULL;
	}
	if (live.dir[0]) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", live.dir);
		(void)!system(cmd);
		live.dir[0] = '\0';
	}
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* --- the console, and its microphone's FIFO */

struct console {
	pid_t pid;
	int in, out; /* its --control stdin and stdout */
	char log[160];
	struct times onsets, flashes;
	uint32_t frames;
};

static bool console_start(struct console *c, uint16_t port, bool dtls, const char *home)
{
	memset(c, 0, sizeof(*c));
	c->pid = -1;
	c->in = c->out = -1;
	int to[2], from[2];
	if (pipe2(to, O_CLOEXEC) != 0) {
		return false;
	}
	if (pipe2(from, O_CLOEXEC) != 0) {
		close(to[0]);
		close(to[1]);
		return false;
	}
	char server[64], state[160];
	snprintf(server, sizeof(server), "127.0.0.1:%u", port);
	snprintf(state, sizeof(state), "%s/console-state", home);
	snprintf(c->log, sizeof(c->log), "%s/console-%s.log", home, dtls ? "dtls" : "clear");
	c->pid = fork();
	if (c->pid == 0) {
		dup2(to[0], STDIN_FILENO);
		dup2(from[1], STDOUT_FILENO);
		int log = open(c->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (log >= 0) {
			dup2(log, STDERR_FILENO);
		}
		/* ALSA reads ~/.asoundrc: the device slimbench is there */
		setenv("HOME", home, 1);
		char size[32];
		snprintf(size, sizeof(size), "%dx%d", WIDTH, HEIGHT);
		execl(SLIMLAND_CONSOLE_BIN, SLIMLAND_CONSOLE_BIN, "--server", server, "--transport",
			dtls ? "dtls" : "clear", "--output", "headless", "--size", size, "--state-dir",
			state, "--audio", "alsa:slimbench", "--card-reader=none", "--control",
			verbose ? "-v" : (char *)NULL, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	c->in = to[1];
	c->out = from[0];
	live.console = c->pid;
	return c->pid > 0;
}

static void console_say(struct console *c, const char *line)
{
	if (c->in >= 0) {
		(void)!write(c->in, line, strlen(line));
	}
}

static bool is_white(unsigned px)
{
	/* near enough: the video went through YUV */
	return (px >> 16 & 0xff) > 0xc0 && (px >> 8 & 0xff) > 0xc0 && (px & 0xff) > 0xc0;
}

/*
 * Reads the console's events for up to `ms`, keeping onsets, flashes and
 * frames; with `want`, returns as soon as a line starting with it came
 * (copied to `got`). False: `want` did not come, or the console is gone.
 */
static bool console_pump(struct console *c, int ms, const char *want, char *got, size_t size)
{
	char line[512];
	uint64_t end = now_us() + (uint64_t)ms * 1000;
	for (;;) {
		int64_t left = ((int64_t)end - (int64_t)now_us()) / 1000;
		if (left <= 0) {
			return want == NULL;
		}
		struct pollfd p = { .fd = c->out, .events = POLLIN };
		int r = poll(&p, 1, (int)left);
		if (r <= 0) {
			continue;
		}
		if (!bench_read_line(c->out, line, sizeof(line), 1000)) {
			return false; /* the end of its output: it exited */
		}
		unsigned long long us;
		unsigned x, y, px, frame;
		if (sscanf(line, "audio onset %llu", &us) == 1) {
			times_add(&c->onsets, us);
		} else if (sscanf(line, "pixel %u %u %x %llu", &x, &y, &px, &us) == 4) {
			if (is_white(px)) {
				times_add(&c->flashes, us);
			}
		} else if (sscanf(line, "frame %u", &frame) == 1) {
			c->frames++;
		} else if (verbose) {
			fprintf(stderr, "console: %s\n", line);
		}
		if (want && strncmp(line, want, strlen(want)) == 0) {
			if (got) {
				snprintf(got, size, "%s", line);
			}
			return true;
		}
	}
}

static void console_stop(struct console *c)
{
	if (c->pid > 0) {
		/* "quit", and the end of its stdin, which would quit it too */
		console_say(c, "quit\n");
		close(c->in);
		c->in = -1;
		kill_wait(&live.console, 0);
		c->pid = -1;
	}
	if (c->in >= 0) {
		close(c->in);
	}
	if (c->out >= 0) {
		close(c->out);
	}
	c->in = c->out = -1;
}

static void console_tail(const struct console *c)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "tail -n 15 '%s' >&2", c->log);
	fprintf(stderr, "--- the console's log\n");
	(void)!system(cmd);
}

struct mic {
	int fd;
	pthread_t thread;
	bool started;
	atomic_bool stop;
	_Atomic int clicks_left;
	struct times clicks;
	atomic_uint blocks_written, blocks_dropped;
};

/*
 * The microphone's pace: a 10 ms block every 10 ms, on the clock's grid.
 * A block is dropped while two wait unread (the console not reading yet,
 * or late), as a device's overrun drops them: what the console reads is
 * never older than that.
 */
static void *mic_main(void *data)
{
	struct mic *m = data;
	int16_t block[MIC_BLOCK];
	int16_t click[CLICK_FRAMES];
	for (int i = 0; i < CLICK_FRAMES; i++) {
		click[i] = (int16_t)(CLICK_LEVEL * sin(2 * M_PI * 1000 * i / RATE));
	}
	uint64_t next = now_us(), next_click = 0;
	while (!atomic_load(&m->stop)) {
		int queued = 0;
		if (ioctl(m->fd, FIONREAD, &queued) == 0 && queued >= 2 * (int)sizeof(block)) {
			atomic_fetch_add(&m->blocks_dropped, 1);
		} else {
			memset(block, 0, sizeof(block));
			bool clicking = atomic_load(&m->clicks_left) > 0;
			if (clicking && next_click == 0) {
				next_click = now_us() + CLICK_GAP_US / 2;
			}
			bool now_click = clicking && now_us() >= next_click;
			if (now_click) {
				memcpy(block, click, sizeof(click));
			}
			if (write(m->fd, block, sizeof(block)) != (ssize_t)sizeof(block)) {
				break;
			}
			atomic_fetch_add(&m->blocks_written, 1);
			if (now_click) {
				/* readable from now on */
				times_add(&m->clicks, now_us());
				next_click += CLICK_GAP_US;
				atomic_fetch_sub(&m->clicks_left, 1);
			} else if (!clicking) {
				next_click = 0;
			}
		}
		next += MIC_BLOCK * 1000000 / RATE;
		struct timespec ts = { .tv_sec = (time_t)(next / 1000000),
			.tv_nsec = (long)(next % 1000000) * 1000 };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	return NULL;
}

static bool mic_start(struct mic *m, const char *path)
{
	memset(m, 0, sizeof(*m));
	unlink(path);
	/* read-write: opening waits for no reader, and the console's open waits for no writer */
	if (mkfifo(path, 0600) != 0 || (m->fd = open(path, O_RDWR | O_CLOEXEC)) < 0) {
		m->fd = -1;
		return false;
	}
	m->started = pthread_create(&m->thread, NULL, mic_main, m) == 0;
	return m->started;
}

static void mic_stop(struct mic *m)
{
	if (m->started) {
		atomic_store(&m->stop, true);
		pthread_join(m->thread, NULL);
		m->started = false;
	}
	if (m->fd >= 0) {
		close(m->fd);
		m->fd = -1;
	}
}

/* --- figures */

struct lat {
	bool ran;
	size_t n, of;          /* paired, of mouths */
	double p50_us, p99_us;
	/* the p50 of each console's share: see ROUNDS */
	double round_min_us, round_max_us;
};

/* Mouth-to-ear delays gathered over the consoles of a session. */
struct delays {
	uint64_t d[MAX_EVENTS];
	size_t n, of;
	struct lat lat;
};

static double pick(const uint64_t *sorted, size_t n, double p)
{
	return n ? (double)sorted[(size_t)(p * (double)(n - 1) + 0.5)] : 0;
}

/*
 * Each mouth from m0 on with the first ear time after it (from e0 on),
 * within PAIR_WINDOW_US; this round's p50 widens the rounds' range.
 */
static void pair(struct delays *dl, struct times *mouth, size_t m0, struct times *ear,
		size_t e0)
{
	static uint64_t round[MAX_EVENTS];
	size_t n_mouth = times_count(mouth), n_ear = times_count(ear), n = 0, j = e0;
	for (size_t i = m0; i < n_mouth; i++) {
		while (j < n_ear && ear->t[j] < mouth->t[i]) {
			j++;
		}
		if (j < n_ear && ear->t[j] - mouth->t[i] < PAIR_WINDOW_US) {
			round[n++] = ear->t[j] - mouth->t[i];
			j++;
		}
	}
	for (size_t i = 0; i < n && dl->n < MAX_EVENTS; i++) {
		dl->d[dl->n++] = round[i];
	}
	dl->of += n_mouth - m0;
	qsort(round, n, sizeof(round[0]), bench_cmp_u64);
	struct lat *l = &dl->lat;
	if (n > 0) {
		double p50 = pick(round, n, 0.5);
		bool first = l->round_max_us == 0;
		l->round_min_us = first || p50 < l->round_min_us ? p50 : l->round_min_us;
		l->round_max_us = first || p50 > l->round_max_us ? p50 : l->round_max_us;
	}
}

static struct lat delays_lat(struct delays *dl)
{
	struct lat l = dl->lat;
	qsort(dl->d, dl->n, sizeof(dl->d[0]), bench_cmp_u64);
	l.ran = true;
	l.n = dl->n;
	l.of = dl->of;
	l.p50_us = pick(dl->d, dl->n, 0.5);
	l.p99_us = pick(dl->d, dl->n, 0.99);
	return l;
}

struct cpu {
	bool ran;
	double compositor, console; /* % of a core */
};

/* Both processes' CPU over `ms`, the console's events read meanwhile. */
static struct cpu cpu_over(pid_t compositor, struct console *c, int ms)
{
	uint64_t a0 = bench_process_cpu_us(compositor), b0 = bench_process_cpu_us(c->pid), t0 = now_us();
	console_pump(c, ms, NULL, NULL, 0);
	double us = (double)(now_us() - t0);
	return (struct cpu){
		.ran = true,
		.compositor = (double)(bench_process_cpu_us(compositor) - a0) / us * 100,
		.console = (double)(bench_process_cpu_us(c->pid) - b0) / us * 100,
	};
}

struct rate {
	bool ran, audio_only;  /* audio_only: the AUDIO datagrams, told from the rest */
	double kbit, wire_kbit, up_kbit;
	double coded_kbit;     /* audio_only: the codec's own, each packet once */
};

static struct rate rate_between(const struct counts *a, const struct counts *b, bool clear)
{
	double s = (double)(b->us - a->us) / 1e6;
	uint64_t bytes = clear ? b->audio_bytes - a->audio_bytes : b->down_bytes - a->down_bytes;
	uint64_t dgrams = clear ? b->audio_dgrams - a->audio_dgrams :
		b->down_dgrams - a->down_dgrams;
	uint64_t up = (b->up_bytes - a->up_bytes) + (b->up_dgrams - a->up_dgrams) * UDP_IP_HEADERS;
	return (struct rate){
		.ran = true,
		.audio_only = clear,
		.kbit = (double)bytes * 8 / s / 1000,
		.wire_kbit = (double)(bytes + dgrams * UDP_IP_HEADERS) * 8 / s / 1000,
		.up_kbit = (double)up * 8 / s / 1000,
		.coded_kbit = (double)(b->coded_bytes - a->coded_bytes) * 8 / s / 1000,
	};
}

struct av {
	bool ran;
	size_t n, of;
	double p50_ms, min_ms, max_ms;
	char why[160];
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Each flash with the onset nearest it, within PAIR_WINDOW_US either way. */
static void av_pair(struct av *av, struct console *c, size_t f0, size_t o0)
{
	static int64_t d[MAX_EVENTS];
	size_t n_flash = times_count(&c->flashes), n_onset = times_count(&c->onsets), n = 0;
	for (size_t i = f0; i < n_flash; i++) {
		int64_t best = INT64_MAX;
		for (size_t j = o0; j < n_onset; j++) {
			int64_t x = (int64_t)c->onsets.t[j] - (int64_t)c->flashes.t[i];
			if (llabs(x) < llabs(best)) {
				best = x;
			}
		}
		if (llabs(best) < PAIR_WINDOW_US) {
			d[n++] = best;
		}
	}
	qsort(d, n, sizeof(d[0]), cmp_i64);
	av->ran = true;
	av->n = n;
	av->of = n_flash - f0;
	if (n > 0) {
		av->p50_ms = (double)d[(n - 1) / 2] / 1000;
		av->min_ms = (double)d[0] / 1000;
		av->max_ms = (double)d[n - 1] / 1000;
	}
}

/* --- one session */

enum part {
	PART_MIC = 1,  /* clicks into the microphone too */
	PART_AV = 2,   /* mpv's flashes and beeps */
};

struct run {
	const char *name;       /* "opus 64", "pcm", "opus 64 dtls" */
	const char *audio;      /* --audio */
	bool dtls;
	unsigned parts;
	bool ran;
	struct lat play, mic;
	struct rate clicks_rate, tone_rate;
	struct cpu tone, idle;
	struct av av;
	unsigned mic_written, mic_dropped;
	/* a client's streams running, ms after it started: the first (its connection starts
	 * the session's PipeWire), and the same client again on the PipeWire running */
	double first_stream_ms, again_stream_ms;
};

struct plan {
	size_t clicks, rounds, flashes;
	int cpu_ms;
	const char *home, *clip;
};

/* Runs mpv on the clip; the console's flashes and onsets meanwhile. */
static void measure_av(struct run *r, struct bench_session *s, struct console *c,
		const struct plan *plan)
{
	char line[256];
	console_say(c, "watch 320 240\n");
	/* "watch" answers nothing: the answer to the "sync" after it says it was read */
	console_say(c, "sync\n");
	if (!console_pump(c, 2000, "sync ", line, sizeof(line))) {
		snprintf(r->av.why, sizeof(r->av.why), "the console did not answer");
		return;
	}
	size_t f0 = times_count(&c->flashes), o0 = times_count(&c->onsets);
	char *argv[] = { "mpv", "--no-config", "--really-quiet", "--vo=wlshm", "--ao=pipewire",
		"--fs", "--hwdec=no", "--osd-level=0", "--no-osc", "--no-input-default-bindings",
		"--keep-open=no", (char *)plan->clip, NULL };
	live.mpv = bench_session_client(s, argv, NULL);
	if (live.mpv < 0) {
		snprintf(r->av.why, sizeof(r->av.why), "mpv did not start");
		return;
	}
	/* until mpv has played the clip and gone (bounded: a clip that never ends is cut) */
	uint64_t end = now_us() + ((uint64_t)plan->flashes + 8) * 1000000;
	int status = 0;
	while (now_us() < end && waitpid(live.mpv, &status, WNOHANG) == 0) {
		console_pump(c, 100, NULL, NULL, 0);
	}
	if (waitpid(live.mpv, &status, WNOHANG) == 0) {
		kill_wait(&live.mpv, SIGTERM);
	} else {
		live.mpv = -1;
	}
	console_pump(c, 300, NULL, NULL, 0);
	av_pair(&r->av, c, f0, o0);
	if (r->av.of == 0) {
		snprintf(r->av.why, sizeof(r->av.why), "no white flash at the screen's centre (mpv "
			"exit status %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
}

/* Starts a console through the relay and waits for its first picture. */
static bool attach_console(struct console *c, const struct relay *relay, bool dtls,
		const char *home)
{
	char line[512];
	if (!console_start(c, relay->port, dtls, home) ||
			!console_pump(c, 15000, "attached", line, sizeof(line)) ||
			!console_pump(c, 10000, "frame ", line, sizeof(line))) {
		fprintf(stderr, "bench-audio: the console did not attach\n");
		console_tail(c);
		return false;
	}
	/* the first picture's repaints, then quiet */
	console_pump(c, 300, NULL, NULL, 0);
	return true;
}

/* Adds what the relay counted between a and b to `sum`. */
static void counts_add(struct counts *sum, const struct counts *a, const struct counts *b)
{
	sum->down_bytes += b->down_bytes - a->down_bytes;
	sum->down_dgrams += b->down_dgrams - a->down_dgrams;
	sum->audio_bytes += b->audio_bytes - a->audio_bytes;
	sum->audio_dgrams += b->audio_dgrams - a->audio_dgrams;
	sum->up_bytes += b->up_bytes - a->up_bytes;
	sum->up_dgrams += b->up_dgrams - a->up_dgrams;
	sum->coded_bytes += b->coded_bytes - a->coded_bytes;
	sum->us += b->us - a->us;
}

/*
 * A compositor with `r->audio`, the relay, a console; then in turn: CPU
 * idle, a tone (CPU, bit rate), clicks out (and in) over plan->rounds
 * consoles, mpv. False if the session could not be had at all.
 *
 * Why several consoles: the console plays and records on 10 ms periods of
 * its own clock, begun when it starts, and the session's graph runs on
 * another; how the two interleave adds 0 to 10 ms each way, fixed for a
 * console's life. One console is one draw of that: its clicks agree to
 * the microsecond and the next console's may all be 8 ms later. The
 * figures are over several draws, and the p50 of each is shown.
 */
/*
 * Starts this benchmark's PipeWire client and waits until its streams are
 * linked and running (their process calls say so): milliseconds from its
 * start, or -1 (said) if they never ran.
 */
static double start_streams(struct pw_side *pw, struct console *c, bool ear)
{
	uint64_t start = now_us();
	if (!pw_side_start(pw, ear)) {
		fprintf(stderr, "bench-audio: cannot play into the session's PipeWire\n");
		return -1;
	}
	uint64_t deadline = start + 10000000, ran = 0;
	while (now_us() < deadline) {
		if (atomic_load(&pw->out_calls) > 0 && (!pw->in || atomic_load(&pw->in_calls) > 0)) {
			ran = now_us();
			break;
		}
		console_pump(c, 2, NULL, NULL, 0);
	}
	if (!ran) {
		fprintf(stderr, "bench-audio: the session's PipeWire never ran the streams\n");
		return -1;
	}
	return (double)(ran - start) / 1000;
}

static bool run_session(struct run *r, const struct plan *plan)
{
	const char *args[] = { "--audio", r->audio, NULL };
	static struct bench_session s;
	static struct delays play, mic_delays;
	struct relay relay = { .front = -1, .back = -1, .wake = -1 };
	struct mic mic = { .fd = -1 };
	struct console c = { .pid = -1, .in = -1, .out = -1 };
	struct pw_side pw = { 0 };
	char fifo[160], rc_path[160];
	bool ok = false;

	memset(&play, 0, sizeof(play));
	memset(&mic_delays, 0, sizeof(mic_delays));
	snprintf(fifo, sizeof(fifo), "%s/mic.fifo", plan->home);
	bench_session_compositor_args(args);
	live.session = &s;
	if (!bench_session_start_detached(&s, SLIMLAND_BIN, WIDTH, HEIGHT,
			r->dtls ? BENCH_LINK_PAIRING : BENCH_LINK_CLEAR)) {
		fprintf(stderr, "bench-audio: slimland --audio %s did not start\n", r->audio);
		goto out;
	}
	snprintf(rc_path, sizeof(rc_path), "%s/.asoundrc", plan->home);
	FILE *f = fopen(rc_path, "we");
	if (!f) {
		goto out;
	}
	fprintf(f, asoundrc, fifo);
	if (fclose(f) != 0 || !mic_start(&mic, fifo)) {
		fprintf(stderr, "bench-audio: cannot make the microphone's FIFO\n");
		goto out;
	}
	if (!relay_start(&relay, s.port, !r->dtls)) {
		fprintf(stderr, "bench-audio: cannot start the relay\n");
		goto out;
	}
	if (!attach_console(&c, &relay, r->dtls, plan->home)) {
		goto out;
	}
	/* nothing plays: the sink idles, the console's microphone streams as it always does */
	r->idle = cpu_over(s.compositor, &c, plan->cpu_ms);
	/* the session's first client: its connection starts the session's PipeWire */
	r->first_stream_ms = start_streams(&pw, &c, r->parts & PART_MIC);
	if (r->first_stream_ms < 0) {
		goto out;
	}
	/* a tone: what a stream costs (the same two processes as idle), and its bit rate */
	atomic_store(&pw.mode, PLAY_TONE);
	console_pump(&c, 300, NULL, NULL, 0);
	struct counts a = relay_counts(&relay);
	r->tone = cpu_over(s.compositor, &c, plan->cpu_ms);
	struct counts b = relay_counts(&relay);
	r->tone_rate = rate_between(&a, &b, !r->dtls);
	atomic_store(&pw.mode, PLAY_SILENCE);
	console_pump(&c, 300, NULL, NULL, 0);

	/* clicks out, and in, in the same stretch, a share for each console */
	struct counts sum = { 0 };
	for (size_t round = 0; round < plan->rounds; round++) {
		size_t clicks = plan->clicks / plan->rounds +
			(round < plan->clicks % plan->rounds ? 1 : 0);
		if (round > 0) {
			/* the same console started again: the same id, a new association */
			console_stop(&c);
			if (!attach_console(&c, &relay, r->dtls, plan->home)) {
				goto out;
			}
		}
		size_t m0 = times_count(&pw.clicks), e0 = times_count(&c.onsets);
		size_t k0 = times_count(&mic.clicks), h0 = pw.in ? times_count(&pw.heard) : 0;
		a = relay_counts(&relay);
		atomic_store(&pw.clicks_left, (int)clicks);
		atomic_store(&pw.mode, PLAY_CLICKS);
		if (r->parts & PART_MIC) {
			atomic_store(&mic.clicks_left, (int)clicks);
		}
		uint64_t deadline = now_us() + (uint64_t)(clicks + 4) * CLICK_GAP_US;
		while (now_us() < deadline && (atomic_load(&pw.clicks_left) > 0 ||
				atomic_load(&mic.clicks_left) > 0)) {
			console_pump(&c, 50, NULL, NULL, 0);
		}
		/* the last ones' way through */
		console_pump(&c, PAIR_WINDOW_US / 1000, NULL, NULL, 0);
		b = relay_counts(&relay);
		atomic_store(&pw.mode, PLAY_SILENCE);
		counts_add(&sum, &a, &b);
		pair(&play, &pw.clicks, m0, &c.onsets, e0);
		if (r->parts & PART_MIC) {
			pair(&mic_delays, &mic.clicks, k0, &pw.heard, h0);
		}
	}
	r->play = delays_lat(&play);
	struct counts zero = { 0 };
	r->clicks_rate = rate_between(&zero, &sum, !r->dtls);
	if (r->parts & PART_MIC) {
		r->mic = delays_lat(&mic_delays);
		r->mic_written = atomic_load(&mic.blocks_written);
		r->mic_dropped = atomic_load(&mic.blocks_dropped);
	}

	if (r->parts & PART_AV) {
		console_pump(&c, 300, NULL, NULL, 0);
		measure_av(r, &s, &c, plan);
	}
	/* the same client again, on the PipeWire that runs now: the baseline */
	pw_side_stop(&pw);
	r->again_stream_ms = start_streams(&pw, &c, r->parts & PART_MIC);
	r->ran = true;
	ok = true;
out:
	pw_side_stop(&pw);
	/* the console first: its microphone's thread may wait on the FIFO, still fed */
	console_stop(&c);
	mic_stop(&mic);
	relay_stop(&relay);
	if (live.session) {
		bench_session_stop(&s);
		live.session = NULL;
	}
	bench_session_compositor_args(NULL);
	unlink(fifo);
	return ok;
}

/* --- output */

static bool have_program(const char *name)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "command -v '%s' >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

/* The A/V clip: black, and from 0.5 s on a white frame and a 50 ms 1 kHz beep once a second. */
static bool make_clip(const char *path, size_t flashes, const char *home)
{
	char video[256], audio[256], secs[32], log[200];
	double d = (double)flashes + 0.2;
	snprintf(secs, sizeof(secs), "%.1f", d);
	snprintf(video, sizeof(video), "color=c=black:s=320x240:r=30:d=%s,"
		"drawbox=c=white:t=fill:enable='eq(mod(n,30),15)'", secs);
	snprintf(audio, sizeof(audio), "aevalsrc='0.5*sin(2*PI*1000*t)*gte(mod(t,1),0.5)*"
		"lt(mod(t,1),0.55)':s=48000:d=%s", secs);
	snprintf(log, sizeof(log), "%s/ffmpeg.log", home);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execlp("ffmpeg", "ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
			video, "-f", "lavfi", "-i", audio, "-c:v", "mpeg4", "-q:v", "2", "-c:a",
			"pcm_s16le", path, (char *)NULL);
		_exit(127);
	}
	int status;
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		WEXITSTATUS(status) == 0;
}

static void json_num(const char *key, bool have, double v, int decimals)
{
	if (have) {
		printf(", \"%s\": %.*f", key, decimals, v);
	} else {
		printf(", \"%s\": null", key);
	}
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static const char *verdict(bool have, bool ok)
{
	return !have ? "no data" : ok ? "ok" : "MISSED";
}

static void print_json(const struct run *runs, size_t count, const struct plan *plan)
{
	const struct run *o = &runs[0], *p = &runs[1];
	const struct run *d = count > 2 ? &runs[2] : NULL;
	printf("{\"clicks\": %zu, \"consoles\": %zu", plan->clicks, plan->rounds);
	json_num("playback_p50_us", o->play.n, o->play.p50_us, 0);
	json_num("playback_p99_us", o->play.n, o->play.p99_us, 0);
	printf(", \"playback_clicks_heard\": %zu", o->play.n);
	json_num("playback_console_p50_min_us", o->play.n, o->play.round_min_us, 0);
	json_num("playback_console_p50_max_us", o->play.n, o->play.round_max_us, 0);
	json_num("playback_pcm_p50_us", p->play.n, p->play.p50_us, 0);
	json_num("playback_pcm_p99_us", p->play.n, p->play.p99_us, 0);
	json_num("playback_opus_over_pcm_p50_ratio", o->play.n && p->play.n,
		ratio(o->play.p50_us, p->play.p50_us), 3);
	if (d) {
		json_num("playback_dtls_p50_us", d->play.n, d->play.p50_us, 0);
		json_num("playback_dtls_p99_us", d->play.n, d->play.p99_us, 0);
		json_num("playback_dtls_over_clear_p50_ratio", d->play.n && o->play.n,
			ratio(d->play.p50_us, o->play.p50_us), 3);
		json_num("bitrate_dtls_kbit_per_s", d->clicks_rate.ran, d->clicks_rate.kbit, 1);
	}
	json_num("first_client_stream_ms", o->ran, o->first_stream_ms, 1);
	json_num("running_client_stream_ms", o->ran && o->again_stream_ms >= 0,
		o->again_stream_ms, 1);
	json_num("first_over_running_client_ratio", o->ran && o->again_stream_ms > 0,
		ratio(o->first_stream_ms, o->again_stream_ms), 2);
	json_num("mic_p50_us", o->mic.n, o->mic.p50_us, 0);
	json_num("mic_p99_us", o->mic.n, o->mic.p99_us, 0);
	printf(", \"mic_clicks_heard\": %zu", o->mic.n);
	json_num("bitrate_kbit_per_s", o->clicks_rate.ran, o->clicks_rate.kbit, 1);
	json_num("bitrate_coded_kbit_per_s", o->clicks_rate.ran, o->clicks_rate.coded_kbit, 1);
	json_num("bitrate_wire_kbit_per_s", o->clicks_rate.ran, o->clicks_rate.wire_kbit, 1);
	json_num("bitrate_tone_kbit_per_s", o->tone_rate.ran, o->tone_rate.kbit, 1);
	json_num("bitrate_pcm_kbit_per_s", p->clicks_rate.ran, p->clicks_rate.kbit, 1);
	json_num("mic_bitrate_wire_kbit_per_s", o->clicks_rate.ran, o->clicks_rate.up_kbit, 1);
	json_num("av_offset_p50_ms", o->av.n, o->av.p50_ms, 1);
	json_num("av_offset_min_ms", o->av.n, o->av.min_ms, 1);
	json_num("av_offset_max_ms", o->av.n, o->av.max_ms, 1);
	printf(", \"av_flashes_matched\": %zu, \"av_flashes_seen\": %zu", o->av.n, o->av.of);
	json_num("compositor_cpu_percent", o->tone.ran, o->tone.compositor, 2);
	json_num("console_cpu_percent", o->tone.ran, o->tone.console, 2);
	json_num("compositor_idle_cpu_percent", o->idle.ran, o->idle.compositor, 2);
	json_num("console_idle_cpu_percent", o->idle.ran, o->idle.console, 2);
	json_num("compositor_stream_cpu_percent", o->tone.ran && o->idle.ran,
		o->tone.compositor - o->idle.compositor, 2);
	json_num("console_stream_cpu_percent", o->tone.ran && o->idle.ran,
		o->tone.console - o->idle.console, 2);
	json_num("compositor_pcm_cpu_percent", p->tone.ran, p->tone.compositor, 2);
	json_num("console_pcm_cpu_percent", p->tone.ran, p->tone.console, 2);
	json_num("compositor_pcm_stream_cpu_percent", p->tone.ran && p->idle.ran,
		p->tone.compositor - p->idle.compositor, 2);
	json_num("console_pcm_stream_cpu_percent", p->tone.ran && p->idle.ran,
		p->tone.console - p->idle.console, 2);
	json_num("compositor_opus_over_pcm_stream_cpu_ratio", o->tone.ran && p->tone.ran,
		ratio(o->tone.compositor - o->idle.compositor,
		p->tone.compositor - p->idle.compositor), 2);
	printf(", \"target_playback_p50_ms\": %.0f, \"target_av_offset_ms\": %.0f, "
		"\"target_stream_cpu_percent\": %.0f}\n", TARGET_PLAYBACK_MS, TARGET_AV_MS,
		TARGET_CPU_PERCENT);
}

static void print_lat_row(const char *name, const struct lat *l)
{
	if (!l->ran) {
		return;
	}
	if (l->n == 0) {
		printf("%-26s %10s %10s %4zu/%-4zu\n", name, "-", "-", l->n, l->of);
		return;
	}
	printf("%-26s %7.1f ms %7.1f ms %4zu/%-4zu %6.1f..%.1f ms\n", name, l->p50_us / 1000,
		l->p99_us / 1000, l->n, l->of, l->round_min_us / 1000, l->round_max_us / 1000);
}

static void print_table(const struct run *runs, size_t count, const struct plan *plan)
{
	const struct run *o = &runs[0], *p = &runs[1];
	printf("Sound through a session and its console on loopback: slimland's PipeWire, "
		"the console on ALSA's file/null device\n\n");
	printf("%-26s %10s %10s %9s  %s\n", "", "p50", "p99", "heard", "p50 of each console");
	for (size_t i = 0; i < count; i++) {
		char name[64];
		snprintf(name, sizeof(name), "playback, %s%s", runs[i].name,
			runs[i].dtls ? "" : " clear");
		print_lat_row(name, &runs[i].play);
	}
	print_lat_row("microphone, opus 32 clear", &o->mic);
	if (o->mic.ran && o->mic.n == 0) {
		printf("  skipped: no click reached the session (%u blocks went into the FIFO, %u "
			"were dropped with two unread: see the console's log)\n", o->mic_written,
			o->mic_dropped);
	}
	if (o->av.n > 0) {
		printf("%-26s %7.1f ms   range %+.1f..%+.1f ms, %zu/%zu flashes (+: sound late)\n",
			"A/V offset, mpv", o->av.p50_ms, o->av.min_ms, o->av.max_ms, o->av.n, o->av.of);
	} else {
		printf("%-26s %s\n", "A/V offset, mpv", o->av.why[0] ? o->av.why :
			"no flash met its beep");
	}
	if (o->ran) {
		printf("%-26s %7.1f ms   the client's streams running after its start; %.1f ms on "
			"the PipeWire\n%-26s              running (%.2fx): the first client starts the "
			"session's PipeWire\n", "first sound, opus 64", o->first_stream_ms,
			o->again_stream_ms, "", ratio(o->first_stream_ms, o->again_stream_ms));
	}
	printf("\nmouth: playback, the click's buffer queued + its offset; microphone, the 10 ms "
		"block holding it\nwritten to the FIFO. ear: the console's onset (to ALSA + its "
		"delay); the session's capture call.\n%zu consoles in turn a session, each one draw "
		"of how its 10 ms periods meet the session's.\n", plan->rounds);

	printf("\nBit rate downstream, kbit/s: coded (each packet once), the datagrams' payload "
		"(a packet\nand copies of the two before it), and with IPv4+UDP headers; while the "
		"clicks play, and a tone\n");
	printf("  %-14s %9s %9s %9s %9s\n", "", "coded", "payload", "wire", "tone");
	for (size_t i = 0; i < count; i++) {
		const struct run *r = &runs[i];
		char coded[16] = "-";
		if (r->clicks_rate.audio_only) {
			snprintf(coded, sizeof(coded), "%.1f", r->clicks_rate.coded_kbit);
		}
		printf("  %-14s %9s %9.1f %9.1f %9.1f%s\n", r->name, coded, r->clicks_rate.kbit,
			r->clicks_rate.wire_kbit, r->tone_rate.kbit,
			r->clicks_rate.audio_only ? "" : "  (all records: DTLS hides which are sound)");
	}
	printf("  microphone upstream, wire: %.1f (MIC, Opus 32 kbit/s mono, and "
		"acknowledgements)\n", o->clicks_rate.up_kbit);

	printf("\nCPU, %% of a core, over %d ms: nothing playing, a tone, and the difference "
		"(the stream)\n", plan->cpu_ms);
	printf("  %-14s %11s %11s %11s %11s %11s %11s\n", "", "idle srv", "idle con", "tone srv",
		"tone con", "stream srv", "stream con");
	for (size_t i = 0; i < count; i++) {
		const struct run *r = &runs[i];
		printf("  %-14s %10.2f%% %10.2f%% %10.2f%% %10.2f%% %10.2f%% %10.2f%%\n", r->name,
			r->idle.compositor, r->idle.console, r->tone.compositor, r->tone.console,
			r->tone.compositor - r->idle.compositor, r->tone.console - r->idle.console);
	}

	double srv = o->tone.compositor - o->idle.compositor;
	double con = o->tone.console - o->idle.console;
	double pcm_srv = p->tone.compositor - p->idle.compositor;
	printf("\nOpus / PCM, same machine and run: playback p50 %.2f, compositor's stream CPU "
		"%.2f\n", ratio(o->play.p50_us, p->play.p50_us),
		ratio(srv, pcm_srv));
	if (count > 2 && runs[2].play.n && o->play.n) {
		printf("DTLS / clear, playback p50: %.2f\n",
			ratio(runs[2].play.p50_us, o->play.p50_us));
	}
	printf("\ntargets: playback p50 <= %.0f ms: %s; A/V offset within +-%.0f ms: %s; "
		"a stream <= %.0f%% of a core each side: %s\n", TARGET_PLAYBACK_MS,
		verdict(o->play.n > 0, o->play.p50_us <= TARGET_PLAYBACK_MS * 1000), TARGET_AV_MS,
		verdict(o->av.n > 0, fabs(o->av.p50_ms) <= TARGET_AV_MS), TARGET_CPU_PERCENT,
		verdict(o->tone.ran && o->idle.ran, srv <= TARGET_CPU_PERCENT &&
		con <= TARGET_CPU_PERCENT));
}

int main(int argc, char *argv[])
{
	bool json = false, quick = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--quick") == 0) {
			quick = true;
		} else if (strcmp(argv[i], "-v") == 0) {
			verbose = true;
		} else {
			fprintf(stderr, "usage: %s [--json] [--quick] [-v]\n", argv[0]);
			return 2;
		}
	}
	static const char *const needed[] = {
		"pipewire", "wireplumber", "dbus-daemon", "mpv", "ffmpeg",
	};
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		if (!have_program(needed[i])) {
			fprintf(stderr, "bench-audio: %s is missing: skipped\n", needed[i]);
			return 77;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal); /* meson's timeout */
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	atexit(cleanup);

	snprintf(live.dir, sizeof(live.dir), "/tmp/slim-bench-audio-XXXXXX");
	if (!mkdtemp(live.dir)) {
		live.dir[0] = '\0';
		fprintf(stderr, "bench-audio: cannot make a temporary directory\n");
		return 1;
	}
	char clip[128];
	snprintf(clip, sizeof(clip), "%s/flash.mkv", live.dir);
	struct plan plan = {
		.clicks = quick ? 30 : 200,
		.rounds = quick ? 3 : 5,
		.flashes = quick ? 5 : 20,
		.cpu_ms = quick ? 2000 : 10000,
		.home = live.dir,
		.clip = clip,
	};
	if (!make_clip(clip, plan.flashes, live.dir)) {
		fprintf(stderr, "bench-audio: ffmpeg could not make the clip (%s/ffmpeg.log)\n",
			live.dir);
		return 1;
	}
	pw_init(NULL, NULL);
	struct run runs[] = {
		{ .name = "opus 64", .audio = "opus:64",
			.parts = PART_MIC | PART_AV },
		{ .name = "pcm", .audio = "pcm" },
		{ .name = "opus 64 dtls", .audio = "opus:64", .dtls = true },
	};
	/* DTLS adds microseconds to 10 ms packets: only the full run pays the session for it */
	size_t count = quick ? 2 : 3;
	bool ok = true;
	for (size_t i = 0; i < count && ok; i++) {
		ok = run_session(&runs[i], &plan);
	}
	pw_deinit();
	if (ok) {
		if (json) {
			print_json(runs, count, &plan);
		} else {
			print_table(runs, count, &plan);
		}
	}
	cleanup();
	return ok ? 0 : 1;
}
