/*
 * What the link sends and when: every datagram through the pacer (pacer.h),
 * frames only while the link has room, an answer to input ahead of what
 * waits, and the video's share of the measured link (SLIM §7, share.h).
 */
#include "link-internal.h"
#include "share.h"

/*
 * Input this recent still waits for its answer: the next frame with exact
 * pixels goes ahead of whatever droppable waits to be paced out.
 */
#define LINK_ANSWER_US 500000
/* What the link's streams may take of its estimated rate (the rest absorbs error). */
#define LINK_SHARE_OF_RATE 0.85
/* The pacer's view of the link goes to the session manager at most this often. */
#define LINK_REPORT_US 2000000ull

/*
 * SLIM §7 on the console's link: the desktop's exact pixels, the sound and
 * the video ask for what they would send; each small claim is granted, the
 * video takes what is left. The console's own limit (HELLO) caps it.
 */
uint64_t slim_link_video_budget(const struct slim_link *link, uint64_t demand_bps)
{
	if (!link->console.attached) {
		return 0;
	}
	uint64_t budget = (uint64_t)link->console.video_mbit * 1000000;
	uint64_t rate = slim_pacer_stats(link->pace.pacer)->rate_bps;
	if (rate == 0) {
		return budget; /* no bottleneck seen: the link limits nothing */
	}
	uint64_t demand[3] = {
		link->pace.exact_bps,
		link->sound.enc ? (uint64_t)link->sound.bitrate : 0,
		demand_bps,
	};
	uint64_t grant[3];
	slim_share((uint64_t)((double)rate * LINK_SHARE_OF_RATE), demand, grant, 3);
	grant[2] = grant[2] ? grant[2] : 1; /* 0 would mean no limit */
	return budget && budget < grant[2] ? budget : grant[2];
}

/* The pacer's way out: the attached console's connection. */
void link_send_paced(void *data, const uint8_t *buf, size_t len)
{
	struct slim_link *link = data;
	/* A lost datagram (a full socket buffer, no connection): recovery repaints it. */
	if (link->console.conn) {
		slim_sec_conn_send(link->console.conn, buf, len);
	}
}

/* Sends what the pace allows; true when nothing waits any more. */
static bool run_pacer(struct slim_link *link)
{
	int64_t us = slim_pacer_run(link->pace.pacer, slim_now_us());
	/* a wl timer counts milliseconds; 0 disarms it */
	wl_event_source_timer_update(link->pace.timer, us < 0 ? 0 : (int)((us + 999) / 1000));
	return us < 0;
}

void link_send_to_peer(void *data, const uint8_t *buf, size_t len)
{
	struct slim_link *link = data;
	slim_pacer_send(link->pace.pacer, buf, len, link->pace.droppable, slim_now_us());
	run_pacer(link);
}

int link_handle_pace_timer(void *data)
{
	struct slim_link *link = data;
	if (run_pacer(link) && link->console.attached) {
		link->handler->want_frame(link->data); /* what was held back has gone */
	}
	return 0;
}

static void report_dropped(void *data, uint32_t first, uint32_t last)
{
	struct slim_link *link = data;
	slim_encoder_dropped(link->enc, first, last);
}

/* What waits and a newer frame supersedes is not sent: its area is repainted. */
void link_drop_backlog(struct slim_link *link)
{
	slim_pacer_drop(link->pace.pacer, report_dropped, link);
	run_pacer(link);
}

/* How long a frame's ACK may take before what it carried counts as lost. */
static int ack_timeout_ms(const struct slim_link *link)
{
	uint64_t rtt_ms = slim_encoder_stats(link->enc)->rtt_us / 1000;
	uint64_t ms = 4 * rtt_ms + 20;
	ms = ms > 250 ? 250 : ms;
	/* and the time what waits for the pace takes to leave */
	const struct slim_pacer_stats *ps = slim_pacer_stats(link->pace.pacer);
	if (ps->pacing_bps) {
		ms += ps->backlog_bytes * 8000 / ps->pacing_bps;
	}
	/* a console that holds its ACKs for the next datagram it sends said so */
	return (int)(ms + (link->console.ack_delay ? SLIM_ACK_DELAY_MS : 0));
}

void link_pace_key(struct slim_link *link)
{
	struct link_pace *p = &link->pace;
	uint64_t now = slim_now_us();
	/* a key nothing answered (a modifier) does not keep the next from being timed */
	if (p->key_state == LINK_KEY_IDLE || now - p->key_us > LINK_ANSWER_US) {
		p->key_state = LINK_KEY_FRAME;
		p->key_console_us = link->wire.console_us;
		p->key_us = now;
	}
}

/* The ACK of the frame that answered the key, or of a later one: presented. */
static bool key_acked(struct link_pace *p, const struct slim_wire_ack *ack)
{
	if (p->key_state != LINK_KEY_ACK || (int32_t)(ack->frame - p->key_frame) < 0) {
		return false;
	}
	p->key_state = LINK_KEY_IDLE;
	/* both times are the console's; a console whose clock went back tells nothing */
	if (ack->applied_us < p->key_console_us ||
			ack->applied_us - p->key_console_us >= 60000000) {
		return false;
	}
	slim_key_latency_add(&p->keys, ack->applied_us - p->key_console_us);
	return true;
}

static void report(struct slim_link *link, uint64_t now)
{
	link->pace.reported_us = now;
	wl_event_source_timer_update(link->pace.report_timer, 0);
	link->handler->link_report(link->data);
}

int link_handle_report_timer(void *data)
{
	struct slim_link *link = data;
	if (link->console.attached) {
		report(link, slim_now_us());
	}
	return 0;
}

const struct slim_key_latency *slim_link_key_latency(const struct slim_link *link)
{
	return &link->pace.keys;
}

void link_pace_acked(struct slim_link *link, const struct slim_cmd *cmd)
{
	/*
	 * The encoder has taken it; the pacer learns the link from it,
	 * timed from its arrival: a compositor busy rendering reads late.
	 */
	struct link_pace *p = &link->pace;
	uint64_t at = link->wire.arrived_us, now = slim_now_us();
	uint64_t rtt = cmd->ack.echo_us && cmd->ack.echo_us <= at ? at - cmd->ack.echo_us : 0;
	slim_pacer_acked(p->pacer, cmd->ack.highest_seq, rtt, now);
	bool timed = key_acked(p, &cmd->ack);
	/*
	 * At an ACK, not a timer: an idle session reports nothing and wakes
	 * for nothing. But a keystroke's time waits for no further ACK: the
	 * session may be idle after it.
	 */
	if (!p->reported_us || now - p->reported_us >= LINK_REPORT_US) {
		report(link, now);
	} else if (timed) {
		wl_event_source_timer_update(p->report_timer,
			(int)((LINK_REPORT_US - (now - p->reported_us)) / 1000) + 1);
	}
}

void link_pace_input(struct slim_link *link)
{
	link->pace.answer_pending = true;
	link->pace.input_us = slim_now_us();
}

void link_pace_restart(struct slim_link *link, uint64_t now)
{
	struct link_pace *p = &link->pace;
	slim_pacer_reset(p->pacer);
	wl_event_source_timer_update(p->timer, 0);
	p->reported_us = 0;
	p->answer_pending = false;
	p->key_state = LINK_KEY_IDLE;
	p->keys = (struct slim_key_latency){ 0 };
	p->exact_bps = p->exact_bytes = 0;
	p->exact_since_us = now;
}

void link_pace_stop(struct slim_link *link)
{
	slim_pacer_reset(link->pace.pacer);
	wl_event_source_timer_update(link->pace.report_timer, 0);
	wl_event_source_timer_update(link->pace.ack_timer, 0);
	wl_event_source_timer_update(link->pace.timer, 0);
}

bool slim_link_answer_pending(const struct slim_link *link)
{
	return link->console.attached && link->pace.answer_pending &&
		slim_now_us() - link->pace.input_us < LINK_ANSWER_US;
}

/*
 * Room for a frame: few unacknowledged, and nothing waiting for the pace
 * (a frame that would wait behind its predecessor is better drawn later,
 * from newer pixels). An answer to input does not wait for what it will
 * drop anyway.
 */
bool slim_link_ready(const struct slim_link *link)
{
	if (!link->console.attached) {
		return false;
	}
	const struct slim_pacer_stats *ps = slim_pacer_stats(link->pace.pacer);
	uint32_t in_flight = slim_encoder_frames_in_flight(link->enc);
	if (slim_link_answer_pending(link)) {
		uint32_t dropping = ps->backlog_droppable_frames;
		return in_flight < LINK_MAX_IN_FLIGHT + dropping;
	}
	return in_flight < LINK_MAX_IN_FLIGHT && ps->backlog_datagrams == 0;
}

/* The desktop's exact pixels, measured a second at a time. */
static void count_exact(struct slim_link *link, uint64_t bytes)
{
	uint64_t now = slim_now_us();
	link->pace.exact_bytes += bytes;
	if (now - link->pace.exact_since_us >= 1000000) {
		link->pace.exact_bps = link->pace.exact_bytes * 8000000 / (now - link->pace.exact_since_us);
		link->pace.exact_bytes = 0;
		link->pace.exact_since_us = now;
	}
}

size_t slim_link_send_frame(struct slim_link *link, const struct slim_frame *frame,
		bool answer)
{
	if (!link->console.attached) {
		return 0;
	}
	if (answer || slim_link_answer_pending(link)) {
		/*
		 * Interactive updates always go first; and while input waits
		 * for its answer, a frame replaces what of the last still waits,
		 * so that the answer finds at most one frame ahead of it.
		 */
		link_drop_backlog(link);
	}
	const struct slim_encoder_stats *st = slim_encoder_stats(link->enc);
	uint64_t exact = st->bytes - st->cmd_bytes[SLIM_STAT_CSCS];
	link->pace.droppable = !answer;
	size_t sent = slim_encoder_frame(link->enc, frame);
	link->pace.droppable = false;
	count_exact(link, st->bytes - st->cmd_bytes[SLIM_STAT_CSCS] - exact);
	if (sent > 0) {
		slim_pacer_frame_end(link->pace.pacer);
		if (answer) {
			link->pace.answer_pending = false;
			if (link->pace.key_state == LINK_KEY_FRAME) {
				link->pace.key_state = LINK_KEY_ACK;
				link->pace.key_frame = slim_encoder_stats(link->enc)->last_frame;
			}
		}
		wl_event_source_timer_update(link->pace.ack_timer, ack_timeout_ms(link));
	}
	return sent;
}

const struct slim_pacer_stats *slim_link_pacer_stats(const struct slim_link *link)
{
	return slim_pacer_stats(link->pace.pacer);
}
