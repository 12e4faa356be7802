/*
 * slimland: one user's Wayland session, streamed to a console.
 *
 *   slimland [--listen ADDRESS:PORT] [--managed [--manager-uid UID]] [--pairing-key FILE]
 *            [--transport dtls|clear] [--size WxH] [--video-budget MBIT]
 *            [--audio opus[:KBIT]|pcm] [--audio-sleep SECONDS] [--no-audio]
 *            [-s COMMAND] [-v]
 */
#define _GNU_SOURCE /* explicit_bzero */
#include <ctype.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wlr/util/log.h>
#include "server.h"
#include "sound.h"
#include "session-bus.h"
#include "shell.h"
#include "slim-codec.h"
#include "slim-log.h"
#include "slim-sched.h"

#define DEFAULT_LISTEN "127.0.0.1:5555"
/* Mbit/s for moving pictures: a fifth of a 1 Gbit/s LAN for one console */
#define DEFAULT_VIDEO_BUDGET 200
/* Seconds the session's PipeWire runs on with no client (sound.c). */
#define DEFAULT_AUDIO_SLEEP 120

static void usage(FILE *f, const char *prog)
{
	fprintf(f, "usage: %s [--listen ADDRESS:PORT] [--managed [--manager-uid UID]]\n"
		"          [--pairing-key FILE]\n"
		"          [--transport dtls|clear] [--size WxH] [--video-budget MBIT]\n"
		"          [--video-codec auto|software|vaapi|none]\n"
		"          [--audio opus[:KBIT]|pcm] [--audio-sleep SECONDS] [--no-audio]\n"
		"          [-s COMMAND] [-v]\n"
		"  --listen      where consoles reach this session (default %s; port 0: any)\n"
		"  --managed     only consoles the session manager sends are shown; it connects\n"
		"                to $XDG_RUNTIME_DIR/slimland-control\n"
		"  --manager-uid the only uid whose processes may connect there (default:\n"
		"                this compositor's own; slimland-sessiond says 0)\n"
		"  --pairing-key the key a console must hold to be shown this session (made\n"
		"                there, 0600, if missing; default\n"
		"                $XDG_RUNTIME_DIR/slimland-pairing.key); not with --managed\n"
		"  --transport   dtls (default), or clear: unencrypted, loopback only\n"
		"  --size        the screen until a console says otherwise (default 1280x720)\n"
		"  --video-budget  Mbit/s that video (sent as YUV, scaled by the console) may\n"
		"                take (default %d; 0: video goes exact, as pixels)\n"
		"  --video-codec   H.264 to consoles that decode it: auto (default: VA-API on\n"
		"                a render node that encodes it, else x264), software, vaapi,\n"
		"                or none (CSCS only)\n"
		"  --audio       how sound goes to consoles: Opus at KBIT kbit/s (default\n"
		"                opus:64, 16 to 256), or pcm: 1.5 Mbit/s, for a LAN\n"
		"  --audio-sleep   PipeWire, started when a client first asks for sound, ends\n"
		"                after SECONDS with no client (default %d; 0: never)\n"
		"  --no-audio    no sound: no PipeWire started, no console speaker or microphone\n"
		"  -s            a command to start once the session runs (sh -c)\n"
		"  -v            more logging\n"
		"More in slimland(1).\n", prog, DEFAULT_LISTEN, DEFAULT_VIDEO_BUDGET,
		DEFAULT_AUDIO_SLEEP);
}

/*
 * wlroots' own stderr logger writes a line in pieces, which the daemons
 * sharing our stderr (the session bus) can split: ours writes each line at
 * once, in wlroots' format.
 */
static struct timespec log_start;

__attribute__((format(printf, 2, 0)))
static void log_from_wlr(enum wlr_log_importance importance, const char *fmt, va_list args)
{
	static const char *const tags[] = {
		[WLR_SILENT] = "[SILENT]", [WLR_ERROR] = "[ERROR]", [WLR_INFO] = "[INFO]",
		[WLR_DEBUG] = "[DEBUG]",
	};
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t ms = ((int64_t)now.tv_sec - log_start.tv_sec) * 1000 +
		(now.tv_nsec - log_start.tv_nsec) / 1000000;
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "%02d:%02d:%02d.%03d %s ", (int)(ms / 3600000),
		(int)(ms / 60000 % 60), (int)(ms / 1000 % 60), (int)(ms % 1000),
		importance >= 0 && importance < WLR_LOG_IMPORTANCE_LAST ? tags[importance] : "");
	slim_log_line(prefix, fmt, args);
}

/* slim-log messages (encoder, link) go to wlroots' log, so there is one log. */
__attribute__((format(printf, 2, 0)))
static void log_to_wlr(enum slim_log_level level, const char *fmt, va_list args)
{
	static const enum wlr_log_importance map[] = {
		[SLIM_LOG_ERROR] = WLR_ERROR, [SLIM_LOG_INFO] = WLR_INFO,
		[SLIM_LOG_DEBUG] = WLR_DEBUG,
	};
	_wlr_vlog(map[level], fmt, args);
}

/* --audio opus[:KBIT] or pcm */
static bool parse_audio(const char *arg, struct slim_link_config *link)
{
	if (strcmp(arg, "pcm") == 0) {
		link->audio_codec = SLIM_AUDIO_PCM;
		return true;
	}
	if (strncmp(arg, "opus", 4) != 0) {
		return false;
	}
	link->audio_codec = SLIM_AUDIO_OPUS;
	link->audio_bitrate = 64000;
	if (arg[4] == '\0') {
		return true;
	}
	char *end;
	unsigned long kbit = strtoul(arg + 5, &end, 10);
	if (arg[4] != ':' || *end || !isdigit((unsigned char)arg[5]) || kbit < 16 || kbit > 256) {
		return false;
	}
	link->audio_bitrate = (int)kbit * 1000;
	return true;
}

static int handle_signal(int sig, void *data)
{
	wl_display_terminate(data);
	return 0;
}

static int handle_child(int sig, void *data)
{
	while (waitpid(-1, NULL, WNOHANG) > 0) {
	}
	return 0;
}

static bool spawn(const char *cmd, bool managed, const struct slim_sched *sched)
{
	pid_t pid = fork();
	if (pid < 0) {
		return false;
	}
	if (pid == 0) {
		/* The child must not inherit our blocked signals or our session's end. */
		sigset_t all;
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		slim_sched_child(sched);
		/*
		 * Managed, we lead a session of our own, without a terminal (the
		 * manager's setsid): the child stays in it, which is how the
		 * manager knows that a greeter talking to it runs in this compositor.
		 */
		if (!managed) {
			setsid();
		}
		execl("/bin/sh", "/bin/sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return true;
}

static bool parse_size(const char *s, uint32_t *w, uint32_t *h)
{
	char *end;
	unsigned long a = strtoul(s, &end, 10);
	if (*end != 'x') {
		return false;
	}
	unsigned long b = strtoul(end + 1, &end, 10);
	/* each side bounded before it is narrowed to 32 bits */
	if (*end || a > SLIM_MAX_DIM || b > SLIM_MAX_DIM ||
			!slim_screen_fits((uint32_t)a, (uint32_t)b)) {
		return false;
	}
	*w = (uint32_t)a;
	*h = (uint32_t)b;
	return true;
}

/*
 * Standalone: the key a console must hold, from `path` or the runtime
 * directory's default file, made there (0600) on the first start. Its
 * place goes to the log, the key itself never.
 */
static bool load_pairing_key(const char *path, uint8_t key[SLIM_SEC_KEY_LEN])
{
	char buf[4096], err[512];
	if (!path) {
		const char *dir = getenv("XDG_RUNTIME_DIR");
		if (!dir || dir[0] != '/') {
			wlr_log(WLR_ERROR, "no XDG_RUNTIME_DIR for the pairing key: give --pairing-key FILE");
			return false;
		}
		snprintf(buf, sizeof(buf), "%s/slimland-pairing.key", dir);
		path = buf;
	}
	if (!slim_sec_key_file_load(path, true, key, err, sizeof(err))) {
		wlr_log(WLR_ERROR, "pairing key: %s", err);
		return false;
	}
	wlr_log(WLR_INFO, "consoles pair with the key in %s "
		"(slimland-console --server HOST:PORT --pairing-key %s)", path, path);
	return true;
}

#ifdef __SANITIZE_ADDRESS__
/*
 * Sanitizer builds (the tests'): allocations are unwound in full, through
 * wlroots and libwayland, which keep no frame pointers. The tests' leak
 * suppressions name a wlroots function (tests/integration/lsan.supp) that
 * only a whole stack shows, and a compositor started by slimland-sessiond
 * gets no options of the test's but the sanitizers' own variables. The
 * environment's ASAN_OPTIONS still win.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "fast_unwind_on_malloc=0";
}
#endif

/* What the command line says. */
struct options {
	const char *startup, *pairing_key;
	struct slim_link_config link;
	uint32_t width, height;
	unsigned long video_budget; /* Mbit/s */
	bool video_codec;
	enum slim_h264_device video_device;
	bool audio;
	unsigned long audio_sleep; /* seconds */
	uid_t manager_uid;
	enum wlr_log_importance verbosity;
};

/* -1 when the session is to start, else what the program exits with. */
static int parse_options(int argc, char *argv[], struct options *o)
{
	static const struct option options[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "size", required_argument, NULL, 'S' },
		{ "managed", no_argument, NULL, 'M' },
		{ "manager-uid", required_argument, NULL, 'U' },
		{ "pairing-key", required_argument, NULL, 'P' },
		{ "transport", required_argument, NULL, 'T' },
		{ "video-budget", required_argument, NULL, 'B' },
		{ "video-codec", required_argument, NULL, 'C' },
		{ "audio", required_argument, NULL, 'a' },
		{ "audio-sleep", required_argument, NULL, 'Z' },
		{ "no-audio", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "s:vh", options, NULL)) != -1) {
		switch (c) {
		case 'l':
			o->link.listen = optarg;
			break;
		case 'P':
			o->pairing_key = optarg;
			break;
		case 'T':
			if (!slim_sec_mode_parse(optarg, &o->link.mode)) {
				fprintf(stderr, "slimland: --transport wants dtls or clear, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'S':
			if (!parse_size(optarg, &o->width, &o->height)) {
				fprintf(stderr, "slimland: --size wants WxH, at most %u a side "
					"and %u pixels, not '%s'\n", SLIM_MAX_DIM,
					SLIM_MAX_SCREEN_PIXELS, optarg);
				return 2;
			}
			break;
		case 'B': {
			char *end;
			o->video_budget = strtoul(optarg, &end, 10);
			if (*end || optarg[0] == '-' || o->video_budget > 100000) {
				fprintf(stderr, "slimland: --video-budget wants Mbit/s, 0 to 100000, "
					"not '%s'\n", optarg);
				return 2;
			}
			break;
		}
		case 'C':
			o->video_codec = strcmp(optarg, "none") != 0;
			if (strcmp(optarg, "auto") == 0) {
				o->video_device = SLIM_H264_AUTO;
			} else if (strcmp(optarg, "software") == 0) {
				o->video_device = SLIM_H264_SOFTWARE;
			} else if (strcmp(optarg, "vaapi") == 0) {
				o->video_device = SLIM_H264_VAAPI;
			} else if (o->video_codec) {
				fprintf(stderr, "slimland: --video-codec wants auto, software, vaapi or "
					"none, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'M':
			o->link.managed = true;
			break;
		case 'U': {
			char *end;
			unsigned long uid = strtoul(optarg, &end, 10);
			if (*end || optarg[0] == '-' || optarg[0] == '\0' || uid >= (uid_t)-1) {
				fprintf(stderr, "slimland: --manager-uid wants a uid, not '%s'\n", optarg);
				return 2;
			}
			o->manager_uid = (uid_t)uid;
			break;
		}
		case 'a':
			if (!parse_audio(optarg, &o->link)) {
				fprintf(stderr, "slimland: --audio wants opus, opus:KBIT (16 to 256) "
					"or pcm, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'Z': {
			char *end;
			o->audio_sleep = strtoul(optarg, &end, 10);
			if (*end || !isdigit((unsigned char)optarg[0]) || o->audio_sleep > 86400) {
				fprintf(stderr, "slimland: --audio-sleep wants seconds (0 to 86400), "
					"not '%s'\n", optarg);
				return 2;
			}
			break;
		}
		case 'A':
			o->audio = false;
			break;
		case 's':
			o->startup = optarg;
			break;
		case 'v':
			o->verbosity = WLR_DEBUG;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr, argv[0]);
		return 2;
	}
	if (o->link.managed && o->pairing_key) {
		fprintf(stderr, "slimland: --pairing-key: a managed session's consoles come with "
			"keys from the session manager\n");
		return 2;
	}
	return -1;
}

/* What the clients find in their environment: this display, X11's, and who to log out. */
static void set_environment(struct slim_server *server, const char *socket)
{
	setenv("WAYLAND_DISPLAY", socket, true);
	/* what a session's "log out" signals (slimland-session logout) */
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("SLIMLAND_PID", pid, true);
	const char *x11 = slim_shell_x11_display(server->shell);
	if (x11) {
		setenv("DISPLAY", x11, true);
		wlr_log(WLR_INFO, "X11 programs use DISPLAY=%s", x11);
	} else {
		unsetenv("DISPLAY");
	}
}

int main(int argc, char *argv[])
{
	struct options o = {
		.link = { .listen = DEFAULT_LISTEN, .mode = SLIM_SEC_DTLS },
		.width = 1280, .height = 720,
		.video_budget = DEFAULT_VIDEO_BUDGET,
		.video_codec = true,
		.audio = true,
		.audio_sleep = DEFAULT_AUDIO_SLEEP,
		.manager_uid = getuid(),
		.verbosity = WLR_INFO,
	};
	int done = parse_options(argc, argv, &o);
	if (done >= 0) {
		return done;
	}
	clock_gettime(CLOCK_MONOTONIC, &log_start);
	wlr_log_init(o.verbosity, log_from_wlr);
	slim_log_init(o.verbosity == WLR_DEBUG ? SLIM_LOG_DEBUG : SLIM_LOG_INFO, log_to_wlr);

	int status = 1;
	struct slim_server server = { .manager_uid = o.manager_uid };
	struct wl_event_source *sigs[3] = { NULL };
	bool have_key = o.link.managed || o.link.mode == SLIM_SEC_CLEAR ||
		load_pairing_key(o.pairing_key, o.link.pairing_key);
	struct slim_video_options video = {
		.budget_bps = (uint64_t)o.video_budget * 1000000,
		.codec = o.video_codec, .device = o.video_device,
	};
	bool started = have_key && server_init(&server, o.width, o.height, &o.link, &video);
	explicit_bzero(o.link.pairing_key, sizeof(o.link.pairing_key));
	if (!started) {
		goto out;
	}
	sigs[0] = wl_event_loop_add_signal(server.loop, SIGINT, handle_signal, server.display);
	sigs[1] = wl_event_loop_add_signal(server.loop, SIGTERM, handle_signal, server.display);
	sigs[2] = wl_event_loop_add_signal(server.loop, SIGCHLD, handle_child, NULL);
	if (!sigs[0] || !sigs[1] || !sigs[2]) {
		wlr_log(WLR_ERROR, "cannot watch for signals");
		goto out;
	}
	const char *socket = wl_display_add_socket_auto(server.display);
	if (!socket) {
		wlr_log(WLR_ERROR, "cannot open a Wayland socket");
		goto out;
	}
	set_environment(&server, socket);
	/*
	 * Before any client, so that the first finds its bus and its sound
	 * server; after WAYLAND_DISPLAY and DISPLAY, which the services the
	 * bus starts take from it.
	 */
	server.session_bus = slim_session_bus_start(server.sched);
	if (o.audio) {
		server.sound = sound_create(server.loop, server.sched, server.link,
			(uint32_t)o.audio_sleep);
	}
	/* the last line of start-up: tests and benchmarks wait for it */
	wlr_log(WLR_INFO, "slimland on WAYLAND_DISPLAY=%s", socket);
	if (o.startup && !spawn(o.startup, o.link.managed, server.sched)) {
		wlr_log(WLR_ERROR, "cannot start '%s'", o.startup);
		goto out;
	}
	wl_display_run(server.display);
	status = 0;
out:
	for (int i = 0; i < 3; i++) {
		if (sigs[i]) {
			wl_event_source_remove(sigs[i]);
		}
	}
	server_finish(&server);
	return status;
}
