/*
 * libFuzzer target: everything a datagram from the network reaches on the
 * console (the codec, LZ4 expansion, every display command, the sequence
 * window, ACK and NACK).
 *
 * The input is one or more datagrams back to back, each beginning with the
 * magic, so that a seed is a datagram exactly as it travels and several of
 * them exercise gaps, duplicates and late arrivals. Each input starts a
 * fresh association, so that an input behaves the same however many ran
 * before it. Besides the sanitizers, two properties are checked:
 *  - a datagram the console rejects changes no pixel;
 *  - everything the console sends back is a valid upstream datagram.
 * AUDIO goes on, as in the console program, into a jitter buffer and the
 * Opus decoder, 10 ms played for each.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz-common.h"
#include "console-core.h"
#include "slim-audio.h"

/* Datagrams taken from one input at most; the rest goes into the last. */
#define FUZZ_MAX_DGRAMS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct slim_console_core *core;
static uint32_t before[FUZZ_W * FUZZ_H];
static struct slim_audio_jitter *speaker;
static uint64_t speaker_clock;

static void handle_audio(void *data, const struct slim_cmd *cmd, bool again, uint64_t time_us)
{
	struct slim_audio_packet p;
	slim_audio_packet_from_cmd(cmd, &p);
	if (again) {
		slim_audio_jitter_push_again(speaker, &p);
		return;
	}
	slim_audio_jitter_push(speaker, &p, ++speaker_clock * 10000);
	int16_t pcm[SLIM_AUDIO_FRAME * 2];
	slim_audio_jitter_pull(speaker, pcm);
}

static const struct slim_console_events events = {
	.audio = handle_audio,
};

static void check_upstream(void *data, const uint8_t *buf, size_t len)
{
	fuzz_check_datagram(buf, len, true, "console");
}

static void setup(void)
{
	slim_log_init(SLIM_LOG_DEBUG, fuzz_quiet_log);
	struct slim_console_backend *backend = slim_headless_backend_create();
	core = slim_console_core_create(FUZZ_W, FUZZ_H, SLIM_DEFAULT_MTU, backend,
		check_upstream, NULL);
	speaker = slim_audio_jitter_create(2, 20, 200);
	if (!core || !speaker) {
		abort();
	}
	slim_console_core_set_events(core, &events, NULL);
}

static void feed(const uint8_t *data, size_t len)
{
	/* A buffer of exactly the datagram's size, so that ASan sees any overrun. */
	uint8_t *dgram = malloc(len > 0 ? len : 1);
	if (!dgram) {
		abort();
	}
	memcpy(dgram, data, len);
	const struct slim_fb *fb = slim_console_core_fb(core);
	memcpy(before, fb->px, sizeof(before));
	enum slim_error err = slim_console_core_receive(core, dgram, len);
	if (err != SLIM_OK && memcmp(before, fb->px, sizeof(before)) != 0) {
		fprintf(stderr, "a rejected datagram (%s) changed the picture\n",
			slim_error_str(err));
		abort();
	}
	free(dgram);
}

/* Where the next datagram starts: the next magic after `from`, or the end. */
static size_t next_dgram(const uint8_t *data, size_t size, size_t from)
{
	static const uint8_t magic[4] = { 'S', 'L', 'I', 'M' };
	for (size_t i = from + 1; i + sizeof(magic) <= size; i++) {
		if (memcmp(data + i, magic, sizeof(magic)) == 0) {
			return i;
		}
	}
	return size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!core) {
		setup();
	}
	slim_console_core_hello(core, "fuzz", FUZZ_ASSOC);
	slim_audio_jitter_reset(speaker);
	size_t start = 0;
	int n = 0;
	do {
		size_t end = ++n < FUZZ_MAX_DGRAMS ? next_dgram(data, size, start) : size;
		feed(data + start, end - start);
		start = end;
	} while (start < size);
	return 0;
}
