/*
 * The link's insides, by concern, each part kept by one file: the wire
 * and what comes in over it (link.c), who may attach and the console
 * attached (link-attach.c), its input and where the INPUT_ACK lands
 * (link-input.c), what is sent and when (link-pace.c), and the sound
 * (link-sound.c). Nothing outside those files includes it.
 */
#ifndef SLIM_LINK_INTERNAL_H
#define SLIM_LINK_INTERNAL_H

#include "input-seq.h"
#include "link.h"
#include "pacer.h"
#include "slim-log.h"

/* A console we have not heard from for this long may be replaced by another. */
#define LINK_SILENCE_US (10 * 1000000ull)

/* link.c: one UDP socket, every console on it through the secure layer. */
struct link_wire {
	int fd;
	struct wl_event_source *readable;
	struct wl_event_source *timer; /* the secure layer's: handshakes, idle connections */
	struct slim_sec_server *sec;
	uint64_t arrived_us; /* when the datagram being handled arrived (slim-net.h) */
	uint64_t console_us; /* ... and when the console sent it, on its clock */
	uint64_t bytes_sent;
	uint8_t buf[SLIM_MAX_MTU];
};

/* Outside any sequence: on the connection that asked, in its association. */
void link_refuse(struct slim_link *link, struct slim_sec_conn *conn, uint32_t assoc,
		uint16_t reason, const char *text);
/* An error the network can provoke, rate-limited. */
void link_log_limited(struct slim_link *link, const char *what, const char *why);

/* link-attach.c */

/* Tokens the session manager may have handed out and not yet seen used. */
#define LINK_MAX_EXPECTED 8

/* --managed: a one-time token, the console the manager gave it to, and its key. */
struct slim_expected {
	bool valid;
	uint8_t token[SLIM_ATTACH_TOKEN_LEN];
	char console_id[SLIM_CONSOLE_ID_LEN];
	uint8_t key[SLIM_SEC_KEY_LEN];
};

/* Who may attach: with the pairing key, or managed, a token from the manager. */
struct link_keys {
	bool managed;
	uint8_t pairing_key[SLIM_SEC_KEY_LEN];
	struct slim_expected expected[LINK_MAX_EXPECTED];
	size_t next_expected; /* the slot the next token takes when all are full */
};

/* The console attached, its association, and what it said in its HELLO. */
struct link_console {
	bool attached;
	/*
	 * --managed: the token the attached console came with (a console
	 * attaches managed with no other). It renews the console's association
	 * (a new one after its screen changed size), and no other console's.
	 */
	uint8_t token[SLIM_ATTACH_TOKEN_LEN];
	uint8_t key[SLIM_SEC_KEY_LEN];
	/* the attached console's connection; NULL while it makes a new one */
	struct slim_sec_conn *conn;
	uint32_t assoc;
	char console_id[SLIM_CONSOLE_ID_LEN + 1];
	uint64_t last_heard_us;
	uint32_t timeouts;   /* frame ACKs that did not come in a row */
	uint32_t video_mbit; /* the console's video budget (HELLO); 0: none said */
	uint16_t mtu;        /* the console's, for what goes outside the encoder */
	bool ack_delay;      /* it may hold an ACK SLIM_ACK_DELAY_MS (HELLO) */
	bool has_h264;       /* it decodes H.264 up to these limits (HELLO) */
	struct slim_wire_codec h264;
};

/* A HELLO outside the attached console's association: it may start one. */
void link_attach(struct slim_link *link, struct slim_sec_conn *conn, uint32_t assoc,
		const struct slim_cmd *cmd);
/* A connection's pre-shared key: the pairing key, or an attach's from the manager. */
/* The spare encoder's time is up: freed. */
int link_handle_spare_timeout(void *data);
bool link_psk_lookup(void *data, const char *identity, uint8_t key[SLIM_SEC_KEY_LEN]);
/* A connection closed: the attached console's goes, or is being renewed. */
void link_handle_conn_closed(void *data, struct slim_sec_conn *conn, const char *why);

/* link-input.c */

/*
 * Where the INPUT_ACK for the console's datagram being handled lands, and
 * the pointer its input moved (link_input_transition).
 */
enum link_ack_place {
	LINK_ACK_IDLE,          /* no datagram is being handled: a pointer moved goes at once */
	LINK_ACK_NEXT,          /* the next datagram sent within LINK_INPUT_ACK_MS, or alone */
	LINK_ACK_POINTER,       /* the pointer the input moved, right after the datagram */
	LINK_ACK_FRAME,         /* the next frame, which moves a window and the pointer with it */
	LINK_ACK_POINTER_FRAME, /* both (a drag began or ended): the pointer's, right after */
};

enum link_input_event {
	LINK_DATAGRAM_IN,        /* a datagram from the attached console is to be handled */
	LINK_POINTER_MOVED,      /* the pointer moved */
	LINK_POINTER_WITH_FRAME, /* ... with a window being moved or resized */
	/* handled, or refused: then it applied nothing (the encoder checks it whole first) */
	LINK_DATAGRAM_DONE,
};

/* The attached console's input: numbers, keys held, and their timers. */
struct link_input {
	struct slim_input_seq seq;
	bool seen; /* the datagram being handled carried INPUT or HELD */
	enum link_ack_place ack;
	struct wl_event_source *ack_timer, *held_timer;
	bool ack_armed, held_armed;
};

/* INPUT and HELD: each event once, in order, at once. */
void link_input_command(struct slim_link *link, const struct slim_cmd *cmd);
void link_input_transition(struct slim_link *link, enum link_input_event event);
/* Whatever the console held is let go: it will never send the releases. */
void link_input_release(struct slim_link *link);
/* A new association numbers its input from 1, and holds nothing yet. */
void link_input_restart(struct slim_link *link);
int link_handle_input_ack_timeout(void *data);
int link_handle_held_timeout(void *data);

/* link-pace.c */

/* What goes out waits for the link's pace (pacer.h); frames for their ACKs. */
struct link_pace {
	struct slim_pacer *pacer;
	struct wl_event_source *timer, *ack_timer;
	struct wl_event_source *report_timer; /* a keystroke's time, not yet reported */
	bool droppable;      /* the frame being encoded gives way to newer pixels */
	bool answer_pending; /* input came that no frame has answered yet */
	uint64_t input_us;
	/* the desktop's exact pixels, bit/s over the last second: its claim on the link */
	uint64_t exact_bps, exact_bytes, exact_since_us;
	uint64_t reported_us; /* when the link was last reported (0: not for this association) */
	/*
	 * One keystroke at a time is timed: its datagram's time, then the
	 * frame that answered it, then that frame's presentation (its ACK).
	 */
	enum { LINK_KEY_IDLE, LINK_KEY_FRAME, LINK_KEY_ACK } key_state;
	uint64_t key_console_us, key_us;
	uint32_t key_frame;
	struct slim_key_latency keys;
};

/* The encoder's and the sound's way out: through the pacer. */
void link_send_to_peer(void *data, const uint8_t *buf, size_t len);
/* The pacer's way out: the attached console's connection. */
void link_send_paced(void *data, const uint8_t *buf, size_t len);
int link_handle_pace_timer(void *data);
void link_drop_backlog(struct slim_link *link);
/* An ACK: the pacer learns the link from it, and the manager hears of it now and then. */
void link_pace_acked(struct slim_link *link, const struct slim_cmd *cmd);
/* Input came: the next frame answers it. */
void link_pace_input(struct slim_link *link);
/* The manager hears of the link now: a keystroke's time was waiting. */
int link_handle_report_timer(void *data);
/* A key was pressed (in the datagram being handled): time it if nothing else is. */
void link_pace_key(struct slim_link *link);
/* A new association: its link is learnt again, and nothing of the old one waits. */
void link_pace_restart(struct slim_link *link, uint64_t now);
/* The console went: nothing waits for it. */
void link_pace_stop(struct slim_link *link);

/* link-sound.c */

/* Sound: coded for the attached console if it plays it, and its microphone. */
struct link_sound {
	enum slim_audio_codec codec;
	int bitrate;
	struct slim_audio_encoder *enc;
	struct slim_audio_sender sender;
	struct slim_wire_audio_report report;
	bool mic_seen; /* the datagram being handled carried MIC: the next MIC is a copy */
};

/* A new association: a stream of its own, if the console plays sound (its caps). */
void link_sound_restart(struct slim_link *link, uint32_t caps, const char *id);
void link_sound_stop(struct slim_link *link);
/* MIC and AUDIO_REPORT. */
void link_sound_command(struct slim_link *link, const struct slim_cmd *cmd);

struct slim_link {
	const struct slim_link_handler *handler;
	void *data;
	struct link_wire wire;       /* link.c */
	struct link_keys keys;       /* link-attach.c */
	struct link_console console; /* link-attach.c */
	/* the attached console's; every part sends through it */
	struct slim_encoder *enc;
	/*
	 * Just detached, the last association's: the next one, coming within
	 * LINK_SPARE_MS (a card tapped at another desk), takes over its
	 * memory; after that it is freed, and a detached session holds no
	 * model of a console.
	 */
	struct slim_encoder *spare;
	struct wl_event_source *spare_timer;
	struct link_input input;     /* link-input.c */
	struct link_pace pace;       /* link-pace.c */
	struct link_sound sound;     /* link-sound.c */
	struct slim_ratelimit log_limit;
};

#endif
