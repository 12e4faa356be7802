/*
 * Compressed pictures out (slim-protocol.md 3.9): each picture's access
 * unit cut into VIDEO fragments, each filling a datagram of the display
 * sequence, so that the pacer paces them and the console's ACKs and NACKs
 * cover them like any other datagram.
 *
 * A lost fragment is sent again, unlike lost pixels (recovery.c): the
 * pictures after it were coded against the one it belongs to, and
 * repainting from newer pixels would mean a key picture, many times the
 * size. The copies are kept a short while (VOUT_RESEND_US): past that the
 * console has given the picture up and asked for a key picture
 * (VIDEO_RECOVER). A stream that ended or started again has nothing sent
 * again.
 *
 * Where the console shows decoded pictures, the model cannot know its
 * pixels to the bit (the server does not decode its own stream): that
 * region is `unknown`, and exact pixels sent there are sent whole rather
 * than refined against the model.
 */
#include <stdlib.h>
#include <string.h>
#include "encoder-internal.h"
#include "slim-video.h"

bool video_out_init(struct encoder_video *v)
{
	if (!v->ring) {
		v->ring = malloc(VOUT_RING);
		v->records = calloc(VOUT_RECORDS, sizeof(*v->records));
	}
	pixman_region32_init(&v->unknown);
	if (!v->ring || !v->records) {
		return false;
	}
	video_out_reset(v);
	return true;
}

void video_out_finish(struct encoder_video *v)
{
	free(v->ring);
	free(v->records);
	v->ring = NULL;
	v->records = NULL;
	pixman_region32_fini(&v->unknown);
}

void video_out_reset(struct encoder_video *v)
{
	memset(v->records, 0, VOUT_RECORDS * sizeof(*v->records));
	v->next_record = 0;
	v->ring_total = 0;
	v->n_resend = 0;
	memset(v->gen, 0, sizeof(v->gen));
	/* a new console shows nothing of ours: the repaint sends everything whole */
	pixman_region32_clear(&v->unknown);
}

/* A fragment's command body, kept for sending again. */
static void keep(struct encoder_video *v, uint32_t seq, uint8_t flags, uint8_t stream,
		const struct slim_wire_video *hdr, const uint8_t *data, size_t len, uint64_t now)
{
	size_t body = sizeof(*hdr) + len;
	size_t at = (size_t)(v->ring_total % VOUT_RING);
	if (at + body > VOUT_RING) {
		v->ring_total += VOUT_RING - at; /* a body never wraps */
		at = 0;
	}
	memcpy(v->ring + at, hdr, sizeof(*hdr));
	memcpy(v->ring + at + sizeof(*hdr), data, len);
	struct vout_record *r = &v->records[v->next_record++ % VOUT_RECORDS];
	*r = (struct vout_record){
		.seq = seq, .sent_us = now, .pos = v->ring_total, .len = (uint32_t)body,
		.flags = flags, .stream = stream, .gen = v->gen[stream], .state = VOUT_SENT,
	};
	v->ring_total += body;
}

static void emit_fragment(struct slim_encoder *enc, uint8_t flags, uint8_t stream,
		const struct slim_wire_video *hdr, const uint8_t *data, size_t len, uint64_t now)
{
	emit_video(&enc->packer, flags, hdr, data, len);
	keep(&enc->video, enc->packer.seq, flags, stream, hdr, data, len, now);
}

/* Fragments reported lost, sent again ahead of the frame's new pictures. */
static void resend(struct slim_encoder *enc, uint64_t now)
{
	struct encoder_video *v = &enc->video;
	size_t n = v->n_resend;
	v->n_resend = 0;
	for (size_t i = 0; i < n; i++) {
		struct vout_record r = v->records[v->resend[i] % VOUT_RECORDS];
		/* overwritten since, or its bytes are */
		if (r.state != VOUT_LOST || v->ring_total - r.pos > VOUT_RING ||
				r.gen != v->gen[r.stream] || now - r.sent_us > VOUT_RESEND_US) {
			continue;
		}
		v->records[v->resend[i] % VOUT_RECORDS].state = VOUT_DONE;
		const uint8_t *body = v->ring + r.pos % VOUT_RING;
		struct slim_wire_video hdr;
		memcpy(&hdr, body, sizeof(hdr));
		/* copied out: keeping it again may reuse the bytes it is read from */
		size_t len = r.len - sizeof(hdr);
		uint8_t copy[SLIM_MAX_MTU];
		memcpy(copy, body + sizeof(hdr), len);
		emit_fragment(enc, r.flags, r.stream, &hdr, copy, len, r.sent_us);
		enc->stats.video_resent++;
	}
}

void video_out_lost(struct encoder_video *v, uint32_t first, uint32_t last)
{
	for (uint32_t i = 0; i < VOUT_RECORDS && v->n_resend < VOUT_RECORDS; i++) {
		struct vout_record *r = &v->records[i];
		if (r->state == VOUT_SENT && (int32_t)(r->seq - first) >= 0 &&
				(int32_t)(last - r->seq) >= 0) {
			r->state = VOUT_LOST;
			v->resend[v->n_resend++] = i;
		}
	}
}

bool video_out_pending(const struct encoder_video *v)
{
	return v->n_resend > 0;
}

void video_out_copied(struct encoder_video *v, struct slim_rect src, int32_t dx, int32_t dy)
{
	pixman_region32_t moved;
	pixman_region32_init_rect(&moved, src.x, src.y, src.w, src.h);
	pixman_region32_intersect(&moved, &moved, &v->unknown);
	pixman_region32_translate(&moved, dx, dy);
	pixman_region32_union(&v->unknown, &v->unknown, &moved);
	pixman_region32_fini(&moved);
}

void encode_pictures(struct slim_encoder *enc, const struct slim_frame *frame)
{
	struct encoder_video *v = &enc->video;
	uint64_t now = slim_now_us();
	for (uint8_t s = 0; s < SLIM_VIDEO_STREAMS; s++) {
		if (frame->video_ended & (1u << s)) {
			v->gen[s]++;
		}
	}
	if (!frame->answer) {
		resend(enc, now);
	}
	/* room for a pending INPUT_ACK ahead of it in the datagram */
	size_t room = packer_max_body(&enc->packer) - sizeof(struct slim_wire_video) -
		sizeof(struct slim_wire_cmd) - sizeof(struct slim_wire_input_ack);
	for (size_t i = 0; i < frame->n_pictures; i++) {
		const struct slim_video_picture *pic = &frame->pictures[i];
		if (pic->stream >= SLIM_VIDEO_STREAMS || pic->size == 0 ||
				pic->size > SLIM_VIDEO_MAX_PICTURE ||
				slim_video_frags(pic->size, room) > SLIM_VIDEO_MAX_FRAGS) {
			continue;
		}
		if (pic->flags & SLIM_VIDEO_START) {
			v->gen[pic->stream]++; /* the console's decoder starts over */
		}
		uint16_t frags = slim_video_frags(pic->size, room);
		for (uint16_t f = 0; f < frags; f++) {
			struct slim_wire_video hdr;
			const uint8_t *data;
			size_t len;
			slim_video_fragment(pic, room, f, &hdr, &data, &len);
			emit_fragment(enc, pic->flags, pic->stream, &hdr, data, len, now);
		}
		enc->stats.video_pictures++;
		pixman_region32_union_rect(&v->unknown, &v->unknown, pic->clip.x, pic->clip.y,
			pic->clip.w, pic->clip.h);
	}
}
