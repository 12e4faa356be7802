#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/input-event-codes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "session.h"
#include "slim-hex.h"
#include "slim-log.h"
#include "slim-net.h"
#include "slim-zstd.h"

#define BENCH_CONSOLE_ID "bench"
/* a second console watching a session (bench_session_shadow) */
#define BENCH_SHADOW_ID "bench-shadow"

uint32_t bench_keycode(char c)
{
	static const char *const rows[] = { "qwertyuiop", "asdfghjkl", "zxcvbnm" };
	static const uint32_t first[] = { KEY_Q, KEY_A, KEY_Z };
	for (int r = 0; r < 3; r++) {
		const char *p = strchr(rows[r], c);
		if (p) {
			return first[r] + (uint32_t)(p - rows[r]);
		}
	}
	if (c >= '1' && c <= '9') {
		return KEY_1 + (uint32_t)(c - '1');
	}
	switch (c) {
	case '0':
		return KEY_0;
	case ' ':
		return KEY_SPACE;
	case '\n':
		return KEY_ENTER;
	case '-':
		return KEY_MINUS;
	default:
		return KEY_DOT;
	}
}

uint16_t bench_free_port(int type)
{
	int fd = socket(AF_INET, type, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	uint16_t port = 0;
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
			getsockname(fd, (struct sockaddr *)&a, &len) == 0) {
		port = ntohs(a.sin_port);
	}
	if (fd >= 0) {
		close(fd);
	}
	return port;
}

uint64_t bench_now_us(void)
{
	return slim_now_us();
}

bool bench_wait_exit(pid_t pid, int timeout_ms)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		poll(&p, 1, timeout_ms);
		close(fd);
	}
	return waitpid(pid, NULL, WNOHANG) == pid;
}

int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The secure layer's records (or, clear, the datagrams) onto the socket. */
static void send_raw(void *data, const uint8_t *buf, size_t len)
{
	struct bench_session *s = data;
	if (send(s->fd, buf, len, MSG_DONTWAIT) >= 0) {
		s->wire_bytes_sent += len + BENCH_IPV4_UDP_HEADERS;
	}
}

/* The console core's datagrams into the secure layer. */
static void send_upstream(void *data, const uint8_t *buf, size_t len)
{
	struct bench_session *s = data;
	slim_sec_client_send(s->sec, buf, len);
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

static const char *const *compositor_args;
static const char *const *compositor_prefix;
static const char *listen_host = "127.0.0.1";
static struct {
	const struct slim_console_video_impl *impl;
	void *data;
	const struct slim_wire_codec *codecs;
	size_t n;
} video;

void bench_session_compositor_args(const char *const *args)
{
	compositor_args = args;
}

void bench_session_network(const char *const *prefix, const char *host)
{
	compositor_prefix = prefix;
	listen_host = host ? host : "127.0.0.1";
}

void bench_session_video(const struct slim_console_video_impl *impl, void *data,
		const struct slim_wire_codec *codecs, size_t n)
{
	video.impl = impl;
	video.data = data;
	video.codecs = codecs;
	video.n = impl ? n : 0;
}

const char *bench_link_name(enum bench_link link)
{
	static const char *const names[] = { "clear", "attach", "pairing" };
	return names[link];
}

bool bench_session_start_detached(struct bench_session *s, const char *slimland,
		uint32_t width, uint32_t height, enum bench_link link)
{
	memset(s, 0, sizeof(*s));
	s->link = link;
	s->fd = s->control = -1;
	s->width = width;
	s->height = height;
	snprintf(s->runtime_dir, sizeof(s->runtime_dir), "/tmp/slim-bench-XXXXXX");
	uint16_t port = bench_free_port(SOCK_DGRAM);
	s->port = port;
	if (!mkdtemp(s->runtime_dir) || port == 0) {
		return false;
	}
	setenv("XDG_RUNTIME_DIR", s->runtime_dir, true);
	char listen[64];
	snprintf(listen, sizeof(listen), "%s:%u", listen_host, port);

	int err[2];
	if (pipe2(err, O_CLOEXEC) != 0) {
		return false;
	}
	s->compositor = fork();
	if (s->compositor == 0) {
		dup2(err[1], STDERR_FILENO);
		const char *argv[24] = { 0 };
		size_t n = 0;
		for (size_t i = 0; compositor_prefix && compositor_prefix[i] && n < 8; i++) {
			argv[n++] = compositor_prefix[i];
		}
		const char *own[] = { slimland, "--listen", listen, "--transport",
			link == BENCH_LINK_CLEAR ? "clear" : "dtls" };
		for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
			argv[n++] = own[i];
		}
		if (link == BENCH_LINK_ATTACH) {
			argv[n++] = "--managed";
		}
		bool audio = false;
		for (size_t i = 0; compositor_args && compositor_args[i] && n + 2 < 24; i++) {
			audio = audio || strncmp(compositor_args[i], "--audio", 7) == 0;
			argv[n++] = compositor_args[i];
		}
		if (!audio) {
			/* no sound server for benchmarks that do not listen (bench-audio does) */
			argv[n++] = "--no-audio";
		}
		execvp(argv[0], (char *const *)argv);
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

/*
 * What slimland-sessiond does before it sends a console to a session: a
 * token and a key made for this attach, given to the compositor on its
 * control socket (`expect`, session-manager.md §2) and to the console.
 */
static bool expect(struct bench_session *s, struct slim_sec_client_config *cfg,
		uint8_t token[SLIM_ATTACH_TOKEN_LEN])
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/slimland-control", s->runtime_dir);
	s->control = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char line[256], token_hex[2 * SLIM_ATTACH_TOKEN_LEN + 1], key_hex[2 * SLIM_SEC_KEY_LEN + 1];
	char id_hex[2 * sizeof(BENCH_CONSOLE_ID)];
	if (s->control < 0 || connect(s->control, (struct sockaddr *)&a, sizeof(a)) != 0 ||
			!bench_read_line(s->control, line, sizeof(line), 10000) ||
			strncmp(line, "hello ", 6) != 0 ||
			!slim_sec_random(token, SLIM_ATTACH_TOKEN_LEN) ||
			!slim_sec_random(cfg->psk, sizeof(cfg->psk))) {
		fprintf(stderr, "bench: no control socket\n");
		return false;
	}
	slim_hex_encode(token_hex, token, SLIM_ATTACH_TOKEN_LEN);
	slim_hex_encode(key_hex, cfg->psk, sizeof(cfg->psk));
	slim_hex_encode(id_hex, (const uint8_t *)BENCH_CONSOLE_ID, strlen(BENCH_CONSOLE_ID));
	snprintf(cfg->psk_identity, sizeof(cfg->psk_identity), "%s", token_hex);
	int n = snprintf(line, sizeof(line), "expect %s %s %s\n", token_hex, id_hex, key_hex);
	bool ok = write(s->control, line, (size_t)n) == n;
	explicit_bzero(line, sizeof(line));
	explicit_bzero(key_hex, sizeof(key_hex));
	return ok;
}

/*
 * The handshake, as slimland-console makes it: with the key of the attach,
 * or with --pairing-key (the compositor made it in its runtime directory).
 */
static bool secure(struct bench_session *s, uint8_t token[SLIM_ATTACH_TOKEN_LEN])
{
	struct slim_sec_client_config cfg = {
		.mode = s->link == BENCH_LINK_CLEAR ? SLIM_SEC_CLEAR : SLIM_SEC_DTLS,
		.mtu = SLIM_DEFAULT_MTU,
	};
	char path[128], err[256];
	snprintf(path, sizeof(path), "%s/slimland-pairing.key", s->runtime_dir);
	bool ok = true;
	if (s->shadow_of) {
		memcpy(token, s->shadow_token, SLIM_ATTACH_TOKEN_LEN);
		memcpy(cfg.psk, s->shadow_key, sizeof(cfg.psk));
		slim_hex_encode(cfg.psk_identity, token, SLIM_ATTACH_TOKEN_LEN);
	} else if (s->link == BENCH_LINK_ATTACH) {
		ok = expect(s, &cfg, token);
	} else if (s->link == BENCH_LINK_PAIRING) {
		snprintf(cfg.psk_identity, sizeof(cfg.psk_identity), "%s", SLIM_SEC_PAIRING_IDENTITY);
		ok = slim_sec_key_file_load(path, false, cfg.psk, err, sizeof(err));
		if (!ok) {
			fprintf(stderr, "bench: %s\n", err);
		}
	}
	ok = ok && slim_sec_client_start(s->sec, &cfg, bench_now_us());
	explicit_bzero(cfg.psk, sizeof(cfg.psk));
	static uint8_t buf[SLIM_MAX_MTU];
	while (ok && !slim_sec_client_established(s->sec)) {
		uint64_t now = bench_now_us();
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		if (poll(&p, 1, slim_sec_client_timeout_ms(s->sec, now)) > 0) {
			ssize_t len = recv(s->fd, buf, sizeof(buf), 0);
			const uint8_t *out;
			size_t out_len;
			ok = len > 0 && slim_sec_client_receive(s->sec, buf, (size_t)len, &out,
				&out_len) != SLIM_SEC_FAILED;
		} else {
			ok = slim_sec_client_tick(s->sec, bench_now_us()) != SLIM_SEC_FAILED;
		}
	}
	if (!ok) {
		fprintf(stderr, "bench: no association: %s\n", slim_sec_client_error(s->sec));
	}
	return ok;
}

bool bench_session_attach(struct bench_session *s)
{
	s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(s->port) };
	inet_pton(AF_INET, listen_host, &to.sin_addr);
	int size = 8 << 20;
	setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	slim_net_stamp_arrivals(s->fd);
	if (s->fd < 0 || connect(s->fd, (struct sockaddr *)&to, sizeof(to)) != 0) {
		return false;
	}
	uint8_t token[SLIM_ATTACH_TOKEN_LEN];
	s->sec = slim_sec_client_create(send_raw, s);
	if (!s->sec || !secure(s, token)) {
		return false;
	}
	/* A record must still fit the MTU, as the console program reckons. */
	uint16_t mtu = s->link == BENCH_LINK_CLEAR ? SLIM_DEFAULT_MTU :
		SLIM_DEFAULT_MTU - SLIM_SEC_OVERHEAD;
	s->backend = slim_headless_backend_create();
	s->core = slim_console_core_create(s->width, s->height, mtu, s->backend,
		send_upstream, s);
	if (!s->core) {
		return false;
	}
	if (s->desk) {
		if (!slim_console_core_set_heads(s->core, s->desk)) {
			return false;
		}
		slim_console_core_set_keyboard(s->core, s->desk->has_keyboard ?
			&s->desk->keyboard : NULL);
	}
	slim_console_core_set_events(s->core, &events, s);
	if (video.impl) {
		slim_console_core_set_video(s->core, video.impl, video.data, video.codecs, video.n);
	}
	/* as slimland-console does: a frame's ACK rides on the next upstream datagram */
	slim_console_core_set_ack_delay(s->core, true);
	if (s->link == BENCH_LINK_ATTACH) {
		slim_console_core_set_token(s->core, token);
	}
	uint32_t assoc = 0;
	while (assoc == 0) {
		if (getrandom(&assoc, sizeof(assoc), 0) != sizeof(assoc)) {
			return false;
		}
	}
	slim_console_core_hello(s->core, s->shadow_of ? BENCH_SHADOW_ID : BENCH_CONSOLE_ID, assoc);
	/* The first frame is the whole screen at our size. */
	return bench_session_wait_frame(s, 10000);
}

bool bench_session_shadow(struct bench_session *owner, struct bench_session *sh)
{
	memset(sh, 0, sizeof(*sh));
	sh->fd = sh->control = -1;
	sh->link = BENCH_LINK_ATTACH;
	sh->width = owner->width;
	sh->height = owner->height;
	sh->shadow_of = owner;
	char line[256], token_hex[2 * SLIM_ATTACH_TOKEN_LEN + 1], key_hex[2 * SLIM_SEC_KEY_LEN + 1];
	char id_hex[2 * sizeof(BENCH_SHADOW_ID)];
	if (owner->control < 0 || !slim_sec_random(sh->shadow_token, sizeof(sh->shadow_token)) ||
			!slim_sec_random(sh->shadow_key, sizeof(sh->shadow_key))) {
		return false;
	}
	slim_hex_encode(token_hex, sh->shadow_token, sizeof(sh->shadow_token));
	slim_hex_encode(key_hex, sh->shadow_key, sizeof(sh->shadow_key));
	slim_hex_encode(id_hex, (const uint8_t *)BENCH_SHADOW_ID, strlen(BENCH_SHADOW_ID));
	int n = snprintf(line, sizeof(line), "shadow %s %s %s always view\n", token_hex, id_hex,
		key_hex);
	bool ok = write(owner->control, line, (size_t)n) == n;
	explicit_bzero(line, sizeof(line));
	explicit_bzero(key_hex, sizeof(key_hex));
	/* what else the compositor says meanwhile (attached, link) goes by */
	unsigned long port = 0;
	while (ok && port == 0) {
		ok = bench_read_line(owner->control, line, sizeof(line), 10000);
		if (ok && strncmp(line, "shadow-refused ", 15) == 0) {
			fprintf(stderr, "bench: shadow refused: %s\n", line + 15);
			ok = false;
		} else if (ok && strncmp(line, "shadow-ready ", 13) == 0) {
			port = strtoul(line + 13, NULL, 10);
			ok = port > 0 && port <= 65535;
		}
	}
	if (!ok) {
		fprintf(stderr, "bench: no shadow port\n");
		return false;
	}
	sh->port = (uint16_t)port;
	return bench_session_attach(sh);
}

bool bench_session_start(struct bench_session *s, const char *slimland, uint32_t width,
		uint32_t height, enum bench_link link)
{
	return bench_session_start_detached(s, slimland, width, height, link) &&
		bench_session_attach(s);
}

void bench_session_stop(struct bench_session *s)
{
	if (s->compositor > 0) {
		kill(s->compositor, SIGTERM);
		waitpid(s->compositor, NULL, 0);
	}
	slim_console_core_destroy(s->core);
	slim_sec_client_destroy(s->sec);
	if (s->backend) {
		s->backend->impl->destroy(s->backend);
	}
	if (s->fd >= 0) {
		close(s->fd);
	}
	if (s->control >= 0) {
		close(s->control);
	}
	explicit_bzero(s->shadow_key, sizeof(s->shadow_key));
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", s->runtime_dir);
	if (s->runtime_dir[0] && system(cmd) != 0) {
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
 * datagram, received at `rx_us` as `wire_len` bytes (a record, in DTLS). A
 * datagram that only acknowledges input is no part of a frame.
 */
static void note_datagram(struct bench_session *s, const uint8_t *buf, size_t len,
		size_t wire_len, uint64_t rx_us)
{
	s->bytes_received += wire_len;
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	/* compressed datagrams are read as the console reads them */
	static struct slim_zstd *z;
	static uint8_t expanded[SLIM_ZSTD_MAX_DGRAM];
	if ((!z && !(z = slim_zstd_create())) ||
			slim_zstd_reader_init(z, expanded, slim_console_core_history(s->core), &r, &hdr,
				buf, len, false,
				(uint16_t)s->width, (uint16_t)s->height) != SLIM_OK) {
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
		s->current.first_rx_us = rx_us;
	}
	s->current.bytes += wire_len;
}

bool bench_session_wait_frame(struct bench_session *s, int timeout_ms)
{
	uint32_t before = s->presented;
	uint64_t deadline = bench_now_us() + (uint64_t)timeout_ms * 1000;
	static uint8_t buf[SLIM_MAX_MTU];
	while (s->presented == before) {
		uint64_t now = bench_now_us();
		int left = (int)(((int64_t)deadline - (int64_t)now) / 1000);
		if (left <= 0) {
			return false;
		}
		/* the console's timers too, as slimland-console keeps them: held ACKs, input */
		int due = slim_console_core_timeout_ms(s->core, now);
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		int ready = poll(&p, 1, due >= 0 && due < left ? due : left);
		slim_console_core_tick(s->core, bench_now_us());
		if (ready <= 0) {
			continue;
		}
		ssize_t len;
		uint64_t rx_us;
		/* timed as the console does: from the kernel's stamp */
		while ((len = slim_net_recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT, NULL, NULL,
				&rx_us)) > 0) {
			const uint8_t *dgram;
			size_t dgram_len;
			if (slim_sec_client_receive(s->sec, buf, (size_t)len, &dgram,
					&dgram_len) != SLIM_SEC_DATA) {
				continue;
			}
			note_datagram(s, dgram, dgram_len, (size_t)len, rx_us);
			uint64_t t0 = bench_now_us();
			uint32_t frames = s->presented;
			slim_console_core_receive_at(s->core, dgram, dgram_len, rx_us);
			/* the datagram that presents a frame counts for it */
			struct bench_frame *f = s->presented != frames ? &s->last : &s->current;
			f->apply_us += bench_now_us() - t0;
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

/*
 * CPU time of every thread of `pid`, in microseconds: schedstat's
 * nanoseconds where the kernel keeps them (its sound threads at a few
 * milliseconds a second are below /proc/PID/stat's ticks), else stat's
 * utime + stime.
 */
uint64_t bench_process_cpu_us(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *dir = opendir(path);
	uint64_t ns = 0;
	bool all = dir != NULL;
	struct dirent *e;
	while (dir && (e = readdir(dir))) {
		if (e->d_name[0] == '.') {
			continue;
		}
		char file[sizeof(path) + sizeof(e->d_name) + 16];
		snprintf(file, sizeof(file), "%s/%s/schedstat", path, e->d_name);
		FILE *f = fopen(file, "re");
		unsigned long long v;
		if (f && fscanf(f, "%llu", &v) == 1) {
			ns += v;
		} else {
			all = false;
		}
		if (f) {
			fclose(f);
		}
	}
	if (dir) {
		closedir(dir);
	}
	if (all) {
		return ns / 1000;
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	char buf[1024];
	size_t len = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f) {
		fclose(f);
	}
	buf[len] = '\0';
	const char *p = strrchr(buf, ')');
	unsigned long utime = 0, stime = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			&utime, &stime) != 2) {
		return 0;
	}
	return (uint64_t)(utime + stime) * 1000000 / (uint64_t)sysconf(_SC_CLK_TCK);
}
