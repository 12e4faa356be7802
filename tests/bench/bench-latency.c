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
 * Each client runs three times at once, keys going to each in turn: over
 * the clear transport, and over DTLS (the console's only transport off
 * loopback) as a session manager's console (a per-attach key) and as a
 * standalone session's (its pairing key). The ratios to the clear one are
 * what the secure transport costs a keystroke, whatever the machine. A
 * fourth runs clear on a console with two heads (the keys' window on the
 * first): the ratio to the one-head figure is what a second monitor costs.
 * A fifth is a session manager's console like the second, with a second
 * console watching it (helpdesk shadowing: its own link, encoder and
 * pacer, fed from the same frames): its ratio to the second is what a
 * watching console costs the user's keystrokes.
 *
 *   bench-latency [--json] [--quick] [--keys N]
 */
#include <linux/input-event-codes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "session.h"

#define MAX_KEYS 10000
#define KEY_INTERVAL_MS 12
#define LINKS 5

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

/* The clear transport first: the others' ratios are to it. */
static const enum bench_link links[LINKS] = {
	BENCH_LINK_CLEAR, BENCH_LINK_ATTACH, BENCH_LINK_PAIRING, BENCH_LINK_CLEAR,
	BENCH_LINK_ATTACH,
};
/* The fourth one's console has two 1280x720 heads side by side. */
#define TWO_HEADS 3
/* The fifth is watched by a second console; its ratio is to the second's (attach). */
#define SHADOWED 4
#define ATTACH 1

static const char *member_name(int m)
{
	return m == TWO_HEADS ? "2heads" : m == SHADOWED ? "shadowed" : bench_link_name(links[m]);
}

static struct slim_desk two_heads(void)
{
	struct slim_desk desk;
	slim_desk_single(&desk, 1280, 720);
	desk.n_heads = 2;
	desk.heads[1] = desk.heads[0];
	desk.heads[1].x = 1280;
	desk.heads[1].primary = false;
	snprintf(desk.heads[1].name, sizeof(desk.heads[1].name), "CONSOLE-2");
	return desk;
}

/* [link, as in links][part] */
static uint64_t *samples[LINKS][PARTS];

static uint64_t percentile(uint64_t *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), bench_cmp_u64);
	return n ? v[(size_t)(p * (double)(n - 1))] : 0;
}

/* A session over `link` with `argv` as its client, its window drawn. */
static bool start(struct bench_session *s, pid_t *client, const char *slimland,
		enum bench_link link, const struct slim_desk *desk, char *const argv[],
		bool wait_ready)
{
	*client = -1;
	bool started = bench_session_start_detached(s, slimland, 1280, 720, link);
	s->desk = desk;
	if (!started || !bench_session_attach(s)) {
		fprintf(stderr, "bench-latency: cannot start a session\n");
		return false;
	}
	int out = -1;
	*client = bench_session_client(s, argv, wait_ready ? &out : NULL);
	char line[64];
	bool ok = *client > 0 && (!wait_ready || bench_read_line(out, line, sizeof(line), 10000));
	if (out >= 0) {
		close(out);
	}
	if (!ok) {
		fprintf(stderr, "bench-latency: %s did not start\n", argv[0]);
		return false;
	}
	/* The window is up when the screen stops changing. */
	bench_session_settle(s, 300, 10000);
	return true;
}

static void stop(struct bench_session *s, pid_t client)
{
	if (client > 0) {
		kill(client, SIGTERM);
		waitpid(client, NULL, 0);
	}
	bench_session_stop(s);
}

/*
 * Every link at once, a session each, keys going to each in turn: whatever
 * the machine does meanwhile (its clock, its other work) falls on all
 * alike, so their ratios hold even where the absolute figures wander.
 */
static bool run_client(const char *slimland, char *const argv[], bool wait_ready,
		bool alternate, size_t keys, struct client_result res[LINKS])
{
	struct bench_session s[LINKS], shadow;
	pid_t client[LINKS];
	bool ok = true;
	struct slim_desk desk = two_heads();
	for (int m = 0; m < LINKS; m++) {
		memset(&s[m], 0, sizeof(s[m]));
		client[m] = -1;
		ok = ok && start(&s[m], &client[m], slimland, links[m],
			m == TWO_HEADS ? &desk : NULL, argv, wait_ready);
	}
	memset(&shadow, 0, sizeof(shadow));
	shadow.fd = shadow.control = -1;
	if (ok && !bench_session_shadow(&s[SHADOWED], &shadow)) {
		fprintf(stderr, "bench-latency: no console watches the session\n");
		ok = false;
	}
	if (ok) {
		bench_session_settle(&shadow, 300, 10000);
	}
	for (size_t i = 0; ok && i < keys + 20; i++) {
		uint32_t code = alternate && (i & 1) ? KEY_BACKSPACE : KEY_A;
		for (int m = 0; m < LINKS; m++) {
			uint64_t t0 = bench_now_us();
			bench_session_key(&s[m], code, true);
			bool got = bench_session_wait_frame(&s[m], 2000);
			bench_session_key(&s[m], code, false);
			/* Until the next key is due, keep receiving whatever comes. */
			int rest = KEY_INTERVAL_MS - (int)((bench_now_us() - t0) / 1000);
			if (rest > 0) {
				bench_session_settle(&s[m], rest, rest);
			}
			if (m == SHADOWED) {
				/* the watching console takes what it was sent, after the user's */
				bench_session_settle(&shadow, 1, 4);
			}
			if (i < 20) {
				continue; /* warm-up */
			}
			struct client_result *r = &res[m];
			if (!got) {
				r->missed++;
				continue;
			}
			const struct bench_frame *f = &s[m].last;
			size_t k = r->n++;
			samples[m][TOTAL][k] = f->applied_us - t0;
			samples[m][COMPOSITOR][k] = f->encode_us > t0 ? f->encode_us - t0 : 0;
			samples[m][ENCODER][k] = f->encoded_us - f->encode_us;
			samples[m][NETWORK][k] = f->first_rx_us > f->encoded_us ?
				f->first_rx_us - f->encoded_us : 0;
			samples[m][CONSOLE][k] = f->applied_us - f->first_rx_us;
		}
	}
	for (int m = 0; m < LINKS; m++) {
		for (int p = 0; p < PARTS; p++) {
			res[m].p50[p] = percentile(samples[m][p], res[m].n, 0.5);
			res[m].p99[p] = percentile(samples[m][p], res[m].n, 0.99);
		}
		stop(&s[m], client[m]);
		ok = ok && res[m].n > 0;
	}
	bench_session_stop(&shadow);
	return ok;
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
	for (int m = 0; m < LINKS; m++) {
		for (int p = 0; p < PARTS; p++) {
			samples[m][p] = calloc(MAX_KEYS + 20, sizeof(uint64_t));
		}
	}
	char *echo[] = { SLIM_ECHO_BIN, NULL };
	/* cat in canonical mode: the tty echoes 'a', and BackSpace erases it again. */
	char *foot[] = { "foot", "-o", "cursor.blink=no", "sh", "-c", "exec cat >/dev/null", NULL };
	/* [client][link, as in links] */
	struct client_result res[2][LINKS];
	for (int m = 0; m < LINKS; m++) {
		res[0][m] = (struct client_result){ .name = "slim-echo", .target_p50_us = 300,
			.sunray_p50_us = 550 };
		res[1][m] = (struct client_result){ .name = "foot", .target_p50_us = 3000,
			.sunray_p50_us = 3830 };
	}
	bool ok = run_client(SLIMLAND_BIN, echo, true, false, keys, res[0]);
	ok = run_client(SLIMLAND_BIN, foot, false, true, keys, res[1]) && ok;

	if (json) {
		printf("{\"keys\": %zu", keys);
		for (int c = 0; c < 2; c++) {
			const char *n = c ? "foot" : "echo";
			for (int m = 0; m < LINKS; m++) {
				const struct client_result *r = &res[c][m];
				const char *t = member_name(m);
				for (int p = 0; p < PARTS; p++) {
					printf(", \"%s_%s_%s_p50_us\": %llu, \"%s_%s_%s_p99_us\": %llu",
						n, t, part_keys[p], (unsigned long long)r->p50[p],
						n, t, part_keys[p], (unsigned long long)r->p99[p]);
				}
				printf(", \"%s_%s_missed_frames\": %zu", n, t, r->missed);
				if (m > 0) {
					printf(", \"%s_%s_over_clear_p50_ratio\": %.3f", n, t,
						ratio(r->p50[TOTAL], res[c][0].p50[TOTAL]));
				}
				if (m == SHADOWED) {
					printf(", \"%s_shadowed_over_attach_p50_ratio\": %.3f", n,
						ratio(r->p50[TOTAL], res[c][ATTACH].p50[TOTAL]));
				}
			}
		}
		printf("}\n");
	} else {
		printf("Keystroke to pixels on the console, %zu keys %d ms apart, loopback "
			"(cf. SLIM 4.1)\n\n", keys, KEY_INTERVAL_MS);
		printf("%-10s %-8s %9s %9s  | %10s %9s %9s %9s | %6s | %9s %9s\n", "client",
			"link", "p50", "p99", "comp+cli", "encoder", "network", "console", "/clear",
			"Sun Ray", "target");
		size_t missed = 0;
		for (int c = 0; c < 2; c++) {
			for (int m = 0; m < LINKS; m++) {
				const struct client_result *r = &res[c][m];
				missed += r->missed;
				printf("%-10s %-8s %6llu us %6llu us  | %7llu us %6llu us %6llu us "
					"%6llu us | %6.2f | %6.0f us %6.0f us %s\n",
					r->name, member_name(m),
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
		printf("\nlink: clear; attach, DTLS with a session manager's per-attach key; "
			"pairing, DTLS\nwith a standalone session's pairing key; 2heads, clear to a "
			"console with two\n1280x720 heads; shadowed, attach with a second console "
			"watching (target: p50 within\n1.2x attach's). parts are medians "
			"of each part; /clear is\np50 over the clear link's p50 in this run. Frames "
			"missed (none within 2 s): %zu\n", missed);
		for (int c = 0; c < 2; c++) {
			double q = ratio(res[c][SHADOWED].p50[TOTAL], res[c][ATTACH].p50[TOTAL]);
			printf("%s: shadowed/attach p50 %.2f (target 1.20) %s\n", res[c][0].name, q,
				q <= 1.2 ? "ok" : "MISSED");
		}
	}
	return ok ? 0 : 1;
}
