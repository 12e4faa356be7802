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
#include <wlr/types/wlr_xdg_shell.h>
#include <xkbcommon/xkbcommon.h>
#include "encoder.h"
#include "console-audio.h"
#include "screen.h"
#include "audio-daemons.h"
#include "manager-control.h"
#include "frame-pace.h"
#include "link.h"
#include "slim-sched.h"
#include "session-bus.h"
#include "video-detect.h"

struct wlr_output;
struct wlr_scene_output;
struct wlr_scene_buffer;
struct wlr_input_device;
struct wlr_surface;
struct wlr_compositor;
struct wlr_texture;
struct wlr_buffer;
struct slim_protocol_check;
struct slim_video;
struct slim_xwayland;
struct slim_protocols;
struct slim_constraints;
struct slim_virtual_input;
struct slim_toplevel;
struct wlr_foreign_toplevel_manager_v1;
struct slim_video_surface;

enum slim_grab_mode {
	SLIM_GRAB_NONE,
	SLIM_GRAB_MOVE,
	SLIM_GRAB_RESIZE,
};

struct slim_view;

/* What a kind of window (xdg.c, xwayland.c) does for view.c. */
struct slim_view_impl {
	struct wlr_surface *(*surface)(struct slim_view *view);
	/* the window's own box (no shadows): its size, and where it starts in its surface */
	struct wlr_box (*geometry)(struct slim_view *view);
	void (*set_size)(struct slim_view *view, uint32_t width, uint32_t height);
	void (*set_activated)(struct slim_view *view, bool activated);
	void (*set_state)(struct slim_view *view, bool maximized, bool fullscreen);
	void (*set_resizing)(struct slim_view *view, bool resizing);
	/* the process to put first while it has the keyboard (sched.c) */
	pid_t (*pid)(struct slim_view *view);
	/* optional: the view's node went to view->x, view->y */
	void (*moved)(struct slim_view *view);
	/* asks the client to close the window */
	void (*close)(struct slim_view *view);
	/* what task bars show; may be NULL */
	const char *(*title)(struct slim_view *view);
	const char *(*app_id)(struct slim_view *view);
};

/* A window; embedded in its kind's own struct. */
struct slim_view {
	struct wl_list link; /* slim_server.views, topmost first */
	struct slim_server *server;
	const struct slim_view_impl *impl;
	struct wlr_scene_node *node; /* node->data is the view */
	int32_t x, y;
	bool mapped;
	/* where the view was before it was maximized or made fullscreen */
	struct wlr_box saved;
	bool maximized, fullscreen;
	/* the title bar slimland draws for a client that asked (xdg-decoration), or NULL */
	struct wlr_scene_rect *titlebar, *close_button;
	struct slim_toplevel *toplevel; /* in task bars while mapped (toplevel-list.c) */
};

/* Height of a title bar slimland draws. */
#define VIEW_TITLEBAR_H 24

struct slim_output {
	struct slim_server *server;
	struct wlr_output *wlr;
	struct wlr_scene_output *scene_output;
	/* damage of the frames rendered since the last one streamed */
	pixman_region32_t damage;
	struct slim_frame_pace *pace; /* when frames go */
	struct wl_listener frame, precommit, commit, destroy;
};

struct slim_grab {
	enum slim_grab_mode mode;
	struct slim_view *view;
	double start_x, start_y; /* pointer at the start */
	struct wlr_box start_box;
	uint32_t edges;
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
	struct wlr_xdg_shell *xdg_shell;
	struct wlr_seat *seat;
	struct wlr_input_device *keyboard;
	struct xkb_keymap *keymap;
	struct wlr_xcursor_manager *xcursors;

	struct slim_output *output;
	/* the scene, bottom up: background, layers 0 and 1, windows, layers 2 and 3 */
	struct wlr_scene_tree *layers[4], *windows;
	struct wl_list layer_surfaces;
	struct wlr_box usable; /* the screen less the panels' exclusive zones */
	struct wl_listener new_layer_surface;
	struct wl_list views;
	struct slim_view *focused; /* the view with the keyboard */
	struct slim_xwayland *xwayland;
	struct slim_protocols *protocols;
	struct slim_constraints *constraints;
	struct slim_text_inputs *text_inputs;
	struct slim_virtual_input *virtual_input;
	struct wlr_foreign_toplevel_manager_v1 *toplevels;
	struct slim_link *link;
	struct slim_control *control; /* --managed only */
	uid_t manager_uid;            /* --managed: the control socket's one peer uid */
	struct slim_sched *sched;
	struct wl_event_source *sched_timer;
	struct slim_video *video;
	struct slim_protocol_check *protocol_check;
	struct slim_session_bus *session_bus;
	struct slim_audio_daemons *audio_daemons;
	struct slim_audio *audio;
	struct wlr_output *screen; /* screen.c: the console's screen */
	uint32_t width, height;

	/* the pointer, in output coordinates */
	double pointer_x, pointer_y;
	struct wlr_surface *cursor_surface; /* set by the client under the pointer */
	int32_t cursor_hot_x, cursor_hot_y;
	bool cursor_from_client;
	struct slim_grab grab;
	/* moves since the last streamed frame, as COPY hints */
	struct slim_move_hint moves[8];
	size_t n_moves;

	struct wl_listener new_xdg_surface, client_created;
	struct wl_listener request_cursor, cursor_commit, cursor_destroy;
	struct wl_listener request_set_selection, request_set_primary_selection;
	struct wl_listener keyboard_key, keyboard_modifiers;
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

/* video.c; budget_bps 0: video goes as pixels like everything else */
struct slim_video *video_create(struct slim_server *server, struct wlr_compositor *compositor,
		uint64_t budget_bps);
void video_destroy(struct slim_video *video);
/*
 * The frame's video, as YUV images into frame->yuv, taken from the rendered
 * pixels `fb`; what stopped being video is added to `damage` to be repainted.
 * `answer_pending`: input waits for its answer. Returns whether this frame
 * is that answer (exact pixels outside the video changed); the video's
 * picture then waits for the next frame (frame->defer).
 */
bool video_frame(struct slim_video *video, const struct slim_fb *fb,
		pixman_region32_t *damage, struct slim_frame *frame, bool answer_pending);
struct slim_video_surface *video_surface_of(struct slim_video *video,
		struct wlr_surface *surface);
/* The content type the surface's next commit applies. */
void video_surface_set_hint(struct slim_video_surface *vs, enum slim_content_hint hint);
void video_surface_set_hint_object(struct slim_video_surface *vs, struct wl_resource *resource);
struct wl_resource *video_surface_hint_object(const struct slim_video_surface *vs);

/* renderer.c */
struct wlr_renderer *renderer_create(void);
/* XRGB8888 pixels in memory as a wlr_buffer (the caller drops it); *px: its pixels. */
struct wlr_buffer *renderer_pixels_create(uint32_t width, uint32_t height, uint32_t **px);
/* A YUV client buffer's texture: its planes (4:2:0, depth 8; no dst) into img. */
bool renderer_texture_yuv(struct wlr_texture *texture, struct slim_yuv_image *img);

/* protocol-check.c */
struct slim_protocol_check *protocol_check_create(struct wl_display *display);
void protocol_check_destroy(struct slim_protocol_check *check);

/* toplevel-list.c */
void toplevel_list_add(struct slim_view *view);
/* Its focus, maximized and fullscreen states, again. */
void toplevel_list_update(struct slim_view *view);
void toplevel_list_remove(struct slim_view *view);
/* Its title changed: task bars hear of it, at most once a tenth of a second. */
void toplevel_list_title_changed(struct slim_view *view);

/* layer.c */
bool layers_init(struct slim_server *server);
/* Places every layer surface again (the screen or a surface changed). */
void layers_arrange(struct slim_server *server);

/* virtual-input.c */
struct slim_virtual_input *virtual_input_create(struct slim_server *server);
void virtual_input_destroy(struct slim_virtual_input *virtual_input);

/* text-input.c */
struct slim_text_inputs *text_inputs_create(struct slim_server *server);
void text_inputs_destroy(struct slim_text_inputs *text_inputs);
/* The console's keys, to the input method's keyboard grab: true if one took them. */
bool text_inputs_key(struct slim_text_inputs *text_inputs, uint32_t time_msec,
		uint32_t keycode, uint32_t state);
bool text_inputs_modifiers(struct slim_text_inputs *text_inputs, struct wlr_keyboard *keyboard);

/* constraints.c */
struct slim_constraints *constraints_create(struct slim_server *server);
void constraints_destroy(struct slim_constraints *constraints);
/* The pointer entered `surface` (or none): its constraint, if any, takes hold. */
void constraints_pointer_focus(struct slim_constraints *constraints, struct wlr_surface *surface);
/*
 * The pointer moves by (dx, dy) to (*x, *y): relative motion goes out, and a
 * constraint holds the position back; true if it did.
 */
bool constraints_move(struct slim_constraints *constraints, double *x, double *y,
		double dx, double dy);

/* protocols.c */
struct slim_protocols *protocols_create(struct slim_server *server);
void protocols_destroy(struct slim_protocols *protocols);
/* Input from the console: the session is not idle. */
void protocols_activity(struct slim_protocols *protocols);
void protocols_focus_changed(struct slim_protocols *protocols, struct wlr_surface *focused);
/* The toplevel asked for a title bar drawn by slimland (xdg-decoration). */
bool protocols_wants_titlebar(const struct slim_protocols *protocols,
		struct wlr_xdg_surface *xdg);
/* The focused client asked for the compositor's key bindings. */
bool protocols_shortcuts_inhibited(const struct slim_protocols *protocols);

/* content-type.c */
bool content_type_init(struct slim_server *server);
/* The surface of a wp_content_type_v1 went away: the object is inert. */
void content_type_surface_gone(struct wl_resource *resource);

/* view.c */
void view_init(struct slim_view *view, struct slim_server *server,
		const struct slim_view_impl *impl, struct wlr_scene_node *node);
void view_map(struct slim_view *view);
void view_unmap(struct slim_view *view);
/* The view is going: no grab, focus or list keeps it. */
void view_finish(struct slim_view *view);
/* Its window geometry, what the client said, clamped (geometry.h). */
struct wlr_box view_geometry(struct slim_view *view);
/* Where it is and its size. */
struct wlr_box view_box(struct slim_view *view);
void view_set_state(struct slim_view *view, bool maximized, bool fullscreen);
/* Its title bar follows the window's width (after a commit that resized it). */
void view_update_titlebar(struct slim_view *view);
/* A title bar above the view (a client asked for server-side decorations), or none. */
void view_set_decorated(struct slim_view *view, bool decorated);
/* The mapped view whose (toplevel) surface this is, or NULL. */
struct slim_view *view_of_surface(struct slim_server *server, struct wlr_surface *surface);
/* Its title bar was clicked, x from the window's left edge: closes, or starts a move. */
void view_titlebar_click(struct slim_view *view, double x);
/* The view under (x, y); *surface NULL when that is its title bar. */
struct slim_view *view_at(struct slim_server *server, double x, double y,
		struct wlr_surface **surface, double *sx, double *sy);
void view_focus(struct slim_view *view, struct wlr_surface *surface);
void view_move_to(struct slim_view *view, int32_t x, int32_t y);
void view_cycle(struct slim_server *server);
void views_fit_output(struct slim_server *server);

/* xdg.c */
void xdg_handle_new_surface(struct wl_listener *listener, void *data);

/* xwayland.c: NULL when Xwayland cannot be had (X11 clients then find no DISPLAY) */
struct slim_xwayland *xwayland_create(struct slim_server *server,
		struct wlr_compositor *compositor);
void xwayland_destroy(struct slim_xwayland *xwayland);
/* The DISPLAY X11 clients use, or NULL. */
const char *xwayland_display_name(const struct slim_xwayland *xwayland);

/* grab.c */
void grab_begin(struct slim_view *view, enum slim_grab_mode mode, uint32_t edges);
/* The same, asked for by the client: only with a valid serial of a press on it. */
void grab_request(struct slim_view *view, enum slim_grab_mode mode, uint32_t edges,
		uint32_t serial);
/* Returns true if a grab took the motion. */
bool grab_motion(struct slim_server *server);
void grab_end(struct slim_server *server);

/* input.c */
bool input_init(struct slim_server *server);
void input_finish(struct slim_server *server);
void input_handle_console(struct slim_server *server, const struct slim_wire_input *ev);
/* Re-evaluates what is under the pointer (after views moved or appeared). */
void input_pointer_refresh(struct slim_server *server, uint32_t time_msec);

/* cursor.c */
bool cursor_init(struct slim_server *server);
void cursor_finish(struct slim_server *server);
void cursor_set_theme(struct slim_server *server, const char *name);
void cursor_handle_request(struct wl_listener *listener, void *data);
void cursor_moved(struct slim_server *server);
/* Sends the current image and position again (a console attached). */
void cursor_resend(struct slim_server *server);

#endif
