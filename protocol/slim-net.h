/*
 * Datagrams with the time the kernel received them. A receiver busy
 * elsewhere (a console decoding, a compositor rendering, a loaded machine)
 * reads its socket late; the round trip the pacer reads a link's queue
 * from must not count that wait as the network's (protocol §4.3).
 */
#ifndef SLIM_NET_H
#define SLIM_NET_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Asks the kernel to stamp the datagrams `fd` receives (SO_TIMESTAMPNS). */
void slim_net_stamp_arrivals(int fd);
/*
 * recvfrom(2), and when the datagram arrived on slim_now_us's clock: the
 * kernel's stamp, or the time of reading where there is none (a socket
 * not asked, an error). `from` may be NULL.
 */
ssize_t slim_net_recv(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
	socklen_t *from_len, uint64_t *arrived_us);

#endif
