/*
 * A YUV image goes to the console as CSCS pieces that each fit one
 * datagram and can each be applied alone: a piece carries every source
 * sample its screen pixels read through the bilinear filter, for luma and
 * chroma alike, so a lost piece costs its own pixels and nothing else.
 */
#include <string.h>
#include "encoder-internal.h"

/* Source columns a piece aims to carry: 32 luma + chroma at 8 bits ~ 27 rows a datagram. */
#define PIECE_SRC_W 32

/*
 * The even-aligned luma range [*first, *first + *len) that holds what
 * destination [d0, d1) reads of both the luma and the chroma plane.
 */
static void piece_axis(uint32_t d0, uint32_t d1, uint32_t src, uint32_t dst,
		uint32_t *first, uint32_t *len)
{
	uint32_t lf, ll, cf, cl;
	slim_cscs_span(d0, d1, src, dst, &lf, &ll);
	slim_cscs_span(d0, d1, (src + 1) / 2, dst, &cf, &cl);
	uint32_t f = (lf < 2 * cf ? lf : 2 * cf) & ~1u;
	uint32_t end = ll + 1 > 2 * cl + 2 ? ll + 1 : 2 * cl + 2;
	end = end < src ? end : src;
	*first = f;
	*len = end - f;
}

static void put_plane(uint8_t *out, size_t out_stride, const uint8_t *src,
		size_t src_stride, uint32_t x, uint32_t y, uint32_t w, uint32_t h, uint8_t depth)
{
	for (uint32_t j = 0; j < h; j++) {
		const uint8_t *s = src + (size_t)(y + j) * src_stride + x;
		uint8_t *o = out + j * out_stride;
		if (depth == SLIM_CSCS_DEPTH8) {
			memcpy(o, s, w);
			continue;
		}
		memset(o, 0, out_stride);
		for (uint32_t i = 0; i < w; i++) {
			uint8_t q = (uint8_t)((s[i] * 15 + 127) / 255);
			o[i / 2] |= (i & 1) ? q : (uint8_t)(q << 4);
		}
	}
}

static void emit_piece(struct slim_encoder *enc, const struct slim_yuv_image *img,
		struct slim_rect psrc, struct slim_rect pdst)
{
	size_t ys, cs;
	size_t len = slim_cscs_payload_len(psrc.w, psrc.h, img->depth, &ys, &cs);
	struct slim_wire_cscs hdr = {
		.src_w = img->width, .src_h = img->height,
		.dst = { img->dst.x, img->dst.y, img->dst.w, img->dst.h },
		.psrc = { psrc.x, psrc.y, psrc.w, psrc.h },
		.pdst = { pdst.x, pdst.y, pdst.w, pdst.h },
	};
	uint8_t *body = emit_cscs_begin(&enc->packer, &hdr, img->depth, len);
	uint32_t cw = (psrc.w + 1u) / 2, ch = (psrc.h + 1u) / 2;
	uint8_t *u = body + ys * psrc.h, *v = u + cs * ch;
	put_plane(body, ys, img->y, img->y_stride, psrc.x, psrc.y, psrc.w, psrc.h, img->depth);
	put_plane(u, cs, img->u, img->c_stride, psrc.x / 2u, psrc.y / 2u, cw, ch, img->depth);
	put_plane(v, cs, img->v, img->c_stride, psrc.x / 2u, psrc.y / 2u, cw, ch, img->depth);
	emit_cscs_commit(&enc->packer, body, img->depth, img->depth != SLIM_CSCS_DEPTH8);
}

/*
 * The model gets a column strip's pieces at depth 8 in one go, straight
 * from the image: one setup instead of one a piece, rows interpolated once.
 */
static void model_strip(struct slim_encoder *enc, const struct slim_yuv_image *img,
		struct slim_rect psrc, struct slim_rect pdst)
{
	if (img->depth != SLIM_CSCS_DEPTH8 || pdst.h == 0) {
		return;
	}
	struct slim_cscs c = {
		.src_w = img->width, .src_h = img->height, .depth = img->depth,
		.dst = img->dst, .psrc = psrc, .pdst = pdst,
		.y = img->y + (size_t)psrc.y * img->y_stride + psrc.x,
		.u = img->u + (size_t)(psrc.y / 2) * img->c_stride + psrc.x / 2,
		.v = img->v + (size_t)(psrc.y / 2) * img->c_stride + psrc.x / 2,
		.y_stride = img->y_stride, .c_stride = img->c_stride,
	};
	slim_fb_cscs(enc->packer.model, &c, enc->packer.cscs);
}

/* Cuts columns [u0, u1) of the destination (relative to img->dst) into row bands that fit. */
static bool encode_columns(struct slim_encoder *enc, const struct slim_yuv_image *img,
		struct slim_rect vis, uint32_t u0, uint32_t u1, size_t max_payload)
{
	uint32_t px, pw;
	piece_axis(u0, u1, img->width, img->dst.w, &px, &pw);
	uint32_t v_end = (uint32_t)vis.y + vis.h - img->dst.y;
	uint32_t v_first = vis.y - img->dst.y, s_first = 0, s_end = 0;
	bool ok = true;
	for (uint32_t v0 = v_first; v0 < v_end;) {
		uint32_t v1 = v0, py = 0, ph = 0;
		while (v1 < v_end) {
			uint32_t f, n;
			piece_axis(v0, v1 + 1, img->height, img->dst.h, &f, &n);
			if (slim_cscs_payload_len((uint16_t)pw, (uint16_t)n, img->depth, NULL, NULL) > max_payload ||
					(size_t)pw * n > SLIM_MAX_PIECE_PIXELS) {
				break;
			}
			py = f;
			ph = n;
			v1++;
		}
		if (v1 == v0) {
			v_end = v0;
			ok = false;
			break;
		}
		if (v0 == v_first) {
			s_first = py;
		}
		s_end = py + ph;
		struct slim_rect psrc = { (uint16_t)px, (uint16_t)py, (uint16_t)pw, (uint16_t)ph };
		struct slim_rect pdst = { (uint16_t)(img->dst.x + u0), (uint16_t)(img->dst.y + v0),
			(uint16_t)(u1 - u0), (uint16_t)(v1 - v0) };
		emit_piece(enc, img, psrc, pdst);
		v0 = v1;
	}
	model_strip(enc, img, (struct slim_rect){ (uint16_t)px, (uint16_t)s_first, (uint16_t)pw,
		(uint16_t)(s_end - s_first) }, (struct slim_rect){ (uint16_t)(img->dst.x + u0),
		(uint16_t)(img->dst.y + v_first), (uint16_t)(u1 - u0), (uint16_t)(v_end - v_first) });
	return ok;
}

void encode_yuv(struct slim_encoder *enc, const struct slim_yuv_image *img)
{
	struct slim_rect screen = { 0, 0, (uint16_t)enc->width, (uint16_t)enc->height }, vis;
	if (img->width == 0 || img->height == 0 || img->dst.w == 0 || img->dst.h == 0 ||
			img->depth > SLIM_CSCS_DEPTH4 || !rect_intersect(img->dst, screen, &vis)) {
		return;
	}
	size_t max_payload = packer_max_body(&enc->packer) - sizeof(struct slim_wire_cscs);
	uint32_t chunk = (uint32_t)((uint64_t)PIECE_SRC_W * img->dst.w / img->width);
	chunk = chunk > 0 ? chunk : 1;
	uint32_t u_end = (uint32_t)vis.x + vis.w - img->dst.x;
	for (uint32_t u0 = vis.x - img->dst.x; u0 < u_end;) {
		uint32_t u1 = u0 + chunk < u_end ? u0 + chunk : u_end;
		if (!encode_columns(enc, img, vis, u0, u1, max_payload)) {
			if (u1 - u0 == 1) {
				if (slim_ratelimit(&enc->log_limit, slim_now_us())) {
					slim_log(SLIM_LOG_ERROR, "encoder: CSCS %ux%u -> %ux%u scales down "
						"too far for one datagram", img->width, img->height,
						img->dst.w, img->dst.h);
				}
				return;
			}
			chunk = (u1 - u0) / 2;
			continue;
		}
		u0 = u1;
	}
}
