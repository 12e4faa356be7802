/*
 * When the output renders its next frame. wlroots holds a new frame back
 * until the backend says the last one was shown, and the console's screen
 * (screen.c) has no vblank that would say so: the console's ACKs are its
 * vblank, and this object is the clock in their place. No wlroots here:
 * output.c asks it and does what it says.
 *
 * A frame rendered is owed its successor's frame event, which goes out as
 * soon as the mode allows: no sooner than the mode's interval after the
 * last frame, never while the console has no room (the link says so once
 * it has, and the owed frame goes then). With nothing changing nothing
 * runs: an owed frame event finds no damage and renders nothing, so no
 * frame is owed after it.
 */
#ifndef SLIM_FRAME_PACE_H
#define SLIM_FRAME_PACE_H

#include <stdbool.h>
#include <stdint.h>
#include <wayland-server-core.h>

enum slim_pace_mode {
	SLIM_PACE_DETACHED, /* nobody sees frames: a trickle, for clients and screenshots */
	SLIM_PACE_BLOCKED,  /* the console has no room: nothing until it has */
	SLIM_PACE_NORMAL,   /* as fast as the console takes them, up to 120 Hz */
	SLIM_PACE_ANSWER,   /* input waits for its answer: a frame may follow the last at once */
};

/* 120 Hz at most: a console that acknowledges instantly sets no pace of its own. */
#define SLIM_PACE_NORMAL_US 8333
/* 4 Hz with no console attached */
#define SLIM_PACE_DETACHED_US 250000

struct slim_frame_pace_handler {
	/* how frames go now (asked whenever a frame may be due) */
	enum slim_pace_mode (*mode)(void *data);
	/* send the frame event: the output renders if anything changed */
	void (*frame)(void *data);
};

struct slim_frame_pace *slim_frame_pace_create(struct wl_event_loop *loop,
	const struct slim_frame_pace_handler *handler, void *data);
void slim_frame_pace_destroy(struct slim_frame_pace *pace);

/*
 * A frame event came (wlroots' own, or ours): whether to render now. If
 * not, the frame is owed and the pace sends its event when it may go.
 */
bool slim_frame_pace_may_render(struct slim_frame_pace *pace);
/* A frame was rendered: the next is owed, after the interval. */
void slim_frame_pace_rendered(struct slim_frame_pace *pace);
/* The mode may have changed (the console has room again): an owed frame goes if it may. */
void slim_frame_pace_poke(struct slim_frame_pace *pace);
/* A new console: however recently the last frame went, the next may go at once. */
void slim_frame_pace_restart(struct slim_frame_pace *pace);

#endif
