#define _GNU_SOURCE
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include "slim-log.h"
#include "slim-net.h"

void slim_net_stamp_arrivals(int fd)
{
	int on = 1;
	/* without it datagrams carry no stamp, and their time is the reading's */
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on));
}

static uint64_t ns_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

ssize_t slim_net_recv(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
		socklen_t *from_len, uint64_t *arrived_us)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	union {
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} control;
	struct msghdr msg = {
		.msg_name = from,
		.msg_namelen = from ? *from_len : 0,
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	ssize_t n = recvmsg(fd, &msg, flags);
	uint64_t now_us = slim_now_us();
	*arrived_us = now_us;
	if (n < 0) {
		return n;
	}
	if (from) {
		*from_len = msg.msg_namelen;
	}
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) {
			continue;
		}
		/* the stamp is on the wall clock: how long ago it was is what carries over */
		struct timespec stamp, wall;
		memcpy(&stamp, CMSG_DATA(c), sizeof(stamp));
		clock_gettime(CLOCK_REALTIME, &wall);
		uint64_t ago_us = ns_of(&wall) > ns_of(&stamp) ?
			(ns_of(&wall) - ns_of(&stamp)) / 1000 : 0;
		/* a wall clock set back or forth meanwhile: not believed */
		if (ago_us < 10000000 && ago_us < now_us) {
			*arrived_us = now_us - ago_us;
		}
	}
	return n;
}
