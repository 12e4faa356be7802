/*
 * Keystroke to pixels, in the manner of SLIM section 4.1: the console
 * sends a key, the compositor hands it to a client, the client repaints,
 * the compositor renders and encodes, and the console applies the pixels.
 * Timed from the console sending the key to the console having presented
 * the frame, over loopback, for the smallest client (slim-echo, one 16x16
 * cell a key) and a terminal (foot, typing 'a' and BackSpace in turn).
 * Keys come every KEY_INTERVAL_MS, a fast typist's pace: each is measured
 * alone, as SLIM measured single keystrokes, rather than queued behind the
 * frame of the one before (the compositor draws at most 120 frames a second).
 *
 * Where the time goes, from timestamps on one clock (server and console
 * share the machine): compositor + client = key sent -> encoding starts;
 * encoder; network = encoding done -> first datagram received; console =
 * first datagram -> presented.
 *
 * Each client runs twice, over the clear transport and over DTLS (the
 * console's only transport off loopback), in the same run: their ratio is
 * what the secure transport costs a keystroke, whatever the machine.
 *
 *   bench-latency [--json] [--quick] [--keys N]
 */
#include <linux/input-event-codes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "session.h"

#define MAX_KEYS 10000
#define KEY_INTERVAL_MS 12

enum part { TOTAL, COMPOSITOR, ENCODER, NETWORK, CONSOLE, PARTS };

static const char *const part_keys[PARTS] = {
	"total", "compositor_client", "encoder", "network", "console",
};

struct client_result {
	const char *name;
	double target_p50_us, sunray_p50_us;
	size_t n, missed;
	uint64_t p50[PARTS], p99[PARTS];
};

static const enum slim_sec_mode modes[2] = { SLIM_SEC_CLEAR, SLIM_SEC_DTLS };

static uint64_t *samples[PARTS];

static uint64_t percentile(uint64_t *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), bench_cmp_u64);
	return n ? v[(size_t)(p * (double)(n - 1))] : 0;
}

static bool run_client(const char *slimland, enum slim_sec_mode mode, char *const argv[],
		bool wait_ready, bool alternate, size_t keys, struct client_result *res)
{
	struct bench_session s;
	if (!bench_session_start(&s, slimland, 1280, 720, mode)) {
		fprintf(stderr, "bench-latency: cannot start a session\n");
		bench_session_stop(&s);
		return false;
	}
	int out = -1;
	pid_t client = bench_session_client(&s, argv, wait_ready ? &out : NULL);
	char line[64];
	if (client < 0 || (wait_ready && !bench_read_line(out, line, sizeof(line), 10000))) {
		fprintf(stderr, "bench-latency: %s did not start\n", argv[0]);
		bench_session_stop(&s);
		return false;
	}
	/* The window is up when the screen stops changing. */
	bench_session_settle(&s, 300, 10000);
	for (size_t i = 0; i < keys + 20; i++) {
		uint32_t code = alternate && (i & 1) ? KEY_BACKSPACE : KEY_A;
		uint64_t t0 = bench_now_us();
		bench_session_key(&s, code, true);
		bool ok = bench_session_wait_frame(&s, 2000);
		bench_session_key(&s, code, false);
		/* Until the next key is due, keep receiving whatever comes. */
		int rest = KEY_INTERVAL_MS - (int)((bench_now_us() - t0) / 1000);
		if (rest > 0) {
			bench_session_settle(&s, rest, rest);
		}
		if (i < 20) {
			continue; /* warm-up */
		}
		if (!ok) {
			res->missed++;
			continue;
		}
		const struct bench_frame *f = &s.last;
		size_t k = res->n++;
		samples[TOTAL][k] = f->applied_us - t0;
		samples[COMPOSITOR][k] = f->encode_us > t0 ? f->encode_us - t0 : 0;
		samples[ENCODER][k] = f->encoded_us - f->encode_us;
		samples[NETWORK][k] = f->first_rx_us > f->encoded_us ? f->first_rx_us - f->encoded_us : 0;
		samples[CONSOLE][k] = f->applied_us - f->first_rx_us;
	}
	for (int p = 0; p < PARTS; p++) {
		res->p50[p] = percentile(samples[p], res->n, 0.5);
		res->p99[p] = percentile(samples[p], res->n, 0.99);
	}
	kill(client, SIGTERM);
	waitpid(client, NULL, 0);
	bench_session_stop(&s);
	return res->n > 0;
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

int main(int argc, char *argv[])
{
	bool json = false;
	size_t keys = 1000;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--quick") == 0) {
			keys = 50;
		} else if (strcmp(argv[i], "--keys") == 0 && i + 1 < argc) {
			keys = strtoul(argv[++i], NULL, 10);
			keys = keys < 1 ? 1 : keys > MAX_KEYS ? MAX_KEYS : keys;
		} else {
			fprintf(stderr, "usage: %s [--json] [--quick] [--keys N]\n", argv[0]);
			return 2;
		}
	}
	for (int p = 0; p < PARTS; p++) {
		samples[p] = calloc(MAX_KEYS + 20, sizeof(uint64_t));
	}
	char *echo[] = { SLIM_ECHO_BIN, NULL };
	/* cat in canonical mode: the tty echoes 'a', and BackSpace erases it again. */
	char *foot[] = { "foot", "-o", "cursor.blink=no", "sh", "-c", "exec cat >/dev/null", NULL };
	/* [client][transport, as in modes] */
	struct client_result res[2][2];
	bool ok = true;
	for (int m = 0; m < 2; m++) {
		res[0][m] = (struct client_result){ .name = "slim-echo", .target_p50_us = 300,
			.sunray_p50_us = 550 };
		res[1][m] = (struct client_result){ .name = "foot", .target_p50_us = 3000,
			.sunray_p50_us = 3830 };
		ok = run_client(SLIMLAND_BIN, modes[m], echo, true, false, keys, &res[0][m]) && ok;
		ok = run_client(SLIMLAND_BIN, modes[m], foot, false, true, keys, &res[1][m]) && ok;
	}

	if (json) {
		printf("{\"keys\": %zu", keys);
		for (int c = 0; c < 2; c++) {
			const char *n = c ? "foot" : "echo";
			for (int m = 0; m < 2; m++) {
				const struct client_result *r = &res[c][m];
				const char *t = slim_sec_mode_name(modes[m]);
				for (int p = 0; p < PARTS; p++) {
					printf(", \"%s_%s_%s_p50_us\": %llu, \"%s_%s_%s_p99_us\": %llu",
						n, t, part_keys[p], (unsigned long long)r->p50[p],
						n, t, part_keys[p], (unsigned long long)r->p99[p]);
				}
				printf(", \"%s_%s_missed_frames\": %zu", n, t, r->missed);
			}
			printf(", \"%s_dtls_over_clear_p50_ratio\": %.3f", n,
				ratio(res[c][1].p50[TOTAL], res[c][0].p50[TOTAL]));
		}
		printf("}\n");
	} else {
		printf("Keystroke to pixels on the console, %zu keys %d ms apart, loopback "
			"(cf. SLIM 4.1)\n\n", keys, KEY_INTERVAL_MS);
		printf("%-10s %-5s %9s %9s  | %10s %9s %9s %9s | %6s | %9s %9s\n", "client",
			"link", "p50", "p99", "comp+cli", "encoder", "network", "console", "/clear",
			"Sun Ray", "target");
		for (int c = 0; c < 2; c++) {
			for (int m = 0; m < 2; m++) {
				const struct client_result *r = &res[c][m];
				printf("%-10s %-5s %6llu us %6llu us  | %7llu us %6llu us %6llu us "
					"%6llu us | %6.2f | %6.0f us %6.0f us %s\n",
					r->name, slim_sec_mode_name(modes[m]),
					(unsigned long long)r->p50[TOTAL], (unsigned long long)r->p99[TOTAL],
					(unsigned long long)r->p50[COMPOSITOR],
					(unsigned long long)r->p50[ENCODER],
					(unsigned long long)r->p50[NETWORK],
					(unsigned long long)r->p50[CONSOLE],
					ratio(r->p50[TOTAL], res[c][0].p50[TOTAL]),
					r->sunray_p50_us, r->target_p50_us,
					r->p50[TOTAL] <= r->target_p50_us ? "ok" : "MISSED");
			}
		}
		printf("\nparts are medians of each part; /clear is p50 over the clear "
			"transport's p50 in this run; frames missed (no frame within 2 s): "
			"%zu %zu %zu %zu\n", res[0][0].missed, res[0][1].missed, res[1][0].missed,
			res[1][1].missed);
	}
	return ok ? 0 : 1;
}
