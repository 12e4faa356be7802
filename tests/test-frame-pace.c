/*
 * The compositor's frame clock without a compositor (frame-pace.c): a
 * real event loop, the output played by this test. Each test asserts
 * lower bounds (a timer never fires early) and that what is owed comes,
 * within a bound generous enough for a loaded machine.
 */
#include <stdlib.h>
#include "frame-pace.h"
#include "slim-log.h"
#include "test-util.h"

#define PATIENCE_US 2000000

struct output {
	enum slim_pace_mode mode;
	unsigned frames;      /* frame events sent */
	uint64_t frame_us;    /* when the last one went */
	bool in_call;         /* inside a call into the pace */
	bool frame_in_call;   /* a frame event sent from within one */
};

static enum slim_pace_mode out_mode(void *data)
{
	struct output *o = data;
	return o->mode;
}

static void out_frame(void *data)
{
	struct output *o = data;
	o->frames++;
	o->frame_us = slim_now_us();
	o->frame_in_call |= o->in_call;
}

static const struct slim_frame_pace_handler handler = {
	.mode = out_mode,
	.frame = out_frame,
};

struct fixture {
	struct wl_event_loop *loop;
	struct slim_frame_pace *pace;
	struct output out;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->loop = wl_event_loop_create();
	assert_non_null(f->loop);
	f->out.mode = SLIM_PACE_NORMAL;
	f->pace = slim_frame_pace_create(f->loop, &handler, &f->out);
	assert_non_null(f->pace);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	slim_frame_pace_destroy(f->pace);
	slim_frame_pace_destroy(NULL);
	wl_event_loop_destroy(f->loop);
	free(f);
	return 0;
}

/* Runs the loop until `frames` frame events went, or for `max_us`. */
static void run_until(struct fixture *f, unsigned frames, uint64_t max_us)
{
	uint64_t end = slim_now_us() + max_us;
	while (f->out.frames < frames && slim_now_us() < end) {
		uint64_t left = end - slim_now_us();
		wl_event_loop_dispatch(f->loop, (int)(left / 1000 + 1));
	}
}

static void rendered(struct fixture *f)
{
	f->out.in_call = true;
	slim_frame_pace_rendered(f->pace);
	f->out.in_call = false;
}

/* A frame owes its successor's event, no sooner than 120 Hz allows; nothing more. */
static void test_normal(void **state)
{
	struct fixture *f = *state;
	assert_true(slim_frame_pace_may_render(f->pace)); /* nothing rendered yet */
	uint64_t t0 = slim_now_us();
	rendered(f);
	run_until(f, 1, PATIENCE_US);
	assert_int_equal(f->out.frames, 1);
	assert_true(f->out.frame_us - t0 >= SLIM_PACE_NORMAL_US);
	/* the event came and nothing had changed: nothing rendered, nothing owed */
	assert_true(slim_frame_pace_may_render(f->pace));
	run_until(f, 2, 50000);
	assert_int_equal(f->out.frames, 1);
	assert_false(f->out.frame_in_call);
}

/* An answer to input may follow the last frame at once, but never from within the commit. */
static void test_answer(void **state)
{
	struct fixture *f = *state;
	f->out.mode = SLIM_PACE_ANSWER;
	rendered(f);
	assert_int_equal(f->out.frames, 0);
	run_until(f, 1, PATIENCE_US);
	assert_int_equal(f->out.frames, 1);
	assert_false(f->out.frame_in_call);
	/* and a frame event right after the last frame may render */
	rendered(f);
	assert_true(slim_frame_pace_may_render(f->pace));
}

/* A console without room gets nothing, however long, until the link pokes. */
static void test_blocked(void **state)
{
	struct fixture *f = *state;
	f->out.mode = SLIM_PACE_BLOCKED;
	rendered(f);
	run_until(f, 1, 30000);
	assert_int_equal(f->out.frames, 0);
	/* a frame event of wlroots' own is held too */
	assert_false(slim_frame_pace_may_render(f->pace));
	slim_frame_pace_poke(f->pace);
	assert_int_equal(f->out.frames, 0);
	/* room again, and 30 ms since the last frame: the owed event goes at once */
	f->out.mode = SLIM_PACE_NORMAL;
	slim_frame_pace_poke(f->pace);
	assert_int_equal(f->out.frames, 1);
	assert_true(slim_frame_pace_may_render(f->pace));
	/* nothing owed: a poke sends nothing */
	slim_frame_pace_poke(f->pace);
	assert_int_equal(f->out.frames, 1);
}

/* Nobody watching: a trickle; a console attaching gets its frame at once. */
static void test_detached(void **state)
{
	struct fixture *f = *state;
	f->out.mode = SLIM_PACE_DETACHED;
	uint64_t t0 = slim_now_us();
	rendered(f);
	/* a client's commit asks for a frame: too soon */
	assert_false(slim_frame_pace_may_render(f->pace));
	run_until(f, 1, PATIENCE_US);
	assert_int_equal(f->out.frames, 1);
	assert_true(f->out.frame_us - t0 >= SLIM_PACE_DETACHED_US);
	assert_true(slim_frame_pace_may_render(f->pace));
	rendered(f);
	/* a console attaches a moment after a trickled frame */
	f->out.mode = SLIM_PACE_NORMAL;
	slim_frame_pace_restart(f->pace);
	slim_frame_pace_poke(f->pace);
	assert_int_equal(f->out.frames, 2);
	assert_true(slim_frame_pace_may_render(f->pace));
}

/* A poke while the pace still waits changes nothing: the timer sends it. */
static void test_poke_early(void **state)
{
	struct fixture *f = *state;
	uint64_t t0 = slim_now_us();
	rendered(f);
	slim_frame_pace_poke(f->pace);
	slim_frame_pace_poke(f->pace);
	run_until(f, 2, 100000);
	assert_int_equal(f->out.frames, 1);
	assert_true(f->out.frame_us - t0 >= SLIM_PACE_NORMAL_US);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_normal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_answer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_detached, setup, teardown),
		cmocka_unit_test_setup_teardown(test_poke_early, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
