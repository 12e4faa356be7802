/*
 * The link's insides, shared by link.c (the console's association: attach,
 * input, repair timers) and link-pace.c (what is sent and when: pacing,
 * the answer to input first, SLIM's allocation). Nothing else includes it.
 */
#ifndef SLIM_LINK_INTERNAL_H
#define SLIM_LINK_INTERNAL_H

#include "input-seq.h"
#include "link.h"
#include "pacer.h"
#include "slim-log.h"

/* Tokens the session manager may have handed out and not yet seen used. */
#define LINK_MAX_EXPECTED 8

/* --managed: a one-time token, the console the manager gave it to, and its key. */
struct slim_expected {
	bool valid;
	uint8_t token[SLIM_ATTACH_TOKEN_LEN];
	char console_id[SLIM_CONSOLE_ID_LEN];
	uint8_t key[SLIM_SEC_KEY_LEN];
};

struct slim_link {
	int fd;
	struct wl_event_source *readable, *ack_timer, *sec_timer;
	const struct slim_link_handler *handler;
	void *data;
	struct slim_sec_server *sec;
	uint8_t pairing_key[SLIM_SEC_KEY_LEN];

	bool managed;
	struct slim_expected expected[LINK_MAX_EXPECTED];
	size_t next_expected; /* the slot the next token takes when all are full */

	bool attached;
	/*
	 * --managed: the token the attached console came with. It renews the
	 * console's association (a new one after its screen changed size), and
	 * no other console's.
	 */
	bool has_token;
	uint8_t token[SLIM_ATTACH_TOKEN_LEN];
	uint8_t key[SLIM_SEC_KEY_LEN];
	/* the attached console's connection; NULL while it makes a new one */
	struct slim_sec_conn *conn;
	uint32_t assoc;
	char console_id[SLIM_CONSOLE_ID_LEN + 1];
	uint64_t last_heard_us;
	uint64_t arrived_us; /* when the datagram being handled arrived (slim-net.h) */
	uint64_t reported_us; /* when the link was last reported (0: not for this association) */
	uint32_t timeouts;
	struct slim_encoder *enc;
	/* while detached, the last association's: the next one takes over its memory */
	struct slim_encoder *spare;
	uint32_t video_mbit; /* the console's video budget (HELLO); 0: none said */
	uint16_t mtu;        /* the attached console's, for what goes outside the encoder */
	bool ack_delay;      /* it may hold an ACK SLIM_ACK_DELAY_MS (HELLO) */
	/*
	 * A datagram from the console is being handled: the pointer it moved
	 * goes out after it, with the INPUT_ACK, in one datagram; or, when it
	 * drags a window, with the next frame (pointer_in_frame), and the
	 * INPUT_ACK waits for that frame too.
	 */
	bool receiving, cursor_moved, pointer_in_frame;

	/* sound: coded for the attached console if it plays it */
	enum slim_audio_codec audio_codec;
	int audio_bitrate;
	struct slim_audio_encoder *audio_enc;
	struct slim_audio_sender audio_sender;
	struct slim_wire_audio_report audio_report;

	/* the attached console's input: numbers, keys held, and their timers */
	struct slim_input_seq input;
	bool input_seen;      /* the datagram being handled carried INPUT or HELD */
	bool mic_seen;        /* ... and MIC: the next MIC is a copy */
	struct wl_event_source *input_ack_timer, *held_timer;
	bool input_ack_armed, held_timer_armed;

	/* what goes out waits for the link's pace (pacer.h) */
	struct slim_pacer *pacer;
	struct wl_event_source *pace_timer;
	bool droppable;        /* the frame being encoded gives way to newer pixels */
	bool answer_pending;   /* input came that no frame has answered yet */
	uint64_t input_us;
	/* the desktop's exact pixels, bit/s over the last second: its claim on the link */
	uint64_t exact_bps, exact_bytes, exact_since_us;

	uint64_t bytes_sent;
	uint8_t buf[SLIM_MAX_MTU];
	struct slim_ratelimit log_limit;
};

/* link-pace.c */
/* The encoder's and the sound's way out: through the pacer. */
void link_send_to_peer(void *data, const uint8_t *buf, size_t len);
/* The pacer's way out: the attached console's connection. */
void link_send_paced(void *data, const uint8_t *buf, size_t len);
int link_handle_pace_timer(void *data);
void link_drop_backlog(struct slim_link *link);
/* How long a frame's ACK may take before what it carried counts as lost. */
int link_ack_timeout_ms(const struct slim_link *link);

#endif
