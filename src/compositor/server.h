/*
 * The slimland compositor: one user's session, a wlroots 0.15 headless
 * output rendered with pixman into RAM and streamed to a console. A room
 * a concern:
 *
 * src/compositor/   the session itself
 *   main.c          options, start-up and tear-down, the startup command
 *   server.c        the Wayland globals and the seat's requests
 *   output.c        rendered frames' damage and pixels -> encoder
 *   frame-pace.c    when the output renders: the console's ACKs as its vblank (no wlroots)
 *   screen.c        the console's screen as a wlr_output
 *   renderer.c      the pixman renderer, with viewport offsets and YUV wl_shm buffers
 *   background.c    the desktop under the windows
 *   cursor.c        the pointer image, sent for the console to draw
 * shell/            the window manager
 *   view.c          windows: focus, stacking, placement, maximize, fullscreen
 *   xdg.c, xwayland.c  xdg-shell toplevels and popups, X11 windows (as views)
 *   layer.c         layer-shell: panels and the like, placed; exclusive zones
 *   grab.c          interactive move and resize
 *   console-input.c the console's keys and pointer, through the seat
 *   virtual-input.c virtual keyboards and pointers, the session's user's only
 *   text-input.c    text inputs relayed to the input method (CJK and the like)
 *   constraints.c   pointer lock and confinement, relative motion
 *   protocols.c     decorations, idle inhibit, activation, shortcuts inhibit
 *   toplevel-list.c the windows, listed for task bars (foreign-toplevel)
 *   protocol-check.c, xdg-check.c  what wlroots 0.15 leaves unchecked
 *   geometry.h      what clients send made geometry: 64 bits, clamped (no wlroots)
 * stream/           the console's association and the manager's socket (no wlroots)
 *   link.c, link-pace.c  attach, datagrams and what goes when
 *   input-seq.c     the rule for console input
 *   manager-control.c, control-line.c  --managed: the manager's control socket
 * media/            pictures and sound
 *   video.c, video-detect.c, content-type.c  moving pictures found and sent as CSCS
 *   yuv-shm.c       YUV client pixels: layouts and conversions (no wlroots)
 *   console-audio.c the console's speaker and microphone in the session's PipeWire
 * daemons/          the session's bus and sound server, if the user has none
 * src/cgroup/slim-sched.c  the cgroup policy: focused client first (no wlroots)
 *
 * wlroots is called from the session's files, shell/ and media/ only, so
 * that a port to a later wlroots touches them and nothing else.
 */
#ifndef SLIM_SERVER_H
#define SLIM_SERVER_H

#include <pixman.h>
#include <stdbool.h>
#include <wayland-server-core.h>
#include <wlr/util/box.h>
#include "encoder.h"
#include "console-audio.h"
#include "screen.h"
#include "audio-daemons.h"
#include "manager-control.h"
#include "frame-pace.h"
#include "link.h"
#include "slim-sched.h"
#include "session-bus.h"

struct wlr_output;
struct wlr_scene_output;
struct wlr_scene_buffer;
struct wlr_surface;
struct wlr_compositor;
struct wlr_texture;
struct wlr_buffer;
struct slim_cursor;
struct slim_protocol_check;
struct slim_shell;
struct slim_video;

/* The console's screen as wlroots renders it (output.c). */
struct slim_output {
	struct slim_server *server;
	struct wlr_output *wlr;
	struct wlr_scene_output *scene_output;
	/* damage of the frames rendered since the last one streamed */
	pixman_region32_t damage;
	/* windows moved since then, as COPY hints */
	struct slim_move_hint moves[8];
	size_t n_moves;
	struct slim_frame_pace *pace; /* when frames go */
	struct wl_listener frame, precommit, commit, destroy;
};

struct slim_server {
	struct wl_display *display;
	struct wl_event_loop *loop;
	struct wlr_backend *backend;
	struct wlr_renderer *renderer;
	struct wlr_allocator *allocator;
	struct wlr_output_layout *layout;
	struct wlr_scene *scene;
	struct wlr_scene_buffer *background;
	struct wlr_output *screen; /* screen.c: the console's screen */
	struct slim_output *output;
	struct slim_shell *shell;   /* the windows, the seat and their protocols */
	struct slim_cursor *cursor; /* the pointer's image, for the console to draw */
	struct slim_video *video;
	struct slim_protocol_check *protocol_check;
	struct slim_link *link;
	struct slim_control *control; /* --managed only */
	uid_t manager_uid;            /* --managed: the control socket's one peer uid */
	struct slim_sched *sched;
	struct wl_event_source *sched_timer;
	struct slim_session_bus *session_bus;
	struct slim_audio_daemons *audio_daemons;
	struct slim_audio *audio;
	struct wl_listener client_created;
};

/* server.c */
bool server_init(struct slim_server *server, uint32_t width, uint32_t height,
		const struct slim_link_config *link, uint64_t video_budget_bps);
void server_finish(struct slim_server *server);
/* The session's sound server and the console's speaker and microphone in it. */
void server_start_audio(struct slim_server *server);
/* The cgroup policy has moves to make: after the next frame, or soon. */
void server_sched_changed(struct slim_server *server);

/* background.c */
bool background_set_size(struct slim_server *server, uint32_t width, uint32_t height);

/* output.c */
void output_create(struct slim_server *server, struct wlr_output *wlr);
void output_resize(struct slim_server *server, uint32_t width, uint32_t height);
void output_schedule_frame(struct slim_server *server);
/* A console attached: its first picture goes at once. */
void output_attached(struct slim_server *server);
/* The console can take a frame again, or lost some: render if anything is due. */
void output_link_ready(struct slim_server *server);
/* Renders and streams `region` (output coordinates) again at the next frame. */
void output_damage_region(struct slim_server *server, const pixman_region32_t *region);
/* A window's pixels at `box` moved by (dx, dy): a COPY hint with the next frame. */
void output_note_move(struct slim_server *server, struct wlr_box box, int32_t dx, int32_t dy);

/* renderer.c */
struct wlr_renderer *renderer_create(void);
/* XRGB8888 pixels in memory as a wlr_buffer (the caller drops it); *px: its pixels. */
struct wlr_buffer *renderer_pixels_create(uint32_t width, uint32_t height, uint32_t **px);
/* A YUV client buffer's texture: its planes (4:2:0, depth 8; no dst) into img. */
bool renderer_texture_yuv(struct wlr_texture *texture, struct slim_yuv_image *img);

/* cursor.c: the client's cursor or the theme's, the shell's pointer, to the link */
struct slim_cursor *cursor_create(struct slim_link *link, struct slim_shell *shell);
void cursor_destroy(struct slim_cursor *cursor);
void cursor_set_theme(struct slim_cursor *cursor, const char *name);
/* The pointer moved (or a grab began or ended): its position goes to the console. */
void cursor_moved(struct slim_cursor *cursor);
/* Sends the current image and position again (a console attached). */
void cursor_resend(struct slim_cursor *cursor);

#endif
