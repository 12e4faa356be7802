#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "slim-ring.h"

/* A cache line: the writer's and the reader's counters are not on the same one. */
#define LINE 64

struct slim_ring {
	size_t size;
	uint32_t capacity;
	/*
	 * Items written and read, counted forever (wrapping at 2^32, a
	 * multiple of the capacity). The writer publishes items with a
	 * release store of head, the reader frees slots with one of tail;
	 * each loads the other's with acquire before touching the slots.
	 */
	alignas(LINE) atomic_uint head;
	alignas(LINE) atomic_uint tail;
	alignas(LINE) unsigned char items[];
};

struct slim_ring *slim_ring_create(size_t item_size, uint32_t capacity)
{
	if (item_size == 0 || capacity == 0 || capacity > (1u << 31) ||
			(capacity & (capacity - 1)) != 0 || item_size > SIZE_MAX / 2 / capacity) {
		return NULL;
	}
	size_t bytes = sizeof(struct slim_ring) + item_size * capacity;
	bytes = (bytes + LINE - 1) / LINE * LINE;
	struct slim_ring *ring = aligned_alloc(LINE, bytes);
	if (!ring) {
		return NULL;
	}
	memset(ring, 0, bytes);
	ring->size = item_size;
	ring->capacity = capacity;
	atomic_init(&ring->head, 0);
	atomic_init(&ring->tail, 0);
	return ring;
}

void slim_ring_destroy(struct slim_ring *ring)
{
	free(ring);
}

/* Where item number `at` goes, and how many of `n` from there fit before the end. */
static size_t slot(const struct slim_ring *ring, uint32_t at, uint32_t n, uint32_t *first)
{
	uint32_t i = at & (ring->capacity - 1);
	*first = n < ring->capacity - i ? n : ring->capacity - i;
	return (size_t)i * ring->size;
}

uint32_t slim_ring_write(struct slim_ring *ring, const void *items, uint32_t n)
{
	uint32_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
	uint32_t room = ring->capacity - (head - tail);
	n = n < room ? n : room;
	if (n == 0) {
		return 0;
	}
	uint32_t first;
	size_t at = slot(ring, head, n, &first);
	const unsigned char *src = items;
	memcpy(ring->items + at, src, first * ring->size);
	memcpy(ring->items, src + first * ring->size, (n - first) * ring->size);
	atomic_store_explicit(&ring->head, head + n, memory_order_release);
	return n;
}

uint32_t slim_ring_read(struct slim_ring *ring, void *items, uint32_t n)
{
	uint32_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
	uint32_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
	uint32_t held = head - tail;
	n = n < held ? n : held;
	if (n == 0) {
		return 0;
	}
	uint32_t first;
	size_t at = slot(ring, tail, n, &first);
	unsigned char *dst = items;
	memcpy(dst, ring->items + at, first * ring->size);
	memcpy(dst + first * ring->size, ring->items, (n - first) * ring->size);
	atomic_store_explicit(&ring->tail, tail + n, memory_order_release);
	return n;
}

uint32_t slim_ring_count(struct slim_ring *ring)
{
	uint32_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
	return atomic_load_explicit(&ring->head, memory_order_acquire) - tail;
}
