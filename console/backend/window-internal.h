/*
 * What the files of --output window share: window.c shows the picture
 * (a window per head, each its rectangle of the shadow framebuffer, and
 * the server's cursor over it), window-events.c turns SDL's events into
 * the session's input. Events call the picture's render(); the picture
 * calls nothing of the events.
 */
#ifndef SLIM_CONSOLE_WINDOW_INTERNAL_H
#define SLIM_CONSOLE_WINDOW_INTERNAL_H

#include <SDL.h>
#include <linux/input-event-codes.h>
#include <stdbool.h>
#include <stdint.h>
#include "backend.h"
#include "slim-desk.h"

#define MAX_KEYS (KEY_MAX + 1)
/*
 * How long a local pointer motion places the drawn pointer by itself: longer
 * than a LAN round trip, so that the server's echo of an older position does
 * not pull the pointer back while it moves; after it the server's position
 * counts again (it may warp the pointer, or another input may move it).
 */
#define LOCAL_POINTER_US 100000

/* One head: a window showing its rectangle of the console's screen. */
struct window_head {
	struct slim_head desc; /* its place on the screen */
	SDL_Window *window;
	uint32_t window_id;
	SDL_Renderer *renderer;
	SDL_Texture *picture;
	SDL_Texture *cursor_tex; /* each renderer has its own */
	uint32_t cursor_tex_w, cursor_tex_h;
};

struct slim_window_backend {
	struct slim_console_backend base;
	struct slim_console_input_sink sink;
	char *title;
	bool sdl_up;
	struct slim_desk desk; /* the heads asked for; the screen is their bounds */
	uint32_t n_heads;      /* of them, the windows open */
	struct window_head heads[SLIM_MAX_HEADS];
	uint32_t width, height; /* the screen */
	/* the core's framebuffer as last presented, to upload again after a device reset */
	const struct slim_fb *fb;
	int fd;
	bool closed;

	/* The server's cursor, kept to tell a new image from the one shown. */
	struct slim_console_cursor cursor;
	bool cursor_image; /* cursor_px holds an image the server sent */
	uint32_t cursor_px[SLIM_CURSOR_MAX * SLIM_CURSOR_MAX];
	uint32_t cursor_upload[SLIM_CURSOR_MAX * SLIM_CURSOR_MAX];

	/* The local pointer places the drawn cursor until this time, ahead of the server. */
	uint64_t local_until_us;
	int32_t pointer_x256, pointer_y256; /* on the screen */

	/* What the server thinks is held, released if the window loses the keyboard. */
	uint8_t keys_down[MAX_KEYS / 8 + 1];
	uint32_t buttons_down; /* bit (BTN_* - BTN_LEFT) */
};

static inline struct slim_window_backend *window_from(struct slim_console_backend *b)
{
	return (struct slim_window_backend *)b;
}

/* -- window.c */

/* Draws every head's window: its picture and the cursor where it falls. */
void window_render(struct slim_window_backend *w);
/* The head whose window has this SDL id, else NULL. */
struct window_head *window_head_of(struct slim_window_backend *w, uint32_t window_id);
/* The renderers lost their textures (a GPU reset): built again from the shadow. */
void window_restore_textures(struct slim_window_backend *w);

/* -- window-events.c */

/* The backend's fd and dispatch hooks. */
int window_fd(struct slim_console_backend *b);
void window_dispatch(struct slim_console_backend *b);

#endif
