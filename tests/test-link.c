/*
 * Where the link puts the INPUT_ACK (link-input.c): the link on a real
 * UDP socket on loopback, in clear, with a real event loop; the test is
 * the console on a socket of its own, and the link's handler is the
 * session, which moves the pointer as the console's motion says: beyond
 * DRAG_X it drags a window, whose move goes in the next frame.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "link.h"
#include "slim-log.h"
#include "test-util.h"

#define WIDTH 640
#define HEIGHT 480
#define ASSOC 0x5117
#define DRAG_X 320

struct rig {
	struct wl_event_loop *loop;
	struct slim_link *link;
	int fd; /* the console's socket, connected to the link's */
	uint32_t seq;        /* the console's next datagram */
	uint32_t next_input; /* the console's next input number */
	bool attached;
	unsigned want_frame;
	struct slim_fb fb;
};

static void handle_attached(void *data, const char *console_id, const struct slim_desk *desk)
{
	struct rig *rig = data;
	rig->attached = true;
}

static void handle_detached(void *data, const char *console_id)
{
}

static void handle_input(void *data, const struct slim_wire_input *ev)
{
	struct rig *rig = data;
	if (ev->kind == SLIM_INPUT_MOTION_ABS) {
		int32_t x = ev->x / 256, y = ev->y / 256;
		slim_link_cursor_pos(rig->link, x, y, true, x >= DRAG_X);
	}
}

static void handle_want_frame(void *data)
{
	struct rig *rig = data;
	rig->want_frame++;
}

static void handle_report(void *data)
{
}

static void handle_microphone(void *data, const struct slim_audio_packet *p, bool again)
{
}

static const struct slim_link_handler handler = {
	.attached = handle_attached,
	.detached = handle_detached,
	.input = handle_input,
	.want_frame = handle_want_frame,
	.audio_report = handle_report,
	.microphone = handle_microphone,
	.link_report = handle_report,
};

static void console_send(struct rig *rig, struct slim_writer *w)
{
	size_t len = slim_writer_finish(w, rig->seq++, slim_now_us());
	assert_int_equal(send(rig->fd, w->buf, len, 0), (ssize_t)len);
}

/* Runs the link until it has handled what the console sent (loopback: it is there). */
static void link_runs(struct rig *rig)
{
	assert_true(wl_event_loop_dispatch(rig->loop, 0) >= 0);
}

/* What the console found in a datagram. */
struct received {
	uint8_t types[64]; /* its commands', in order */
	size_t n;
	uint32_t seq;
	uint32_t input_ack; /* INPUT_ACK's next */
	uint32_t frame;     /* FRAME_END's */
};

/* A datagram the link has sent the console, if there is one. */
static bool console_receives(struct rig *rig, struct received *got)
{
	uint8_t buf[SLIM_MAX_MTU];
	ssize_t len = recv(rig->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (len < 0) {
		assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
		return false;
	}
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	assert_int_equal(slim_reader_init(&r, &hdr, buf, (size_t)len, false, WIDTH, HEIGHT),
		SLIM_OK);
	*got = (struct received){ .seq = hdr.seq };
	while (slim_reader_next(&r, &cmd) == SLIM_OK && cmd.type) {
		assert_true(got->n < sizeof(got->types));
		got->types[got->n++] = cmd.type;
		if (cmd.type == SLIM_CMD_INPUT_ACK) {
			got->input_ack = cmd.input_ack.next;
		} else if (cmd.type == SLIM_CMD_FRAME_END) {
			got->frame = cmd.frame_end.frame;
		}
	}
	return true;
}

/* Runs the link (its timers) until the console receives a datagram. */
static void console_waits(struct rig *rig, struct received *got)
{
	while (!console_receives(rig, got)) {
		struct pollfd pfd[] = {
			{ .fd = rig->fd, .events = POLLIN },
			{ .fd = wl_event_loop_get_fd(rig->loop), .events = POLLIN },
		};
		assert_true(poll(pfd, 2, 5000) > 0);
		link_runs(rig);
	}
}

/* Whether the link has sent the console nothing (yet). */
static bool console_has_nothing(struct rig *rig)
{
	struct received got;
	return !console_receives(rig, &got);
}

static bool has(const struct received *got, uint8_t type)
{
	for (size_t i = 0; i < got->n; i++) {
		if (got->types[i] == type) {
			return true;
		}
	}
	return false;
}

/* One INPUT datagram: the events, numbered on from the last. */
static void console_input(struct rig *rig, const struct slim_wire_input *events, size_t n)
{
	uint8_t buf[SLIM_MAX_MTU];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), ASSOC, true);
	assert_true(slim_put_input(&w, rig->next_input, events, n));
	rig->next_input += (uint32_t)n;
	console_send(rig, &w);
	link_runs(rig);
}

static struct slim_wire_input motion(int32_t x, int32_t y)
{
	return (struct slim_wire_input){ .kind = SLIM_INPUT_MOTION_ABS, .x = x * 256, .y = y * 256 };
}

/* A frame of what changed, in one datagram; the console acknowledges it. */
static void frame_acknowledged(struct rig *rig, struct received *got)
{
	pixman_region32_t damage;
	pixman_region32_init_rect(&damage, 0, 0, WIDTH, HEIGHT);
	slim_fb_fill(&rig->fb, (struct slim_rect){ 0, 0, WIDTH, HEIGHT }, rig->fb.px[0] + 1);
	struct slim_frame frame = { .fb = &rig->fb, .damage = &damage };
	size_t sent = slim_link_send_frame(rig->link, &frame, false);
	pixman_region32_fini(&damage);
	assert_int_equal(sent, 1);
	console_waits(rig, got);
	assert_true(has(got, SLIM_CMD_FRAME_END));
	uint8_t buf[SLIM_MAX_MTU];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), ASSOC, true);
	assert_true(slim_put_ack(&w, &(struct slim_wire_ack){ .frame = got->frame,
		.highest_seq = got->seq }));
	console_send(rig, &w);
	link_runs(rig);
}

static int rig_setup(void **state)
{
	struct rig *rig = calloc(1, sizeof(*rig));
	assert_non_null(rig);
	rig->loop = wl_event_loop_create();
	assert_non_null(rig->loop);
	const struct slim_link_config config = { .listen = "127.0.0.1:0", .mode = SLIM_SEC_CLEAR };
	rig->link = slim_link_create(rig->loop, &config, &handler, rig);
	assert_non_null(rig->link);
	rig->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_port = htons(slim_link_port(rig->link)),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	assert_int_equal(connect(rig->fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	rig->fb = (struct slim_fb){ .px = calloc(WIDTH * HEIGHT, 4), .width = WIDTH,
		.height = HEIGHT, .stride = WIDTH };
	assert_non_null(rig->fb.px);

	uint8_t buf[SLIM_MAX_MTU];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), ASSOC, true);
	struct slim_wire_hello hello = { .version = SLIM_VERSION, .width = WIDTH,
		.height = HEIGHT, .mtu = SLIM_DEFAULT_MTU, .console_id = "test-link" };
	assert_true(slim_put_hello(&w, &hello));
	console_send(rig, &w);
	link_runs(rig);
	assert_true(rig->attached);
	rig->next_input = 1;
	/* the first picture, so that nothing more is asked for until the tests move */
	struct received got;
	frame_acknowledged(rig, &got);
	rig->want_frame = 0;
	*state = rig;
	return 0;
}

static int rig_teardown(void **state)
{
	struct rig *rig = *state;
	slim_link_destroy(rig->link);
	wl_event_loop_destroy(rig->loop);
	close(rig->fd);
	free(rig->fb.px);
	free(rig);
	return 0;
}

/* The pointer's datagram is there already (no timer ran), the INPUT_ACK in front. */
static void pointer_with_ack_at_once(struct rig *rig)
{
	struct received got;
	assert_true(console_receives(rig, &got));
	assert_int_equal(got.n, 2);
	assert_int_equal(got.types[0], SLIM_CMD_INPUT_ACK);
	assert_int_equal(got.types[1], SLIM_CMD_CURSOR_POS);
	assert_int_equal(got.input_ack, rig->next_input);
}

/* The pointer moved: it goes right after the datagram, the INPUT_ACK in front of it. */
static void test_pointer_after_datagram(void **state)
{
	struct rig *rig = *state;
	struct slim_wire_input ev = motion(10, 20);
	console_input(rig, &ev, 1);
	pointer_with_ack_at_once(rig);
	assert_int_equal(rig->want_frame, 0);
}

/* Dragging a window: pointer and INPUT_ACK wait for the frame, and go in it. */
static void test_drag_waits_for_frame(void **state)
{
	struct rig *rig = *state;
	struct slim_wire_input ev = motion(DRAG_X + 5, 20);
	console_input(rig, &ev, 1);
	assert_true(console_has_nothing(rig));
	assert_int_equal(rig->want_frame, 1);
	struct received got;
	frame_acknowledged(rig, &got);
	assert_int_equal(got.types[0], SLIM_CMD_INPUT_ACK);
	assert_int_equal(got.input_ack, rig->next_input);
	assert_true(has(&got, SLIM_CMD_CURSOR_POS));
	assert_true(console_has_nothing(rig));
}

/* A drag that begins in the datagram: the pointer goes right after it, with the INPUT_ACK. */
static void test_move_and_drag(void **state)
{
	struct rig *rig = *state;
	struct slim_wire_input events[] = { motion(30, 40), motion(DRAG_X + 10, 40) };
	console_input(rig, events, 2);
	assert_int_equal(rig->want_frame, 1);
	pointer_with_ack_at_once(rig);
}

/* A key moves nothing: no frame came, and the INPUT_ACK goes alone. */
static void test_key_alone(void **state)
{
	struct rig *rig = *state;
	struct slim_wire_input keys[] = {
		{ .kind = SLIM_INPUT_KEY, .code = 30, .value = 1 },
		{ .kind = SLIM_INPUT_KEY, .code = 30, .value = 0 },
	};
	console_input(rig, keys, 2);
	assert_true(console_has_nothing(rig));
	struct received got;
	console_waits(rig, &got);
	assert_int_equal(got.n, 1);
	assert_int_equal(got.types[0], SLIM_CMD_INPUT_ACK);
	assert_int_equal(got.input_ack, rig->next_input);
	assert_int_equal(rig->want_frame, 0);
}

int main(void)
{
	test_quiet_logs();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pointer_after_datagram, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_drag_waits_for_frame, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_move_and_drag, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_key_alone, rig_setup, rig_teardown),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
