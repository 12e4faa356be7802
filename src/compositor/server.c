/*
 * The session: the Wayland globals, and the rooms made, wired together and
 * ended. Each room tells the session what it must know through the
 * handler it was given here (the link, the manager's control, the shell,
 * video, sound), and the session passes it on: the pointer to cursor.c,
 * window moves and repaints to output.c, focus to the cgroup policy,
 * activity to the manager.
 */
#include <stdlib.h>
#include <string.h>
#include <wlr/backend.h>
#include <wlr/backend/headless.h>
#include <wlr/render/allocator.h>
#include <wlr/render/wlr_renderer.h>
#include <wlr/types/wlr_compositor.h>
#include <wlr/types/wlr_data_control_v1.h>
#include <wlr/types/wlr_data_device.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_output_layout.h>
#include <wlr/types/wlr_presentation_time.h>
#include <wlr/types/wlr_primary_selection_v1.h>
#include <wlr/types/wlr_scene.h>
#include <wlr/types/wlr_screencopy_v1.h>
#include <wlr/types/wlr_viewporter.h>
#include <wlr/types/wlr_xdg_output_v1.h>
#include <wlr/util/log.h>
#include "console-audio.h"
#include "content-type.h"
#include "cursor.h"
#include "manager-control.h"
#include "heads.h"
#include "pixel-allocator.h"
#include "protocol-check.h"
#include "renderer.h"
#include "server.h"
#include "session-bus.h"
#include "shadow.h"
#include "shell.h"
#include "slim-sched.h"
#include "sound.h"
#include "video.h"

/*
 * The cgroup policy's moves wait for the frame the user waits for
 * (slim-sched.h): output.c applies them once it has sent a frame, and this
 * timer when no frame comes.
 */
#define SCHED_LATEST_MS 50

static int handle_sched_timer(void *data)
{
	struct slim_server *server = data;
	slim_sched_apply(server->sched);
	return 0;
}

/* The cgroup policy has moves to make: after the next frame, or soon. */
static void sched_changed(struct slim_server *server)
{
	if (slim_sched_pending(server->sched)) {
		wl_event_source_timer_update(server->sched_timer, SCHED_LATEST_MS);
	}
}

/* Where the console's heads are, for its pointer; which one the greeter shows on. */
static void tell_shell_heads(struct slim_server *server)
{
	size_t n;
	const struct slim_screen_map *maps = heads_maps(server->heads, &n);
	slim_shell_set_heads(server->shell, maps, n, heads_primary(server->heads));
}

static void handle_link_attached(void *data, const char *console_id,
		const struct slim_desk *desk)
{
	struct slim_server *server = data;
	uint32_t width, height;
	slim_desk_bounds(desk, &width, &height);
	heads_apply(server->heads, desk);
	tell_shell_heads(server);
	slim_shell_console_attached(server->shell, console_id, desk);
	cursor_resend(server->cursor);
	heads_attached(server->heads);
	video_set_console_codec(server->video,
		server->video_codec ? slim_link_h264(server->link) : NULL);
	slim_sched_attached(server->sched, true);
	sched_changed(server);
	if (sound_audio(server->sound)) {
		audio_microphone_reset(sound_audio(server->sound));
	}
	/* after the resize: the manager may take a screenshot the moment it hears */
	slim_control_attached(server->control, console_id, width, height);
}

static void handle_link_video_recover(void *data, uint8_t stream)
{
	struct slim_server *server = data;
	/* the stream's next picture is a key picture: a playing video draws one soon */
	video_recover(server->video, stream);
}

static void handle_link_detached(void *data, const char *console_id)
{
	struct slim_server *server = data;
	/* the encoders' memory goes back until a console shows the session again */
	video_set_console_codec(server->video, NULL);
	slim_sched_attached(server->sched, false);
	sched_changed(server);
	if (sound_audio(server->sound)) {
		audio_microphone_reset(sound_audio(server->sound));
	}
	shadow_owner_detached(server->shadow);
	slim_control_detached(server->control, console_id);
}

static void handle_link_released(void *data)
{
	struct slim_server *server = data;
	/* drawn again, whole, for the next console */
	heads_release_buffers(server->heads);
	slim_pixel_allocator_trim(server->allocator);
}

static void handle_link_input(void *data, const struct slim_wire_input *ev)
{
	struct slim_server *server = data;
	if (!shadow_owner_input(server->shadow, ev)) {
		slim_shell_console_input(server->shell, ev);
	}
}

static void handle_link_want_frame(void *data)
{
	struct slim_server *server = data;
	heads_link_ready(server->heads);
}

/* Per mille of `of`, rounded, at most 1000. */
static unsigned permille(uint64_t n, uint64_t of)
{
	return of == 0 ? 0 : n >= of ? 1000 : (unsigned)((n * 1000 + of / 2) / of);
}

static void handle_link_audio_report(void *data)
{
	struct slim_server *server = data;
	struct slim_link_audio_stats st;
	slim_link_audio_stats(server->link, &st);
	/* what was sent: what came, and what was lost on the way */
	uint64_t sent = (uint64_t)st.received + st.repaired + st.lost;
	slim_control_audio(server->control, slim_link_console_id(server->link),
		st.codec == SLIM_AUDIO_PCM ? "pcm" : "opus", (unsigned)(st.bitrate / 1000),
		st.depth_ms, permille((uint64_t)st.repaired + st.lost, sent),
		permille(st.lost, sent));
}

static void handle_link_microphone(void *data, const struct slim_audio_packet *p, bool again)
{
	struct slim_server *server = data;
	if (sound_audio(server->sound)) {
		audio_microphone_packet(sound_audio(server->sound), p, again);
	}
}

static void handle_link_report(void *data)
{
	struct slim_server *server = data;
	slim_control_link(server->control, slim_link_console_id(server->link),
		slim_link_pacer_stats(server->link));
	struct slim_encoder *enc = slim_link_encoder(server->link);
	if (enc) {
		slim_control_traffic(server->control, slim_link_console_id(server->link),
			slim_encoder_stats(enc), slim_link_key_latency(server->link));
	}
	/* the busiest compressed stream, if one plays */
	struct video_codec_stream_info best = { 0 }, info;
	for (uint8_t i = 0; i < SLIM_VIDEO_STREAMS; i++) {
		video_codec_stats(server->video, i, &info);
		if (info.active && (!best.active ||
				(uint64_t)info.width * info.height > (uint64_t)best.width * best.height)) {
			best = info;
		}
	}
	if (best.active) {
		struct slim_control_video v = {
			.kind = best.enc.kind, .device = best.enc.device,
			.bitrate_bps = best.enc.bitrate_bps, .encode_ms_p50 = best.enc.encode_ms_p50,
			.encode_ms_p99 = best.enc.encode_ms_p99, .width = best.width, .height = best.height,
		};
		slim_control_video(server->control, slim_link_console_id(server->link), &v);
	}
}

static const struct slim_link_handler link_handler = {
	.attached = handle_link_attached,
	.detached = handle_link_detached,
	.released = handle_link_released,
	.input = handle_link_input,
	.want_frame = handle_link_want_frame,
	.audio_report = handle_link_audio_report,
	.microphone = handle_link_microphone,
	.link_report = handle_link_report,
	.video_recover = handle_link_video_recover,
};

static void handle_control_expect(void *data, const uint8_t token[SLIM_ATTACH_TOKEN_LEN],
		const char console_id[SLIM_CONSOLE_ID_LEN], const uint8_t key[SLIM_CONTROL_KEY_LEN])
{
	struct slim_server *server = data;
	slim_link_expect(server->link, token, console_id, key);
}

static void handle_control_detach(void *data)
{
	struct slim_server *server = data;
	slim_link_detach(server->link, "the session manager detached it");
}

static void handle_control_shadow(void *data, const struct slim_control_line *req)
{
	struct slim_server *server = data;
	shadow_request(server->shadow, req);
}

static void handle_control_unshadow(void *data)
{
	struct slim_server *server = data;
	shadow_stop(server->shadow, "stopped");
}

static const struct slim_control_handler control_handler = {
	.expect = handle_control_expect,
	.detach = handle_control_detach,
	.shadow = handle_control_shadow,
	.unshadow = handle_control_unshadow,
};

/* The focused client first (slim-sched.h), once the frame it waits for has gone. */
static void handle_shell_focus(void *data, pid_t pid)
{
	struct slim_server *server = data;
	slim_sched_focus(server->sched, pid);
	sched_changed(server);
}

/* It draws every X11 window: first, with the compositor, not with the clients. */
static void handle_shell_xwayland_ready(void *data, pid_t pid)
{
	struct slim_server *server = data;
	slim_sched_server(server->sched, pid);
}

static void handle_shell_window_moved(void *data, struct wlr_box box, int32_t dx, int32_t dy)
{
	struct slim_server *server = data;
	heads_note_move(server->heads, box, dx, dy);
}

static void handle_shell_pointer_moved(void *data)
{
	struct slim_server *server = data;
	cursor_moved(server->cursor);
}

static void handle_shell_cursor_theme(void *data, const char *name)
{
	struct slim_server *server = data;
	cursor_set_theme(server->cursor, name);
}

/* The manager's reauth = idle:N counts from these (protocols.c). */
static void handle_shell_activity(void *data)
{
	struct slim_server *server = data;
	slim_control_active(server->control);
}

static void handle_shell_idle_inhibited(void *data, bool inhibited)
{
	struct slim_server *server = data;
	slim_control_inhibit(server->control, inhibited);
}

static const struct slim_shell_handler shell_handler = {
	.focus = handle_shell_focus,
	.xwayland_ready = handle_shell_xwayland_ready,
	.window_moved = handle_shell_window_moved,
	.pointer_moved = handle_shell_pointer_moved,
	.cursor_theme = handle_shell_cursor_theme,
	.activity = handle_shell_activity,
	.idle_inhibited = handle_shell_idle_inhibited,
};

static void handle_video_repaint(void *data, const pixman_region32_t *region)
{
	struct slim_server *server = data;
	heads_damage_region(server->heads, region);
}

static uint64_t handle_video_link_budget(void *data, uint64_t demand_bps)
{
	struct slim_server *server = data;
	return slim_link_video_budget(server->link, demand_bps);
}

static bool handle_video_texture_yuv(void *data, struct wlr_texture *texture,
		struct slim_yuv_image *img)
{
	return renderer_texture_yuv(texture, img);
}

static const struct slim_video_handler video_handler = {
	.repaint = handle_video_repaint,
	.link_budget = handle_video_link_budget,
	.texture_yuv = handle_video_texture_yuv,
};

/* Every client starts in background (hidden while no console shows us). */
static void handle_client_created(struct wl_listener *listener, void *data)
{
	struct slim_server *server = wl_container_of(listener, server, client_created);
	pid_t pid;
	wl_client_get_credentials(data, &pid, NULL, NULL);
	slim_sched_client(server->sched, pid);
}

/* The cgroup policy, which every client is put under as it connects. */
static bool start_sched(struct slim_server *server)
{
	server->sched = slim_sched_create("/sys/fs/cgroup");
	server->sched_timer = wl_event_loop_add_timer(server->loop, handle_sched_timer, server);
	if (!server->sched || !server->sched_timer) {
		return false;
	}
	server->client_created.notify = handle_client_created;
	wl_display_add_client_created_listener(server->display, &server->client_created);
	return true;
}

/* The console's association and, managed, the manager's control socket. */
static bool start_link(struct slim_server *server, const struct slim_link_config *link)
{
	/* a watching console's link is managed: no pairing key of this copy's is ever used */
	server->link_config = *link;
	memset(server->link_config.pairing_key, 0, sizeof(server->link_config.pairing_key));
	server->link = slim_link_create(server->loop, link, &link_handler, server);
	if (!server->link) {
		return false;
	}
	if (link->managed) {
		server->control = slim_control_create(server->loop, slim_link_port(server->link),
			server->manager_uid, &control_handler, server);
		if (!server->control) {
			return false;
		}
	}
	return true;
}

/*
 * A headless backend rendered by pixman: never the autocreated renderer,
 * which would pick GLES2 wherever a render node exists, and has nothing to
 * gain on a streamed output.
 */
static bool create_renderer(struct slim_server *server)
{
	server->backend = wlr_headless_backend_create(server->display);
	server->renderer = renderer_create();
	server->protocol_check = protocol_check_create(server->display);
	if (!server->backend || !server->renderer || !server->protocol_check ||
			!wlr_renderer_init_wl_display(server->renderer, server->display)) {
		wlr_log(WLR_ERROR, "cannot create the headless backend or pixman renderer");
		return false;
	}
	/* the outputs' buffers: memory in RAM for the encoder, kept for the next of a size */
	server->allocator = slim_pixel_allocator_create();
	if (!server->allocator) {
		wlr_log(WLR_ERROR, "cannot create an allocator");
		return false;
	}
	return true;
}

/* The surfaces, the scene they are shown in, and the globals of neither shell nor media. */
static struct wlr_compositor *create_globals(struct slim_server *server,
		const struct slim_video_options *video)
{
	struct wlr_compositor *compositor = wlr_compositor_create(server->display, server->renderer);
	server->scene = wlr_scene_create();
	server->video = compositor && server->scene ? video_create(server->loop, compositor,
		server->scene, video->budget_bps, video->device, &video_handler, server) : NULL;
	server->video_codec = video->codec;
	if (!server->video || !content_type_init(server->display)) {
		wlr_log(WLR_ERROR, "cannot create the compositor or the video tracker");
		return NULL;
	}
	server->layout = wlr_output_layout_create();
	struct wlr_presentation *presentation =
		wlr_presentation_create(server->display, server->backend);
	if (!wlr_data_device_manager_create(server->display) ||
			!wlr_primary_selection_v1_device_manager_create(server->display) ||
			!wlr_data_control_manager_v1_create(server->display) ||
			!wlr_viewporter_create(server->display) ||
			!wlr_screencopy_manager_v1_create(server->display) || !server->layout ||
			!wlr_xdg_output_manager_v1_create(server->display, server->layout) ||
			!server->scene || !presentation ||
			!wlr_scene_attach_output_layout(server->scene, server->layout)) {
		wlr_log(WLR_ERROR, "cannot create the Wayland globals");
		return NULL;
	}
	wlr_scene_set_presentation(server->scene, presentation);
	return compositor;
}

static void handle_heads_streamed(void *data, const struct slim_fb *fb,
		const pixman_region32_t *damage)
{
	struct slim_server *server = data;
	shadow_frame(server->shadow, fb, damage);
}

/* The console's heads, shown once the backend runs; the shell finds them in the layout. */
static bool start_heads(struct slim_server *server, uint32_t width, uint32_t height)
{
	if (!wlr_backend_start(server->backend)) {
		wlr_log(WLR_ERROR, "cannot start the backend");
		return false;
	}
	struct slim_heads_deps deps = {
		.display = server->display, .loop = server->loop, .backend = server->backend,
		.allocator = server->allocator, .renderer = server->renderer,
		.layout = server->layout, .scene = server->scene, .link = server->link,
		.video = server->video, .sched = server->sched,
		.tap = { .streamed = handle_heads_streamed, .data = server },
	};
	struct slim_desk desk;
	slim_desk_single(&desk, width, height);
	server->heads = heads_create(&deps, &desk);
	if (!server->heads) {
		return false;
	}
	tell_shell_heads(server);
	return true;
}

/* The globals a desktop client expects, and the console's screen they show on. */
bool server_init(struct slim_server *server, uint32_t width, uint32_t height,
		const struct slim_link_config *link, const struct slim_video_options *video)
{
	/* server_finish() removes it whether or not start-up got that far */
	wl_list_init(&server->client_created.link);
	server->display = wl_display_create();
	if (!server->display) {
		return false;
	}
	server->loop = wl_display_get_event_loop(server->display);
	if (!start_sched(server) || !start_link(server, link) || !create_renderer(server)) {
		return false;
	}
	struct wlr_compositor *compositor = create_globals(server, video);
	if (!compositor) {
		return false;
	}
	server->shell = slim_shell_create(server->display, server->backend, server->scene,
		server->layout, compositor, &shell_handler, server);
	server->cursor = server->shell ? cursor_create(server->link, server->shell) : NULL;
	server->shadow = server->cursor ? shadow_create(server) : NULL;
	return server->shadow && start_heads(server, width, height);
}

void server_finish(struct slim_server *server)
{
	if (!server->display) {
		return;
	}
	/* the clients go with it */
	slim_shell_destroy(server->shell);
	sound_destroy(server->sound);
	slim_session_bus_stop(server->session_bus);
	wl_list_remove(&server->client_created.link);
	video_destroy(server->video);
	protocol_check_destroy(server->protocol_check);
	cursor_destroy(server->cursor);
	shadow_destroy(server->shadow);
	slim_control_destroy(server->control);
	slim_link_destroy(server->link);
	if (server->sched_timer) {
		wl_event_source_remove(server->sched_timer);
	}
	slim_sched_destroy(server->sched);
	/*
	 * The layout first: wlr_scene_attach_output_layout left a listener on
	 * it that reads the scene, and destroying the output (with the display)
	 * would call it after the scene is gone.
	 */
	wlr_output_layout_destroy(server->layout);
	/*
	 * The scene's nodes (the background's buffer among them) hold each
	 * other; they go while the output they show on is still there.
	 */
	if (server->scene) {
		wlr_scene_node_destroy(&server->scene->node);
	}
	/* not the backend's: the display does not take them */
	heads_destroy(server->heads);
	wl_display_destroy(server->display);
	/* the display took the backend with it; these are ours to destroy */
	if (server->allocator) {
		wlr_allocator_destroy(server->allocator);
	}
	if (server->renderer) {
		wlr_renderer_destroy(server->renderer);
	}
}
