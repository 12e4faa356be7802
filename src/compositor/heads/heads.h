/*
 * The console's heads as the session's outputs (heads.c, wlroots glue):
 * one output per head the console's HELLO names, at its place in the
 * layout, with its name, size and scale; made, changed and removed as
 * consoles with other monitors attach. With several heads their pixels
 * meet in one copy of the console's screen, which is what is streamed.
 */
#ifndef SLIM_HEADS_H
#define SLIM_HEADS_H

#include <pixman.h>
#include <stdbool.h>
#include <stddef.h>
#include <wayland-server-core.h>
#include <wlr/util/box.h>
#include "screen-map.h"
#include "slim-desk.h"
#include "slim-pixels.h"

struct wlr_allocator;
struct wlr_backend;
struct wlr_output;
struct wlr_output_layout;
struct wlr_renderer;
struct wlr_scene;
struct slim_link;
struct slim_sched;
struct slim_video;

/*
 * Every frame streamed to the session's console, its pixels and damage,
 * for a second console watching (the session's shadow.c); `streamed`
 * may be NULL.
 */
struct slim_frame_tap {
	void (*streamed)(void *data, const struct slim_fb *fb, const pixman_region32_t *damage);
	void *data;
};

/* What every head's output is made with. */
struct slim_heads_deps {
	struct wl_display *display;
	struct wl_event_loop *loop;
	struct wlr_backend *backend;
	struct wlr_allocator *allocator;
	struct wlr_renderer *renderer;
	struct wlr_output_layout *layout; /* wlr_scene_attach_output_layout'ed to scene */
	struct wlr_scene *scene;
	struct slim_link *link;
	struct slim_video *video;
	struct slim_sched *sched;
	struct slim_frame_tap tap;
};

struct slim_heads;

/* Outputs for `desk`'s heads; NULL if they cannot be had (said in the log). */
struct slim_heads *heads_create(const struct slim_heads_deps *deps, const struct slim_desk *desk);
/* After the layout has gone (server_finish). NULL is a no-op. */
void heads_destroy(struct slim_heads *heads);
/*
 * The console that attached has these heads: outputs are kept (same name),
 * changed (size, place, scale), made or removed to match, new ones before
 * old ones go, so that windows always have somewhere to be.
 */
bool heads_apply(struct slim_heads *heads, const struct slim_desk *desk);
/* Every head of `maps`, and how many; the primary head's output. */
const struct slim_screen_map *heads_maps(const struct slim_heads *heads, size_t *n);
struct wlr_output *heads_primary(const struct slim_heads *heads);

/* What output.c does for one head, for each. */
void heads_attached(struct slim_heads *heads);
void heads_link_ready(struct slim_heads *heads);
/* Every head's buffers freed until it draws again (screen.c): no console shows them. */
void heads_release_buffers(struct slim_heads *heads);
void heads_note_move(struct slim_heads *heads, struct wlr_box box, int32_t dx, int32_t dy);
void heads_damage_region(struct slim_heads *heads, const pixman_region32_t *region);

#endif
