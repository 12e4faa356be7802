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
	"                      says which server to show and hears the card reader\n"
	"  --output NAME       where the picture goes: headless, drm (a KMS display;\n"
	"                      the default when there is one), or window (a desktop\n"
	"                      window; in builds with SDL2)\n"
	"  --input NAME        none, or libinput (the seat's keyboards and pointers;\n"
	"                      the default with --output drm)\n"
	"  --bench-present     time copying damage to the KMS display, and exit\n"
	"  --size WxH          screen size (default 1280x720; with drm, the mode to\n"
	"                      ask the display for, default its preferred one)\n"
	"  --id NAME           console id sent to the server (default: the host name)\n"
	"  --mtu N             largest datagram, 256..65000 (default 1400)\n"
	"  --control           commands on stdin, events on stdout, for tests\n"
	"  --card-reader=none|pcsc|stdin  where card taps come from (default: pcsc if\n"
	"                      pcscd is running); stdin: lines \"insert HEX\" and \"remove\",\n"
	"                      or with --control its \"card insert HEX\" and \"card remove\"\n"
	"  --screenshot PATH   where SIGUSR1 writes a PNG of the screen\n"
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
	enum { OPT_SERVER = 256, OPT_MANAGER, OPT_OUTPUT, OPT_SIZE, OPT_ID, OPT_MTU, OPT_CONTROL, OPT_SCREENSHOT,
		OPT_CARD_READER, OPT_INPUT, OPT_BENCH_PRESENT };
	static const struct option longopts[] = {
		{ "server", required_argument, NULL, OPT_SERVER },
		{ "manager", required_argument, NULL, OPT_MANAGER },
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "id", required_argument, NULL, OPT_ID },
		{ "mtu", required_argument, NULL, OPT_MTU },
		{ "control", no_argument, NULL, OPT_CONTROL },
		{ "screenshot", required_argument, NULL, OPT_SCREENSHOT },
		{ "card-reader", required_argument, NULL, OPT_CARD_READER },
		{ "input", required_argument, NULL, OPT_INPUT },
		{ "bench-present", no_argument, NULL, OPT_BENCH_PRESENT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	*o = (struct options){ .width = 1280, .height = 720, .mtu = SLIM_DEFAULT_MTU };
	/* The host name tells the server's logs which desk this is; the core cuts it. */
	char host[256] = "slimland-console";
	if (gethostname(host, sizeof(host)) != 0 || host[0] == '\0') {
		strcpy(host, "slimland-console");
	}
	host[sizeof(host) - 1] = '\0';
	snprintf(o->id, sizeof(o->id), "%.*s", (int)sizeof(o->id) - 1, host);

	int opt;
	unsigned long mtu;
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
				slim_console_status("--size %s: expected WxH, each 1..%d", optarg, SLIM_MAX_DIM);
				return EXIT_USAGE;
			}
			break;
		case OPT_ID:
			if (optarg[0] == '\0' || strlen(optarg) >= sizeof(o->id)) {
				slim_console_status("--id: 1..%zu bytes", sizeof(o->id) - 1);
				return EXIT_USAGE;
			}
			strcpy(o->id, optarg);
			break;
		case OPT_MTU:
			if (!parse_uint(optarg, SLIM_MIN_MTU, SLIM_MAX_MTU, &mtu, &end) || *end != '\0') {
				slim_console_status("--mtu %s: expected %d..%d", optarg, SLIM_MIN_MTU, SLIM_MAX_MTU);
				return EXIT_USAGE;
			}
			o->mtu = (uint16_t)mtu;
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
	if (!o->server && !o->manager && !o->bench_present) {
		slim_console_status("--server HOST:PORT is required (or --manager HOST[:PORT])");
		return EXIT_USAGE;
	}
	return -1;
}

