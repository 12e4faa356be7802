/*
 * One head of the console's screen as wlroots renders it (output.c):
 * frames paced by the link, their damage, pixels, window moves and video
 * streamed to it.
 */
#ifndef SLIM_OUTPUT_H
#define SLIM_OUTPUT_H

#include <pixman.h>
#include <stdbool.h>
#include <stdint.h>
#include <wayland-server-core.h>
#include <wlr/util/box.h>

struct slim_frame_tap;

struct wlr_output;
struct wlr_scene;
struct slim_link;
struct slim_output;
struct slim_sched;
struct slim_video;
struct background_cache;
struct slim_fb;
struct slim_screen_map;

/*
 * Renders `wlr` (its renderer initialized, already in the layout that
 * `scene` is attached to) from `scene`, over a desktop background of its
 * size (its picture from `backgrounds`); frames go to `link`, their video through `video`, and `sched`'s
 * moves wait for them. NULL if it cannot be had. Alone on the screen
 * until output_place says otherwise.
 */
struct slim_output *output_create(struct wlr_output *wlr, struct wlr_scene *scene,
		struct background_cache *backgrounds, struct wl_event_loop *loop,
		struct slim_link *link, struct slim_video *video, struct slim_sched *sched,
		const struct slim_frame_tap *tap);
/*
 * Before its wlr_output goes. Its nodes are the scene's: they go with the
 * scene, or with output_unplug before. NULL is a no-op; so is NULL to the
 * functions below.
 */
void output_destroy(struct slim_output *output);
/* Its head is gone while the session goes on: its nodes leave the scene. */
void output_unplug(struct slim_output *output);
/*
 * The head is `map` on the console's screen, which is `screen` (the copy
 * every head draws into; NULL: this head's buffer is the screen). Its
 * mode and scale follow; false if the output refuses them.
 */
bool output_place(struct slim_output *output, const struct slim_screen_map *map,
		struct slim_fb *screen);
/* A console attached: its first picture goes at once. */
void output_attached(struct slim_output *output);
/* The console can take a frame again, or lost some: render if anything is due. */
void output_link_ready(struct slim_output *output);
/* Renders and streams `region` (the screen's coordinates) again at the next frame. */
void output_damage_region(struct slim_output *output, const pixman_region32_t *region);
/*
 * A window's pixels at `box` (layout coordinates) moved by (dx, dy): a
 * COPY hint with the next frame, if they are all on this head.
 */
void output_note_move(struct slim_output *output, struct wlr_box box, int32_t dx, int32_t dy);

#endif
