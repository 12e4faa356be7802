/*
 * The server's half of the console's cache (CACHE_STORE, CACHE_DRAW).
 *
 * A tile sent a second time is kept in a slot: the datagram that paints it
 * also says CACHE_STORE. The slot is used only once that datagram is
 * confirmed, and not at all if a datagram before it that painted (or
 * copied) into its rectangle was lost: the console kept other pixels than
 * the model's then. The console reports every loss before it confirms
 * what came after, so the losses are known by the time of confirmation;
 * from then on the same tile anywhere on the screen costs a CACHE_DRAW of
 * 16 bytes. Loss, a restart or a migration cost bytes, never pixels: a new
 * association empties both halves, and lost areas are repainted with real
 * pixels, never from the cache.
 *
 * Tiles are known by a keyed 128-bit SipHash of their size and pixels, so
 * that no client can make two tiles collide. When every slot is taken, a
 * random one makes room: a loop of tiles longer than the cache then still
 * finds a share of them kept, where LRU would evict each just before its
 * turn and fall off Wong and Seltzer's cliff.
 */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include "encoder-internal.h"

/* Hash to slot, and the hashes seen once: direct-mapped, a collision only forgets. */
#define CACHE_INDEX 8192
#define CACHE_SEEN 16384

enum cache_state {
	CACHE_EMPTY,
	CACHE_PENDING,   /* stored by a datagram not yet confirmed */
	CACHE_CONFIRMED, /* the console has it */
};

struct cache_slot {
	uint8_t hash[CACHE_HASH_BYTES];
	uint16_t x, y, w, h; /* where it was stored from */
	uint32_t seq; /* of the datagram that stored it */
	uint8_t state;
};

struct encoder_cache {
	struct cache_slot slots[SLIM_CACHE_SLOTS];
	int16_t index[CACHE_INDEX];
	uint64_t seen[CACHE_SEEN];
	/* the stores not yet confirmed, oldest first (a slot stored again has a newer one) */
	struct {
		uint16_t slot;
		uint32_t seq;
	} pending[SLIM_CACHE_SLOTS];
	uint32_t pending_head, pending_n;
	uint32_t used; /* slots handed out since the reset: free ones go first */
	uint64_t rng;
	uint8_t key[crypto_shorthash_siphashx24_KEYBYTES];
	uint32_t scratch[SLIM_CACHE_SLOT_PIXELS + 1];
};

struct encoder_cache *cache_create(void)
{
	if (sodium_init() < 0) {
		return NULL;
	}
	struct encoder_cache *c = malloc(sizeof(*c));
	if (!c) {
		return NULL;
	}
	randombytes_buf(c->key, sizeof(c->key));
	randombytes_buf(&c->rng, sizeof(c->rng));
	c->rng |= 1;
	cache_reset(c);
	return c;
}

void cache_destroy(struct encoder_cache *c)
{
	free(c);
}

void cache_reset(struct encoder_cache *c)
{
	memset(c->slots, 0, sizeof(c->slots));
	memset(c->index, 0xff, sizeof(c->index)); /* -1: no slot */
	memset(c->seen, 0, sizeof(c->seen));
	c->pending_head = c->pending_n = 0;
	c->used = 0;
}

static uint32_t index_of(const uint8_t *hash)
{
	uint32_t i;
	memcpy(&i, hash, sizeof(i));
	return i % CACHE_INDEX;
}

int cache_lookup(struct encoder_cache *c, const struct slim_fb *fb, struct slim_rect r,
		uint8_t *hash)
{
	uint32_t *p = c->scratch;
	*p++ = (uint32_t)r.w << 16 | r.h;
	for (uint32_t y = 0; y < r.h; y++) {
		const uint32_t *row = slim_fb_row(fb, r.x, r.y + y);
		for (uint32_t x = 0; x < r.w; x++) {
			*p++ = pixel_rgb(row[x]);
		}
	}
	crypto_shorthash_siphashx24(hash, (const uint8_t *)c->scratch,
		(size_t)(p - c->scratch) * 4, c->key);
	int16_t slot = c->index[index_of(hash)];
	if (slot < 0) {
		return CACHE_MISS;
	}
	const struct cache_slot *s = &c->slots[slot];
	if (s->state == CACHE_EMPTY || s->w != r.w || s->h != r.h ||
			memcmp(s->hash, hash, CACHE_HASH_BYTES) != 0) {
		return CACHE_MISS;
	}
	return s->state == CACHE_CONFIRMED ? slot : CACHE_STORING;
}

bool cache_admit(struct encoder_cache *c, const uint8_t *hash)
{
	uint64_t h;
	memcpy(&h, hash + 4, sizeof(h));
	uint64_t *seen = &c->seen[h % CACHE_SEEN];
	if (*seen == h) {
		return true;
	}
	*seen = h;
	return false;
}

int cache_store(struct encoder_cache *c, const uint8_t *hash, struct slim_rect r, uint32_t seq)
{
	if (c->pending_n == SLIM_CACHE_SLOTS) {
		return -1; /* a stall of confirmations: wait for them */
	}
	uint16_t slot;
	if (c->used < SLIM_CACHE_SLOTS) {
		slot = (uint16_t)c->used++;
	} else {
		c->rng ^= c->rng << 13;
		c->rng ^= c->rng >> 7;
		c->rng ^= c->rng << 17;
		slot = (uint16_t)(c->rng % SLIM_CACHE_SLOTS);
	}
	struct cache_slot *s = &c->slots[slot];
	memcpy(s->hash, hash, CACHE_HASH_BYTES);
	s->x = r.x;
	s->y = r.y;
	s->w = r.w;
	s->h = r.h;
	s->seq = seq;
	s->state = CACHE_PENDING;
	c->index[index_of(hash)] = (int16_t)slot;
	uint32_t tail = (c->pending_head + c->pending_n++) % SLIM_CACHE_SLOTS;
	c->pending[tail].slot = slot;
	c->pending[tail].seq = seq;
	return slot;
}

void cache_moved(struct encoder_cache *c, uint16_t slot, uint32_t from, uint32_t to)
{
	struct cache_slot *s = &c->slots[slot];
	if (s->state != CACHE_PENDING || s->seq != from || c->pending_n == SLIM_CACHE_SLOTS) {
		s->state = s->seq == from ? CACHE_EMPTY : s->state;
		return;
	}
	s->seq = to;
	uint32_t tail = (c->pending_head + c->pending_n++) % SLIM_CACHE_SLOTS;
	c->pending[tail].slot = slot;
	c->pending[tail].seq = to;
}

void cache_lost(struct encoder_cache *c, uint32_t first, const pixman_region32_t *wrong)
{
	for (uint32_t i = 0; i < c->pending_n; i++) {
		struct cache_slot *s = &c->slots[c->pending[(c->pending_head + i) % SLIM_CACHE_SLOTS].slot];
		if (s->state != CACHE_PENDING || (int32_t)(s->seq - first) < 0) {
			continue;
		}
		pixman_box32_t box = { s->x, s->y, s->x + s->w, s->y + s->h };
		if (!wrong || pixman_region32_contains_rectangle((pixman_region32_t *)wrong, &box) !=
				PIXMAN_REGION_OUT) {
			s->state = CACHE_EMPTY;
		}
	}
}

void cache_confirm(struct encoder_cache *c, uint32_t confirmed)
{
	while (c->pending_n > 0) {
		uint32_t seq = c->pending[c->pending_head].seq;
		if ((int32_t)(seq - confirmed) > 0) {
			break;
		}
		struct cache_slot *s = &c->slots[c->pending[c->pending_head].slot];
		if (s->state == CACHE_PENDING && s->seq == seq) {
			s->state = CACHE_CONFIRMED;
		}
		c->pending_head = (c->pending_head + 1) % SLIM_CACHE_SLOTS;
		c->pending_n--;
	}
}
