/*
 * The outputs' buffers (pixel-allocator.c, wlroots glue): XRGB or ARGB
 * pixels in memory, read by the encoder through their data pointer, whose
 * memory is kept a while when a buffer goes. An output whose size changes
 * (a console with other heads attached) gets new buffers: from the
 * shared memory allocator, pages fresh from the kernel, some 20 us a page
 * fault in a virtual machine, 40 ms for a 1920x1080 buffer before its
 * first picture; here the last sizes' memory is there already.
 */
#ifndef SLIM_PIXEL_ALLOCATOR_H
#define SLIM_PIXEL_ALLOCATOR_H

struct wlr_allocator;

/* NULL if out of memory. Destroyed with wlr_allocator_destroy. */
struct wlr_allocator *slim_pixel_allocator_create(void);
/* The memory kept of buffers gone, back to the system (live buffers stay). */
void slim_pixel_allocator_trim(struct wlr_allocator *alloc);

#endif
