#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include "console-core.h"
#include "core-video.h"
#include "input-queue.h"
#include "pixel-cache.h"
#include "seq-window.h"
#include "slim-clock.h"
#include "slim-desk.h"
#include "slim-log.h"
#include "slim-zstd.h"

#define LZ4_SCRATCH SLIM_MAX_DGRAM_EXPANDED
/* Damage rectangles kept per frame before they collapse to their bounds. */
#define MAX_DAMAGE 4096

/* What the console sends: small datagrams, numbered from 1 in each association. */
struct core_upstream {
	uint16_t mtu;
	slim_send_fn send;
	void *send_data;
	uint32_t seq;
	uint8_t *buf;
};

/* What HELLO says besides the screen. */
struct core_hello {
	bool has_token; /* the attach token from the manager's REDIRECT */
	uint8_t token[SLIM_ATTACH_TOKEN_LEN];
	uint32_t video_mbit; /* 0: nothing said */
	uint32_t extra_caps; /* sound, if the program plays it */
	struct slim_desk desk; /* its heads (the screen is their bounds) and keyboard */
};

/* The frame being received. */
struct core_frame {
	struct slim_rect damage[MAX_DAMAGE];
	size_t n_damage;
	uint64_t received_us;
	uint32_t dgrams; /* applied so far */
};

/* The server's pointer: where, and the image its CURSOR_IMAGE rows build. */
struct core_pointer {
	struct slim_console_cursor cursor;
	uint32_t serial;
	uint32_t px[SLIM_CURSOR_MAX * SLIM_CURSOR_MAX];
};

/* What decoding a datagram needs, allocated once. */
struct core_decoder {
	struct slim_cmd *cmds;
	size_t max_cmds;
	uint8_t *lz4;
	struct slim_zstd *zstd;
	uint8_t *inflated; /* a SLIM_DGRAM_ZSTD datagram, expanded */
	struct slim_history *history; /* the commands of the datagrams applied last */
	struct slim_cscs_scratch *cscs;
	uint64_t arrived_us; /* when the datagram being applied arrived */
};

/* slim_console_core_set_ack_delay: an ACK held for the next upstream datagram. */
struct core_ack_delay {
	bool enabled;
	bool held;
	struct slim_wire_ack held_ack;
	uint64_t held_us;
};

struct slim_console_core {
	struct slim_fb fb;
	struct slim_console_backend *backend;
	const struct slim_console_events *events;
	void *events_data;

	uint32_t assoc;
	struct slim_seq_window window;
	struct slim_input_queue input;
	struct core_upstream up;
	struct core_hello hello;
	struct core_ack_delay delay;

	struct core_decoder dec;
	struct core_frame frame;
	struct core_pointer pointer;
	struct slim_pixel_cache cache;
	struct core_video *video;
	/* what it announces it decodes, once the program gave it a decoder */
	struct slim_wire_codec codecs[SLIM_MAX_CODECS];
	uint8_t n_codecs;

	struct slim_console_stats stats;
	struct slim_ratelimit log_limit;
};

static bool alloc_fb(struct slim_console_core *core, uint32_t width, uint32_t height)
{
	uint32_t *px = malloc((size_t)width * height * 4);
	if (!px) {
		return false;
	}
	free(core->fb.px);
	core->fb = (struct slim_fb){ .px = px, .width = width, .height = height, .stride = width };
	slim_fb_fill(&core->fb, (struct slim_rect){ 0, 0, (uint16_t)width, (uint16_t)height }, 0);
	return true;
}

struct slim_console_core *slim_console_core_create(uint32_t width, uint32_t height,
		uint16_t mtu, struct slim_console_backend *backend,
		slim_send_fn send, void *send_data)
{
	if (width == 0 || height == 0 || width > SLIM_MAX_DIM || height > SLIM_MAX_DIM ||
			mtu < SLIM_MIN_MTU || mtu > SLIM_MAX_MTU) {
		return NULL;
	}
	struct slim_console_core *core = calloc(1, sizeof(*core));
	if (!core) {
		return NULL;
	}
	core->up.mtu = mtu;
	core->backend = backend;
	core->up.send = send;
	core->up.send_data = send_data;
	core->log_limit = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	slim_input_queue_init(&core->input, &core->stats.input);
	/* Every command has at least a 4-byte header. */
	core->dec.max_cmds = SLIM_MAX_MTU / sizeof(struct slim_wire_cmd);
	core->dec.cmds = calloc(core->dec.max_cmds, sizeof(*core->dec.cmds));
	core->dec.lz4 = malloc(LZ4_SCRATCH);
	core->dec.zstd = slim_zstd_create();
	core->dec.history = slim_history_create();
	core->dec.inflated = malloc(SLIM_ZSTD_MAX_DGRAM);
	core->dec.cscs = slim_cscs_scratch_create();
	core->video = core_video_create();
	/* a HELLO may be longer than the MTU; nothing else is */
	core->up.buf = malloc(mtu > SLIM_HELLO_MAX_DGRAM ? mtu : SLIM_HELLO_MAX_DGRAM);
	slim_desk_single(&core->hello.desk, width, height);
	if (!core->dec.cmds || !core->dec.lz4 || !core->dec.zstd || !core->dec.history ||
			!core->dec.inflated || !core->dec.cscs || !core->video || !core->up.buf ||
			!alloc_fb(core, width, height) ||
			(backend && !backend->impl->init(backend, width, height))) {
		slim_console_core_destroy(core);
		return NULL;
	}
	return core;
}

void slim_console_core_destroy(struct slim_console_core *core)
{
	if (!core) {
		return;
	}
	free(core->fb.px);
	free(core->dec.cmds);
	free(core->dec.lz4);
	slim_zstd_destroy(core->dec.zstd);
	slim_history_destroy(core->dec.history);
	free(core->dec.inflated);
	slim_pixel_cache_finish(&core->cache);
	slim_cscs_scratch_destroy(core->dec.cscs);
	core_video_destroy(core->video);
	free(core->up.buf);
	free(core);
}

const struct slim_fb *slim_console_core_fb(const struct slim_console_core *core)
{
	return &core->fb;
}

struct slim_history *slim_console_core_history(struct slim_console_core *core)
{
	return core->dec.history;
}

const struct slim_console_stats *slim_console_core_stats(const struct slim_console_core *core)
{
	return &core->stats;
}

const struct slim_console_cursor *slim_console_core_cursor(const struct slim_console_core *core)
{
	return &core->pointer.cursor;
}

/* Upstream datagrams are small and sent at once. */
static void send_upstream(struct slim_console_core *core, struct slim_writer *w)
{
	uint64_t now = slim_now_us();
	if (core->delay.held) {
		/* the server's clock went on while we held it: its round trip leaves that out */
		struct slim_wire_ack ack = core->delay.held_ack;
		ack.echo_us += now - core->delay.held_us;
		core->delay.held = !slim_put_ack(w, &ack);
	}
	if (++core->up.seq == 0) {
		core->up.seq = 1;
	}
	/* any datagram tells the server we are alive: the held keys' keepalive waits */
	slim_input_queue_note_send(&core->input, now);
	size_t len = slim_writer_finish(w, core->up.seq, now);
	if (core->up.send) {
		core->up.send(core->up.send_data, w->buf, len);
	}
}

static void begin_upstream(struct slim_console_core *core, struct slim_writer *w)
{
	slim_writer_init(w, core->up.buf, core->up.mtu, core->assoc, true);
}

void slim_console_core_set_events(struct slim_console_core *core,
		const struct slim_console_events *events, void *data)
{
	core->events = events;
	core->events_data = data;
}

void slim_console_core_ping(struct slim_console_core *core)
{
	struct slim_writer w;
	begin_upstream(core, &w);
	slim_put_ping(&w);
	send_upstream(core, &w);
}

void slim_console_core_fill_hello(const struct slim_console_core *core,
		const char *console_id, struct slim_wire_hello *hello)
{
	*hello = (struct slim_wire_hello){
		.version = SLIM_VERSION,
		.width = (uint16_t)core->fb.width,
		.height = (uint16_t)core->fb.height,
		.mtu = core->up.mtu,
		.caps = SLIM_CAP_LZ4 | SLIM_CAP_RGB888 | SLIM_CAP_CSCS | SLIM_CAP_CURSOR |
			SLIM_CAP_PALETTE | SLIM_CAP_ZSTD | SLIM_CAP_CACHE | SLIM_CAP_HISTORY |
			core->hello.extra_caps |
			(core->delay.enabled ? SLIM_CAP_ACK_DELAY : 0),
	};
	/* NUL-padded, not necessarily terminated: a key's id takes all 32 bytes */
	size_t n = strlen(console_id);
	memcpy(hello->console_id, console_id,
		n < sizeof(hello->console_id) ? n : sizeof(hello->console_id));
}

void slim_console_core_set_token(struct slim_console_core *core,
		const uint8_t token[SLIM_ATTACH_TOKEN_LEN])
{
	core->hello.has_token = token != NULL;
	if (token) {
		memcpy(core->hello.token, token, sizeof(core->hello.token));
	}
}

/* HELLO in the current association, with the datagram's own upstream number. */
static void send_hello(struct slim_console_core *core, const char *console_id)
{
	struct slim_wire_hello hello;
	slim_console_core_fill_hello(core, console_id, &hello);
	struct slim_writer w;
	slim_writer_init(&w, core->up.buf, core->up.mtu > SLIM_HELLO_MAX_DGRAM ?
		core->up.mtu : SLIM_HELLO_MAX_DGRAM, core->assoc, true);
	struct slim_hello_parts parts = {
		.video_mbit = core->hello.video_mbit,
		.desk = &core->hello.desk,
		.codecs = core->codecs,
		.n_codecs = core->n_codecs,
		.token = core->hello.has_token ? core->hello.token : NULL,
	};
	slim_put_hello_ext(&w, &hello, &parts);
	core->delay.held = false; /* a HELLO starts everything again: no ACK goes with it */
	send_upstream(core, &w);
}

void slim_console_core_set_caps(struct slim_console_core *core, uint32_t caps)
{
	core->hello.extra_caps = caps & (SLIM_CAP_AUDIO | SLIM_CAP_MIC);
}

void slim_console_core_set_video(struct slim_console_core *core,
		const struct slim_console_video_impl *impl, void *data,
		const struct slim_wire_codec *codecs, size_t n)
{
	core_video_set_impl(core->video, impl, data);
	n = impl ? (n < SLIM_MAX_CODECS ? n : SLIM_MAX_CODECS) : 0;
	memcpy(core->codecs, codecs, n * sizeof(*codecs));
	core->n_codecs = (uint8_t)n;
}

const struct slim_console_video_stats *slim_console_core_video_stats(
		const struct slim_console_core *core)
{
	return core_video_stats(core->video);
}

uint64_t slim_console_core_video_take_gap(struct slim_console_core *core)
{
	return core_video_take_gap(core->video);
}

void slim_console_core_set_video_budget(struct slim_console_core *core, uint32_t mbit)
{
	core->hello.video_mbit = mbit;
}

void slim_console_core_hello(struct slim_console_core *core, const char *console_id,
		uint32_t assoc)
{
	core->assoc = assoc;
	core->up.seq = 0;
	/* numbers start at 1 again; the keys held stay held */
	slim_input_queue_reset(&core->input, 1);
	core->frame.n_damage = 0;
	core->frame.received_us = 0;
	core->frame.dgrams = 0;
	core->pointer.cursor = (struct slim_console_cursor){ 0 };
	core->pointer.serial = 0;
	/* a new association starts with an empty cache: the server knows nothing of it */
	slim_pixel_cache_reset(&core->cache);
	slim_history_reset(core->dec.history);
	slim_seq_window_reset(&core->window);
	core_video_reset(core->video);
	send_hello(core, console_id);
}

void slim_console_core_request_repaint(struct slim_console_core *core, const char *console_id)
{
	/* nothing is reset: the server goes on numbering where it was */
	if (core->assoc != 0) {
		send_hello(core, console_id);
	}
}

/* The screen, cleared, at the bounds of `desk`'s heads, which HELLO names from now on. */
static bool set_desk_heads(struct slim_console_core *core, const struct slim_desk *desk)
{
	uint32_t width, height;
	slim_desk_bounds(desk, &width, &height);
	if (width == 0 || height == 0 || width > SLIM_MAX_DIM || height > SLIM_MAX_DIM ||
			!alloc_fb(core, width, height)) {
		return false;
	}
	core->hello.desk.n_heads = desk->n_heads;
	memcpy(core->hello.desk.heads, desk->heads, desk->n_heads * sizeof(desk->heads[0]));
	core->frame.n_damage = 0;
	return !core->backend || core->backend->impl->resize(core->backend, width, height);
}

bool slim_console_core_resize(struct slim_console_core *core, uint32_t width, uint32_t height)
{
	struct slim_desk desk;
	slim_desk_single(&desk, width, height);
	return set_desk_heads(core, &desk);
}

bool slim_console_core_set_heads(struct slim_console_core *core, const struct slim_desk *desk)
{
	struct slim_wire_head wire[SLIM_MAX_HEADS];
	uint32_t width, height;
	if (desk->n_heads < 1 || desk->n_heads > SLIM_MAX_HEADS) {
		return false;
	}
	for (uint32_t i = 0; i < desk->n_heads; i++) {
		slim_desk_head_to_wire(&desk->heads[i], &wire[i]);
	}
	slim_desk_bounds(desk, &width, &height);
	if (!slim_desk_heads_valid((const uint8_t *)wire, desk->n_heads, width, height)) {
		return false;
	}
	return set_desk_heads(core, desk);
}

void slim_console_core_set_keyboard(struct slim_console_core *core,
		const struct slim_keyboard *keyboard)
{
	core->hello.desk.has_keyboard = keyboard != NULL;
	if (keyboard) {
		core->hello.desk.keyboard = *keyboard;
	}
}

const struct slim_desk *slim_console_core_desk(const struct slim_console_core *core)
{
	return &core->hello.desk;
}

/* Everything unacknowledged that fits, and HELD: a lost datagram's events ride along. */
static void send_input_queue(struct slim_console_core *core, uint64_t now_us)
{
	struct slim_writer w;
	begin_upstream(core, &w);
	if (slim_input_queue_write(&core->input, &w, now_us)) {
		send_upstream(core, &w);
	}
}

bool slim_console_core_send_input(struct slim_console_core *core,
		const struct slim_wire_input *events, size_t n)
{
	if (n == 0) {
		return false;
	}
	uint64_t now = slim_now_us();
	size_t queued = slim_input_queue_push(&core->input, events, n, now);
	/* even when all was dropped: HELD tells the server what the keys did */
	send_input_queue(core, now);
	return queued == n;
}

void slim_console_core_track_input(struct slim_console_core *core,
		const struct slim_wire_input *events, size_t n)
{
	slim_input_queue_track(&core->input, events, n);
}

void slim_console_core_set_ack_delay(struct slim_console_core *core, bool on)
{
	core->delay.enabled = on;
}

static uint64_t held_ack_due(const struct slim_console_core *core)
{
	return core->delay.held_us + SLIM_ACK_DELAY_MS * 1000ull;
}

void slim_console_core_tick(struct slim_console_core *core, uint64_t now_us)
{
	if (core->assoc == 0) {
		return;
	}
	struct slim_writer w;
	begin_upstream(core, &w);
	uint8_t stream;
	uint32_t frame;
	bool recover = core_video_wants_key(core->video, now_us, &stream, &frame) &&
		slim_put_video_recover(&w, stream, frame);
	if (slim_input_queue_tick(&core->input, &w, now_us) || recover ||
			(core->delay.held && now_us >= held_ack_due(core))) {
		send_upstream(core, &w);
	}
}

int slim_console_core_timeout_ms(const struct slim_console_core *core, uint64_t now_us)
{
	if (core->assoc == 0) {
		return -1;
	}
	int ms = slim_input_queue_timeout_ms(&core->input, now_us);
	if (core->delay.held) {
		uint64_t due = held_ack_due(core);
		int ack_ms = due <= now_us ? 0 : (int)((due - now_us + 999) / 1000);
		ms = ms < 0 || ack_ms < ms ? ack_ms : ms;
	}
	return ms;
}

bool slim_console_core_send_card(struct slim_console_core *core,
		const struct slim_wire_card *card)
{
	struct slim_writer w;
	begin_upstream(core, &w);
	if (!slim_put_card(&w, card)) {
		return false;
	}
	send_upstream(core, &w);
	return true;
}

bool slim_console_core_send_audio_report(struct slim_console_core *core,
		const struct slim_wire_audio_report *report)
{
	struct slim_writer w;
	begin_upstream(core, &w);
	if (core->assoc == 0 || !slim_put_audio_report(&w, report)) {
		return false;
	}
	send_upstream(core, &w);
	return true;
}

uint32_t slim_console_core_assoc(const struct slim_console_core *core)
{
	return core->assoc;
}

static void push_damage(void *data, struct slim_rect r)
{
	struct slim_console_core *core = data;
	if (core->frame.n_damage == MAX_DAMAGE) {
		/* Too many to track one by one: keep their bounds. */
		struct slim_rect b = core->frame.damage[0];
		uint32_t x2 = b.x + b.w, y2 = b.y + b.h;
		for (size_t i = 1; i < core->frame.n_damage; i++) {
			struct slim_rect d = core->frame.damage[i];
			b.x = d.x < b.x ? d.x : b.x;
			b.y = d.y < b.y ? d.y : b.y;
			x2 = d.x + d.w > x2 ? d.x + d.w : x2;
			y2 = d.y + d.h > y2 ? d.y + d.h : y2;
		}
		b.w = (uint16_t)(x2 - b.x);
		b.h = (uint16_t)(y2 - b.y);
		core->frame.damage[0] = b;
		core->frame.n_damage = 1;
	}
	core->frame.damage[core->frame.n_damage++] = r;
}

static void add_damage(struct slim_console_core *core, uint8_t type, struct slim_rect r)
{
	core->stats.commands[type]++;
	core->stats.pixels[type] += (uint64_t)r.w * r.h;
	push_damage(core, r);
}

/* Reports the gap [first, last] at once; 0 is no sequence number, so skip it. */
static void nack_gap(struct slim_console_core *core, uint32_t first, uint32_t last)
{
	struct slim_wire_seq_range ranges[2];
	size_t n = 0;
	if (first == 0) {
		first = 1;
	}
	if (last < first) {
		/* wrapped: [first, UINT32_MAX] and [1, last] */
		ranges[n++] = (struct slim_wire_seq_range){ first, UINT32_MAX };
		first = 1;
	}
	if (last != 0 && first <= last) {
		ranges[n++] = (struct slim_wire_seq_range){ first, last };
	}
	if (n == 0) {
		return;
	}
	struct slim_writer w;
	begin_upstream(core, &w);
	slim_put_nack(&w, ranges, n, 0);
	send_upstream(core, &w);
}

/* ACK the frame, repeating every loss the window knows of in case a NACK was lost. */
static void ack_frame(struct slim_console_core *core, const struct slim_wire_frame_end *fe,
		uint64_t echo_us)
{
	struct slim_writer w;
	begin_upstream(core, &w);
	/* As many ranges as fit beside the ACK; past that, ask for a repaint. */
	size_t fit = (core->up.mtu - sizeof(struct slim_wire_dgram) - 2 * sizeof(struct slim_wire_cmd) -
		sizeof(struct slim_wire_ack) - sizeof(struct slim_wire_nack)) /
		sizeof(struct slim_wire_seq_range);
	fit = fit < SLIM_NACK_MAX_RANGES ? fit : SLIM_NACK_MAX_RANGES;
	struct slim_wire_seq_range ranges[SLIM_NACK_MAX_RANGES];
	bool overflow;
	size_t n = slim_seq_window_lost(&core->window, fe->report_from, ranges, fit, &overflow);
	if (n > 0 || overflow) {
		slim_put_nack(&w, ranges, n, overflow ? SLIM_NACK_REPAINT : 0);
	}
	struct slim_wire_ack ack = {
		.frame = fe->frame,
		.highest_seq = core->window.highest,
		.received_us = core->frame.received_us,
		.applied_us = slim_now_us(),
		.echo_us = echo_us,
	};
	/*
	 * Nothing lost, nothing held yet and a frame of one datagram (a key's
	 * echo): the ACK waits for the next datagram we send. A second frame
	 * (the server may be waiting to send a third) or a loss sends at once,
	 * the newest ACK covering both. So does the ACK of a frame of several
	 * datagrams: the server learns the link's rate from it, and an ACK is
	 * little beside such a frame.
	 */
	if (core->delay.enabled && w.count == 0 && !core->delay.held && core->frame.dgrams <= 1) {
		core->delay.held_ack = ack;
		core->delay.held_us = ack.applied_us;
		core->delay.held = true;
		return;
	}
	core->delay.held = false;
	slim_put_ack(&w, &ack);
	send_upstream(core, &w);
}

static void apply_cursor_image(struct slim_console_core *core, const struct slim_cmd *cmd)
{
	const struct slim_wire_cursor_image *h = &cmd->cursor_image.hdr;
	struct slim_console_cursor *c = &core->pointer.cursor;
	if (h->serial != core->pointer.serial || h->w != c->w || h->h != c->h) {
		memset(core->pointer.px, 0, sizeof(core->pointer.px));
		core->pointer.serial = h->serial;
	}
	c->pixels = core->pointer.px;
	c->w = h->w;
	c->h = h->h;
	c->hot_x = h->hot_x;
	c->hot_y = h->hot_y;
	memcpy(core->pointer.px + (size_t)h->row * h->w, cmd->cursor_image.pixels,
		(size_t)h->w * h->rows * 4);
}

static void apply(struct slim_console_core *core, const struct slim_cmd *cmd,
		uint64_t time_us)
{
	const struct slim_fb *fb = &core->fb;
	switch (cmd->type) {
	case SLIM_CMD_FILL:
		slim_fb_fill(fb, cmd->fill.r, cmd->fill.color);
		add_damage(core, cmd->type, cmd->fill.r);
		break;
	case SLIM_CMD_SET:
		slim_fb_set(fb, cmd->set.r, cmd->set.data, cmd->flags);
		add_damage(core, cmd->type, cmd->set.r);
		break;
	case SLIM_CMD_BITMAP:
		slim_fb_bitmap(fb, cmd->bitmap.r, cmd->bitmap.fg, cmd->bitmap.bg, cmd->bitmap.bits);
		add_damage(core, cmd->type, cmd->bitmap.r);
		break;
	case SLIM_CMD_PALETTE:
		slim_fb_palette(fb, &cmd->palette, cmd->flags);
		add_damage(core, cmd->type, cmd->palette.r);
		break;
	case SLIM_CMD_CACHE_STORE:
		slim_pixel_cache_apply(&core->cache, fb, cmd);
		break;
	case SLIM_CMD_CACHE_DRAW:
		slim_pixel_cache_apply(&core->cache, fb, cmd);
		add_damage(core, cmd->type, cmd->cache.r);
		break;
	case SLIM_CMD_COPY:
		slim_fb_copy(fb, cmd->copy.src, cmd->copy.dx, cmd->copy.dy);
		add_damage(core, cmd->type, (struct slim_rect){ cmd->copy.dx, cmd->copy.dy,
			cmd->copy.src.w, cmd->copy.src.h });
		break;
	case SLIM_CMD_CSCS:
		slim_fb_cscs(fb, &cmd->cscs, core->dec.cscs);
		add_damage(core, cmd->type, cmd->cscs.pdst);
		core->stats.cscs_src_w = cmd->cscs.src_w;
		core->stats.cscs_src_h = cmd->cscs.src_h;
		core->stats.cscs_dst_w = cmd->cscs.dst.w;
		core->stats.cscs_dst_h = cmd->cscs.dst.h;
		break;
	case SLIM_CMD_VIDEO:
		core_video_apply(core->video, fb, cmd, slim_now_us(), push_damage, core);
		break;
	case SLIM_CMD_CURSOR_IMAGE:
		apply_cursor_image(core, cmd);
		break;
	case SLIM_CMD_CURSOR_POS:
		core->pointer.cursor.x = cmd->cursor_pos.x;
		core->pointer.cursor.y = cmd->cursor_pos.y;
		core->pointer.cursor.visible = cmd->cursor_pos.visible;
		if (core->backend && core->backend->impl->cursor) {
			core->backend->impl->cursor(core->backend, &core->pointer.cursor);
		}
		break;
	case SLIM_CMD_INPUT_ACK:
		slim_input_queue_ack(&core->input, cmd->input_ack.next, slim_now_us());
		break;
	case SLIM_CMD_FRAME_END:
		if (core->backend) {
			core->backend->impl->present(core->backend, fb, core->frame.damage, core->frame.n_damage);
		}
		core->frame.n_damage = 0;
		core->stats.frames++;
		/* the round trip is the path's: what decoding and presenting took is added */
		ack_frame(core, &cmd->frame_end, time_us + (slim_now_us() - core->dec.arrived_us));
		if (core->events && core->events->presented) {
			core->events->presented(core->events_data, cmd->frame_end.frame, slim_now_us());
		}
		core->frame.received_us = 0;
		core->frame.dgrams = 0;
		break;
	}
}

/*
 * Decodes the whole datagram before touching a pixel, expanding LZ4 into
 * scratch memory, so that a datagram that is bad anywhere changes nothing.
 */
static enum slim_error decode_all(struct slim_console_core *core, struct slim_reader *r,
		size_t *n_cmds)
{
	size_t n = 0, lz4_used = 0;
	slim_pixel_cache_begin(&core->cache);
	for (;;) {
		if (n == core->dec.max_cmds) {
			/* more commands than a datagram of SLIM_MAX_MTU bytes can hold */
			return SLIM_ERR_LENGTH;
		}
		struct slim_cmd *cmd = &core->dec.cmds[n];
		enum slim_error err = slim_reader_next(r, cmd);
		if (err != SLIM_OK) {
			return err;
		}
		if (cmd->type == 0) {
			break;
		}
		if (cmd->type == SLIM_CMD_CACHE_STORE || cmd->type == SLIM_CMD_CACHE_DRAW) {
			err = slim_pixel_cache_check(&core->cache, cmd);
			if (err != SLIM_OK) {
				return err;
			}
		}
		if (cmd->type == SLIM_CMD_SET && (cmd->flags & SLIM_SET_LZ4)) {
			size_t raw = slim_set_raw_len(cmd->set.r, cmd->flags);
			if (raw > LZ4_SCRATCH - lz4_used || cmd->set.len > INT32_MAX) {
				return SLIM_ERR_LZ4;
			}
			uint8_t *out = core->dec.lz4 + lz4_used;
			int got = LZ4_decompress_safe((const char *)cmd->set.data, (char *)out,
				(int)cmd->set.len, (int)raw);
			if (got < 0 || (size_t)got != raw) {
				return SLIM_ERR_LZ4;
			}
			cmd->set.data = out;
			cmd->set.len = raw;
			cmd->flags &= (uint8_t)~SLIM_SET_LZ4;
			lz4_used += raw;
		}
		n++;
	}
	*n_cmds = n;
	return SLIM_OK;
}

static enum slim_error reject(struct slim_console_core *core, enum slim_error err,
		uint32_t seq)
{
	core->stats.errors[err]++;
	core->stats.bad++;
	/*
	 * A datagram that names one lost on the way as its dictionary (the
	 * rest of a frame's chain, slim-history.h) is what a loss costs, not
	 * bad input.
	 */
	if (slim_ratelimit(&core->log_limit, slim_now_us())) {
		slim_log(err == SLIM_ERR_HISTORY ? SLIM_LOG_DEBUG : SLIM_LOG_ERROR,
			"console: dropped datagram %u: %s", seq, slim_error_str(err));
	}
	return err;
}

/* A datagram that began with AUDIO: all of it AUDIO, or none of it is played. */
static enum slim_error receive_audio(struct slim_console_core *core, struct slim_reader r,
		const struct slim_dgram *hdr)
{
	struct slim_reader check = r;
	struct slim_cmd cmd;
	enum slim_error err;
	while ((err = slim_reader_next(&check, &cmd)) == SLIM_OK && cmd.type) {
		if (cmd.type != SLIM_CMD_AUDIO) {
			err = SLIM_ERR_FIELD;
			break;
		}
	}
	if (err != SLIM_OK) {
		return reject(core, err, hdr->seq);
	}
	core->stats.audio++;
	for (bool again = false; slim_reader_next(&r, &cmd) == SLIM_OK && cmd.type; again = true) {
		if (core->events && core->events->audio) {
			core->events->audio(core->events_data, &cmd, again, hdr->time_us);
		}
	}
	return SLIM_OK;
}

/*
 * A datagram the sequence has not seen: expanded, decoded whole, then
 * applied; a gap before it is reported at once.
 */
static enum slim_error receive_new(struct slim_console_core *core, struct slim_reader *r,
		struct slim_dgram *hdr, const uint8_t *buf, size_t len)
{
	enum slim_error err = slim_zstd_reader_init(core->dec.zstd, core->dec.inflated,
		core->dec.history, r, hdr, buf, len, false, (uint16_t)core->fb.width,
		(uint16_t)core->fb.height);
	if (err != SLIM_OK) {
		/* Not marked as applied: the next ACK reports it lost and it is repainted. */
		return reject(core, err, hdr->seq);
	}
	/* what it says, kept for later datagrams to name as their dictionary */
	const uint8_t *cmds = r->p;
	size_t cmds_len = (size_t)(r->end - r->p);
	size_t n;
	err = decode_all(core, r, &n);
	if (err != SLIM_OK) {
		/* Not marked as applied: the next ACK reports it lost and it is repainted. */
		return reject(core, err, hdr->seq);
	}
	uint32_t prev = core->window.highest;
	slim_seq_window_mark(&core->window, hdr->seq);
	if (hdr->seq != prev + 1 && !(prev == UINT32_MAX && hdr->seq == 1)) {
		nack_gap(core, prev + 1, hdr->seq - 1);
	}
	uint64_t now = slim_now_us();
	/* an acknowledgement of input alone is no part of a frame */
	if (!(n == 1 && core->dec.cmds[0].type == SLIM_CMD_INPUT_ACK)) {
		core->frame.received_us = core->frame.received_us ? core->frame.received_us : now;
		core->frame.dgrams++;
	}
	for (size_t i = 0; i < n; i++) {
		apply(core, &core->dec.cmds[i], hdr->time_us);
	}
	slim_history_add(core->dec.history, hdr->seq, cmds, cmds_len);
	core->stats.applied++;
	core->stats.bytes += len;
	/* an acknowledgement may have made room for events that did not fit before */
	slim_console_core_tick(core, now);
	return SLIM_OK;
}

enum slim_error slim_console_core_receive(struct slim_console_core *core,
		const uint8_t *buf, size_t len)
{
	return slim_console_core_receive_at(core, buf, len, slim_now_us());
}

enum slim_error slim_console_core_receive_at(struct slim_console_core *core,
		const uint8_t *buf, size_t len, uint64_t arrived_us)
{
	core->stats.datagrams++;
	core->dec.arrived_us = arrived_us;
	struct slim_reader r;
	struct slim_dgram hdr;
	enum slim_error err = slim_reader_init(&r, &hdr, buf, len, false,
		(uint16_t)core->fb.width, (uint16_t)core->fb.height);
	if (err != SLIM_OK) {
		return reject(core, err, 0);
	}
	if (hdr.assoc != core->assoc || core->assoc == 0) {
		return reject(core, SLIM_ERR_ASSOC, hdr.seq);
	}
	/*
	 * A refusal may come from a server that restarted and numbers from 1
	 * again: it is outside the sequence and changes no pixel.
	 */
	/*
	 * only these two are decoded ahead: the pixels' datagrams are not
	 * decoded twice, and are never compressed
	 */
	uint8_t type = (hdr.flags & SLIM_DGRAM_ZSTD) ? 0 : slim_reader_peek_type(&r);
	struct slim_reader peek = r;
	struct slim_cmd cmd;
	bool first = (type == SLIM_CMD_REFUSE || type == SLIM_CMD_AUDIO) &&
		slim_reader_next(&peek, &cmd) == SLIM_OK;
	if (first && hdr.count == 1 && cmd.type == SLIM_CMD_REFUSE) {
		if (core->events && core->events->refused) {
			core->events->refused(core->events_data, cmd.refuse.reason, cmd.refuse.text,
				cmd.refuse.len);
		}
		return SLIM_OK;
	}
	/*
	 * Sound is outside the sequence too: a datagram of AUDIO commands, a
	 * packet and copies of those before it; a packet lost in every copy is
	 * concealed, never repaired.
	 */
	if (first && cmd.type == SLIM_CMD_AUDIO) {
		return receive_audio(core, r, &hdr);
	}
	switch (slim_seq_window_check(&core->window, hdr.seq)) {
	case SLIM_SEQ_DUPLICATE:
		core->stats.duplicates++;
		return SLIM_OK;
	case SLIM_SEQ_LATE:
		core->stats.late++;
		return SLIM_OK;
	case SLIM_SEQ_NEW:
		break;
	}
	return receive_new(core, &r, &hdr, buf, len);
}
