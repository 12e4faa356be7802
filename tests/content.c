#include "content.h"

static const char *const names[CONTENT_KINDS] = { "text", "ui", "photo" };

const char *content_name(enum content_kind kind)
{
	return names[kind];
}

uint32_t content_rand(struct content_rng *rng)
{
	/* xorshift64*: fast, and good enough for pictures */
	rng->s ^= rng->s >> 12;
	rng->s ^= rng->s << 25;
	rng->s ^= rng->s >> 27;
	return (uint32_t)((rng->s * 0x2545f4914f6cdd1dull) >> 32);
}

uint32_t content_below(struct content_rng *rng, uint32_t n)
{
	return (uint32_t)(((uint64_t)content_rand(rng) * n) >> 32);
}

static void put(const struct slim_fb *fb, uint32_t x, uint32_t y, uint32_t c)
{
	*slim_fb_row(fb, x, y) = c | SLIM_OPAQUE;
}

/* A glyph is an 8x16 cell with a few strokes, chosen by its code. */
static void glyph(const struct slim_fb *fb, struct slim_rect clip, uint32_t x0, uint32_t y0,
		uint32_t code, uint32_t fg)
{
	uint32_t h = code * 2654435761u;
	for (uint32_t s = 0; s < 3; s++, h = h * 2654435761u + 1) {
		bool vertical = h & 1;
		uint32_t a = 1 + (h >> 1) % 6, b = 3 + (h >> 4) % 9, len = 2 + (h >> 8) % 8;
		for (uint32_t k = 0; k < len; k++) {
			uint32_t x = x0 + (vertical ? a : (a + k) % 7);
			uint32_t y = y0 + (vertical ? (b + k) % 14 + 1 : b);
			if (x >= clip.x && x < (uint32_t)clip.x + clip.w &&
					y >= clip.y && y < (uint32_t)clip.y + clip.h) {
				put(fb, x, y, fg);
			}
		}
	}
}

static void fill(const struct slim_fb *fb, struct slim_rect r, uint32_t c)
{
	slim_fb_fill(fb, r, c);
}

static const uint32_t text_colours[] = { 0x000000, 0x202020, 0x0000a0, 0xa00000, 0x006000 };

void content_text_lines(const struct slim_fb *fb, struct slim_rect r, uint32_t bg,
		struct content_rng *rng)
{
	fill(fb, r, bg);
	for (uint32_t y = r.y; y < (uint32_t)r.y + r.h; y += 16) {
		/* Most lines are one colour; code and prompts add a second. */
		uint32_t fg = content_below(rng, 4) == 0 ?
			text_colours[content_below(rng, 5)] : text_colours[0];
		uint32_t len = content_below(rng, r.w / 8 + 1);
		for (uint32_t c = 0; c < len; c++) {
			uint32_t code = content_below(rng, 8) == 0 ? 0 : 1 + content_below(rng, 94);
			if (code != 0) {
				glyph(fb, r, r.x + c * 8, y, code, fg);
			}
		}
	}
}

static void ui(const struct slim_fb *fb, struct slim_rect r, struct content_rng *rng)
{
	static const uint32_t panels[] = { 0xf0f0f0, 0xe0e0e0, 0xffffff, 0x3c3c3c, 0xd6d6d6 };
	fill(fb, r, panels[content_below(rng, 5)]);
	/* A title bar with a vertical gradient. */
	uint32_t bar = r.h < 24 ? r.h : 24;
	for (uint32_t y = 0; y < bar; y++) {
		uint32_t v = 0x40 + y * 3;
		fill(fb, (struct slim_rect){ r.x, (uint16_t)(r.y + y), r.w, 1 }, v << 16 | v << 8 | 0xc0);
	}
	/* Buttons and panels with a border and a label. */
	uint32_t n = 2 + content_below(rng, 8);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t w = 16 + content_below(rng, r.w / 2 + 1), h = 12 + content_below(rng, r.h / 3 + 1);
		if (w > r.w || h > r.h) {
			continue;
		}
		struct slim_rect b = { (uint16_t)(r.x + content_below(rng, r.w - w + 1)),
			(uint16_t)(r.y + content_below(rng, r.h - h + 1)), (uint16_t)w, (uint16_t)h };
		fill(fb, b, 0x808080);
		struct slim_rect in = { (uint16_t)(b.x + 1), (uint16_t)(b.y + 1),
			(uint16_t)(w - 2), (uint16_t)(h - 2) };
		fill(fb, in, panels[content_below(rng, 5)]);
		for (uint32_t c = 0; c + 8 <= in.w && c < 64 && in.h >= 16; c += 8) {
			glyph(fb, in, in.x + c, in.y, 1 + content_below(rng, 94), 0x000000);
		}
	}
}

static void photo(const struct slim_fb *fb, struct slim_rect r, struct content_rng *rng)
{
	uint32_t base = content_rand(rng);
	for (uint32_t y = 0; y < r.h; y++) {
		uint32_t *row = slim_fb_row(fb, r.x, r.y + y);
		for (uint32_t x = 0; x < r.w; x++) {
			uint32_t n = content_rand(rng);
			uint32_t cr = ((base >> 16) + x / 4 + (n & 31)) & 0xff;
			uint32_t cg = ((base >> 8) + y / 3 + ((n >> 5) & 31)) & 0xff;
			uint32_t cb = (base + (x + y) / 5 + ((n >> 10) & 31)) & 0xff;
			row[x] = SLIM_OPAQUE | cr << 16 | cg << 8 | cb;
		}
	}
}

void content_paint(const struct slim_fb *fb, struct slim_rect r, enum content_kind kind,
		struct content_rng *rng)
{
	switch (kind) {
	case CONTENT_TEXT:
		content_text_lines(fb, r, content_below(rng, 3) ? 0xffffff : 0x1e1e1e, rng);
		break;
	case CONTENT_UI:
		ui(fb, r, rng);
		break;
	default:
		photo(fb, r, rng);
		break;
	}
}
