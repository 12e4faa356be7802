/*
 * zstd for whole datagrams. Level 3: on the anti-aliased text and flat UI
 * a desktop sends, it takes a third to a half off what PALETTE and BITMAP
 * leave, at 20-40 us for a datagram's worth of commands. The frame has
 * its content size and no checksum or dictionary id: DTLS already
 * protects it.
 */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "slim-zstd.h"

#define SLIM_ZSTD_LEVEL 3

struct slim_zstd {
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
};

struct slim_zstd *slim_zstd_create(void)
{
	struct slim_zstd *z = calloc(1, sizeof(*z));
	if (!z) {
		return NULL;
	}
	z->cctx = ZSTD_createCCtx();
	z->dctx = ZSTD_createDCtx();
	if (!z->cctx || !z->dctx ||
			ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel,
				SLIM_ZSTD_LEVEL)) ||
			ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_checksumFlag, 0)) ||
			ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_dictIDFlag, 0)) ||
			/* a window no larger than what a datagram may expand to */
			ZSTD_isError(ZSTD_DCtx_setParameter(z->dctx, ZSTD_d_windowLogMax, 17))) {
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
	free(z);
}

size_t slim_zstd_deflate(struct slim_zstd *z, const uint8_t *in, size_t len,
		uint8_t *out, size_t cap)
{
	size_t hdr = sizeof(struct slim_wire_dgram);
	if (len <= hdr || cap <= hdr) {
		return 0;
	}
	size_t n = ZSTD_compress2(z->cctx, out + hdr, cap - hdr, in + hdr, len - hdr);
	if (ZSTD_isError(n) || hdr + n >= len) {
		return 0;
	}
	memcpy(out, in, hdr);
	struct slim_wire_dgram d;
	memcpy(&d, out, sizeof(d));
	d.flags |= SLIM_DGRAM_ZSTD;
	memcpy(out, &d, sizeof(d));
	return hdr + n;
}

enum slim_error slim_zstd_reader_init(struct slim_zstd *z, uint8_t *scratch,
		struct slim_reader *r, struct slim_dgram *hdr, const uint8_t *buf, size_t len,
		bool upstream, uint16_t width, uint16_t height)
{
	enum slim_error err = slim_reader_init(r, hdr, buf, len, upstream, width, height);
	if (err != SLIM_OK || !(hdr->flags & SLIM_DGRAM_ZSTD)) {
		return err;
	}
	size_t n;
	err = slim_zstd_inflate(z, buf, len, scratch, &n);
	return err != SLIM_OK ? err :
		slim_reader_init(r, hdr, scratch, n, upstream, width, height);
}

enum slim_error slim_zstd_inflate(struct slim_zstd *z, const uint8_t *in, size_t len,
		uint8_t *out, size_t *out_len)
{
	size_t hdr = sizeof(struct slim_wire_dgram);
	if (len <= hdr) {
		return SLIM_ERR_ZSTD;
	}
	const uint8_t *src = in + hdr;
	size_t src_len = len - hdr;
	/* one frame, all of it, that says its size; the size is checked before any work */
	unsigned long long size = ZSTD_getFrameContentSize(src, src_len);
	if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR ||
			size > SLIM_MAX_ZSTD_EXPANDED ||
			ZSTD_findFrameCompressedSize(src, src_len) != src_len) {
		return SLIM_ERR_ZSTD;
	}
	size_t n = ZSTD_decompressDCtx(z->dctx, out + hdr, SLIM_MAX_ZSTD_EXPANDED, src, src_len);
	if (ZSTD_isError(n) || n != size) {
		return SLIM_ERR_ZSTD;
	}
	struct slim_wire_dgram d;
	memcpy(&d, in, sizeof(d));
	d.flags &= (uint8_t)~SLIM_DGRAM_ZSTD;
	memcpy(out, &d, sizeof(d));
	*out_len = hdr + n;
	return SLIM_OK;
}
