/*
 * The server side of the wire: turns a framebuffer and its damage into
 * display commands for one console, and repairs what the network lost.
 *
 * The encoder keeps a model of the console's screen (what it shows if
 * every datagram sent so far arrives) and updates it with the very
 * functions the console uses (slim-pixels.h). Damage is refined against
 * the model, so pixels a client repainted unchanged are never sent.
 *
 * No allocation happens per frame in the steady state; loss recovery may
 * allocate while it builds the region to repaint.
 */
#ifndef SLIM_ENCODER_H
#define SLIM_ENCODER_H

#include <pixman.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-codec.h"
#include "slim-pixels.h"
#include "slim-video.h"

struct slim_encoder_config {
	uint16_t mtu;      /* datagram size, header included; 0: SLIM_DEFAULT_MTU */
	uint32_t assoc;    /* the console's association id, from its HELLO */
	bool lz4;          /* console can expand LZ4 */
	bool rgb888;       /* SET pixels as 3 bytes */
	bool cscs;         /* console applies CSCS: without it, YUV images are ignored */
	bool palette;      /* console applies PALETTE */
	bool zstd;         /* console expands SLIM_DGRAM_ZSTD datagrams */
	bool cache;        /* console keeps SLIM_CACHE_SLOTS slots */
	bool history;      /* with zstd: console keeps what it applied, for dictionaries */
	bool detect_scroll;
};

/* A part of the screen that moved: what was at src is now at src + (dx, dy). */
struct slim_move_hint {
	struct slim_rect src;
	int32_t dx, dy;
};

/* A YUV 4:2:0 image to be shown scaled to dst through CSCS. */
struct slim_yuv_image {
	const uint8_t *y, *u, *v;
	size_t y_stride, c_stride;
	uint16_t width, height;
	struct slim_rect dst; /* may extend past the right and bottom edges; clipped */
	uint8_t depth;        /* SLIM_CSCS_DEPTH8 or SLIM_CSCS_DEPTH4 */
};

/*
 * CSCS from the server's own pixels (yuv.c): `box` of fb as YUV 4:2:0 of
 * w x h samples (at most the box; fewer are box-filtered), depth 8, to be
 * shown over the box. The planes live in `planes`, which grows as needed
 * and is reused: a playing video allocates nothing per frame.
 */
struct slim_yuv_planes {
	uint8_t *data;
	size_t size;
};
bool slim_yuv_from_fb(struct slim_yuv_image *img, struct slim_yuv_planes *planes,
		const struct slim_fb *fb, struct slim_rect box, uint16_t w, uint16_t h);
void slim_yuv_planes_finish(struct slim_yuv_planes *planes);
/* Bits a second a video of samples_per_s source samples costs on the wire. */
uint64_t slim_yuv_bps(uint64_t samples_per_s);
/* The source size that keeps a box_w x box_h video at `fps` within bits_per_s. */
void slim_yuv_fit(uint64_t bits_per_s, uint32_t fps, uint32_t box_w, uint32_t box_h,
		uint16_t *w, uint16_t *h);

struct slim_frame {
	const struct slim_fb *fb; /* the server's pixels, XRGB8888; X is ignored */
	const pixman_region32_t *damage; /* may over-report; may be NULL */
	const struct slim_move_hint *moves;
	size_t n_moves;
	const struct slim_yuv_image *yuv;
	size_t n_yuv;
	/*
	 * Where a video's pictures go (CSCS): what changed or was lost there
	 * waits for the next picture, which repaints it, rather than going
	 * as exact pixels now. Ignored by a console without CSCS. May be NULL.
	 */
	const pixman_region32_t *defer;
	uint64_t damage_us; /* when the first damage of this frame arrived; 0: now */
	/*
	 * Compressed pictures (slim-video.h), sent after the CSCS images;
	 * their clip rectangles are left to them as the images' are. Ignored
	 * by a console that announced no codec (the caller's to know).
	 */
	const struct slim_video_picture *pictures;
	size_t n_pictures;
	/* streams (bit n: stream n) that ended since the last frame: nothing of theirs is sent again */
	uint8_t video_ended;
	/*
	 * The frame answers input (exact pixels only, ahead of the video):
	 * lost fragments wait for the next frame, which carries pictures.
	 */
	bool answer;
};

enum slim_stat_kind {
	SLIM_STAT_FILL,
	SLIM_STAT_SET,
	SLIM_STAT_SET_LZ4,
	SLIM_STAT_BITMAP,
	SLIM_STAT_COPY,
	SLIM_STAT_CSCS,
	SLIM_STAT_PALETTE,
	SLIM_STAT_CACHE_DRAW,
	SLIM_STAT_VIDEO,
	SLIM_STAT_OTHER,
	SLIM_STAT_KINDS,
};

struct slim_encoder_stats {
	uint64_t frames, datagrams, bytes;
	uint64_t compressed;     /* datagrams that went through zstd */
	uint64_t with_history;   /* of them, those with earlier datagrams as the dictionary */
	uint64_t chained;        /* of those, the ones naming their frame's earlier datagrams */
	uint64_t split;          /* filled past what fit compressed: the rest moved on */
	uint64_t cache_stores;   /* tiles the console was told to keep */
	uint64_t commands[SLIM_STAT_KINDS];
	uint64_t cmd_bytes[SLIM_STAT_KINDS];
	uint64_t cmd_pixels[SLIM_STAT_KINDS];
	uint64_t damaged_pixels; /* what the frame's damage covered */
	uint64_t changed_pixels; /* what refinement kept of it */
	uint64_t recovered_seqs; /* datagrams reported lost and repainted */
	uint64_t repaints;       /* whole-screen repaints */
	uint64_t video_pictures; /* compressed pictures sent */
	uint64_t video_resent;   /* their fragments sent again after a loss */
	uint64_t bad_upstream;   /* upstream commands ignored */
	uint32_t last_frame, acked_frame;
	uint64_t rtt_us;         /* latest round trip measured by an ACK */
};

struct slim_encoder;

struct slim_encoder *slim_encoder_create(uint32_t width, uint32_t height,
		const struct slim_encoder_config *config, slim_send_fn send, void *send_data);
/*
 * slim_encoder_create for a console's next association after `old`'s, which
 * it destroys (NULL: as slim_encoder_create). The new encoder knows
 * nothing of the old one, but for a screen of the same size it takes over
 * its largest buffers (the model, loss recovery's rings: 12 MiB at
 * 1920x1080): memory fresh from the kernel costs a page fault every 4 KiB,
 * all of them on the way to the console's first picture.
 */
struct slim_encoder *slim_encoder_create_from(struct slim_encoder *old, uint32_t width,
		uint32_t height, const struct slim_encoder_config *config, slim_send_fn send,
		void *send_data);
void slim_encoder_destroy(struct slim_encoder *enc);

/* A new screen size, or a console that said HELLO: everything is sent again. */
bool slim_encoder_resize(struct slim_encoder *enc, uint32_t width, uint32_t height);
void slim_encoder_repaint(struct slim_encoder *enc);

/*
 * Encodes and sends one frame. Returns the number of datagrams sent: 0 when
 * nothing differs from what the console shows (an idle session sends nothing).
 */
size_t slim_encoder_frame(struct slim_encoder *enc, const struct slim_frame *frame);

/*
 * The pointer, drawn by the console itself so that motion costs no round
 * trip. Image: ARGB8888 premultiplied, at most SLIM_CURSOR_MAX square.
 * Changes go out at the next slim_encoder_flush_cursor or frame, and again
 * if the datagrams carrying them are lost.
 */
bool slim_encoder_cursor_image(struct slim_encoder *enc, const uint32_t *argb,
		uint32_t w, uint32_t h, uint32_t hot_x, uint32_t hot_y);
void slim_encoder_cursor_pos(struct slim_encoder *enc, int32_t x, int32_t y, bool visible);
/* Sends what changed of the cursor now; returns the number of datagrams. */
size_t slim_encoder_flush_cursor(struct slim_encoder *enc);

/*
 * The console's input numbered below `next` has been applied: the next
 * datagram the encoder sends carries INPUT_ACK first (a later call before
 * then updates it). Nothing is sent now; see slim_encoder_flush_input_ack.
 */
void slim_encoder_input_ack(struct slim_encoder *enc, uint32_t next);
/*
 * Sends a pending INPUT_ACK alone, for when no frame or cursor datagram
 * took it along soon enough. Returns the number of datagrams sent (0 or 1).
 */
size_t slim_encoder_flush_input_ack(struct slim_encoder *enc);

/* True when lost datagrams are waiting to be repainted by the next frame. */
bool slim_encoder_needs_frame(const struct slim_encoder *enc);

/* Upstream: ACK and NACK from the console (other commands are the caller's). */
void slim_encoder_handle_ack(struct slim_encoder *enc, const struct slim_wire_ack *ack);
void slim_encoder_handle_nack(struct slim_encoder *enc, const struct slim_cmd *nack);

/*
 * Datagrams first..last were never sent (the pacer dropped them for newer
 * pixels): their areas are repainted like lost ones, and a frame whose end
 * was among them is no longer waited for.
 */
void slim_encoder_dropped(struct slim_encoder *enc, uint32_t first, uint32_t last);

/*
 * No ACK came in time (the caller's timer): everything not yet confirmed is
 * treated as lost and repainted by the next frame. This is what repairs the
 * loss of a frame's last datagram, which no later datagram reveals.
 */
void slim_encoder_timeout(struct slim_encoder *enc);

/* Frames sent and not yet acknowledged. */
uint32_t slim_encoder_frames_in_flight(const struct slim_encoder *enc);

const struct slim_encoder_stats *slim_encoder_stats(const struct slim_encoder *enc);
/* The encoder's model of the console's screen. */
const struct slim_fb *slim_encoder_model(const struct slim_encoder *enc);

/*
 * Decodes one upstream datagram and handles its ACK and NACK commands;
 * every command is then passed to `other` in order (ACK and NACK after the
 * encoder handled them, for the caller's pacing). A bad
 * datagram is dropped whole, counted, and logged at a limited rate.
 */
enum slim_error slim_encoder_receive(struct slim_encoder *enc, const uint8_t *buf,
		size_t len, void (*other)(void *data, const struct slim_cmd *cmd), void *data);

#endif
