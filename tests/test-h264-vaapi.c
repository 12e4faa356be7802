/*
 * The H.264 encoder on the GPU: VA-API on a real render node, its pictures
 * decoded by the console's decoder. A host with no VA-API device that
 * encodes H.264 skips it (exit 77), saying why; the driver is never faked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include "h264-decoder.h"
#include "h264-encoder.h"
#include "h264-scene.h"

#define W 1280
#define H 720
#define FPS 60

/*
 * A few pictures at 8 Mbit/s; lossy by design, the decoded luma within
 * 35 dB PSNR of the source on average (GPU encoders spend their bits less
 * well than x264, hence a lower bar than test-h264's).
 */
static void test_vaapi_roundtrip(void **state)
{
	struct h264_scene scene;
	assert_true(h264_scene_init(&scene, W, H));
	struct slim_h264_config config = { .width = W, .height = H, .fps = FPS,
		.bitrate_bps = 8000000, .device = SLIM_H264_VAAPI };
	struct slim_h264_encoder *enc = slim_h264_encoder_create(&config);
	assert_non_null(enc);
	struct slim_h264_decoder *dec = slim_h264_decoder_create(2, true);
	assert_non_null(dec);
	double psnr_sum = 0;
	unsigned n = 20, measured = 0;
	for (unsigned i = 0; i < n; i++) {
		h264_scene_draw(&scene, i);
		struct slim_h264_planes in = { .y = scene.y, .u = scene.u, .v = scene.v,
			.y_stride = W, .c_stride = W / 2 };
		struct slim_h264_au au;
		assert_true(slim_h264_encode(enc, &in, (uint64_t)i * 1000000 / FPS, i == 10, &au));
		if (i == 0 || i == 10) {
			assert_true(au.key);
		}
		struct slim_h264_picture pic;
		assert_true(slim_h264_decode(dec, au.data, au.size, &pic));
		if (i >= 5 && i != 10) {
			psnr_sum += h264_scene_psnr_y(&scene, pic.y, pic.y_stride);
			measured++;
		}
	}
	struct slim_h264_encoder_info ei;
	slim_h264_encoder_info(enc, &ei);
	print_message("%s %s: PSNR(Y) %.2f dB, encode p50 %.2f p99 %.2f ms\n", ei.kind,
		ei.device, psnr_sum / measured, ei.encode_ms_p50, ei.encode_ms_p99);
	assert_string_equal(ei.kind, "vaapi");
	assert_true(psnr_sum / measured >= 35.0);
	slim_h264_encoder_destroy(enc);
	slim_h264_decoder_destroy(dec);
	h264_scene_finish(&scene);
}

int main(void)
{
	char node[64];
	const char *why;
	if (!slim_h264_vaapi_find(node, sizeof(node), &why)) {
		printf("SKIP: this host has no VA-API device: %s\n", why);
		return 77;
	}
	printf("VA-API encodes H.264 on %s\n", node);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vaapi_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
