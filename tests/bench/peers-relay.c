/* The counting relay of bench-peers: see peers-relay.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "peers-relay.h"
#include "slim-log.h"

/* connections at once: waypipe makes one an application connection */
#define RELAY_MAX_PAIRS 16

struct relay_pair {
	int down, up; /* the connecting side, and ours to upstream; -1 when unused */
};

struct bench_relay {
	int listen_fd;
	int wake[2]; /* written to when the relay is to stop */
	char upstream[108];
	pthread_t thread;
	struct relay_pair pairs[RELAY_MAX_PAIRS];
	atomic_uint_fast64_t bytes, last_us;
};

static bool write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			return false;
		}
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

static void pair_close(struct relay_pair *p)
{
	close(p->down);
	close(p->up);
	p->down = p->up = -1;
}

static void pair_open(struct bench_relay *r, int down)
{
	struct relay_pair *p = NULL;
	for (int i = 0; i < RELAY_MAX_PAIRS && !p; i++) {
		if (r->pairs[i].down < 0) {
			p = &r->pairs[i];
		}
	}
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", r->upstream);
	int up = p ? socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0) : -1;
	if (up >= 0 && connect(up, (struct sockaddr *)&a, sizeof(a)) == 0) {
		*p = (struct relay_pair){ .down = down, .up = up };
		return;
	}
	/* no room, or no upstream: the connecting side sees its connection end */
	if (up >= 0) {
		close(up);
	}
	close(down);
}

/* One read's worth from `from` to `to`; false when the connection ends. */
static bool forward(struct bench_relay *r, int from, int to, bool count)
{
	static uint8_t buf[1 << 16];
	ssize_t n = read(from, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
		return true;
	}
	if (n <= 0) {
		return false;
	}
	if (count) {
		atomic_fetch_add(&r->bytes, (uint64_t)n);
		atomic_store(&r->last_us, slim_now_us());
	}
	return write_all(to, buf, (size_t)n);
}

static void *relay_thread(void *data)
{
	struct bench_relay *r = data;
	for (;;) {
		struct pollfd fds[2 + 2 * RELAY_MAX_PAIRS];
		fds[0] = (struct pollfd){ .fd = r->wake[0], .events = POLLIN };
		fds[1] = (struct pollfd){ .fd = r->listen_fd, .events = POLLIN };
		for (int i = 0; i < RELAY_MAX_PAIRS; i++) {
			/* a negative fd is skipped by poll */
			fds[2 + 2 * i] = (struct pollfd){ .fd = r->pairs[i].down, .events = POLLIN };
			fds[3 + 2 * i] = (struct pollfd){ .fd = r->pairs[i].up, .events = POLLIN };
		}
		if (poll(fds, 2 + 2 * RELAY_MAX_PAIRS, -1) < 0) {
			if (errno == EINTR) {
				continue;
			}
			break;
		}
		if (fds[0].revents) {
			break;
		}
		if (fds[1].revents & POLLIN) {
			int down = accept4(r->listen_fd, NULL, NULL, SOCK_CLOEXEC);
			if (down >= 0) {
				pair_open(r, down);
			}
		}
		for (int i = 0; i < RELAY_MAX_PAIRS; i++) {
			struct relay_pair *p = &r->pairs[i];
			bool ok = true;
			if (p->down >= 0 && fds[2 + 2 * i].revents) {
				ok = forward(r, p->down, p->up, true);
			}
			if (ok && p->up >= 0 && fds[3 + 2 * i].revents) {
				ok = forward(r, p->up, p->down, false);
			}
			if (!ok) {
				pair_close(p);
			}
		}
	}
	return NULL;
}

struct bench_relay *bench_relay_start(const char *path, const char *upstream)
{
	struct bench_relay *r = calloc(1, sizeof(*r));
	if (!r) {
		return NULL;
	}
	r->wake[0] = r->wake[1] = -1;
	for (int i = 0; i < RELAY_MAX_PAIRS; i++) {
		r->pairs[i].down = r->pairs[i].up = -1;
	}
	snprintf(r->upstream, sizeof(r->upstream), "%s", upstream);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	unlink(path);
	r->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (r->listen_fd < 0 || bind(r->listen_fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
			listen(r->listen_fd, 8) != 0 || pipe2(r->wake, O_CLOEXEC) != 0) {
		goto error;
	}
	if (pthread_create(&r->thread, NULL, relay_thread, r) != 0) {
		goto error;
	}
	return r;

error:
	if (r->listen_fd >= 0) {
		close(r->listen_fd);
	}
	if (r->wake[0] >= 0) {
		close(r->wake[0]);
		close(r->wake[1]);
	}
	free(r);
	return NULL;
}

void bench_relay_stop(struct bench_relay *r)
{
	if (!r) {
		return;
	}
	if (write(r->wake[1], "", 1) == 1) {
		pthread_join(r->thread, NULL);
	}
	for (int i = 0; i < RELAY_MAX_PAIRS; i++) {
		if (r->pairs[i].down >= 0) {
			pair_close(&r->pairs[i]);
		}
	}
	close(r->listen_fd);
	close(r->wake[0]);
	close(r->wake[1]);
	free(r);
}

uint64_t bench_relay_bytes(struct bench_relay *r)
{
	return atomic_load(&r->bytes);
}

uint64_t bench_relay_last_us(struct bench_relay *r)
{
	return atomic_load(&r->last_us);
}
