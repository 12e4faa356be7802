/*
 * The server's H.264 encoder into the console's decoder, both for real
 * (x264 and libavcodec's decoder, in software): a moving scene of text and
 * bars, key pictures, the bit rate following the link, bad configurations
 * and a hostile stream.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "h264-decoder.h"
#include "h264-encoder.h"
#include "h264-scene.h"
#include "test-util.h"

#define W 1280
#define H 720
#define FPS 60

struct rig {
	struct h264_scene scene;
	struct slim_h264_encoder *enc;
	struct slim_h264_decoder *dec;
	unsigned n; /* the next picture of the scene */
};

static int rig_setup(void **state)
{
	struct rig *rig = calloc(1, sizeof(*rig));
	assert_non_null(rig);
	assert_true(h264_scene_init(&rig->scene, W, H));
	struct slim_h264_config config = { .width = W, .height = H, .fps = FPS,
		.bitrate_bps = 8000000, .device = SLIM_H264_SOFTWARE };
	rig->enc = slim_h264_encoder_create(&config);
	assert_non_null(rig->enc);
	rig->dec = slim_h264_decoder_create(2, false);
	assert_non_null(rig->dec);
	*state = rig;
	return 0;
}

static int rig_teardown(void **state)
{
	struct rig *rig = *state;
	slim_h264_encoder_destroy(rig->enc);
	slim_h264_decoder_destroy(rig->dec);
	h264_scene_finish(&rig->scene);
	free(rig);
	return 0;
}

/* Encodes the scene's next picture into au. */
static void encode_next(struct rig *rig, bool key, struct slim_h264_au *au)
{
	h264_scene_draw(&rig->scene, rig->n);
	struct slim_h264_planes in = { .y = rig->scene.y, .u = rig->scene.u, .v = rig->scene.v,
		.y_stride = W, .c_stride = W / 2 };
	assert_true(slim_h264_encode(rig->enc, &in, (uint64_t)rig->n * 1000000 / FPS, key, au));
	assert_true(au->size > 0);
	rig->n++;
}

/* Decodes au and returns its luma PSNR against the picture just encoded. */
static double decode_psnr(struct rig *rig, const struct slim_h264_au *au)
{
	struct slim_h264_picture pic;
	assert_true(slim_h264_decode(rig->dec, au->data, au->size, &pic));
	assert_int_equal(pic.width, W);
	assert_int_equal(pic.height, H);
	return h264_scene_psnr_y(&rig->scene, pic.y, pic.y_stride);
}

/* Whether the access unit has SPS, then PPS, then an IDR slice, in that order. */
static bool starts_stream(const struct slim_h264_au *au)
{
	uint8_t types[64];
	size_t n = h264_nal_types(au->data, au->size, types, 64);
	size_t sps = n, pps = n, idr = n;
	for (size_t i = n; i-- > 0;) {
		sps = types[i] == 7 ? i : sps;
		pps = types[i] == 8 ? i : pps;
		idr = types[i] == 5 ? i : idr;
	}
	return sps < pps && pps < idr && idr < n;
}

/*
 * 60 pictures of 1280x720 at 8 Mbit/s. The path is lossy by design: the
 * decoded luma must stay within 38 dB PSNR of the source on average over
 * pictures 10..59 (x264's fast presets reach 43 to 51 on this scene).
 */
static void test_roundtrip(void **state)
{
	struct rig *rig = *state;
	double psnr_sum = 0;
	for (unsigned i = 0; i < 60; i++) {
		struct slim_h264_au au;
		encode_next(rig, false, &au);
		if (i == 0) {
			assert_true(au.key);
			assert_true(starts_stream(&au));
		}
		double psnr = decode_psnr(rig, &au);
		if (i >= 10) {
			psnr_sum += psnr;
		}
	}
	double psnr = psnr_sum / 50;
	struct slim_h264_encoder_info ei;
	struct slim_h264_decoder_info di;
	slim_h264_encoder_info(rig->enc, &ei);
	slim_h264_decoder_info(rig->dec, &di);
	print_message("PSNR(Y) %.2f dB; %s %s (%s): %llu pictures, %llu bytes, encode p50 %.2f "
		"p99 %.2f ms; decode p50 %.2f p99 %.2f ms\n", psnr, ei.kind, ei.device, ei.why,
		(unsigned long long)ei.pictures, (unsigned long long)ei.bytes, ei.encode_ms_p50,
		ei.encode_ms_p99, di.decode_ms_p50, di.decode_ms_p99);
	assert_true(psnr >= 38.0);
	assert_int_equal(ei.pictures, 60);
	assert_int_equal(di.pictures, 60);
	assert_int_equal(di.errors, 0);
	assert_string_equal(ei.kind, "software");
	assert_string_equal(di.kind, "software");
}

/* Whether two decoders gave the same picture, sample for sample. */
static bool same_picture(const struct slim_h264_picture *a, const struct slim_h264_picture *b)
{
	if (a->width != b->width || a->height != b->height) {
		return false;
	}
	for (unsigned r = 0; r < a->height; r++) {
		if (memcmp(a->y + r * a->y_stride, b->y + r * b->y_stride, a->width) != 0 ||
				(r < a->height / 2 && (memcmp(a->u + r * a->c_stride, b->u + r * b->c_stride, a->width / 2) != 0 ||
				memcmp(a->v + r * a->c_stride, b->v + r * b->c_stride, a->width / 2) != 0))) {
			return false;
		}
	}
	return true;
}

/*
 * A key picture asked for comes out key, with what a new console needs,
 * and within the VBV's two pictures' worth of bytes (so it costs the link
 * no more than two pictures do: its first quality is low, the pictures
 * after it bring it back).
 */
static void test_forced_key(void **state)
{
	struct rig *rig = *state;
	struct slim_h264_au au;
	for (unsigned i = 0; i < 5; i++) {
		encode_next(rig, false, &au);
		decode_psnr(rig, &au);
	}
	assert_false(au.key);
	encode_next(rig, true, &au);
	assert_true(au.key);
	assert_true(starts_stream(&au));
	size_t vbv_bytes = 8000000 * 2 / FPS / 8;
	print_message("forced key: %zu bytes (VBV %zu)\n", au.size, vbv_bytes);
	assert_true(au.size <= vbv_bytes + vbv_bytes / 10);
	/* it decodes alone, in a decoder that saw nothing before */
	struct slim_h264_decoder *fresh = slim_h264_decoder_create(1, false);
	struct slim_h264_picture pic;
	assert_true(slim_h264_decode(fresh, au.data, au.size, &pic));
	double psnr = 0;
	for (unsigned i = 0; i < 30; i++) {
		encode_next(rig, false, &au);
		assert_true(slim_h264_decode(fresh, au.data, au.size, &pic));
		psnr = h264_scene_psnr_y(&rig->scene, pic.y, pic.y_stride);
	}
	print_message("PSNR(Y) 30 pictures after the key: %.2f dB\n", psnr);
	assert_true(psnr >= 38.0);
	slim_h264_decoder_destroy(fresh);
}

/* The bit rate follows the link at once: a eighth of it, well under half the bytes. */
static void test_bitrate(void **state)
{
	struct rig *rig = *state;
	struct slim_h264_au au;
	for (unsigned i = 0; i < 10; i++) {
		encode_next(rig, false, &au);
	}
	uint64_t before = 0, after = 0, keys = 0;
	for (unsigned i = 0; i < 30; i++) {
		encode_next(rig, false, &au);
		before += au.size;
	}
	slim_h264_encoder_set_bitrate(rig->enc, 1000000);
	/* x264 reconfigured at once: a key picture here would be a new encoder (a preset step) */
	for (unsigned i = 0; i < 30; i++) {
		encode_next(rig, false, &au);
		after += au.size;
		keys += au.key;
	}
	struct slim_h264_encoder_info ei;
	slim_h264_encoder_info(rig->enc, &ei);
	print_message("mean AU at 8 Mbit/s %llu bytes, at 1 Mbit/s %llu (%llu key)\n",
		(unsigned long long)before / 30, (unsigned long long)after / 30,
		(unsigned long long)keys);
	assert_int_equal(ei.bitrate_bps, 1000000);
	assert_true(after / 30 < before / 30 / 2);
}

static void test_refused(void **state)
{
	const struct slim_h264_config good = { .width = 64, .height = 48, .fps = 30,
		.bitrate_bps = 500000, .device = SLIM_H264_SOFTWARE };
	struct slim_h264_config c = good;
	c.width = 63;
	assert_null(slim_h264_encoder_create(&c));
	c = good;
	c.height = 14;
	assert_null(slim_h264_encoder_create(&c));
	c = good;
	c.fps = 0;
	assert_null(slim_h264_encoder_create(&c));
	c = good;
	c.fps = 241;
	assert_null(slim_h264_encoder_create(&c));
	c = good;
	c.bitrate_bps = 0;
	assert_null(slim_h264_encoder_create(&c));
	c = good;
	c.x264_preset = "placebo";
	assert_null(slim_h264_encoder_create(&c));
	c = good;
	c.width = 8194;
	assert_null(slim_h264_encoder_create(&c));
	assert_null(slim_h264_encoder_create(NULL));
	slim_h264_encoder_destroy(NULL);
	slim_h264_decoder_destroy(NULL);
	/* the good one opens, and a small picture gets the slower preset */
	struct slim_h264_encoder *enc = slim_h264_encoder_create(&good);
	assert_non_null(enc);
	struct slim_h264_encoder_info ei;
	slim_h264_encoder_info(enc, &ei);
	assert_string_equal(ei.device, "veryfast");
	slim_h264_encoder_destroy(enc);
}

/*
 * Random bytes and access units cut short: no picture, counted; the next
 * key picture decodes as it should.
 */
static void test_hostile_stream(void **state)
{
	struct rig *rig = *state;
	struct slim_h264_au au;
	struct slim_h264_picture pic;
	struct slim_h264_decoder_info di;
	slim_h264_decoder_info(rig->dec, &di);
	uint64_t errors = di.errors;

	struct test_rng rng;
	test_rng_init(&rng, 264);
	uint8_t junk[4096];
	for (unsigned i = 0; i < 50; i++) {
		size_t len = test_rand_range(&rng, 4, sizeof(junk));
		test_rand_bytes(&rng, junk, len);
		/* some with start codes, so the junk reaches the NAL parsers */
		if (i % 2) {
			junk[0] = 0, junk[1] = 0, junk[2] = 1;
		}
		assert_false(slim_h264_decode(rig->dec, junk, len, &pic));
	}
	/*
	 * A key picture cut to a third, then a picture cut to half: whether the
	 * half gives a (concealed) picture depends on where its slices end, so
	 * only the decoder's survival and its errors are asked of it.
	 */
	encode_next(rig, true, &au);
	assert_true(au.key);
	assert_false(slim_h264_decode(rig->dec, au.data, au.size / 3, &pic));
	encode_next(rig, false, &au);
	slim_h264_decode(rig->dec, au.data, au.size / 2, &pic);
	slim_h264_decoder_info(rig->dec, &di);
	assert_true(di.errors > errors);

	/* from the next key picture on, it decodes as a decoder that saw none of it */
	struct slim_h264_decoder *clean = slim_h264_decoder_create(1, false);
	for (unsigned i = 0; i < 5; i++) {
		encode_next(rig, i == 0, &au);
		struct slim_h264_picture want;
		assert_true(slim_h264_decode(clean, au.data, au.size, &want));
		assert_true(slim_h264_decode(rig->dec, au.data, au.size, &pic));
		assert_true(same_picture(&pic, &want));
	}
	slim_h264_decoder_destroy(clean);
}

/* AUTO takes VA-API where a render node encodes H.264 and says why when it does not. */
static void test_device_choice(void **state)
{
	char node[64];
	const char *why;
	bool gpu = slim_h264_vaapi_find(node, sizeof(node), &why);
	struct slim_h264_config c = { .width = 320, .height = 240, .fps = 30,
		.bitrate_bps = 500000, .device = SLIM_H264_AUTO };
	struct slim_h264_encoder *enc = slim_h264_encoder_create(&c);
	assert_non_null(enc);
	struct slim_h264_encoder_info ei;
	slim_h264_encoder_info(enc, &ei);
	print_message("AUTO: %s %s (%s)\n", ei.kind, ei.device, ei.why);
	if (!gpu) {
		assert_string_equal(ei.kind, "software");
		assert_string_equal(ei.why, why);
		c.device = SLIM_H264_VAAPI;
		assert_null(slim_h264_encoder_create(&c));
	}
	slim_h264_encoder_destroy(enc);
}

static void test_caps(void **state)
{
	struct slim_wire_codec codec;
	slim_h264_decoder_caps(false, &codec);
	assert_int_equal(codec.codec, SLIM_CODEC_H264);
	assert_int_equal(codec.profile, 100);
	assert_int_equal(codec.max_width, 4096);
	assert_int_equal(codec.max_fps, 60);
	assert_int_equal(codec.flags & SLIM_CODEC_HARDWARE, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_forced_key, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_bitrate, rig_setup, rig_teardown),
		cmocka_unit_test(test_refused),
		cmocka_unit_test_setup_teardown(test_hostile_stream, rig_setup, rig_teardown),
		cmocka_unit_test(test_device_choice),
		cmocka_unit_test(test_caps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
