#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "fuzz-common.h"
#include "fuzz-sessiond-fakes.h"
#include "slim-lines.h"

#define MAX_COMPOSITORS 64

static int compositor_fds[MAX_COMPOSITORS]; /* their ends of their control sockets */
static int n_compositors;
static volatile uint32_t sink;

static bool fake_spawn(void *d, const struct slim_spawn_request *req,
		struct slim_spawn_result *out, int *control_fd)
{
	int sv[2];
	if (n_compositors >= MAX_COMPOSITORS ||
			socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
		return false;
	}
	compositor_fds[n_compositors++] = sv[1];
	out->pid = 0; /* no process: nothing to signal */
	out->pidfd = -1;
	snprintf(out->control_path, sizeof(out->control_path), "/nonexistent");
	*control_fd = sv[0];
	/* the compositor is up at once */
	slim_line_send(sv[1], "hello %d 0", 6000 + n_compositors);
	return true;
}

static struct slim_login *fake_login(void *d, struct wl_event_loop *l,
		const struct slim_login_request *req,
		const struct slim_login_callbacks *cb, void *cb_data)
{
	return NULL; /* refused at once: "Cannot log in now" */
}

static void fake_login_cancel(void *d, struct slim_login *login)
{
}

static void check_send(void *d, struct slim_sec_conn *conn, const uint8_t *buf, size_t len)
{
	fuzz_check_valid(buf, len, false, 1, 1, "the manager");
	sink += (uint32_t)len + (uint32_t)(uintptr_t)conn;
}

static void fake_close(void *d, struct slim_sec_conn *conn)
{
	sink += (uint32_t)(uintptr_t)conn;
}

static const struct slim_manager_ops ops = {
	.spawn = fake_spawn,
	.login = fake_login,
	.login_cancel = fake_login_cancel,
	.send = check_send,
	.close = fake_close,
};

struct slim_manager *fuzz_manager_create(struct wl_event_loop *loop, enum slim_enroll_mode enroll)
{
	static const uint8_t card_key[SLIM_SEC_KEY_LEN] = { 7 };
	struct slim_config config;
	slim_config_defaults(&config);
	config.enroll = enroll;
	/* no files: enrollment lives in memory, the host key is none */
	struct slim_manager *mgr = slim_manager_create(loop, &config, "/nonexistent", card_key, NULL,
		NULL, &ops, NULL);
	if (!mgr) {
		abort();
	}
	mgr->greeters.check_peer = false;
	n_compositors = 0;
	return mgr;
}

void fuzz_manager_destroy(struct slim_manager *mgr)
{
	slim_manager_destroy(mgr);
	for (int i = 0; i < n_compositors; i++) {
		close(compositor_fds[i]);
	}
	n_compositors = 0;
}

void fuzz_peer_drain(int fd, bool compositor)
{
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		sink += (uint32_t)n;
		if (!compositor) {
			continue;
		}
		char *save = NULL;
		for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char token[40], console[80];
			if (sscanf(line, "expect %39s %79s %*s", token, console) == 2) {
				slim_line_send(fd, "attached %s 64x48", console);
			}
		}
	}
}

void fuzz_compositors_answer(void)
{
	for (int i = 0; i < n_compositors; i++) {
		fuzz_peer_drain(compositor_fds[i], true);
	}
}
