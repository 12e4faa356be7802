/*
 * libFuzzer target: what anyone who can reach slimland-sessiond's UDP port
 * sends, through slim_consoles_receive: the codec, console ids, the HELLO
 * takeover rule, CARD handling and the card/session logic behind it.
 *
 * The input is a script of datagrams: each is `u8 source` (one of 4 fake
 * addresses), `u16 length` (little-endian), then that many bytes. Greeter
 * compositors the manager starts are fakes whose control sockets say
 * `hello` and `attached` at once, so REDIRECTs and migrations happen too.
 * Every datagram the manager sends must be a valid downstream datagram.
 * Each input gets a fresh manager: no state leaks between inputs.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "consoles.h"
#include "fuzz-common.h"
#include "lines.h"
#include "sessions.h"
#include "slim-codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct wl_event_loop *loop;
static struct slim_manager *mgr;
static int peer_fds[64];
static int n_peers;
static volatile uint32_t sink;

static bool fake_spawn(void *d, const struct slim_spawn_request *req,
		struct slim_spawn_result *out, int *control_fd)
{
	int sv[2];
	if (n_peers >= 64 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
		return false;
	}
	peer_fds[n_peers++] = sv[1];
	out->pid = 0; /* no process: nothing to signal */
	out->pidfd = -1;
	snprintf(out->control_path, sizeof(out->control_path), "/nonexistent");
	*control_fd = sv[0];
	/* the compositor is up at once */
	slim_line_send(sv[1], "hello %d 0", 6000 + n_peers);
	return true;
}

static struct slim_login *fake_login(void *d, struct wl_event_loop *l,
		const struct slim_login_request *req,
		const struct slim_login_callbacks *cb, void *cb_data)
{
	return NULL; /* no login is ever begun */
}

static void fake_login_cancel(void *d, struct slim_login *login)
{
}

static void check_send(void *d, const uint8_t *buf, size_t len,
		const struct sockaddr *to, socklen_t to_len)
{
	fuzz_check_valid(buf, len, false, 1, 1, "the manager");
	sink += (uint32_t)len + to_len;
}

static const struct slim_manager_ops ops = {
	.spawn = fake_spawn,
	.login = fake_login,
	.login_cancel = fake_login_cancel,
	.send = check_send,
};

/* What a compositor would answer to `expect TOKEN CONSOLE`: attached. */
static void answer_expects(void)
{
	for (int i = 0; i < n_peers; i++) {
		char buf[2048];
		ssize_t n = read(peer_fds[i], buf, sizeof(buf) - 1);
		if (n <= 0) {
			continue;
		}
		buf[n] = '\0';
		for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
			char token[40], console[40];
			if (sscanf(line, "expect %39s %39s", token, console) == 2) {
				slim_line_send(peer_fds[i], "attached %s 64x48", console);
			}
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!loop) {
		slim_log_init(SLIM_LOG_DEBUG, fuzz_quiet_log);
		loop = wl_event_loop_create();
	}
	struct slim_config config;
	slim_config_defaults(&config);
	mgr = slim_manager_create(loop, &config, "/nonexistent", &ops, NULL);
	mgr->check_greeter_peer = false;
	n_peers = 0;
	size_t pos = 0;
	while (pos + 3 <= size) {
		uint8_t source = data[pos] & 3;
		size_t len = data[pos + 1] | (size_t)data[pos + 2] << 8;
		pos += 3;
		if (len > size - pos) {
			len = size - pos;
		}
		/* a copy of exactly len bytes, so ASan sees overruns */
		uint8_t *dgram = malloc(len ? len : 1);
		memcpy(dgram, data + pos, len);
		pos += len;
		struct sockaddr_in from = { .sin_family = AF_INET, .sin_port = htons(40000) };
		from.sin_addr.s_addr = htonl(0x0a000001 + source);
		struct sockaddr_in local = { .sin_family = AF_INET };
		slim_consoles_receive(mgr, dgram, len, (struct sockaddr *)&from, sizeof(from),
			(struct sockaddr *)&local, sizeof(local));
		free(dgram);
		wl_event_loop_dispatch(loop, 0);
		answer_expects();
		wl_event_loop_dispatch(loop, 0);
	}
	slim_manager_destroy(mgr);
	for (int i = 0; i < n_peers; i++) {
		close(peer_fds[i]);
	}
	return 0;
}
