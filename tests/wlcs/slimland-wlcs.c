/*
 * The wlcs integration module: slimland's compositor (src/compositor, all
 * but main.c) run inside the wlcs test runner, one per test.
 *
 * wlcs calls from its own thread; the compositor's event loop runs in a
 * thread of ours, as it would in slimland's main(). Every call that
 * touches the compositor is marshalled onto that loop (an eventfd the loop
 * watches, and a condition variable the caller waits on), so wlroots is
 * only ever used from one thread at a time. Pointer events go through
 * slim_shell_console_input, the path a console's INPUT takes.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <wayland-client-core.h>
#include <wlcs/display_server.h>
#include <wlcs/pointer.h>
#include <wlcs/touch.h>
#include <wlr/types/wlr_surface.h>
#include <wlr/util/log.h>
#include "server.h"
#include "shell-internal.h"

#define WIDTH 1280
#define HEIGHT 720

/* A client wlcs connects over a socket pair: its end's fd finds it again. */
struct client {
	struct wl_list link;
	int client_fd;
	struct wl_client *client;
	struct wl_listener destroy;
	struct slim_wlcs *wlcs;
};

struct slim_wlcs {
	WlcsDisplayServer base;
	struct slim_server server;
	bool initialised, running;
	pthread_t thread;
	pthread_t caller; /* the one thread that calls on_server */
	int call_fd;
	struct wl_event_source *call_source;
	pthread_mutex_t lock;
	pthread_cond_t called;
	void (*call)(struct slim_wlcs *wlcs, void *data);
	void *call_data;
	struct wl_list clients;
};

struct pointer {
	WlcsPointer base;
	struct slim_wlcs *wlcs;
};

/* --- running on the compositor's thread */

static int handle_call(int fd, uint32_t mask, void *data)
{
	struct slim_wlcs *wlcs = data;
	uint64_t n;
	(void)!read(fd, &n, sizeof(n));
	pthread_mutex_lock(&wlcs->lock);
	if (wlcs->call) {
		wlcs->call(wlcs, wlcs->call_data);
		wlcs->call = NULL;
		pthread_cond_broadcast(&wlcs->called);
	}
	pthread_mutex_unlock(&wlcs->lock);
	return 0;
}

/*
 * Runs fn on the compositor's thread (here if it is not running) and waits
 * for it. One call at a time, from the thread that started the server:
 * the one slot would let a second caller overwrite a call not yet made.
 */
static void on_server(struct slim_wlcs *wlcs, void (*fn)(struct slim_wlcs *, void *), void *data)
{
	if (!wlcs->running) {
		fn(wlcs, data);
		return;
	}
	assert(pthread_equal(pthread_self(), wlcs->caller));
	pthread_mutex_lock(&wlcs->lock);
	assert(!wlcs->call);
	wlcs->call = fn;
	wlcs->call_data = data;
	uint64_t one = 1;
	(void)!write(wlcs->call_fd, &one, sizeof(one));
	while (wlcs->call) {
		pthread_cond_wait(&wlcs->called, &wlcs->lock);
	}
	pthread_mutex_unlock(&wlcs->lock);
}

static void *run_server(void *data)
{
	struct slim_wlcs *wlcs = data;
	wl_display_run(wlcs->server.display);
	return NULL;
}

/* --- the display server */

static void start(WlcsDisplayServer *base)
{
	struct slim_wlcs *wlcs = wl_container_of(base, wlcs, base);
	/* server_init started the backend and made the output */
	wlcs->caller = pthread_self();
	wlcs->running = pthread_create(&wlcs->thread, NULL, run_server, wlcs) == 0;
}

static void terminate(struct slim_wlcs *wlcs, void *data)
{
	wl_display_terminate(wlcs->server.display);
}

static void stop(WlcsDisplayServer *base)
{
	struct slim_wlcs *wlcs = wl_container_of(base, wlcs, base);
	if (wlcs->running) {
		on_server(wlcs, terminate, NULL);
		pthread_join(wlcs->thread, NULL);
		wlcs->running = false;
	}
}

static void handle_client_destroy(struct wl_listener *listener, void *data)
{
	struct client *c = wl_container_of(listener, c, destroy);
	wl_list_remove(&c->destroy.link);
	wl_list_remove(&c->link);
	free(c);
}

struct socket_call {
	int server_fd, client_fd;
	bool ok;
};

static void add_client(struct slim_wlcs *wlcs, void *data)
{
	struct socket_call *call = data;
	struct client *c = calloc(1, sizeof(*c));
	c->client = c ? wl_client_create(wlcs->server.display, call->server_fd) : NULL;
	if (!c || !c->client) {
		free(c);
		return;
	}
	c->wlcs = wlcs;
	c->client_fd = call->client_fd;
	c->destroy.notify = handle_client_destroy;
	wl_client_add_destroy_listener(c->client, &c->destroy);
	wl_list_insert(&wlcs->clients, &c->link);
	call->ok = true;
}

static int create_client_socket(WlcsDisplayServer *base)
{
	struct slim_wlcs *wlcs = wl_container_of(base, wlcs, base);
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		return -1;
	}
	struct socket_call call = { .server_fd = sv[0], .client_fd = sv[1] };
	on_server(wlcs, add_client, &call);
	if (!call.ok) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	return sv[1];
}

struct position_call {
	int client_fd;
	uint32_t surface_id;
	int x, y;
};

static void position(struct slim_wlcs *wlcs, void *data)
{
	struct position_call *call = data;
	struct client *c;
	wl_list_for_each(c, &wlcs->clients, link) {
		if (c->client_fd != call->client_fd) {
			continue;
		}
		struct wl_resource *resource = wl_client_get_object(c->client, call->surface_id);
		struct wlr_surface *surface = resource &&
			wl_resource_instance_of(resource, &wl_surface_interface, NULL) ?
			wlr_surface_from_resource(resource) : NULL;
		struct slim_view *view = surface ? view_of_surface(wlcs->server.shell, surface) : NULL;
		if (view) {
			view_move_to(view, call->x, call->y);
		} else {
			wlr_log(WLR_ERROR, "wlcs: no window for surface %u", call->surface_id);
		}
		return;
	}
}

static void position_window_absolute(WlcsDisplayServer *base, struct wl_display *client,
		struct wl_surface *surface, int x, int y)
{
	struct slim_wlcs *wlcs = wl_container_of(base, wlcs, base);
	struct position_call call = {
		.client_fd = wl_display_get_fd(client),
		.surface_id = wl_proxy_get_id((struct wl_proxy *)surface),
		.x = x, .y = y,
	};
	on_server(wlcs, position, &call);
}

/* --- the pointer, as a console moves it */

static void console_input(struct slim_wlcs *wlcs, void *data)
{
	const struct slim_wire_input *ev = data;
	slim_shell_console_input(wlcs->server.shell, ev);
	struct slim_wire_input frame = { .kind = SLIM_INPUT_FRAME };
	slim_shell_console_input(wlcs->server.shell, &frame);
}

static void pointer_event(WlcsPointer *base, struct slim_wire_input ev)
{
	struct pointer *p = wl_container_of(base, p, base);
	on_server(p->wlcs, console_input, &ev);
}

/* wl_fixed_t is 1/256 of a pixel, as the console's coordinates are */
static void move_absolute(WlcsPointer *base, wl_fixed_t x, wl_fixed_t y)
{
	pointer_event(base, (struct slim_wire_input){ .kind = SLIM_INPUT_MOTION_ABS, .x = x, .y = y });
}

static void move_relative(WlcsPointer *base, wl_fixed_t dx, wl_fixed_t dy)
{
	pointer_event(base, (struct slim_wire_input){ .kind = SLIM_INPUT_MOTION_REL, .x = dx,
		.y = dy });
}

static void button_down(WlcsPointer *base, int button)
{
	pointer_event(base, (struct slim_wire_input){ .kind = SLIM_INPUT_BUTTON,
		.code = (uint16_t)button, .value = 1 });
}

static void button_up(WlcsPointer *base, int button)
{
	pointer_event(base, (struct slim_wire_input){ .kind = SLIM_INPUT_BUTTON,
		.code = (uint16_t)button, .value = 0 });
}

static void pointer_destroy(WlcsPointer *base)
{
	struct pointer *p = wl_container_of(base, p, base);
	free(p);
}

static WlcsPointer *create_pointer(WlcsDisplayServer *base)
{
	struct slim_wlcs *wlcs = wl_container_of(base, wlcs, base);
	struct pointer *p = calloc(1, sizeof(*p));
	if (!p) {
		return NULL;
	}
	p->wlcs = wlcs;
	p->base = (WlcsPointer){
		.version = WLCS_POINTER_VERSION,
		.move_absolute = move_absolute,
		.move_relative = move_relative,
		.button_up = button_up,
		.button_down = button_down,
		.destroy = pointer_destroy,
	};
	return &p->base;
}

/*
 * Consoles have no touch screen: touch tests are filtered out by the
 * runner's invocation (tests/wlcs/run-wlcs.py); this is for any left.
 */
static void touch_nothing(WlcsTouch *touch, wl_fixed_t x, wl_fixed_t y)
{
}

static void touch_up(WlcsTouch *touch)
{
}

static void touch_destroy(WlcsTouch *touch)
{
	free(touch);
}

static WlcsTouch *create_touch(WlcsDisplayServer *base)
{
	WlcsTouch *t = calloc(1, sizeof(*t));
	if (t) {
		*t = (WlcsTouch){
			.version = WLCS_TOUCH_VERSION,
			.touch_down = touch_nothing,
			.touch_move = touch_nothing,
			.touch_up = touch_up,
			.destroy = touch_destroy,
		};
	}
	return t;
}

/* What slimland advertises (README), for wlcs to skip the tests of the rest. */
static const WlcsExtensionDescriptor extensions[] = {
	{ "wl_compositor", 4 },
	{ "wl_subcompositor", 1 },
	{ "wl_shm", 1 },
	{ "wl_seat", 7 },
	{ "wl_output", 3 },
	{ "wl_data_device_manager", 3 },
	{ "xdg_wm_base", 2 },
	{ "zwlr_layer_shell_v1", 4 },
	{ "zxdg_decoration_manager_v1", 1 },
	{ "xdg_activation_v1", 1 },
	{ "zwlr_foreign_toplevel_manager_v1", 3 },
	{ "zxdg_output_manager_v1", 3 },
	{ "wp_viewporter", 1 },
	{ "zwp_pointer_constraints_v1", 1 },
	{ "zwp_relative_pointer_manager_v1", 1 },
	{ "zwp_primary_selection_device_manager_v1", 1 },
	{ "zwlr_virtual_pointer_manager_v1", 2 },
	{ "zwp_virtual_keyboard_manager_v1", 1 },
	{ "zwp_text_input_manager_v3", 1 },
	{ "zwp_input_method_manager_v2", 1 },
};

static const WlcsIntegrationDescriptor descriptor = {
	.version = 1,
	.num_extensions = sizeof(extensions) / sizeof(extensions[0]),
	.supported_extensions = extensions,
};

static const WlcsIntegrationDescriptor *get_descriptor(const WlcsDisplayServer *server)
{
	return &descriptor;
}

static void destroy_server(WlcsDisplayServer *base)
{
	struct slim_wlcs *wlcs = wl_container_of(base, wlcs, base);
	stop(base);
	if (wlcs->call_source) {
		wl_event_source_remove(wlcs->call_source);
	}
	if (wlcs->initialised) {
		server_finish(&wlcs->server);
	}
	if (wlcs->call_fd >= 0) {
		close(wlcs->call_fd);
	}
	pthread_cond_destroy(&wlcs->called);
	pthread_mutex_destroy(&wlcs->lock);
	free(wlcs);
}

static WlcsDisplayServer *create_server(int argc, const char **argv)
{
	struct slim_wlcs *wlcs = calloc(1, sizeof(*wlcs));
	if (!wlcs) {
		return NULL;
	}
	wlcs->base = (WlcsDisplayServer){
		.version = 2,
		.start = start,
		.stop = stop,
		.create_client_socket = create_client_socket,
		.position_window_absolute = position_window_absolute,
		.create_pointer = create_pointer,
		.create_touch = create_touch,
		.get_descriptor = get_descriptor,
	};
	wl_list_init(&wlcs->clients);
	pthread_mutex_init(&wlcs->lock, NULL);
	pthread_cond_init(&wlcs->called, NULL);
	wlcs->call_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	/* no console will come: the link only listens, in clear, on loopback */
	struct slim_link_config link = { .listen = "127.0.0.1:0", .mode = SLIM_SEC_CLEAR };
	wlr_log_init(getenv("SLIMLAND_WLCS_DEBUG") ? WLR_DEBUG : WLR_ERROR, NULL);
	wlcs->initialised = true;
	if (wlcs->call_fd < 0 || !server_init(&wlcs->server, WIDTH, HEIGHT, &link,
			&(struct slim_video_options){ 0 })) {
		destroy_server(&wlcs->base);
		return NULL;
	}
	wlcs->call_source = wl_event_loop_add_fd(wlcs->server.loop, wlcs->call_fd,
		WL_EVENT_READABLE, handle_call, wlcs);
	if (!wlcs->call_source) {
		destroy_server(&wlcs->base);
		return NULL;
	}
	return &wlcs->base;
}

const WlcsServerIntegration wlcs_server_integration = {
	.version = 1,
	.create_server = create_server,
	.destroy_server = destroy_server,
};
