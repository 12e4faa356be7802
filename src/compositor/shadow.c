/*
 * Helpdesk shadowing, the session's side (shadow.h): the question, the
 * bar, and the shadow's link made and ended (stream/shadow-link.c).
 */
#define _GNU_SOURCE /* explicit_bzero */
#include <linux/input-event-codes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_output_layout.h>
#include <wlr/types/wlr_scene.h>
#include <wlr/util/log.h>
#include "cursor.h"
#include "heads.h"
#include "manager-control.h"
#include "pixel-buffer.h"
#include "slim-font.h"
#include "server.h"
#include "shadow-link.h"
#include "shadow.h"
#include "shell.h"

#define BAR_H 24
#define BAR 0xffd01818u
#define ASK_BG 0xff1c2a44u
#define INK 0xffffffffu
#define SCALE 2
#define ASK_W 760
#define ASK_H 110

enum shadow_state {
	SHADOW_OFF,
	SHADOW_ASKING,   /* the question is on the screen */
	SHADOW_WAITING,  /* yes: the shadow console is on its way */
	SHADOW_WATCHING, /* it is attached */
};

enum shadow_event {
	SHADOW_REQUEST, /* the manager asks (ask) */
	SHADOW_YES,     /* the user said yes, or the policy did (always) */
	SHADOW_NO,      /* the user said no */
	SHADOW_TIMEOUT, /* no answer, or no console came */
	SHADOW_ATTACHED,
	SHADOW_END,     /* either side left, the chord, or the manager's unshadow */
};

struct slim_shadow {
	struct slim_server *server;
	enum shadow_state state;
	struct slim_control_line req; /* the manager's: token, console, key, control */
	struct slim_shadow_link *link;
	struct wlr_scene_buffer *overlay; /* the question, or the bar */
	struct wl_event_source *timer;
	struct wl_event_source *reap; /* the link, ended outside its own callbacks */
	struct slim_shadow_link *dead;
	bool ctrl_l, ctrl_r, alt_l, alt_r; /* the session's console's modifiers */
	uint16_t swallow; /* a key whose release is ours too */
};

static void transition(struct slim_shadow *shadow, enum shadow_event event, const char *why);

static void draw_text(struct slim_pixel_buffer *p, int32_t x, int32_t y, const char *text)
{
	slim_pixel_buffer_text(p, x, y, SCALE, p->base.width, INK, text);
}

/* The session's first head, in the layout. */
static struct wlr_box head_box(struct slim_shadow *shadow)
{
	struct wlr_output *out = heads_primary(shadow->server->heads);
	struct wlr_box *box = out ? wlr_output_layout_get_box(shadow->server->layout, out) : NULL;
	return box ? *box : (struct wlr_box){ 0, 0, 640, 480 };
}

static void hide(struct slim_shadow *shadow)
{
	if (shadow->overlay) {
		wlr_scene_node_destroy(&shadow->overlay->node);
		shadow->overlay = NULL;
	}
}

/* Over everything: a node of the scene's root made after the shell's, and raised. */
static void show(struct slim_shadow *shadow, struct slim_pixel_buffer *p, int32_t x, int32_t y)
{
	hide(shadow);
	shadow->overlay = wlr_scene_buffer_create(&shadow->server->scene->node, &p->base);
	wlr_buffer_drop(&p->base);
	if (shadow->overlay) {
		wlr_scene_node_set_position(&shadow->overlay->node, x, y);
		wlr_scene_node_raise_to_top(&shadow->overlay->node);
	}
}

static void show_question(struct slim_shadow *shadow)
{
	struct wlr_box box = head_box(shadow);
	int32_t w = box.width < ASK_W ? box.width : ASK_W;
	struct slim_pixel_buffer *p = slim_pixel_buffer_create((uint32_t)w, ASK_H);
	if (!p) {
		return;
	}
	slim_pixel_buffer_fill(p, 0, 0, w, ASK_H, ASK_BG);
	slim_pixel_buffer_fill(p, 0, 0, w, 4, BAR);
	draw_text(p, 16, 18, "THE HELPDESK ASKS TO SEE YOUR SCREEN");
	draw_text(p, 16, 44, shadow->req.control ?
		"AND TO USE YOUR KEYBOARD AND MOUSE." : "(TO WATCH ONLY: NOT TO TYPE OR CLICK)");
	char line[96];
	snprintf(line, sizeof(line), "Y: ALLOW   N: REFUSE   (NO ANSWER IN %d S: REFUSED)",
		SHADOW_ASK_S);
	draw_text(p, 16, 78, line);
	show(shadow, p, box.x + (box.width - w) / 2, box.y + (box.height - ASK_H) / 3);
}

static void show_bar(struct slim_shadow *shadow)
{
	struct wlr_box box = head_box(shadow);
	struct slim_pixel_buffer *p = slim_pixel_buffer_create((uint32_t)box.width, BAR_H);
	if (!p) {
		return;
	}
	slim_pixel_buffer_fill(p, 0, 0, box.width, BAR_H, BAR);
	char id[SLIM_CONSOLE_ID_LEN + 1] = { 0 };
	memcpy(id, shadow->req.console_id, SLIM_CONSOLE_ID_LEN);
	char line[160];
	snprintf(line, sizeof(line), "%s FROM CONSOLE %.12s - CTRL+ALT+ESC ENDS IT",
		shadow->req.control ? "WATCHED AND CONTROLLED" : "YOUR SCREEN IS WATCHED", id);
	draw_text(p, 8, (BAR_H - SLIM_FONT_H * SCALE) / 2, line);
	show(shadow, p, box.x, box.y);
}

static void handle_link_attached(void *data, const char *console_id)
{
	struct slim_shadow *shadow = data;
	char id[SLIM_CONSOLE_ID_LEN] = { 0 };
	memcpy(id, console_id, strnlen(console_id, SLIM_CONSOLE_ID_LEN));
	slim_control_shadow_attached(shadow->server->control, id);
	/*
	 * The whole screen drawn again, for the watcher: the session's own
	 * console, whose model has it all, is sent nothing of it.
	 */
	pixman_region32_t all;
	pixman_region32_init_rect(&all, 0, 0, UINT16_MAX, UINT16_MAX);
	heads_damage_region(shadow->server->heads, &all);
	pixman_region32_fini(&all);
	/* and the pointer, which the console draws itself */
	cursor_set_mirror(shadow->server->cursor, slim_shadow_link_link(shadow->link));
	transition(shadow, SHADOW_ATTACHED, NULL);
}

static void handle_link_detached(void *data, const char *console_id)
{
	transition(data, SHADOW_END, "shadow-left");
}

/* The shadow's hands on the session: only if asked for, and granted with it. */
static void handle_link_input(void *data, const struct slim_wire_input *ev)
{
	struct slim_shadow *shadow = data;
	if (shadow->state == SHADOW_WATCHING && shadow->req.control) {
		slim_shell_console_input(shadow->server->shell, ev);
	}
}

static const struct slim_shadow_link_handler link_handler = {
	.attached = handle_link_attached,
	.detached = handle_link_detached,
	.input = handle_link_input,
};

/* A link goes at the next turn of the loop: it may be inside one of its own callbacks now. */
static int handle_reap(void *data)
{
	struct slim_shadow *shadow = data;
	slim_shadow_link_destroy(shadow->dead);
	shadow->dead = NULL;
	return 0;
}

static void end_link(struct slim_shadow *shadow)
{
	if (!shadow->link) {
		return;
	}
	cursor_set_mirror(shadow->server->cursor, NULL);
	slim_shadow_link_destroy(shadow->dead);
	shadow->dead = shadow->link;
	shadow->link = NULL;
	wl_event_source_timer_update(shadow->reap, 1);
}

/* Yes: the shadow's link listens, the manager sends the console to it. */
static bool open_link(struct slim_shadow *shadow)
{
	shadow->link = slim_shadow_link_create(shadow->server->loop, &shadow->server->link_config,
		&link_handler, shadow);
	if (!shadow->link) {
		return false;
	}
	slim_shadow_link_expect(shadow->link, shadow->req.token, shadow->req.console_id,
		shadow->req.key);
	explicit_bzero(shadow->req.key, sizeof(shadow->req.key)); /* the link has it now */
	slim_control_shadow_ready(shadow->server->control, slim_shadow_link_port(shadow->link));
	return true;
}

static void forget_request(struct slim_shadow *shadow)
{
	explicit_bzero(&shadow->req, sizeof(shadow->req));
}

/* The one place the state changes. */
static void transition(struct slim_shadow *shadow, enum shadow_event event, const char *why)
{
	enum shadow_state from = shadow->state;
	switch (event) {
	case SHADOW_REQUEST:
		shadow->state = SHADOW_ASKING;
		show_question(shadow);
		wl_event_source_timer_update(shadow->timer, SHADOW_ASK_S * 1000);
		break;
	case SHADOW_YES:
		if (!open_link(shadow)) {
			slim_control_shadow_refused(shadow->server->control, "no-link");
			transition(shadow, SHADOW_END, NULL);
			return;
		}
		shadow->state = SHADOW_WAITING;
		show_bar(shadow);
		wl_event_source_timer_update(shadow->timer, SHADOW_ATTACH_S * 1000);
		break;
	case SHADOW_NO:
	case SHADOW_TIMEOUT:
		if (from == SHADOW_ASKING) {
			slim_control_shadow_refused(shadow->server->control,
				event == SHADOW_NO ? "refused" : "timeout");
		} else if (from == SHADOW_WAITING) {
			slim_control_shadow_ended(shadow->server->control, "no-console");
		}
		transition(shadow, SHADOW_END, NULL);
		return;
	case SHADOW_ATTACHED:
		shadow->state = SHADOW_WATCHING;
		wl_event_source_timer_update(shadow->timer, 0);
		break;
	case SHADOW_END:
		if (from == SHADOW_OFF) {
			return;
		}
		if (why) {
			if (from == SHADOW_ASKING) {
				slim_control_shadow_refused(shadow->server->control, why);
			} else {
				slim_control_shadow_ended(shadow->server->control, why);
			}
		}
		shadow->state = SHADOW_OFF;
		wl_event_source_timer_update(shadow->timer, 0);
		end_link(shadow);
		hide(shadow);
		forget_request(shadow);
		break;
	}
	if (shadow->state != from) {
		static const char *const names[] = {
			[SHADOW_OFF] = "off", [SHADOW_ASKING] = "asking",
			[SHADOW_WAITING] = "waiting for the console", [SHADOW_WATCHING] = "watching",
		};
		wlr_log(WLR_INFO, "shadow: %s -> %s%s%s", names[from], names[shadow->state],
			why ? ": " : "", why ? why : "");
	}
}

static int handle_timer(void *data)
{
	transition(data, SHADOW_TIMEOUT, NULL);
	return 0;
}

struct slim_shadow *shadow_create(struct slim_server *server)
{
	struct slim_shadow *shadow = calloc(1, sizeof(*shadow));
	if (!shadow) {
		return NULL;
	}
	shadow->server = server;
	shadow->timer = wl_event_loop_add_timer(server->loop, handle_timer, shadow);
	shadow->reap = wl_event_loop_add_timer(server->loop, handle_reap, shadow);
	if (!shadow->timer || !shadow->reap) {
		shadow_destroy(shadow);
		return NULL;
	}
	return shadow;
}

void shadow_destroy(struct slim_shadow *shadow)
{
	if (!shadow) {
		return;
	}
	if (shadow->timer) {
		wl_event_source_remove(shadow->timer);
	}
	if (shadow->reap) {
		wl_event_source_remove(shadow->reap);
	}
	slim_shadow_link_destroy(shadow->link);
	slim_shadow_link_destroy(shadow->dead);
	/* the overlay is the scene's, and goes with it */
	forget_request(shadow);
	free(shadow);
}

void shadow_request(struct slim_shadow *shadow, const struct slim_control_line *req)
{
	if (shadow->state != SHADOW_OFF) {
		slim_control_shadow_refused(shadow->server->control, "busy");
		return;
	}
	if (!slim_link_console_id(shadow->server->link)) {
		/* nobody to ask, and nothing the helpdesk could watch with them */
		slim_control_shadow_refused(shadow->server->control, "detached");
		return;
	}
	shadow->req = *req;
	transition(shadow, req->ask ? SHADOW_REQUEST : SHADOW_YES, NULL);
}

void shadow_stop(struct slim_shadow *shadow, const char *why)
{
	transition(shadow, SHADOW_END, why);
}

void shadow_owner_detached(struct slim_shadow *shadow)
{
	transition(shadow, SHADOW_END, "owner-left");
}

/* Keys held on the session's console, of the chord. */
static void track_modifiers(struct slim_shadow *shadow, uint16_t code, bool down)
{
	switch (code) {
	case KEY_LEFTCTRL:
		shadow->ctrl_l = down;
		break;
	case KEY_RIGHTCTRL:
		shadow->ctrl_r = down;
		break;
	case KEY_LEFTALT:
		shadow->alt_l = down;
		break;
	case KEY_RIGHTALT:
		shadow->alt_r = down;
		break;
	}
}

bool shadow_owner_input(struct slim_shadow *shadow, const struct slim_wire_input *ev)
{
	if (ev->kind != SLIM_INPUT_KEY) {
		return false;
	}
	bool down = ev->value != 0;
	track_modifiers(shadow, ev->code, down);
	if (!down || ev->value == 2) {
		/* the release (or repeat) of a key whose press was ours */
		if (shadow->swallow == ev->code) {
			if (!down) {
				shadow->swallow = 0;
			}
			return true;
		}
		return false;
	}
	if (shadow->state == SHADOW_ASKING && (ev->code == KEY_Y || ev->code == KEY_N ||
			ev->code == KEY_ESC)) {
		shadow->swallow = ev->code;
		transition(shadow, ev->code == KEY_Y ? SHADOW_YES : SHADOW_NO, NULL);
		return true;
	}
	if ((shadow->state == SHADOW_WAITING || shadow->state == SHADOW_WATCHING) &&
			ev->code == KEY_ESC && (shadow->ctrl_l || shadow->ctrl_r) &&
			(shadow->alt_l || shadow->alt_r)) {
		shadow->swallow = ev->code;
		transition(shadow, SHADOW_END, "owner-ended");
		return true;
	}
	return false;
}

void shadow_frame(struct slim_shadow *shadow, const struct slim_fb *fb,
		const pixman_region32_t *damage)
{
	if (shadow && shadow->state == SHADOW_WATCHING) {
		slim_shadow_link_frame(shadow->link, fb, damage);
	}
}
