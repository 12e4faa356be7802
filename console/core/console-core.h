/*
 * The console's protocol engine: takes datagrams from the server, applies
 * them to the shadow framebuffer, presents finished frames through a
 * backend and answers with ACK and NACK. It holds nothing the server
 * cannot rebuild: after a new HELLO the server repaints everything.
 */
#ifndef SLIM_CONSOLE_CORE_H
#define SLIM_CONSOLE_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend.h"
#include "input-queue.h"
#include "core-video.h"
#include "slim-codec.h"
#include "slim-desk.h"
#include "slim-history.h"
#include "slim-pixels.h"

struct slim_console_stats {
	uint64_t datagrams;   /* received, good or bad */
	uint64_t applied;
	uint64_t duplicates;
	uint64_t late;        /* overtaken by a later datagram, dropped */
	uint64_t frames;
	uint64_t errors[SLIM_ERR_COUNT];
	uint64_t bad;         /* sum of errors[] */
	uint64_t bytes;       /* of the datagrams applied */
	uint64_t audio;       /* AUDIO datagrams handed on (outside the sequence) */
	/* applied display commands by type (SLIM_CMD_FILL ... SLIM_CMD_CSCS) and their pixels */
	uint64_t commands[SLIM_CMD_CACHE_DRAW + 1];
	uint64_t pixels[SLIM_CMD_CACHE_DRAW + 1];
	/* the last CSCS image: its samples and the rectangle it was scaled to */
	uint16_t cscs_src_w, cscs_src_h, cscs_dst_w, cscs_dst_h;
	struct slim_input_stats input; /* input events sent, sent again, acknowledged, dropped */
};

struct slim_console_core;

/* What the program around the core may want to know; every member optional. */
struct slim_console_events {
	/* The server refused this association (reason: enum slim_refuse_reason). */
	void (*refused)(void *data, uint16_t reason, const char *text, size_t len);
	/* A frame was presented; `applied_us` on the console's clock. */
	void (*presented)(void *data, uint32_t frame, uint64_t applied_us);
	/*
	 * An AUDIO command of this association (sent at `time_us`, server
	 * clock); `again`: a copy of an earlier packet, sent with a later one.
	 */
	void (*audio)(void *data, const struct slim_cmd *cmd, bool again, uint64_t time_us);
};

struct slim_console_core *slim_console_core_create(uint32_t width, uint32_t height,
		uint16_t mtu, struct slim_console_backend *backend,
		slim_send_fn send, void *send_data);
void slim_console_core_destroy(struct slim_console_core *core);

void slim_console_core_set_events(struct slim_console_core *core,
		const struct slim_console_events *events, void *data);
/* Tells the server the console is still there (no answer unless it forgot us). */
void slim_console_core_ping(struct slim_console_core *core);

/* The HELLO this console says (also to the session manager). */
void slim_console_core_fill_hello(const struct slim_console_core *core,
		const char *console_id, struct slim_wire_hello *hello);
/*
 * Every HELLO from now on presents this attach token (from a REDIRECT);
 * NULL: none, as with a server that is not managed.
 */
void slim_console_core_set_token(struct slim_console_core *core,
		const uint8_t token[SLIM_ATTACH_TOKEN_LEN]);
/* Every HELLO from now on offers these too (SLIM_CAP_AUDIO, SLIM_CAP_MIC). */
void slim_console_core_set_caps(struct slim_console_core *core, uint32_t caps);
/*
 * Compressed video: `impl` decodes it, and HELLO announces `codecs` (n at
 * most SLIM_MAX_CODECS) from the next one on. NULL: none, CSCS only.
 */
void slim_console_core_set_video(struct slim_console_core *core,
		const struct slim_console_video_impl *impl, void *data,
		const struct slim_wire_codec *codecs, size_t n);
const struct slim_console_video_stats *slim_console_core_video_stats(
		const struct slim_console_core *core);
/* The longest a stream went without a picture since the last call (core-video.h). */
uint64_t slim_console_core_video_take_gap(struct slim_console_core *core);
/* Every HELLO from now on asks video to take at most `mbit` Mbit/s (0: no limit of ours). */
void slim_console_core_set_video_budget(struct slim_console_core *core, uint32_t mbit);
/* Starts a new association with the server and sends HELLO. */
void slim_console_core_hello(struct slim_console_core *core, const char *console_id,
		uint32_t assoc);
/*
 * Says HELLO again in the same association: the server repaints the whole
 * screen (the console lost its picture, e.g. to a VT switch) while the
 * sequence numbers go on.
 */
void slim_console_core_request_repaint(struct slim_console_core *core, const char *console_id);
/* Applies one datagram; a bad one is dropped whole and changes nothing. */
enum slim_error slim_console_core_receive(struct slim_console_core *core,
		const uint8_t *buf, size_t len);
/*
 * The same, for a datagram that arrived at `arrived_us` (slim_now_us's
 * clock, slim-net.h): the time since then is added to its ACK's echo, so
 * that the server's round trip leaves out the console's own wait.
 */
enum slim_error slim_console_core_receive_at(struct slim_console_core *core,
		const uint8_t *buf, size_t len, uint64_t arrived_us);
/*
 * The screen changed size: one head of width x height. Clears the picture;
 * say HELLO again after it.
 */
bool slim_console_core_resize(struct slim_console_core *core, uint32_t width, uint32_t height);
/*
 * The console's heads are `desk`'s (its keyboard aside): the screen is
 * their bounding box, cleared, and every HELLO from now on names them.
 * False if they are not a layout HELLO may carry (slim_desk_heads_valid).
 */
bool slim_console_core_set_heads(struct slim_console_core *core, const struct slim_desk *desk);
/* Every HELLO from now on says this keyboard; NULL: none (the server's default). */
void slim_console_core_set_keyboard(struct slim_console_core *core,
		const struct slim_keyboard *keyboard);
/* Its heads and keyboard, as HELLO says them. */
const struct slim_desk *slim_console_core_desk(const struct slim_console_core *core);
/*
 * Numbers the events and sends them with everything the server has not
 * acknowledged yet, and HELD (slim-protocol.md §7). False if some were
 * dropped because too many wait for an acknowledgement (or n is 0).
 */
bool slim_console_core_send_input(struct slim_console_core *core,
		const struct slim_wire_input *events, size_t n);
/* Input that goes nowhere (no server listens): only the keys held follow it. */
void slim_console_core_track_input(struct slim_console_core *core,
		const struct slim_wire_input *events, size_t n);
/*
 * Sends what is due at `now_us`: unacknowledged input after its
 * retransmission timeout, the held keys' keepalive. Only while attached.
 */
void slim_console_core_tick(struct slim_console_core *core, uint64_t now_us);
/* What a compressed datagram may name as its dictionary: to read one before the core does. */
struct slim_history *slim_console_core_history(struct slim_console_core *core);
/*
 * Hold the ACK of a frame without losses up to SLIM_ACK_DELAY_MS for the
 * next upstream datagram to carry (and say SLIM_CAP_ACK_DELAY in HELLO).
 * A second frame, or a loss to report, sends at once.
 */
void slim_console_core_set_ack_delay(struct slim_console_core *core, bool on);
/* Milliseconds until slim_console_core_tick has work; -1: none. */
int slim_console_core_timeout_ms(const struct slim_console_core *core, uint64_t now_us);
/* A card put on or taken off a reader (console/card.h finds them). */
bool slim_console_core_send_card(struct slim_console_core *core,
		const struct slim_wire_card *card);

/* How the console's playback fares (sent now if attached). */
bool slim_console_core_send_audio_report(struct slim_console_core *core,
		const struct slim_wire_audio_report *report);
/* The association, 0 if none; what MIC datagrams carry. */
uint32_t slim_console_core_assoc(const struct slim_console_core *core);

const struct slim_fb *slim_console_core_fb(const struct slim_console_core *core);
const struct slim_console_stats *slim_console_core_stats(const struct slim_console_core *core);
const struct slim_console_cursor *slim_console_core_cursor(const struct slim_console_core *core);

#endif
