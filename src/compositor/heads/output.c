/*
 * An output is one head of the console's screen. A frame is rendered only when the
 * console can take one: while it is behind, the scene keeps accumulating
 * damage and clients get no frame callbacks, so they stop drawing frames
 * that nobody would see. Every rendered frame's damage and pixels go to
 * the encoder, which refines the damage against what the console shows.
 *
 * When frames go is frame-pace.c's: wlroots holds a new frame back until
 * the backend says the last one was shown, and the console's screen has
 * no vblank; the console's ACKs are its vblank. A frame after a quiet
 * moment (an answer to input) is rendered at once, animation runs as fast
 * as the console takes it, up to 120 Hz, and with nothing changing
 * nothing runs at all. With no console attached nobody sees the frames:
 * they trickle at 4 Hz, enough for clients to carry on and for
 * screenshots, while an animating client costs the shared server next to
 * nothing.
 *
 * With several heads, each output renders its own buffer (its own scale);
 * the console's screen is then a copy they all draw into (heads.c keeps
 * it), each at its place, and what goes to the encoder is that screen. A
 * console with one head gets the head's buffer itself.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wlr/interfaces/wlr_output.h>
#include <wlr/render/wlr_renderer.h>
#include <wlr/types/wlr_buffer.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_output_damage.h>
#include <wlr/types/wlr_output_layout.h>
#include <wlr/types/wlr_scene.h>
#include <wlr/util/log.h>
#include <drm_fourcc.h>
#include "background.h"
#include "screen-map.h"
#include "frame-pace.h"
#include "heads.h"
#include "link.h"
#include "output.h"
#include "slim-sched.h"
#include "video.h"

struct slim_output {
	struct wlr_output *wlr;
	struct slim_screen_map map; /* where it is on the console's screen */
	struct slim_fb *screen;     /* the screen it draws into; NULL: its buffer is the screen */
	struct wlr_scene *scene;
	struct wlr_scene_output *scene_output;
	struct wlr_scene_buffer *background;
	struct background_cache *backgrounds; /* heads.c's: shared by every head */
	/* where frames go, and what they are made of */
	struct slim_link *link;
	struct slim_video *video;
	struct slim_sched *sched; /* its moves wait for a frame to have gone */
	const struct slim_frame_tap *tap; /* heads.c's: a watching console's */
	/* damage of the frames rendered since the last one streamed */
	pixman_region32_t damage;
	/* windows moved since then, as COPY hints */
	struct slim_move_hint moves[8];
	size_t n_moves;
	struct slim_frame_pace *pace; /* when frames go */
	struct wl_listener frame, precommit, commit;
};

static enum slim_pace_mode pace_mode(void *data)
{
	struct slim_output *output = data;
	struct slim_link *link = output->link;
	if (!slim_link_encoder(link)) {
		return SLIM_PACE_DETACHED;
	}
	if (!slim_link_ready(link)) {
		return SLIM_PACE_BLOCKED;
	}
	return slim_link_answer_pending(link) ? SLIM_PACE_ANSWER : SLIM_PACE_NORMAL;
}

static void pace_frame(void *data)
{
	struct slim_output *output = data;
	wlr_output_send_frame(output->wlr);
}

static const struct slim_frame_pace_handler pace_handler = {
	.mode = pace_mode,
	.frame = pace_frame,
};

static void handle_frame(struct wl_listener *listener, void *data)
{
	struct slim_output *output = wl_container_of(listener, output, frame);
	if (!slim_frame_pace_may_render(output->pace)) {
		return;
	}
	wlr_scene_output_commit(output->scene_output);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	wlr_scene_output_send_frame_done(output->scene_output, &now);
}

/* The frame's damage, in buffer coordinates, before the buffer is committed. */
static void handle_precommit(struct wl_listener *listener, void *data)
{
	struct slim_output *output = wl_container_of(listener, output, precommit);
	struct wlr_output *wlr = output->wlr;
	if (wlr->pending.committed & WLR_OUTPUT_STATE_DAMAGE) {
		pixman_region32_union(&output->damage, &output->damage, &wlr->pending.damage);
	} else if (wlr->pending.committed & WLR_OUTPUT_STATE_BUFFER) {
		pixman_region32_union_rect(&output->damage, &output->damage, 0, 0,
			(unsigned)wlr->width, (unsigned)wlr->height);
	}
}

void output_link_ready(struct slim_output *output)
{
	if (output) {
		wlr_output_schedule_frame(output->wlr);
		slim_frame_pace_poke(output->pace);
	}
}

/* Whatever went before. */
void output_attached(struct slim_output *output)
{
	if (output) {
		slim_frame_pace_restart(output->pace);
		output_link_ready(output);
	}
}

/* The damaged part of the head's buffer copied to its place on the screen. */
static void copy_to_screen(struct slim_output *output, const struct slim_fb *head,
		pixman_region32_t *damage)
{
	struct slim_fb *screen = output->screen;
	int n;
	const pixman_box32_t *b = pixman_region32_rectangles(damage, &n);
	for (int i = 0; i < n; i++) {
		for (int32_t y = b[i].y1; y < b[i].y2; y++) {
			memcpy(screen->px + (size_t)(y + output->map.y) * screen->stride +
				b[i].x1 + output->map.x,
				head->px + (size_t)y * head->stride + b[i].x1,
				(size_t)(b[i].x2 - b[i].x1) * 4);
		}
	}
	pixman_region32_translate(damage, output->map.x, output->map.y);
}

/* The rendered buffer's pixels, and what changed in them, to the encoder. */
static void stream(struct slim_output *output, struct wlr_buffer *buffer)
{
	void *ptr;
	uint32_t format;
	size_t stride;
	if (!wlr_buffer_begin_data_ptr_access(buffer, WLR_BUFFER_DATA_PTR_ACCESS_READ,
			&ptr, &format, &stride)) {
		wlr_log(WLR_ERROR, "cannot read the rendered buffer");
		return;
	}
	if (format == DRM_FORMAT_XRGB8888 || format == DRM_FORMAT_ARGB8888) {
		struct slim_fb fb = {
			.px = ptr, .width = (uint32_t)buffer->width,
			.height = (uint32_t)buffer->height, .stride = stride / 4,
		};
		pixman_region32_intersect_rect(&output->damage, &output->damage, 0, 0,
			fb.width, fb.height);
		if (output->screen) {
			copy_to_screen(output, &fb, &output->damage);
			fb = *output->screen;
		}
		struct slim_frame frame = {
			.fb = &fb, .damage = &output->damage,
			.moves = output->moves, .n_moves = output->n_moves,
		};
		bool answer = video_frame(output->video, &fb, &output->map, &output->damage,
			&frame, slim_link_answer_pending(output->link));
		frame.answer = answer;
		slim_link_send_frame(output->link, &frame, answer);
		/* after the session's console has its frame: the same pixels and damage */
		if (output->tap->streamed) {
			output->tap->streamed(output->tap->data, &fb, &output->damage);
		}
	} else {
		wlr_log(WLR_ERROR, "rendered buffer has format 0x%08x, not XRGB8888", format);
	}
	wlr_buffer_end_data_ptr_access(buffer);
}

/* A frame rendered: stream it, if a console is attached (one attaching gets everything). */
static void handle_commit(struct wl_listener *listener, void *data)
{
	struct slim_output *output = wl_container_of(listener, output, commit);
	struct wlr_output_event_commit *event = data;
	if (!(event->committed & WLR_OUTPUT_STATE_BUFFER) || !event->buffer) {
		return;
	}
	if (slim_link_encoder(output->link)) {
		stream(output, event->buffer);
	}
	pixman_region32_clear(&output->damage);
	output->n_moves = 0;
	slim_frame_pace_rendered(output->pace);
	/* the frame is out: the cgroup policy's moves may take their time now */
	slim_sched_apply(output->sched);
}

struct slim_output *output_create(struct wlr_output *wlr, struct wlr_scene *scene,
		struct background_cache *backgrounds, struct wl_event_loop *loop,
		struct slim_link *link, struct slim_video *video, struct slim_sched *sched,
		const struct slim_frame_tap *tap)
{
	struct slim_output *output = calloc(1, sizeof(*output));
	if (!output) {
		return NULL;
	}
	output->wlr = wlr;
	output->scene = scene;
	output->backgrounds = backgrounds;
	output->link = link;
	output->video = video;
	output->sched = sched;
	output->tap = tap;
	output->map = (struct slim_screen_map){ .width = (uint32_t)wlr->width,
		.height = (uint32_t)wlr->height, .scale = 1 };
	/* the layout's: wlr_scene_attach_output_layout made it, at the output's place */
	output->scene_output = wlr_scene_get_scene_output(scene, wlr);
	output->pace = output->scene_output ?
		slim_frame_pace_create(loop, &pace_handler, output) : NULL;
	if (!output->pace || !background_set_size(&output->background, scene, backgrounds,
			(uint32_t)wlr->width, (uint32_t)wlr->height)) {
		wlr_log(WLR_ERROR, "out of memory for the output %s", wlr->name);
		slim_frame_pace_destroy(output->pace);
		free(output);
		return NULL;
	}
	pixman_region32_init(&output->damage);
	output->frame.notify = handle_frame;
	wl_signal_add(&wlr->events.frame, &output->frame);
	output->precommit.notify = handle_precommit;
	wl_signal_add(&wlr->events.precommit, &output->precommit);
	output->commit.notify = handle_commit;
	wl_signal_add(&wlr->events.commit, &output->commit);
	return output;
}

/* Its nodes are the scene's, and go with it. */
void output_destroy(struct slim_output *output)
{
	if (!output) {
		return;
	}
	wl_list_remove(&output->frame.link);
	wl_list_remove(&output->precommit.link);
	wl_list_remove(&output->commit.link);
	pixman_region32_fini(&output->damage);
	slim_frame_pace_destroy(output->pace);
	free(output);
}

void output_unplug(struct slim_output *output)
{
	if (output && output->background) {
		wlr_scene_node_destroy(&output->background->node);
		output->background = NULL;
	}
}

/*
 * The head is `map` on the screen `screen` (NULL: its buffer is the
 * screen): the output takes its size and scale, the background follows;
 * the shell, which listens to the layout, places panels and big windows
 * again. Everything is drawn again.
 */
bool output_place(struct slim_output *output, const struct slim_screen_map *map,
		struct slim_fb *screen)
{
	struct wlr_output *wlr = output->wlr;
	if ((int32_t)map->width != wlr->width || (int32_t)map->height != wlr->height ||
			(float)map->scale != wlr->scale) {
		wlr_output_set_custom_mode(wlr, (int32_t)map->width, (int32_t)map->height,
			wlr->refresh);
		wlr_output_set_scale(wlr, (float)map->scale);
		if (!wlr_output_commit(wlr)) {
			wlr_log(WLR_ERROR, "cannot make %s %ux%u at scale %u", wlr->name,
				map->width, map->height, map->scale);
			return false;
		}
	}
	int32_t lx, ly, lw, lh;
	slim_screen_map_layout_box(map, &lx, &ly, &lw, &lh);
	if (!background_set_size(&output->background, output->scene, output->backgrounds,
			(uint32_t)lw, (uint32_t)lh)) {
		return false;
	}
	wlr_scene_node_set_position(&output->background->node, lx, ly);
	output->map = *map;
	output->screen = screen;
	pixman_region32_clear(&output->damage);
	output->n_moves = 0;
	wlr_output_damage_add_whole(output->scene_output->damage);
	return true;
}

/* Merges with the last hint when it moved the same pixels on. */
void output_note_move(struct slim_output *output, struct wlr_box box, int32_t dx, int32_t dy)
{
	if (!output) {
		return;
	}
	/* its own pixels only, in the screen's coordinates */
	int32_t lx, ly, lw, lh, s = (int32_t)output->map.scale;
	slim_screen_map_layout_box(&output->map, &lx, &ly, &lw, &lh);
	if (box.x < lx || box.y < ly || box.x + box.width > lx + lw ||
			box.y + box.height > ly + lh || box.x + dx < lx || box.y + dy < ly ||
			box.x + dx + box.width > lx + lw || box.y + dy + box.height > ly + lh) {
		return; /* no hint: the pixels are simply sent */
	}
	box = (struct wlr_box){ lx + (box.x - lx) * s, ly + (box.y - ly) * s,
		box.width * s, box.height * s };
	dx *= s;
	dy *= s;
	if (output->n_moves > 0) {
		struct slim_move_hint *last = &output->moves[output->n_moves - 1];
		if (last->src.x + last->dx == box.x && last->src.y + last->dy == box.y &&
				last->src.w == box.width && last->src.h == box.height) {
			last->dx += dx;
			last->dy += dy;
			return;
		}
	}
	if (output->n_moves == sizeof(output->moves) / sizeof(output->moves[0])) {
		return;
	}
	if (box.x < 0 || box.y < 0 || box.x + box.width > UINT16_MAX ||
			box.y + box.height > UINT16_MAX) {
		return; /* hints are 16-bit */
	}
	output->moves[output->n_moves++] = (struct slim_move_hint){
		.src = { (uint16_t)box.x, (uint16_t)box.y, (uint16_t)box.width,
			(uint16_t)box.height },
		.dx = dx, .dy = dy,
	};
}

/* `region` is in the screen's coordinates: this head's part of it. */
void output_damage_region(struct slim_output *output, const pixman_region32_t *region)
{
	if (!output) {
		return;
	}
	pixman_region32_t mine;
	pixman_region32_init(&mine);
	slim_screen_map_region_to_buffer(&output->map, region, &mine);
	if (pixman_region32_not_empty(&mine)) {
		wlr_output_damage_add(output->scene_output->damage, &mine);
	}
	pixman_region32_fini(&mine);
}
