/*
 * The pointer is the console's to draw: the image goes once (in row pieces
 * that fit a datagram), positions as they change. Both are state, not
 * pixels of the framebuffer, so recovery re-sends them whole when a
 * datagram that carried them is lost.
 */
#include <string.h>
#include "encoder-internal.h"

bool slim_encoder_cursor_image(struct slim_encoder *enc, const uint32_t *argb,
		uint32_t w, uint32_t h, uint32_t hot_x, uint32_t hot_y)
{
	if (w == 0 || h == 0 || w > SLIM_CURSOR_MAX || h > SLIM_CURSOR_MAX) {
		return false;
	}
	hot_x = hot_x < w ? hot_x : w - 1;
	hot_y = hot_y < h ? hot_y : h - 1;
	size_t bytes = (size_t)w * h * 4;
	struct slim_wire_cursor_image *c = &enc->cursor.image;
	if (c->w == w && c->h == h && c->hot_x == hot_x && c->hot_y == hot_y &&
			memcmp(enc->cursor.px, argb, bytes) == 0) {
		return true;
	}
	memcpy(enc->cursor.px, argb, bytes);
	*c = (struct slim_wire_cursor_image){
		.serial = c->serial + 1, .w = (uint16_t)w, .h = (uint16_t)h,
		.hot_x = (uint16_t)hot_x, .hot_y = (uint16_t)hot_y,
	};
	enc->cursor.image_dirty = true;
	return true;
}

void slim_encoder_cursor_pos(struct slim_encoder *enc, int32_t x, int32_t y, bool visible)
{
	if (x != enc->cursor.x || y != enc->cursor.y || visible != enc->cursor.visible) {
		enc->cursor.x = x;
		enc->cursor.y = y;
		enc->cursor.visible = visible;
		enc->cursor.pos_dirty = true;
	}
}

static int16_t clamp16(int32_t v)
{
	return (int16_t)(v < INT16_MIN ? INT16_MIN : v > INT16_MAX ? INT16_MAX : v);
}

/* What changed of the cursor, into the datagram being filled. */
void cursor_put(struct slim_encoder *enc)
{
	if (enc->rec.cursor_lost) {
		enc->rec.cursor_lost = false;
		enc->cursor.image_dirty = enc->cursor.image.w > 0;
		enc->cursor.pos_dirty = true;
	}
	if (!enc->cursor.image_dirty && !enc->cursor.pos_dirty) {
		return;
	}
	struct slim_packer *p = &enc->packer;
	if (enc->cursor.image_dirty) {
		struct slim_wire_cursor_image piece = enc->cursor.image;
		size_t row_bytes = (size_t)piece.w * 4;
		uint32_t per = (uint32_t)((packer_max_body(p) - sizeof(piece)) / row_bytes);
		for (uint32_t row = 0; row < piece.h; row += per) {
			piece.row = (uint16_t)row;
			piece.rows = (uint16_t)(piece.h - row < per ? piece.h - row : per);
			emit_cursor_image(p, &piece, enc->cursor.px + (size_t)row * piece.w);
		}
		enc->cursor.image_dirty = false;
	}
	emit_cursor_pos(p, clamp16(enc->cursor.x), clamp16(enc->cursor.y), enc->cursor.visible);
	enc->cursor.pos_dirty = false;
}

size_t slim_encoder_flush_cursor(struct slim_encoder *enc)
{
	uint64_t datagrams = enc->stats.datagrams;
	cursor_put(enc);
	packer_flush(&enc->packer);
	return (size_t)(enc->stats.datagrams - datagrams);
}
