#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "pixel-cache.h"

void slim_pixel_cache_finish(struct slim_pixel_cache *cache)
{
	free(cache->px);
	*cache = (struct slim_pixel_cache){ 0 };
}

void slim_pixel_cache_reset(struct slim_pixel_cache *cache)
{
	memset(cache->w, 0, sizeof(cache->w));
	memset(cache->h, 0, sizeof(cache->h));
}

void slim_pixel_cache_begin(struct slim_pixel_cache *cache)
{
	if (++cache->gen == 0) {
		memset(cache->pending_gen, 0, sizeof(cache->pending_gen));
		cache->gen = 1;
	}
}

enum slim_error slim_pixel_cache_check(struct slim_pixel_cache *cache,
		const struct slim_cmd *cmd)
{
	uint16_t slot = cmd->cache.slot;
	if (cmd->type == SLIM_CMD_CACHE_STORE) {
		if (!cache->px) {
			cache->px = malloc((size_t)SLIM_CACHE_SLOTS * SLIM_CACHE_SLOT_PIXELS * 4);
			if (!cache->px) {
				return SLIM_ERR_CACHE;
			}
		}
		cache->pending_w[slot] = cmd->cache.r.w;
		cache->pending_h[slot] = cmd->cache.r.h;
		cache->pending_gen[slot] = cache->gen;
		return SLIM_OK;
	}
	bool pending = cache->pending_gen[slot] == cache->gen;
	uint16_t w = pending ? cache->pending_w[slot] : cache->w[slot];
	uint16_t h = pending ? cache->pending_h[slot] : cache->h[slot];
	return w == cmd->cache.r.w && h == cmd->cache.r.h ? SLIM_OK : SLIM_ERR_CACHE;
}

void slim_pixel_cache_apply(struct slim_pixel_cache *cache, const struct slim_fb *fb,
		const struct slim_cmd *cmd)
{
	struct slim_rect r = cmd->cache.r;
	uint32_t *slot = cache->px + (size_t)cmd->cache.slot * SLIM_CACHE_SLOT_PIXELS;
	bool store = cmd->type == SLIM_CMD_CACHE_STORE;
	for (uint32_t y = 0; y < r.h; y++) {
		uint32_t *row = slim_fb_row(fb, r.x, r.y + y);
		uint32_t *kept = slot + (size_t)y * r.w;
		memcpy(store ? kept : row, store ? row : kept, (size_t)r.w * 4);
	}
	if (store) {
		cache->w[cmd->cache.slot] = r.w;
		cache->h[cmd->cache.slot] = r.h;
	}
}
