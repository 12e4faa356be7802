/*
 * bench-h264: the server's H.264 encoder (x264, each preset kept) and the
 * console's decoder (software, 2 threads) on the moving scene of the
 * tests, at 1280x720 and 1920x1080, 60 fps, 8 Mbit/s: encode and decode
 * ms p50/p99 over the last 120 pictures, bytes a picture, PSNR(Y), and the
 * memory one encoder costs (PSS and RSS grown from before its creation to
 * after its 30th picture, /proc/self/smaps_rollup, an encoder alone). Build it without the
 * sanitizers for memory figures that mean anything.
 *
 *   bench-h264 [--json] [--quick]
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench-options.h"
#include "h264-decoder.h"
#include "h264-encoder.h"
#include "h264-scene.h"

#define FPS 60
#define PICTURES 150

struct row {
	uint16_t width, height;
	const char *preset;
	double enc_p50, enc_p99, dec_p50, dec_p99, psnr, bytes;
	long pss_kb, rss_kb;
};

/* PSS and RSS of this process in kB, from the kernel's rollup. */
static void memory_kb(long *pss, long *rss)
{
	*pss = *rss = 0;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "Pss: %ld kB", pss);
		sscanf(line, "Rss: %ld kB", rss);
	}
	if (f) {
		fclose(f);
	}
}

static struct slim_h264_encoder *create(const struct row *row)
{
	struct slim_h264_config config = { .width = row->width, .height = row->height,
		.fps = FPS, .bitrate_bps = 8000000, .device = SLIM_H264_SOFTWARE,
		.x264_preset = row->preset };
	return slim_h264_encoder_create(&config);
}

static bool encode(struct slim_h264_encoder *enc, struct h264_scene *scene, unsigned n,
		struct slim_h264_au *au)
{
	h264_scene_draw(scene, n);
	struct slim_h264_planes in = { .y = scene->y, .u = scene->u, .v = scene->v,
		.y_stride = scene->width, .c_stride = scene->width / 2 };
	return slim_h264_encode(enc, &in, (uint64_t)n * 1000000 / FPS, false, au);
}

/*
 * What one encoder costs: memory grown from before its creation to after
 * its 30th picture, in a process of its own (--memory-of W H PRESET), whose
 * heap has no free memory of earlier encoders to reuse.
 */
static bool measure_memory_here(struct row *row, struct h264_scene *scene)
{
	long pss0, rss0, pss, rss;
	memory_kb(&pss0, &rss0);
	struct slim_h264_encoder *enc = create(row);
	struct slim_h264_au au;
	for (unsigned n = 0; enc && n < 30; n++) {
		if (!encode(enc, scene, n, &au)) {
			break;
		}
	}
	memory_kb(&pss, &rss);
	row->pss_kb = pss - pss0;
	row->rss_kb = rss - rss0;
	bool ok = enc != NULL;
	slim_h264_encoder_destroy(enc);
	return ok;
}

static bool measure_memory(struct row *row)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "/proc/%d/exe --memory-of %u %u %s", (int)getpid(),
		row->width, row->height, row->preset);
	FILE *p = popen(cmd, "r");
	bool ok = p && fscanf(p, "%ld %ld", &row->pss_kb, &row->rss_kb) == 2;
	if (p) {
		ok &= pclose(p) == 0;
	}
	return ok;
}

static int memory_of(char *argv[])
{
	struct row row = { .width = (uint16_t)atoi(argv[2]), .height = (uint16_t)atoi(argv[3]),
		.preset = argv[4] };
	struct h264_scene scene;
	if (!h264_scene_init(&scene, row.width, row.height) ||
			!measure_memory_here(&row, &scene)) {
		return 1;
	}
	printf("%ld %ld\n", row.pss_kb, row.rss_kb);
	h264_scene_finish(&scene);
	return 0;
}

static bool run(struct row *row, unsigned pictures)
{
	struct h264_scene scene;
	if (!h264_scene_init(&scene, row->width, row->height)) {
		return false;
	}
	h264_scene_draw(&scene, 0);
	struct slim_h264_decoder *dec = slim_h264_decoder_create(2, false);
	struct slim_h264_encoder *enc = measure_memory(row) ? create(row) : NULL;
	double psnr = 0;
	unsigned measured = 0;
	for (unsigned n = 0; enc && dec && n < pictures; n++) {
		struct slim_h264_au au;
		struct slim_h264_picture pic;
		if (!encode(enc, &scene, n, &au) || !slim_h264_decode(dec, au.data, au.size, &pic)) {
			break;
		}
		if (n >= 10) {
			psnr += h264_scene_psnr_y(&scene, pic.y, pic.y_stride);
			measured++;
		}
	}
	bool ok = enc && measured == pictures - 10;
	if (ok) {
		struct slim_h264_encoder_info ei;
		struct slim_h264_decoder_info di;
		slim_h264_encoder_info(enc, &ei);
		slim_h264_decoder_info(dec, &di);
		row->enc_p50 = ei.encode_ms_p50;
		row->enc_p99 = ei.encode_ms_p99;
		row->dec_p50 = di.decode_ms_p50;
		row->dec_p99 = di.decode_ms_p99;
		row->bytes = (double)ei.bytes / (double)ei.pictures;
		row->psnr = psnr / measured;
	}
	slim_h264_encoder_destroy(enc);
	slim_h264_decoder_destroy(dec);
	h264_scene_finish(&scene);
	return ok;
}

int main(int argc, char *argv[])
{
	if (argc == 5 && strcmp(argv[1], "--memory-of") == 0) {
		return memory_of(argv);
	}
	bool json, quick;
	if (!bench_options(argc, argv, &json, &quick)) {
		return 2;
	}
	static const uint16_t sizes[][2] = { { 1280, 720 }, { 1920, 1080 } };
	static const char *const presets[] = { "veryfast", "superfast", "ultrafast" };
	struct row rows[6];
	size_t n = 0;
	for (size_t s = 0; s < (quick ? 1 : 2); s++) {
		for (size_t p = 0; p < (quick ? 1 : 3); p++) {
			rows[n] = (struct row){ .width = sizes[s][0], .height = sizes[s][1],
				.preset = presets[quick ? 2 : p] };
			if (!run(&rows[n], quick ? 40 : PICTURES)) {
				fprintf(stderr, "bench-h264: %ux%u %s failed\n", rows[n].width,
					rows[n].height, rows[n].preset);
				return 1;
			}
			n++;
		}
	}
	if (json) {
		printf("{\"fps\": %d, \"bitrate_bps\": 8000000, \"rows\": [", FPS);
		for (size_t i = 0; i < n; i++) {
			const struct row *r = &rows[i];
			printf("%s{\"width\": %u, \"height\": %u, \"preset\": \"%s\", "
				"\"encode_ms_p50\": %.2f, \"encode_ms_p99\": %.2f, \"decode_ms_p50\": %.2f, "
				"\"decode_ms_p99\": %.2f, \"bytes_per_picture\": %.0f, \"psnr_y_db\": %.2f, "
				"\"encoder_pss_kb\": %ld, \"encoder_rss_kb\": %ld}", i ? ", " : "", r->width,
				r->height, r->preset, r->enc_p50, r->enc_p99, r->dec_p50, r->dec_p99,
				r->bytes, r->psnr, r->pss_kb, r->rss_kb);
		}
		printf("]}\n");
		return 0;
	}
	printf("H.264, moving scene, %d fps, 8 Mbit/s; decoder: software, 2 threads\n", FPS);
	printf("%-10s %-10s %8s %8s %8s %8s %9s %7s %8s %8s\n", "size", "preset", "enc p50",
		"enc p99", "dec p50", "dec p99", "bytes/pic", "PSNR-Y", "enc PSS", "enc RSS");
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		char size[16];
		snprintf(size, sizeof(size), "%ux%u", r->width, r->height);
		printf("%-10s %-10s %5.2f ms %5.2f ms %5.2f ms %5.2f ms %9.0f %4.1f dB %5.1f MB %5.1f MB\n",
			size, r->preset, r->enc_p50, r->enc_p99, r->dec_p50, r->dec_p99, r->bytes,
			r->psnr, r->pss_kb / 1024.0, r->rss_kb / 1024.0);
	}
	return 0;
}
