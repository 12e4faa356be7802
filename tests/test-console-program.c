/*
 * slimland-console end to end: the test plays the server on a loopback
 * UDP socket and drives the console through --control.
 *
 * Every wait is a poll() on a pipe or the socket with an upper bound that
 * fails the test when it runs out; nothing sleeps.
 */
#define _GNU_SOURCE /* pipe2 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <png.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "slim-clock.h"
#include "slim-codec.h"
#include "test-util.h"

extern char **environ;

/* The most anything the console does at once may take, even under ASan. */
/* Longer than a keepalive's period (console/assoc.c: 5 s). */
#define SOON_MS 7000
#define W 64
#define H 48

static const char *console_path;
/* the console's key directory, and the id it said on --control */
static const char *state_dir;
static char console_id[SLIM_CONSOLE_ID_LEN + 1];

struct child {
	pid_t pid;
	int in, out, err; /* its stdin, stdout and (if kept) stderr */
	char buf[8192];
	size_t len; /* stdout read but not yet taken as lines */
};

struct server {
	int fd;
	uint16_t port;
	struct sockaddr_in peer;
	uint8_t buf[65536];
};

/* Starts the console with pipes on stdin and stdout (and stderr if asked). */
static void child_line(struct child *c, char *line, size_t cap, int timeout_ms);

/*
 * The test plays the server in clear (no DTLS here: the secure transport
 * has its own tests), and the console keeps its key in a directory of the
 * test's.
 */
static void child_spawn(struct child *c, const char *const *args, bool keep_stderr)
{
	const char *argv[40] = { console_path };
	size_t n = 1;
	bool control = false;
	for (; args[n - 1]; n++) {
		assert_true(n < 34);
		argv[n] = args[n - 1];
		control = control || strcmp(args[n - 1], "--control") == 0;
	}
	argv[n++] = "--transport";
	argv[n++] = "clear";
	argv[n++] = "--state-dir";
	argv[n++] = state_dir;
	argv[n] = NULL;
	int in[2], out[2], err[2] = { -1, -1 };
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
	if (keep_stderr) {
		assert_int_equal(pipe2(err, O_CLOEXEC), 0);
		posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
	}
	*c = (struct child){ .in = in[1], .out = out[0], .err = err[0] };
	assert_int_equal(posix_spawn(&c->pid, console_path, &fa, NULL, (char *const *)argv,
		environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(out[1]);
	if (keep_stderr) {
		close(err[1]);
	}
	if (control) {
		/* first, its id: 32 hex digits of its key's fingerprint */
		char line[512];
		child_line(c, line, sizeof(line), SOON_MS);
		assert_int_equal(strlen(line), 3 + SLIM_CONSOLE_ID_LEN);
		assert_memory_equal(line, "id ", 3);
		memcpy(console_id, line + 3, SLIM_CONSOLE_ID_LEN);
	}
}

/* Reads until EOF on `fd` (the console exited) into `buf`, within SOON_MS. */
static size_t read_to_eof(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	int64_t deadline = (int64_t)slim_now_ms() + SOON_MS;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - (int64_t)slim_now_ms();
		assert_true(left > 0 && poll(&p, 1, (int)left) == 1);
		char tmp[1024];
		ssize_t n = read(fd, tmp, sizeof(tmp));
		assert_true(n >= 0);
		if (n == 0) {
			break;
		}
		size_t take = (size_t)n < cap - 1 - len ? (size_t)n : cap - 1 - len;
		memcpy(buf + len, tmp, take);
		len += take;
	}
	buf[len] = '\0';
	return len;
}

/* Waits for the console to exit and returns its exit status. */
static int child_wait(struct child *c)
{
	char rest[8192];
	/* stdout closes when it exits: an upper bound without sleeping */
	read_to_eof(c->out, rest, sizeof(rest));
	int status;
	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	if (c->in >= 0) {
		close(c->in);
	}
	close(c->out);
	if (c->err >= 0) {
		close(c->err);
	}
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void child_send(struct child *c, const char *line)
{
	size_t len = strlen(line);
	assert_int_equal(write(c->in, line, len), (ssize_t)len);
	assert_int_equal(write(c->in, "\n", 1), 1);
}

/* The next line the console prints, within `timeout_ms`. */
static void child_line(struct child *c, char *line, size_t cap, int timeout_ms)
{
	int64_t deadline = (int64_t)slim_now_ms() + timeout_ms;
	for (;;) {
		char *nl = memchr(c->buf, '\n', c->len);
		if (nl) {
			size_t n = (size_t)(nl - c->buf);
			assert_true(n < cap);
			memcpy(line, c->buf, n);
			line[n] = '\0';
			memmove(c->buf, nl + 1, c->len - n - 1);
			c->len -= n + 1;
			return;
		}
		struct pollfd p = { .fd = c->out, .events = POLLIN };
		int64_t left = deadline - (int64_t)slim_now_ms();
		if (left <= 0 || poll(&p, 1, (int)left) != 1) {
			fail_msg("no line from the console within %d ms", timeout_ms);
		}
		ssize_t got = read(c->out, c->buf + c->len, sizeof(c->buf) - c->len);
		if (got <= 0) {
			fail_msg("the console closed its stdout");
		}
		c->len += (size_t)got;
	}
}

static void expect_line(struct child *c, const char *want)
{
	char line[512];
	child_line(c, line, sizeof(line), SOON_MS);
	assert_string_equal(line, want);
}

static void expect_linef(struct child *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void expect_linef(struct child *c, const char *fmt, ...)
{
	char want[512];
	va_list args;
	va_start(args, fmt);
	vsnprintf(want, sizeof(want), fmt, args);
	va_end(args);
	expect_line(c, want);
}

static void expect_frame(struct child *c, uint32_t frame)
{
	char line[512];
	child_line(c, line, sizeof(line), SOON_MS);
	unsigned got;
	unsigned long long applied_us;
	char end;
	assert_int_equal(sscanf(line, "frame %u %llu%c", &got, &applied_us, &end), 2);
	assert_int_equal(got, frame);
	/* the console's clock is this machine's CLOCK_MONOTONIC */
	uint64_t now = slim_now_us();
	assert_true(applied_us <= now && now - applied_us < SOON_MS * 1000ull);
}

static void server_bind(struct server *s, uint16_t port)
{
	s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(s->fd >= 0);
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	assert_int_equal(bind(s->fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	socklen_t len = sizeof(addr);
	assert_int_equal(getsockname(s->fd, (struct sockaddr *)&addr, &len), 0);
	s->port = ntohs(addr.sin_port);
}

/*
 * Receives upstream datagrams until one carries a command of `type`, and
 * returns it (pointers into s->buf) with its header; false after
 * `timeout_ms`. Every datagram the console sends must be valid.
 */
static bool server_recv(struct server *s, uint8_t type, int timeout_ms,
		struct slim_dgram *hdr, struct slim_cmd *cmd)
{
	int64_t deadline = (int64_t)slim_now_ms() + timeout_ms;
	for (;;) {
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		int64_t left = deadline - (int64_t)slim_now_ms();
		if (left <= 0 || poll(&p, 1, (int)left) != 1) {
			return false;
		}
		socklen_t len = sizeof(s->peer);
		ssize_t n = recvfrom(s->fd, s->buf, sizeof(s->buf), 0, (struct sockaddr *)&s->peer,
			&len);
		assert_true(n > 0);
		struct slim_reader r;
		assert_int_equal(slim_reader_init(&r, hdr, s->buf, (size_t)n, true, 0, 0), SLIM_OK);
		bool found = false;
		for (;;) {
			struct slim_cmd c;
			assert_int_equal(slim_reader_next(&r, &c), SLIM_OK);
			if (c.type == 0) {
				break;
			}
			if (c.type == type && !found) {
				*cmd = c;
				found = true;
			}
		}
		if (found) {
			return true;
		}
	}
}

static void server_expect(struct server *s, uint8_t type, int timeout_ms,
		struct slim_dgram *hdr, struct slim_cmd *cmd)
{
	if (!server_recv(s, type, timeout_ms, hdr, cmd)) {
		fail_msg("no command 0x%02x from the console within %d ms", type, timeout_ms);
	}
}

static void server_send(struct server *s, struct slim_writer *w, uint32_t seq)
{
	size_t len = slim_writer_finish(w, seq, slim_now_us());
	assert_int_equal(sendto(s->fd, w->buf, len, 0, (struct sockaddr *)&s->peer,
		sizeof(s->peer)), (ssize_t)len);
}

/* One frame painting the whole screen `color`, as the first datagram of an association. */
static void server_send_frame(struct server *s, uint32_t assoc, uint32_t color)
{
	uint8_t buf[SLIM_DEFAULT_MTU];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), assoc, false);
	assert_true(slim_put_fill(&w, (struct slim_rect){ 0, 0, W, H }, color));
	assert_true(slim_put_frame_end(&w, &(struct slim_wire_frame_end){
		.frame = 1, .report_from = 1 }));
	server_send(s, &w, 1);
}

static void server_send_refuse(struct server *s, uint32_t assoc, uint16_t reason,
		const char *text)
{
	uint8_t buf[SLIM_DEFAULT_MTU];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), assoc, false);
	assert_true(slim_put_refuse(&w, reason, text));
	/* a restarted server numbers from 1 again, whatever the console saw */
	server_send(s, &w, 1);
}

/* Receives a HELLO for a 64x48 screen and returns its association. */
static uint32_t expect_hello(struct server *s, int timeout_ms)
{
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	server_expect(s, SLIM_CMD_HELLO, timeout_ms, &hdr, &cmd);
	assert_int_not_equal(hdr.assoc, 0);
	assert_int_equal(hdr.seq, 1);
	assert_int_equal(cmd.hello.version, SLIM_HELLO_VERSION);
	assert_int_equal(cmd.hello.width, W);
	assert_int_equal(cmd.hello.height, H);
	assert_int_equal(cmd.hello.mtu, SLIM_DEFAULT_MTU);
	/* the id is the console's key's, all 32 bytes, as its --control said */
	assert_memory_equal(cmd.hello.console_id, console_id, SLIM_CONSOLE_ID_LEN);
	return hdr.assoc;
}

/*
 * The INPUT that follows a command: the events numbered from `first`,
 * checked against `want`. The console sends unacknowledged events again
 * and again: earlier ones still on their way are skipped.
 */
static void expect_input(struct server *s, uint32_t first, const struct slim_wire_input *want,
		size_t n)
{
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	do {
		server_expect(s, SLIM_CMD_INPUT, SOON_MS, &hdr, &cmd);
	} while (cmd.input.first != first);
	assert_int_equal(cmd.input.count, n);
	uint32_t now = (uint32_t)slim_now_ms();
	for (size_t i = 0; i < n; i++) {
		struct slim_wire_input ev;
		slim_input_get(&cmd, i, &ev);
		assert_int_equal(ev.kind, want[i].kind);
		assert_int_equal(ev.code, want[i].code);
		assert_int_equal(ev.value, want[i].value);
		assert_int_equal(ev.x, want[i].x);
		assert_int_equal(ev.y, want[i].y);
		/* CLOCK_MONOTONIC milliseconds, like ours */
		assert_true(now - ev.time_ms < SOON_MS);
	}
}

/* Acknowledges input numbered below `next`, in downstream datagram `seq`. */
static void server_send_input_ack(struct server *s, uint32_t assoc, uint32_t seq, uint32_t next)
{
	uint8_t buf[SLIM_DEFAULT_MTU];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), assoc, false);
	assert_true(slim_put_input_ack(&w, next));
	server_send(s, &w, seq);
}

static void check_png(const char *path, uint32_t color)
{
	png_image img = { .version = PNG_IMAGE_VERSION };
	assert_true(png_image_begin_read_from_file(&img, path));
	assert_int_equal(img.width, W);
	assert_int_equal(img.height, H);
	img.format = PNG_FORMAT_RGB;
	uint8_t *px = malloc(PNG_IMAGE_SIZE(img));
	assert_non_null(px);
	assert_true(png_image_finish_read(&img, NULL, px, 0, NULL));
	for (size_t i = 0; i < (size_t)W * H; i++) {
		assert_int_equal(px[3 * i], (color >> 16) & 0xff);
		assert_int_equal(px[3 * i + 1], (color >> 8) & 0xff);
		assert_int_equal(px[3 * i + 2], color & 0xff);
	}
	free(px);
}

/*
 * The screen a console shows before any server picture (status-screen.h):
 * its background at the corner, its text somewhere.
 */
static void check_png_status(const char *path)
{
	png_image img = { .version = PNG_IMAGE_VERSION };
	assert_true(png_image_begin_read_from_file(&img, path));
	img.format = PNG_FORMAT_RGB;
	uint8_t *px = malloc(PNG_IMAGE_SIZE(img));
	assert_non_null(px);
	assert_true(png_image_finish_read(&img, NULL, px, 0, NULL));
	/* SLIM_STATUS_BACKGROUND */
	assert_int_equal(px[0] << 16 | px[1] << 8 | px[2], 0x1d232b);
	size_t ink = 0;
	for (size_t i = 0; i < (size_t)W * H; i++) {
		ink += memcmp(px + 3 * i, px, 3) != 0;
	}
	assert_true(ink > 0);
	free(px);
}

static char *make_tmpdir(void)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = malloc(4096);
	assert_non_null(dir);
	snprintf(dir, 4096, "%s/slim-console-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	return dir;
}

/* Input, then the loss and return of the server in each way it can happen. */
static void test_session(void **state)
{
	struct server s;
	server_bind(&s, 0);
	char server_arg[64];
	snprintf(server_arg, sizeof(server_arg), "127.0.0.1:%u", s.port);
	struct child c;
	const char *args[] = { "--server", server_arg, "--output", "headless", "--size", "64x48",
		"--control", NULL };
	child_spawn(&c, args, false);
	expect_linef(&c, "connecting %s", server_arg);

	/* HELLO, answered with a frame: attached, and the frame presented */
	uint32_t assoc = expect_hello(&s, SOON_MS);
	server_send_frame(&s, assoc, 0x336699);
	expect_linef(&c, "attached %u", assoc);
	expect_frame(&c, 1);
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	server_expect(&s, SLIM_CMD_ACK, SOON_MS, &hdr, &cmd);
	assert_int_equal(hdr.assoc, assoc);
	assert_int_equal(cmd.ack.frame, 1);
	assert_int_equal(cmd.ack.highest_seq, 1);

	char *dir = make_tmpdir();
	char path[4200], line[4300];
	snprintf(path, sizeof(path), "%s/x.png", dir);
	snprintf(line, sizeof(line), "screenshot %s", path);
	child_send(&c, line);
	expect_line(&c, line);
	check_png(path, 0x336699);
	child_send(&c, "stats");
	expect_line(&c, "stats frames=1 datagrams=1 applied=1 bad=0 late=0 dup=0 bytes=68 "
		"fill=1 set=0 bitmap=0 copy=0 cscs=0 palette=0 cached=0 fill_px=3072 set_px=0 "
		"bitmap_px=0 copy_px=0 cscs_px=0 palette_px=0 cached_px=0 cscs_src_w=0 cscs_src_h=0 cscs_dst_w=0 cscs_dst_h=0 input_sent=0 input_retransmits=0 input_acked=0 input_dropped=0 "
		"cursor_x=0 cursor_y=0 audio=0");
	/* it decodes H.264 (its default): no picture yet */
	expect_line(&c, "video codec=h264 decoder=none pictures=0 fragments=0 bytes=0 errors=0 "
		"skipped=0 key_requests=0 src_w=0 src_h=0 dst_w=0 dst_h=0 decode_p50_ms=0.00 "
		"decode_p99_ms=0.00 gap_max_ms=0.0");
	child_send(&c, "sync");
	expect_line(&c, "sync 1");

	/* input: keys alone, pointer events closed by a FRAME; each acknowledged */
	child_send(&c, "key 30 1");
	expect_input(&s, 1, (struct slim_wire_input[]){
		{ .kind = SLIM_INPUT_KEY, .code = 30, .value = 1 } }, 1);
	server_send_input_ack(&s, assoc, 2, 2);
	child_send(&c, "button 272 1");
	expect_input(&s, 2, (struct slim_wire_input[]){
		{ .kind = SLIM_INPUT_BUTTON, .code = 272, .value = 1 },
		{ .kind = SLIM_INPUT_FRAME } }, 2);
	server_send_input_ack(&s, assoc, 3, 4);
	child_send(&c, "motion 10.5 20");
	expect_input(&s, 4, (struct slim_wire_input[]){
		{ .kind = SLIM_INPUT_MOTION_ABS, .x = 2688, .y = 5120 },
		{ .kind = SLIM_INPUT_FRAME } }, 2);
	server_send_input_ack(&s, assoc, 4, 6);
	child_send(&c, "rmotion -3 0.25");
	expect_input(&s, 6, (struct slim_wire_input[]){
		{ .kind = SLIM_INPUT_MOTION_REL, .x = -768, .y = 64 },
		{ .kind = SLIM_INPUT_FRAME } }, 2);
	server_send_input_ack(&s, assoc, 5, 8);
	child_send(&c, "axis -1.5");
	expect_input(&s, 8, (struct slim_wire_input[]){
		{ .kind = SLIM_INPUT_AXIS, .code = 0, .value = -384, .x = -1 },
		{ .kind = SLIM_INPUT_FRAME } }, 2);
	/* not acknowledged: the same again, within the first timeout (100 ms) and a margin */
	int64_t unacked_at = (int64_t)slim_now_ms();
	expect_input(&s, 8, (struct slim_wire_input[]){
		{ .kind = SLIM_INPUT_AXIS, .code = 0, .value = -384, .x = -1 },
		{ .kind = SLIM_INPUT_FRAME } }, 2);
	assert_true((int64_t)slim_now_ms() - unacked_at < 1000);
	server_send_input_ack(&s, assoc, 6, 10);

	/* bad commands are answered and survived */
	child_send(&c, "bogus 1 2");
	expect_line(&c, "error unknown command bogus");
	child_send(&c, "key 30 2");
	expect_line(&c, "error usage: key CODE 0|1");
	child_send(&c, "motion 64 0");
	expect_line(&c, "error usage: motion X Y (on the screen)");
	child_send(&c, "axis nan");
	expect_line(&c, "error usage: axis VALUE");
	child_send(&c, "stats now");
	expect_line(&c, "error usage: stats");
	child_send(&c, "screenshot");
	expect_line(&c, "error usage: screenshot PATH");
	child_send(&c, "sync");
	expect_line(&c, "sync 1");

	/* attached, it pings every 5 s */
	server_expect(&s, SLIM_CMD_PING, 5500, &hdr, &cmd);
	assert_int_equal(hdr.assoc, assoc);

	/* a server that forgot us: HELLO at once, with a new association */
	server_send_refuse(&s, assoc, SLIM_REFUSE_UNKNOWN, "");
	expect_line(&c, "refused unknown");
	expect_linef(&c, "connecting %s (the server forgot this console)", server_arg);
	uint32_t assoc2 = expect_hello(&s, 1000);
	assert_int_not_equal(assoc2, assoc);
	server_send_frame(&s, assoc2, 0x00ff00);
	expect_linef(&c, "attached %u", assoc2);
	expect_frame(&c, 1);

	/* a server that went away: its port refuses the pings */
	uint16_t port = s.port;
	close(s.fd);
	expect_linef(&c, "connecting %s (connection refused)", server_arg);
	server_bind(&s, port);
	uint32_t assoc3 = expect_hello(&s, SOON_MS);
	assert_int_not_equal(assoc3, assoc2);
	server_send_frame(&s, assoc3, 0x0000ff);
	expect_linef(&c, "attached %u", assoc3);
	expect_frame(&c, 1);

	/* busy: the text once on the control line, then HELLO again 5 s later */
	server_send_refuse(&s, assoc3, SLIM_REFUSE_BUSY, "desk\t9 has this session");
	int64_t refused_at = (int64_t)slim_now_ms();
	expect_line(&c, "refused busy desk?9 has this session");
	assert_int_equal(expect_hello(&s, 7000), assoc3);
	assert_true((int64_t)slim_now_ms() - refused_at >= 4500);
	server_send_frame(&s, assoc3, 0xffffff);
	expect_linef(&c, "attached %u", assoc3);
	expect_frame(&c, 1);

	/* five acknowledgements of input (32 bytes each) besides the frames */
	child_send(&c, "stats");
	char stats[512];
	child_line(&c, stats, sizeof(stats), SOON_MS);
	const char *re = strstr(stats, "input_retransmits=");
	assert_non_null(re);
	unsigned long long retransmits = strtoull(re + strlen("input_retransmits="), NULL, 10);
	assert_true(retransmits >= 1);
	char want[512];
	snprintf(want, sizeof(want), "stats frames=4 datagrams=11 applied=9 bad=0 late=0 dup=0 "
		"bytes=432 fill=4 set=0 bitmap=0 copy=0 cscs=0 palette=0 cached=0 fill_px=12288 "
		"set_px=0 bitmap_px=0 copy_px=0 cscs_px=0 palette_px=0 cached_px=0 cscs_src_w=0 cscs_src_h=0 cscs_dst_w=0 cscs_dst_h=0 "
		"input_sent=9 input_retransmits=%llu input_acked=9 "
		"input_dropped=0 cursor_x=0 cursor_y=0 audio=0", retransmits);
	assert_string_equal(stats, want);
	child_line(&c, stats, sizeof(stats), SOON_MS);
	assert_true(strncmp(stats, "video codec=h264 ", 17) == 0);
	child_send(&c, "quit");
	assert_int_equal(child_wait(&c), 0);
	close(s.fd);
	unlink(path);
	rmdir(dir);
	free(dir);
}

/* SIGUSR1 writes the screenshot; SIGTERM and a closed stdin end the console cleanly. */
static void test_signals(void **state)
{
	struct server s;
	server_bind(&s, 0);
	char server_arg[64];
	snprintf(server_arg, sizeof(server_arg), "127.0.0.1:%u", s.port);
	char *dir = make_tmpdir();
	char path[4200];
	snprintf(path, sizeof(path), "%s/sig.png", dir);
	struct child c;
	const char *args[] = { "--server", server_arg, "--size", "64x48", "--control",
		"--screenshot", path, NULL };
	child_spawn(&c, args, false);
	expect_linef(&c, "connecting %s", server_arg);
	assert_int_equal(kill(c.pid, SIGUSR1), 0);
	/* the console serves a pending signal before the command after it */
	child_send(&c, "sync");
	expect_line(&c, "sync 0");
	/* no server yet: the console says it is connecting */
	check_png_status(path);
	assert_int_equal(kill(c.pid, SIGTERM), 0);
	assert_int_equal(child_wait(&c), 0);

	child_spawn(&c, args, false);
	expect_linef(&c, "connecting %s", server_arg);
	close(c.in);
	c.in = -1;
	assert_int_equal(child_wait(&c), 0);

	close(s.fd);
	unlink(path);
	rmdir(dir);
	free(dir);
}

/* The next line of the console's stderr that contains `want`, within `timeout_ms`. */
static void expect_stderr(struct child *c, const char *want, int timeout_ms)
{
	char buf[4096];
	size_t len = 0;
	int64_t deadline = (int64_t)slim_now_ms() + timeout_ms;
	for (;;) {
		char *nl;
		while ((nl = memchr(buf, '\n', len))) {
			*nl = '\0';
			bool found = strstr(buf, want) != NULL;
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len);
			if (found) {
				return;
			}
		}
		struct pollfd p = { .fd = c->err, .events = POLLIN };
		int64_t left = deadline - (int64_t)slim_now_ms();
		if (left <= 0 || poll(&p, 1, (int)left) != 1) {
			fail_msg("the console did not say \"%s\" within %d ms", want, timeout_ms);
		}
		/* one byte at a time: what follows the line stays in the pipe */
		ssize_t got = read(c->err, buf + len, 1);
		if (got <= 0 || len + 1 >= sizeof(buf)) {
			fail_msg("the console's stderr ended or ran long before \"%s\"", want);
		}
		len++;
	}
}

/*
 * A manager whose name does not resolve (yet): the console stays, says why
 * on its screen and in its log, and tries again.
 */
static void test_unresolved_manager(void **state)
{
	char *dir = make_tmpdir();
	char path[4200];
	snprintf(path, sizeof(path), "%s/unresolved.png", dir);
	struct child c;
	const char *args[] = { "--manager", "no-such-host.invalid", "--size", "64x48",
		"--screenshot", path, NULL };
	child_spawn(&c, args, true);
	expect_stderr(&c, "cannot resolve no-such-host.invalid", SOON_MS);
	expect_stderr(&c, "cannot resolve no-such-host.invalid", SOON_MS);
	assert_int_equal(kill(c.pid, SIGUSR1), 0);
	expect_stderr(&c, "screenshot written", SOON_MS);
	check_png_status(path);
	assert_int_equal(kill(c.pid, SIGTERM), 0);
	assert_int_equal(child_wait(&c), 0);
	unlink(path);
	rmdir(dir);
	free(dir);
}

/* Each bad argument: exit status 2 and one line saying what is wrong. */
static void test_bad_arguments(void **state)
{
	static const struct {
		const char *args[8];
		const char *says;
	} cases[] = {
		{ { NULL }, "--server HOST:PORT is required" },
		{ { "--server", "localhost", NULL }, "expected HOST:PORT" },
		{ { "--server", "::1:7000", NULL }, "expected HOST:PORT" },
		{ { "--server", "127.0.0.1:0", NULL }, "1..65535" },
		{ { "--server", "[::1]:65536", NULL }, "1..65535" },
		{ { "--server", "127.0.0.1:7x", NULL }, "1..65535" },
		{ { "--server", "no-such-host.invalid:7000", NULL }, "cannot resolve" },
		{ { "--server", "127.0.0.1:7000", "--size", "0x48", NULL }, "--size 0x48" },
		{ { "--server", "127.0.0.1:7000", "--size", "64x", NULL }, "--size 64x" },
		{ { "--server", "127.0.0.1:7000", "--size", "8193x10", NULL }, "--size 8193x10" },
		{ { "--server", "127.0.0.1:7000", "--size", "-64x48", NULL }, "--size -64x48" },
		{ { "--server", "127.0.0.1:7000", "--mtu", "255", NULL }, "--mtu 255" },
		{ { "--server", "127.0.0.1:7000", "--mtu", "65001", NULL }, "--mtu 65001" },
		{ { "--server", "127.0.0.1:7000", "--mtu", "1e3", NULL }, "--mtu 1e3" },
		{ { "--server", "127.0.0.1:7000", "--output", "vga", NULL },
			"output vga not available in this build" },
		{ { "--server", "127.0.0.1:7000", "--input", "joystick", NULL },
			"input joystick not available in this build" },
		{ { "--server", "127.0.0.1:7000", "--output", "bogus", NULL },
			"output bogus not available in this build" },
		{ { "--server", "127.0.0.1:7000", "--transport", "tls", NULL },
			"--transport tls: expected dtls or clear" },
		{ { "--manager", "127.0.0.1", "--server-key", "sha256:12", NULL }, "--server-key" },
		{ { "--server", "127.0.0.1:7000", "stray", NULL }, "unexpected argument stray" },
		{ { "--server", "127.0.0.1:7000", "--manager", "127.0.0.1", NULL },
			"exclude each other" },
		{ { "--manager", "127.0.0.1:0", NULL }, "--manager 127.0.0.1:0: the port" },
		{ { "--manager", "[::1", NULL }, "expected HOST:PORT" },
		{ { "--manager", "127.0.0.1,127.0.0.1:0", NULL }, "--manager 127.0.0.1:0: the port" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct child c;
		child_spawn(&c, cases[i].args, true);
		char err[4096];
		read_to_eof(c.err, err, sizeof(err));
		assert_int_equal(child_wait(&c), 2);
		/* one line, naming the problem */
		char *nl = strchr(err, '\n');
		assert_non_null(nl);
		assert_string_equal(nl + 1, "");
		if (!strstr(err, cases[i].says)) {
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err, cases[i].says);
		}
	}
}

int main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH-TO-slimland-console\n", argv[0]);
		return 2;
	}
	console_path = argv[1];
	char dir[] = "/tmp/slim-console-state-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	state_dir = dir;
	/* a console that died must fail a test, not kill it */
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session),
		cmocka_unit_test(test_signals),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_unresolved_manager),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0) {
		failed++;
	}
	return test_report(failed);
}
