/* The console's command line. */
#ifndef SLIM_CONSOLE_OPTIONS_H
#define SLIM_CONSOLE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include "slim-desk.h"
#include "slim-proto.h"
#include "audio.h"
#include "slim-secure.h"

#define EXIT_USAGE 2

struct options {
	const char *server;
	const char *manager; /* --manager: the server comes from its REDIRECT */
	uint32_t width, height; /* the first head's */
	struct slim_desk heads;  /* --size's heads, left to right (a headless console's) */
	uint16_t mtu;
	uint32_t video_budget; /* --video-budget, Mbit/s; 0: the server's own */
	enum video_codec_mode {
		VIDEO_CODEC_AUTO,     /* H.264 on the GPU when it decodes it, else in software */
		VIDEO_CODEC_SOFTWARE, /* H.264 in software */
		VIDEO_CODEC_NONE,     /* none announced: video comes as CSCS */
	} video_codec;
	/* the console's key and pins; its id comes from the key */
	char state_dir[4096];
	bool has_server_key; /* --server-key: the manager's key, instead of pinning the first */
	uint8_t server_key[SLIM_SEC_FINGERPRINT_LEN];
	char pairing_key[4096]; /* --server: the session's pairing key file */
	enum slim_sec_mode transport;
	bool print_id;
	const char *screenshot;
	bool control;
	bool verbose;
	bool window; /* --output window */
	bool drm; /* --output drm, or the default with a DRM device */
	bool output_given; /* --output named one: say so when it cannot be had */
	bool size_given; /* --size: the mode to ask a display for */
	bool has_keyboard; /* --keyboard: its names, instead of the system's */
	struct slim_keyboard keyboard;
	enum input_mode {
		INPUT_DEFAULT, /* libinput with --output drm, else none */
		INPUT_NONE,
		INPUT_LIBINPUT,
	} input;
	bool bench_present;
	struct console_audio_config audio; /* --audio, --no-microphone */
	enum card_mode {
		CARD_DEFAULT, /* pcsc if pcscd is there now, else none */
		CARD_NONE,
		CARD_PCSC,
		CARD_STDIN,
	} card_reader;
};

/* One line on stderr, for the person at the console: a bad option, a state change. */
void slim_console_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Returns -1 to go on, or the status to exit with (help or a bad argument). */
int slim_options_parse(int argc, char *argv[], struct options *o);

#endif
