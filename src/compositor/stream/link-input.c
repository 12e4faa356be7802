/*
 * The attached console's input at the link: each event applied once and
 * in order (input-seq.h), acknowledged with INPUT_ACK, and whatever the
 * console holds let go when it falls silent or goes away. Where the
 * INPUT_ACK lands, and the pointer the input moved, is decided here alone
 * (link_input_transition).
 */
#include "link-internal.h"

/*
 * An INPUT_ACK waits this long for a frame or cursor datagram to take it
 * along (a keystroke's frame usually goes sooner), then goes alone. Well
 * under the console's shortest retransmission timeout (30 ms).
 */
#define LINK_INPUT_ACK_MS 5
/*
 * ... or this long when a frame is on its way with the pointer (a window
 * dragged: the console's next refresh), still well under.
 */
#define LINK_INPUT_ACK_FRAME_MS 15
/* A console that holds keys and is silent this long is taken to have let go. */
#define LINK_HELD_SILENCE_MS 1000

static void apply_input(void *data, const struct slim_wire_input *ev)
{
	struct slim_link *link = data;
	if (ev->kind == SLIM_INPUT_KEY && ev->value == 1) {
		link_pace_key(link);
	}
	link->handler->input(link->data, ev);
}

void link_input_release(struct slim_link *link)
{
	slim_input_seq_release_all(&link->input.seq, apply_input, link);
}

void link_input_restart(struct slim_link *link)
{
	link_input_release(link);
	slim_input_seq_reset(&link->input.seq, 1);
}

void link_input_command(struct slim_link *link, const struct slim_cmd *cmd)
{
	if (cmd->type == SLIM_CMD_INPUT) {
		slim_input_seq_input(&link->input.seq, cmd, apply_input, link);
	} else {
		slim_input_seq_held(&link->input.seq, cmd, apply_input, link);
	}
	link->input.seen = true;
}

/*
 * After a datagram with INPUT or HELD: the console learns where we are,
 * even if nothing was new (our last acknowledgement may have been lost),
 * with the next datagram we send or, failing one, `wait_ms` after alone.
 */
static void acknowledge(struct slim_link *link, int wait_ms)
{
	struct link_input *in = &link->input;
	slim_encoder_input_ack(link->enc, slim_input_seq_next(&in->seq));
	if (!in->ack_armed) {
		in->ack_armed = true;
		wl_event_source_timer_update(in->ack_timer, wait_ms);
	}
	if (slim_input_seq_held_count(&in->seq) > 0 && !in->held_armed) {
		in->held_armed = true;
		wl_event_source_timer_update(in->held_timer, LINK_HELD_SILENCE_MS);
	}
}

/* The pointer moved while a datagram is handled: where it goes. */
static enum link_ack_place pointer_moved(enum link_ack_place ack, bool with_frame)
{
	if (ack == LINK_ACK_NEXT) {
		return with_frame ? LINK_ACK_FRAME : LINK_ACK_POINTER;
	}
	if ((ack == LINK_ACK_POINTER && with_frame) || (ack == LINK_ACK_FRAME && !with_frame)) {
		return LINK_ACK_POINTER_FRAME;
	}
	return ack;
}

/*
 * The rule: the INPUT_ACK for a datagram of the console's rides at the
 * front of the first datagram that goes after it.
 * - Input that moved the pointer: the pointer goes right after the
 *   datagram, and the INPUT_ACK with it, in one datagram.
 * - Input that moved the pointer with a window (a move or a resize): the
 *   pointer goes with the next frame, in which the window moves (it costs
 *   no datagram of its own), and the INPUT_ACK waits for that frame, up
 *   to LINK_INPUT_ACK_FRAME_MS. Both in one datagram (a drag began or
 *   ended in it): the pointer goes right after it, with the INPUT_ACK.
 * - Other input: the next datagram within LINK_INPUT_ACK_MS (a
 *   keystroke's frame, usually) takes it along, or it goes alone.
 * Outside a console's datagram a pointer moved goes at once.
 */
void link_input_transition(struct slim_link *link, enum link_input_event event)
{
	struct link_input *in = &link->input;
	enum link_ack_place ack = in->ack;
	switch (event) {
	case LINK_DATAGRAM_IN:
		in->seen = false;
		in->ack = LINK_ACK_NEXT;
		break;
	case LINK_POINTER_MOVED:
	case LINK_POINTER_WITH_FRAME:
		if (ack == LINK_ACK_IDLE) {
			slim_encoder_flush_cursor(link->enc);
			break;
		}
		in->ack = pointer_moved(ack, event == LINK_POINTER_WITH_FRAME);
		if (event == LINK_POINTER_WITH_FRAME) {
			/* the INPUT_ACK's timer sends it if no frame came by then */
			link->handler->want_frame(link->data);
		}
		break;
	case LINK_DATAGRAM_DONE:
		in->ack = LINK_ACK_IDLE;
		if (in->seen) {
			bool frame = ack == LINK_ACK_FRAME || ack == LINK_ACK_POINTER_FRAME;
			acknowledge(link, frame ? LINK_INPUT_ACK_FRAME_MS : LINK_INPUT_ACK_MS);
		}
		if (ack == LINK_ACK_POINTER || ack == LINK_ACK_POINTER_FRAME) {
			slim_encoder_flush_cursor(link->enc);
		}
		break;
	}
}

void slim_link_cursor_pos(struct slim_link *link, int32_t x, int32_t y, bool visible,
		bool with_frame)
{
	if (link->console.attached) {
		slim_encoder_cursor_pos(link->enc, x, y, visible);
		link_input_transition(link, with_frame ? LINK_POINTER_WITH_FRAME : LINK_POINTER_MOVED);
	}
}

int link_handle_input_ack_timeout(void *data)
{
	struct slim_link *link = data;
	link->input.ack_armed = false;
	if (link->console.attached) {
		/* a pointer that waited for a frame in vain goes too, with the INPUT_ACK */
		slim_encoder_flush_cursor(link->enc);
		slim_encoder_flush_input_ack(link->enc);
	}
	return 0;
}

/*
 * Keys held and a silent console: it died or lost its network with a key
 * down, and a client would autorepeat the key for ever. Its keepalives
 * come every 250 ms while it holds anything.
 */
int link_handle_held_timeout(void *data)
{
	struct slim_link *link = data;
	struct link_input *in = &link->input;
	in->held_armed = false;
	size_t held = slim_input_seq_held_count(&in->seq);
	if (!link->console.attached || held == 0) {
		return 0;
	}
	uint64_t silent_ms = (slim_now_us() - link->console.last_heard_us) / 1000;
	if (silent_ms < LINK_HELD_SILENCE_MS) {
		in->held_armed = true;
		wl_event_source_timer_update(in->held_timer, (int)(LINK_HELD_SILENCE_MS - silent_ms));
		return 0;
	}
	slim_log(SLIM_LOG_INFO, "link: console %s silent for %llu ms with %zu keys or buttons "
		"down: released", link->console.console_id, (unsigned long long)silent_ms, held);
	/* the numbers go on: a console that comes back carries on where it was */
	link_input_release(link);
	return 0;
}
