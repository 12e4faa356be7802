/*
 * A ring of fixed-size items from one thread to one other, without a lock:
 * the writer alone moves the ring's head, the reader alone its tail, and
 * neither ever waits for the other. It is how sound crosses between a
 * real-time thread (PipeWire's data thread, an ALSA thread) and a poll
 * loop, both ways: nothing here allocates, blocks or calls the kernel
 * after create.
 *
 * One thread writes, one thread reads: a second writer or reader needs a
 * ring of its own.
 */
#ifndef SLIM_RING_H
#define SLIM_RING_H

#include <stddef.h>
#include <stdint.h>

struct slim_ring;

/* `capacity` items of `item_size` bytes; capacity a power of two. NULL if not. */
struct slim_ring *slim_ring_create(size_t item_size, uint32_t capacity);
/* NULL is a no-op. */
void slim_ring_destroy(struct slim_ring *ring);

/* The writer's: up to `n` items in, as many as there is room for; how many went in. */
uint32_t slim_ring_write(struct slim_ring *ring, const void *items, uint32_t n);
/* The reader's: up to `n` of the oldest items out; how many came out. */
uint32_t slim_ring_read(struct slim_ring *ring, void *items, uint32_t n);
/* The reader's: how many it can read now (the writer may be adding more). */
uint32_t slim_ring_count(struct slim_ring *ring);

#endif
