/*
 * Inside the encoder: the pieces encoder.c wires together.
 *
 *   scroll.c     vertical scrolls found by hashing rows -> COPY
 *   classify.c   damage refined against the model tile by tile, each
 *                changed area sent as FILL, BITMAP, PALETTE or SET
 *   palette.c    tiles of up to 127 colours: a table and indices, packed
 *                or in runs, whichever is smaller
 *   cache.c      which tiles the console keeps, and which it has for sure
 *   cscs-split.c YUV images cut into self-contained CSCS pieces
 *   packer.c     commands batched into datagrams; each command is also
 *                applied to the model, and its area noted for recovery
 *   recovery.c   what each datagram painted; NACK/ACK -> what to repaint
 */
#ifndef SLIM_ENCODER_INTERNAL_H
#define SLIM_ENCODER_INTERNAL_H

#include <lz4.h>
#include "encoder.h"
#include "slim-log.h"
#include "slim-zstd.h"

/*
 * Damage is examined in tiles of this size: wide tiles compare fast, and
 * 64x16 of two-colour text costs 128 bytes as a BITMAP against 3 KiB raw.
 */
#define TILE_W 64
#define TILE_H 16
#define TILE_PIXELS (TILE_W * TILE_H)
/* Slots of palette.c's colour lookup: a power of two, well above SLIM_PALETTE_MAX. */
#define PALETTE_HASH 512

/* cache.c */

#define CACHE_HASH_BYTES 16
/* cache_lookup: not kept, or kept by a datagram not yet confirmed */
#define CACHE_MISS (-1)
#define CACHE_STORING (-2)

struct encoder_cache;
struct encoder_cache *cache_create(void);
void cache_destroy(struct encoder_cache *c);
/* A new console: it has nothing. */
void cache_reset(struct encoder_cache *c);
/* The slot the console has `r` of fb in, or CACHE_MISS or CACHE_STORING; `hash` is r's. */
int cache_lookup(struct encoder_cache *c, const struct slim_fb *fb, struct slim_rect r,
		uint8_t *hash);
/* Whether a tile is worth keeping: the second time it is sent. */
bool cache_admit(struct encoder_cache *c, const uint8_t *hash);
/* A slot for the tile, stored by datagram `seq`; -1 when none can be had now. */
int cache_store(struct encoder_cache *c, const uint8_t *hash, struct slim_rect r, uint32_t seq);
/* The store into `slot` moved from datagram `from` to `to` (packer.c's split). */
void cache_moved(struct encoder_cache *c, uint16_t slot, uint32_t from, uint32_t to);
/*
 * Datagrams from `first` on were lost: stores since then that kept pixels
 * of `wrong` (NULL: of anywhere) may have kept the console's stale ones.
 */
void cache_lost(struct encoder_cache *c, uint32_t first, const pixman_region32_t *wrong);
/* Every datagram up to `confirmed` has arrived or been reported lost. */
void cache_confirm(struct encoder_cache *c, uint32_t confirmed);

/* recovery.c */

#define REC_RING 16384  /* datagrams remembered */
#define REC_RECTS 30    /* rectangles remembered per datagram before merging */
#define COPY_RING 16384 /* COPY commands remembered */

enum rec_state {
	REC_EMPTY,
	REC_SENT,
	REC_CONFIRMED,
	REC_RECOVERED,
};

struct seq_record {
	uint32_t seq;
	uint8_t state;
	uint8_t n;
	bool cursor; /* carried cursor commands */
	struct slim_rect r[REC_RECTS];
};

struct copy_entry {
	uint32_t seq;
	struct slim_rect src;
	uint16_t dx, dy;
};

struct slim_recovery {
	struct seq_record *records;
	struct copy_entry *copies;
	uint64_t copies_logged;
	uint32_t confirmed; /* every number up to this is known received or lost */
	uint32_t last_sent;
	uint32_t width, height;
	pixman_region32_t repair; /* lost areas waiting to be repainted */
	struct encoder_cache *cache; /* told of losses and confirmations; may be NULL */
	bool repaint_all;
	bool cursor_lost;
};

bool recovery_init(struct slim_recovery *rec, uint32_t width, uint32_t height);
void recovery_finish(struct slim_recovery *rec);
void recovery_reset(struct slim_recovery *rec, uint32_t width, uint32_t height);
void recovery_begin_dgram(struct slim_recovery *rec, uint32_t seq);
void recovery_note(struct slim_recovery *rec, uint32_t seq, struct slim_rect r);
void recovery_note_copy(struct slim_recovery *rec, uint32_t seq, struct slim_rect src,
		uint16_t dx, uint16_t dy);
/* Returns how many datagrams were newly found lost. */
uint32_t recovery_lost(struct slim_recovery *rec, uint32_t first, uint32_t last);
uint32_t recovery_ack(struct slim_recovery *rec, uint32_t highest);

/* cursor-emit.c */
void cursor_put(struct slim_encoder *enc);

/* video-out.c */

#define VOUT_RING (4u << 20)   /* bytes of fragments kept to be sent again */
#define VOUT_RECORDS 4096      /* fragments remembered */
/* Older fragments are not sent again: the console has given their picture up. */
#define VOUT_RESEND_US 250000

enum vout_state {
	VOUT_EMPTY,
	VOUT_SENT,
	VOUT_LOST, /* waits to be sent again */
	VOUT_DONE,
};

struct vout_record {
	uint32_t seq;     /* the datagram it went in */
	uint64_t sent_us; /* first sent */
	uint64_t pos;     /* its command body in the ring, counted from the start */
	uint32_t len;
	uint8_t flags, stream, state;
	uint32_t gen;     /* the stream's generation when sent */
};

struct encoder_video {
	uint8_t *ring;
	uint64_t ring_total; /* bytes ever written to the ring */
	struct vout_record *records;
	uint32_t next_record;
	uint32_t resend[VOUT_RECORDS]; /* records lost, to be sent again */
	size_t n_resend;
	uint32_t gen[SLIM_VIDEO_STREAMS]; /* one more each time a stream ends or starts again */
	pixman_region32_t unknown; /* where the console shows decoded pictures */
};

bool video_out_init(struct encoder_video *v);
void video_out_finish(struct encoder_video *v);
void video_out_reset(struct encoder_video *v);
/* Datagrams first..last were lost: the fragments they carried are sent again. */
void video_out_lost(struct encoder_video *v, uint32_t first, uint32_t last);
bool video_out_pending(const struct encoder_video *v);
/* The console copied src by (dx, dy): what it copied of a decoded picture is unknown there too. */
void video_out_copied(struct encoder_video *v, struct slim_rect src, int32_t dx, int32_t dy);
/* Fragments to send again, then the frame's pictures. */
void encode_pictures(struct slim_encoder *enc, const struct slim_frame *frame);

/* packer.c */

/* Which earlier datagrams the next one compressed names as its dictionary. */
struct packer_dict {
	uint32_t confirmed;   /* rec->confirmed when it was chosen */
	uint32_t first;       /* its first datagram; 0: none */
	uint32_t floor;       /* datagrams up to this one may be confirmed without having arrived */
	bool chained;         /* it names datagrams of this frame */
	uint32_t chain_after; /* no chains before it: the network lost a datagram lately */
};

/* The frame being encoded, between packer_begin_frame and packer_end_frame. */
struct packer_frame {
	bool active;
	uint32_t first;   /* its first datagram; 0: none yet */
	uint64_t zstd_us; /* time spent compressing */
};

/* An INPUT_ACK for the next datagram begun. */
struct packer_input_ack {
	bool pending;
	uint32_t next;
};

struct slim_packer {
	struct slim_writer w; /* its mtu: how much raw the datagram is filled with */
	uint8_t *buf;         /* cap bytes */
	uint16_t mtu;         /* of a datagram on the wire */
	size_t cap, budget;   /* raw bytes a compressed datagram may hold; is filled to */
	struct slim_zstd *zstd; /* NULL: datagrams go as written */
	struct slim_history *history; /* with zstd: what was sent, for dictionaries; or NULL */
	struct packer_dict dict;
	uint8_t *zbuf;        /* a datagram compressed, mtu bytes */
	bool incompressible;  /* this datagram carries LZ4 or CSCS: it goes raw */
	struct packer_frame frame;
	uint32_t seq; /* of the datagram being filled, once it has a command */
	size_t last_cmd; /* bytes of the last command reserved, header included */
	uint32_t next_seq;
	uint64_t commands; /* written so far */
	struct packer_input_ack input_ack;
	slim_send_fn send;
	void *send_data;
	struct slim_recovery *rec;
	struct slim_encoder_stats *stats;
	const struct slim_fb *model;
	struct encoder_video *video; /* told of every COPY */
	struct slim_cscs_scratch *cscs;
};

bool packer_init(struct slim_packer *p, uint16_t mtu, uint32_t assoc, bool zstd,
		bool history);
/* A new console: it has no datagrams to name as a dictionary. */
void packer_reset(struct slim_packer *p);
/*
 * What the console has is in doubt (a NACK that could not list every
 * loss): no datagram sent so far is named as a dictionary.
 */
void packer_distrust_history(struct slim_packer *p);
void packer_finish(struct slim_packer *p);
/* The datagrams between these two calls are one frame's. */
void packer_begin_frame(struct slim_packer *p);
void packer_end_frame(struct slim_packer *p);
void packer_network_lost(struct slim_packer *p);
/* Largest body a single command can have in an empty datagram. */
size_t packer_max_body(const struct slim_packer *p);
size_t packer_room(const struct slim_packer *p);
void packer_flush(struct slim_packer *p);

void emit_fill(struct slim_packer *p, struct slim_rect r, uint32_t color);
void emit_copy(struct slim_packer *p, struct slim_rect src, uint16_t dx, uint16_t dy);
void emit_bitmap(struct slim_packer *p, struct slim_rect r, uint32_t fg, uint32_t bg,
		const uint8_t *bits);
/*
 * `raw`: r.w * r.h packed pixels in the format `flags` names; `data`: what
 * is sent, the same or its LZ4 block. One piece: it must fit a datagram.
 */
/* `body`: a whole PALETTE body (header, table, indices). */
void emit_palette(struct slim_packer *p, uint8_t flags, const uint8_t *body, size_t len);
/*
 * CACHE_DRAW of `slot`, which holds r of fb; CACHE_STORE of r into `slot`
 * (right after the command that painted r, in the same datagram).
 */
void emit_cache_draw(struct slim_packer *p, uint16_t slot, struct slim_rect r,
		const struct slim_fb *fb);
void emit_cache_store(struct slim_packer *p, uint16_t slot, struct slim_rect r);
void emit_set(struct slim_packer *p, struct slim_rect r, uint8_t flags,
		const uint8_t *raw, const uint8_t *data, size_t len);
/* Reserves a CSCS piece of `payload` bytes; the caller fills the planes, then commits. */
uint8_t *emit_cscs_begin(struct slim_packer *p, const struct slim_wire_cscs *hdr,
		uint8_t depth, size_t payload);
/*
 * model: apply the piece to the model now; otherwise the caller applies
 * the pieces it sent in one go (the same pixels: a piece carries every
 * sample its pixels read, so no clamp to its edges ever bites).
 */
void emit_cscs_commit(struct slim_packer *p, const uint8_t *body, uint8_t depth, bool model);
void emit_frame_end(struct slim_packer *p, const struct slim_wire_frame_end *fe);
/* One VIDEO fragment: header and `len` bytes; it goes raw (zstd gains nothing on it). */
void emit_video(struct slim_packer *p, uint8_t flags, const struct slim_wire_video *hdr,
		const uint8_t *data, size_t len);
void emit_cursor_image(struct slim_packer *p, const struct slim_wire_cursor_image *hdr,
		const uint32_t *rows);
void emit_cursor_pos(struct slim_packer *p, int16_t x, int16_t y, bool visible);
/*
 * INPUT_ACK goes first in the next datagram begun; a later one before then
 * replaces it. packer_flush_input_ack sends it alone if it is still waiting.
 */
void packer_input_ack(struct slim_packer *p, uint32_t next);
bool packer_flush_input_ack(struct slim_packer *p);

/* the encoder */

/* classify.c's scratch: one tile packed, compressed, as a bitmap. */
struct encoder_tile {
	uint8_t pack[TILE_PIXELS * 4];
	uint8_t lz4[LZ4_COMPRESSBOUND(TILE_PIXELS * 4)];
	uint8_t bits[TILE_PIXELS / 8];
};

/* classify.c: a FILL held back, so that the next of its colour beside it joins it. */
struct encoder_fill {
	bool pending;
	struct slim_rect rect;
	uint32_t color;
};

/* palette.c's scratch: a tile's colours, its indices, and them coded. */
struct encoder_palette {
	struct palette_slot {
		uint32_t color;
		uint16_t gen;
		uint8_t index;
	} hash[PALETTE_HASH];
	uint16_t gen;
	uint32_t colors[SLIM_PALETTE_MAX];
	uint8_t index[TILE_PIXELS];
	uint8_t body[sizeof(struct slim_wire_palette) + 3 * SLIM_PALETTE_MAX + 2 * TILE_PIXELS];
};

/* scroll.c's scratch, sized for the tallest screen. */
struct encoder_scroll {
	uint64_t *row_hash_fb, *row_hash_model;
	struct scroll_slot {
		uint64_t hash;
		uint32_t row;
	} *hash_table;
	int32_t *votes;
};

/* cursor-emit.c: the pointer the console draws, and what of it is still to send. */
struct encoder_cursor {
	uint32_t px[SLIM_CURSOR_MAX * SLIM_CURSOR_MAX];
	struct slim_wire_cursor_image image;
	int32_t x, y;
	bool visible, image_dirty, pos_dirty;
};

struct slim_encoder {
	uint32_t width, height;
	struct slim_encoder_config cfg;
	struct slim_fb model;
	struct slim_packer packer;
	struct slim_recovery rec;
	struct encoder_cache *cache; /* NULL: the console has none */
	struct slim_encoder_stats stats;
	pixman_region32_t work;

	struct encoder_tile tile;
	struct encoder_fill fill;
	struct encoder_palette palette;
	struct encoder_scroll scroll;
	struct encoder_cursor cursor;
	struct encoder_video video;

	uint32_t frame;
	uint32_t frame_end_seq; /* the datagram that carried the last FRAME_END */
	struct slim_ratelimit log_limit;
};

static inline uint32_t pixel_rgb(uint32_t p)
{
	return p & 0x00ffffffu;
}

/* classify.c */
void encode_rect(struct slim_encoder *enc, const struct slim_fb *fb, struct slim_rect r,
		bool forced);
void flush_fill(struct slim_encoder *enc);
/* The bytes of the smallest SET of `t` (raw or LZ4), as one piece. */
size_t set_cost(struct slim_encoder *enc, const struct slim_fb *fb, struct slim_rect t);

/* palette.c: sends `t` as a PALETTE when that is smaller than a SET. */
bool send_palette(struct slim_encoder *enc, const struct slim_fb *fb, struct slim_rect t);

/* scroll.c */
bool scroll_init(struct slim_encoder *enc);
void scroll_finish(struct slim_encoder *enc);
/* Finds content of `r` that moved vertically and sends it as one COPY. */
void detect_scroll(struct slim_encoder *enc, const struct slim_fb *fb, struct slim_rect r);

/* cscs-split.c */
void encode_yuv(struct slim_encoder *enc, const struct slim_yuv_image *img);

/* Rectangle helpers. */
static inline bool rect_intersect(struct slim_rect a, struct slim_rect b, struct slim_rect *out)
{
	uint32_t x1 = a.x > b.x ? a.x : b.x, y1 = a.y > b.y ? a.y : b.y;
	uint32_t ax2 = (uint32_t)a.x + a.w, bx2 = (uint32_t)b.x + b.w;
	uint32_t ay2 = (uint32_t)a.y + a.h, by2 = (uint32_t)b.y + b.h;
	uint32_t x2 = ax2 < bx2 ? ax2 : bx2, y2 = ay2 < by2 ? ay2 : by2;
	if (x2 <= x1 || y2 <= y1) {
		return false;
	}
	*out = (struct slim_rect){ (uint16_t)x1, (uint16_t)y1, (uint16_t)(x2 - x1),
		(uint16_t)(y2 - y1) };
	return true;
}

static inline struct slim_rect rect_from_box(const pixman_box32_t *b)
{
	return (struct slim_rect){ (uint16_t)b->x1, (uint16_t)b->y1,
		(uint16_t)(b->x2 - b->x1), (uint16_t)(b->y2 - b->y1) };
}

static inline bool region_touches(pixman_region32_t *region, struct slim_rect r)
{
	pixman_box32_t box = { r.x, r.y, r.x + r.w, r.y + r.h };
	return pixman_region32_contains_rectangle(region, &box) != PIXMAN_REGION_OUT;
}

#endif
