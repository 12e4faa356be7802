/*
 * The slimland compositor: one user's session, a wlroots 0.15 headless
 * output rendered with pixman into RAM and streamed to a console. A room
 * a concern. The session's own files include and call down into the
 * rooms; a room includes nothing of the session's (this header) and calls
 * none of it: it tells the session through the handler it was given.
 *
 * src/compositor/   the session itself
 *   main.c          options, start-up and tear-down, the startup command
 *   server.c        the Wayland globals; the rooms made, wired together and ended
 *   frame-pace.c    when an output renders: the console's ACKs as its vblank (no wlroots)
 *   screen-map.c    layout and screen coordinates of a head (no wlroots)
 *   renderer.c      the pixman renderer, with viewport offsets and YUV wl_shm buffers
 *   cursor.c        the pointer image, sent for the console to draw
 *   shadow.c        a second console watching (helpdesk), with the user's yes
 *   sound.c         the sound server woken and put to sleep; the console's speaker in it
 * heads/            the console's heads, an output each
 *   heads.c         outputs made, kept, changed and removed as the console's heads say
 *   output.c        a head rendered: damage, pixels, moves -> encoder
 *   screen.c        a head as a wlr_output
 *   background.c    the desktop under the windows
 * shell/            the window manager; shell.h is what the session sees of it
 *   shell.c         the shell made and ended
 *   desk.c          the console's heads, as windows are placed on them
 *   decoration.c    title bars slimland draws (xdg-decoration, X11 without Motif hints)
 *   keymap.c, keymap-cache.c  the console's (or the user's) keymap, compiled off the loop
 *   view.c          windows: focus, stacking, placement, maximize, fullscreen
 *   xdg.c, xwayland.c  xdg-shell toplevels and popups, X11 windows (as views)
 *   layer.c         layer-shell: panels and the like, placed; exclusive zones
 *   grab.c          interactive move and resize
 *   console-input.c the console's keys and pointer, through the seat
 *   virtual-input.c virtual keyboards and pointers, the session's user's only
 *   text-input.c    text inputs relayed to the input method (CJK and the like)
 *   constraints.c   pointer lock and confinement, relative motion
 *   protocols.c     decorations, idle inhibit, activation, shortcuts inhibit, clipboard
 *   toplevel-list.c the windows, listed for task bars (foreign-toplevel)
 *   geometry.h      what clients send made geometry: 64 bits, clamped (no wlroots)
 * checks/           what libwayland and wlroots 0.15 leave unchecked, checked
 *   protocol-check.c, xdg-check.c  every request before it runs
 * stream/           the console's association and the manager's socket (no wlroots)
 *   link.c          the link made: its socket, what comes in, a frame's ACK late
 *   link-attach.c   who may attach, and the console attached
 *   link-input.c    the console's input acknowledged: where INPUT_ACK lands
 *   input-seq.c     the rule for console input: each event once and in order
 *   link-pace.c     what is sent and when
 *   link-sound.c    the sound to the console and its microphone
 *   manager-control.c, control-line.c  --managed: the manager's control socket
 * media/            pictures and sound
 *   video.c, video-detect.c, content-type.c  moving pictures found and sent as CSCS
 *   yuv-shm.c       YUV client pixels: layouts and conversions (no wlroots)
 *   pixel-buffer.c  pixels in memory as a wlr_buffer, for what slimland draws itself
 *   console-audio.c the console's speaker and microphone in the session's PipeWire
 * daemons/          the session's bus and sound server, if the user has none
 * src/cgroup/slim-sched.c  the cgroup policy: focused client first (no wlroots)
 *
 * wlroots is called from the session's files, heads/, shell/, checks/ and media/
 * only, so that a port to a later wlroots touches them and nothing else.
 */
#ifndef SLIM_SERVER_H
#define SLIM_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <wayland-server-core.h>
#include "h264-encoder.h"
#include "link.h"

struct slim_server {
	struct wl_display *display;
	struct wl_event_loop *loop;
	struct wlr_backend *backend;
	struct wlr_renderer *renderer;
	struct wlr_allocator *allocator;
	struct wlr_output_layout *layout;
	struct wlr_scene *scene;
	struct slim_heads *heads; /* the console's heads, an output each */
	struct slim_shell *shell;   /* the windows, the seat and their protocols */
	struct slim_cursor *cursor; /* the pointer's image, for the console to draw */
	struct slim_video *video;
	bool video_codec; /* H.264 to consoles that decode it */
	struct slim_protocol_check *protocol_check;
	struct slim_link *link;
	struct slim_link_config link_config; /* the link's, for a watching console's (shadow.c) */
	struct slim_shadow *shadow;   /* a second console watching, with the user's consent */
	struct slim_control *control; /* --managed only */
	uid_t manager_uid;            /* --managed: the control socket's one peer uid */
	struct slim_sched *sched;
	struct wl_event_source *sched_timer;
	struct slim_session_bus *session_bus;
	struct slim_sound *sound;   /* the sound server, woken by the first client */
	struct wl_listener client_created;
};

/* How video goes: CSCS within budget_bps, and H.264 to consoles that decode it. */
struct slim_video_options {
	uint64_t budget_bps;
	bool codec;                   /* false: CSCS only */
	enum slim_h264_device device; /* where H.264 is encoded */
};

bool server_init(struct slim_server *server, uint32_t width, uint32_t height,
		const struct slim_link_config *link, const struct slim_video_options *video);
void server_finish(struct slim_server *server);

#endif
