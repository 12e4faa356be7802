#define _GNU_SOURCE /* getopt_long */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "heads-option.h"
#include "options.h"
#include "slim-keyboard.h"

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
	"  --size WxH[,WxH...] screen size (default 1280x720; several: a head each, left\n"
	"                      to right, each WxH[/WxHmm][@SCALE] with its physical size\n"
	"                      and scale; with drm, the mode to\n"
	"                      ask the display for, default its preferred one)\n"
	"  --keyboard LAYOUT[:VARIANT][+LAYOUT[:VARIANT]...][,OPTIONS]  the keymap the\n"
	"                      keyboard types with, which the session follows: \"de\",\n"
	"                      \"us:dvorak\", \"us+ru,grp:alt_shift_toggle\" (default:\n"
	"                      /etc/default/keyboard's, else XKB_DEFAULT_*'s, else the\n"
	"                      session's own)\n"
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
	"  --video-codec auto|software|none  H.264 the console decodes: auto (default)\n"
	"                      on its GPU when it can, else in software; none: CSCS only\n"
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
	"  -h, --help\n"
	"More in slimland-console(1).\n";

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

/* A word an option takes, and the value it stands for. */
struct choice {
	const char *name;
	int value;
};

/* The value of `arg` among `choices` (ended by a NULL name); false if it is none of them. */
static bool choose(const struct choice *choices, const char *arg, int *value)
{
	for (; choices->name; choices++) {
		if (strcmp(arg, choices->name) == 0) {
			*value = choices->value;
			return true;
		}
	}
	return false;
}

static bool set_server(struct options *o, const char *arg)
{
	o->server = arg;
	return true;
}

static bool set_manager(struct options *o, const char *arg)
{
	o->manager = arg;
	return true;
}

static bool set_output(struct options *o, const char *arg)
{
	enum { OUTPUT_HEADLESS, OUTPUT_DRM, OUTPUT_WINDOW };
	static const struct choice outputs[] = {
		{ "headless", OUTPUT_HEADLESS },
#ifdef SLIM_HAVE_DRM
		{ "drm", OUTPUT_DRM },
#endif
#ifdef SLIM_HAVE_WINDOW
		{ "window", OUTPUT_WINDOW },
#endif
		{ NULL, 0 },
	};
	int output;
	o->output_given = true;
	if (!choose(outputs, arg, &output)) {
		slim_console_status("output %s not available in this build", arg);
		return false;
	}
	o->window = output == OUTPUT_WINDOW;
	o->drm = output == OUTPUT_DRM; /* drm comes with its backend */
	return true;
}

static bool set_size(struct options *o, const char *arg)
{
	o->size_given = true;
	char err[160];
	if (!slim_heads_option_parse(arg, &o->heads, err, sizeof(err))) {
		slim_console_status("--size %s: %s", arg, err);
		return false;
	}
	o->width = o->heads.heads[0].width;
	o->height = o->heads.heads[0].height;
	return true;
}

static bool set_keyboard(struct options *o, const char *arg)
{
	char why[160];
	if (!slim_keyboard_parse(arg, &o->keyboard, why, sizeof(why))) {
		slim_console_status("--keyboard %s: %s (expected %s)", arg, why,
			SLIM_KEYBOARD_SYNTAX);
		return false;
	}
	o->has_keyboard = true;
	return true;
}

static bool set_state_dir(struct options *o, const char *arg)
{
	if (arg[0] == '\0' || strlen(arg) >= sizeof(o->state_dir) - 32) {
		slim_console_status("--state-dir: a directory, please");
		return false;
	}
	snprintf(o->state_dir, sizeof(o->state_dir), "%s", arg);
	return true;
}

static bool set_server_key(struct options *o, const char *arg)
{
	if (!slim_sec_fingerprint_parse(arg, o->server_key)) {
		slim_console_status("--server-key %s: expected sha256: and 64 hex digits "
			"(slimlandctl key prints it)", arg);
		return false;
	}
	o->has_server_key = true;
	return true;
}

static bool set_pairing_key(struct options *o, const char *arg)
{
	if (strlen(arg) >= sizeof(o->pairing_key)) {
		slim_console_status("--pairing-key: path too long");
		return false;
	}
	snprintf(o->pairing_key, sizeof(o->pairing_key), "%s", arg);
	return true;
}

static bool set_transport(struct options *o, const char *arg)
{
	if (!slim_sec_mode_parse(arg, &o->transport)) {
		slim_console_status("--transport %s: expected dtls or clear", arg);
		return false;
	}
	return true;
}

static bool set_mtu(struct options *o, const char *arg)
{
	unsigned long mtu;
	char *end;
	/* room for a record's overhead around the smallest datagram */
	if (!parse_uint(arg, SLIM_MIN_MTU + SLIM_SEC_OVERHEAD, SLIM_MAX_MTU, &mtu, &end) ||
			*end != '\0') {
		slim_console_status("--mtu %s: expected %d..%d", arg,
			SLIM_MIN_MTU + SLIM_SEC_OVERHEAD, SLIM_MAX_MTU);
		return false;
	}
	o->mtu = (uint16_t)mtu;
	return true;
}

static bool set_video_budget(struct options *o, const char *arg)
{
	unsigned long mbit;
	char *end;
	if (!parse_uint(arg, 1, 100000, &mbit, &end) || *end != '\0') {
		slim_console_status("--video-budget %s: expected Mbit/s, 1..100000", arg);
		return false;
	}
	o->video_budget = (uint32_t)mbit;
	return true;
}

static bool set_video_codec(struct options *o, const char *arg)
{
	static const struct choice codecs[] = {
		{ "auto", VIDEO_CODEC_AUTO },
		{ "software", VIDEO_CODEC_SOFTWARE },
		{ "none", VIDEO_CODEC_NONE },
		{ NULL, 0 },
	};
	int codec;
	if (!choose(codecs, arg, &codec)) {
		slim_console_status("--video-codec %s: expected auto, software or none", arg);
		return false;
	}
	o->video_codec = (enum video_codec_mode)codec;
	return true;
}

static bool set_screenshot(struct options *o, const char *arg)
{
	o->screenshot = arg;
	return true;
}

static bool set_card_reader(struct options *o, const char *arg)
{
	static const struct choice readers[] = {
		{ "none", CARD_NONE },
		{ "pcsc", CARD_PCSC },
		{ "stdin", CARD_STDIN },
		{ NULL, 0 },
	};
	int reader;
	if (!choose(readers, arg, &reader)) {
		slim_console_status("--card-reader %s: expected none, pcsc or stdin", arg);
		return false;
	}
	o->card_reader = (enum card_mode)reader;
	return true;
}

static bool set_input(struct options *o, const char *arg)
{
	static const struct choice inputs[] = {
		{ "none", INPUT_NONE },
#ifdef SLIM_HAVE_DRM
		{ "libinput", INPUT_LIBINPUT },
#endif
		{ NULL, 0 },
	};
	int input;
	if (!choose(inputs, arg, &input)) {
		slim_console_status("input %s not available in this build", arg);
		return false;
	}
	o->input = (enum input_mode)input;
	return true;
}

static bool set_audio(struct options *o, const char *arg)
{
	static const struct choice modes[] = {
		{ "auto", CONSOLE_AUDIO_AUTO },
		{ "pipewire", CONSOLE_AUDIO_PIPEWIRE },
		{ "none", CONSOLE_AUDIO_NONE },
		{ "alsa", CONSOLE_AUDIO_ALSA },
		{ NULL, 0 },
	};
	int mode;
	o->audio.alsa_device = NULL;
	if (strncmp(arg, "alsa:", 5) == 0 && arg[5]) {
		mode = CONSOLE_AUDIO_ALSA;
		o->audio.alsa_device = arg + 5;
	} else if (!choose(modes, arg, &mode)) {
		slim_console_status("--audio %s: expected auto, pipewire, alsa, alsa:DEVICE or none",
			arg);
		return false;
	}
	o->audio.mode = (enum console_audio_mode)mode;
	return true;
}

static bool set_no_microphone(struct options *o, const char *arg)
{
	o->audio.microphone = false;
	return true;
}

/* The long options: what sets an argument's value, or (set NULL) the flag it turns on. */
static const struct option_def {
	const char *name;
	int has_arg;
	bool (*set)(struct options *o, const char *arg);
	size_t flag; /* offsetof a bool in struct options */
} option_defs[] = {
	{ "server", required_argument, set_server, 0 },
	{ "manager", required_argument, set_manager, 0 },
	{ "output", required_argument, set_output, 0 },
	{ "size", required_argument, set_size, 0 },
	{ "keyboard", required_argument, set_keyboard, 0 },
	{ "state-dir", required_argument, set_state_dir, 0 },
	{ "print-id", no_argument, NULL, offsetof(struct options, print_id) },
	{ "server-key", required_argument, set_server_key, 0 },
	{ "pairing-key", required_argument, set_pairing_key, 0 },
	{ "transport", required_argument, set_transport, 0 },
	{ "mtu", required_argument, set_mtu, 0 },
	{ "video-budget", required_argument, set_video_budget, 0 },
	{ "video-codec", required_argument, set_video_codec, 0 },
	{ "control", no_argument, NULL, offsetof(struct options, control) },
	{ "screenshot", required_argument, set_screenshot, 0 },
	{ "card-reader", required_argument, set_card_reader, 0 },
	{ "input", required_argument, set_input, 0 },
	{ "bench-present", no_argument, NULL, offsetof(struct options, bench_present) },
	{ "audio", required_argument, set_audio, 0 },
	{ "no-microphone", no_argument, set_no_microphone, 0 },
};

#define N_OPTIONS (sizeof(option_defs) / sizeof(option_defs[0]))
/* getopt_long's value for option_defs[i]: past every short option's character */
#define OPTION_FIRST 256

/* Where the console's key and the session's pairing key are, unless the options say. */
static void set_defaults(struct options *o)
{
	*o = (struct options){ .width = 1280, .height = 720, .mtu = SLIM_DEFAULT_MTU,
		.audio = { .mode = CONSOLE_AUDIO_AUTO, .microphone = true } };
	slim_desk_single(&o->heads, o->width, o->height);
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
}

/* What the options say together: one server or the manager that names it. */
static bool check_endpoint(const struct options *o)
{
	if (o->server && o->manager) {
		slim_console_status("--server and --manager exclude each other: the manager "
			"chooses the server");
		return false;
	}
	if (!o->server && !o->manager && !o->bench_present && !o->print_id) {
		slim_console_status("--server HOST:PORT is required (or --manager HOST[:PORT])");
		return false;
	}
	return true;
}

int slim_options_parse(int argc, char *argv[], struct options *o)
{
	/* and the two with a short name too */
	struct option longopts[N_OPTIONS + 3] = {
		[N_OPTIONS] = { "verbose", no_argument, NULL, 'v' },
		[N_OPTIONS + 1] = { "help", no_argument, NULL, 'h' },
	};
	for (size_t i = 0; i < N_OPTIONS; i++) {
		longopts[i] = (struct option){ option_defs[i].name, option_defs[i].has_arg, NULL,
			OPTION_FIRST + (int)i };
	}
	set_defaults(o);
	int opt;
	while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		if (opt >= OPTION_FIRST) {
			const struct option_def *def = &option_defs[opt - OPTION_FIRST];
			if (!def->set) {
				*(bool *)((char *)o + def->flag) = true;
			} else if (!def->set(o, optarg)) {
				return EXIT_USAGE;
			}
		} else if (opt == 'v') {
			o->verbose = true;
		} else if (opt == 'h') {
			fputs(usage_text, stdout);
			return EXIT_SUCCESS;
		} else {
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
	return check_endpoint(o) ? -1 : EXIT_USAGE;
}
