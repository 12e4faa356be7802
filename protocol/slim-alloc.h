/*
 * Allocations whose failure no caller can handle: a program's own objects,
 * made once, without which it cannot run. Out of memory there, the program
 * says so and aborts rather than carry a NULL along. What a client, a
 * console or a datagram asks for keeps its own handling: a failure there
 * fails that one thing, never the program.
 */
#ifndef SLIM_ALLOC_H
#define SLIM_ALLOC_H

#include <stddef.h>

/* `size` zeroed bytes; aborts when there are none. */
void *slim_xalloc(size_t size);

/* One zeroed TYPE. */
#define slim_znew(type) ((type *)slim_xalloc(sizeof(type)))

#endif
