/*
 * Wong and Seltzer's memory test, the cgroup policy off and on: a memory
 * hog in a session's background class pushes a resting terminal towards
 * swap for a while, then one keystroke; the time until the terminal has
 * answered, over several runs.
 *
 * The terminal is a stand-in for one (this runs where there is no Wayland:
 * the VM of tests/vm, which has cgroup v2 with the memory controller and a
 * zram swap device): 64 MB of its own, written once, then it sleeps on a
 * pipe; a key makes it read every page of it (a redraw touches what it
 * has) and answer. Off: terminal and hog in the same class; on: the
 * terminal in interactive (memory.low 96 MB), the hog in background; and
 * with no hog at all, what a key costs there anyway.
 *
 *   bench-memory [--json] [--quick]      (root, cgroup v2, swap)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cgroup.h"
#include "bench-options.h"

#define TERMINAL_MB 64
#define PAGE 4096
#define MAX_RUNS 10

static struct slim_cgroup_fs fs;
static char rel[SLIM_CGROUP_PATH];

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t meminfo_kb(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[128];
	uint64_t v = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, strlen(key)) == 0) {
			v = strtoull(line + strlen(key), NULL, 10);
		}
	}
	if (f) {
		fclose(f);
	}
	return v;
}

/* The terminal: its memory written, then a page-by-page read per key. */
static void terminal(enum slim_cgroup_class class, int keys, int answers)
{
	slim_cgroup_move(&fs, rel, class, 0);
	size_t size = (size_t)TERMINAL_MB << 20;
	volatile uint8_t *mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		_exit(1);
	}
	for (size_t i = 0; i < size; i += PAGE) {
		mem[i] = (uint8_t)i;
	}
	char c = 'r';
	if (write(answers, &c, 1) != 1) {
		_exit(1);
	}
	while (read(keys, &c, 1) == 1) {
		unsigned sum = 0;
		for (size_t i = 0; i < size; i += PAGE) {
			sum += mem[i];
		}
		c = (char)sum;
		if (write(answers, &c, 1) != 1) {
			_exit(1);
		}
	}
	_exit(0);
}

/* The hog: more than the machine has, written round and round. */
static void hog(size_t size)
{
	slim_cgroup_move(&fs, rel, SLIM_CGROUP_BACKGROUND, 0);
	uint8_t *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		_exit(1);
	}
	for (unsigned round = 0;; round++) {
		for (size_t i = 0; i < size; i += PAGE) {
			mem[i] = (uint8_t)round;
		}
	}
}

/* One run: the time from the key to the terminal's answer, µs. */
static bool run(bool policy, unsigned seconds, size_t hog_size, uint64_t *us)
{
	int keys[2], answers[2];
	if (pipe(keys) != 0 || pipe(answers) != 0) {
		return false;
	}
	pid_t term = fork();
	if (term == 0) {
		close(keys[1]);
		close(answers[0]);
		terminal(policy ? SLIM_CGROUP_INTERACTIVE : SLIM_CGROUP_BACKGROUND, keys[0],
			answers[1]);
	}
	close(keys[0]);
	close(answers[1]);
	char c;
	bool ok = read(answers[0], &c, 1) == 1;
	pid_t h = hog_size ? fork() : -1;
	if (h == 0) {
		hog(hog_size);
	}
	/* the terminal rests while the hog takes the memory */
	sleep(seconds);
	uint64_t t0 = now_us();
	ok = ok && write(keys[1], "k", 1) == 1 && read(answers[0], &c, 1) == 1;
	*us = now_us() - t0;
	if (h > 0) {
		kill(h, SIGKILL);
		waitpid(h, NULL, 0);
	}
	close(keys[1]);
	waitpid(term, NULL, 0);
	close(answers[0]);
	return ok;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char *argv[])
{
	bool json, quick;
	if (!bench_options(argc, argv, &json, &quick)) {
		return 2;
	}
	char why[256];
	if (!slim_cgroup_fs_detect(&fs, "/sys/fs/cgroup", why, sizeof(why)) || fs.version != 2) {
		fprintf(stderr, "bench-memory: needs cgroup v2 (%s)\n", fs.version ? "v1" : why);
		return 77;
	}
	if (meminfo_kb("SwapTotal:") == 0) {
		fprintf(stderr, "bench-memory: needs swap\n");
		return 77;
	}
	struct slim_cgroup_policy policy;
	slim_cgroup_policy_defaults(&policy);
	policy.memory_low = 96ull << 20;
	slim_cgroup_path(rel, sizeof(rel), 1, 1);
	if (!slim_cgroup_session_create(&fs, &policy, rel, 0, 0, why, sizeof(why))) {
		fprintf(stderr, "bench-memory: %s\n", why);
		return 1;
	}
	unsigned runs = quick ? 1 : MAX_RUNS, seconds = quick ? 3 : 30;
	/* a fifth more than the machine has: what does not fit goes to swap */
	size_t hog_size = (size_t)(meminfo_kb("MemTotal:") * 6 / 5) << 10;
	/* no hog (what a key costs here anyway), the policy off, on */
	static const char *const names[3] = { "no hog", "off", "on" };
	uint64_t res[3][MAX_RUNS];
	for (unsigned r = 0; r < runs; r++) {
		for (int p = 0; p < 3; p++) {
			if (!run(p == 2, seconds, p ? hog_size : 0, &res[p][r])) {
				fprintf(stderr, "bench-memory: a run failed\n");
				return 1;
			}
			if (!json) {
				printf("run %u, %s: %.1f ms\n", r + 1, names[p], (double)res[p][r] / 1000);
				fflush(stdout);
			}
		}
	}
	double stat[3][3];
	for (int p = 0; p < 3; p++) {
		qsort(res[p], runs, sizeof(uint64_t), cmp_u64);
		double sum = 0;
		for (unsigned r = 0; r < runs; r++) {
			sum += (double)res[p][r];
		}
		stat[p][0] = (double)res[p][0] / 1000;
		stat[p][1] = sum / runs / 1000;
		stat[p][2] = (double)res[p][runs - 1] / 1000;
	}
	if (json) {
		printf("{\"runs\": %u, \"seconds\": %u, \"hog_mb\": %zu, \"terminal_mb\": %d",
			runs, seconds, hog_size >> 20, TERMINAL_MB);
		for (int p = 0; p < 3; p++) {
			const char *m = p == 0 ? "no_hog" : p == 1 ? "off" : "on";
			printf(", \"%s_min_ms\": %.1f, \"%s_mean_ms\": %.1f, \"%s_max_ms\": %.1f", m,
				stat[p][0], m, stat[p][1], m, stat[p][2]);
		}
		printf(", \"on_over_off_mean_ratio\": %.3f}\n",
			stat[1][1] > 0 ? stat[2][1] / stat[1][1] : 0);
	} else {
		printf("\nA key after %u s of a %zu MB hog (cf. Wong and Seltzer), %u runs, a "
			"%d MB terminal\n\n", seconds, hog_size >> 20, runs, TERMINAL_MB);
		printf("%-8s %9s %9s %9s\n", "", "min", "mean", "max");
		for (int p = 0; p < 3; p++) {
			printf("%-8s %6.1f ms %6.1f ms %6.1f ms\n", names[p], stat[p][0], stat[p][1],
				stat[p][2]);
		}
		printf("target with the policy on: under 50 ms: %s (%.2fx off)\n",
			stat[2][2] < 50 ? "ok" : "MISSED", stat[1][1] > 0 ? stat[2][1] / stat[1][1] : 0);
	}
	slim_cgroup_session_remove(&fs, rel);
	return 0;
}
