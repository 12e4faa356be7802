/*
 * slim-im [--grab | --commit-now | --preedit-only | --popup] TEXT: an input method
 * (input-method-v2) that says what it sees on stdout, one line an event
 * ("ready" once bound).
 *
 *   (default)       on each activation: a preedit, then TEXT committed
 *                   ("activate", "surrounding TEXT", "committed",
 *                   "deactivate", "unavailable")
 *   --grab          also grabs the keyboard: "keymap", "key KEY STATE"
 *   --commit-now    commits TEXT at once, before any activation, and again
 *                   on an activation before the done that completes it:
 *                   both about a state it had not been told, which the
 *                   compositor must ignore; then only reports
 *   --preedit-only  on activation a preedit and never a commit: "preedit"
 *   --popup         on the first activation a candidate window, POPUP_W x
 *                   POPUP_H of POPUP_RGB, and never a commit: "popup", then
 *                   "rectangle X Y W H" where the text cursor is from its corner
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wayland-client.h>
#include "globals.h"
#include "input-method-v2.h"

enum mode { COMMIT, GRAB, COMMIT_NOW, PREEDIT_ONLY, POPUP };

/* the candidate window, a colour no other client of the tests draws */
#define POPUP_W 64
#define POPUP_H 32
#define POPUP_RGB 0xff00ffu

struct im {
	enum mode mode;
	const char *text;
	struct wl_display *display;
	struct wl_seat *seat;
	struct wl_compositor *compositor;
	struct wl_shm *shm;
	struct wl_proxy *manager, *im, *grab, *popup;
	uint32_t serial; /* done events received: what commit echoes */
	bool pending_active, active;
	char surrounding[256];
};

static void commit(struct im *m)
{
	wl_proxy_marshal_flags(m->im, IM_COMMIT, NULL, 1, 0, m->serial);
}

static void handle_activate(void *data, struct wl_proxy *im)
{
	struct im *m = data;
	m->pending_active = true;
	if (m->mode == COMMIT_NOW) {
		/* its serial counts the done events before this activation's */
		wl_proxy_marshal_flags(m->im, IM_COMMIT_STRING, NULL, 1, 0, m->text);
		commit(m);
	}
}

static void handle_deactivate(void *data, struct wl_proxy *im)
{
	((struct im *)data)->pending_active = false;
}

static void handle_surrounding_text(void *data, struct wl_proxy *im, const char *text,
		uint32_t cursor, uint32_t anchor)
{
	struct im *m = data;
	snprintf(m->surrounding, sizeof(m->surrounding), "%s", text);
}

static void handle_text_change_cause(void *data, struct wl_proxy *im, uint32_t cause)
{
}

static void handle_content_type(void *data, struct wl_proxy *im, uint32_t hint,
		uint32_t purpose)
{
}

static void handle_text_input_rectangle(void *data, struct wl_proxy *popup, int32_t x,
		int32_t y, int32_t width, int32_t height)
{
	say("rectangle %d %d %d %d", x, y, width, height);
}

static const struct {
	void (*text_input_rectangle)(void *data, struct wl_proxy *popup, int32_t x, int32_t y,
		int32_t width, int32_t height);
} popup_listener = { handle_text_input_rectangle };

static void show_popup(struct im *m)
{
	uint8_t *mem;
	size_t size = POPUP_W * POPUP_H * 4;
	struct wl_shm_pool *pool = test_pool(m->shm, size, 0, &mem);
	for (size_t i = 0; i < POPUP_W * POPUP_H; i++) {
		((uint32_t *)mem)[i] = POPUP_RGB;
	}
	struct wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, POPUP_W, POPUP_H,
		POPUP_W * 4, WL_SHM_FORMAT_XRGB8888);
	wl_shm_pool_destroy(pool);
	struct wl_surface *surface = wl_compositor_create_surface(m->compositor);
	m->popup = wl_proxy_marshal_flags(m->im, IM_GET_INPUT_POPUP_SURFACE,
		&zwp_input_popup_surface_v2_interface, 1, 0, NULL, surface);
	wl_proxy_add_listener(m->popup, (void (**)(void))&popup_listener, m);
	wl_surface_attach(surface, buffer, 0, 0);
	wl_surface_commit(surface);
	wl_display_flush(m->display);
	say("popup");
}

static void handle_done(void *data, struct wl_proxy *im)
{
	struct im *m = data;
	m->serial++;
	if (m->pending_active == m->active) {
		return;
	}
	m->active = m->pending_active;
	if (!m->active) {
		say("deactivate");
		return;
	}
	say("activate");
	say("surrounding %s", m->surrounding);
	if (m->mode == COMMIT_NOW) {
		return;
	}
	if (m->mode == POPUP) {
		if (!m->popup) {
			show_popup(m);
		}
		return;
	}
	/* as an input method composes: first what is being typed, then the word */
	wl_proxy_marshal_flags(m->im, IM_SET_PREEDIT_STRING, NULL, 1, 0, "にほんご", 0, 0);
	commit(m);
	if (m->mode == PREEDIT_ONLY) {
		wl_display_flush(m->display);
		say("preedit");
		return;
	}
	wl_proxy_marshal_flags(m->im, IM_COMMIT_STRING, NULL, 1, 0, m->text);
	commit(m);
	wl_display_flush(m->display);
	say("committed");
}

static void handle_unavailable(void *data, struct wl_proxy *im)
{
	say("unavailable");
}

static const struct im_listener im_listener = {
	.activate = handle_activate,
	.deactivate = handle_deactivate,
	.surrounding_text = handle_surrounding_text,
	.text_change_cause = handle_text_change_cause,
	.content_type = handle_content_type,
	.done = handle_done,
	.unavailable = handle_unavailable,
};

static void handle_keymap(void *data, struct wl_proxy *grab, uint32_t format, int32_t fd,
		uint32_t size)
{
	close(fd);
	say("keymap");
}

static void handle_key(void *data, struct wl_proxy *grab, uint32_t serial, uint32_t time,
		uint32_t key, uint32_t state)
{
	say("key %u %u", key, state);
}

static void handle_modifiers(void *data, struct wl_proxy *grab, uint32_t serial,
		uint32_t depressed, uint32_t latched, uint32_t locked, uint32_t group)
{
}

static void handle_repeat_info(void *data, struct wl_proxy *grab, int32_t rate, int32_t delay)
{
}

static const struct im_grab_listener grab_listener = {
	.keymap = handle_keymap,
	.key = handle_key,
	.modifiers = handle_modifiers,
	.repeat_info = handle_repeat_info,
};

static void global(void *data, struct wl_registry *r, uint32_t name, const char *iface,
		uint32_t version)
{
	struct im *m = data;
	if (strcmp(iface, wl_seat_interface.name) == 0 && !m->seat) {
		m->seat = wl_registry_bind(r, name, &wl_seat_interface, 1);
	} else if (strcmp(iface, wl_compositor_interface.name) == 0) {
		m->compositor = wl_registry_bind(r, name, &wl_compositor_interface, 1);
	} else if (strcmp(iface, wl_shm_interface.name) == 0) {
		m->shm = wl_registry_bind(r, name, &wl_shm_interface, 1);
	} else if (strcmp(iface, zwp_input_method_manager_v2_interface.name) == 0) {
		m->manager = wl_registry_bind(r, name, &zwp_input_method_manager_v2_interface, 1);
	}
}

static void global_remove(void *data, struct wl_registry *r, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = { global, global_remove };

int main(int argc, char *argv[])
{
	struct im m = { .mode = COMMIT };
	int i = 1;
	if (argc == 3 && strcmp(argv[1], "--grab") == 0) {
		m.mode = GRAB;
		i++;
	} else if (argc == 3 && strcmp(argv[1], "--commit-now") == 0) {
		m.mode = COMMIT_NOW;
		i++;
	} else if (argc == 3 && strcmp(argv[1], "--preedit-only") == 0) {
		m.mode = PREEDIT_ONLY;
		i++;
	} else if (argc == 3 && strcmp(argv[1], "--popup") == 0) {
		m.mode = POPUP;
		i++;
	}
	if (i != argc - 1) {
		fprintf(stderr, "usage: slim-im [--grab | --commit-now | --preedit-only | --popup] "
			"TEXT\n");
		return 2;
	}
	m.text = argv[i];
	struct wl_display *display = m.display = wl_display_connect(NULL);
	if (!display) {
		fprintf(stderr, "slim-im: cannot connect to a Wayland display\n");
		return 1;
	}
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, &m);
	wl_display_roundtrip(display);
	if (!m.seat || !m.compositor || !m.shm || !m.manager) {
		fprintf(stderr, "slim-im: no seat, compositor, shm or zwp_input_method_manager_v2\n");
		return 1;
	}
	m.im = wl_proxy_marshal_flags(m.manager, IM_MANAGER_GET_INPUT_METHOD,
		&zwp_input_method_v2_interface, 1, 0, m.seat, NULL);
	wl_proxy_add_listener(m.im, (void (**)(void))&im_listener, &m);
	if (m.mode == GRAB) {
		m.grab = wl_proxy_marshal_flags(m.im, IM_GRAB_KEYBOARD,
			&zwp_input_method_keyboard_grab_v2_interface, 1, 0, NULL);
		wl_proxy_add_listener(m.grab, (void (**)(void))&grab_listener, &m);
	}
	if (m.mode == COMMIT_NOW) {
		wl_proxy_marshal_flags(m.im, IM_COMMIT_STRING, NULL, 1, 0, m.text);
		commit(&m);
	}
	wl_display_roundtrip(display);
	say("ready");
	while (wl_display_dispatch(display) != -1) {
	}
	fprintf(stderr, "slim-im: connection lost (error %d)\n", wl_display_get_error(display));
	return 1;
}
