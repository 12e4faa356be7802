/* The output's clock in place of a vblank: see frame-pace.h. */
#include <stdlib.h>
#include "frame-pace.h"
#include "slim-log.h"

struct slim_frame_pace {
	const struct slim_frame_pace_handler *handler;
	void *data;
	struct wl_event_source *timer;
	uint64_t last_us; /* the last frame rendered; 0: none since a new console */
	bool owed;        /* a frame event waits for the pace */
};

static uint64_t interval_us(enum slim_pace_mode mode)
{
	switch (mode) {
	case SLIM_PACE_DETACHED:
		return SLIM_PACE_DETACHED_US;
	case SLIM_PACE_ANSWER:
		return 0;
	case SLIM_PACE_NORMAL:
	case SLIM_PACE_BLOCKED:
		break;
	}
	return SLIM_PACE_NORMAL_US;
}

/* Microseconds until a frame may go in `mode`: 0 if it may now. */
static uint64_t wait_us(const struct slim_frame_pace *pace, enum slim_pace_mode mode)
{
	uint64_t since = slim_now_us() - pace->last_us;
	uint64_t interval = interval_us(mode);
	return since >= interval ? 0 : interval - since;
}

/* A timer of 0 ms is no timer: the next millisecond at the soonest. */
static void arm(struct slim_frame_pace *pace, uint64_t wait)
{
	wl_event_source_timer_update(pace->timer, (int)(wait / 1000 + 1));
}

/* An owed frame event: sent if it may go now, else the timer waits for it. */
static void run(struct slim_frame_pace *pace)
{
	if (!pace->owed) {
		return;
	}
	enum slim_pace_mode mode = pace->handler->mode(pace->data);
	if (mode == SLIM_PACE_BLOCKED) {
		return; /* the link pokes once the console has room */
	}
	uint64_t wait = wait_us(pace, mode);
	if (wait > 0) {
		arm(pace, wait);
		return;
	}
	pace->owed = false;
	pace->handler->frame(pace->data);
}

static int handle_timer(void *data)
{
	run(data);
	return 0;
}

struct slim_frame_pace *slim_frame_pace_create(struct wl_event_loop *loop,
		const struct slim_frame_pace_handler *handler, void *data)
{
	struct slim_frame_pace *pace = calloc(1, sizeof(*pace));
	if (!pace) {
		return NULL;
	}
	pace->handler = handler;
	pace->data = data;
	pace->timer = wl_event_loop_add_timer(loop, handle_timer, pace);
	if (!pace->timer) {
		free(pace);
		return NULL;
	}
	return pace;
}

void slim_frame_pace_destroy(struct slim_frame_pace *pace)
{
	if (!pace) {
		return;
	}
	wl_event_source_remove(pace->timer);
	free(pace);
}

bool slim_frame_pace_may_render(struct slim_frame_pace *pace)
{
	enum slim_pace_mode mode = pace->handler->mode(pace->data);
	uint64_t wait = wait_us(pace, mode);
	if (mode != SLIM_PACE_BLOCKED && wait == 0) {
		pace->owed = false;
		return true;
	}
	pace->owed = true;
	if (mode != SLIM_PACE_BLOCKED) {
		arm(pace, wait);
	}
	return false;
}

void slim_frame_pace_rendered(struct slim_frame_pace *pace)
{
	pace->last_us = slim_now_us();
	pace->owed = true;
	/*
	 * Always at the timer, never from within the commit that rendered
	 * it; the mode is the one after the frame went (whether input still
	 * waits for its answer is known now).
	 */
	enum slim_pace_mode mode = pace->handler->mode(pace->data);
	if (mode != SLIM_PACE_BLOCKED) {
		arm(pace, interval_us(mode));
	}
}

void slim_frame_pace_poke(struct slim_frame_pace *pace)
{
	run(pace);
}

void slim_frame_pace_restart(struct slim_frame_pace *pace)
{
	pace->last_us = 0;
}
