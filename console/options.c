#define _GNU_SOURCE /* getopt_long */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "options.h"

static const char usage_text[] =
	"usage: slimland-console --server HOST:PORT | --manager HOST[:PORT] [options]\n"
	"  --server HOST:PORT  the slimland server; [IPV6]:PORT for an IPv6 address\n"
	"  --manager HOST[:PORT]  the session manager (port 5550 by default), which\n"
	"                      says which server to show and hears the card reader;\n"
	"                      a server group's managers comma-separated: the next\n"
	"                      is tried when one does not answer\n"
	"  --output NAME       where the picture goes: headless, drm (a KMS display;\n"
	"                      the default when there is one), or window (a desktop\n"
	"                      window; in builds with SDL2)\n"
	"  --input NAME        none, or libinput (the seat's keyboards and pointers;\n"
	"                      the default with --output drm)\n"
	"  --bench-present     time copying damage to the KMS display, and exit\n"
	"  --size WxH          screen size (default 1280x720; with drm, the mode to\n"
	"                      ask the display for, default its preferred one)\n"
	"  --state-dir DIR     where the console keeps its key and the session managers'\n"
	"                      keys it pinned (default /var/lib/slimland-console as\n"
	"                      root, else $XDG_STATE_HOME/slimland-console); the\n"
	"                      console's id is derived from its key\n"
	"  --print-id          print the console's id (making its key if need be), exit\n"
	"  --server-key sha256:HEX  the session manager's key, as its administrator\n"
	"                      gives it (default: pin the key met first)\n"
	"  --pairing-key FILE  --server: the session's pairing key (default\n"
	"                      $XDG_RUNTIME_DIR/slimland-pairing.key, where slimland\n"
	"                      writes it)\n"
	"  --transport dtls|clear  clear: no encryption, to loopback only (benchmarks)\n"
	"  --mtu N             largest datagram, 320..65000 (default 1400)\n"
	"  --video-budget MBIT the most video may take on this console's link, Mbit/s\n"
	"                      (default: what the server allows)\n"
	"  --control           commands on stdin, events on stdout, for tests\n"
	"  --card-reader=none|pcsc|stdin  where card taps come from (default: pcsc if\n"
	"                      pcscd is running); stdin: lines \"insert HEX\" and \"remove\",\n"
	"                      or with --control its \"card insert HEX\" and \"card remove\"\n"
	"  --screenshot PATH   where SIGUSR1 writes a PNG of the screen\n"
	"  --audio auto|pipewire|alsa[:DEVICE]|none  where the session's sound plays and\n"
	"                      the microphone is heard (default auto: PipeWire if one\n"
	"                      answers, else ALSA's default device)\n"
	"  --no-microphone     play the session's sound, send no microphone\n"
	"  -v, --verbose       debug messages\n"
	"  -h, --help\n";

void slim_console_status(const char *fmt, ...)
{
	va_list args;
	va_start(args, fmt);
	fputs("slimland-console: ", stderr);
	vfprintf(stderr, fmt, args);
	fputc('\n', stderr);
	va_end(args);
}

static bool parse_uint(const char *s, unsigned long lo, unsigned long hi,
		unsigned long *out, char **end)
{
	if (*s < '0' || *s > '9') {
		return false; /* strtoul would take blanks and signs */
	}
	errno = 0;
	*out = strtoul(s, end, 10);
	return errno == 0 && *out >= lo && *out <= hi;
}

static bool parse_size(const char *s, uint32_t *width, uint32_t *height)
{
	unsigned long w, h;
	char *end;
	if (!parse_uint(s, 1, SLIM_MAX_DIM, &w, &end) || *end != 'x' ||
			!parse_uint(end + 1, 1, SLIM_MAX_DIM, &h, &end) || *end != '\0') {
		return false;
	}
	*width = (uint32_t)w;
	*height = (uint32_t)h;
	return true;
}

int slim_options_parse(int argc, char *argv[], struct options *o)
{
	enum { OPT_SERVER = 256, OPT_MANAGER, OPT_OUTPUT, OPT_SIZE, OPT_MTU, OPT_CONTROL, OPT_SCREENSHOT,
		OPT_CARD_READER, OPT_INPUT, OPT_BENCH_PRESENT, OPT_STATE_DIR, OPT_PRINT_ID,
		OPT_SERVER_KEY, OPT_PAIRING_KEY, OPT_TRANSPORT, OPT_VIDEO_BUDGET, OPT_AUDIO,
		OPT_NO_MICROPHONE };
	static const struct option longopts[] = {
		{ "server", required_argument, NULL, OPT_SERVER },
		{ "manager", required_argument, NULL, OPT_MANAGER },
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "print-id", no_argument, NULL, OPT_PRINT_ID },
		{ "server-key", required_argument, NULL, OPT_SERVER_KEY },
		{ "pairing-key", required_argument, NULL, OPT_PAIRING_KEY },
		{ "transport", required_argument, NULL, OPT_TRANSPORT },
		{ "mtu", required_argument, NULL, OPT_MTU },
		{ "video-budget", required_argument, NULL, OPT_VIDEO_BUDGET },
		{ "control", no_argument, NULL, OPT_CONTROL },
		{ "screenshot", required_argument, NULL, OPT_SCREENSHOT },
		{ "card-reader", required_argument, NULL, OPT_CARD_READER },
		{ "input", required_argument, NULL, OPT_INPUT },
		{ "bench-present", no_argument, NULL, OPT_BENCH_PRESENT },
		{ "audio", required_argument, NULL, OPT_AUDIO },
		{ "no-microphone", no_argument, NULL, OPT_NO_MICROPHONE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	*o = (struct options){ .width = 1280, .height = 720, .mtu = SLIM_DEFAULT_MTU,
		.audio = { .mode = CONSOLE_AUDIO_AUTO, .microphone = true } };
	/* the key lives with the machine (root) or with the user who runs the console */
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	if (geteuid() == 0) {
		snprintf(o->state_dir, sizeof(o->state_dir), "/var/lib/slimland-console");
	} else if (state && state[0] == '/') {
		snprintf(o->state_dir, sizeof(o->state_dir), "%s/slimland-console", state);
	} else {
		snprintf(o->state_dir, sizeof(o->state_dir), "%s/.local/state/slimland-console",
			home && home[0] == '/' ? home : "/tmp");
	}
	/* where a standalone slimland of the same user writes it */
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	if (runtime && runtime[0] == '/') {
		snprintf(o->pairing_key, sizeof(o->pairing_key), "%s/slimland-pairing.key", runtime);
	}

	int opt;
	unsigned long number;
	char *end;
	while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_SERVER:
			o->server = optarg;
			break;
		case OPT_MANAGER:
			o->manager = optarg;
			break;
		case OPT_OUTPUT:
			/* drm comes with its backend */
			o->output_given = true;
			o->drm = false;
			if (strcmp(optarg, "headless") == 0) {
				o->window = false;
#ifdef SLIM_HAVE_DRM
			} else if (strcmp(optarg, "drm") == 0) {
				o->window = false;
				o->drm = true;
#endif
#ifdef SLIM_HAVE_WINDOW
			} else if (strcmp(optarg, "window") == 0) {
				o->window = true;
#endif
			} else {
				slim_console_status("output %s not available in this build", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_SIZE:
			o->size_given = true;
			if (!parse_size(optarg, &o->width, &o->height)) {
				slim_console_status("--size %s: expected WxH, each 1..%d",
						optarg, SLIM_MAX_DIM);
				return EXIT_USAGE;
			}
			break;
		case OPT_STATE_DIR:
			if (optarg[0] == '\0' || strlen(optarg) >= sizeof(o->state_dir) - 32) {
				slim_console_status("--state-dir: a directory, please");
				return EXIT_USAGE;
			}
			snprintf(o->state_dir, sizeof(o->state_dir), "%s", optarg);
			break;
		case OPT_PRINT_ID:
			o->print_id = true;
			break;
		case OPT_SERVER_KEY:
			if (!slim_sec_fingerprint_parse(optarg, o->server_key)) {
				slim_console_status("--server-key %s: expected sha256: and 64 hex digits "
					"(slimlandctl key prints it)", optarg);
				return EXIT_USAGE;
			}
			o->has_server_key = true;
			break;
		case OPT_PAIRING_KEY:
			if (strlen(optarg) >= sizeof(o->pairing_key)) {
				slim_console_status("--pairing-key: path too long");
				return EXIT_USAGE;
			}
			snprintf(o->pairing_key, sizeof(o->pairing_key), "%s", optarg);
			break;
		case OPT_TRANSPORT:
			if (!slim_sec_mode_parse(optarg, &o->transport)) {
				slim_console_status("--transport %s: expected dtls or clear", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_MTU:
			/* room for a record's overhead around the smallest datagram */
			if (!parse_uint(optarg, SLIM_MIN_MTU + SLIM_SEC_OVERHEAD, SLIM_MAX_MTU, &number,
					&end) || *end != '\0') {
				slim_console_status("--mtu %s: expected %d..%d", optarg,
					SLIM_MIN_MTU + SLIM_SEC_OVERHEAD, SLIM_MAX_MTU);
				return EXIT_USAGE;
			}
			o->mtu = (uint16_t)number;
			break;
		case OPT_VIDEO_BUDGET:
			if (!parse_uint(optarg, 1, 100000, &number, &end) || *end != '\0') {
				slim_console_status("--video-budget %s: expected Mbit/s, 1..100000", optarg);
				return EXIT_USAGE;
			}
			o->video_budget = (uint32_t)number;
			break;
		case OPT_CONTROL:
			o->control = true;
			break;
		case OPT_SCREENSHOT:
			o->screenshot = optarg;
			break;
		case OPT_CARD_READER:
			if (strcmp(optarg, "none") == 0) {
				o->card_reader = CARD_NONE;
			} else if (strcmp(optarg, "pcsc") == 0) {
				o->card_reader = CARD_PCSC;
			} else if (strcmp(optarg, "stdin") == 0) {
				o->card_reader = CARD_STDIN;
			} else {
				slim_console_status("--card-reader %s: expected none, pcsc or stdin", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_INPUT:
			if (strcmp(optarg, "none") == 0) {
				o->input = INPUT_NONE;
#ifdef SLIM_HAVE_DRM
			} else if (strcmp(optarg, "libinput") == 0) {
				o->input = INPUT_LIBINPUT;
#endif
			} else {
				slim_console_status("input %s not available in this build", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_BENCH_PRESENT:
			o->bench_present = true;
			break;
		case OPT_AUDIO:
			o->audio.alsa_device = NULL;
			if (strcmp(optarg, "auto") == 0) {
				o->audio.mode = CONSOLE_AUDIO_AUTO;
			} else if (strcmp(optarg, "pipewire") == 0) {
				o->audio.mode = CONSOLE_AUDIO_PIPEWIRE;
			} else if (strcmp(optarg, "none") == 0) {
				o->audio.mode = CONSOLE_AUDIO_NONE;
			} else if (strcmp(optarg, "alsa") == 0) {
				o->audio.mode = CONSOLE_AUDIO_ALSA;
			} else if (strncmp(optarg, "alsa:", 5) == 0 && optarg[5]) {
				o->audio.mode = CONSOLE_AUDIO_ALSA;
				o->audio.alsa_device = optarg + 5;
			} else {
				slim_console_status("--audio %s: expected auto, pipewire, alsa, "
					"alsa:DEVICE or none", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_NO_MICROPHONE:
			o->audio.microphone = false;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_SUCCESS;
		default:
			/* getopt said what was wrong */
			fputs("usage: slimland-console --server HOST:PORT | --manager HOST[:PORT] "
				"[options] (--help)\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		slim_console_status("unexpected argument %s", argv[optind]);
		return EXIT_USAGE;
	}
	if (o->server && o->manager) {
		slim_console_status("--server and --manager exclude each other: the manager "
			"chooses the server");
		return EXIT_USAGE;
	}
	if (!o->server && !o->manager && !o->bench_present && !o->print_id) {
		slim_console_status("--server HOST:PORT is required (or --manager HOST[:PORT])");
		return EXIT_USAGE;
	}
	return -1;
}

