/*
 * Encoding and decoding of slim datagrams, shared by the server and the
 * console. The writer batches commands into one datagram of at most `mtu`
 * bytes; the reader walks a received datagram and validates every length,
 * bound and rectangle before a caller sees a command, so that a caller
 * can never be led outside its buffers by what arrives.
 */
#ifndef SLIM_CODEC_H
#define SLIM_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-proto.h"

struct slim_desk;

enum slim_error {
	SLIM_OK = 0,
	SLIM_ERR_SHORT,        /* shorter than a header, or a command runs past the end */
	SLIM_ERR_MAGIC,
	SLIM_ERR_VERSION,
	SLIM_ERR_DIRECTION,    /* an upstream datagram sent downstream or the reverse */
	SLIM_ERR_ASSOC,        /* not this association */
	SLIM_ERR_TRAILING,     /* bytes after the last command */
	SLIM_ERR_UNKNOWN,      /* unknown command type */
	SLIM_ERR_LENGTH,       /* a body length that does not match its command */
	SLIM_ERR_RECT,         /* empty, or outside the screen */
	SLIM_ERR_FIELD,        /* a field out of its range */
	SLIM_ERR_LZ4,          /* compressed data that does not expand to the size it claims */
	SLIM_ERR_PALETTE,      /* an index past the table, or runs that miss the rectangle */
	SLIM_ERR_ZSTD,         /* a compressed datagram that is not one frame of its size */
	SLIM_ERR_CACHE,        /* a CACHE_DRAW of a slot that does not hold that size */
	SLIM_ERR_HISTORY,      /* a dictionary of datagrams the console does not have */
	SLIM_ERR_COUNT,
};

const char *slim_error_str(enum slim_error err);

/* Hands one finished datagram to the transport. */
typedef void (*slim_send_fn)(void *data, const uint8_t *buf, size_t len);

/* Building a datagram. */
struct slim_writer {
	uint8_t *buf;
	size_t mtu;
	size_t len;
	uint16_t count;
	uint8_t flags;
	uint32_t assoc;
};

void slim_writer_init(struct slim_writer *w, uint8_t *buf, size_t mtu,
		uint32_t assoc, bool upstream);
/* Starts an empty datagram in the same buffer. */
void slim_writer_reset(struct slim_writer *w);
/* Bytes left for the body of one more command. */
size_t slim_writer_room(const struct slim_writer *w);
/* Reserves a command; returns its body to fill in, or NULL if it does not fit. */
uint8_t *slim_writer_add(struct slim_writer *w, uint8_t type, uint8_t flags,
		size_t body_len);
/* Gives back what the last slim_writer_add reserved beyond `used` bytes. */
void slim_writer_shrink_last(struct slim_writer *w, uint8_t *body, size_t used);
/* Writes the header; returns the datagram's length. */
size_t slim_writer_finish(struct slim_writer *w, uint32_t seq, uint64_t time_us);

bool slim_put_fill(struct slim_writer *w, struct slim_rect r, uint32_t color);
bool slim_put_copy(struct slim_writer *w, struct slim_rect src, uint16_t dx, uint16_t dy);
bool slim_put_cursor_pos(struct slim_writer *w, int16_t x, int16_t y, bool visible);
bool slim_put_frame_end(struct slim_writer *w, const struct slim_wire_frame_end *fe);
bool slim_put_hello(struct slim_writer *w, const struct slim_wire_hello *hello);
/* A HELLO that presents an attach token (from a REDIRECT). */
bool slim_put_hello_token(struct slim_writer *w, const struct slim_wire_hello *hello,
		const uint8_t token[SLIM_ATTACH_TOKEN_LEN]);
/* What a HELLO may carry besides its fixed part. */
struct slim_hello_parts {
	uint32_t video_mbit;          /* 0: none, and no SLIM_CAP_VIDEO_BUDGET */
	const struct slim_desk *desk; /* its heads, and keyboard if it has one; NULL: neither */
	/* SLIM_UNREACHED_LEN bytes, a manager's host key it cannot reach; NULL: none */
	const uint8_t *unreached;
	const struct slim_wire_codec *codecs; /* what it decodes; n_codecs 0: none */
	uint8_t n_codecs;             /* at most SLIM_MAX_CODECS */
	const uint8_t *token;         /* SLIM_ATTACH_TOKEN_LEN bytes; NULL: none */
};
/* Either, with these parts; caps and version are set to what goes. */
bool slim_put_hello_ext(struct slim_writer *w, const struct slim_wire_hello *hello,
		const struct slim_hello_parts *parts);
bool slim_put_redirect(struct slim_writer *w, const struct slim_wire_redirect *redirect);
bool slim_put_move(struct slim_writer *w, const struct slim_wire_move *move);
/* Events numbered first, first + 1, ...; n >= 1. */
bool slim_put_input(struct slim_writer *w, uint32_t first, const struct slim_wire_input *events,
		size_t n);
/* The keys and buttons held after every event numbered below `next`; n <= SLIM_HELD_MAX. */
bool slim_put_held(struct slim_writer *w, uint32_t next, const uint16_t *codes, size_t n);
bool slim_put_input_ack(struct slim_writer *w, uint32_t next);
bool slim_put_ack(struct slim_writer *w, const struct slim_wire_ack *ack);
bool slim_put_nack(struct slim_writer *w, const struct slim_wire_seq_range *ranges,
		size_t n, uint16_t flags);
/* `text` is cut at SLIM_REFUSE_TEXT_MAX bytes. */
bool slim_put_refuse(struct slim_writer *w, uint16_t reason, const char *text);
bool slim_put_ping(struct slim_writer *w);
/*
 * Whether a screen of this size is served: at most SLIM_MAX_DIM a side and
 * SLIM_MAX_SCREEN_PIXELS in all. A HELLO over it is answered with
 * SLIM_REFUSE_TOO_LARGE and this text (shorter than the HELLO it answers).
 */
bool slim_screen_fits(uint32_t width, uint32_t height);
#define SLIM_REFUSE_TOO_LARGE_TEXT "screen too large: over 16588800 pixels"
/* AUDIO (or, upstream, MIC) with SLIM_AUDIO_*_HALF `flags`; 1..SLIM_AUDIO_MAX_WIRE_PAYLOAD bytes. */
bool slim_put_audio(struct slim_writer *w, bool upstream, uint8_t flags,
		const struct slim_wire_audio *hdr, const uint8_t *payload, size_t len);
bool slim_put_audio_report(struct slim_writer *w, const struct slim_wire_audio_report *report);
bool slim_put_card(struct slim_writer *w, const struct slim_wire_card *card);
/* One VIDEO fragment: `hdr` and len bytes of the access unit from hdr->offset. */
bool slim_put_video(struct slim_writer *w, uint8_t flags, const struct slim_wire_video *hdr,
		const uint8_t *data, size_t len);
bool slim_put_video_recover(struct slim_writer *w, uint8_t stream, uint32_t frame);

/* A decoded command. Pointers point into the datagram. */
struct slim_cscs {
	uint16_t src_w, src_h;
	struct slim_rect dst, psrc, pdst;
	uint8_t depth;
	const uint8_t *y, *u, *v;
	size_t y_stride, c_stride; /* bytes a row of each plane */
};

/* A decoded PALETTE: checked, so that applying it needs no checks. */
struct slim_palette {
	struct slim_rect r;
	uint8_t colors;       /* entries in the table */
	const uint8_t *table; /* colors x (B, G, R) */
	const uint8_t *data; /* the indices, packed or in runs (flags) */
	size_t len;
};

/* Bits a packed index takes with a table of `colors` entries. */
static inline unsigned slim_palette_bits(unsigned colors)
{
	return colors <= 2 ? 1 : colors <= 4 ? 2 : colors <= 16 ? 4 : 8;
}

/* Bytes the packed indices of a w x h PALETTE take. */
static inline size_t slim_palette_packed_len(uint16_t w, uint16_t h, unsigned colors)
{
	return ((size_t)w * slim_palette_bits(colors) + 7) / 8 * h;
}

struct slim_cmd {
	uint8_t type;
	uint8_t flags;
	union {
		struct {
			struct slim_rect r;
			uint32_t color;
		} fill;
		struct {
			struct slim_rect r;
			const uint8_t *data;
			size_t len;
		} set;
		struct {
			struct slim_rect r;
			uint32_t fg, bg;
			const uint8_t *bits;
		} bitmap;
		struct {
			struct slim_rect src;
			uint16_t dx, dy;
		} copy;
		struct slim_cscs cscs;
		struct slim_palette palette;
		struct {
			uint16_t slot;
			struct slim_rect r;
		} cache; /* CACHE_STORE and CACHE_DRAW */
		struct {
			struct slim_wire_cursor_image hdr;
			const uint8_t *pixels;
		} cursor_image;
		struct slim_wire_cursor_pos cursor_pos;
		struct slim_wire_frame_end frame_end;
		struct {
			uint16_t reason;
			const char *text; /* not terminated */
			size_t len;
		} refuse;
		struct {
			struct slim_wire_hello hello;
			uint32_t video_mbit; /* with SLIM_CAP_VIDEO_BUDGET; else 0 */
			/* with SLIM_CAP_HEADS (checked: slim_desk_heads_valid), else NULL */
			const uint8_t *heads; /* struct slim_wire_head, unaligned */
			uint8_t n_heads;
			const uint8_t *keyboard; /* struct slim_wire_keyboard; NULL: none */
			/* with SLIM_CAP_UNREACHED: SLIM_UNREACHED_LEN bytes, else NULL */
			const uint8_t *unreached;
			/* with SLIM_CAP_CODECS: struct slim_wire_codec, unaligned, else NULL */
			const uint8_t *codecs;
			uint8_t n_codecs;
			bool has_token;
			uint8_t token[SLIM_ATTACH_TOKEN_LEN];
		};
		struct slim_wire_redirect redirect;
		struct slim_wire_move move;
		struct {
			uint32_t first; /* input number of events[0] */
			const uint8_t *events; /* struct slim_wire_input, unaligned */
			size_t count;
		} input;
		struct {
			uint32_t next;
			const uint8_t *codes; /* u16, unaligned */
			size_t count;
		} held;
		struct slim_wire_input_ack input_ack;
		struct slim_wire_ack ack;
		struct slim_wire_card card;
		struct {
			struct slim_wire_audio hdr;
			const uint8_t *data;
			size_t len;
		} audio; /* AUDIO and MIC */
		struct slim_wire_audio_report audio_report;
		struct {
			struct slim_wire_video hdr;
			const uint8_t *data; /* hdr.offset.. of the access unit */
			size_t len;
		} video;
		struct slim_wire_video_recover video_recover;
		struct {
			const uint8_t *ranges; /* struct slim_wire_seq_range, unaligned */
			size_t count;
			uint16_t flags;
		} nack;
	};
};

struct slim_dgram {
	uint8_t flags;
	uint16_t count;
	uint32_t assoc;
	uint32_t seq;
	uint64_t time_us;
};

/* Walks one datagram. `width` and `height` bound every rectangle. */
struct slim_reader {
	const uint8_t *p, *end;
	uint16_t left;
	uint16_t width, height;
	bool upstream;
};

enum slim_error slim_reader_init(struct slim_reader *r, struct slim_dgram *hdr,
		const uint8_t *buf, size_t len, bool upstream,
		uint16_t width, uint16_t height);
/*
 * Decodes the next command into `cmd`. Returns SLIM_OK with cmd->type set,
 * SLIM_OK with cmd->type == 0 at the end, or an error.
 */
enum slim_error slim_reader_next(struct slim_reader *r, struct slim_cmd *cmd);

/* The next command's type, undecoded and unchecked (0: none left): cheap to look at. */
uint8_t slim_reader_peek_type(const struct slim_reader *r);

void slim_input_get(const struct slim_cmd *cmd, size_t i, struct slim_wire_input *ev);
uint16_t slim_held_get(const struct slim_cmd *cmd, size_t i);
void slim_nack_get(const struct slim_cmd *cmd, size_t i, struct slim_wire_seq_range *range);

/* Bytes of pixel data a SET of this rectangle and format carries uncompressed. */
static inline size_t slim_set_raw_len(struct slim_rect r, uint8_t flags)
{
	return (size_t)r.w * r.h * ((flags & SLIM_SET_RGB888) ? 3 : 4);
}

/* Bytes a CSCS piece carries for a source piece of w x h samples. */
size_t slim_cscs_payload_len(uint16_t w, uint16_t h, uint8_t depth,
		size_t *y_stride, size_t *c_stride);

#endif
