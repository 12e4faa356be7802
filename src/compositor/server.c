#include <stdlib.h>
#include <wlr/backend.h>
#include <wlr/backend/headless.h>
#include <wlr/render/allocator.h>
#include <wlr/render/wlr_renderer.h>
#include <wlr/types/wlr_compositor.h>
#include <wlr/types/wlr_data_control_v1.h>
#include <wlr/types/wlr_data_device.h>
#include <wlr/types/wlr_foreign_toplevel_management_v1.h>
#include <wlr/types/wlr_output_layout.h>
#include <wlr/types/wlr_presentation_time.h>
#include <wlr/types/wlr_primary_selection.h>
#include <wlr/types/wlr_primary_selection_v1.h>
#include <wlr/types/wlr_scene.h>
#include <wlr/types/wlr_screencopy_v1.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_viewporter.h>
#include <wlr/types/wlr_xdg_output_v1.h>
#include <wlr/util/log.h>
#include "server.h"

static void handle_request_set_selection(struct wl_listener *listener, void *data)
{
	struct slim_server *server = wl_container_of(listener, server, request_set_selection);
	struct wlr_seat_request_set_selection_event *event = data;
	wlr_seat_set_selection(server->seat, event->source, event->serial);
}

static void handle_request_set_primary_selection(struct wl_listener *listener, void *data)
{
	struct slim_server *server =
		wl_container_of(listener, server, request_set_primary_selection);
	struct wlr_seat_request_set_primary_selection_event *event = data;
	wlr_seat_set_primary_selection(server->seat, event->source, event->serial);
}

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

void server_sched_changed(struct slim_server *server)
{
	if (slim_sched_pending(server->sched)) {
		wl_event_source_timer_update(server->sched_timer, SCHED_LATEST_MS);
	}
}

static void handle_link_attached(void *data, const char *console_id, uint32_t width,
		uint32_t height)
{
	struct slim_server *server = data;
	output_resize(server, width, height);
	cursor_resend(server);
	output_attached(server);
	slim_sched_attached(server->sched, true);
	server_sched_changed(server);
	if (server->audio) {
		audio_microphone_reset(server->audio);
	}
	/* after the resize: the manager may take a screenshot the moment it hears */
	slim_control_attached(server->control, console_id, width, height);
}

static void handle_link_detached(void *data, const char *console_id)
{
	struct slim_server *server = data;
	slim_sched_attached(server->sched, false);
	server_sched_changed(server);
	if (server->audio) {
		audio_microphone_reset(server->audio);
	}
	slim_control_detached(server->control, console_id);
}

static void handle_link_input(void *data, const struct slim_wire_input *ev)
{
	input_handle_console(data, ev);
}

static void handle_link_want_frame(void *data)
{
	output_link_ready(data);
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
	if (server->audio) {
		audio_microphone_packet(server->audio, p, again);
	}
}

static void handle_link_report(void *data)
{
	struct slim_server *server = data;
	slim_control_link(server->control, slim_link_console_id(server->link),
		slim_link_pacer_stats(server->link));
}

static const struct slim_link_handler link_handler = {
	.attached = handle_link_attached,
	.detached = handle_link_detached,
	.input = handle_link_input,
	.want_frame = handle_link_want_frame,
	.audio_report = handle_link_audio_report,
	.microphone = handle_link_microphone,
	.link_report = handle_link_report,
};

static void handle_audio_speaker(void *data, const int16_t *pcm)
{
	struct slim_server *server = data;
	slim_link_send_audio(server->link, pcm);
}

static const struct slim_audio_handler audio_handler = {
	.speaker = handle_audio_speaker,
};

void server_start_audio(struct slim_server *server)
{
	server->audio_daemons = slim_audio_daemons_start(server->sched);
	server->audio = server->audio_daemons ?
		audio_create(server->loop, &audio_handler, server) : NULL;
}

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

static const struct slim_control_handler control_handler = {
	.expect = handle_control_expect,
	.detach = handle_control_detach,
};

/* Every client starts in background (hidden while no console shows us). */
static void handle_client_created(struct wl_listener *listener, void *data)
{
	struct slim_server *server = wl_container_of(listener, server, client_created);
	pid_t pid;
	wl_client_get_credentials(data, &pid, NULL, NULL);
	slim_sched_client(server->sched, pid);
}

/*
 * The globals a desktop client expects, on a headless backend rendered by
 * pixman: never the autocreated renderer, which would pick GLES2 wherever
 * a render node exists, and has nothing to gain on a streamed output.
 */
bool server_init(struct slim_server *server, uint32_t width, uint32_t height,
		const struct slim_link_config *link, uint64_t video_budget_bps)
{
	wl_list_init(&server->views);
	/* server_finish() removes these whether or not start-up got that far. */
	struct wl_listener *listeners[] = {
		&server->cursor_commit, &server->cursor_destroy, &server->client_created,
		&server->new_xdg_surface, &server->request_cursor,
		&server->request_set_selection, &server->request_set_primary_selection,
		&server->new_layer_surface,
	};
	for (size_t i = 0; i < sizeof(listeners) / sizeof(listeners[0]); i++) {
		wl_list_init(&listeners[i]->link);
	}
	server->width = width;
	server->height = height;
	server->display = wl_display_create();
	if (!server->display) {
		return false;
	}
	server->loop = wl_display_get_event_loop(server->display);
	server->sched = slim_sched_create("/sys/fs/cgroup");
	server->sched_timer = wl_event_loop_add_timer(server->loop, handle_sched_timer, server);
	if (!server->sched || !server->sched_timer) {
		return false;
	}
	server->client_created.notify = handle_client_created;
	wl_display_add_client_created_listener(server->display, &server->client_created);
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
	server->backend = wlr_headless_backend_create(server->display);
	server->renderer = renderer_create();
	server->protocol_check = protocol_check_create(server->display);
	if (!server->backend || !server->renderer || !server->protocol_check ||
			!wlr_renderer_init_wl_display(server->renderer, server->display)) {
		wlr_log(WLR_ERROR, "cannot create the headless backend or pixman renderer");
		return false;
	}
	server->allocator = wlr_allocator_autocreate(server->backend, server->renderer);
	if (!server->allocator) {
		wlr_log(WLR_ERROR, "cannot create an allocator");
		return false;
	}

	struct wlr_compositor *compositor = wlr_compositor_create(server->display, server->renderer);
	server->video = compositor ? video_create(server, compositor, video_budget_bps) : NULL;
	if (!server->video || !content_type_init(server)) {
		wlr_log(WLR_ERROR, "cannot create the compositor or the video tracker");
		return false;
	}
	/* without it X11 programs find no DISPLAY; Wayland ones do not care */
	server->xwayland = xwayland_create(server, compositor);
	server->layout = wlr_output_layout_create();
	server->scene = wlr_scene_create();
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
		return false;
	}
	wlr_scene_set_presentation(server->scene, presentation);
	if (!background_set_size(server, width, height) || !layers_init(server)) {
		return false;
	}

	server->xdg_shell = wlr_xdg_shell_create(server->display);
	server->seat = wlr_seat_create(server->display, "seat0");
	if (!server->xdg_shell || !server->seat) {
		wlr_log(WLR_ERROR, "cannot create the shell or the seat");
		return false;
	}
	server->new_xdg_surface.notify = xdg_handle_new_surface;
	wl_signal_add(&server->xdg_shell->events.new_surface, &server->new_xdg_surface);

	server->request_set_selection.notify = handle_request_set_selection;
	wl_signal_add(&server->seat->events.request_set_selection,
		&server->request_set_selection);
	server->request_set_primary_selection.notify = handle_request_set_primary_selection;
	wl_signal_add(&server->seat->events.request_set_primary_selection,
		&server->request_set_primary_selection);
	server->protocols = protocols_create(server);
	server->constraints = constraints_create(server);
	server->virtual_input = virtual_input_create(server);
	server->text_inputs = text_inputs_create(server);
	server->toplevels = wlr_foreign_toplevel_manager_v1_create(server->display);
	if (!server->protocols || !server->constraints || !server->virtual_input ||
			!server->text_inputs || !server->toplevels) {
		wlr_log(WLR_ERROR, "cannot create the Wayland globals");
		return false;
	}
	server->request_cursor.notify = cursor_handle_request;
	wl_signal_add(&server->seat->events.request_set_cursor, &server->request_cursor);

	if (!input_init(server) || !cursor_init(server)) {
		return false;
	}
	if (!wlr_backend_start(server->backend)) {
		wlr_log(WLR_ERROR, "cannot start the backend");
		return false;
	}
	server->screen = screen_create(server->backend, server->display, width, height);
	if (!server->screen) {
		return false;
	}
	output_create(server, server->screen);
	return server->output != NULL;
}

void server_finish(struct slim_server *server)
{
	if (!server->display) {
		return;
	}
	xwayland_destroy(server->xwayland);
	wl_display_destroy_clients(server->display);
	audio_destroy(server->audio);
	slim_audio_daemons_stop(server->audio_daemons);
	slim_session_bus_stop(server->session_bus);
	wl_list_remove(&server->client_created.link);
	wl_list_remove(&server->new_xdg_surface.link);
	wl_list_remove(&server->new_layer_surface.link);
	wl_list_remove(&server->request_cursor.link);
	wl_list_remove(&server->request_set_selection.link);
	wl_list_remove(&server->request_set_primary_selection.link);
	video_destroy(server->video);
	protocols_destroy(server->protocols);
	constraints_destroy(server->constraints);
	virtual_input_destroy(server->virtual_input);
	text_inputs_destroy(server->text_inputs);
	protocol_check_destroy(server->protocol_check);
	cursor_finish(server);
	input_finish(server);
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
	/* not the backend's: the display does not take it */
	screen_destroy(server->screen);
	wl_display_destroy(server->display);
	/* the display took the backend with it; these are ours to destroy */
	if (server->allocator) {
		wlr_allocator_destroy(server->allocator);
	}
	if (server->renderer) {
		wlr_renderer_destroy(server->renderer);
	}
}
