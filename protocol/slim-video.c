#include <stdlib.h>
#include <string.h>
#include "slim-video.h"

/*
 * How far past the newest picture it is done with a stream takes a
 * picture: a number beyond (a forged or replayed one, or one from far
 * ahead) costs no memory and holds nothing.
 */
#define WINDOW 1024u

#define KEYISH (SLIM_VIDEO_KEY | SLIM_VIDEO_START)

uint16_t slim_video_frags(size_t size, size_t room)
{
	if (room == 0) {
		return UINT16_MAX;
	}
	size_t n = size / room + (size % room != 0);
	if (n == 0) {
		return 1;
	}
	return n > UINT16_MAX ? UINT16_MAX : (uint16_t)n;
}

static struct slim_wire_rect rect_to_wire(struct slim_rect r)
{
	return (struct slim_wire_rect){ r.x, r.y, r.w, r.h };
}

void slim_video_fragment(const struct slim_video_picture *pic, size_t room, uint16_t frag,
		struct slim_wire_video *hdr, const uint8_t **data, size_t *len)
{
	size_t offset = (size_t)frag * room;
	if (offset > pic->size) {
		offset = pic->size;
	}
	size_t left = pic->size - offset;
	*hdr = (struct slim_wire_video){
		.stream = pic->stream,
		.codec = SLIM_CODEC_H264,
		.frag = frag,
		.frags = slim_video_frags(pic->size, room),
		.width = pic->width,
		.height = pic->height,
		.frame = pic->frame,
		.offset = (uint32_t)offset,
		.size = (uint32_t)pic->size,
		.dst = rect_to_wire(pic->dst),
		.clip = rect_to_wire(pic->clip),
	};
	*data = pic->data + offset;
	*len = left < room ? left : room;
}

/* Where a fragment's bytes lie in its access unit: [start, end). */
struct span {
	uint32_t start, end;
};

#define HAVE_WORDS (SLIM_VIDEO_MAX_FRAGS / 64)

/* A picture some fragments of which have come; its header is its first fragment's. */
struct picture {
	bool used, whole;
	uint8_t flags;
	uint16_t width, height, frags, got;
	uint32_t frame, size, bytes;
	struct slim_wire_rect dst, clip;
	uint64_t whole_at;
	uint8_t *data;        /* size bytes */
	struct span *spans;   /* one a fragment, valid where `have` says */
	uint64_t have[HAVE_WORDS];
};

/*
 * NEW: nothing handed out yet; FLOWING: the stream hands out picture
 * last + 1 next; WANTS_KEY: it lost what it cannot do without, and hands
 * out nothing but a key picture.
 */
enum stream_state {
	STREAM_NEW,
	STREAM_FLOWING,
	STREAM_WANTS_KEY,
};

struct stream {
	enum stream_state state;
	/* the newest picture handed out or given up (valid with has_base) */
	bool has_base;
	uint32_t base;
	uint32_t last, last_key; /* handed out: the last one, the last key one */
	/* since when fragments come that it does not take, with none handed out */
	bool astray;
	uint64_t astray_since;
	bool asked;
	uint64_t asked_at;
	struct picture waiting[SLIM_VIDEO_MAX_WAITING];
	size_t n_waiting, bytes;
	uint8_t *current; /* what the last picture handed out points into */
};

struct slim_video_depack {
	struct stream streams[SLIM_VIDEO_STREAMS];
	unsigned next_stream; /* where pop looks first, so that no stream starves another */
	struct slim_video_depack_stats stats;
};

static bool before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static void stream_set_state(struct stream *s, enum stream_state state)
{
	if (state == s->state) {
		return;
	}
	/* a stream that starts wanting a key asks at once, and every time anew */
	s->asked = false;
	s->state = state;
}

static void picture_free(struct stream *s, struct picture *p)
{
	free(p->data);
	free(p->spans);
	s->bytes -= p->size;
	s->n_waiting--;
	memset(p, 0, sizeof(*p));
}

/* A picture given up: what came before it is of no more use either. */
static void picture_drop(struct slim_video_depack *d, struct stream *s, struct picture *p)
{
	if (!(p->flags & SLIM_VIDEO_START) && (!s->has_base || before(s->base, p->frame))) {
		s->base = p->frame;
		s->has_base = true;
	}
	d->stats.skipped++;
	picture_free(s, p);
}

static struct picture *find(struct stream *s, uint32_t frame)
{
	for (size_t i = 0; i < SLIM_VIDEO_MAX_WAITING; i++) {
		if (s->waiting[i].used && s->waiting[i].frame == frame) {
			return &s->waiting[i];
		}
	}
	return NULL;
}

/* The earliest waiting picture with any of `flags` (0: any), or NULL. */
static struct picture *earliest(struct stream *s, uint8_t flags)
{
	struct picture *e = NULL;
	for (size_t i = 0; i < SLIM_VIDEO_MAX_WAITING; i++) {
		struct picture *p = &s->waiting[i];
		if (p->used && (!flags || (p->flags & flags)) && (!e || before(p->frame, e->frame))) {
			e = p;
		}
	}
	return e;
}

/*
 * The picture the stream may hand out now: last + 1 when it is whole,
 * else the earliest whole key picture; -1 when none may go.
 */
static int stream_next(const struct stream *s)
{
	int key = -1;
	for (size_t i = 0; i < SLIM_VIDEO_MAX_WAITING; i++) {
		const struct picture *p = &s->waiting[i];
		if (!p->used || !p->whole) {
			continue;
		}
		if (s->state == STREAM_FLOWING && p->frame == s->last + 1) {
			return (int)i;
		}
		if ((p->flags & KEYISH) && (key < 0 || before(p->frame, s->waiting[key].frame))) {
			key = (int)i;
		}
	}
	return key;
}

/* When the stream gives up waiting; -1: it waits for nothing it gives up on. */
static int64_t stream_hold_end(const struct stream *s)
{
	if (s->state == STREAM_WANTS_KEY) {
		return -1;
	}
	int64_t end = -1;
	for (size_t i = 0; i < SLIM_VIDEO_MAX_WAITING; i++) {
		const struct picture *p = &s->waiting[i];
		if (p->used && p->whole && (end < 0 || p->whole_at + SLIM_VIDEO_HOLD_US < (uint64_t)end)) {
			end = (int64_t)(p->whole_at + SLIM_VIDEO_HOLD_US);
		}
	}
	return end;
}

/*
 * What it held for is lost: everything before the earliest key picture
 * waiting goes (all of it if none waits), and the stream wants a key.
 */
static void stream_give_up(struct slim_video_depack *d, struct stream *s)
{
	struct picture *key = earliest(s, KEYISH);
	for (size_t i = 0; i < SLIM_VIDEO_MAX_WAITING; i++) {
		struct picture *p = &s->waiting[i];
		if (p->used && p != key && (!key || before(p->frame, key->frame))) {
			picture_drop(d, s, p);
		}
	}
	stream_set_state(s, STREAM_WANTS_KEY);
}

/* Whether `p` may still follow `out`, which is being handed out. */
static bool follows(const struct picture *p, const struct picture *out)
{
	uint32_t ahead = p->frame - out->frame;
	if (ahead >= 1 && ahead <= WINDOW) {
		return true;
	}
	/* a new encoder's first picture numbers its own */
	return (p->flags & SLIM_VIDEO_START) && !(out->flags & SLIM_VIDEO_START);
}

static void stream_hand_out(struct slim_video_depack *d, unsigned index, struct picture *out,
		struct slim_video_au *au)
{
	struct stream *s = &d->streams[index];
	for (size_t i = 0; i < SLIM_VIDEO_MAX_WAITING; i++) {
		struct picture *p = &s->waiting[i];
		if (p->used && p != out && !follows(p, out)) {
			picture_drop(d, s, p);
		}
	}
	*au = (struct slim_video_au){
		.stream = (uint8_t)index,
		.flags = out->flags,
		.width = out->width,
		.height = out->height,
		.frame = out->frame,
		.dst = { out->dst.x, out->dst.y, out->dst.w, out->dst.h },
		.clip = { out->clip.x, out->clip.y, out->clip.w, out->clip.h },
		.data = out->data,
		.size = out->size,
	};
	free(s->current);
	s->current = out->data;
	out->data = NULL;
	s->last = s->base = out->frame;
	s->has_base = true;
	s->astray = false;
	if (out->flags & KEYISH) {
		s->last_key = out->frame;
	}
	picture_free(s, out);
	stream_set_state(s, STREAM_FLOWING);
	d->stats.pictures++;
}

/*
 * Whether a picture not waiting yet is one the stream takes: a new
 * encoder's first at any number, and any key picture while it wants one;
 * else one after its base, or after a new encoder's first picture that
 * waits.
 */
static bool stream_takes(const struct stream *s, uint32_t frame, uint8_t flags)
{
	if ((flags & SLIM_VIDEO_START) || !s->has_base ||
			(s->state == STREAM_WANTS_KEY && (flags & SLIM_VIDEO_KEY))) {
		return true;
	}
	uint32_t ahead = frame - s->base;
	if (ahead >= 1 && ahead <= WINDOW) {
		return true;
	}
	for (size_t i = 0; i < SLIM_VIDEO_MAX_WAITING; i++) {
		const struct picture *p = &s->waiting[i];
		if (p->used && (p->flags & SLIM_VIDEO_START) && frame - p->frame <= WINDOW) {
			return true;
		}
	}
	return false;
}

/*
 * A fragment the stream does not take. The server numbers a new encoder's
 * pictures from 0: when its first picture is lost whole, the ones after it
 * lie behind the stream's base, and nothing would ever go again. Fragments
 * that keep coming astray for as long as a hold, with nothing handed out,
 * say so: the stream wants a key picture (which it takes at any number).
 */
static void stream_astray(struct stream *s, uint64_t now_us)
{
	if (!s->astray) {
		s->astray = true;
		s->astray_since = now_us;
	} else if (now_us >= s->astray_since && now_us - s->astray_since >= SLIM_VIDEO_HOLD_US) {
		stream_set_state(s, STREAM_WANTS_KEY);
	}
}

/* Room for a picture of `size` bytes, made by giving up the oldest. */
static struct picture *stream_add(struct slim_video_depack *d, struct stream *s,
		const struct slim_wire_video *h, uint8_t flags)
{
	while (s->n_waiting >= SLIM_VIDEO_MAX_WAITING ||
			s->bytes + h->size > SLIM_VIDEO_MAX_WAITING_BYTES) {
		picture_drop(d, s, earliest(s, 0));
		stream_set_state(s, STREAM_WANTS_KEY);
	}
	struct picture *p = NULL;
	for (size_t i = 0; !p; i++) {
		if (!s->waiting[i].used) {
			p = &s->waiting[i];
		}
	}
	p->data = malloc(h->size);
	p->spans = calloc(h->frags, sizeof(*p->spans));
	if (!p->data || !p->spans) {
		free(p->data);
		free(p->spans);
		memset(p, 0, sizeof(*p));
		return NULL;
	}
	p->used = true;
	p->flags = flags;
	p->width = h->width;
	p->height = h->height;
	p->frags = h->frags;
	p->frame = h->frame;
	p->size = h->size;
	p->dst = h->dst;
	p->clip = h->clip;
	s->n_waiting++;
	s->bytes += h->size;
	return p;
}

static bool has(const struct picture *p, unsigned i)
{
	return p->have[i / 64] & (1ull << (i % 64));
}

/* The nearest fragment before i that came; -1: none. */
static int prev_had(const struct picture *p, unsigned i)
{
	while (i > 0) {
		unsigned b = i - 1;
		uint64_t w = p->have[b / 64] & (~0ull >> (63 - b % 64));
		if (w) {
			return (int)(b / 64 * 64 + 63 - (unsigned)__builtin_clzll(w));
		}
		i = b - b % 64;
	}
	return -1;
}

/* The nearest fragment after i that came; -1: none. */
static int next_had(const struct picture *p, unsigned i)
{
	for (unsigned b = i + 1; b < p->frags; b = (b / 64 + 1) * 64) {
		uint64_t w = p->have[b / 64] & (~0ull << (b % 64));
		if (w) {
			return (int)(b / 64 * 64 + (unsigned)__builtin_ctzll(w));
		}
	}
	return -1;
}

/*
 * Whether fragment i, [start, end), fits between the fragments that came:
 * fragment 0 starts the picture, the last ends it, a fragment starts where
 * the one before it ends, and each missing one leaves at least a byte. So
 * fragments never overlap, and when all have come they cover the picture.
 */
static bool fits(const struct picture *p, unsigned i, uint32_t start, uint32_t end)
{
	int j = prev_had(p, i), k = next_had(p, i);
	uint32_t lo = j < 0 ? 0 : p->spans[j].end;
	uint32_t missing_before = i - (unsigned)(j + 1);
	uint32_t hi = k < 0 ? p->size : p->spans[k].start;
	uint32_t missing_after = (unsigned)(k < 0 ? p->frags : k) - i - 1;
	if (start < lo || start - lo < missing_before || (missing_before == 0 && start != lo)) {
		return false;
	}
	return end <= hi && hi - end >= missing_after && (missing_after != 0 || end == hi);
}

struct slim_video_depack *slim_video_depack_create(void)
{
	return calloc(1, sizeof(struct slim_video_depack));
}

void slim_video_depack_reset(struct slim_video_depack *d)
{
	for (unsigned i = 0; i < SLIM_VIDEO_STREAMS; i++) {
		struct stream *s = &d->streams[i];
		for (size_t j = 0; j < SLIM_VIDEO_MAX_WAITING; j++) {
			if (s->waiting[j].used) {
				picture_free(s, &s->waiting[j]);
			}
		}
		free(s->current);
		memset(s, 0, sizeof(*s));
	}
	d->next_stream = 0;
}

void slim_video_depack_destroy(struct slim_video_depack *d)
{
	if (!d) {
		return;
	}
	slim_video_depack_reset(d);
	free(d);
}

bool slim_video_depack_push(struct slim_video_depack *d, const struct slim_cmd *cmd,
		uint64_t now_us)
{
	d->stats.fragments++;
	const struct slim_wire_video *h = &cmd->video.hdr;
	uint8_t flags = cmd->flags & KEYISH;
	/* what the reader checked, again: the arithmetic below relies on it */
	if (cmd->type != SLIM_CMD_VIDEO || h->stream >= SLIM_VIDEO_STREAMS ||
			h->frags == 0 || h->frags > SLIM_VIDEO_MAX_FRAGS || h->frag >= h->frags ||
			h->size == 0 || h->size > SLIM_VIDEO_MAX_PICTURE || h->offset > h->size ||
			cmd->video.len == 0 || cmd->video.len > h->size - h->offset) {
		d->stats.bad++;
		return false;
	}
	struct stream *s = &d->streams[h->stream];
	struct picture *p = find(s, h->frame);
	if (!p) {
		/* checked alone first, so that a fragment that cannot fit allocates nothing */
		struct picture alone = { .frags = h->frags, .size = h->size };
		if (!fits(&alone, h->frag, h->offset, h->offset + (uint32_t)cmd->video.len)) {
			d->stats.bad++;
			return false;
		}
		if (!stream_takes(s, h->frame, flags)) {
			stream_astray(s, now_us);
			/* a late copy of what the stream is done with, or a number from nowhere */
			if (before(s->base, h->frame)) {
				d->stats.bad++;
				return false;
			}
			d->stats.duplicates++;
			return true;
		}
		p = stream_add(d, s, h, flags);
		if (!p) {
			d->stats.skipped++;
			return false;
		}
	} else if (p->size != h->size || p->frags != h->frags || p->flags != flags ||
			p->width != h->width || p->height != h->height ||
			memcmp(&p->dst, &h->dst, sizeof(p->dst)) != 0 ||
			memcmp(&p->clip, &h->clip, sizeof(p->clip)) != 0) {
		d->stats.bad++;
		return false;
	}
	uint32_t start = h->offset, end = h->offset + (uint32_t)cmd->video.len;
	if (has(p, h->frag)) {
		if (p->spans[h->frag].start != start || p->spans[h->frag].end != end) {
			d->stats.bad++;
			return false;
		}
		d->stats.duplicates++;
		return true;
	}
	if (!fits(p, h->frag, start, end)) {
		d->stats.bad++;
		return false;
	}
	memcpy(p->data + start, cmd->video.data, end - start);
	p->spans[h->frag] = (struct span){ start, end };
	p->have[h->frag / 64] |= 1ull << (h->frag % 64);
	p->got++;
	p->bytes += end - start;
	if (p->got == p->frags && p->bytes == p->size) {
		p->whole = true;
		p->whole_at = now_us;
	}
	return true;
}

bool slim_video_depack_pop(struct slim_video_depack *d, struct slim_video_au *au,
		uint64_t now_us)
{
	for (unsigned n = 0; n < SLIM_VIDEO_STREAMS; n++) {
		unsigned i = (d->next_stream + n) % SLIM_VIDEO_STREAMS;
		struct stream *s = &d->streams[i];
		int next = stream_next(s);
		if (next >= 0) {
			stream_hand_out(d, i, &s->waiting[next], au);
			d->next_stream = (i + 1) % SLIM_VIDEO_STREAMS;
			return true;
		}
		int64_t end = stream_hold_end(s);
		if (end >= 0 && now_us >= (uint64_t)end) {
			stream_give_up(d, s);
		}
	}
	return false;
}

void slim_video_depack_broken(struct slim_video_depack *d, uint8_t stream, uint32_t frame)
{
	if (stream >= SLIM_VIDEO_STREAMS) {
		return;
	}
	struct stream *s = &d->streams[stream];
	/* a key picture handed out since has mended what this one broke */
	if (s->state == STREAM_NEW || before(frame, s->last_key)) {
		return;
	}
	stream_set_state(s, STREAM_WANTS_KEY);
}

bool slim_video_depack_wants_key(struct slim_video_depack *d, uint64_t now_us,
		uint8_t *stream, uint32_t *frame)
{
	for (unsigned i = 0; i < SLIM_VIDEO_STREAMS; i++) {
		struct stream *s = &d->streams[i];
		if (s->state != STREAM_WANTS_KEY ||
				(s->asked && now_us >= s->asked_at && now_us - s->asked_at < SLIM_VIDEO_ASK_US)) {
			continue;
		}
		s->asked = true;
		s->asked_at = now_us;
		d->stats.key_requests++;
		*stream = (uint8_t)i;
		*frame = s->last;
		return true;
	}
	return false;
}

int64_t slim_video_depack_next_deadline(const struct slim_video_depack *d, uint64_t now_us)
{
	int64_t soonest = -1;
	for (unsigned i = 0; i < SLIM_VIDEO_STREAMS; i++) {
		const struct stream *s = &d->streams[i];
		if (stream_next(s) >= 0) {
			return 0;
		}
		int64_t end = stream_hold_end(s);
		if (end < 0) {
			continue;
		}
		int64_t left = (uint64_t)end > now_us ? (int64_t)((uint64_t)end - now_us) : 0;
		if (soonest < 0 || left < soonest) {
			soonest = left;
		}
	}
	return soonest;
}

const struct slim_video_depack_stats *slim_video_depack_stats(const struct slim_video_depack *d)
{
	return &d->stats;
}
