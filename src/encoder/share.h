/*
 * SLIM's bandwidth allocation (§7): the requests on a console's link are
 * sorted ascending and granted in full while each is within an equal share
 * of what remains; the rest share what is left equally. A small stream
 * (a keystroke's echo, sound) gets all it asks for; the large ones (video)
 * split the remainder.
 */
#ifndef SLIM_SHARE_H
#define SLIM_SHARE_H

#include <stddef.h>
#include <stdint.h>

/* grant[i] for demand[i], i < n (at most SLIM_SHARE_MAX), within capacity. */
#define SLIM_SHARE_MAX 8
void slim_share(uint64_t capacity, const uint64_t *demand, uint64_t *grant, size_t n);

#endif
