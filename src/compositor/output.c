/*
 * The output is the console's screen. A frame is rendered only when the
 * console can take one: while it is behind, the scene keeps accumulating
 * damage and clients get no frame callbacks, so they stop drawing frames
 * that nobody would see. Every rendered frame's damage and pixels go to
 * the encoder, which refines the damage against what the console shows.
 *
 * Pacing: wlroots holds a new frame back until the backend says the last
 * one was shown (frame_pending). The screen (screen.c) has no clock that
 * would say so: the console's ACKs are the vblank. Once a frame is out and
 * the link has room, the next frame event is sent at once, no sooner than
 * MIN_FRAME_US after the last frame, so an input event after a quiet
 * moment is drawn at once and animation runs as fast as the console takes
 * it, up to that rate; with nothing changing nothing runs at all.
 *
 * With no console attached nobody sees the frames: they trickle at
 * DETACHED_FRAME_US, enough for clients to carry on and for screenshots,
 * while an animating client costs the shared server next to nothing.
 */
#include <stdlib.h>
#include <time.h>
#include <wlr/backend/headless.h>
#include <wlr/interfaces/wlr_output.h>
#include <wlr/render/wlr_renderer.h>
#include <wlr/types/wlr_buffer.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_output_damage.h>
#include <wlr/types/wlr_output_layout.h>
#include <wlr/types/wlr_scene.h>
#include <wlr/util/log.h>
#include <drm_fourcc.h>
#include "server.h"
#include "slim-log.h"

/* 120 Hz at most: a console that acknowledges instantly sets no pace of its own. */
#define MIN_FRAME_US 8333
/*
 * While input waits for its answer, a frame that was not it (a video's
 * picture, say) does not hold the answer back: the next frame may follow
 * at once (the pace timer's millisecond).
 */
#define ANSWER_FRAME_US 0
/* 4 Hz with no console attached */
#define DETACHED_FRAME_US 250000

static uint64_t frame_interval_us(struct slim_server *server)
{
	if (!slim_link_encoder(server->link)) {
		return DETACHED_FRAME_US;
	}
	return slim_link_answer_pending(server->link) ? ANSWER_FRAME_US : MIN_FRAME_US;
}

/* Microseconds until the output may render again: 0 if it may now. */
static uint64_t frame_wait_us(struct slim_output *output)
{
	uint64_t since = slim_now_us() - output->last_commit_us;
	uint64_t interval = frame_interval_us(output->server);
	return since >= interval ? 0 : interval - since;
}

static void handle_frame(struct wl_listener *listener, void *data)
{
	struct slim_output *output = wl_container_of(listener, output, frame);
	struct slim_server *server = output->server;
	if (slim_link_encoder(server->link) && !slim_link_ready(server->link)) {
		return;
	}
	/*
	 * No console: render anyway, so that clients and screenshots carry
	 * on, but only at a trickle: frames asked for too soon wait for the
	 * pace.
	 */
	uint64_t wait = frame_wait_us(output);
	if (!slim_link_encoder(server->link) && wait > 0) {
		output->frame_held = true;
		wl_event_source_timer_update(output->pace_timer, (int)((wait + 999) / 1000));
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

static bool link_has_room(struct slim_server *server)
{
	return !slim_link_encoder(server->link) || slim_link_ready(server->link);
}

/* Lets wlroots render the next frame, if the console has room for it. */
static int handle_pace(void *data)
{
	struct slim_output *output = data;
	if ((output->wlr->frame_pending || output->frame_held) && link_has_room(output->server)) {
		output->frame_held = false;
		wlr_output_send_frame(output->wlr);
	}
	return 0;
}

static void pace(struct slim_output *output)
{
	uint64_t wait = frame_wait_us(output);
	if (wait == 0) {
		handle_pace(output);
	} else {
		wl_event_source_timer_update(output->pace_timer, (int)((wait + 999) / 1000));
	}
}

/*
 * Whatever the trickle of frames before it had pending or held, and
 * however recently it rendered, the console's first picture goes now.
 */
void output_attached(struct slim_server *server)
{
	if (server->output) {
		server->output->last_commit_us = 0;
		output_schedule_frame(server);
		pace(server->output);
	}
}

void output_link_ready(struct slim_server *server)
{
	if (server->output) {
		pace(server->output);
		output_schedule_frame(server);
	}
}

/* The rendered buffer: stream what changed. */
static void handle_commit(struct wl_listener *listener, void *data)
{
	struct slim_output *output = wl_container_of(listener, output, commit);
	struct slim_server *server = output->server;
	struct wlr_output_event_commit *event = data;
	if (!(event->committed & WLR_OUTPUT_STATE_BUFFER) || !event->buffer) {
		return;
	}
	output->last_commit_us = slim_now_us();
	if (!slim_link_encoder(server->link)) {
		wl_event_source_timer_update(output->pace_timer,
			(int)(frame_interval_us(server) / 1000 + 1));
		/* Nobody to send to; an attaching console gets everything anyway. */
		pixman_region32_clear(&output->damage);
		server->n_moves = 0;
		return;
	}
	void *ptr;
	uint32_t format;
	size_t stride;
	if (!wlr_buffer_begin_data_ptr_access(event->buffer, WLR_BUFFER_DATA_PTR_ACCESS_READ,
			&ptr, &format, &stride)) {
		wlr_log(WLR_ERROR, "cannot read the rendered buffer");
		return;
	}
	if (format == DRM_FORMAT_XRGB8888 || format == DRM_FORMAT_ARGB8888) {
		struct slim_fb fb = {
			.px = ptr, .width = (uint32_t)event->buffer->width,
			.height = (uint32_t)event->buffer->height, .stride = stride / 4,
		};
		struct slim_frame frame = {
			.fb = &fb, .damage = &output->damage,
			.moves = server->moves, .n_moves = server->n_moves,
		};
		bool answer = video_frame(server->video, &fb, &output->damage, &frame,
			slim_link_answer_pending(server->link));
		slim_link_send_frame(server->link, &frame, answer);
	} else {
		wlr_log(WLR_ERROR, "rendered buffer has format 0x%08x, not XRGB8888", format);
	}
	wlr_buffer_end_data_ptr_access(event->buffer);
	pixman_region32_clear(&output->damage);
	server->n_moves = 0;
	/* the frame is out: the cgroup policy's moves may take their time now */
	slim_sched_apply(server->sched);
	/* after the frame went: whether input still waits for its answer is known now */
	wl_event_source_timer_update(output->pace_timer,
		(int)(frame_interval_us(server) / 1000 + 1));
}

static void handle_destroy(struct wl_listener *listener, void *data)
{
	struct slim_output *output = wl_container_of(listener, output, destroy);
	wl_list_remove(&output->frame.link);
	wl_list_remove(&output->precommit.link);
	wl_list_remove(&output->commit.link);
	wl_list_remove(&output->destroy.link);
	pixman_region32_fini(&output->damage);
	wl_event_source_remove(output->pace_timer);
	if (output->server->output == output) {
		output->server->output = NULL;
	}
	free(output);
}

void output_create(struct slim_server *server, struct wlr_output *wlr)
{
	if (server->output) {
		wlr_log(WLR_ERROR, "one output per session: ignoring %s", wlr->name);
		return;
	}
	if (!wlr_output_init_render(wlr, server->allocator, server->renderer)) {
		wlr_log(WLR_ERROR, "cannot render to %s", wlr->name);
		return;
	}
	struct slim_output *output = calloc(1, sizeof(*output));
	if (!output) {
		return;
	}
	output->server = server;
	output->wlr = wlr;
	output->pace_timer = wl_event_loop_add_timer(server->loop, handle_pace, output);
	if (!output->pace_timer) {
		free(output);
		return;
	}
	pixman_region32_init(&output->damage);
	output->frame.notify = handle_frame;
	wl_signal_add(&wlr->events.frame, &output->frame);
	output->precommit.notify = handle_precommit;
	wl_signal_add(&wlr->events.precommit, &output->precommit);
	output->commit.notify = handle_commit;
	wl_signal_add(&wlr->events.commit, &output->commit);
	output->destroy.notify = handle_destroy;
	wl_signal_add(&wlr->events.destroy, &output->destroy);
	wlr_output_layout_add(server->layout, wlr, 0, 0);
	output->scene_output = wlr_scene_output_create(server->scene, wlr);
	server->output = output;
}

/* The console's screen has another size: the output, the background and big windows follow. */
void output_resize(struct slim_server *server, uint32_t width, uint32_t height)
{
	struct slim_output *output = server->output;
	if (!output || (width == server->width && height == server->height)) {
		return;
	}
	wlr_output_set_custom_mode(output->wlr, (int32_t)width, (int32_t)height, 0);
	if (!wlr_output_commit(output->wlr)) {
		wlr_log(WLR_ERROR, "cannot resize the output to %ux%u", width, height);
		return;
	}
	server->width = width;
	server->height = height;
	background_set_size(server, width, height);
	pixman_region32_clear(&output->damage);
	wlr_output_damage_add_whole(output->scene_output->damage);
	layers_arrange(server);
	views_fit_output(server);
	wlr_log(WLR_INFO, "output resized to %ux%u", width, height);
}

void output_damage_region(struct slim_server *server, const pixman_region32_t *region)
{
	if (server->output) {
		wlr_output_damage_add(server->output->scene_output->damage,
			(pixman_region32_t *)region);
	}
}

void output_schedule_frame(struct slim_server *server)
{
	if (server->output) {
		wlr_output_schedule_frame(server->output->wlr);
	}
}
