/*
 * libFuzzer target: what a console (or anyone who can reach the server's
 * port) sends upstream, through slim_encoder_receive: the codec, ACK and
 * NACK handling, the repaint that NACKs trigger, and INPUT and HELD
 * through the compositor's input rule (input-seq.c), acknowledged with
 * INPUT_ACK as the compositor does, and MIC into a jitter buffer and the
 * Opus decoder as the compositor's microphone does. ACK and NACK also
 * reach a pacer (pacer.h) that every datagram goes through, as the
 * compositor's link does, which drops what waits now and then.
 *
 * The encoder is created once and has sent a first frame, so that ACKs and
 * NACKs meet real sequence history. When an input leaves lost datagrams to
 * repaint, the next frame is encoded at once, and every datagram the
 * encoder sends must be a valid downstream datagram for the screen.
 */
#include <pixman.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz-common.h"
#include "encoder.h"
#include "input-seq.h"
#include "pacer.h"
#include "slim-audio.h"
#include "slim-desk.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct slim_encoder *enc;
static struct slim_pacer *pacer;
static struct slim_input_seq input;
static bool input_seen;
static uint32_t pixels[FUZZ_W * FUZZ_H];
static const struct slim_fb fb = {
	.px = pixels, .width = FUZZ_W, .height = FUZZ_H, .stride = FUZZ_W,
};
static volatile uint32_t sink;
static struct slim_audio_jitter *mic;
static uint64_t mic_clock;
static bool mic_seen; /* the input's first MIC is a packet, the rest copies */

static void check_downstream(void *data, const uint8_t *buf, size_t len)
{
	fuzz_check_datagram(buf, len, false, "encoder");
}

/* The encoder's way out, as the link's: through the pacer. */
static void send_paced(void *data, const uint8_t *buf, size_t len)
{
	slim_pacer_send(pacer, buf, len, true, slim_now_us());
}

static void dropped(void *data, uint32_t first, uint32_t last)
{
	slim_encoder_dropped(enc, first, last);
}

/* What the compositor does with an event: here, look at every field. */
static void apply(void *data, const struct slim_wire_input *ev)
{
	sink = sink * 31 + ev->kind + ev->code + (uint32_t)ev->value + (uint32_t)ev->x +
		(uint32_t)ev->y + ev->time_ms;
}

/* Reads every field the caller of slim_encoder_receive would. */
static void other(void *data, const struct slim_cmd *cmd)
{
	if (cmd->type == SLIM_CMD_INPUT) {
		slim_input_seq_input(&input, cmd, apply, NULL);
		input_seen = true;
	} else if (cmd->type == SLIM_CMD_HELD) {
		slim_input_seq_held(&input, cmd, apply, NULL);
		input_seen = true;
	}
	uint32_t h = cmd->type;
	switch (cmd->type) {
	case SLIM_CMD_MIC: {
		/* as the compositor does: into the microphone's jitter buffer */
		struct slim_audio_packet p;
		slim_audio_packet_from_cmd(cmd, &p);
		if (mic_seen) {
			slim_audio_jitter_push_again(mic, &p);
			break;
		}
		mic_seen = true;
		slim_audio_jitter_push(mic, &p, ++mic_clock * 10000);
		int16_t pcm[SLIM_AUDIO_FRAME];
		slim_audio_jitter_pull(mic, pcm);
		h += (uint32_t)pcm[0];
		break;
	}
	case SLIM_CMD_AUDIO_REPORT:
		h += cmd->audio_report.received + cmd->audio_report.lost +
			cmd->audio_report.depth_ms + cmd->audio_report.jitter_us;
		break;
	case SLIM_CMD_HELLO:
		h += cmd->hello.version + cmd->hello.width + cmd->hello.height +
			cmd->hello.mtu + cmd->hello.caps;
		for (size_t i = 0; i < sizeof(cmd->hello.console_id); i++) {
			h = h * 31 + (uint8_t)cmd->hello.console_id[i];
		}
		/* the desk as the compositor takes it: heads, names, keyboard */
		struct slim_desk desk;
		slim_desk_from_wire(&desk, cmd->hello.width, cmd->hello.height, cmd->heads,
			cmd->n_heads, cmd->keyboard);
		for (uint32_t i = 0; i < desk.n_heads; i++) {
			h = h * 31 + desk.heads[i].width + desk.heads[i].mm_width +
				(uint32_t)strlen(desk.heads[i].name) + desk.heads[i].primary;
		}
		h += desk.has_keyboard + (uint32_t)strlen(desk.keyboard.options);
		break;
	case SLIM_CMD_INPUT:
		h += cmd->input.first;
		for (size_t i = 0; i < cmd->input.count; i++) {
			struct slim_wire_input ev;
			slim_input_get(cmd, i, &ev);
			h = h * 31 + ev.kind + ev.code + (uint32_t)ev.value +
				(uint32_t)ev.x + (uint32_t)ev.y + ev.time_ms;
		}
		break;
	case SLIM_CMD_HELD:
		h += cmd->held.next;
		for (size_t i = 0; i < cmd->held.count; i++) {
			h = h * 31 + slim_held_get(cmd, i);
		}
		break;
	case SLIM_CMD_ACK: {
		h += cmd->ack.frame + cmd->ack.highest_seq + (uint32_t)cmd->ack.echo_us;
		/* as the link does */
		uint64_t now = slim_now_us();
		uint64_t echo = cmd->ack.echo_us;
		slim_pacer_acked(pacer, cmd->ack.highest_seq, echo && echo <= now ? now - echo : 0,
			now);
		break;
	}
	case SLIM_CMD_NACK:
		for (size_t i = 0; i < cmd->nack.count; i++) {
			struct slim_wire_seq_range range;
			slim_nack_get(cmd, i, &range);
			h = h * 31 + range.first + range.last;
			slim_pacer_lost(pacer, range.first, range.last, slim_now_us());
		}
		break;
	}
	sink = h;
}

/* Something for every command to do: flat areas, text-like bits and noise. */
static void paint(void)
{
	uint32_t state = 1;
	for (uint32_t y = 0; y < FUZZ_H; y++) {
		for (uint32_t x = 0; x < FUZZ_W; x++) {
			uint32_t *p = &pixels[y * FUZZ_W + x];
			state = state * 1103515245 + 12345;
			if (y < 16) {
				*p = 0x00336699;
			} else if (y < 32) {
				*p = ((state >> 16) & 3) == 0 ? 0x00000000 : 0x00ffffff;
			} else {
				*p = state >> 8;
			}
		}
	}
}

static void setup(void)
{
	slim_log_init(SLIM_LOG_DEBUG, fuzz_quiet_log);
	paint();
	struct slim_encoder_config config = {
		.mtu = SLIM_DEFAULT_MTU,
		.assoc = FUZZ_ASSOC,
		.lz4 = true,
		.rgb888 = true,
		.palette = true,
		.zstd = true,
		.cache = true,
		.history = true,
		.detect_scroll = true,
	};
	pacer = slim_pacer_create(check_downstream, NULL);
	enc = slim_encoder_create(FUZZ_W, FUZZ_H, &config, send_paced, NULL);
	mic = slim_audio_jitter_create(1, 20, 200);
	if (!pacer || !enc || !mic) {
		abort();
	}
	pixman_region32_t damage;
	pixman_region32_init_rect(&damage, 0, 0, FUZZ_W, FUZZ_H);
	struct slim_frame frame = { .fb = &fb, .damage = &damage };
	slim_encoder_frame(enc, &frame);
	pixman_region32_fini(&damage);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!enc) {
		setup();
	}
	/* each input a new association's: numbers from 1, nothing held */
	slim_input_seq_release_all(&input, apply, NULL);
	slim_input_seq_reset(&input, 1);
	slim_audio_jitter_reset(mic);
	mic_seen = false;
	input_seen = false;
	/* libFuzzer hands over a buffer of exactly `size` bytes: ASan sees overruns. */
	slim_encoder_receive(enc, data, size, other, NULL);
	if (input_seen) {
		slim_encoder_input_ack(enc, slim_input_seq_next(&input));
		if (slim_input_seq_held_count(&input) > SLIM_HELD_MAX) {
			abort();
		}
	}
	if (slim_encoder_needs_frame(enc)) {
		struct slim_frame frame = { .fb = &fb };
		slim_encoder_frame(enc, &frame);
	}
	/* what the frame did not take along goes alone, and must be valid too */
	slim_encoder_flush_input_ack(enc);
	/* a newer frame now and then drops what waits; the rest leaves at the pace */
	if (size > 0 && (data[size - 1] & 1)) {
		slim_pacer_drop(pacer, dropped, NULL);
	}
	slim_pacer_run(pacer, slim_now_us());
	sink = slim_encoder_frames_in_flight(enc);
	return 0;
}
