/*
 * The console's screen as wlroots renders it (output.c): frames paced by
 * the link, their damage, pixels, window moves and video streamed to it.
 */
#ifndef SLIM_OUTPUT_H
#define SLIM_OUTPUT_H

#include <pixman.h>
#include <stdint.h>
#include <wayland-server-core.h>
#include <wlr/util/box.h>

struct wlr_output;
struct wlr_scene;
struct slim_link;
struct slim_output;
struct slim_sched;
struct slim_video;

/*
 * Renders `wlr` (its renderer initialized) from `scene`, over a desktop
 * background of its size; frames go to `link`, their video through
 * `video`, and `sched`'s moves wait for them. NULL if it cannot be had.
 */
struct slim_output *output_create(struct wlr_output *wlr, struct wlr_scene *scene,
		struct wl_event_loop *loop, struct slim_link *link, struct slim_video *video,
		struct slim_sched *sched);
/* Before its wlr_output goes. NULL is a no-op; so is NULL to the functions below. */
void output_destroy(struct slim_output *output);
/* The console's screen has another size. */
void output_resize(struct slim_output *output, uint32_t width, uint32_t height);
/* A console attached: its first picture goes at once. */
void output_attached(struct slim_output *output);
/* The console can take a frame again, or lost some: render if anything is due. */
void output_link_ready(struct slim_output *output);
/* Renders and streams `region` (output coordinates) again at the next frame. */
void output_damage_region(struct slim_output *output, const pixman_region32_t *region);
/* A window's pixels at `box` moved by (dx, dy): a COPY hint with the next frame. */
void output_note_move(struct slim_output *output, struct wlr_box box, int32_t dx, int32_t dy);

#endif
