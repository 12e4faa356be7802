#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "card.h"
#include "control.h"
#include "decoders.h"
#include "heads-option.h"
#include "slim-clock.h"
#include "slim-log.h"

/* Longer lines are no command this protocol knows; they are reported and skipped. */
#define LINE_BYTES 4096
#define MAX_ARGS 4
/* Pixel and scroll amounts travel as 1/256 in an int32. */
#define FIXED_MAX 8388607.0

struct slim_console_control {
	int fd;
	FILE *out;
	struct slim_console_core *core;
	struct console_decoders *decoders; /* NULL: no codec */
	struct slim_console_link *link;
	struct console_audio *audio; /* NULL: no sound */
	uint32_t last_frame;
	/* `watch X Y`: the pixel whose changes each presented frame reports */
	bool watching;
	uint32_t watch_x, watch_y, watch_px;
	/* --card-reader=stdin: "card" commands are reader 0, told to this */
	void (*card_sink)(void *data, const struct slim_wire_card *card);
	void *card_data;
	struct slim_wire_card card;
	bool quit;
	bool discarding; /* the rest of a line that was too long */
	size_t len;
	char buf[LINE_BYTES];
};

struct slim_console_control *slim_console_control_create(int in_fd, FILE *out,
		struct slim_console_core *core, struct slim_console_link *link)
{
	struct slim_console_control *ctl = calloc(1, sizeof(*ctl));
	if (!ctl) {
		return NULL;
	}
	ctl->fd = in_fd;
	ctl->out = out;
	ctl->core = core;
	ctl->link = link;
	ctl->card.event = SLIM_CARD_REMOVED;
	/* whoever reads the events waits on each line: never keep one back */
	setvbuf(out, NULL, _IOLBF, 0);
	return ctl;
}

void slim_console_control_destroy(struct slim_console_control *ctl)
{
	free(ctl);
}

void slim_console_control_enable_cards(struct slim_console_control *ctl,
		void (*card)(void *data, const struct slim_wire_card *card), void *data)
{
	ctl->card_sink = card;
	ctl->card_data = data;
}

int slim_console_control_fd(const struct slim_console_control *ctl)
{
	return ctl->fd;
}

static void emit(struct slim_console_control *ctl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void emit(struct slim_console_control *ctl, const char *fmt, ...)
{
	va_list args;
	va_start(args, fmt);
	vfprintf(ctl->out, fmt, args);
	va_end(args);
	fputc('\n', ctl->out);
	fflush(ctl->out);
}

void slim_console_control_id(struct slim_console_control *ctl, const char *id)
{
	emit(ctl, "id %s", id);
}

void slim_console_control_connecting(struct slim_console_control *ctl, const char *server,
		const char *why)
{
	if (why) {
		emit(ctl, "connecting %s (%s)", server, why);
	} else {
		emit(ctl, "connecting %s", server);
	}
}

void slim_console_control_attached(struct slim_console_control *ctl, uint32_t assoc)
{
	emit(ctl, "attached %u", assoc);
}

void slim_console_control_frame(struct slim_console_control *ctl, uint32_t frame,
		uint64_t applied_us)
{
	ctl->last_frame = frame;
	emit(ctl, "frame %u %llu", frame, (unsigned long long)applied_us);
	const struct slim_fb *fb = slim_console_core_fb(ctl->core);
	if (ctl->watching && ctl->watch_x < fb->width && ctl->watch_y < fb->height) {
		uint32_t px = fb->px[(size_t)ctl->watch_y * fb->stride + ctl->watch_x] & 0xffffff;
		if (px != ctl->watch_px) {
			ctl->watch_px = px;
			emit(ctl, "pixel %u %u %06x %llu", ctl->watch_x, ctl->watch_y, px,
				(unsigned long long)applied_us);
		}
	}
}

void slim_console_control_set_audio(struct slim_console_control *ctl, struct console_audio *audio)
{
	ctl->audio = audio;
}

void slim_console_control_set_decoders(struct slim_console_control *ctl,
		struct console_decoders *decoders)
{
	ctl->decoders = decoders;
}

void slim_console_control_audio_heard(struct slim_console_control *ctl, bool sound,
		uint64_t heard_us)
{
	emit(ctl, "audio %s %llu", sound ? "onset" : "quiet", (unsigned long long)heard_us);
}

void slim_console_control_refused(struct slim_console_control *ctl, uint16_t reason,
		const char *text)
{
	switch (reason) {
	case SLIM_REFUSE_BUSY:
		emit(ctl, "refused busy %s", text);
		break;
	case SLIM_REFUSE_UNKNOWN:
		emit(ctl, "refused unknown");
		break;
	case SLIM_REFUSE_TOO_LARGE:
		emit(ctl, "refused too-large %s", text);
		break;
	default:
		emit(ctl, "refused %u %s", reason, text);
		break;
	}
}

void slim_console_control_manager_connecting(struct slim_console_control *ctl, const char *manager,
		const char *why)
{
	if (why) {
		emit(ctl, "manager connecting %s (%s)", manager, why);
	} else {
		emit(ctl, "manager connecting %s", manager);
	}
}

void slim_console_control_manager_refused(struct slim_console_control *ctl, uint16_t reason,
		const char *text)
{
	emit(ctl, "manager refused %s %s", reason == SLIM_REFUSE_PENDING ? "pending" :
		reason == SLIM_REFUSE_DENIED ? "denied" :
		reason == SLIM_REFUSE_TOO_LARGE ? "too-large" : "busy", text);
}

void slim_console_control_manager_attached(struct slim_console_control *ctl, uint32_t assoc)
{
	emit(ctl, "manager attached %u", assoc);
}

void slim_console_control_manager_silent(struct slim_console_control *ctl, const char *manager,
		const char *what)
{
	emit(ctl, "manager silent %s (%s)", manager, what);
}

void slim_console_control_redirect(struct slim_console_control *ctl, const char *server)
{
	emit(ctl, "redirect %s", server);
}

static bool parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || *end != '\0' || errno != 0 || v < lo || v > hi) {
		return false;
	}
	*out = v;
	return true;
}

/* A decimal number of pixels or scroll units, as 1/256 fixed point. */
static bool parse_fixed(const char *s, double lo, double hi, int32_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	/* the comparison is false for NaN too */
	if (end == s || *end != '\0' || errno != 0 || !(v >= lo && v <= hi)) {
		return false;
	}
	double f = v * 256.0;
	*out = (int32_t)(f < 0 ? f - 0.5 : f + 0.5);
	return true;
}

/* Stamps and sends events; pointer events end with a FRAME, as libinput's do. */
static void send_input(struct slim_console_control *ctl, struct slim_wire_input *ev, size_t n,
		bool pointer)
{
	if (pointer) {
		ev[n++] = (struct slim_wire_input){ .kind = SLIM_INPUT_FRAME };
	}
	uint32_t now_ms = (uint32_t)slim_now_ms();
	for (size_t i = 0; i < n; i++) {
		ev[i].time_ms = now_ms;
	}
	bool attached = slim_console_link_state(ctl->link) == SLIM_LINK_ATTACHED;
	/* not attached, the keys held still follow what was dropped */
	if (!slim_console_link_send_input(ctl->link, ev, n)) {
		emit(ctl, attached ? "error input queue full: input dropped" :
			"error not attached: input dropped");
	}
}

static bool cmd_key_or_button(struct slim_console_control *ctl, char **argv)
{
	long code, value;
	if (!parse_int(argv[1], 0, UINT16_MAX, &code) || !parse_int(argv[2], 0, 1, &value)) {
		return false;
	}
	bool key = strcmp(argv[0], "key") == 0;
	struct slim_wire_input ev[2] = { {
		.kind = key ? SLIM_INPUT_KEY : SLIM_INPUT_BUTTON,
		.code = (uint16_t)code,
		.value = (int32_t)value,
	} };
	send_input(ctl, ev, 1, !key);
	return true;
}

static bool cmd_motion(struct slim_console_control *ctl, char **argv)
{
	const struct slim_fb *fb = slim_console_core_fb(ctl->core);
	int32_t x, y;
	/* a position on the screen: [0, width) x [0, height) */
	if (!parse_fixed(argv[1], 0, fb->width, &x) || !parse_fixed(argv[2], 0, fb->height, &y) ||
			x >= (int32_t)fb->width * 256 || y >= (int32_t)fb->height * 256) {
		return false;
	}
	struct slim_wire_input ev[2] = { { .kind = SLIM_INPUT_MOTION_ABS, .x = x, .y = y } };
	send_input(ctl, ev, 1, true);
	return true;
}

static bool cmd_rmotion(struct slim_console_control *ctl, char **argv)
{
	int32_t dx, dy;
	if (!parse_fixed(argv[1], -FIXED_MAX, FIXED_MAX, &dx) ||
			!parse_fixed(argv[2], -FIXED_MAX, FIXED_MAX, &dy)) {
		return false;
	}
	struct slim_wire_input ev[2] = { { .kind = SLIM_INPUT_MOTION_REL, .x = dx, .y = dy } };
	send_input(ctl, ev, 1, true);
	return true;
}

static bool cmd_axis(struct slim_console_control *ctl, char **argv)
{
	int32_t value;
	if (!parse_fixed(argv[1], -FIXED_MAX, FIXED_MAX, &value)) {
		return false;
	}
	/* x: discrete steps, one notch per command in the scroll's direction */
	struct slim_wire_input ev[2] = { {
		.kind = SLIM_INPUT_AXIS,
		.code = 0,
		.value = value,
		.x = (value > 0) - (value < 0),
	} };
	send_input(ctl, ev, 1, true);
	return true;
}

/* What monitors plugged in or out do to a console: its heads, as --size says them. */
static bool cmd_heads(struct slim_console_control *ctl, char **argv)
{
	struct slim_desk desk = *slim_console_core_desk(ctl->core);
	char err[160];
	if (!slim_heads_option_parse(argv[1], &desk, err, sizeof(err))) {
		emit(ctl, "error heads: %s", err);
		return true;
	}
	if (!slim_console_core_set_heads(ctl->core, &desk)) {
		emit(ctl, "error heads: cannot make these heads");
		return true;
	}
	char why[64];
	snprintf(why, sizeof(why), "%u head%s now", desk.n_heads, desk.n_heads == 1 ? "" : "s");
	slim_console_link_reassociate(ctl->link, why);
	return true;
}

/* What a monitor plugged in with another mode does to --output drm. */
static bool cmd_resize(struct slim_console_control *ctl, char **argv)
{
	long width, height;
	if (!parse_int(argv[1], 1, SLIM_MAX_DIM, &width) ||
			!parse_int(argv[2], 1, SLIM_MAX_DIM, &height)) {
		return false;
	}
	if (!slim_console_core_resize(ctl->core, (uint32_t)width, (uint32_t)height)) {
		emit(ctl, "error resize: cannot make a %ldx%ld screen", width, height);
		return true;
	}
	char why[64];
	snprintf(why, sizeof(why), "the screen is %ldx%ld now", width, height);
	slim_console_link_reassociate(ctl->link, why);
	return true;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Of the console's heads, the one named `name` (or numbered, from 1); NULL: none. */
static const struct slim_head *find_head(const struct slim_desk *desk, const char *name)
{
	char *end;
	unsigned long n = strtoul(name, &end, 10);
	for (uint32_t i = 0; i < desk->n_heads; i++) {
		if (strcmp(desk->heads[i].name, name) == 0 || (*end == '\0' && n == i + 1)) {
			return &desk->heads[i];
		}
	}
	return NULL;
}

static bool write_screenshot(struct slim_console_control *ctl, const char *path,
		const struct slim_fb *fb)
{
	errno = 0;
	if (slim_png_write(path, fb)) {
		emit(ctl, "screenshot %s", path);
	} else {
		emit(ctl, "error screenshot %s: %s", path,
			errno != 0 ? strerror(errno) : "cannot write the PNG");
	}
	return true;
}

/* One head (by name or number), as that monitor shows it: "head-screenshot HEAD PATH". */
static bool cmd_head_screenshot(struct slim_console_control *ctl, char **argv)
{
	char *name = argv[1], *path = name;
	while (*path && !is_space(*path)) {
		path++;
	}
	if (!*path) {
		return false;
	}
	*path++ = '\0';
	while (is_space(*path)) {
		path++;
	}
	const struct slim_head *h = find_head(slim_console_core_desk(ctl->core), name);
	if (!h || !*path) {
		emit(ctl, "error screenshot %s: no head %s", path, name);
		return true;
	}
	const struct slim_fb *screen = slim_console_core_fb(ctl->core);
	struct slim_fb fb = { .px = screen->px + (size_t)h->y * screen->stride + h->x,
		.width = h->width, .height = h->height, .stride = screen->stride };
	return write_screenshot(ctl, path, &fb);
}

static bool cmd_screenshot(struct slim_console_control *ctl, char **argv)
{
	return write_screenshot(ctl, argv[1], slim_console_core_fb(ctl->core));
}

static bool cmd_stats(struct slim_console_control *ctl, char **argv)
{
	const struct slim_console_stats *st = slim_console_core_stats(ctl->core);
	const struct slim_console_cursor *cursor = slim_console_core_cursor(ctl->core);
	emit(ctl, "stats frames=%llu datagrams=%llu applied=%llu bad=%llu late=%llu dup=%llu "
		"bytes=%llu fill=%llu set=%llu bitmap=%llu copy=%llu cscs=%llu palette=%llu cached=%llu "
		"fill_px=%llu set_px=%llu bitmap_px=%llu copy_px=%llu cscs_px=%llu palette_px=%llu "
		"cached_px=%llu "
		"cscs_src_w=%u cscs_src_h=%u cscs_dst_w=%u cscs_dst_h=%u "
		"input_sent=%llu input_retransmits=%llu input_acked=%llu input_dropped=%llu "
		"cursor_x=%d cursor_y=%d audio=%llu",
		(unsigned long long)st->frames, (unsigned long long)st->datagrams,
		(unsigned long long)st->applied, (unsigned long long)st->bad,
		(unsigned long long)st->late, (unsigned long long)st->duplicates,
		(unsigned long long)st->bytes,
		(unsigned long long)st->commands[SLIM_CMD_FILL],
		(unsigned long long)st->commands[SLIM_CMD_SET],
		(unsigned long long)st->commands[SLIM_CMD_BITMAP],
		(unsigned long long)st->commands[SLIM_CMD_COPY],
		(unsigned long long)st->commands[SLIM_CMD_CSCS],
		(unsigned long long)st->commands[SLIM_CMD_PALETTE],
		(unsigned long long)st->commands[SLIM_CMD_CACHE_DRAW],
		(unsigned long long)st->pixels[SLIM_CMD_FILL],
		(unsigned long long)st->pixels[SLIM_CMD_SET],
		(unsigned long long)st->pixels[SLIM_CMD_BITMAP],
		(unsigned long long)st->pixels[SLIM_CMD_COPY],
		(unsigned long long)st->pixels[SLIM_CMD_CSCS],
		(unsigned long long)st->pixels[SLIM_CMD_PALETTE],
		(unsigned long long)st->pixels[SLIM_CMD_CACHE_DRAW],
		st->cscs_src_w, st->cscs_src_h, st->cscs_dst_w, st->cscs_dst_h,
		(unsigned long long)st->input.sent, (unsigned long long)st->input.retransmits,
		(unsigned long long)st->input.acked, (unsigned long long)st->input.dropped,
		cursor->x, cursor->y, (unsigned long long)st->audio);
	if (ctl->audio) {
		const struct slim_audio_stats *a = console_audio_stats(ctl->audio);
		emit(ctl, "audio datagrams=%llu packets=%llu lost=%llu recovered=%llu "
			"concealed=%llu late=%llu dup=%llu bad=%llu skipped=%llu repaired=%llu "
			"unheard=%llu depth_ms=%u jitter_us=%u mic=%llu", (unsigned long long)st->audio,
			(unsigned long long)a->packets, (unsigned long long)a->lost,
			(unsigned long long)a->recovered, (unsigned long long)a->concealed,
			(unsigned long long)a->late, (unsigned long long)a->duplicate,
			(unsigned long long)a->bad, (unsigned long long)a->skipped,
			(unsigned long long)a->repaired, (unsigned long long)a->unheard,
			a->depth_ms, a->jitter_us,
			(unsigned long long)console_audio_mic_sent(ctl->audio));
	}
	if (ctl->decoders) {
		const struct slim_console_video_stats *v = slim_console_core_video_stats(ctl->core);
		struct slim_h264_decoder_info d;
		console_decoders_info(ctl->decoders, &d);
		emit(ctl, "video codec=h264 decoder=%s pictures=%llu fragments=%llu bytes=%llu "
			"errors=%llu skipped=%llu key_requests=%llu src_w=%u src_h=%u dst_w=%u "
			"dst_h=%u decode_p50_ms=%.2f decode_p99_ms=%.2f gap_max_ms=%.1f", d.kind,
			(unsigned long long)v->pictures, (unsigned long long)v->fragments,
			(unsigned long long)v->bytes, (unsigned long long)v->errors,
			(unsigned long long)v->skipped, (unsigned long long)v->key_requests,
			v->src_w, v->src_h, v->dst_w, v->dst_h, d.decode_ms_p50, d.decode_ms_p99,
			(double)slim_console_core_video_take_gap(ctl->core) / 1000);
	}
	return true;
}

static bool cmd_watch(struct slim_console_control *ctl, char **argv)
{
	long x, y;
	if (!parse_int(argv[1], 0, SLIM_MAX_DIM - 1, &x) ||
			!parse_int(argv[2], 0, SLIM_MAX_DIM - 1, &y)) {
		return false;
	}
	const struct slim_fb *fb = slim_console_core_fb(ctl->core);
	ctl->watching = true;
	ctl->watch_x = (uint32_t)x;
	ctl->watch_y = (uint32_t)y;
	/* what shows there now: only what changes from here on is told */
	ctl->watch_px = x < fb->width && y < fb->height ?
		fb->px[(size_t)y * fb->stride + (size_t)x] & 0xffffff : 0;
	return true;
}

static bool cmd_sync(struct slim_console_control *ctl, char **argv)
{
	emit(ctl, "sync %u", ctl->last_frame);
	return true;
}

static bool cmd_card(struct slim_console_control *ctl, char **argv)
{
	const char *err;
	if (!ctl->card_sink) {
		emit(ctl, "error card: the card reader is not --card-reader=stdin");
	} else if (slim_card_parse_line(argv[1], &ctl->card, &err)) {
		/* kept until attached: no "not attached" error here */
		ctl->card_sink(ctl->card_data, &ctl->card);
	} else {
		emit(ctl, "error card: %s", err ? err : "usage: card insert HEX | card remove");
	}
	return true;
}

static bool cmd_quit(struct slim_console_control *ctl, char **argv)
{
	ctl->quit = true;
	return true;
}

struct command {
	const char *name;
	int argc; /* words after the name; -1: the rest of the line, not empty */
	const char *usage;
	/* false: bad arguments, answered with the usage */
	bool (*run)(struct slim_console_control *ctl, char **argv);
};

static const struct command commands[] = {
	{ "key", 2, "key CODE 0|1", cmd_key_or_button },
	{ "button", 2, "button CODE 0|1", cmd_key_or_button },
	{ "motion", 2, "motion X Y (on the screen)", cmd_motion },
	{ "rmotion", 2, "rmotion DX DY", cmd_rmotion },
	{ "axis", 1, "axis VALUE", cmd_axis },
	{ "resize", 2, "resize WIDTH HEIGHT", cmd_resize },
	{ "screenshot", -1, "screenshot PATH", cmd_screenshot },
	{ "head-screenshot", -1, "head-screenshot HEAD PATH", cmd_head_screenshot },
	{ "heads", 1, "heads WxH[,WxH...]", cmd_heads },
	{ "watch", 2, "watch X Y", cmd_watch },
	{ "stats", 0, "stats", cmd_stats },
	{ "sync", 0, "sync", cmd_sync },
	{ "card", -1, "card insert HEX | card remove", cmd_card },
	{ "quit", 0, "quit", cmd_quit },
};

/* Splits off the first word; returns what follows it, past the blanks. */
static char *next_word(char *s, char **word)
{
	while (is_space(*s)) {
		s++;
	}
	*word = s;
	while (*s && !is_space(*s)) {
		s++;
	}
	if (*s) {
		*s++ = '\0';
	}
	while (is_space(*s)) {
		s++;
	}
	return s;
}

static void run_line(struct slim_console_control *ctl, char *line)
{
	char *argv[MAX_ARGS + 1] = { 0 };
	char *rest = next_word(line, &argv[0]);
	if (argv[0][0] == '\0' || argv[0][0] == '#') {
		return; /* blank lines and comments, for scripts */
	}
	const struct command *cmd = NULL;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(commands[i].name, argv[0]) == 0) {
			cmd = &commands[i];
		}
	}
	if (!cmd) {
		emit(ctl, "error unknown command %.64s", argv[0]);
		return;
	}
	int argc = 0;
	if (cmd->argc < 0) {
		/* a path may hold blanks: the rest of the line, without trailing ones */
		size_t n = strlen(rest);
		while (n > 0 && is_space(rest[n - 1])) {
			rest[--n] = '\0';
		}
		argv[1] = rest;
		argc = n > 0 ? -1 : 0;
	} else {
		while (*rest && argc < MAX_ARGS) {
			rest = next_word(rest, &argv[++argc]);
		}
	}
	if (argc != cmd->argc || (cmd->argc >= 0 && *rest) || !cmd->run(ctl, argv)) {
		emit(ctl, "error usage: %s", cmd->usage);
	}
}

bool slim_console_control_dispatch(struct slim_console_control *ctl)
{
	ssize_t n = read(ctl->fd, ctl->buf + ctl->len, sizeof(ctl->buf) - ctl->len);
	if (n < 0) {
		if (errno == EINTR || errno == EAGAIN) {
			return true;
		}
		slim_log(SLIM_LOG_ERROR, "control: read: %s", strerror(errno));
		return false;
	}
	bool eof = n == 0;
	ctl->len += (size_t)n;
	size_t start = 0;
	for (size_t i = 0; i < ctl->len && !ctl->quit; i++) {
		if (ctl->buf[i] != '\n') {
			continue;
		}
		ctl->buf[i] = '\0';
		if (!ctl->discarding) {
			run_line(ctl, ctl->buf + start);
		}
		ctl->discarding = false;
		start = i + 1;
	}
	memmove(ctl->buf, ctl->buf + start, ctl->len - start);
	ctl->len -= start;
	if (ctl->len == sizeof(ctl->buf)) {
		if (!ctl->discarding) {
			emit(ctl, "error line longer than %d bytes", LINE_BYTES - 1);
		}
		ctl->discarding = true;
		ctl->len = 0;
	}
	if (eof && ctl->len > 0 && !ctl->discarding && !ctl->quit) {
		/* a last command without its newline still counts */
		ctl->buf[ctl->len] = '\0';
		run_line(ctl, ctl->buf);
	}
	return !ctl->quit && !eof;
}
