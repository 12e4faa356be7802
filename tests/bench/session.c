#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "session.h"
#include "slim-log.h"

uint64_t bench_now_us(void)
{
	return slim_now_us();
}

int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void send_upstream(void *data, const uint8_t *buf, size_t len)
{
	struct bench_session *s = data;
	send(s->fd, buf, len, MSG_DONTWAIT);
}

static void presented(void *data, uint32_t frame, uint64_t applied_us)
{
	struct bench_session *s = data;
	s->current.id = frame;
	s->current.applied_us = applied_us;
	s->last = s->current;
	s->current = (struct bench_frame){ 0 };
	s->presented++;
}

static const struct slim_console_events events = { .presented = presented };

/* A free UDP port on loopback (the kernel picks it; it stays free long enough). */
static uint16_t free_port(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
			getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
		return 0;
	}
	close(fd);
	return ntohs(a.sin_port);
}

bool bench_read_line(int fd, char *line, size_t size, int timeout_ms)
{
	size_t n = 0;
	uint64_t deadline = bench_now_us() + (uint64_t)timeout_ms * 1000;
	while (n + 1 < size) {
		int left = (int)(((int64_t)deadline - (int64_t)bench_now_us()) / 1000);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (left <= 0 || poll(&p, 1, left) <= 0) {
			return false;
		}
		char c;
		if (read(fd, &c, 1) != 1) {
			return false;
		}
		if (c == '\n') {
			break;
		}
		line[n++] = c;
	}
	line[n] = '\0';
	return true;
}

/* The compositor says where its Wayland socket is once it listens: wait for that line. */
static bool wait_for_socket(struct bench_session *s, int err_fd)
{
	char line[512];
	while (bench_read_line(err_fd, line, sizeof(line), 10000)) {
		const char *key = strstr(line, "WAYLAND_DISPLAY=");
		if (key) {
			snprintf(s->wayland_display, sizeof(s->wayland_display), "%s", key + 16);
			return true;
		}
	}
	return false;
}

bool bench_session_start_detached(struct bench_session *s, const char *slimland,
		uint32_t width, uint32_t height)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->width = width;
	s->height = height;
	snprintf(s->runtime_dir, sizeof(s->runtime_dir), "/tmp/slim-bench-XXXXXX");
	uint16_t port = free_port();
	s->port = port;
	if (!mkdtemp(s->runtime_dir) || port == 0) {
		return false;
	}
	setenv("XDG_RUNTIME_DIR", s->runtime_dir, true);
	char listen[64];
	snprintf(listen, sizeof(listen), "127.0.0.1:%u", port);

	int err[2];
	if (pipe2(err, O_CLOEXEC) != 0) {
		return false;
	}
	s->compositor = fork();
	if (s->compositor == 0) {
		dup2(err[1], STDERR_FILENO);
		execl(slimland, slimland, "--listen", listen, "--transport", "clear", (char *)NULL);
		_exit(127);
	}
	close(err[1]);
	bool ok = s->compositor > 0 && wait_for_socket(s, err[0]);
	/* Keep reading the compositor's log into nothing, or it would block on a full pipe. */
	if (ok && fork() == 0) {
		char buf[4096];
		while (read(err[0], buf, sizeof(buf)) > 0) {
		}
		_exit(0);
	}
	close(err[0]);
	if (!ok) {
		return false;
	}
	setenv("WAYLAND_DISPLAY", s->wayland_display, true);
	return true;
}

bool bench_session_attach(struct bench_session *s)
{
	s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(s->port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int size = 8 << 20;
	setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (s->fd < 0 || connect(s->fd, (struct sockaddr *)&to, sizeof(to)) != 0) {
		return false;
	}
	s->backend = slim_headless_backend_create();
	s->core = slim_console_core_create(s->width, s->height, SLIM_DEFAULT_MTU, s->backend,
		send_upstream, s);
	if (!s->core) {
		return false;
	}
	slim_console_core_set_events(s->core, &events, s);
	uint32_t assoc = 0;
	while (assoc == 0) {
		if (getrandom(&assoc, sizeof(assoc), 0) != sizeof(assoc)) {
			return false;
		}
	}
	slim_console_core_hello(s->core, "bench", assoc);
	/* The first frame is the whole screen at our size. */
	return bench_session_wait_frame(s, 10000);
}

bool bench_session_start(struct bench_session *s, const char *slimland, uint32_t width,
		uint32_t height)
{
	return bench_session_start_detached(s, slimland, width, height) &&
		bench_session_attach(s);
}

void bench_session_stop(struct bench_session *s)
{
	if (s->compositor > 0) {
		kill(s->compositor, SIGTERM);
		waitpid(s->compositor, NULL, 0);
	}
	slim_console_core_destroy(s->core);
	if (s->backend) {
		s->backend->impl->destroy(s->backend);
	}
	if (s->fd >= 0) {
		close(s->fd);
	}
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", s->runtime_dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "cannot remove %s\n", s->runtime_dir);
	}
}

pid_t bench_session_client(struct bench_session *s, char *const argv[], int *out)
{
	int p[2] = { -1, -1 };
	if (out && pipe2(p, O_CLOEXEC) != 0) {
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		if (out) {
			dup2(p[1], STDOUT_FILENO);
		}
		int null = open("/dev/null", O_WRONLY);
		dup2(null, STDERR_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (out) {
		close(p[1]);
		*out = p[0];
	}
	return pid;
}

/*
 * Peeks at the server's timestamps in FRAME_END before the core applies the
 * datagram. A datagram that only acknowledges input is no part of a frame.
 */
static void note_datagram(struct bench_session *s, const uint8_t *buf, size_t len)
{
	uint64_t now = bench_now_us();
	s->bytes_received += len;
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	if (slim_reader_init(&r, &hdr, buf, len, false, (uint16_t)s->width,
			(uint16_t)s->height) != SLIM_OK) {
		return;
	}
	bool pixels = false;
	while (slim_reader_next(&r, &cmd) == SLIM_OK && cmd.type) {
		pixels |= cmd.type != SLIM_CMD_INPUT_ACK;
		if (cmd.type == SLIM_CMD_FRAME_END) {
			s->current.encode_us = cmd.frame_end.damage_us;
			s->current.encoded_us = cmd.frame_end.encoded_us;
		}
	}
	if (pixels && s->current.first_rx_us == 0) {
		s->current.first_rx_us = now;
	}
	s->current.bytes += len;
}

bool bench_session_wait_frame(struct bench_session *s, int timeout_ms)
{
	uint32_t before = s->presented;
	uint64_t deadline = bench_now_us() + (uint64_t)timeout_ms * 1000;
	static uint8_t buf[SLIM_MAX_MTU];
	while (s->presented == before) {
		int left = (int)(((int64_t)deadline - (int64_t)bench_now_us()) / 1000);
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		if (left <= 0 || poll(&p, 1, left) <= 0) {
			return false;
		}
		ssize_t len;
		while ((len = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
			note_datagram(s, buf, (size_t)len);
			slim_console_core_receive(s->core, buf, (size_t)len);
		}
	}
	return true;
}

void bench_session_settle(struct bench_session *s, int quiet_ms, int max_ms)
{
	uint64_t end = bench_now_us() + (uint64_t)max_ms * 1000;
	while (bench_now_us() < end && bench_session_wait_frame(s, quiet_ms)) {
	}
}

void bench_session_input(struct bench_session *s, const struct slim_wire_input *ev, size_t n)
{
	slim_console_core_send_input(s->core, ev, n);
}

void bench_session_key(struct bench_session *s, uint32_t code, bool down)
{
	struct slim_wire_input ev = { .kind = SLIM_INPUT_KEY, .code = (uint16_t)code,
		.value = down };
	bench_session_input(s, &ev, 1);
}

void bench_session_pointer(struct bench_session *s, double x, double y)
{
	struct slim_wire_input ev[2] = {
		{ .kind = SLIM_INPUT_MOTION_ABS, .x = (int32_t)(x * 256), .y = (int32_t)(y * 256) },
		{ .kind = SLIM_INPUT_FRAME },
	};
	bench_session_input(s, ev, 2);
}

void bench_session_button(struct bench_session *s, uint32_t button, bool down)
{
	struct slim_wire_input ev[2] = {
		{ .kind = SLIM_INPUT_BUTTON, .code = (uint16_t)button, .value = down },
		{ .kind = SLIM_INPUT_FRAME },
	};
	bench_session_input(s, ev, 2);
}

bool bench_options(int argc, char *argv[], bool *json, bool *quick)
{
	*json = *quick = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			*json = true;
		} else if (strcmp(argv[i], "--quick") == 0) {
			*quick = true;
		} else {
			fprintf(stderr, "usage: %s [--json] [--quick]\n", argv[0]);
			return false;
		}
	}
	return true;
}
