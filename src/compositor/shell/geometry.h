/*
 * Geometry from what clients send (margins, zones, window geometry, cursor
 * rectangles and hotspots, surface sizes): any int32 a client likes, so
 * every sum of them is taken in 64 bits and clamped before it is kept or
 * handed on. GEO_MAX bounds every coordinate and size kept: far beyond
 * any screen (SLIM_MAX_DIM), and small enough that sums of a few hundred
 * such values still fit an int32.
 */
#ifndef SLIM_GEOMETRY_H
#define SLIM_GEOMETRY_H

#include <stdint.h>
#include <wlr/util/box.h>

#define GEO_MAX (1 << 20)

/* v in [lo, hi] (lo <= hi). */
static inline int32_t geo_clamp(int64_t v, int64_t lo, int64_t hi)
{
	return (int32_t)(v < lo ? lo : v > hi ? hi : v);
}

/* A coordinate: within GEO_MAX either way. */
static inline int32_t geo_coord(int64_t v)
{
	return geo_clamp(v, -GEO_MAX, GEO_MAX);
}

/* A size: 0 to GEO_MAX. */
static inline int32_t geo_size(int64_t v)
{
	return geo_clamp(v, 0, GEO_MAX);
}

/* A box whose coordinates and size are so bounded. */
static inline struct wlr_box geo_box(struct wlr_box b)
{
	return (struct wlr_box){ geo_coord(b.x), geo_coord(b.y), geo_size(b.width),
		geo_size(b.height) };
}

#endif
