/*
 * Input methods (for CJK and the like): the clients' text inputs
 * (text-input-v3: foot, GTK, Qt) relayed to one input method
 * (input-method-v2: fcitx5 and the like), as the protocols ask of the
 * compositor between them:
 *
 *   focus          a client's text inputs are entered when one of its
 *                  surfaces gets the keyboard, and left when it loses it;
 *                  only while an input method serves the seat: a method
 *                  going away leaves them, and a leave clears its preedit
 *                  where a done may not (a client drops a done whose
 *                  serial a commit of its own made stale meanwhile)
 *   enabled        the focused, enabled text input activates the input
 *                  method, with its surrounding text, content type and why
 *                  the text changed; disabled or left, it is deactivated
 *   the input method's commit  preedit, commit string and deletions go to
 *                  that text input, with done; a commit while it is not
 *                  active, or whose serial is not the number of done events
 *                  it was sent (made before it knew), changes nothing
 *   one a seat     a second input method is told `unavailable`
 *   keyboard grab  while the input method holds one, the console's keys go
 *                  to it (not the virtual keyboards' keys: an input method
 *                  sends what it does not use through one, and would hear
 *                  it again)
 *   popups         candidate windows, over everything under the text
 *                  cursor (above it at the bottom of the screen)
 */
#include <stdlib.h>
#include <string.h>
#include <wlr/types/wlr_input_method_v2.h>
#include <wlr/types/wlr_keyboard.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_scene.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_text_input_v3.h>
#include <wlr/util/log.h>
#include "geometry.h"
#include "shell-internal.h"
#include "slim-alloc.h"
#include "slim-log.h"

struct slim_text_inputs {
	struct slim_shell *shell;
	struct wl_list inputs; /* text_input.link */
	struct wl_list popups; /* popup.link */
	struct wlr_input_method_v2 *im;
	uint32_t im_done; /* done events sent to it: the serial its commits must carry */
	struct wlr_input_method_keyboard_grab_v2 *grab;
	struct slim_ratelimit log_limit;
	struct wl_listener new_text_input, new_input_method, focus_change;
	struct wl_listener im_grab, im_new_popup, grab_destroy;
};

/* One client's text input. */
struct text_input {
	struct slim_text_inputs *relay;
	struct wlr_text_input_v3 *input;
	struct wl_list link;
	struct wl_listener enable, commit, disable, destroy;
};

/* One candidate window of the input method's. */
struct popup {
	struct slim_text_inputs *relay;
	struct wlr_input_popup_surface_v2 *popup;
	struct wlr_scene_node *node; /* while mapped */
	struct wlr_box told; /* the cursor, as last told to the popup */
	struct wl_list link;
	struct wl_listener map, unmap, commit, destroy;
};

static void send_done(struct slim_text_inputs *relay)
{
	wlr_input_method_v2_send_done(relay->im);
	relay->im_done++;
}

/* The text input the input method serves: enabled, on the focused surface. */
static struct text_input *active_input(struct slim_text_inputs *relay)
{
	struct wlr_surface *focus = relay->shell->seat->keyboard_state.focused_surface;
	struct text_input *ti;
	wl_list_for_each(ti, &relay->inputs, link) {
		if (focus && ti->input->focused_surface == focus && ti->input->current_enabled) {
			return ti;
		}
	}
	return NULL;
}

static void send_state(struct slim_text_inputs *relay, struct wlr_text_input_v3 *input)
{
	struct wlr_input_method_v2 *im = relay->im;
	if (input->active_features & WLR_TEXT_INPUT_V3_FEATURE_SURROUNDING_TEXT) {
		const char *text = input->current.surrounding.text;
		wlr_input_method_v2_send_surrounding_text(im, text ? text : "",
			input->current.surrounding.cursor, input->current.surrounding.anchor);
	}
	wlr_input_method_v2_send_text_change_cause(im, input->current.text_change_cause);
	if (input->active_features & WLR_TEXT_INPUT_V3_FEATURE_CONTENT_TYPE) {
		wlr_input_method_v2_send_content_type(im, input->current.content_type.hint,
			input->current.content_type.purpose);
	}
	send_done(relay);
}

static void activate(struct slim_text_inputs *relay, struct text_input *ti)
{
	if (relay->im && ti) {
		wlr_input_method_v2_send_activate(relay->im);
		send_state(relay, ti->input);
	}
}

static void deactivate(struct slim_text_inputs *relay)
{
	if (relay->im && relay->im->active) {
		wlr_input_method_v2_send_deactivate(relay->im);
		send_done(relay);
	}
}

static bool same_client(struct wlr_text_input_v3 *input, struct wlr_surface *surface)
{
	return surface && wl_resource_get_client(input->resource) ==
		wl_resource_get_client(surface->resource);
}

/* The text inputs of focus's client entered (while a method serves them), the others left. */
static void focus_text_inputs(struct slim_text_inputs *relay, struct wlr_surface *focus)
{
	struct text_input *ti;
	wl_list_for_each(ti, &relay->inputs, link) {
		struct wlr_text_input_v3 *input = ti->input;
		bool wanted = relay->im && input->seat == relay->shell->seat &&
			same_client(input, focus);
		if (input->focused_surface && (!wanted || input->focused_surface != focus)) {
			if (input->current_enabled) {
				deactivate(relay);
			}
			wlr_text_input_v3_send_leave(input);
		}
		if (!input->focused_surface && wanted) {
			wlr_text_input_v3_send_enter(input, focus);
		}
	}
}

/* --- popups */

struct surface_at {
	struct wlr_surface *surface;
	bool found;
	int x, y;
};

static void find_surface(struct wlr_surface *surface, int x, int y, void *data)
{
	struct surface_at *at = data;
	if (surface == at->surface) {
		at->found = true;
		at->x = x;
		at->y = y;
	}
}

/*
 * Under the text cursor: the cursor rectangle is in the focused surface's
 * coordinates, and that surface may be a window's (its node offset by the
 * window geometry's shadows) or a panel's, so its place is read from the
 * scene. Above the cursor where the screen ends below, and kept on the
 * screen; the popup is told where the cursor is from its own corner.
 */
static void place_popup(struct popup *p)
{
	struct slim_shell *shell = p->relay->shell;
	struct text_input *ti = active_input(p->relay);
	if (!p->node || !ti) {
		return;
	}
	struct surface_at at = { .surface = ti->input->focused_surface };
	wlr_scene_node_for_each_surface(&shell->scene->node, find_surface, &at);
	if (!at.found) {
		return;
	}
	/* the client's rectangle, any int32s: on its head, in 64 bits, from the head's corner */
	struct wlr_box cursor = ti->input->current.cursor_rectangle;
	struct slim_shell_head *head = shell_head_at(shell, at.x, at.y);
	if (!head) {
		return;
	}
	int32_t ox = head->box.x, oy = head->box.y;
	int32_t sw = head->box.width, sh = head->box.height;
	int32_t cx = geo_clamp((int64_t)at.x - ox + cursor.x, 0, sw);
	int32_t cy = geo_clamp((int64_t)at.y - oy + cursor.y, 0, sh);
	cursor.width = geo_clamp(cursor.width, 0, sw - cx);
	cursor.height = geo_clamp(cursor.height, 0, sh - cy);
	int32_t width = geo_size(p->popup->surface->current.width);
	int32_t height = geo_size(p->popup->surface->current.height);
	int32_t x = cx, y = cy + cursor.height;
	if (y + height > sh && cy - height >= 0) {
		y = cy - height;
	}
	if (x + width > sw) {
		x = sw - width;
	}
	x = x < 0 ? 0 : x;
	wlr_scene_node_set_position(p->node, ox + x, oy + y);
	struct wlr_box sbox = { .x = cx - x, .y = cy - y, .width = cursor.width,
		.height = cursor.height };
	/* only news: a popup that redraws on it, and so commits, would hear it again */
	if (memcmp(&sbox, &p->told, sizeof(sbox)) != 0) {
		p->told = sbox;
		wlr_input_popup_surface_v2_send_text_input_rectangle(p->popup, &sbox);
	}
}

static void place_popups(struct slim_text_inputs *relay)
{
	struct popup *p;
	wl_list_for_each(p, &relay->popups, link) {
		place_popup(p);
	}
}

static void handle_popup_map(struct wl_listener *listener, void *data)
{
	struct popup *p = wl_container_of(listener, p, map);
	struct wlr_scene_tree *over = p->relay->shell->layers[3];
	p->node = wlr_scene_subsurface_tree_create(&over->node, p->popup->surface);
	place_popup(p);
}

/* its size may have changed: placed again, to stay on the screen */
static void handle_popup_commit(struct wl_listener *listener, void *data)
{
	struct popup *p = wl_container_of(listener, p, commit);
	place_popup(p);
}

/*
 * The node never outlives the surface: wlroots unmaps the popup from its
 * own listener on the surface's destroy, added before the node was made
 * (so called before the node's), and the node goes here.
 */
static void handle_popup_unmap(struct wl_listener *listener, void *data)
{
	struct popup *p = wl_container_of(listener, p, unmap);
	if (p->node) {
		wlr_scene_node_destroy(p->node);
		p->node = NULL;
	}
}

static void handle_popup_destroy(struct wl_listener *listener, void *data)
{
	struct popup *p = wl_container_of(listener, p, destroy);
	handle_popup_unmap(&p->unmap, NULL);
	wl_list_remove(&p->map.link);
	wl_list_remove(&p->unmap.link);
	wl_list_remove(&p->commit.link);
	wl_list_remove(&p->destroy.link);
	wl_list_remove(&p->link);
	free(p);
}

static void handle_im_new_popup(struct wl_listener *listener, void *data)
{
	struct slim_text_inputs *relay = wl_container_of(listener, relay, im_new_popup);
	struct wlr_input_popup_surface_v2 *popup = data;
	struct popup *p = calloc(1, sizeof(*p));
	if (!p) {
		wl_resource_post_no_memory(popup->resource);
		return;
	}
	p->relay = relay;
	p->popup = popup;
	p->told.width = -1; /* told nothing yet */
	p->map.notify = handle_popup_map;
	wl_signal_add(&popup->events.map, &p->map);
	p->unmap.notify = handle_popup_unmap;
	wl_signal_add(&popup->events.unmap, &p->unmap);
	p->commit.notify = handle_popup_commit;
	wl_signal_add(&popup->surface->events.commit, &p->commit);
	p->destroy.notify = handle_popup_destroy;
	wl_signal_add(&popup->events.destroy, &p->destroy);
	wl_list_insert(&relay->popups, &p->link);
	if (popup->mapped) {
		handle_popup_map(&p->map, NULL);
	}
}

/* --- the input method */

/*
 * Every input method, the one served and those told unavailable:
 * wlroots 0.15 overwrites the strings of a method's current state at each
 * commit without freeing them, so they are freed here once read (its
 * destroy frees what is left). Else any method could grow our memory
 * commit after commit.
 */
struct method {
	struct slim_text_inputs *relay;
	struct wlr_input_method_v2 *im;
	struct wl_listener commit, destroy;
};

static void relay_commit(struct slim_text_inputs *relay, struct wlr_input_method_v2 *im)
{
	struct text_input *ti = active_input(relay);
	/*
	 * The protocol's rule: a commit whose serial is not the number of done
	 * events sent was made before the method knew its state (it may have
	 * been deactivated meanwhile), and changes nothing.
	 */
	if (!ti || !im->client_active || im->current_serial != relay->im_done) {
		if (slim_ratelimit(&relay->log_limit, slim_now_us())) {
			wlr_log(WLR_INFO, "input method: a commit while not active, or about a "
				"state it had not been told, ignored");
		}
		return;
	}
	struct wlr_text_input_v3 *input = ti->input;
	if (im->current.preedit.text) {
		wlr_text_input_v3_send_preedit_string(input, im->current.preedit.text,
			im->current.preedit.cursor_begin, im->current.preedit.cursor_end);
	}
	if (im->current.commit_text) {
		wlr_text_input_v3_send_commit_string(input, im->current.commit_text);
	}
	if (im->current.delete.before_length || im->current.delete.after_length) {
		wlr_text_input_v3_send_delete_surrounding_text(input,
			im->current.delete.before_length, im->current.delete.after_length);
	}
	wlr_text_input_v3_send_done(input);
}

static void handle_method_commit(struct wl_listener *listener, void *data)
{
	struct method *m = wl_container_of(listener, m, commit);
	if (m->relay->im == m->im) {
		relay_commit(m->relay, m->im);
	}
	free(m->im->current.preedit.text);
	m->im->current.preedit.text = NULL;
	free(m->im->current.commit_text);
	m->im->current.commit_text = NULL;
}

static void handle_grab_destroy(struct wl_listener *listener, void *data)
{
	struct slim_text_inputs *relay = wl_container_of(listener, relay, grab_destroy);
	wl_list_remove(&relay->grab_destroy.link);
	relay->grab = NULL;
	/* what the client under the grab holds is its own again */
	wlr_seat_keyboard_notify_modifiers(relay->shell->seat,
		&console_input_keyboard(relay->shell->input)->keyboard->modifiers);
}

static void handle_im_grab(struct wl_listener *listener, void *data)
{
	struct slim_text_inputs *relay = wl_container_of(listener, relay, im_grab);
	struct wlr_input_method_keyboard_grab_v2 *grab = data;
	/* one a method (wlroots ignores a second request), and one method a seat */
	relay->grab = grab;
	relay->grab_destroy.notify = handle_grab_destroy;
	wl_signal_add(&grab->events.destroy, &relay->grab_destroy);
	/* the console's keymap and modifiers, which the method needs to read keys */
	wlr_input_method_keyboard_grab_v2_set_keyboard(grab,
		console_input_keyboard(relay->shell->input)->keyboard);
}

static void handle_method_destroy(struct wl_listener *listener, void *data)
{
	struct method *m = wl_container_of(listener, m, destroy);
	struct slim_text_inputs *relay = m->relay;
	wl_list_remove(&m->commit.link);
	wl_list_remove(&m->destroy.link);
	bool served = relay->im == m->im;
	free(m);
	if (!served) {
		return;
	}
	wl_list_remove(&relay->im_grab.link);
	wl_list_remove(&relay->im_new_popup.link);
	relay->im = NULL;
	/* gone, maybe mid-composition: the text inputs are left, and drop their preedit */
	focus_text_inputs(relay, relay->shell->seat->keyboard_state.focused_surface);
}

static void handle_new_input_method(struct wl_listener *listener, void *data)
{
	struct slim_text_inputs *relay = wl_container_of(listener, relay, new_input_method);
	struct wlr_input_method_v2 *im = data;
	struct method *m = calloc(1, sizeof(*m));
	if (!m) {
		wl_resource_post_no_memory(im->resource);
		return;
	}
	m->relay = relay;
	m->im = im;
	m->commit.notify = handle_method_commit;
	wl_signal_add(&im->events.commit, &m->commit);
	m->destroy.notify = handle_method_destroy;
	wl_signal_add(&im->events.destroy, &m->destroy);
	if (relay->im || im->seat != relay->shell->seat) {
		wlr_log(WLR_INFO, "input method: one serves this seat already; unavailable");
		wlr_input_method_v2_send_unavailable(im);
		return;
	}
	relay->im = im;
	relay->im_done = 0;
	relay->im_grab.notify = handle_im_grab;
	wl_signal_add(&im->events.grab_keyboard, &relay->im_grab);
	relay->im_new_popup.notify = handle_im_new_popup;
	wl_signal_add(&im->events.new_popup_surface, &relay->im_new_popup);
	/* the focused client's text inputs are entered; enabled, they activate it */
	focus_text_inputs(relay, relay->shell->seat->keyboard_state.focused_surface);
}

/* --- the clients' text inputs */

static void handle_text_input_enable(struct wl_listener *listener, void *data)
{
	struct text_input *ti = wl_container_of(listener, ti, enable);
	if (active_input(ti->relay) == ti) {
		activate(ti->relay, ti);
	}
}

static void handle_text_input_commit(struct wl_listener *listener, void *data)
{
	struct text_input *ti = wl_container_of(listener, ti, commit);
	struct slim_text_inputs *relay = ti->relay;
	if (relay->im && active_input(relay) == ti) {
		send_state(relay, ti->input);
		place_popups(relay);
	}
}

static void handle_text_input_disable(struct wl_listener *listener, void *data)
{
	struct text_input *ti = wl_container_of(listener, ti, disable);
	if (ti->input->focused_surface == ti->relay->shell->seat->keyboard_state.focused_surface) {
		deactivate(ti->relay);
	}
}

static void handle_text_input_destroy(struct wl_listener *listener, void *data)
{
	struct text_input *ti = wl_container_of(listener, ti, destroy);
	struct slim_text_inputs *relay = ti->relay;
	bool was_active = active_input(relay) == ti;
	wl_list_remove(&ti->enable.link);
	wl_list_remove(&ti->commit.link);
	wl_list_remove(&ti->disable.link);
	wl_list_remove(&ti->destroy.link);
	wl_list_remove(&ti->link);
	free(ti);
	if (was_active) {
		deactivate(relay);
	}
}

static void handle_new_text_input(struct wl_listener *listener, void *data)
{
	struct slim_text_inputs *relay = wl_container_of(listener, relay, new_text_input);
	struct wlr_text_input_v3 *input = data;
	struct text_input *ti = calloc(1, sizeof(*ti));
	if (!ti) {
		wl_resource_post_no_memory(input->resource);
		return;
	}
	ti->relay = relay;
	ti->input = input;
	ti->enable.notify = handle_text_input_enable;
	wl_signal_add(&input->events.enable, &ti->enable);
	ti->commit.notify = handle_text_input_commit;
	wl_signal_add(&input->events.commit, &ti->commit);
	ti->disable.notify = handle_text_input_disable;
	wl_signal_add(&input->events.disable, &ti->disable);
	ti->destroy.notify = handle_text_input_destroy;
	wl_signal_add(&input->events.destroy, &ti->destroy);
	wl_list_insert(&relay->inputs, &ti->link);
	/* its client may have the keyboard already */
	focus_text_inputs(relay, relay->shell->seat->keyboard_state.focused_surface);
}

static void handle_focus_change(struct wl_listener *listener, void *data)
{
	struct slim_text_inputs *relay = wl_container_of(listener, relay, focus_change);
	struct wlr_seat_keyboard_focus_change_event *event = data;
	focus_text_inputs(relay, event->new_surface);
}

struct slim_text_inputs *text_inputs_create(struct slim_shell *shell)
{
	struct slim_text_inputs *relay = slim_znew(struct slim_text_inputs);
	struct wlr_text_input_manager_v3 *text_inputs =
		wlr_text_input_manager_v3_create(shell->display);
	struct wlr_input_method_manager_v2 *input_methods =
		wlr_input_method_manager_v2_create(shell->display);
	if (!text_inputs || !input_methods) {
		free(relay);
		return NULL;
	}
	relay->shell = shell;
	wl_list_init(&relay->inputs);
	wl_list_init(&relay->popups);
	relay->log_limit = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	relay->new_text_input.notify = handle_new_text_input;
	wl_signal_add(&text_inputs->events.text_input, &relay->new_text_input);
	relay->new_input_method.notify = handle_new_input_method;
	wl_signal_add(&input_methods->events.input_method, &relay->new_input_method);
	relay->focus_change.notify = handle_focus_change;
	wl_signal_add(&shell->seat->keyboard_state.events.focus_change, &relay->focus_change);
	return relay;
}

void text_inputs_destroy(struct slim_text_inputs *relay)
{
	if (!relay) {
		return;
	}
	/* the clients are gone by now, and their text inputs and method with them */
	wl_list_remove(&relay->new_text_input.link);
	wl_list_remove(&relay->new_input_method.link);
	wl_list_remove(&relay->focus_change.link);
	free(relay);
}

bool text_inputs_key(struct slim_text_inputs *relay, uint32_t time_msec, uint32_t keycode,
		uint32_t state)
{
	if (!relay || !relay->grab) {
		return false;
	}
	wlr_input_method_keyboard_grab_v2_send_key(relay->grab, time_msec, keycode, state);
	return true;
}

bool text_inputs_modifiers(struct slim_text_inputs *relay, struct wlr_keyboard *keyboard)
{
	if (!relay || !relay->grab) {
		return false;
	}
	wlr_input_method_keyboard_grab_v2_send_modifiers(relay->grab, &keyboard->modifiers);
	return true;
}
