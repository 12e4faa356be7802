/*
 * The title bar slimland draws above a window that asked for one (an xdg
 * toplevel through xdg-decoration, an X11 window whose Motif hints leave
 * decorations to the window manager): the window's title and a close
 * button. It is a buffer of its own, drawn again only when the window's
 * width or title changes: a wlr_scene_rect would have 0.15's pixman
 * renderer allocate and fill an image of its full size every frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wlr/types/wlr_scene.h>
#include "pixel-buffer.h"
#include "slim-font.h"
#include "shell-internal.h"
#include "slim-proto.h"

#define BAR 0xff3f4f66u
#define CLOSE 0xffbf4d40u
#define INK 0xffe6ebf0u
/* the font at twice its size, vertically centred */
#define SCALE 2
#define TEXT_X 8
#define TEXT_Y ((VIEW_TITLEBAR_H - SLIM_FONT_H * SCALE) / 2)
#define MAX_CHARS 160

struct slim_decoration {
	struct wlr_scene_node *parent;
	void *data;
	struct wlr_scene_buffer *node; /* NULL once its parent took it along */
	bool enabled;
	int32_t width; /* what is drawn */
	char title[MAX_CHARS + 1];
	struct wl_listener node_destroy;
};

static void draw_text(struct slim_pixel_buffer *p, const char *text, int32_t max_x)
{
	slim_pixel_buffer_text(p, TEXT_X, TEXT_Y, SCALE, max_x, INK, text);
}

/* A square with a cross in it, at the bar's right end (view_titlebar_click's place for it). */
static void draw_close(struct slim_pixel_buffer *p)
{
	int32_t size = VIEW_TITLEBAR_H - 8, x0 = p->base.width - VIEW_TITLEBAR_H + 4, y0 = 4;
	if (x0 < 0) {
		return;
	}
	slim_pixel_buffer_fill(p, x0, y0, size, size, CLOSE);
	for (int32_t i = 4; i < size - 4; i++) {
		slim_pixel_buffer_fill(p, x0 + i, y0 + i, 2, 1, INK);
		slim_pixel_buffer_fill(p, x0 + size - 1 - i - 1, y0 + i, 2, 1, INK);
	}
}

/* The node is no longer watched: the caller destroys it, or it is gone. */
static struct wlr_scene_buffer *forget_node(struct slim_decoration *deco)
{
	struct wlr_scene_buffer *node = deco->node;
	wl_list_remove(&deco->node_destroy.link);
	wl_list_init(&deco->node_destroy.link);
	deco->node = NULL;
	return node;
}

/* The window's node went, and the bar with it: nothing is drawn there again. */
static void handle_node_destroy(struct wl_listener *listener, void *data)
{
	struct slim_decoration *deco = wl_container_of(listener, deco, node_destroy);
	forget_node(deco);
	deco->parent = NULL;
}

/* A new buffer node in place of the old one: 0.15's scene cannot swap a node's buffer. */
static void redraw(struct slim_decoration *deco)
{
	struct slim_pixel_buffer *p = deco->parent ?
		slim_pixel_buffer_create((uint32_t)deco->width, VIEW_TITLEBAR_H) : NULL;
	if (!p) {
		return; /* the old bar stays */
	}
	slim_pixel_buffer_fill(p, 0, 0, deco->width, VIEW_TITLEBAR_H, BAR);
	draw_text(p, deco->title, deco->width - VIEW_TITLEBAR_H);
	draw_close(p);
	struct wlr_scene_buffer *node = wlr_scene_buffer_create(deco->parent, &p->base);
	wlr_buffer_drop(&p->base); /* the node holds its own reference */
	if (!node) {
		return;
	}
	struct wlr_scene_buffer *old = forget_node(deco);
	deco->node = node;
	node->node.data = deco->data;
	wlr_scene_node_set_position(&node->node, 0, -VIEW_TITLEBAR_H);
	wlr_scene_node_set_enabled(&node->node, deco->enabled);
	deco->node_destroy.notify = handle_node_destroy;
	wl_signal_add(&node->node.events.destroy, &deco->node_destroy);
	if (old) {
		wlr_scene_node_destroy(&old->node);
	}
}

struct slim_decoration *decoration_create(struct wlr_scene_node *parent, void *data)
{
	struct slim_decoration *deco = calloc(1, sizeof(*deco));
	if (!deco) {
		return NULL;
	}
	deco->parent = parent;
	deco->data = data;
	deco->enabled = true;
	wl_list_init(&deco->node_destroy.link);
	return deco;
}

void decoration_destroy(struct slim_decoration *deco)
{
	if (!deco) {
		return;
	}
	struct wlr_scene_buffer *node = forget_node(deco);
	if (node) {
		wlr_scene_node_destroy(&node->node);
	}
	free(deco);
}

void decoration_update(struct slim_decoration *deco, int32_t width, const char *title,
		bool enabled)
{
	/* wider than any screen: the rest would never show */
	width = width < 1 ? 1 : width > SLIM_MAX_DIM ? SLIM_MAX_DIM : width;
	char text[MAX_CHARS + 1];
	snprintf(text, sizeof(text), "%s", title ? title : "");
	if (deco->node && width == deco->width && strcmp(text, deco->title) == 0) {
		if (enabled != deco->enabled) {
			deco->enabled = enabled;
			wlr_scene_node_set_enabled(&deco->node->node, enabled);
		}
		return;
	}
	deco->width = width;
	deco->enabled = enabled;
	memcpy(deco->title, text, sizeof(text));
	redraw(deco);
}
