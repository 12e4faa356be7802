/*
 * The console's end of CACHE_STORE and CACHE_DRAW: SLIM_CACHE_SLOTS slots
 * of SLIM_CACHE_SLOT_PIXELS pixels, allocated at the first store. A
 * datagram's cache commands are all checked, against the slots as its own
 * earlier commands leave them, before any pixel is touched; only then are
 * they applied.
 */
#ifndef SLIM_CONSOLE_PIXEL_CACHE_H
#define SLIM_CONSOLE_PIXEL_CACHE_H

#include <stdint.h>
#include "slim-codec.h"
#include "slim-pixels.h"

struct slim_pixel_cache {
	/* slot i: px + i * SLIM_CACHE_SLOT_PIXELS, w[i] x h[i] of it used (0: empty) */
	uint32_t *px;
	uint16_t w[SLIM_CACHE_SLOTS], h[SLIM_CACHE_SLOTS];
	/* while a datagram is checked: what its stores will make, where pending_gen is gen */
	uint16_t pending_w[SLIM_CACHE_SLOTS], pending_h[SLIM_CACHE_SLOTS];
	uint32_t pending_gen[SLIM_CACHE_SLOTS], gen;
};

/* Frees the slots; the cache is empty after, as zeroed. */
void slim_pixel_cache_finish(struct slim_pixel_cache *cache);
/* Every slot empty: a new association, of which the server knows nothing. */
void slim_pixel_cache_reset(struct slim_pixel_cache *cache);
/* A new datagram is about to be checked. */
void slim_pixel_cache_begin(struct slim_pixel_cache *cache);
/* One of its cache commands, as the slots will be when it comes to be applied. */
enum slim_error slim_pixel_cache_check(struct slim_pixel_cache *cache,
		const struct slim_cmd *cmd);
/* A checked command: a store copies from `fb` into its slot, a draw the other way. */
void slim_pixel_cache_apply(struct slim_pixel_cache *cache, const struct slim_fb *fb,
		const struct slim_cmd *cmd);

#endif
