/*
 * zstd for whole datagrams, at two efforts. Fast (level 3): on the
 * anti-aliased text and flat UI a desktop sends, it takes a third to a half
 * off what PALETTE and BITMAP leave, at 10-40 us for a datagram's worth of
 * commands. Strong (level 7, lazy matching): 2-8% fewer bytes again
 * (bench-bandwidth's drag, typing and menus), for up to twice the time to
 * compress and a quarter more to digest a dictionary (levels from 13 on,
 * binary trees, take over a millisecond to digest one of 64 KiB: more
 * than a keystroke's whole path). The frame has its content
 * size and no checksum or dictionary id: DTLS already protects it.
 *
 * With a dictionary (SLIM_DGRAM_HISTORY), the server compresses with a
 * CDict made for each run of datagrams it names, at most once an effort
 * (a frame's datagrams often share one), and the console decompresses with
 * those datagrams' commands as a prefix, which costs nothing to set up.
 * The dictionary starts with a command header, never with zstd's
 * dictionary magic, so both sides take it as raw content.
 */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "slim-zstd.h"

static const int levels[] = { [SLIM_ZSTD_FAST] = 3, [SLIM_ZSTD_STRONG] = 7 };

struct slim_zstd {
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
	/* the server's dictionary: datagrams first..last of `history` (last 0: none) */
	struct slim_history *history;
	uint32_t first, last;
	ZSTD_CDict *cdict[2]; /* digested at each effort, when first used */
};

static void forget_dict(struct slim_zstd *z)
{
	for (size_t e = 0; e < 2; e++) {
		ZSTD_freeCDict(z->cdict[e]);
		z->cdict[e] = NULL;
	}
	z->last = 0;
}

struct slim_zstd *slim_zstd_create(void)
{
	struct slim_zstd *z = calloc(1, sizeof(*z));
	if (!z) {
		return NULL;
	}
	z->cctx = ZSTD_createCCtx();
	z->dctx = ZSTD_createDCtx();
	if (!z->cctx || !z->dctx ||
			ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_checksumFlag, 0)) ||
			ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_dictIDFlag, 0)) ||
			/* a window no larger than a dictionary and a datagram need */
			ZSTD_isError(ZSTD_DCtx_setParameter(z->dctx, ZSTD_d_windowLogMax, 21))) {
		slim_zstd_destroy(z);
		return NULL;
	}
	return z;
}

void slim_zstd_destroy(struct slim_zstd *z)
{
	if (!z) {
		return;
	}
	ZSTD_freeCCtx(z->cctx);
	ZSTD_freeDCtx(z->dctx);
	forget_dict(z);
	free(z);
}

bool slim_zstd_use_history(struct slim_zstd *z, struct slim_history *h, uint32_t first,
		uint32_t last)
{
	if (z->last != 0 && z->last == last && z->first == first && z->history == h) {
		return true;
	}
	forget_dict(z);
	/* checked now: a dictionary named is one the history has */
	size_t len;
	if (last == 0 || !slim_history_dict(h, first, last, &len)) {
		return false;
	}
	z->history = h;
	z->first = first;
	z->last = last;
	return true;
}

/* The dictionary digested at an effort's level; NULL when the history lost it since. */
static ZSTD_CDict *digest(struct slim_zstd *z, enum slim_zstd_effort effort)
{
	if (!z->cdict[effort]) {
		size_t len;
		const uint8_t *dict = slim_history_dict(z->history, z->first, z->last, &len);
		z->cdict[effort] = dict ? ZSTD_createCDict(dict, len, levels[effort]) : NULL;
	}
	return z->cdict[effort];
}

size_t slim_zstd_deflate(struct slim_zstd *z, enum slim_zstd_effort effort,
		const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
	size_t hdr = sizeof(struct slim_wire_dgram);
	ZSTD_CDict *cdict = z->last ? digest(z, effort) : NULL;
	size_t ref = cdict ? sizeof(struct slim_wire_history) : 0;
	if (len <= hdr || cap <= hdr + ref) {
		return 0;
	}
	/*
	 * A frame that did not fit leaves the session mid-way: start it again.
	 * With a dictionary, its digest's level is the one zstd uses.
	 */
	if (ZSTD_isError(ZSTD_CCtx_reset(z->cctx, ZSTD_reset_session_only)) ||
			ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel,
				levels[effort])) ||
			ZSTD_isError(ZSTD_CCtx_refCDict(z->cctx, cdict))) {
		return 0;
	}
	size_t n = ZSTD_compress2(z->cctx, out + hdr + ref, cap - hdr - ref, in + hdr, len - hdr);
	if (ZSTD_isError(n) || hdr + ref + n >= len) {
		return 0;
	}
	struct slim_wire_dgram d;
	memcpy(&d, in, sizeof(d));
	d.flags |= SLIM_DGRAM_ZSTD | (cdict ? SLIM_DGRAM_HISTORY : 0);
	memcpy(out, &d, sizeof(d));
	if (cdict) {
		struct slim_wire_history w = { .first = z->first, .last = z->last };
		memcpy(out + hdr, &w, sizeof(w));
	}
	return hdr + ref + n;
}

enum slim_error slim_zstd_reader_init(struct slim_zstd *z, uint8_t *scratch,
		struct slim_history *h, struct slim_reader *r, struct slim_dgram *hdr,
		const uint8_t *buf, size_t len, bool upstream, uint16_t width, uint16_t height)
{
	enum slim_error err = slim_reader_init(r, hdr, buf, len, upstream, width, height);
	if (err != SLIM_OK || !(hdr->flags & SLIM_DGRAM_ZSTD)) {
		return err;
	}
	size_t n;
	err = slim_zstd_inflate(z, h, buf, len, scratch, &n);
	return err != SLIM_OK ? err :
		slim_reader_init(r, hdr, scratch, n, upstream, width, height);
}

enum slim_error slim_zstd_inflate(struct slim_zstd *z, struct slim_history *h,
		const uint8_t *in, size_t len, uint8_t *out, size_t *out_len)
{
	size_t hdr = sizeof(struct slim_wire_dgram);
	struct slim_wire_dgram d;
	if (len <= hdr) {
		return SLIM_ERR_ZSTD;
	}
	memcpy(&d, in, sizeof(d));
	const uint8_t *src = in + hdr;
	size_t src_len = len - hdr;
	const uint8_t *dict = NULL;
	size_t dict_len = 0;
	if (d.flags & SLIM_DGRAM_HISTORY) {
		struct slim_wire_history w;
		if (src_len <= sizeof(w)) {
			return SLIM_ERR_ZSTD;
		}
		memcpy(&w, src, sizeof(w));
		src += sizeof(w);
		src_len -= sizeof(w);
		dict = h ? slim_history_dict(h, w.first, w.last, &dict_len) : NULL;
		if (!dict) {
			return SLIM_ERR_HISTORY;
		}
	}
	/* one frame, all of it, that says its size; the size is checked before any work */
	unsigned long long size = ZSTD_getFrameContentSize(src, src_len);
	if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR ||
			size > SLIM_MAX_ZSTD_EXPANDED ||
			ZSTD_findFrameCompressedSize(src, src_len) != src_len) {
		return SLIM_ERR_ZSTD;
	}
	if (ZSTD_isError(ZSTD_DCtx_refPrefix(z->dctx, dict, dict_len))) {
		return SLIM_ERR_ZSTD;
	}
	size_t n = ZSTD_decompressDCtx(z->dctx, out + hdr, SLIM_MAX_ZSTD_EXPANDED, src, src_len);
	if (ZSTD_isError(n) || n != size) {
		return SLIM_ERR_ZSTD;
	}
	d.flags &= (uint8_t)~(SLIM_DGRAM_ZSTD | SLIM_DGRAM_HISTORY);
	memcpy(out, &d, sizeof(d));
	*out_len = hdr + n;
	return SLIM_OK;
}
