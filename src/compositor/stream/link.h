/*
 * The compositor's end of the wire: one UDP socket, at most one console.
 *
 * A console says HELLO and becomes this session's console; the link then
 * owns the encoder for it, paces frames by its ACKs (at most
 * LINK_MAX_IN_FLIGHT frames unacknowledged: while the console is behind,
 * damage keeps piling up in the scene and the newest pixels win), sends
 * their datagrams no faster than the console's link drains them (pacer.h;
 * an answer to input goes first), repairs
 * losses, and hands the console's input to the compositor: each event once
 * and in order, acknowledged with INPUT_ACK, and whatever the console held
 * released when it goes away or falls silent (input-seq.h). A second console
 * is refused politely, unless the first has been silent for a long while.
 *
 * Managed (--managed), the session manager chooses instead: a HELLO is
 * accepted only with a one-time token the manager said to expect for that
 * console, and that console replaces whichever one is attached.
 *
 * Every console speaks through the secure transport (slim-secure.h): a
 * DTLS connection with a pre-shared key, the attach's key the manager
 * handed over with the token (managed), or the session's pairing key
 * (standalone). Nothing reaches the encoder or the seat from anyone who
 * has not completed that handshake, and consoles are told apart by their
 * connection, never by an address.
 *
 * No wlroots here: only the Wayland event loop.
 */
#ifndef SLIM_LINK_H
#define SLIM_LINK_H

#include <stdbool.h>
#include <stdint.h>
#include <wayland-server-core.h>
#include "encoder.h"
#include "pacer.h"
#include "slim-audio.h"
#include "slim-desk.h"
#include "slim-key-latency.h"
#include "slim-secure.h"

#define LINK_MAX_IN_FLIGHT 2

struct slim_link_handler {
	/*
	 * A console attached (or re-attached): its screen is `desk`'s heads'
	 * bounds, and its keyboard `desk`'s (slim-desk.h).
	 */
	void (*attached)(void *data, const char *console_id, const struct slim_desk *desk);
	void (*detached)(void *data, const char *console_id);
	/*
	 * Optional: no console came back within a few seconds of the last
	 * one leaving, and its encoder was freed: what else only a console
	 * needs can go too.
	 */
	void (*released)(void *data);
	void (*input)(void *data, const struct slim_wire_input *ev);
	/* The link can take a frame it could not take before, or must repair one. */
	void (*want_frame)(void *data);
	/* The attached console reported how its playback fares (slim_link_audio_stats). */
	void (*audio_report)(void *data);
	/* A packet of the attached console's microphone; `again`: a copy of an earlier one. */
	void (*microphone)(void *data, const struct slim_audio_packet *p, bool again);
	/*
	 * What the pacer knows of the attached console's link, for the
	 * session manager: at an ACK, at most every 2 s (slim_link_pacer_stats).
	 */
	void (*link_report)(void *data);
	/* The attached console lost what compressed stream `stream` needs (VIDEO_RECOVER). */
	void (*video_recover)(void *data, uint8_t stream);
};

struct slim_link_config {
	const char *listen; /* ADDRESS:PORT; port 0 takes any free one (see slim_link_port) */
	bool managed;
	enum slim_sec_mode mode;
	/* standalone DTLS: the key consoles pair with */
	uint8_t pairing_key[SLIM_SEC_KEY_LEN];
	/* sound to consoles that play it: Opus at audio_bitrate bit/s, or PCM */
	enum slim_audio_codec audio_codec;
	int audio_bitrate;
};

struct slim_link;

/* `config` is copied. */
struct slim_link *slim_link_create(struct wl_event_loop *loop, const struct slim_link_config *config,
		const struct slim_link_handler *handler, void *data);
void slim_link_destroy(struct slim_link *link);

/* The UDP port the link bound. */
uint16_t slim_link_port(const struct slim_link *link);
/*
 * Managed: the next HELLO with `token` from `console_id` (NUL-padded)
 * attaches, once, over a connection made with `key`.
 */
void slim_link_expect(struct slim_link *link, const uint8_t token[SLIM_ATTACH_TOKEN_LEN],
		const char console_id[SLIM_CONSOLE_ID_LEN], const uint8_t key[SLIM_SEC_KEY_LEN]);
/* Lets the attached console go (the manager shows it something else). */
void slim_link_detach(struct slim_link *link, const char *why);

/* What the attached console decodes of H.264 (HELLO), or NULL. */
const struct slim_wire_codec *slim_link_h264(const struct slim_link *link);
/* The encoder of the attached console, or NULL. */
struct slim_encoder *slim_link_encoder(struct slim_link *link);
/* Whether a frame may be sent now (a console is attached and not too far behind). */
bool slim_link_ready(const struct slim_link *link);
/* Input came from the console that no frame has answered yet (and not long ago). */
bool slim_link_answer_pending(const struct slim_link *link);
/*
 * Encodes and sends a frame; returns datagrams sent. `answer`: it answers
 * input (exact pixels that changed since): it goes ahead of every
 * droppable datagram still waiting, which it drops, and is never dropped
 * itself. Other frames give way to newer pixels while they wait.
 */
size_t slim_link_send_frame(struct slim_link *link, const struct slim_frame *frame,
		bool answer);
/* Cursor changes go out at once: the console moves the pointer without a frame. */
void slim_link_cursor_image(struct slim_link *link, const uint32_t *argb, uint32_t w,
		uint32_t h, uint32_t hot_x, uint32_t hot_y);
/*
 * The same for the position, or, moved by the console's input, with the
 * next frame (with_frame): a window dragged moves in the frame, and the
 * pointer with it costs no datagram of its own.
 */
void slim_link_cursor_pos(struct slim_link *link, int32_t x, int32_t y, bool visible,
		bool with_frame);
/* The screen was resized to what the console asked for: repaint everything. */
void slim_link_resized(struct slim_link *link, uint32_t width, uint32_t height);

/*
 * 10 ms of the session's sound (SLIM_AUDIO_FRAME stereo samples): coded
 * and sent at once, ahead of any pixels still to come, if the attached
 * console plays sound; dropped otherwise.
 */
void slim_link_send_audio(struct slim_link *link, const int16_t *pcm);

/* What the attached console is sent and reports of its sound. */
struct slim_link_audio_stats {
	enum slim_audio_codec codec;
	int bitrate;        /* bit/s; PCM: what it takes */
	/* from the console's last AUDIO_REPORT (zero before one) */
	uint32_t depth_ms;
	uint32_t received, repaired, lost;
};
void slim_link_audio_stats(const struct slim_link *link, struct slim_link_audio_stats *stats);

/* The pacer's estimate of the attached console's link, and what waits for it. */
const struct slim_pacer_stats *slim_link_pacer_stats(const struct slim_link *link);

/* The attached console's id (NUL-padded), or NULL. */
const char *slim_link_console_id(const struct slim_link *link);

/*
 * The bits a second video may take on the attached console's link, asking
 * for demand_bps: the console's own limit (HELLO) and a share of the rate
 * its link was measured at (SLIM §7, beside the desktop's pixels and the
 * sound). 0: no limit known.
 */
uint64_t slim_link_video_budget(const struct slim_link *link, uint64_t demand_bps);

/* Bytes sent downstream since the link was created (tests and benchmarks). */
uint64_t slim_link_bytes_sent(const struct slim_link *link);

/* Keystroke to pixels on the attached console, this association (slim-key-latency.h). */
const struct slim_key_latency *slim_link_key_latency(const struct slim_link *link);

#endif
