/*
 * The YUV path without a compositor: video frames from the server's pixels
 * (slim_yuv_from_fb) through the encoder's CSCS pieces to a console.
 *
 * - After every frame the console's framebuffer equals the encoder's model
 *   byte for byte, whatever the image's size, scale, place on screen (also
 *   half off it), and with moves (COPY) from and across the video.
 * - Once the video is repainted as ordinary damage (the compositor's
 *   lossless refresh), the console equals the server's pixels exactly.
 * - The conversion is BT.601 limited range, 4:2:0: flat colours give the
 *   textbook samples; a downscaled flat picture stays flat.
 * - The budget gives fewer samples, never more than the box.
 * - video-detect.c: what is video and what is not, and when it ends.
 * - yuv-shm.c: which YUV wl_shm buffers a client may send, and their
 *   planes read back the same through each layout.
 */
#include <stdlib.h>
#include <string.h>
#include "video-detect.h"
#include "yuv-shm.h"
#include "console-core.h"
#include "content.h"
#include "encoder.h"
#include "test-util.h"

struct wire {
	struct slim_console_core *console;
};

static void deliver(void *data, const uint8_t *buf, size_t len)
{
	struct wire *w = data;
	assert_int_equal(slim_console_core_receive(w->console, buf, len), SLIM_OK);
}

static void sink(void *data, const uint8_t *buf, size_t len)
{
}

static void assert_fb_equal(const struct slim_fb *a, const struct slim_fb *b)
{
	assert_int_equal(a->width, b->width);
	assert_int_equal(a->height, b->height);
	for (uint32_t y = 0; y < a->height; y++) {
		for (uint32_t x = 0; x < a->width; x++) {
			uint32_t p = *slim_fb_row(a, x, y) | SLIM_OPAQUE;
			uint32_t q = *slim_fb_row(b, x, y) | SLIM_OPAQUE;
			if (p != q) {
				fail_msg("pixel (%u, %u): %08x != %08x", x, y, p, q);
			}
		}
	}
}

struct rig {
	struct test_rng rng;
	struct content_rng crng;
	struct slim_fb fb;
	struct wire wire;
	struct slim_encoder *enc;
	struct slim_yuv_planes planes;
};

static void rig_init_caps(struct rig *r, uint32_t w, uint32_t h, uint64_t salt, bool cscs)
{
	memset(r, 0, sizeof(*r));
	test_rng_init(&r->rng, salt);
	r->crng.s = test_rand(&r->rng) | 1;
	r->fb = test_fb_create(w, h, &r->rng);
	content_paint(&r->fb, (struct slim_rect){ 0, 0, (uint16_t)w, (uint16_t)h }, CONTENT_UI,
		&r->crng);
	struct slim_encoder_config cfg = { .assoc = 7, .lz4 = true, .cscs = cscs };
	r->wire.console = slim_console_core_create(w, h, SLIM_DEFAULT_MTU, NULL, sink, NULL);
	assert_non_null(r->wire.console);
	slim_console_core_hello(r->wire.console, "test", cfg.assoc);
	r->enc = slim_encoder_create(w, h, &cfg, deliver, &r->wire);
	assert_non_null(r->enc);
}

static void rig_init(struct rig *r, uint32_t w, uint32_t h, uint64_t salt)
{
	rig_init_caps(r, w, h, salt, true);
}

static void rig_finish(struct rig *r)
{
	slim_encoder_destroy(r->enc);
	slim_console_core_destroy(r->wire.console);
	slim_yuv_planes_finish(&r->planes);
	test_fb_destroy(&r->fb);
}

/* A frame: damage everywhere; `video` as CSCS of w x h samples when given. */
static void rig_frame(struct rig *r, const struct slim_rect *video, uint16_t sw, uint16_t sh,
		const struct slim_move_hint *move)
{
	pixman_region32_t damage;
	pixman_region32_init_rect(&damage, 0, 0, r->fb.width, r->fb.height);
	struct slim_yuv_image img;
	struct slim_frame f = { .fb = &r->fb, .damage = &damage, .moves = move,
		.n_moves = move ? 1 : 0 };
	if (video) {
		/* the video's box, clipped to the screen, is what the compositor converts */
		struct slim_rect box = *video;
		box.w = (uint16_t)(box.x + box.w > r->fb.width ? r->fb.width - box.x : box.w);
		box.h = (uint16_t)(box.y + box.h > r->fb.height ? r->fb.height - box.y : box.h);
		assert_true(slim_yuv_from_fb(&img, &r->planes, &r->fb, box,
			sw < box.w ? sw : box.w, sh < box.h ? sh : box.h));
		f.yuv = &img;
		f.n_yuv = 1;
	}
	slim_encoder_frame(r->enc, &f);
	pixman_region32_fini(&damage);
	assert_fb_equal(slim_encoder_model(r->enc), slim_console_core_fb(r->wire.console));
}

/* Model and console agree through CSCS at many sizes and scales. */
static void test_model_exact(void **state)
{
	static const struct {
		uint32_t w, h;
		struct slim_rect box;
		uint16_t sw, sh;
	} cases[] = {
		{ 320, 240, { 0, 0, 320, 240 }, 320, 240 },     /* full size */
		{ 320, 240, { 17, 9, 201, 133 }, 201, 133 },    /* odd sizes, odd place */
		{ 320, 240, { 10, 20, 300, 200 }, 151, 77 },    /* downscaled */
		{ 320, 240, { 0, 0, 320, 240 }, 41, 31 },       /* far down */
		{ 320, 240, { 3, 5, 97, 96 }, 2, 2 },           /* as small as it gets */
		{ 200, 150, { 1, 1, 199, 149 }, 190, 140 },     /* nearly full */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rig r;
		rig_init(&r, cases[i].w, cases[i].h, 100 + i);
		rig_frame(&r, NULL, 0, 0, NULL);
		for (int k = 0; k < 3; k++) {
			content_paint(&r.fb, cases[i].box, CONTENT_PHOTO, &r.crng);
			rig_frame(&r, &cases[i].box, cases[i].sw, cases[i].sh, NULL);
		}
		rig_finish(&r);
	}
}

/* A window dragged over, from and across the video: COPY stays correct. */
static void test_moves_around_video(void **state)
{
	struct rig r;
	rig_init(&r, 320, 240, 7);
	rig_frame(&r, NULL, 0, 0, NULL);
	struct slim_rect video = { 40, 30, 160, 120 };
	content_paint(&r.fb, video, CONTENT_PHOTO, &r.crng);
	rig_frame(&r, &video, 100, 75, NULL);
	/* the video's pixels move right by 50: what the console has there is copied */
	struct slim_move_hint move = { .src = video, .dx = 50, .dy = 20 };
	slim_fb_copy(&r.fb, video, (uint16_t)(video.x + 50), (uint16_t)(video.y + 20));
	rig_frame(&r, NULL, 0, 0, &move);
	/* and a part of it back over where it was, while it plays */
	move = (struct slim_move_hint){ .src = { 90, 50, 100, 60 }, .dx = -60, .dy = -10 };
	slim_fb_copy(&r.fb, move.src, 30, 40);
	struct slim_rect video2 = { 90, 50, 160, 120 };
	content_paint(&r.fb, video2, CONTENT_PHOTO, &r.crng);
	rig_frame(&r, &video2, 80, 60, &move);
	rig_finish(&r);
}

/* The lossless refresh: damage over the video without CSCS makes the console exact. */
static void test_refresh_is_exact(void **state)
{
	struct rig r;
	rig_init(&r, 320, 240, 11);
	rig_frame(&r, NULL, 0, 0, NULL);
	struct slim_rect video = { 0, 0, 320, 240 };
	content_paint(&r.fb, video, CONTENT_PHOTO, &r.crng);
	rig_frame(&r, &video, 200, 150, NULL);
	/* lossy: the console differs from the server somewhere */
	const struct slim_fb *con = slim_console_core_fb(r.wire.console);
	bool differs = false;
	for (uint32_t y = 0; y < 240 && !differs; y++) {
		for (uint32_t x = 0; x < 320 && !differs; x++) {
			differs = (*slim_fb_row(con, x, y) | SLIM_OPAQUE) !=
				(*slim_fb_row(&r.fb, x, y) | SLIM_OPAQUE);
		}
	}
	assert_true(differs);
	rig_frame(&r, NULL, 0, 0, NULL);
	assert_fb_equal(&r.fb, con);
	rig_finish(&r);
}

/* A console without the CSCS capability gets video as exact pixels. */
static void test_no_cscs_capability(void **state)
{
	struct rig r;
	rig_init_caps(&r, 320, 240, 13, false);
	struct slim_rect video = { 20, 10, 200, 150 };
	content_paint(&r.fb, video, CONTENT_PHOTO, &r.crng);
	rig_frame(&r, &video, 100, 75, NULL);
	assert_fb_equal(&r.fb, slim_console_core_fb(r.wire.console));
	assert_int_equal(slim_encoder_stats(r.enc)->commands[SLIM_STAT_CSCS], 0);
	rig_finish(&r);
}

/* BT.601 limited range in its common 8-bit integer form (green: Y 144, not 145). */
static void test_conversion(void **state)
{
	static const struct {
		uint32_t rgb;
		uint8_t y, u, v;
	} colours[] = {
		{ 0xffffff, 235, 128, 128 }, { 0x000000, 16, 128, 128 },
		{ 0xff0000, 82, 90, 240 }, { 0x00ff00, 144, 54, 34 }, { 0x0000ff, 41, 240, 110 },
	};
	struct test_rng rng;
	test_rng_init(&rng, 3);
	struct slim_fb fb = test_fb_create(64, 48, &rng);
	struct slim_yuv_planes planes = { 0 };
	for (size_t i = 0; i < sizeof(colours) / sizeof(colours[0]); i++) {
		slim_fb_fill(&fb, (struct slim_rect){ 0, 0, 64, 48 }, colours[i].rgb);
		for (int scaled = 0; scaled < 2; scaled++) {
			struct slim_yuv_image img;
			uint16_t w = scaled ? 23 : 64, h = scaled ? 17 : 48;
			assert_true(slim_yuv_from_fb(&img, &planes, &fb,
				(struct slim_rect){ 0, 0, 64, 48 }, w, h));
			assert_int_equal(img.width, w);
			assert_int_equal(img.height, h);
			for (uint32_t k = 0; k < (uint32_t)w * h; k++) {
				assert_int_equal(img.y[k], colours[i].y);
			}
			for (uint32_t k = 0; k < ((w + 1u) / 2) * ((h + 1u) / 2); k++) {
				assert_int_equal(img.u[k], colours[i].u);
				assert_int_equal(img.v[k], colours[i].v);
			}
		}
	}
	/* a box outside the framebuffer, or more samples than pixels: refused */
	struct slim_yuv_image img;
	assert_false(slim_yuv_from_fb(&img, &planes, &fb, (struct slim_rect){ 10, 10, 64, 48 },
		64, 48));
	assert_false(slim_yuv_from_fb(&img, &planes, &fb, (struct slim_rect){ 0, 0, 32, 32 },
		33, 32));
	assert_false(slim_yuv_from_fb(&img, &planes, &fb, (struct slim_rect){ 0, 0, 32, 32 },
		0, 32));
	slim_yuv_planes_finish(&planes);
	test_fb_destroy(&fb);
}

static void test_budget(void **state)
{
	uint16_t w, h;
	/* plenty: the whole box */
	slim_yuv_fit(1000000000, 30, 640, 360, &w, &h);
	assert_int_equal(w, 640);
	assert_int_equal(h, 360);
	/* 1280x720 at 60 in 200 Mbit/s: fewer samples, same shape, within the budget */
	slim_yuv_fit(200000000, 60, 1280, 720, &w, &h);
	assert_true(w < 1280 && h < 720);
	assert_true((uint64_t)w * h * 16 * 60 <= 200000000);
	assert_true(abs((int)w * 720 - (int)h * 1280) < 1280 * 2);
	/* nothing at all: the smallest image, not none */
	slim_yuv_fit(0, 60, 1280, 720, &w, &h);
	assert_int_equal(w, 2);
	assert_int_equal(h, 2);
}

/* A commit every 16 ms of a w x h surface redrawing `part` of it (in percent). */
static bool commits(struct slim_video_detect *d, uint64_t *now, int n, uint32_t w, uint32_t h,
		uint32_t part)
{
	bool became = false;
	for (int i = 0; i < n; i++) {
		*now += 16000;
		became |= slim_video_detect_commit(d, *now, w, h, (uint64_t)w * h * part / 100);
	}
	return became;
}

static void test_detect(void **state)
{
	uint64_t now = 1000000;
	struct slim_video_detect d = { 0 };
	/* 20 big redraws in a row: the 21st commit (20 short gaps) makes it video */
	assert_false(commits(&d, &now, 20, 640, 360, 100));
	assert_false(d.active);
	assert_true(commits(&d, &now, 1, 640, 360, 100));
	assert_true(d.active);
	assert_int_equal(slim_video_detect_fps(&d), 63); /* 1 / 16 ms, rounded */
	/* a burst of commits is not a faster video than the compositor sends */
	struct slim_video_detect burst = { .interval_us = 40 };
	assert_int_equal(slim_video_detect_fps(&burst), VIDEO_MAX_FPS);
	/* it ends VIDEO_IDLE_US after the last commit, not before */
	assert_false(slim_video_detect_expire(&d, now + VIDEO_IDLE_US - 1));
	assert_true(slim_video_detect_expire(&d, now + VIDEO_IDLE_US));
	assert_false(d.active);

	/* a blinking cursor, a spinner: small parts redrawn */
	d = (struct slim_video_detect){ 0 };
	assert_false(commits(&d, &now, 100, 640, 360, 10));
	/* a small animation redrawn whole */
	assert_false(commits(&d, &now, 100, 64, 64, 100));
	/* big redraws too far apart (a clock, a slide show) */
	for (int i = 0; i < 40; i++) {
		now += VIDEO_GAP_US;
		assert_false(slim_video_detect_commit(&d, now, 640, 360, 640 * 360));
	}
	/* a small update breaks the streak */
	assert_false(commits(&d, &now, 15, 640, 360, 100));
	assert_false(commits(&d, &now, 1, 640, 360, 1));
	assert_false(commits(&d, &now, 15, 640, 360, 100));
	assert_false(d.active);

	/* vetoed (its picture is text): not video again for VIDEO_VETO_US */
	d = (struct slim_video_detect){ 0 };
	assert_true(commits(&d, &now, 21, 640, 360, 100));
	slim_video_detect_veto(&d, now);
	assert_false(d.active);
	assert_false(commits(&d, &now, (int)(VIDEO_VETO_US / 16000) - 2, 640, 360, 100));
	assert_true(commits(&d, &now, 3, 640, 360, 100));

	/* the client's word: video at once; photo never */
	d = (struct slim_video_detect){ .hint = SLIM_CONTENT_VIDEO };
	assert_true(commits(&d, &now, 1, 640, 360, 100));
	d = (struct slim_video_detect){ .hint = SLIM_CONTENT_PHOTO };
	assert_false(commits(&d, &now, 100, 640, 360, 100));
}

/* Text has few colours, pictures many. */
static void test_colours(void **state)
{
	struct test_rng rng;
	test_rng_init(&rng, 5);
	struct slim_fb fb = test_fb_create(320, 240, &rng);
	struct content_rng crng = { 77 };
	struct slim_rect all = { 0, 0, 320, 240 };
	slim_fb_fill(&fb, all, 0x202020);
	content_text_lines(&fb, all, 0x202020, &crng);
	assert_true(slim_video_colours(&fb, all) < VIDEO_MIN_COLOURS);
	content_paint(&fb, all, CONTENT_PHOTO, &crng);
	assert_true(slim_video_colours(&fb, all) >= VIDEO_MIN_COLOURS);
	/* a box smaller than the grid: every pixel once */
	slim_fb_fill(&fb, all, 0);
	for (uint32_t i = 0; i < 10; i++) {
		*slim_fb_row(&fb, 5 + i, 7) = i + 1;
	}
	assert_int_equal(slim_video_colours(&fb, (struct slim_rect){ 5, 7, 10, 1 }), 10);
	test_fb_destroy(&fb);
}

static void test_shm_layouts(void **state)
{
	struct slim_shm_yuv l;
	const char *why;
	assert_true(slim_shm_yuv_layout(&l, SLIM_SHM_NV12, 64, 48, 64, &why));
	assert_int_equal(l.size, 64 * 48 + 64 * 24);
	assert_true(slim_shm_yuv_layout(&l, SLIM_SHM_I420, 63, 47, 64, &why));
	assert_int_equal(l.size, 64 * 47 + 2 * 32 * 24);
	assert_true(slim_shm_yuv_layout(&l, SLIM_SHM_YUYV, 5, 3, 12, &why));
	assert_int_equal(l.size, 36);
	/* strides that lie: too short for the row, or for NV12's chroma pairs */
	assert_false(slim_shm_yuv_layout(&l, SLIM_SHM_YUYV, 64, 64, 100, &why));
	assert_non_null(why);
	assert_false(slim_shm_yuv_layout(&l, SLIM_SHM_NV12, 1, 8, 1, &why));
	assert_false(slim_shm_yuv_layout(&l, SLIM_SHM_I420, 64, 64, 63, &why));
	assert_false(slim_shm_yuv_layout(&l, SLIM_SHM_NV12, 0, 64, 64, &why));
	assert_false(slim_shm_yuv_layout(&l, SLIM_SHM_NV12, 40000, 40000, 40000, &why));
	assert_false(slim_shm_yuv_layout(&l, 0x34325258 /* XR24 */, 8, 8, 32, &why));

	/* one picture, three layouts: the same planes and pixels back */
	enum { W = 6, H = 4 };
	static const uint8_t y[H][W] = {
		{ 16, 50, 90, 130, 170, 235 }, { 20, 60, 100, 140, 180, 220 },
		{ 30, 70, 110, 150, 190, 230 }, { 40, 80, 120, 160, 200, 210 },
	};
	static const uint8_t u[H / 2][W / 2] = { { 90, 128, 200 }, { 60, 128, 240 } };
	static const uint8_t v[H / 2][W / 2] = { { 240, 128, 30 }, { 110, 128, 50 } };
	uint8_t nv12[W * H + W * H / 2], i420[W * H + W * H / 2], yuyv[H][2 * W];
	for (int j = 0; j < H; j++) {
		for (int i = 0; i < W; i++) {
			nv12[j * W + i] = i420[j * W + i] = y[j][i];
			yuyv[j][2 * i] = y[j][i];
			/* YUYV has chroma on every row: the same on both rows of a pair */
			yuyv[j][2 * i + 1] = (i & 1) ? v[j / 2][i / 2] : u[j / 2][i / 2];
		}
	}
	for (int j = 0; j < H / 2; j++) {
		for (int i = 0; i < W / 2; i++) {
			nv12[W * H + j * W + 2 * i] = u[j][i];
			nv12[W * H + j * W + 2 * i + 1] = v[j][i];
			i420[W * H + j * (W / 2) + i] = u[j][i];
			i420[W * H + (W / 2) * (H / 2) + j * (W / 2) + i] = v[j][i];
		}
	}
	const struct { uint32_t format; const uint8_t *data; int32_t stride; } layouts[] = {
		{ SLIM_SHM_NV12, nv12, W }, { SLIM_SHM_I420, i420, W },
		{ SLIM_SHM_YUYV, &yuyv[0][0], 2 * W },
	};
	for (size_t k = 0; k < 3; k++) {
		assert_true(slim_shm_yuv_layout(&l, layouts[k].format, W, H, layouts[k].stride, &why));
		uint8_t planes[W * H + W * H / 2];
		uint32_t px[W * H];
		slim_shm_yuv_to_planes(&l, layouts[k].data, 0, H, planes);
		slim_shm_yuv_to_xrgb(&l, layouts[k].data, 0, H, px, W);
		assert_memory_equal(planes, y, W * H);
		assert_memory_equal(planes + W * H, u, W * H / 4);
		assert_memory_equal(planes + W * H + W * H / 4, v, W * H / 4);
		for (int j = 0; j < H; j++) {
			for (int i = 0; i < W; i++) {
				assert_int_equal(px[j * W + i],
					slim_yuv_to_xrgb(y[j][i], u[j / 2][i / 2], v[j / 2][i / 2]));
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_exact),
		cmocka_unit_test(test_moves_around_video),
		cmocka_unit_test(test_refresh_is_exact),
		cmocka_unit_test(test_no_cscs_capability),
		cmocka_unit_test(test_conversion),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_colours),
		cmocka_unit_test(test_shm_layouts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
