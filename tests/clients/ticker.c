/*
 * slim-ticker: the animation of Wong and Seltzer's remote display
 * micro-benchmarks, a web page's advertising banner over a news ticker.
 * The banner (468x60, the classic banner size) plays a loop of N distinct
 * frames; the ticker below it scrolls a line of text 2 px a frame. Frames
 * come from a timer at a fixed rate, not from frame callbacks, so that
 * every protocol is sent the same frames whatever it does with them: a
 * remote display with a cache of past frames would send each of the N
 * banner frames once, one without sends them again every time round.
 *
 *   slim-ticker [--loop N] [--fps F] [--no-ticker]
 *
 * Prints "ready" once its first frame is on the screen.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <wayland-client.h>
#include "xdg-shell-client-protocol.h"

#define W 640
#define H 100
#define BANNER_X 86
#define BANNER_Y 8
#define BANNER_W 468
#define BANNER_H 60
#define TICKER_Y 74
#define TICKER_H 20
#define BUFFERS 3

struct buffer {
	struct wl_buffer *wl;
	uint32_t *px;
	bool busy;
};

struct ticker {
	struct wl_compositor *compositor;
	struct wl_shm *shm;
	struct xdg_wm_base *wm_base;
	struct wl_surface *surface;
	struct xdg_surface *xdg_surface;
	struct xdg_toplevel *toplevel;
	struct buffer buffers[BUFFERS];
	unsigned loop, fps;
	bool ticker;
	uint64_t frame;
	bool configured, ready, quit;
};

static const char news[] =
	"MARKETS CLOSE HIGHER ON TECHNOLOGY GAINS +++ WEATHER: SHOWERS LATER, "
	"CLEARING BY MORNING +++ LOCAL TEAM WINS IN EXTRA TIME +++ NEW BROWSER "
	"RELEASE PROMISES FASTER PAGES +++ ";

static const char *const slogans[] = {
	"BUY NOW", "FREE SHIPPING", "CLICK HERE", "LIMITED OFFER", "NEW!",
	"SAVE 50%", "ONLINE TODAY", "JOIN FREE", "WIN A PRIZE", "BEST PRICES",
};

/*
 * A 5x7 glyph for every character, made up from the character code: no
 * font to ship, and still what text is to a compressor (two colours,
 * shapes that repeat wherever the letter does).
 */
static bool glyph_bit(unsigned char c, int x, int y)
{
	if (c == ' ') {
		return false;
	}
	uint32_t h = (uint32_t)c * 2654435761u;
	h ^= h >> 13;
	h *= 0x5bd1e995u;
	h ^= h >> 15;
	uint64_t bits = (uint64_t)h << 3 | (uint64_t)(c & 7);
	/* rows 0 and 6 from the middle ones, so glyphs have a top and a bottom */
	int row = y == 0 ? 1 : y == 6 ? 5 : y;
	return (bits >> ((row - 1) * 5 + x)) & 1;
}

/* Text at (x, y), each glyph pixel scale x scale, clipped to the box. */
static void draw_text(uint32_t *px, int x0, int y0, int scale, const char *text, size_t len,
		uint32_t colour, int clip_x, int clip_w)
{
	int advance = 6 * scale;
	for (size_t i = 0; i < len; i++) {
		int gx = x0 + (int)i * advance;
		if (gx + advance <= clip_x || gx >= clip_x + clip_w) {
			continue;
		}
		for (int y = 0; y < 7 * scale; y++) {
			for (int x = 0; x < 5 * scale; x++) {
				int px_x = gx + x;
				if (px_x < clip_x || px_x >= clip_x + clip_w ||
						!glyph_bit((unsigned char)text[i], x / scale, y / scale)) {
					continue;
				}
				px[(y0 + y) * W + px_x] = colour;
			}
		}
	}
}

static void fill(uint32_t *px, int x0, int y0, int w, int h, uint32_t colour)
{
	for (int y = y0; y < y0 + h; y++) {
		for (int x = x0; x < x0 + w; x++) {
			px[y * W + x] = colour;
		}
	}
}

/* Banner frame `k` of the loop: its colours, slogan and stripe differ with k. */
static void draw_banner(uint32_t *px, unsigned k)
{
	uint32_t hue = k * 0x2f5a13u;
	uint32_t bg = 0xff000000 | (0x404040 + (hue & 0x3f3f3f));
	fill(px, BANNER_X, BANNER_Y, BANNER_W, BANNER_H, bg);
	/* a bar that moves along the loop, as banners' highlights do */
	int bar = (int)((k * 37) % (BANNER_W - 40));
	fill(px, BANNER_X + bar, BANNER_Y, 40, BANNER_H, 0xffffd700);
	const char *slogan = slogans[k % (sizeof(slogans) / sizeof(slogans[0]))];
	char line[48];
	int n = snprintf(line, sizeof(line), "%s %u", slogan, k);
	draw_text(px, BANNER_X + 12, BANNER_Y + 9, 3, line, (size_t)n, 0xffffffff,
		BANNER_X, BANNER_W);
	draw_text(px, BANNER_X + 12, BANNER_Y + 38, 2, "WWW.EXAMPLE.COM", 15,
		0xff101010, BANNER_X, BANNER_W);
}

/* The ticker scrolled `offset` px along its text, which repeats. */
static void draw_ticker(uint32_t *px, uint64_t offset)
{
	fill(px, 0, TICKER_Y, W, TICKER_H, 0xff202060);
	int advance = 12;
	size_t len = sizeof(news) - 1;
	int period = (int)len * advance;
	int shift = (int)(offset % (uint64_t)period);
	/* twice, so that the start of the text follows its end */
	for (int copy = 0; copy < 2; copy++) {
		draw_text(px, copy * period - shift, TICKER_Y + 3, 2, news, len, 0xffffffff, 0, W);
	}
}

static void buffer_release(void *data, struct wl_buffer *wl)
{
	((struct buffer *)data)->busy = false;
}

static const struct wl_buffer_listener buffer_listener = { .release = buffer_release };

static bool buffers_create(struct ticker *t)
{
	size_t size = (size_t)W * H * 4;
	int fd = memfd_create("slim-ticker", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)(BUFFERS * size)) != 0) {
		return false;
	}
	uint8_t *mem = mmap(NULL, BUFFERS * size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	struct wl_shm_pool *pool = wl_shm_create_pool(t->shm, fd, (int32_t)(BUFFERS * size));
	close(fd);
	if (mem == MAP_FAILED) {
		return false;
	}
	for (int i = 0; i < BUFFERS; i++) {
		struct buffer *b = &t->buffers[i];
		b->px = (uint32_t *)(mem + i * size);
		b->wl = wl_shm_pool_create_buffer(pool, (int32_t)(i * size), W, H, W * 4,
			WL_SHM_FORMAT_XRGB8888);
		wl_buffer_add_listener(b->wl, &buffer_listener, b);
		fill(b->px, 0, 0, W, H, 0xffe8e8e8);
	}
	wl_shm_pool_destroy(pool);
	return true;
}

static void frame_done(void *data, struct wl_callback *cb, uint32_t time)
{
	struct ticker *t = data;
	wl_callback_destroy(cb);
	if (!t->ready) {
		t->ready = true;
		printf("ready\n");
		fflush(stdout);
	}
}

static const struct wl_callback_listener frame_listener = { .done = frame_done };

/*
 * The next frame. A frame whose buffers are all still held by the
 * compositor is skipped, as a real animation drops frames it cannot show:
 * the loop stays on the clock.
 */
static void draw_frame(struct ticker *t)
{
	uint64_t frame = t->frame++;
	struct buffer *b = NULL;
	for (int i = 0; i < BUFFERS && !b; i++) {
		if (!t->buffers[i].busy) {
			b = &t->buffers[i];
		}
	}
	if (!b) {
		return;
	}
	draw_banner(b->px, (unsigned)(frame % t->loop));
	wl_surface_attach(t->surface, b->wl, 0, 0);
	if (frame == 0) {
		wl_surface_damage_buffer(t->surface, 0, 0, W, H);
		struct wl_callback *cb = wl_surface_frame(t->surface);
		wl_callback_add_listener(cb, &frame_listener, t);
	} else {
		wl_surface_damage_buffer(t->surface, BANNER_X, BANNER_Y, BANNER_W, BANNER_H);
	}
	if (t->ticker) {
		draw_ticker(b->px, frame * 2);
		wl_surface_damage_buffer(t->surface, 0, TICKER_Y, W, TICKER_H);
	}
	b->busy = true;
	wl_surface_commit(t->surface);
}

static void wm_ping(void *data, struct xdg_wm_base *wm, uint32_t serial)
{
	xdg_wm_base_pong(wm, serial);
}

static const struct xdg_wm_base_listener wm_listener = { .ping = wm_ping };

static void xdg_configure(void *data, struct xdg_surface *s, uint32_t serial)
{
	struct ticker *t = data;
	xdg_surface_ack_configure(s, serial);
	if (!t->configured) {
		t->configured = true;
		draw_frame(t);
	}
}

static const struct xdg_surface_listener xdg_surface_listener = { .configure = xdg_configure };

static void toplevel_configure(void *data, struct xdg_toplevel *tl, int32_t w, int32_t h,
		struct wl_array *states)
{
}

static void toplevel_close(void *data, struct xdg_toplevel *tl)
{
	((struct ticker *)data)->quit = true;
}

static const struct xdg_toplevel_listener toplevel_listener = {
	.configure = toplevel_configure, .close = toplevel_close,
};

static void global(void *data, struct wl_registry *reg, uint32_t name, const char *iface,
		uint32_t version)
{
	struct ticker *t = data;
	if (strcmp(iface, wl_compositor_interface.name) == 0) {
		t->compositor = wl_registry_bind(reg, name, &wl_compositor_interface, 4);
	} else if (strcmp(iface, wl_shm_interface.name) == 0) {
		t->shm = wl_registry_bind(reg, name, &wl_shm_interface, 1);
	} else if (strcmp(iface, xdg_wm_base_interface.name) == 0) {
		t->wm_base = wl_registry_bind(reg, name, &xdg_wm_base_interface, 1);
		xdg_wm_base_add_listener(t->wm_base, &wm_listener, t);
	}
}

static void global_remove(void *data, struct wl_registry *reg, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = {
	.global = global, .global_remove = global_remove,
};

/* Dispatches the display and the frame timer until the window is closed. */
static void run(struct ticker *t, struct wl_display *display, int timer)
{
	while (!t->quit) {
		while (wl_display_prepare_read(display) != 0) {
			if (wl_display_dispatch_pending(display) < 0) {
				return;
			}
		}
		if (wl_display_flush(display) < 0 && errno != EAGAIN) {
			wl_display_cancel_read(display);
			return;
		}
		struct pollfd fds[2] = {
			{ .fd = wl_display_get_fd(display), .events = POLLIN },
			{ .fd = timer, .events = POLLIN },
		};
		if (poll(fds, 2, -1) < 0 && errno != EINTR) {
			wl_display_cancel_read(display);
			return;
		}
		if (fds[0].revents & POLLIN) {
			if (wl_display_read_events(display) < 0) {
				return;
			}
		} else {
			wl_display_cancel_read(display);
		}
		if (wl_display_dispatch_pending(display) < 0) {
			return;
		}
		uint64_t due;
		if ((fds[1].revents & POLLIN) && read(timer, &due, sizeof(due)) == sizeof(due) &&
				t->ready) {
			draw_frame(t);
		}
	}
}

int main(int argc, char *argv[])
{
	struct ticker t = { .loop = 8, .fps = 20, .ticker = true };
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--loop") == 0 && i + 1 < argc) {
			t.loop = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--fps") == 0 && i + 1 < argc) {
			t.fps = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--no-ticker") == 0) {
			t.ticker = false;
		} else {
			fprintf(stderr, "usage: %s [--loop N] [--fps F] [--no-ticker]\n", argv[0]);
			return 2;
		}
	}
	if (t.loop == 0 || t.fps == 0 || t.fps > 1000) {
		fprintf(stderr, "slim-ticker: --loop and --fps must be positive\n");
		return 2;
	}
	struct wl_display *display = wl_display_connect(NULL);
	if (!display) {
		fprintf(stderr, "slim-ticker: no Wayland display\n");
		return 1;
	}
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, &t);
	wl_display_roundtrip(display);
	int timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (!t.compositor || !t.shm || !t.wm_base || timer < 0 || !buffers_create(&t)) {
		fprintf(stderr, "slim-ticker: missing globals\n");
		return 1;
	}
	long ns = 1000000000L / (long)t.fps;
	struct itimerspec its = {
		.it_value = { ns / 1000000000L, ns % 1000000000L },
		.it_interval = { ns / 1000000000L, ns % 1000000000L },
	};
	timerfd_settime(timer, 0, &its, NULL);
	t.surface = wl_compositor_create_surface(t.compositor);
	t.xdg_surface = xdg_wm_base_get_xdg_surface(t.wm_base, t.surface);
	xdg_surface_add_listener(t.xdg_surface, &xdg_surface_listener, &t);
	t.toplevel = xdg_surface_get_toplevel(t.xdg_surface);
	xdg_toplevel_add_listener(t.toplevel, &toplevel_listener, &t);
	xdg_toplevel_set_title(t.toplevel, "slim-ticker");
	wl_surface_commit(t.surface);
	run(&t, display, timer);
	close(timer);
	wl_display_disconnect(display);
	return 0;
}
