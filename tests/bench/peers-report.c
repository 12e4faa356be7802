/*
 * bench-peers' report: a table for people, or one JSON object whose keys
 * carry their units (bytes, cpu_ms, p50_us, bytes_per_s). A viewer that
 * could not run says why where its figures would be (null in JSON).
 */
#include <stdio.h>
#include <stdlib.h>
#include "peers.h"

const char *const peers_viewer_names[VIEWERS] = {
	"slimland", "wayvnc ZRLE", "wayvnc Tight", "waypipe lz4",
};
const unsigned peers_sweep_full[SWEEP_MAX] = { 1, 2, 5, 10, 20, 50, 100, 200 };
const unsigned peers_sweep_quick[3] = { 1, 10, 50 };

static const char *const viewer_keys[VIEWERS] = {
	"slimland", "wayvnc_zrle", "wayvnc_tight", "waypipe_lz4",
};

static const char *const row_keys[ROWS] = {
	"typing", "seq", "drag", "menus", "idle", "typing_75wpm", "typing_100wpm", "pgdn",
	"ticker",
};
static const char *const row_names[ROWS] = {
	"typing prose (foot)", "seq 1 4000 (foot)", "drag a window 400 px",
	"gtk3-demo menus", "idle", "typing at 75 wpm", "typing at 100 wpm",
	"PgDn in less", "banner + ticker",
};

static uint64_t percentile(uint64_t *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), bench_cmp_u64);
	return n ? v[(size_t)(p * (double)(n - 1))] : 0;
}

/* Why a viewer has no figures, or NULL if it has them. */
static const char *viewer_state(const struct peers_viewer *v)
{
	return v->missing ? "not installed" : v->failed ? "failed" : NULL;
}

/* Bytes sent upstream per key: [0] slimland's console, [1] the ZRLE viewer. */
static void upstream_per_key(const struct peers_bench *b, double up[2])
{
	for (int via = 0; via < 2; via++) {
		up[via] = b->upstream_keys[via] ?
			(double)b->upstream_bytes[via] / (double)b->upstream_keys[via] : 0;
	}
}

static void print_json(struct peers_bench *b, const uint64_t p50[2], const uint64_t p99[2])
{
	printf("{\"width\": 1280, \"height\": 720");
	for (int i = 0; i < VIEWERS; i++) {
		const char *state = viewer_state(&b->v[i]);
		printf(", \"%s_status\": \"%s\"", viewer_keys[i], state ? state : "ran");
	}
	for (int r = 0; r < ROWS; r++) {
		for (int i = 0; i < VIEWERS; i++) {
			const struct peers_cell *c = &b->cells[r][i];
			const char *k = viewer_keys[i];
			if (!c->ran) {
				printf(", \"%s_%s_bytes\": null, \"%s_%s_cpu_ms\": null", row_keys[r], k,
					row_keys[r], k);
				continue;
			}
			printf(", \"%s_%s_bytes\": %llu, \"%s_%s_cpu_ms\": %.1f, \"%s_%s_ms\": %.0f",
				row_keys[r], k, (unsigned long long)c->bytes, row_keys[r], k,
				(double)c->cpu_us / 1000, row_keys[r], k, (double)c->us / 1000);
			if (i == VIEWER_ZRLE || i == VIEWER_TIGHT) {
				printf(", \"%s_%s_compositor_cpu_ms\": %.1f", row_keys[r], k,
					(double)c->compositor_us / 1000);
			}
		}
	}
	for (int via = 0; via < 2; via++) {
		const char *k = viewer_keys[via];
		printf(", \"latency_%s_p50_us\": %llu, \"latency_%s_p99_us\": %llu, "
			"\"latency_%s_keys\": %zu, \"latency_%s_missed\": %zu", k,
			(unsigned long long)p50[via], k, (unsigned long long)p99[via], k,
			b->latency_n[via], k, b->latency_missed[via]);
	}
	printf(", \"latency_wayvnc_over_slimland_p50_ratio\": %.3f",
		p50[0] ? (double)p50[1] / (double)p50[0] : 0);
	double up[2];
	upstream_per_key(b, up);
	printf(", \"upstream_slimland_bytes_per_key\": %.1f, \"upstream_wayvnc_zrle_bytes_per_key\": "
		"%.1f, \"upstream_slimland_over_wayvnc_ratio\": %.3f", up[0], up[1],
		up[1] > 0 ? up[0] / up[1] : 0);
	const unsigned *loops = b->quick ? peers_sweep_quick : peers_sweep_full;
	for (unsigned i = 0; i < b->sweep_n; i++) {
		printf(", \"sweep_slimland_loop_%u_bytes_per_s\": %.0f", loops[i],
			b->sweep_bytes_per_s[i]);
	}
	printf("}\n");
}

static void print_cell(const struct peers_bench *b, enum row r, int i, bool cpu)
{
	const struct peers_cell *c = &b->cells[r][i];
	const char *state = viewer_state(&b->v[i]);
	if (!c->ran) {
		printf(" %13s", state ? state : "-");
	} else if (cpu) {
		printf(" %13.1f", (double)c->cpu_us / 1000);
	} else {
		printf(" %13llu", (unsigned long long)c->bytes);
	}
}

static void print_table(struct peers_bench *b, const uint64_t p50[2], const uint64_t p99[2])
{
	for (int cpu = 0; cpu < 2; cpu++) {
		printf(cpu ? "\nServer CPU, ms (slimland: the compositor; wayvnc: wayvnc and the "
			"compositor;\nwaypipe: its server side)\n\n" :
			"One slimland session, 1280x720, the same work seen by each viewer: bytes "
			"received\n\n");
		printf("%-26s", "workload");
		for (int i = 0; i < VIEWERS; i++) {
			printf(" %13s", peers_viewer_names[i]);
		}
		printf("\n");
		for (int r = 0; r < ROWS; r++) {
			printf("%-26s", row_names[r]);
			for (int i = 0; i < VIEWERS; i++) {
				print_cell(b, r, i, cpu);
			}
			printf("\n");
		}
	}
	printf("\nKey to pixels in foot, the same run, keys %d ms apart: slimland p50 %llu us "
		"(p99 %llu, %zu keys),\nwayvnc ZRLE p50 %llu us (p99 %llu, %zu keys): "
		"wayvnc / slimland %.2f\n", LATENCY_INTERVAL_MS, (unsigned long long)p50[0],
		(unsigned long long)p99[0], b->latency_n[0], (unsigned long long)p50[1],
		(unsigned long long)p99[1], b->latency_n[1],
		p50[0] ? (double)p50[1] / (double)p50[0] : 0);
	double up[2];
	upstream_per_key(b, up);
	printf("\nUpstream per key in the same run, on the wire (IPv4 and UDP or TCP headers, "
		"the ACKs\nof what came included), each viewer typing its own keys: slimland %.0f "
		"bytes, wayvnc ZRLE's\nviewer %.0f bytes: slimland / wayvnc %.2f\n", up[0], up[1],
		up[1] > 0 ? up[0] / up[1] : 0);
	printf("\nCache sweep, slimland's console: a banner loop of N distinct frames at %d "
		"frames/s\n\n%10s %12s\n", TICKER_FPS, "N", "bytes/s");
	const unsigned *loops = b->quick ? peers_sweep_quick : peers_sweep_full;
	for (unsigned i = 0; i < b->sweep_n; i++) {
		printf("%10u %12.0f\n", loops[i], b->sweep_bytes_per_s[i]);
	}
	if (b->quick) {
		printf("\n--quick: 20 characters typed, 8 by each typist, 5 PgDn, the menus walked "
			"once,\n10 s idle, 1.5 s of ticker.\n");
	} else {
		printf("\n270 characters typed 12 ms apart, 60 by each typist, 20 PgDn, the menus "
			"walked 4 times,\n60 s idle, 10 s of ticker.\n");
	}
	printf("Idle is measured with every viewer attached at once; the other rows in a "
		"pass per viewer.\n");
}

void peers_report(struct peers_bench *b, bool json)
{
	uint64_t p50[2], p99[2];
	for (int via = 0; via < 2; via++) {
		p50[via] = percentile(b->latency[via], b->latency_n[via], 0.5);
		p99[via] = percentile(b->latency[via], b->latency_n[via], 0.99);
	}
	if (json) {
		print_json(b, p50, p99);
	} else {
		print_table(b, p50, p99);
	}
}
