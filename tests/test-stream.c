/*
 * The property the whole wire rests on: whatever the server's framebuffer
 * does, after each frame the console's framebuffer equals it byte for
 * byte; and when datagrams are lost, duplicated or reordered, NACK/ACK
 * recovery brings the console back to byte-exact.
 *
 * Random framebuffers (text, UI, photo), random damage (over-reported too),
 * moves with hints, scrolls without hints, tiny changes in big damage.
 *
 * Meanwhile the console types: through the same network, every key event
 * reaches the server's input rule (src/compositor/stream/input-seq.c) exactly
 * once and in order, and nothing is left held.
 */
#include <stdlib.h>
#include <string.h>
#include "input-seq.h"
#include "console-core.h"
#include "content.h"
#include "encoder.h"
#include "test-util.h"

#define MAX_QUEUE 8192
#define MAX_KEYS 1024

struct packet {
	size_t len;
	uint8_t *buf;
};

struct queue {
	size_t n;
	struct packet p[MAX_QUEUE];
};

static void queue_push(void *data, const uint8_t *buf, size_t len)
{
	struct queue *q = data;
	assert_true(q->n < MAX_QUEUE);
	q->p[q->n].buf = malloc(len);
	assert_non_null(q->p[q->n].buf);
	memcpy(q->p[q->n].buf, buf, len);
	q->p[q->n].len = len;
	q->n++;
}

static void queue_clear(struct queue *q)
{
	for (size_t i = 0; i < q->n; i++) {
		free(q->p[i].buf);
	}
	q->n = 0;
}

/*
 * What the link does to datagrams, in percent. `drop`: the chance that the
 * tail of what a frame sent never leaves (the pacer dropped it for a newer
 * frame, and told the encoder).
 */
struct link {
	uint32_t loss, dup, reorder, up_loss, drop;
};

struct stream {
	struct test_rng rng;
	struct content_rng crng;
	struct slim_fb fb;
	struct slim_encoder *enc;
	struct slim_console_core *console;
	struct queue down, up;
	bool frame_ended; /* the last datagram down carries a FRAME_END */
	struct link link;
	pixman_region32_t damage;
	struct slim_move_hint moves[4];
	size_t n_moves;
	/* tiles that come back (glyphs, icons, an animation's frames): what a cache is for */
	struct slim_fb sprites;

	/* typing: what the console sent, what the server applied */
	struct test_rng krng;
	struct slim_input_seq input;
	bool input_seen;
	struct slim_wire_input typed[MAX_KEYS], applied[MAX_KEYS];
	size_t n_typed, n_applied;
	bool shift;
};

static void apply_input(void *data, const struct slim_wire_input *ev)
{
	struct stream *s = data;
	assert_true(s->n_applied < MAX_KEYS);
	s->applied[s->n_applied++] = *ev;
}

/* The compositor's part: INPUT and HELD through its rule, then an INPUT_ACK. */
static void handle_other(void *data, const struct slim_cmd *cmd)
{
	struct stream *s = data;
	if (cmd->type == SLIM_CMD_INPUT) {
		slim_input_seq_input(&s->input, cmd, apply_input, s);
		s->input_seen = true;
	} else if (cmd->type == SLIM_CMD_HELD) {
		slim_input_seq_held(&s->input, cmd, apply_input, s);
		s->input_seen = true;
	}
}

/* The last datagrams queued are dropped before they leave, and the encoder told. */
static void drop_tail(struct stream *s)
{
	struct queue *q = &s->down;
	if (q->n == 0 || test_rand_below(&s->rng, 100) >= s->link.drop) {
		return;
	}
	size_t keep = test_rand_below(&s->rng, (uint32_t)q->n);
	struct slim_wire_dgram first, last;
	memcpy(&first, q->p[keep].buf, sizeof(first));
	memcpy(&last, q->p[q->n - 1].buf, sizeof(last));
	assert_int_equal(last.seq - first.seq, q->n - 1 - keep); /* in order, none missing */
	slim_encoder_dropped(s->enc, first.seq, last.seq);
	if (s->frame_ended) {
		/* its FRAME_END never left: the encoder waits for no ACK of it */
		assert_int_equal(slim_encoder_frames_in_flight(s->enc), 0);
	}
	for (size_t i = keep; i < q->n; i++) {
		free(q->p[i].buf);
	}
	q->n = keep;
}

static void deliver(struct stream *s)
{
	struct queue *q = &s->down;
	drop_tail(s);
	s->frame_ended = false;
	/* Reorder: swap neighbours before delivery. */
	for (size_t i = 0; i + 1 < q->n; i++) {
		if (test_rand_below(&s->rng, 100) < s->link.reorder) {
			struct packet t = q->p[i];
			q->p[i] = q->p[i + 1];
			q->p[i + 1] = t;
		}
	}
	for (size_t i = 0; i < q->n; i++) {
		if (test_rand_below(&s->rng, 100) < s->link.loss) {
			continue;
		}
		int copies = test_rand_below(&s->rng, 100) < s->link.dup ? 2 : 1;
		for (int k = 0; k < copies; k++) {
			/* after a loss, the rest of a frame's chain names a datagram it lacks */
			enum slim_error err = slim_console_core_receive(s->console, q->p[i].buf,
				q->p[i].len);
			if (err != SLIM_ERR_HISTORY) {
				assert_int_equal(err, SLIM_OK);
			}
		}
	}
	queue_clear(q);
	for (size_t i = 0; i < s->up.n; i++) {
		if (test_rand_below(&s->rng, 100) < s->link.up_loss) {
			continue;
		}
		s->input_seen = false;
		assert_int_equal(slim_encoder_receive(s->enc, s->up.p[i].buf, s->up.p[i].len,
			handle_other, s), SLIM_OK);
		if (s->input_seen) {
			slim_encoder_input_ack(s->enc, slim_input_seq_next(&s->input));
		}
	}
	queue_clear(&s->up);
	/* as the compositor's timer does, when no frame takes the acknowledgement along */
	if (test_rand_below(&s->krng, 2) == 0) {
		slim_encoder_flush_input_ack(s->enc);
	}
}

/* A key or two typed, sometimes shifted; recorded as sent. */
static void type_keys(struct stream *s)
{
	struct slim_wire_input ev[4];
	size_t n = 0;
	if (s->shift || test_rand_below(&s->krng, 5) == 0) {
		s->shift = !s->shift;
		ev[n++] = (struct slim_wire_input){ .kind = SLIM_INPUT_KEY, .code = 42,
			.value = s->shift };
	}
	uint16_t code = (uint16_t)test_rand_range(&s->krng, 16, 41); /* shift is 42 */
	ev[n++] = (struct slim_wire_input){ .kind = SLIM_INPUT_KEY, .code = code, .value = 1 };
	ev[n++] = (struct slim_wire_input){ .kind = SLIM_INPUT_KEY, .code = code, .value = 0 };
	if (s->n_typed + n > MAX_KEYS) {
		return;
	}
	assert_true(slim_console_core_send_input(s->console, ev, n));
	memcpy(s->typed + s->n_typed, ev, n * sizeof(*ev));
	s->n_typed += n;
}

static void stream_init(struct stream *s, uint32_t w, uint32_t h, uint64_t salt,
		const struct slim_encoder_config *cfg)
{
	memset(s, 0, sizeof(*s));
	test_rng_init(&s->rng, salt);
	s->crng.s = test_rand(&s->rng) | 1;
	s->fb = test_fb_create(w, h, &s->rng);
	/* X is 0xff on the console; make the server's so too, so memcmp can speak. */
	for (uint32_t y = 0; y < h; y++) {
		for (uint32_t x = 0; x < w; x++) {
			*slim_fb_row(&s->fb, x, y) |= SLIM_OPAQUE;
		}
	}
	s->console = slim_console_core_create(w, h, cfg->mtu ? cfg->mtu : SLIM_DEFAULT_MTU,
		NULL, queue_push, &s->up);
	assert_non_null(s->console);
	slim_console_core_hello(s->console, "test", cfg->assoc);
	queue_clear(&s->up);
	s->enc = slim_encoder_create(w, h, cfg, queue_push, &s->down);
	assert_non_null(s->enc);
	pixman_region32_init(&s->damage);
	/* four 64x16 sprites side by side, text on their own backgrounds */
	s->sprites = test_fb_create(4 * 64, 16, &s->rng);
	for (uint16_t i = 0; i < 4; i++) {
		struct slim_rect r = { (uint16_t)(i * 64), 0, 64, 16 };
		slim_fb_fill(&s->sprites, r, 0x00202020u * (i + 1));
		content_text_lines(&s->sprites, r, 0x00202020u * (i + 1), &s->crng);
	}
	/* its own generator: the pictures stay those of the seed */
	test_rng_init(&s->krng, salt + 0x4b455953);
	slim_input_seq_reset(&s->input, 1);
}

static void stream_finish(struct stream *s)
{
	slim_encoder_destroy(s->enc);
	slim_console_core_destroy(s->console);
	queue_clear(&s->down);
	queue_clear(&s->up);
	test_fb_destroy(&s->fb);
	test_fb_destroy(&s->sprites);
	pixman_region32_fini(&s->damage);
}

static struct slim_rect random_rect(struct stream *s, uint32_t max_w, uint32_t max_h)
{
	uint32_t w = test_rand_range(&s->rng, 1, max_w < s->fb.width ? max_w : s->fb.width);
	uint32_t h = test_rand_range(&s->rng, 1, max_h < s->fb.height ? max_h : s->fb.height);
	return (struct slim_rect){ (uint16_t)test_rand_below(&s->rng, s->fb.width - w + 1),
		(uint16_t)test_rand_below(&s->rng, s->fb.height - h + 1), (uint16_t)w, (uint16_t)h };
}

static void damage(struct stream *s, struct slim_rect r)
{
	pixman_region32_union_rect(&s->damage, &s->damage, r.x, r.y, r.w, r.h);
}

/* A window moved: its pixels move, what it uncovered is repainted. */
static void op_move(struct stream *s)
{
	struct slim_rect r = random_rect(s, s->fb.width / 2, s->fb.height / 2);
	int32_t dx = (int32_t)test_rand_range(&s->rng, 0, 40) - 20;
	int32_t dy = (int32_t)test_rand_range(&s->rng, 0, 40) - 20;
	if (r.x + dx < 0 || r.y + dy < 0 || r.x + r.w + dx > (int32_t)s->fb.width ||
			r.y + r.h + dy > (int32_t)s->fb.height) {
		return;
	}
	slim_fb_copy(&s->fb, r, (uint16_t)(r.x + dx), (uint16_t)(r.y + dy));
	damage(s, r);
	damage(s, (struct slim_rect){ (uint16_t)(r.x + dx), (uint16_t)(r.y + dy), r.w, r.h });
	if (s->n_moves < 4) {
		s->moves[s->n_moves++] = (struct slim_move_hint){ .src = r, .dx = dx, .dy = dy };
	}
	/* What the window uncovered: new content where it was and is no longer. */
	pixman_region32_t old, now;
	pixman_region32_init_rect(&old, r.x, r.y, r.w, r.h);
	pixman_region32_init_rect(&now, r.x + dx, r.y + dy, r.w, r.h);
	pixman_region32_subtract(&old, &old, &now);
	pixman_region32_fini(&now);
	int n;
	const pixman_box32_t *b = pixman_region32_rectangles(&old, &n);
	for (int i = 0; i < n; i++) {
		slim_fb_fill(&s->fb, (struct slim_rect){ (uint16_t)b[i].x1, (uint16_t)b[i].y1,
			(uint16_t)(b[i].x2 - b[i].x1), (uint16_t)(b[i].y2 - b[i].y1) }, 0x336699);
	}
	pixman_region32_fini(&old);
}

/* A terminal scrolled: rows move up, new text at the bottom, no hint. */
static void op_scroll(struct stream *s)
{
	struct slim_rect r = random_rect(s, s->fb.width, s->fb.height);
	if (r.h < 40) {
		return;
	}
	uint32_t k = test_rand_range(&s->rng, 1, r.h / 2);
	struct slim_rect src = { r.x, (uint16_t)(r.y + k), r.w, (uint16_t)(r.h - k) };
	slim_fb_copy(&s->fb, src, r.x, r.y);
	content_text_lines(&s->fb, (struct slim_rect){ r.x, (uint16_t)(r.y + r.h - k), r.w,
		(uint16_t)k }, 0xffffff, &s->crng);
	damage(s, r);
}

static void mutate(struct stream *s)
{
	uint32_t ops = test_rand_range(&s->rng, 1, 4);
	for (uint32_t i = 0; i < ops; i++) {
		switch (test_rand_below(&s->rng, 9)) {
		case 0:
		case 1: {
			struct slim_rect r = random_rect(s, 200, 150);
			content_paint(&s->fb, r, (enum content_kind)test_rand_below(&s->rng, CONTENT_KINDS),
				&s->crng);
			damage(s, r);
			break;
		}
		case 2:
			op_move(s);
			break;
		case 3:
			op_scroll(s);
			break;
		case 6:
		case 7:
		case 8: {
			/* A sprite shown again, on the tile grid where it fits. */
			uint32_t k = test_rand_below(&s->rng, 4);
			if (s->fb.width < 64 || s->fb.height < 16) {
				break;
			}
			struct slim_rect r = { (uint16_t)(test_rand_below(&s->rng, s->fb.width / 64) * 64),
				(uint16_t)(test_rand_below(&s->rng, s->fb.height / 16) * 16), 64, 16 };
			for (uint32_t y = 0; y < 16; y++) {
				memcpy(slim_fb_row(&s->fb, r.x, r.y + y), slim_fb_row(&s->sprites, k * 64, y),
					64 * 4);
			}
			damage(s, r);
			break;
		}
		case 4: {
			/* Over-reported damage: nothing changed. */
			damage(s, random_rect(s, s->fb.width, s->fb.height));
			break;
		}
		default: {
			/* One pixel changed inside a big damaged area. */
			struct slim_rect r = random_rect(s, s->fb.width, s->fb.height);
			*slim_fb_row(&s->fb, r.x + r.w / 2, r.y + r.h / 2) ^= 0x00010203;
			damage(s, r);
			break;
		}
		}
	}
}

static size_t frame(struct stream *s)
{
	struct slim_frame f = {
		.fb = &s->fb, .damage = &s->damage, .moves = s->moves, .n_moves = s->n_moves,
	};
	size_t sent = slim_encoder_frame(s->enc, &f);
	s->frame_ended = sent > 0;
	pixman_region32_clear(&s->damage);
	s->n_moves = 0;
	if (sent == 0) {
		/* nothing took a pending INPUT_ACK along */
		slim_encoder_flush_input_ack(s->enc);
	}
	return sent;
}

static void assert_converges(struct stream *s)
{
	struct link lossy = s->link;
	s->link = (struct link){ 0 };
	const struct slim_console_stats *st = slim_console_core_stats(s->console);
	for (int round = 0; round < 20; round++) {
		deliver(s);
		if (slim_encoder_frames_in_flight(s->enc) > 0) {
			/* The ACK (or the frame's last datagram) was lost: the timer fires. */
			slim_encoder_timeout(s->enc);
		}
		/* the console's retransmission timer, long due */
		slim_console_core_tick(s->console, slim_now_us() + 1000000);
		if (frame(s) == 0 && !slim_encoder_needs_frame(s->enc) &&
				slim_encoder_frames_in_flight(s->enc) == 0 &&
				st->input.acked == s->n_typed && s->up.n == 0) {
			break;
		}
	}
	test_fb_assert_equal(&s->fb, slim_console_core_fb(s->console));
	/* every key once, in order, none made up, none left held */
	assert_int_equal(st->input.acked, s->n_typed);
	assert_int_equal(st->input.sent, s->n_typed);
	assert_int_equal(s->n_applied, s->n_typed);
	assert_memory_equal(s->applied, s->typed, s->n_typed * sizeof(s->typed[0]));
	assert_int_equal(slim_input_seq_held_count(&s->input), s->shift ? 1 : 0);
	s->link = lossy;
}

/* datagrams the console could not use, as they named one lost: what a chain costs */
static uint64_t chain_losses;

static void run(uint32_t w, uint32_t h, uint64_t salt, struct link link,
		const struct slim_encoder_config *cfg, int frames)
{
	bool clean = link.loss == 0 && link.dup == 0 && link.reorder == 0 && link.up_loss == 0 &&
		link.drop == 0;
	struct stream *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	stream_init(s, w, h, salt, cfg);
	s->link = link;
	/* The first frame is a full repaint of the noise the framebuffer starts with. */
	damage(s, (struct slim_rect){ 0, 0, (uint16_t)w, (uint16_t)h });
	for (int i = 0; i < frames; i++) {
		if (i > 0) {
			mutate(s);
			type_keys(s);
		}
		frame(s);
		deliver(s);
		if (clean) {
			test_fb_assert_equal(&s->fb, slim_console_core_fb(s->console));
		} else if (i % 10 == 9) {
			assert_converges(s);
		}
	}
	assert_converges(s);

	/* Idle: nothing changed, nothing is sent, over-reported damage or not. */
	damage(s, (struct slim_rect){ 0, 0, (uint16_t)w, (uint16_t)h });
	assert_int_equal(frame(s), 0);
	assert_int_equal(frame(s), 0);

	const struct slim_encoder_stats *st = slim_encoder_stats(s->enc);
	assert_true(st->commands[SLIM_STAT_FILL] > 0);
	assert_true(st->commands[SLIM_STAT_BITMAP] > 0);
	assert_true(st->commands[SLIM_STAT_SET] + st->commands[SLIM_STAT_SET_LZ4] > 0);
	if (cfg->palette) {
		assert_true(st->commands[SLIM_STAT_PALETTE] > 0);
	}
	if (cfg->zstd) {
		assert_true(st->compressed > 0);
	}
	const struct slim_console_stats *cs = slim_console_core_stats(s->console);
	if (cfg->history && clean) {
		assert_true(st->with_history > 0);
		assert_true(st->chained > 0);
		assert_int_equal(cs->errors[SLIM_ERR_HISTORY], 0);
	}
	chain_losses += cs->errors[SLIM_ERR_HISTORY];
	if (cfg->cache && frames >= 25) {
		assert_true(st->cache_stores > 0);
		/* under loss a store may never be confirmed in so few frames: correct, not useful */
		if (clean) {
			assert_true(st->commands[SLIM_STAT_CACHE_DRAW] > 0);
		}
	}
	if (clean) {
		/* Under loss, a move whose source awaits repair is rightly sent as pixels. */
		assert_true(st->commands[SLIM_STAT_COPY] > 0);
	}
	if (getenv("SLIM_TEST_VERBOSE")) {
		print_message("link %u/%u/%u/%u: %lu datagrams, %lu bytes (%lu zstd, %lu with history, "
			"%lu chained, %lu unusable, %lu split), %lu kept, "
			"%lu drawn from the cache, %lu recovered, "
			"%lu repaints, %lu late, %lu dup; %zu keys, %lu input retransmissions\n",
			link.loss, link.dup, link.reorder, link.up_loss, (unsigned long)st->datagrams,
			(unsigned long)st->bytes,
			(unsigned long)st->compressed, (unsigned long)st->with_history,
			(unsigned long)st->chained, (unsigned long)cs->errors[SLIM_ERR_HISTORY],
			(unsigned long)st->split,
			(unsigned long)st->cache_stores,
			(unsigned long)st->commands[SLIM_STAT_CACHE_DRAW],
			(unsigned long)st->recovered_seqs,
			(unsigned long)st->repaints,
			(unsigned long)slim_console_core_stats(s->console)->late,
			(unsigned long)slim_console_core_stats(s->console)->duplicates, s->n_typed,
			(unsigned long)slim_console_core_stats(s->console)->input.retransmits);
	}
	if (link.loss > 0 || link.drop > 0) {
		assert_true(st->recovered_seqs > 0);
		assert_true(slim_console_core_stats(s->console)->applied < st->datagrams);
	}
	stream_finish(s);
	free(s);
}

static const struct slim_encoder_config configs[] = {
	{ .assoc = 7, .lz4 = true, .rgb888 = true, .detect_scroll = true },
	{ .assoc = 8, .lz4 = false, .rgb888 = false, .detect_scroll = true },
	{ .assoc = 9, .lz4 = true, .rgb888 = false, .detect_scroll = false, .mtu = 576 },
	{ .assoc = 10, .lz4 = false, .rgb888 = true, .detect_scroll = true, .mtu = 9000 },
	/* what today's console says it takes: PALETTE, datagrams through zstd, a cache */
	{ .assoc = 11, .lz4 = true, .rgb888 = true, .palette = true, .zstd = true,
		.cache = true, .history = true, .detect_scroll = true },
	{ .assoc = 12, .lz4 = true, .rgb888 = false, .palette = true, .cache = true,
		.detect_scroll = true, .mtu = 576 },
	/* the smallest datagrams: compressed ones that overflow are split most often */
	{ .assoc = 13, .lz4 = true, .rgb888 = true, .palette = true, .zstd = true,
		.cache = true, .history = true, .detect_scroll = true, .mtu = SLIM_MIN_MTU },
};

static void test_lossless(void **state)
{
	for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
		run(320, 240, 100 + c, (struct link){ 0 }, &configs[c], 40);
		run(333, 211, 200 + c, (struct link){ 0 }, &configs[c], 25);
	}
}

/* What the pacer drops for newer pixels is repainted like what the network lost. */
static void test_paced_drops(void **state)
{
	for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
		run(320, 240, 600 + c, (struct link){ .drop = 40 }, &configs[c], 30);
		run(320, 240, 700 + c, (struct link){ .drop = 30, .loss = 5, .reorder = 5 },
			&configs[c], 30);
	}
}

static void test_loss(void **state)
{
	chain_losses = 0;
	for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
		run(320, 240, 300 + c, (struct link){ .loss = 5 }, &configs[c], 30);
		run(320, 240, 400 + c, (struct link){ .loss = 20, .up_loss = 10 }, &configs[c], 30);
	}
	/* the rest of a chain after a loss was rejected, and the picture converged all the same */
	assert_true(chain_losses > 0);
}

static void test_dup_reorder(void **state)
{
	for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
		run(320, 240, 500 + c, (struct link){ .dup = 10, .reorder = 10 }, &configs[c], 30);
		run(256, 200, 600 + c, (struct link){ .loss = 20, .dup = 10, .reorder = 10,
			.up_loss = 20 }, &configs[c], 30);
	}
}

/* A scroll with no hint is found and sent as a COPY, far smaller than the pixels. */
static void test_scroll_is_copy(void **state)
{
	struct slim_encoder_config cfg = { .assoc = 3, .lz4 = true, .rgb888 = true,
		.detect_scroll = true };
	struct stream *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	stream_init(s, 640, 480, 42, &cfg);
	struct slim_rect all = { 0, 0, 640, 480 };
	content_text_lines(&s->fb, all, 0xffffff, &s->crng);
	damage(s, all);
	frame(s);
	deliver(s);
	uint64_t before = slim_encoder_stats(s->enc)->bytes;
	/* Scroll up by one 16-pixel line and write a new last line. */
	slim_fb_copy(&s->fb, (struct slim_rect){ 0, 16, 640, 464 }, 0, 0);
	content_text_lines(&s->fb, (struct slim_rect){ 0, 464, 640, 16 }, 0xffffff, &s->crng);
	damage(s, all);
	frame(s);
	deliver(s);
	test_fb_assert_equal(&s->fb, slim_console_core_fb(s->console));
	const struct slim_encoder_stats *st = slim_encoder_stats(s->enc);
	assert_int_equal(st->commands[SLIM_STAT_COPY], 1);
	/* One new line of text: a few KiB at most, against 900 KiB of raw pixels. */
	assert_true(st->bytes - before < 8192);
	stream_finish(s);
	free(s);
}

/* Refinement: damage over-reported by a client costs nothing. */
static void test_refinement(void **state)
{
	struct slim_encoder_config cfg = { .assoc = 5, .lz4 = true, .rgb888 = true };
	struct stream *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	stream_init(s, 200, 100, 43, &cfg);
	damage(s, (struct slim_rect){ 0, 0, 200, 100 });
	frame(s);
	deliver(s);
	const struct slim_encoder_stats *st = slim_encoder_stats(s->enc);
	uint64_t changed = st->changed_pixels;
	*slim_fb_row(&s->fb, 150, 70) ^= 0x00ffffff;
	damage(s, (struct slim_rect){ 0, 0, 200, 100 });
	assert_true(frame(s) > 0);
	deliver(s);
	assert_int_equal(st->changed_pixels - changed, 1);
	test_fb_assert_equal(&s->fb, slim_console_core_fb(s->console));
	stream_finish(s);
	free(s);
}

/* The types of a downstream datagram's commands, and its INPUT_ACK's number. */
static size_t dgram_types(const struct packet *p, uint8_t *types, size_t max, uint32_t *seq,
		uint32_t *ack)
{
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	assert_int_equal(slim_reader_init(&r, &hdr, p->buf, p->len, false, SLIM_MAX_DIM,
		SLIM_MAX_DIM), SLIM_OK);
	*seq = hdr.seq;
	size_t n = 0;
	while (slim_reader_next(&r, &cmd) == SLIM_OK && cmd.type != 0) {
		assert_true(n < max);
		types[n++] = cmd.type;
		if (cmd.type == SLIM_CMD_INPUT_ACK) {
			*ack = cmd.input_ack.next;
		}
	}
	return n;
}

/* INPUT_ACK rides first in the next datagram, in sequence, or goes alone when flushed. */
static void test_input_ack_placement(void **state)
{
	struct stream *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	const struct slim_encoder_config cfg = { .assoc = 11, .lz4 = true, .rgb888 = true };
	stream_init(s, 64, 48, 700, &cfg);
	uint8_t types[64];
	uint32_t seq, ack = 0;

	/* nothing goes by itself */
	slim_encoder_input_ack(s->enc, 5);
	assert_int_equal(s->down.n, 0);
	/* a later acknowledgement replaces the pending one; the frame carries it first */
	slim_encoder_input_ack(s->enc, 6);
	damage(s, (struct slim_rect){ 0, 0, 64, 48 });
	size_t sent = slim_encoder_frame(s->enc, &(struct slim_frame){ .fb = &s->fb,
		.damage = &s->damage });
	pixman_region32_clear(&s->damage);
	assert_true(sent >= 1);
	size_t n = dgram_types(&s->down.p[0], types, 64, &seq, &ack);
	assert_int_equal(seq, 1);
	assert_true(n >= 2);
	assert_int_equal(types[0], SLIM_CMD_INPUT_ACK);
	assert_int_equal(ack, 6);
	for (size_t i = 1; i < n; i++) {
		assert_int_not_equal(types[i], SLIM_CMD_INPUT_ACK);
	}
	/* taken along: nothing left to flush */
	assert_int_equal(slim_encoder_flush_input_ack(s->enc), 0);
	assert_int_equal(s->down.n, sent);
	deliver(s);
	test_fb_assert_equal(&s->fb, slim_console_core_fb(s->console));

	/* alone, with the next sequence number, when nothing else goes */
	slim_encoder_input_ack(s->enc, 9);
	assert_int_equal(slim_encoder_flush_input_ack(s->enc), 1);
	assert_int_equal(s->down.n, 1);
	n = dgram_types(&s->down.p[0], types, 64, &seq, &ack);
	assert_int_equal(n, 1);
	assert_int_equal(types[0], SLIM_CMD_INPUT_ACK);
	assert_int_equal(ack, 9);
	assert_int_equal(seq, 1 + sent);
	uint32_t alone = seq;
	assert_int_equal(s->down.p[0].len, 24 + 4 + 4);
	assert_int_equal(slim_encoder_flush_input_ack(s->enc), 0);
	/* lost and reported lost: there is nothing to repaint */
	queue_clear(&s->down);
	struct slim_wire_seq_range lost = { alone, alone };
	uint8_t buf[64];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), cfg.assoc, true);
	assert_true(slim_put_nack(&w, &lost, 1, 0));
	size_t len = slim_writer_finish(&w, 2, 0);
	assert_int_equal(slim_encoder_receive(s->enc, buf, len, NULL, NULL), SLIM_OK);
	assert_int_equal(slim_encoder_stats(s->enc)->recovered_seqs, 1);
	assert_int_equal(frame(s), 0);
	assert_int_equal(s->down.n, 0);

	/* a cursor datagram takes it along too */
	slim_encoder_input_ack(s->enc, 10);
	slim_encoder_cursor_pos(s->enc, 3, 4, true);
	assert_int_equal(slim_encoder_flush_cursor(s->enc), 1);
	n = dgram_types(&s->down.p[0], types, 64, &seq, &ack);
	assert_int_equal(seq, alone + 1);
	assert_int_equal(n, 2);
	assert_int_equal(types[0], SLIM_CMD_INPUT_ACK);
	assert_int_equal(types[1], SLIM_CMD_CURSOR_POS);
	assert_int_equal(ack, 10);
	/* an idle session still sends nothing */
	queue_clear(&s->down);
	damage(s, (struct slim_rect){ 0, 0, 64, 48 });
	assert_int_equal(frame(s), 0);
	assert_int_equal(s->down.n, 0);

	/*
	 * A frame timeout while an acknowledgement waits must not take the
	 * datagram that will carry it for settled: the pixels that datagram
	 * carries, lost, are repaired like any others.
	 */
	deliver(s);
	slim_encoder_input_ack(s->enc, 11);
	slim_encoder_timeout(s->enc);
	slim_fb_fill(&s->fb, (struct slim_rect){ 5, 5, 20, 10 }, 0xff123456);
	damage(s, (struct slim_rect){ 5, 5, 20, 10 });
	assert_int_equal(frame(s), 1);
	n = dgram_types(&s->down.p[0], types, 64, &seq, &ack);
	assert_int_equal(types[0], SLIM_CMD_INPUT_ACK);
	assert_int_equal(ack, 11);
	queue_clear(&s->down);
	lost = (struct slim_wire_seq_range){ seq, seq };
	slim_writer_init(&w, buf, sizeof(buf), cfg.assoc, true);
	assert_true(slim_put_nack(&w, &lost, 1, 0));
	len = slim_writer_finish(&w, 3, 0);
	assert_int_equal(slim_encoder_receive(s->enc, buf, len, NULL, NULL), SLIM_OK);
	assert_true(slim_encoder_needs_frame(s->enc));
	assert_int_equal(frame(s), 1);
	deliver(s);
	test_fb_assert_equal(&s->fb, slim_console_core_fb(s->console));
	stream_finish(s);
	free(s);
}

/* The console goes, another comes: a new association, a blank screen. */
static void next_console(struct stream *s, const struct slim_encoder_config *cfg)
{
	slim_console_core_destroy(s->console);
	s->console = slim_console_core_create(s->fb.width, s->fb.height, SLIM_DEFAULT_MTU, NULL,
		queue_push, &s->up);
	assert_non_null(s->console);
	slim_console_core_hello(s->console, "next", cfg->assoc);
	queue_clear(&s->up);
	queue_clear(&s->down);
	s->enc = slim_encoder_create_from(s->enc, s->fb.width, s->fb.height, cfg, queue_push,
		&s->down);
	assert_non_null(s->enc);
}

/*
 * The encoder of a console's next association takes over the last one's
 * model, which holds the old console's picture: the new console, blank,
 * still gets every pixel, though nothing was damaged.
 */
static void test_next_association(void **state)
{
	struct slim_encoder_config cfg = configs[4];
	struct stream *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	stream_init(s, 320, 240, 900, &cfg);
	damage(s, (struct slim_rect){ 0, 0, 320, 240 });
	for (int i = 0; i < 10; i++) {
		mutate(s);
		frame(s);
		deliver(s);
	}
	test_fb_assert_equal(&s->fb, slim_console_core_fb(s->console));
	const uint32_t *model = slim_encoder_model(s->enc)->px;
	cfg.assoc++;
	next_console(s, &cfg);
	assert_ptr_equal(slim_encoder_model(s->enc)->px, model);
	assert_true(frame(s) > 0);
	deliver(s);
	test_fb_assert_equal(&s->fb, slim_console_core_fb(s->console));
	for (int i = 0; i < 10; i++) {
		mutate(s);
		frame(s);
		deliver(s);
		test_fb_assert_equal(&s->fb, slim_console_core_fb(s->console));
	}

	/* a screen of another size: the old memory does not fit, new is made */
	test_fb_destroy(&s->fb);
	s->fb = test_fb_create(200, 150, &s->rng);
	for (uint32_t y = 0; y < 150; y++) {
		for (uint32_t x = 0; x < 200; x++) {
			*slim_fb_row(&s->fb, x, y) |= SLIM_OPAQUE;
		}
	}
	cfg.assoc++;
	next_console(s, &cfg);
	assert_int_equal(slim_encoder_model(s->enc)->width, 200);
	assert_true(frame(s) > 0);
	deliver(s);
	test_fb_assert_equal(&s->fb, slim_console_core_fb(s->console));
	stream_finish(s);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lossless),
		cmocka_unit_test(test_loss),
		cmocka_unit_test(test_paced_drops),
		cmocka_unit_test(test_dup_reorder),
		cmocka_unit_test(test_scroll_is_copy),
		cmocka_unit_test(test_refinement),
		cmocka_unit_test(test_input_ack_placement),
		cmocka_unit_test(test_next_association),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
