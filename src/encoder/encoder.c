#include <stdlib.h>
#include <string.h>
#include "encoder-internal.h"

static bool alloc_model(struct slim_encoder *enc, uint32_t width, uint32_t height)
{
	uint32_t *px = calloc((size_t)width * height, 4);
	if (!px) {
		return false;
	}
	free(enc->model.px);
	enc->model = (struct slim_fb){ .px = px, .width = width, .height = height, .stride = width };
	enc->width = width;
	enc->height = height;
	return true;
}

struct slim_encoder *slim_encoder_create(uint32_t width, uint32_t height,
		const struct slim_encoder_config *config, slim_send_fn send, void *send_data)
{
	return slim_encoder_create_from(NULL, width, height, config, send, send_data);
}

/*
 * old's largest buffers, for a new encoder of the same screen size. The
 * model's pixels are of no account: a new encoder repaints every pixel as
 * it is (repaint_all), never against the model.
 */
static void take_memory(struct slim_encoder *enc, struct slim_encoder *old,
		uint32_t width, uint32_t height)
{
	if (!old || old->width != width || old->height != height) {
		return;
	}
	enc->model = old->model;
	enc->width = width;
	enc->height = height;
	old->model.px = NULL;
	enc->rec.records = old->rec.records;
	enc->rec.copies = old->rec.copies;
	old->rec.records = NULL;
	old->rec.copies = NULL;
}

struct slim_encoder *slim_encoder_create_from(struct slim_encoder *old, uint32_t width,
		uint32_t height, const struct slim_encoder_config *config, slim_send_fn send,
		void *send_data)
{
	uint16_t mtu = config->mtu ? config->mtu : SLIM_DEFAULT_MTU;
	struct slim_encoder *enc = NULL;
	if (width == 0 || height == 0 || width > SLIM_MAX_DIM || height > SLIM_MAX_DIM ||
			mtu < SLIM_MIN_MTU || mtu > SLIM_MAX_MTU || !send ||
			!(enc = calloc(1, sizeof(*enc)))) {
		slim_encoder_destroy(old);
		return NULL;
	}
	take_memory(enc, old, width, height);
	slim_encoder_destroy(old);
	enc->cfg = *config;
	enc->cfg.mtu = mtu;
	/* zstd on raw pixels takes more off than LZ4 does, and LZ4's output it cannot shrink */
	enc->cfg.lz4 = config->lz4 && !config->zstd;
	enc->log_limit = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	pixman_region32_init(&enc->work);
	bool ok = recovery_init(&enc->rec, width, height) && video_out_init(&enc->video) &&
		packer_init(&enc->packer, mtu, config->assoc, config->zstd,
			config->history) &&
		scroll_init(enc) && (enc->model.px || alloc_model(enc, width, height)) &&
		(!config->cache || (enc->cache = cache_create()));
	enc->rec.cache = enc->cache;
	if (!ok) {
		slim_encoder_destroy(enc);
		return NULL;
	}
	struct slim_packer *p = &enc->packer;
	p->send = send;
	p->send_data = send_data;
	p->rec = &enc->rec;
	p->stats = &enc->stats;
	p->model = &enc->model;
	p->video = &enc->video;
	return enc;
}

void slim_encoder_destroy(struct slim_encoder *enc)
{
	if (!enc) {
		return;
	}
	recovery_finish(&enc->rec);
	video_out_finish(&enc->video);
	cache_destroy(enc->cache);
	packer_finish(&enc->packer);
	scroll_finish(enc);
	pixman_region32_fini(&enc->work);
	free(enc->model.px);
	free(enc);
}

bool slim_encoder_resize(struct slim_encoder *enc, uint32_t width, uint32_t height)
{
	if (width == 0 || height == 0 || width > SLIM_MAX_DIM || height > SLIM_MAX_DIM ||
			!alloc_model(enc, width, height)) {
		return false;
	}
	recovery_reset(&enc->rec, width, height);
	video_out_reset(&enc->video);
	packer_reset(&enc->packer);
	return true;
}

void slim_encoder_input_ack(struct slim_encoder *enc, uint32_t next)
{
	packer_input_ack(&enc->packer, next);
}

size_t slim_encoder_flush_input_ack(struct slim_encoder *enc)
{
	return packer_flush_input_ack(&enc->packer) ? 1 : 0;
}

void slim_encoder_repaint(struct slim_encoder *enc)
{
	enc->rec.repaint_all = true;
	/*
	 * what the console shows is in doubt, and so is what it kept since
	 * the last sure point: an ACK after this may confirm what it lost
	 */
	if (enc->cache) {
		cache_lost(enc->cache, enc->rec.confirmed + 1, NULL);
	}
	packer_distrust_history(&enc->packer);
}

bool slim_encoder_needs_frame(const struct slim_encoder *enc)
{
	return enc->rec.repaint_all || enc->rec.cursor_lost || pixman_region32_not_empty(
		(pixman_region32_t *)&enc->rec.repair) || video_out_pending(&enc->video);
}

uint32_t slim_encoder_frames_in_flight(const struct slim_encoder *enc)
{
	return enc->stats.last_frame - enc->stats.acked_frame;
}

const struct slim_encoder_stats *slim_encoder_stats(const struct slim_encoder *enc)
{
	return &enc->stats;
}

const struct slim_fb *slim_encoder_model(const struct slim_encoder *enc)
{
	return &enc->model;
}

/* Sends a move as a COPY when the console's copy of the source can be trusted. */
static void encode_move(struct slim_encoder *enc, const struct slim_move_hint *m)
{
	struct slim_rect screen = { 0, 0, (uint16_t)enc->width, (uint16_t)enc->height };
	struct slim_rect src;
	if (!rect_intersect(m->src, screen, &src)) {
		return;
	}
	/* Clip so that the destination is on the screen too. */
	int32_t x1 = src.x, y1 = src.y, x2 = src.x + src.w, y2 = src.y + src.h;
	x1 = x1 + m->dx < 0 ? -m->dx : x1;
	y1 = y1 + m->dy < 0 ? -m->dy : y1;
	x2 = x2 + m->dx > (int32_t)enc->width ? (int32_t)enc->width - m->dx : x2;
	y2 = y2 + m->dy > (int32_t)enc->height ? (int32_t)enc->height - m->dy : y2;
	if (x2 <= x1 || y2 <= y1 || (m->dx == 0 && m->dy == 0)) {
		return;
	}
	src = (struct slim_rect){ (uint16_t)x1, (uint16_t)y1, (uint16_t)(x2 - x1),
		(uint16_t)(y2 - y1) };
	/* Whatever happens, the destination ends up matching the framebuffer. */
	pixman_region32_union_rect(&enc->work, &enc->work, x1 + m->dx, y1 + m->dy,
		src.w, src.h);
	if (region_touches(&enc->rec.repair, src)) {
		return;
	}
	emit_copy(&enc->packer, src, (uint16_t)(x1 + m->dx), (uint16_t)(y1 + m->dy));
}

static void encode_region(struct slim_encoder *enc, const struct slim_fb *fb,
		pixman_region32_t *region, bool forced)
{
	int n;
	const pixman_box32_t *boxes = pixman_region32_rectangles(region, &n);
	for (int i = 0; i < n; i++) {
		encode_rect(enc, fb, rect_from_box(&boxes[i]), forced);
	}
}

/* Whether the frame is of the console's size; said at a limited rate when not. */
static bool frame_fits(struct slim_encoder *enc, const struct slim_fb *fb)
{
	if (fb->width == enc->width && fb->height == enc->height) {
		return true;
	}
	if (slim_ratelimit(&enc->log_limit, slim_now_us())) {
		slim_log(SLIM_LOG_ERROR, "encoder: frame is %ux%u, console is %ux%u",
			fb->width, fb->height, enc->width, enc->height);
	}
	return false;
}

/* The frame's damage into enc->work, and all of the screen into the repair if it was asked for. */
static void gather_damage(struct slim_encoder *enc, const struct slim_frame *frame)
{
	pixman_region32_t *work = &enc->work, *repair = &enc->rec.repair;
	if (frame->damage) {
		pixman_region32_intersect_rect(work, (pixman_region32_t *)frame->damage,
			0, 0, enc->width, enc->height);
	} else {
		pixman_region32_clear(work);
	}
	if (enc->rec.repaint_all) {
		pixman_region32_union_rect(repair, repair, 0, 0, enc->width, enc->height);
		enc->rec.repaint_all = false;
		enc->stats.repaints++;
	}
	pixman_region32_intersect_rect(repair, repair, 0, 0, enc->width, enc->height);
}

/*
 * What the frame's pictures cover, and where a video's next picture goes,
 * is taken out of the damage and the repair; what was lost where the next
 * picture goes is kept in `deferred`, to be repaired if it does not come.
 */
static void leave_to_pictures(struct slim_encoder *enc, const struct slim_frame *frame,
		size_t n_yuv, pixman_region32_t *deferred)
{
	pixman_region32_t *work = &enc->work, *repair = &enc->rec.repair;
	for (size_t i = 0; i < n_yuv; i++) {
		/* The model will hold what the console makes of the YUV: leave it be. */
		const struct slim_rect *d = &frame->yuv[i].dst;
		pixman_region32_t dst;
		pixman_region32_init_rect(&dst, d->x, d->y, d->w, d->h);
		pixman_region32_subtract(work, work, &dst);
		pixman_region32_subtract(repair, repair, &dst);
		pixman_region32_fini(&dst);
	}
	for (size_t i = 0; i < frame->n_pictures; i++) {
		const struct slim_rect *c = &frame->pictures[i].clip;
		pixman_region32_t clip;
		pixman_region32_init_rect(&clip, c->x, c->y, c->w, c->h);
		pixman_region32_subtract(work, work, &clip);
		pixman_region32_subtract(repair, repair, &clip);
		pixman_region32_fini(&clip);
	}
	/* a video's next picture repaints its place: nothing there now */
	if (frame->defer && enc->cfg.cscs) {
		pixman_region32_subtract(work, work, (pixman_region32_t *)frame->defer);
		pixman_region32_intersect(deferred, repair, (pixman_region32_t *)frame->defer);
		pixman_region32_subtract(repair, repair, deferred);
	}
}

/* Counts what the damage covers, and sends what of it scrolled as a COPY. */
static void find_scrolls(struct slim_encoder *enc, const struct slim_fb *fb)
{
	int n;
	const pixman_box32_t *boxes = pixman_region32_rectangles(&enc->work, &n);
	for (int i = 0; i < n; i++) {
		enc->stats.damaged_pixels += (uint64_t)(boxes[i].x2 - boxes[i].x1) *
			(uint64_t)(boxes[i].y2 - boxes[i].y1);
		if (enc->cfg.detect_scroll) {
			detect_scroll(enc, fb, rect_from_box(&boxes[i]));
		}
	}
}

/* FRAME_END after the frame's commands, and the last datagram out. */
static void end_frame(struct slim_encoder *enc, const struct slim_frame *frame,
		uint64_t start_us)
{
	struct slim_wire_frame_end fe = {
		.frame = ++enc->frame,
		.report_from = enc->rec.confirmed + 1 ? enc->rec.confirmed + 1 : 1,
		.damage_us = frame->damage_us ? frame->damage_us : start_us,
		.encoded_us = slim_now_us(),
	};
	emit_frame_end(&enc->packer, &fe);
	packer_flush(&enc->packer);
	packer_end_frame(&enc->packer);
	enc->frame_end_seq = enc->rec.last_sent;
	enc->stats.frames++;
	enc->stats.last_frame = enc->frame;
}

size_t slim_encoder_frame(struct slim_encoder *enc, const struct slim_frame *frame)
{
	const struct slim_fb *fb = frame->fb;
	if (!frame_fits(enc, fb)) {
		return 0;
	}
	uint64_t start_us = slim_now_us();
	uint64_t datagrams = enc->stats.datagrams;
	uint64_t commands = enc->packer.commands;
	packer_begin_frame(&enc->packer);
	gather_damage(enc, frame);

	/* a pointer that waited for the frame (a window dragged) moves with it */
	cursor_put(enc);
	for (size_t i = 0; i < frame->n_moves; i++) {
		encode_move(enc, &frame->moves[i]);
	}
	size_t n_yuv = enc->cfg.cscs ? frame->n_yuv : 0;
	pixman_region32_t deferred;
	pixman_region32_init(&deferred);
	leave_to_pictures(enc, frame, n_yuv, &deferred);
	/* what is lost goes below, as it is: not again as damage */
	pixman_region32_subtract(&enc->work, &enc->work, &enc->rec.repair);
	find_scrolls(enc, fb);
	/* where the console shows decoded pictures, the model cannot be trusted */
	pixman_region32_t *unknown = &enc->video.unknown;
	pixman_region32_union(&enc->rec.repair, &enc->rec.repair, &deferred);
	pixman_region32_subtract(unknown, unknown, &enc->rec.repair);
	pixman_region32_subtract(&enc->rec.repair, &enc->rec.repair, &deferred);
	pixman_region32_t whole;
	pixman_region32_init(&whole);
	pixman_region32_intersect(&whole, &enc->work, unknown);
	pixman_region32_subtract(&enc->work, &enc->work, &whole);
	pixman_region32_subtract(unknown, unknown, &whole);
	/* Lost areas first, sent as they are: the console's copy is wrong there. */
	encode_region(enc, fb, &enc->rec.repair, true);
	encode_region(enc, fb, &whole, true);
	pixman_region32_fini(&whole);
	pixman_region32_copy(&enc->rec.repair, &deferred);
	pixman_region32_fini(&deferred);
	encode_region(enc, fb, &enc->work, false);
	/*
	 * The pictures last: exact pixels (a keystroke's echo) go ahead of
	 * bulk, and a pacer that drops what waits drops the video first.
	 */
	for (size_t i = 0; i < n_yuv; i++) {
		encode_yuv(enc, &frame->yuv[i]);
	}
	encode_pictures(enc, frame);

	if (enc->packer.commands == commands) {
		packer_end_frame(&enc->packer);
		return 0; /* nothing differs: an idle session sends nothing */
	}
	end_frame(enc, frame, start_us);
	return (size_t)(enc->stats.datagrams - datagrams);
}

/* Datagrams the network lost (not those the pacer dropped): chains wait a while. */
static void network_lost(struct slim_encoder *enc, uint32_t n)
{
	enc->stats.recovered_seqs += n;
	if (n > 0) {
		packer_network_lost(&enc->packer);
	}
}

void slim_encoder_handle_ack(struct slim_encoder *enc, const struct slim_wire_ack *ack)
{
	int32_t ahead = (int32_t)(ack->frame - enc->stats.last_frame);
	if (ahead > 0) {
		enc->stats.bad_upstream++;
		return;
	}
	if ((int32_t)(ack->frame - enc->stats.acked_frame) > 0) {
		enc->stats.acked_frame = ack->frame;
	}
	uint64_t now = slim_now_us();
	if (ack->echo_us != 0 && ack->echo_us <= now) {
		enc->stats.rtt_us = now - ack->echo_us;
	}
	network_lost(enc, recovery_ack(&enc->rec, ack->highest_seq));
}

void slim_encoder_handle_nack(struct slim_encoder *enc, const struct slim_cmd *nack)
{
	if (nack->nack.flags & SLIM_NACK_REPAINT) {
		slim_encoder_repaint(enc);
	}
	for (size_t i = 0; i < nack->nack.count; i++) {
		struct slim_wire_seq_range r;
		slim_nack_get(nack, i, &r);
		network_lost(enc, recovery_lost(&enc->rec, r.first, r.last));
		video_out_lost(&enc->video, r.first, r.last);
	}
}

void slim_encoder_dropped(struct slim_encoder *enc, uint32_t first, uint32_t last)
{
	enc->stats.recovered_seqs += recovery_lost(&enc->rec, first, last);
	video_out_lost(&enc->video, first, last);
	if ((int32_t)(enc->frame_end_seq - first) >= 0 && (int32_t)(last - enc->frame_end_seq) >= 0) {
		/* the console will never see that frame end, nor acknowledge it */
		enc->stats.acked_frame = enc->stats.last_frame;
	}
}

void slim_encoder_timeout(struct slim_encoder *enc)
{
	struct slim_recovery *rec = &enc->rec;
	/*
	 * Compressed fragments are not sent again on a timeout: most of what
	 * is unconfirmed arrived (the ACK or the frame's end was what was
	 * lost), and the console reports what it misses when the next
	 * datagram shows it the gap.
	 */
	if (rec->last_sent != rec->confirmed) {
		network_lost(enc, recovery_lost(rec, rec->confirmed + 1, rec->last_sent));
	}
	/* Whatever was in flight is now accounted for. */
	enc->stats.acked_frame = enc->stats.last_frame;
}

enum slim_error slim_encoder_receive(struct slim_encoder *enc, const uint8_t *buf,
		size_t len, void (*other)(void *data, const struct slim_cmd *cmd), void *data)
{
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	/* First check the whole datagram, so that a bad one changes nothing. */
	enum slim_error err = slim_reader_init(&r, &hdr, buf, len, true, 0, 0);
	if (err == SLIM_OK && hdr.assoc != enc->cfg.assoc) {
		err = SLIM_ERR_ASSOC;
	}
	while (err == SLIM_OK && (err = slim_reader_next(&r, &cmd)) == SLIM_OK && cmd.type) {
	}
	if (err != SLIM_OK) {
		enc->stats.bad_upstream++;
		if (slim_ratelimit(&enc->log_limit, slim_now_us())) {
			slim_log(SLIM_LOG_ERROR, "encoder: dropped upstream datagram: %s",
				slim_error_str(err));
		}
		return err;
	}
	slim_reader_init(&r, &hdr, buf, len, true, 0, 0);
	while (slim_reader_next(&r, &cmd) == SLIM_OK && cmd.type) {
		if (cmd.type == SLIM_CMD_ACK) {
			slim_encoder_handle_ack(enc, &cmd.ack);
		} else if (cmd.type == SLIM_CMD_NACK) {
			slim_encoder_handle_nack(enc, &cmd);
		}
		if (other) {
			other(data, &cmd);
		}
	}
	return SLIM_OK;
}
