/*
 * What an animating client costs the shared server with and without a
 * console watching: weston-simple-shm (a window redrawn every frame) in a
 * session, first with no console attached, then with this process as its
 * console. Detached, frames only trickle (src/compositor/output.c), so
 * the compositor and the client should cost next to nothing; attached,
 * the console's ACKs pace them, up to 120 frames a second.
 *
 * Then the client stopped (SIGSTOP), the console still attached: nothing
 * changes, and the compositor should not wake at all (its screen has no
 * frame clock: src/compositor/screen.c); this console sends no keepalives,
 * so every wake-up counted there is the compositor's own.
 *
 * CPU time is read from /proc for the compositor and the client over the
 * same wall-clock window; wake-ups are the compositor's main thread's
 * voluntary context switches.
 *
 *   bench-detached [--json] [--quick]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "session.h"

struct phase {
	double fps; /* frames the console presented a second; 0 when detached */
	double compositor_ms, client_ms; /* CPU milliseconds a second */
	double wakeups; /* the compositor's main thread, a second */
};

static double cpu_ms(pid_t pid)
{
	return (double)bench_process_cpu_us(pid) / 1000.0;
}

/* Voluntary context switches of a process's main thread: its wake-ups. */
static double wakeups(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)pid);
	FILE *f = fopen(path, "re");
	unsigned long long n = 0;
	while (f && fgets(line, sizeof(line), f) &&
			sscanf(line, "voluntary_ctxt_switches: %llu", &n) != 1) {
	}
	if (f) {
		fclose(f);
	}
	return (double)n;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/*
 * Measures for `ms` milliseconds: attached, the console receives and
 * acknowledges frames all the while; detached, nothing is received.
 */
static struct phase measure(struct bench_session *s, pid_t client, int ms, bool attached)
{
	double c0 = cpu_ms(s->compositor), k0 = cpu_ms(client), w0 = wakeups(s->compositor);
	uint32_t f0 = s->presented;
	uint64_t t0 = bench_now_us(), end = t0 + (uint64_t)ms * 1000;
	if (attached) {
		while (bench_now_us() < end) {
			bench_session_wait_frame(s, (int)((end - bench_now_us()) / 1000) + 1);
		}
	} else {
		sleep_ms(ms);
	}
	double secs = (double)(bench_now_us() - t0) / 1e6;
	return (struct phase){
		.fps = attached ? (s->presented - f0) / secs : 0,
		.compositor_ms = (cpu_ms(s->compositor) - c0) / secs,
		.client_ms = (cpu_ms(client) - k0) / secs,
		.wakeups = (wakeups(s->compositor) - w0) / secs,
	};
}

int main(int argc, char *argv[])
{
	bool json, quick;
	if (!bench_options(argc, argv, &json, &quick)) {
		return 2;
	}
	int ms = quick ? 1000 : 5000;
	struct bench_session s;
	if (!bench_session_start_detached(&s, SLIMLAND_BIN, 1280, 720, BENCH_LINK_ATTACH)) {
		fprintf(stderr, "cannot start slimland\n");
		bench_session_stop(&s);
		return 1;
	}
	char *client_argv[] = { "weston-simple-shm", NULL };
	pid_t client = bench_session_client(&s, client_argv, NULL);
	/* a moment for the client to map its window and start animating */
	sleep_ms(500);
	struct phase detached = measure(&s, client, ms, false);
	struct phase attached = { 0 }, idle = { 0 };
	bool ok = bench_session_attach(&s);
	if (ok) {
		attached = measure(&s, client, ms, true);
		kill(client, SIGSTOP);
		bench_session_settle(&s, 300, 3000);
		idle = measure(&s, client, ms, true);
		kill(client, SIGCONT);
	}
	kill(client, SIGTERM);
	waitpid(client, NULL, 0);
	bench_session_stop(&s);
	if (!ok) {
		fprintf(stderr, "the session or weston-simple-shm did not run\n");
		return 1;
	}
	if (json) {
		printf("{\"attached_fps\": %.1f, \"attached_compositor_cpu_ms_per_s\": %.1f, "
			"\"attached_client_cpu_ms_per_s\": %.1f, "
			"\"detached_compositor_cpu_ms_per_s\": %.1f, "
			"\"detached_client_cpu_ms_per_s\": %.1f, "
			"\"idle_compositor_cpu_ms_per_s\": %.3f, "
			"\"idle_compositor_wakeups_per_s\": %.1f}\n", attached.fps,
			attached.compositor_ms, attached.client_ms, detached.compositor_ms,
			detached.client_ms, idle.compositor_ms, idle.wakeups);
		return 0;
	}
	printf("weston-simple-shm animating, 1280x720, %d s each\n\n", ms / 1000);
	printf("%-24s %10s %20s %16s %16s\n", "console", "frames/s", "compositor CPU ms/s",
		"wake-ups/s", "client CPU ms/s");
	printf("%-24s %10.1f %20.1f %16.1f %16.1f\n", "attached", attached.fps,
		attached.compositor_ms, attached.wakeups, attached.client_ms);
	printf("%-24s %10s %20.1f %16.1f %16.1f\n", "detached", "-", detached.compositor_ms,
		detached.wakeups, detached.client_ms);
	printf("%-24s %10.1f %20.3f %16.1f %16s\n", "attached, client stopped", idle.fps,
		idle.compositor_ms, idle.wakeups, "-");
	printf("\ntarget with nothing changing: at most 1 ms of CPU a second, no wake-ups: %s\n",
		idle.compositor_ms <= 1.0 && idle.wakeups < 1 ? "met" : "missed");
	return 0;
}
