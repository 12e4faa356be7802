/*
 * The console core end to end, the picture: damage, the screen against a
 * model of it, the pointer, a new size, and a screenshot.
 */
#include <fcntl.h>
#include <lz4.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "console-fixture.h"
#include <sys/stat.h>
#include <unistd.h>

static void assert_rect(struct slim_rect a, struct slim_rect b)
{
	assert_int_equal(a.x, b.x);
	assert_int_equal(a.y, b.y);
	assert_int_equal(a.w, b.w);
	assert_int_equal(a.h, b.h);
}

static void test_damage(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 61);
	struct rec_backend *rec = rec_create();
	struct console c;
	console_open(&c, 320, 240, SLIM_DEFAULT_MTU, &rec->base);
	slim_console_core_hello(c.core, "damage", ASSOC);

	const struct slim_rect fill = { 1, 2, 3, 4 }, set = { 5, 6, 7, 8 }, bm = { 9, 10, 11, 12 };
	const struct slim_rect copy_src = { 0, 0, 13, 14 };
	const struct slim_wire_cscs cs = {
		.src_w = 20, .src_h = 10, .dst = { 100, 100, 40, 20 },
		.psrc = { 0, 0, 20, 10 }, .pdst = { 110, 105, 15, 6 },
	};
	struct slim_wire_cursor_image ci = { .serial = 1, .w = 2, .h = 2, .rows = 2 };
	begin(&c);
	assert_true(slim_put_fill(&c.w, fill, 1));
	assert_non_null(test_put_set(&c.w, set, SLIM_SET_LZ4, &rng, NULL));
	assert_non_null(test_put_bitmap(&c.w, bm, 1, 2, &rng));
	assert_true(slim_put_copy(&c.w, copy_src, 200, 150));
	assert_non_null(test_put_cscs(&c.w, &cs, SLIM_CSCS_DEPTH8, &rng));
	assert_non_null(test_put_cursor_image(&c.w, &ci, &rng));
	assert_true(slim_put_cursor_pos(&c.w, 5, 5, true));
	assert_int_equal(send_dgram(&c, 1, 0), SLIM_OK);
	begin(&c);
	assert_true(slim_put_frame_end(&c.w, &(struct slim_wire_frame_end){ .frame = 1 }));
	assert_int_equal(send_dgram(&c, 2, 0), SLIM_OK);

	assert_int_equal(rec->frames, 1);
	assert_ptr_equal(rec->fb, slim_console_core_fb(c.core));
	/* in order; the cursor damages nothing, it is drawn by the backend */
	assert_int_equal(rec->n_damage, 5);
	assert_rect(rec->damage[0], fill);
	assert_rect(rec->damage[1], set);
	assert_rect(rec->damage[2], bm);
	assert_rect(rec->damage[3], (struct slim_rect){ 200, 150, 13, 14 });
	assert_rect(rec->damage[4], (struct slim_rect){ 110, 105, 15, 6 });

	/* more rectangles than the console tracks collapse to their bounds */
	uint32_t seq = 3;
	const int rects = 5000;
	int done = 0;
	while (done < rects) {
		begin(&c);
		for (int i = 0; i < 60 && done < rects; i++, done++) {
			struct slim_rect r = { (uint16_t)(10 + done % 300), (uint16_t)(20 + done / 300),
				1, 1 };
			assert_true(slim_put_fill(&c.w, r, 0xffffff));
		}
		assert_int_equal(send_dgram(&c, seq++, 0), SLIM_OK);
	}
	begin(&c);
	assert_true(slim_put_frame_end(&c.w, &(struct slim_wire_frame_end){ .frame = 2 }));
	assert_int_equal(send_dgram(&c, seq++, 0), SLIM_OK);
	assert_int_equal(rec->frames, 2);
	assert_true(rec->n_damage >= 1 && rec->n_damage <= 4096);
	/* every filled pixel is inside the damage */
	for (int i = 0; i < rects; i++) {
		uint32_t x = 10 + (uint32_t)i % 300, y = 20 + (uint32_t)i / 300;
		bool in = false;
		for (size_t k = 0; k < rec->n_damage && !in; k++) {
			struct slim_rect d = rec->damage[k];
			in = x >= d.x && x < (uint32_t)d.x + d.w && y >= d.y && y < (uint32_t)d.y + d.h;
		}
		if (!in) {
			fail_msg("pixel (%u, %u) filled but not presented", x, y);
		}
	}
	/* and the damage stays on the screen */
	for (size_t k = 0; k < rec->n_damage; k++) {
		struct slim_rect d = rec->damage[k];
		assert_true((uint32_t)d.x + d.w <= 320 && (uint32_t)d.y + d.h <= 240);
	}
	console_close(&c);
}

/* Applies a datagram's commands to `fb` the way the encoder models the console. */
static void model_apply(const struct slim_fb *fb, const uint8_t *buf, size_t len,
		struct slim_cscs_scratch *s)
{
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	assert_int_equal(slim_reader_init(&r, &hdr, buf, len, false, (uint16_t)fb->width,
		(uint16_t)fb->height), SLIM_OK);
	while (slim_reader_next(&r, &cmd) == SLIM_OK && cmd.type != 0) {
		switch (cmd.type) {
		case SLIM_CMD_FILL:
			slim_fb_fill(fb, cmd.fill.r, cmd.fill.color);
			break;
		case SLIM_CMD_SET:
			if (cmd.flags & SLIM_SET_LZ4) {
				size_t raw = slim_set_raw_len(cmd.set.r, cmd.flags);
				uint8_t *out = malloc(raw);
				assert_int_equal(LZ4_decompress_safe((const char *)cmd.set.data,
					(char *)out, (int)cmd.set.len, (int)raw), (int)raw);
				slim_fb_set(fb, cmd.set.r, out, cmd.flags);
				free(out);
			} else {
				slim_fb_set(fb, cmd.set.r, cmd.set.data, cmd.flags);
			}
			break;
		case SLIM_CMD_BITMAP:
			slim_fb_bitmap(fb, cmd.bitmap.r, cmd.bitmap.fg, cmd.bitmap.bg, cmd.bitmap.bits);
			break;
		case SLIM_CMD_COPY:
			slim_fb_copy(fb, cmd.copy.src, cmd.copy.dx, cmd.copy.dy);
			break;
		case SLIM_CMD_CSCS:
			slim_fb_cscs(fb, &cmd.cscs, s);
			break;
		}
	}
	assert_int_equal(cmd.type, 0);
}

static struct slim_rect random_rect(struct test_rng *rng, uint32_t w, uint32_t h, uint32_t max)
{
	struct slim_rect r;
	r.w = (uint16_t)test_rand_range(rng, 1, max < w ? max : w);
	r.h = (uint16_t)test_rand_range(rng, 1, max < h ? max : h);
	r.x = (uint16_t)test_rand_below(rng, w - r.w + 1);
	r.y = (uint16_t)test_rand_below(rng, h - r.h + 1);
	return r;
}

/* A random stream of every kind of command: the console shows exactly what the model does. */
static void test_against_model(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 62);
	const uint32_t W = 200, H = 150;
	struct console c;
	console_open(&c, W, H, SLIM_DEFAULT_MTU, NULL);
	slim_console_core_hello(c.core, "model", ASSOC);
	struct slim_fb model = test_fb_create(W, H, NULL);
	slim_fb_fill(&model, (struct slim_rect){ 0, 0, (uint16_t)W, (uint16_t)H }, 0);
	struct slim_cscs_scratch *s = slim_cscs_scratch_create();
	for (uint32_t seq = 1; seq <= 400; seq++) {
		slim_writer_init(&c.w, c.buf, SLIM_DEFAULT_MTU, ASSOC, false);
		for (int k = 0; k < 6; k++) {
			struct slim_rect r = random_rect(&rng, W, H, 16);
			switch (test_rand_below(&rng, 8)) {
			case 0:
				slim_put_fill(&c.w, random_rect(&rng, W, H, 150), test_rand(&rng));
				break;
			case 1:
				test_put_set(&c.w, r, (uint8_t)test_rand_below(&rng, 4), &rng, NULL);
				break;
			case 2:
				test_put_bitmap(&c.w, r, test_rand(&rng), test_rand(&rng), &rng);
				break;
			case 3: {
				struct slim_rect src = random_rect(&rng, W, H, 120);
				slim_put_copy(&c.w, src, (uint16_t)test_rand_below(&rng, W - src.w + 1),
					(uint16_t)test_rand_below(&rng, H - src.h + 1));
				break;
			}
			case 4: {
				struct slim_rect dst = random_rect(&rng, W, H, 100);
				struct slim_rect pdst = random_rect(&rng, dst.w, dst.h, 100);
				pdst.x = (uint16_t)(pdst.x + dst.x);
				pdst.y = (uint16_t)(pdst.y + dst.y);
				struct slim_wire_cscs cs = {
					.src_w = 24, .src_h = 18,
					.dst = { dst.x, dst.y, dst.w, dst.h },
					.psrc = { 2, 4, 17, 11 },
					.pdst = { pdst.x, pdst.y, pdst.w, pdst.h },
				};
				test_put_cscs(&c.w, &cs, (uint8_t)test_rand_below(&rng, 2), &rng);
				break;
			}
			case 5:
				slim_put_cursor_pos(&c.w, (int16_t)test_rand(&rng), 0, true);
				break;
			case 6:
				slim_put_frame_end(&c.w, &(struct slim_wire_frame_end){ .frame = seq });
				break;
			default:
				break;
			}
		}
		c.len = slim_writer_finish(&c.w, seq, seq);
		assert_int_equal(slim_console_core_receive(c.core, c.buf, c.len), SLIM_OK);
		model_apply(&model, c.buf, c.len, s);
		test_fb_assert_equal(slim_console_core_fb(c.core), &model);
		test_sink_clear(c.sink);
	}
	assert_int_equal(slim_console_core_stats(c.core)->applied, 400);
	assert_int_equal(slim_console_core_stats(c.core)->bad, 0);
	slim_cscs_scratch_destroy(s);
	test_fb_destroy(&model);
	console_close(&c);
}

static void test_cursor(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 63);
	struct rec_backend *rec = rec_create();
	struct console c;
	console_open(&c, 64, 48, SLIM_DEFAULT_MTU, &rec->base);
	slim_console_core_hello(c.core, "cursor", ASSOC);
	const struct slim_console_cursor *cur = slim_console_core_cursor(c.core);

	/* a 12x10 image in two pieces, in two datagrams */
	struct slim_wire_cursor_image ci = { .serial = 3, .w = 12, .h = 10, .hot_x = 4, .hot_y = 5,
		.row = 0, .rows = 6 };
	begin(&c);
	uint8_t *a = test_put_cursor_image(&c.w, &ci, &rng);
	assert_int_equal(send_dgram(&c, 1, 0), SLIM_OK);
	uint8_t top[12 * 6 * 4];
	memcpy(top, a + sizeof(ci), sizeof(top));
	ci.row = 6;
	ci.rows = 4;
	begin(&c);
	uint8_t *b = test_put_cursor_image(&c.w, &ci, &rng);
	assert_true(slim_put_cursor_pos(&c.w, -3, 47, true));
	assert_int_equal(rec->cursors, 0);
	assert_int_equal(send_dgram(&c, 2, 0), SLIM_OK);
	assert_int_equal(cur->w, 12);
	assert_int_equal(cur->h, 10);
	assert_int_equal(cur->hot_x, 4);
	assert_int_equal(cur->hot_y, 5);
	assert_int_equal(cur->x, -3);
	assert_int_equal(cur->y, 47);
	assert_true(cur->visible);
	assert_non_null(cur->pixels);
	assert_memory_equal(cur->pixels, top, sizeof(top));
	assert_memory_equal(cur->pixels + 12 * 6, b + sizeof(ci), 12 * 4 * 4);
	/* the backend is told about the position */
	assert_int_equal(rec->cursors, 1);
	assert_int_equal(rec->cursor.x, -3);
	assert_true(rec->cursor.visible);
	/* cursor commands do not draw into the picture */
	for (uint32_t i = 0; i < 64 * 48; i++) {
		assert_int_equal(slim_console_core_fb(c.core)->px[i], 0xff000000);
	}

	/* a new image starts clean: rows not sent yet are transparent */
	ci = (struct slim_wire_cursor_image){ .serial = 4, .w = 8, .h = 8, .row = 2, .rows = 1 };
	begin(&c);
	uint8_t *p = test_put_cursor_image(&c.w, &ci, &rng);
	assert_true(slim_put_cursor_pos(&c.w, 10, 10, false));
	assert_int_equal(send_dgram(&c, 3, 0), SLIM_OK);
	assert_int_equal(cur->w, 8);
	assert_false(cur->visible);
	for (uint32_t i = 0; i < 64; i++) {
		uint32_t want = 0;
		if (i / 8 == 2) {
			memcpy(&want, p + sizeof(ci) + 4 * (i % 8), 4);
		}
		assert_int_equal(cur->pixels[i], want);
	}
	assert_int_equal(rec->cursors, 2);

	/* the same serial with another size is another image too */
	ci = (struct slim_wire_cursor_image){ .serial = 4, .w = 8, .h = 9, .row = 8, .rows = 1 };
	begin(&c);
	p = test_put_cursor_image(&c.w, &ci, &rng);
	assert_int_equal(send_dgram(&c, 4, 0), SLIM_OK);
	assert_int_equal(cur->h, 9);
	for (uint32_t i = 0; i < 64; i++) {
		assert_int_equal(cur->pixels[i], 0);
	}
	assert_memory_equal(cur->pixels + 64, p + sizeof(ci), 8 * 4);
	/* while more rows of the same image add to it */
	ci.row = 0;
	begin(&c);
	p = test_put_cursor_image(&c.w, &ci, &rng);
	assert_int_equal(send_dgram(&c, 5, 0), SLIM_OK);
	assert_memory_equal(cur->pixels, p + sizeof(ci), 8 * 4);
	assert_int_not_equal(cur->pixels[64], 0);
	console_close(&c);
}

/* What one upstream datagram of input says: INPUT (optional), then HELD. */
static void test_resize(void **state)
{
	struct rec_backend *rec = rec_create();
	struct console c;
	console_open(&c, 64, 48, SLIM_DEFAULT_MTU, &rec->base);
	slim_console_core_hello(c.core, "resize", ASSOC);
	fill_dgram(&c, (struct slim_rect){ 0, 0, 64, 48 }, 0xffffff);
	assert_int_equal(send_dgram(&c, 1, 0), SLIM_OK);
	assert_false(slim_console_core_resize(c.core, 0, 10));
	assert_false(slim_console_core_resize(c.core, 10, SLIM_MAX_DIM + 1));
	assert_int_equal(slim_console_core_fb(c.core)->width, 64);
	assert_true(slim_console_core_resize(c.core, 100, 20));
	assert_int_equal(rec->resizes, 1);
	assert_int_equal(rec->width, 100);
	assert_int_equal(rec->height, 20);
	const struct slim_fb *fb = slim_console_core_fb(c.core);
	assert_int_equal(fb->width, 100);
	assert_int_equal(fb->height, 20);
	for (uint32_t y = 0; y < 20; y++) {
		for (uint32_t x = 0; x < 100; x++) {
			assert_int_equal(*slim_fb_row(fb, x, y), 0xff000000);
		}
	}
	/* rectangles are checked against the new size */
	fill_dgram(&c, (struct slim_rect){ 0, 0, 64, 48 }, 0xffffff);
	assert_int_equal(send_dgram(&c, 2, 0), SLIM_ERR_RECT);
	fill_dgram(&c, (struct slim_rect){ 0, 0, 100, 20 }, 0xffffff);
	assert_int_equal(send_dgram(&c, 2, 0), SLIM_OK);
	assert_int_equal(*slim_fb_row(fb, 99, 19), 0xffffffff);
	console_close(&c);
}

static void test_png(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 64);
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/slim-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	char path[4200];
	snprintf(path, sizeof(path), "%s/shot.png", dir);

	struct slim_fb fb = test_fb_create(37, 21, &rng);
	assert_true(slim_png_write(path, &fb));

	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	uint8_t sig[8];
	assert_int_equal(fread(sig, 1, 8, f), 8);
	static const uint8_t png_sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	assert_memory_equal(sig, png_sig, 8);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size > 8);

	/* read it back: 8-bit RGB, the pixels' R, G, B */
	rewind(f);
	png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png_create_info_struct(png);
	assert_non_null(png);
	assert_non_null(info);
	if (setjmp(png_jmpbuf(png))) {
		fail_msg("libpng could not read the file");
	}
	png_init_io(png, f);
	png_read_info(png, info);
	assert_int_equal(png_get_image_width(png, info), 37);
	assert_int_equal(png_get_image_height(png, info), 21);
	assert_int_equal(png_get_bit_depth(png, info), 8);
	assert_int_equal(png_get_color_type(png, info), PNG_COLOR_TYPE_RGB);
	uint8_t row[37 * 3];
	for (uint32_t y = 0; y < 21; y++) {
		png_read_row(png, row, NULL);
		for (uint32_t x = 0; x < 37; x++) {
			uint32_t px = *slim_fb_row(&fb, x, y);
			assert_int_equal(row[3 * x], (px >> 16) & 0xff);
			assert_int_equal(row[3 * x + 1], (px >> 8) & 0xff);
			assert_int_equal(row[3 * x + 2], px & 0xff);
		}
	}
	png_destroy_read_struct(&png, &info, NULL);
	fclose(f);

	/* where it cannot be written */
	char bad[4300];
	snprintf(bad, sizeof(bad), "%s/missing/shot.png", dir);
	assert_false(slim_png_write(bad, &fb));

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	test_fb_destroy(&fb);
}

int main(void)
{
	test_quiet_logs();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_damage),
		cmocka_unit_test(test_against_model),
		cmocka_unit_test(test_cursor),
		cmocka_unit_test(test_resize),
		cmocka_unit_test(test_png),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
