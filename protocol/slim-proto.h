/*
 * The slim wire protocol: constants and the byte layout of every message.
 * protocol/slim-protocol.md is the normative description; this header is
 * its mirror in C. All multi-byte fields are little-endian. The structs
 * are packed and are only ever read or written with memcpy (see
 * slim-codec-read.c and slim-codec-write.c), so they never impose alignment on a datagram buffer.
 */
#ifndef SLIM_PROTO_H
#define SLIM_PROTO_H

#include <stdint.h>

/* The codec copies these structs to and from the wire as they are. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "slim needs a little-endian host");

#define SLIM_MAGIC 0x4d494c53u /* "SLIM" as bytes on the wire */
#define SLIM_VERSION 2
/*
 * What a HELLO says: 3 may carry the console's heads and keyboard
 * (SLIM_CAP_HEADS, SLIM_CAP_KEYBOARD); a HELLO of 2 is one head of its
 * width x height and no keyboard of its own. The datagrams around it are
 * SLIM_VERSION's either way.
 */
#define SLIM_HELLO_VERSION 3

/* Default and hard bounds of a datagram, header included. */
#define SLIM_DEFAULT_MTU 1400
#define SLIM_MIN_MTU 256
#define SLIM_MAX_MTU 65000

/* Largest screen side (and so largest rectangle) either side accepts. */
#define SLIM_MAX_DIM 8192
/*
 * Most pixels a screen may have (two 3840x2160 monitors; with several
 * heads, their sum): a session costs its compositor about 13 bytes a
 * pixel, so this bounds what one console can make it allocate to some
 * 225 MB. A HELLO over it is refused with SLIM_REFUSE_TOO_LARGE.
 */
#define SLIM_MAX_SCREEN_PIXELS (2u * 3840u * 2160u)

/* One SET piece, or the source samples of one CSCS piece, at most. */
#define SLIM_MAX_PIECE_PIXELS 65536
/* The screen pixels one CSCS piece may paint: bounds what 40 bytes can cost. */
#define SLIM_MAX_CSCS_PIXELS (16 * SLIM_MAX_PIECE_PIXELS)
/* LZ4 data in one datagram may expand to at most this many bytes. */
#define SLIM_MAX_DGRAM_EXPANDED (4u << 20)

#define SLIM_CURSOR_MAX 256

/* How many of the latest sequence numbers a console's loss reports cover. */
#define SLIM_SEQ_WINDOW 4096

/* Datagram header flags. */
enum slim_dgram_flags {
	SLIM_DGRAM_UPSTREAM = 1 << 0, /* console -> server */
	SLIM_DGRAM_ZSTD = 1 << 1,     /* the commands are one zstd frame (slim-zstd.h) */
	/* with ZSTD: a struct slim_wire_history comes first, the frame's dictionary */
	SLIM_DGRAM_HISTORY = 1 << 2,
};

/*
 * The datagrams first..last whose commands, end to end, are the zstd
 * dictionary of a SLIM_DGRAM_HISTORY datagram (slim-history.h).
 */
struct slim_wire_history {
	uint32_t first, last;
} __attribute__((packed));

/* What each side keeps of the datagrams' commands, and a dictionary at most. */
#define SLIM_HISTORY_BYTES (4u << 20)
#define SLIM_HISTORY_DGRAMS 4096
#define SLIM_HISTORY_DICT_MAX (64u << 10)

/* What the commands of a SLIM_DGRAM_ZSTD datagram may expand to, at most. */
#define SLIM_MAX_ZSTD_EXPANDED SLIM_MAX_MTU

enum slim_cmd_type {
	/* downstream: server -> console */
	SLIM_CMD_FILL = 0x01,
	SLIM_CMD_SET = 0x02,
	SLIM_CMD_BITMAP = 0x03,
	SLIM_CMD_COPY = 0x04,
	SLIM_CMD_CSCS = 0x05,
	SLIM_CMD_CURSOR_IMAGE = 0x06,
	SLIM_CMD_CURSOR_POS = 0x07,
	SLIM_CMD_FRAME_END = 0x08,
	SLIM_CMD_REFUSE = 0x09,
	SLIM_CMD_REDIRECT = 0x0a,
	SLIM_CMD_INPUT_ACK = 0x0b,
	SLIM_CMD_AUDIO = 0x0c,   /* the session's sound, outside the sequence */
	SLIM_CMD_PALETTE = 0x0d, /* up to 127 colours: a table and indices, packed or in runs */
	SLIM_CMD_CACHE_STORE = 0x0e, /* keep what a rectangle shows in a cache slot */
	SLIM_CMD_CACHE_DRAW = 0x0f,  /* paint a slot's pixels */
	SLIM_CMD_MOVE = 0x10,   /* the session manager: go to another manager of the group */
	SLIM_CMD_VIDEO = 0x11,  /* one fragment of a compressed picture (slim-video.h) */
	/* upstream: console -> server */
	SLIM_CMD_HELLO = 0x81,
	SLIM_CMD_INPUT = 0x82,
	SLIM_CMD_ACK = 0x83,
	SLIM_CMD_NACK = 0x84,
	SLIM_CMD_CARD = 0x85,
	SLIM_CMD_PING = 0x86,
	SLIM_CMD_HELD = 0x87,
	SLIM_CMD_MIC = 0x88,     /* the console's microphone, AUDIO's upstream twin */
	SLIM_CMD_AUDIO_REPORT = 0x89, /* how the console's playback fares */
	SLIM_CMD_VIDEO_RECOVER = 0x8a, /* a compressed stream cannot go on: a key picture, please */
};

/* SET flags */
#define SLIM_SET_LZ4 (1 << 0)      /* payload is one LZ4 block */
#define SLIM_SET_RGB888 (1 << 1)   /* 3 bytes a pixel (B, G, R); else XRGB8888 */

/* PALETTE flags */
#define SLIM_PALETTE_RLE (1 << 0) /* indices in runs; else packed, rows on byte boundaries */
/* Most colours one PALETTE has: an index and a run flag share a byte. */
#define SLIM_PALETTE_MAX 127

/*
 * The console's cache: slots of up to SLIM_CACHE_SLOT_PIXELS pixels (a 64x16
 * tile), 16 MiB in all. The server chooses the slots; the console keeps
 * what it is told to until the association ends.
 */
#define SLIM_CACHE_SLOTS 4096
#define SLIM_CACHE_SLOT_PIXELS 1024

/* CSCS flags: sample depth of the Y, U and V planes */
#define SLIM_CSCS_DEPTH_MASK 0x3
#define SLIM_CSCS_DEPTH8 0 /* 8 bits a sample: 12 bits a pixel */
#define SLIM_CSCS_DEPTH4 1 /* 4 bits a sample, two per byte: 6 bits a pixel */

/* AUDIO and MIC flags: a PCM packet too big for one datagram goes in two halves */
#define SLIM_AUDIO_FIRST_HALF (1 << 0)
#define SLIM_AUDIO_SECOND_HALF (1 << 1)

/* NACK flags */
#define SLIM_NACK_REPAINT (1 << 0) /* too much lost to list: repaint everything */

/* REFUSE reasons */
enum slim_refuse_reason {
	SLIM_REFUSE_BUSY = 1,    /* another console is attached to this session */
	SLIM_REFUSE_UNKNOWN = 2, /* no such association (the server restarted): say HELLO */
	SLIM_REFUSE_PENDING = 3, /* the session manager waits for an administrator to enroll us */
	SLIM_REFUSE_DENIED = 4,  /* the session manager does not serve this console */
	SLIM_REFUSE_TOO_LARGE = 5, /* the screen is over SLIM_MAX_SCREEN_PIXELS */
};

#define SLIM_REFUSE_TEXT_MAX 200

/* Console capabilities in HELLO. */
enum slim_caps {
	SLIM_CAP_LZ4 = 1 << 0,
	SLIM_CAP_RGB888 = 1 << 1,
	SLIM_CAP_CSCS = 1 << 2,
	SLIM_CAP_CURSOR = 1 << 3,
	/* a u32: the Mbit/s video may take on this console's link (slim-protocol.md 4.1) */
	SLIM_CAP_VIDEO_BUDGET = 1 << 4,
	SLIM_CAP_AUDIO = 1 << 5, /* plays AUDIO */
	SLIM_CAP_MIC = 1 << 6,   /* sends MIC */
	SLIM_CAP_PALETTE = 1 << 7, /* applies PALETTE */
	SLIM_CAP_ZSTD = 1 << 8,    /* expands SLIM_DGRAM_ZSTD datagrams */
	SLIM_CAP_CACHE = 1 << 9,   /* keeps SLIM_CACHE_SLOTS slots: CACHE_STORE, CACHE_DRAW */
	SLIM_CAP_ACK_DELAY = 1 << 10, /* may hold an ACK up to SLIM_ACK_DELAY_MS */
	SLIM_CAP_HISTORY = 1 << 11,   /* keeps SLIM_HISTORY_BYTES: SLIM_DGRAM_HISTORY */
	/*
	 * To a session manager only: a server group's manager sent the console
	 * here (MOVE), so it is not placed again (session-manager.md §9).
	 */
	SLIM_CAP_MOVED = 1 << 12,
	/* struct slim_wire_heads follows: the console's monitors (slim-protocol.md 4.1) */
	SLIM_CAP_HEADS = 1 << 13,
	/* struct slim_wire_keyboard follows: the keymap its keyboard types in */
	SLIM_CAP_KEYBOARD = 1 << 14,
	/*
	 * To a session manager only: 32 bytes follow, the SHA-256 of the host
	 * key of a manager of the group that this console could not reach
	 * (session-manager.md §9): no console is sent back there.
	 */
	SLIM_CAP_UNREACHED = 1 << 15,
	/* struct slim_wire_codecs follows: the compressed video it decodes (slim-protocol.md 4.1) */
	SLIM_CAP_CODECS = 1 << 16,
};

/* Compressed video (slim-protocol.md 3.9). */
enum slim_codec {
	SLIM_CODEC_H264 = 1, /* ITU-T H.264, Annex B byte stream, no B pictures */
};

enum slim_codec_flags {
	SLIM_CODEC_HARDWARE = 1 << 0, /* decoded by the console's GPU (a hint, for statistics) */
};

/* One codec a console decodes, and up to what picture. */
struct slim_wire_codec {
	uint8_t codec;   /* enum slim_codec */
	uint8_t profile; /* highest profile_idc it decodes: 66 baseline, 77 main, 100 high */
	uint8_t level;   /* highest level_idc (41: 4.1) */
	uint8_t flags;   /* enum slim_codec_flags */
	uint16_t max_width, max_height; /* coded picture, at most SLIM_MAX_DIM */
	uint16_t max_fps;               /* pictures a second, 1..SLIM_VIDEO_MAX_FPS */
	uint16_t pad;
} __attribute__((packed));

/* Most codecs a HELLO may name. */
#define SLIM_MAX_CODECS 4
#define SLIM_VIDEO_MAX_FPS 240

/* SLIM_CAP_CODECS: `count` codecs follow, 1..SLIM_MAX_CODECS. */
struct slim_wire_codecs {
	uint8_t count;
	uint8_t pad[3];
} __attribute__((packed));

/* Compressed streams one console keeps at once (stream ids 0..SLIM_VIDEO_STREAMS-1). */
#define SLIM_VIDEO_STREAMS 4
/* Fragments one picture may take, and bytes it may take in all. */
#define SLIM_VIDEO_MAX_FRAGS 1024
#define SLIM_VIDEO_MAX_PICTURE (2u << 20)

/* VIDEO flags */
#define SLIM_VIDEO_KEY (1 << 0)   /* the picture decodes alone (an IDR with its SPS and PPS) */
#define SLIM_VIDEO_START (1 << 1) /* a new encoder: the console's decoder starts over */

/*
 * Most heads a HELLO may name. Their layout's bounding box is the screen
 * (the HELLO's width x height), bound by SLIM_MAX_SCREEN_PIXELS as one head's is.
 */
#define SLIM_MAX_HEADS 8
/* Largest output scale a console may ask for. */
#define SLIM_MAX_SCALE 4
/* A physical side above this (10 m) is taken as unknown. */
#define SLIM_MAX_HEAD_MM 10000

/*
 * How long a console with SLIM_CAP_ACK_DELAY may hold the ACK of a frame
 * without losses, for the next upstream datagram (a keystroke's release,
 * usually) to carry it. Its server waits that much longer for ACKs.
 */
#define SLIM_ACK_DELAY_MS 100

#define SLIM_CONSOLE_ID_LEN 32

/* The session manager's well-known UDP port: consoles say HELLO there first. */
#define SLIM_SESSIOND_PORT 5550

/* A one-time token that lets one console attach to one session. */
#define SLIM_ATTACH_TOKEN_LEN 16

enum slim_input_kind {
	SLIM_INPUT_KEY = 1,        /* code: evdev KEY_*, value: 0 up, 1 down, 2 repeat */
	SLIM_INPUT_BUTTON = 2,     /* code: evdev BTN_*, value: 0 up, 1 down */
	SLIM_INPUT_MOTION_REL = 3, /* x, y: delta in 1/256 pixel */
	SLIM_INPUT_MOTION_ABS = 4, /* x, y: position on the console screen in 1/256 pixel */
	SLIM_INPUT_AXIS = 5,       /* code: 0 vertical, 1 horizontal; value: delta in 1/256;
	                            * x: discrete steps */
	SLIM_INPUT_FRAME = 6,      /* groups the events before it (libinput/wl_pointer frame) */
};

struct slim_rect {
	uint16_t x, y, w, h;
};

#define SLIM_PACKED __attribute__((packed))

struct slim_wire_dgram {
	uint32_t magic;
	uint8_t version;
	uint8_t flags;
	uint16_t count; /* commands that follow */
	uint32_t assoc;
	uint32_t seq;
	uint64_t time_us;
} SLIM_PACKED;

struct slim_wire_cmd {
	uint8_t type;
	uint8_t flags;
	uint16_t len; /* body bytes after this header */
} SLIM_PACKED;

struct slim_wire_rect {
	uint16_t x, y, w, h;
} SLIM_PACKED;

struct slim_wire_fill {
	struct slim_wire_rect r;
	uint32_t color;
} SLIM_PACKED;

struct slim_wire_set {
	struct slim_wire_rect r;
	/* then the pixels, raw or one LZ4 block */
} SLIM_PACKED;

struct slim_wire_bitmap {
	struct slim_wire_rect r;
	uint32_t fg, bg;
	/* then h rows of (w + 7) / 8 bytes, most significant bit leftmost, 1 = fg */
} SLIM_PACKED;

/*
 * PALETTE: a table of `colors` (1 to SLIM_PALETTE_MAX) entries of 3 bytes
 * (B, G, R), then an index a pixel, in raster order:
 * packed (1, 2, 4 or 8 bits an index as the table has up to 2, 4, 16 or
 * 127 colours; most significant bits leftmost; each row starts on a byte),
 * or with SLIM_PALETTE_RLE in runs: a byte whose low 7 bits are the index;
 * when its top bit is set, the run is longer than one pixel and its length
 * minus one follows as bytes of 255 ended by one below 255. Runs cross
 * rows; they cover the rectangle exactly.
 */
struct slim_wire_palette {
	struct slim_wire_rect r;
	uint8_t colors;
	uint8_t pad;
} SLIM_PACKED;

/*
 * CACHE_STORE: the pixels `r` shows now (after the commands before it) go
 * into `slot`, w x h of them. CACHE_DRAW: `r` (of the slot's size) shows
 * the slot's pixels.
 */
struct slim_wire_cache {
	uint16_t slot;
	uint16_t pad;
	struct slim_wire_rect r;
} SLIM_PACKED;

struct slim_wire_copy {
	struct slim_wire_rect src;
	uint16_t dx, dy;
} SLIM_PACKED;

struct slim_wire_cscs {
	uint16_t src_w, src_h;      /* the whole source image */
	struct slim_wire_rect dst;  /* where the whole image lands, scaled */
	struct slim_wire_rect psrc; /* the source samples this piece carries */
	struct slim_wire_rect pdst; /* the screen pixels this piece paints */
	/* then Y rows, U rows, V rows of psrc (chroma halved, rounded up) */
} SLIM_PACKED;

struct slim_wire_cursor_image {
	uint32_t serial;
	uint16_t w, h, hot_x, hot_y;
	uint16_t row, rows; /* this piece carries rows [row, row + rows) */
	/* then ARGB8888 (premultiplied) pixels */
} SLIM_PACKED;

struct slim_wire_cursor_pos {
	int16_t x, y; /* hotspot position on the screen */
	uint8_t visible;
	uint8_t pad;
} SLIM_PACKED;

struct slim_wire_frame_end {
	uint32_t frame;
	uint32_t report_from; /* the console reports losses from here on: all before is settled */
	uint64_t damage_us; /* server clock: when the frame's first damage arrived */
	uint64_t encoded_us; /* server clock: when encoding finished */
} SLIM_PACKED;

/* CARD: a card was put on or taken off the console's reader. */
enum slim_card_event {
	SLIM_CARD_REMOVED = 0,
	SLIM_CARD_INSERTED = 1,
};

enum slim_card_token_kind {
	SLIM_CARD_UID = 1,      /* the contactless UID (GET DATA FF CA 00 00 00) */
	SLIM_CARD_ATR_HASH = 2, /* SHA-256 of the ATR, for cards without a UID */
};

#define SLIM_CARD_TOKEN_MAX 32

struct slim_wire_card {
	uint8_t event;  /* enum slim_card_event */
	uint8_t kind;   /* enum slim_card_token_kind */
	uint8_t len;    /* token bytes used, 1..SLIM_CARD_TOKEN_MAX */
	uint8_t reader; /* which reader of the console, from 0 */
	uint8_t token[SLIM_CARD_TOKEN_MAX];
} SLIM_PACKED;

struct slim_wire_refuse {
	uint16_t reason;
	uint16_t pad;
	/* then up to SLIM_REFUSE_TEXT_MAX bytes of UTF-8, not terminated */
} SLIM_PACKED;

/* SLIM_CAP_UNREACHED: a host key's SHA-256, as MOVE names one. */
#define SLIM_UNREACHED_LEN 32

struct slim_wire_hello {
	uint16_t version;
	uint16_t width, height;
	uint16_t mtu;
	uint32_t caps;
	char console_id[SLIM_CONSOLE_ID_LEN];
	/* optionally followed by uint8_t token[SLIM_ATTACH_TOKEN_LEN] (see REDIRECT) */
} SLIM_PACKED;

enum slim_head_flags {
	SLIM_HEAD_PRIMARY = 1 << 0, /* the greeter shows here */
};

/* One monitor of the console: a rectangle of its screen, in device pixels. */
struct slim_wire_head {
	uint16_t x, y, width, height;
	uint16_t mm_width, mm_height; /* physical size, 0: unknown */
	uint32_t refresh_mhz;         /* 0: unknown */
	uint8_t scale;                /* 0: the server's choice, else 1..SLIM_MAX_SCALE */
	uint8_t flags;                /* enum slim_head_flags */
	uint16_t pad;
	/* text, NUL-padded, not necessarily terminated */
	char name[16];  /* the connector: "HDMI-A-1" */
	char make[32];  /* from the monitor's EDID */
	char model[32];
} SLIM_PACKED;

/* SLIM_CAP_HEADS: `count` heads follow, 1..SLIM_MAX_HEADS. */
struct slim_wire_heads {
	uint8_t count;
	uint8_t pad[3];
} SLIM_PACKED;

/* SLIM_CAP_KEYBOARD: XKB names, each text NUL-padded, empty: the default. */
struct slim_wire_keyboard {
	char rules[16];
	char model[32];
	char layout[64];  /* "de", "us,ru" */
	char variant[64]; /* "nodeadkeys", ",phonetic" */
	char options[128]; /* "grp:alt_shift_toggle,ctrl:nocaps" */
} SLIM_PACKED;

/*
 * REDIRECT, from the session manager: show the session (or greeter) at this
 * endpoint. The console connects there with `key` (a DTLS pre-shared key,
 * for this attach only, under the identity of the token in hex) and says
 * HELLO with the token, keeping its association with the manager for CARD
 * and PING. It only ever travels inside the authenticated association.
 */
struct slim_wire_redirect {
	uint8_t family; /* 4 or 6 */
	uint8_t pad;
	uint16_t port;
	uint8_t addr[16]; /* IPv4 in the first 4 bytes, or IPv6 */
	uint8_t token[SLIM_ATTACH_TOKEN_LEN];
	uint8_t key[32];
} SLIM_PACKED;

/*
 * MOVE, from the session manager of a server group: the console's control
 * association goes to another manager of the group (the one whose server
 * runs the session its card is bound to, or the one with the most room),
 * whose host key is `fingerprint`: the manager the console trusts vouches
 * for it. Like REDIRECT it only travels inside the authenticated
 * association.
 */
struct slim_wire_move {
	uint8_t family; /* 4 or 6 */
	uint8_t pad;
	uint16_t port;
	uint8_t addr[16];
	uint8_t fingerprint[32]; /* SHA-256 of its host key */
} SLIM_PACKED;

struct slim_wire_input {
	uint8_t kind;
	uint8_t pad;
	uint16_t code;
	int32_t value;
	int32_t x, y;
	uint32_t time_ms;
} SLIM_PACKED;

/*
 * INPUT: the input number of the first event, then the events; event i
 * is number first + i. Numbers count from 1 in each association and wrap.
 */
struct slim_wire_input_hdr {
	uint32_t first;
	/* then n >= 1 struct slim_wire_input */
} SLIM_PACKED;

/* Most keys and buttons one HELD lists. */
#define SLIM_HELD_MAX 64

/* HELD: what the console holds down after every input event numbered below `next`. */
struct slim_wire_held {
	uint32_t next;
	uint16_t count; /* at most SLIM_HELD_MAX */
	uint16_t pad;
	/* then count u16 evdev codes (KEY_* and BTN_*) */
} SLIM_PACKED;

/* INPUT_ACK: the server has applied every input event numbered below `next`. */
struct slim_wire_input_ack {
	uint32_t next;
} SLIM_PACKED;

struct slim_wire_ack {
	uint32_t frame;
	uint32_t highest_seq;
	uint64_t received_us; /* console clock: first datagram of the frame */
	uint64_t applied_us;  /* console clock: frame presented */
	uint64_t echo_us;     /* the FRAME_END datagram's time_us, echoed */
} SLIM_PACKED;

/*
 * AUDIO and MIC: one 10 ms packet of a sound stream (slim-audio.h), alone
 * in its datagram, which has sequence number 0: a lost packet is
 * concealed, never reported or sent again.
 */
struct slim_wire_audio {
	uint8_t codec;      /* 1 Opus, 2 PCM s16le interleaved */
	uint8_t channels;   /* 1 or 2 */
	uint16_t frames;    /* samples a channel in the whole packet */
	uint32_t rate;      /* samples a second */
	uint32_t seq;       /* the stream's own, one a packet */
	uint32_t timestamp; /* the sender's clock, in samples */
	/* then the payload (the packet's, or half a PCM packet's) */
} SLIM_PACKED;

/* The largest payload an AUDIO or MIC carries: 10 ms of stereo PCM. */
#define SLIM_AUDIO_MAX_WIRE_PAYLOAD 1920

/* AUDIO_REPORT: the console's playback since the stream began, every few seconds while it plays. */
struct slim_wire_audio_report {
	uint32_t received;  /* packets taken into the jitter buffer */
	uint32_t repaired;  /* lost on the way, rebuilt from a copy a later datagram carried */
	uint32_t lost;      /* 10 ms frames that never came in time, in any copy */
	uint32_t concealed; /* frames guessed: the lost ones, and those a late packet cost */
	uint16_t depth_ms;  /* what the jitter buffer holds */
	uint16_t pad;
	uint32_t jitter_us; /* RFC 3550 interarrival jitter */
} SLIM_PACKED;

/*
 * VIDEO: one fragment of a picture of a compressed stream. A picture is
 * cut into `frags` fragments of its access unit (Annex B bytes), each in
 * a datagram of the display sequence; `frame` and `frag` are the stream's
 * own numbering, so that the console reassembles the picture whatever
 * order and datagrams the fragments came in, and knows what is missing.
 */
struct slim_wire_video {
	uint8_t stream;   /* 0..SLIM_VIDEO_STREAMS-1 */
	uint8_t codec;    /* enum slim_codec */
	uint16_t frag;    /* this fragment, 0..frags-1 */
	uint16_t frags;   /* fragments of the picture, 1..SLIM_VIDEO_MAX_FRAGS */
	uint16_t width, height; /* the coded picture */
	uint16_t pad;
	uint32_t frame;   /* the stream's picture number: one more a picture */
	uint32_t offset;  /* where this fragment's bytes start in the access unit */
	uint32_t size;    /* the access unit's bytes, at most SLIM_VIDEO_MAX_PICTURE */
	struct slim_wire_rect dst;  /* where the whole picture is shown, scaled */
	struct slim_wire_rect clip; /* what of dst it paints (inside dst and the screen) */
	/* then the fragment's bytes */
} SLIM_PACKED;

/* VIDEO_RECOVER: stream `stream` lost what it cannot do without since `frame`. */
struct slim_wire_video_recover {
	uint8_t stream;
	uint8_t pad[3];
	uint32_t frame; /* the last picture it decoded whole; the next it waits for */
} SLIM_PACKED;

struct slim_wire_seq_range {
	uint32_t first, last;
} SLIM_PACKED;

struct slim_wire_nack {
	uint16_t count;
	uint16_t flags;
	/* then count ranges */
} SLIM_PACKED;

#define SLIM_NACK_MAX_RANGES 64

_Static_assert(sizeof(struct slim_wire_dgram) == 24, "datagram header");
_Static_assert(sizeof(struct slim_wire_cmd) == 4, "command header");
_Static_assert(sizeof(struct slim_wire_fill) == 12, "FILL");
_Static_assert(sizeof(struct slim_wire_bitmap) == 16, "BITMAP");
_Static_assert(sizeof(struct slim_wire_copy) == 12, "COPY");
_Static_assert(sizeof(struct slim_wire_palette) == 10, "PALETTE");
_Static_assert(sizeof(struct slim_wire_cache) == 12, "CACHE_STORE, CACHE_DRAW");
_Static_assert(sizeof(struct slim_wire_cscs) == 28, "CSCS");
_Static_assert(sizeof(struct slim_wire_cursor_image) == 16, "CURSOR_IMAGE");
_Static_assert(sizeof(struct slim_wire_frame_end) == 24, "FRAME_END");
_Static_assert(sizeof(struct slim_wire_hello) == 44, "HELLO");
_Static_assert(sizeof(struct slim_wire_head) == 100, "HELLO head");
_Static_assert(sizeof(struct slim_wire_heads) == 4, "HELLO heads");
_Static_assert(sizeof(struct slim_wire_keyboard) == 304, "HELLO keyboard");
_Static_assert(sizeof(struct slim_wire_codec) == 12, "HELLO codec");
_Static_assert(sizeof(struct slim_wire_codecs) == 4, "HELLO codecs");
_Static_assert(sizeof(struct slim_wire_video) == 40, "VIDEO");
_Static_assert(sizeof(struct slim_wire_video_recover) == 8, "VIDEO_RECOVER");

/*
 * The longest HELLO datagram: header, command header, every part. It may
 * be longer than the console's MTU (the network fragments it); nothing
 * else upstream is.
 */
#define SLIM_HELLO_MAX_DGRAM (sizeof(struct slim_wire_dgram) + sizeof(struct slim_wire_cmd) + \
	sizeof(struct slim_wire_hello) + 4 + sizeof(struct slim_wire_heads) + \
	SLIM_MAX_HEADS * sizeof(struct slim_wire_head) + sizeof(struct slim_wire_keyboard) + \
	SLIM_UNREACHED_LEN + sizeof(struct slim_wire_codecs) + \
	SLIM_MAX_CODECS * sizeof(struct slim_wire_codec) + SLIM_ATTACH_TOKEN_LEN)
_Static_assert(sizeof(struct slim_wire_input) == 20, "INPUT event");
_Static_assert(sizeof(struct slim_wire_input_hdr) == 4, "INPUT header");
_Static_assert(sizeof(struct slim_wire_held) == 8, "HELD header");
_Static_assert(sizeof(struct slim_wire_input_ack) == 4, "INPUT_ACK");
_Static_assert(sizeof(struct slim_wire_ack) == 32, "ACK");
_Static_assert(sizeof(struct slim_wire_card) == 36, "CARD");
_Static_assert(sizeof(struct slim_wire_redirect) == 68, "REDIRECT");
_Static_assert(sizeof(struct slim_wire_move) == 52, "MOVE");
_Static_assert(sizeof(struct slim_wire_audio) == 16, "AUDIO");
_Static_assert(sizeof(struct slim_wire_audio_report) == 24, "AUDIO_REPORT");

#endif
