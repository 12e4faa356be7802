/*
 * wlr-layer-shell: panels, docks, launchers, notifications and wallpapers.
 * Each layer has its tree in the scene: background and bottom under the
 * windows, top and overlay over them. A surface is placed by its anchors
 * and margins on its head (the one it asked for, else the primary); one
 * anchored to an edge with an exclusive zone takes that strip from the
 * area maximized windows fill on that head (slim_shell_head.usable). A
 * surface that asks for the keyboard gets it while it is mapped.
 */
#include <stdlib.h>
#include <wlr/types/wlr_layer_shell_v1.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_scene.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_surface.h>
#include <wlr/util/log.h>
#include "geometry.h"
#include "shell-internal.h"

struct slim_layer_surface {
	struct wl_list link; /* slim_shell.layer_surfaces */
	struct slim_shell *shell;
	struct wlr_layer_surface_v1 *ls;
	struct wlr_scene_node *node;
	struct wl_listener map, unmap, destroy, commit;
};

#define ANCHOR_H (ZWLR_LAYER_SURFACE_V1_ANCHOR_LEFT | ZWLR_LAYER_SURFACE_V1_ANCHOR_RIGHT)
#define ANCHOR_V (ZWLR_LAYER_SURFACE_V1_ANCHOR_TOP | ZWLR_LAYER_SURFACE_V1_ANCHOR_BOTTOM)

/*
 * One axis: where a surface of `want` (0: all there is) goes in [lo, lo + len),
 * on an output [out_lo, out_lo + out). Margins are any int32 a client sends:
 * in 64 bits, the size clamped to the output's and the place to where the
 * surface touches the output or lies just beyond it.
 */
static void place_axis(uint32_t anchor, uint32_t first, uint32_t second, int32_t lo, int32_t len,
		int32_t out_lo, int32_t out, uint32_t want, int32_t m1, int32_t m2, int32_t *pos,
		int32_t *size)
{
	bool a = anchor & first, b = anchor & second;
	int32_t s = geo_clamp(want ? (int64_t)want : (int64_t)len - m1 - m2, 1, out);
	int64_t p;
	if (a && !b) {
		p = (int64_t)lo + m1;
	} else if (b && !a) {
		p = (int64_t)lo + len - s - m2;
	} else {
		p = (int64_t)lo + m1 + ((int64_t)len - m1 - m2 - s) / 2;
	}
	*pos = geo_clamp(p, (int64_t)out_lo - s, (int64_t)out_lo + out);
	*size = s;
}

/* What an exclusive zone and its margin take off an edge `len` long: never all of it. */
static int32_t zone_taken(int32_t zone, uint32_t margin, int32_t len)
{
	return geo_clamp((int64_t)zone + (int32_t)margin, 0, len - 1);
}

/* Places one surface within `area`; takes its exclusive zone off `usable`. */
static void place(struct slim_layer_surface *l, struct wlr_box area, struct wlr_box *usable)
{
	const struct wlr_layer_surface_v1_state *st = &l->ls->current;
	struct wlr_box bounds = st->exclusive_zone < 0 ? area : *usable;
	int32_t x, y, w, h;
	place_axis(st->anchor, ZWLR_LAYER_SURFACE_V1_ANCHOR_LEFT, ZWLR_LAYER_SURFACE_V1_ANCHOR_RIGHT,
		bounds.x, bounds.width, area.x, area.width, st->desired_width, (int32_t)st->margin.left,
		(int32_t)st->margin.right, &x, &w);
	place_axis(st->anchor, ZWLR_LAYER_SURFACE_V1_ANCHOR_TOP, ZWLR_LAYER_SURFACE_V1_ANCHOR_BOTTOM,
		bounds.y, bounds.height, area.y, area.height, st->desired_height, (int32_t)st->margin.top,
		(int32_t)st->margin.bottom, &y, &h);
	wlr_scene_node_set_position(l->node, x, y);
	wlr_layer_surface_v1_configure(l->ls, (uint32_t)w, (uint32_t)h);
	if (st->exclusive_zone <= 0 || !l->ls->mapped) {
		return;
	}
	/* an edge: anchored to it and to both ends along it (or to it alone) */
	uint32_t a = st->anchor;
	int32_t zone = st->exclusive_zone, taken;
	if ((a & ZWLR_LAYER_SURFACE_V1_ANCHOR_TOP) && !(a & ZWLR_LAYER_SURFACE_V1_ANCHOR_BOTTOM)) {
		taken = zone_taken(zone, st->margin.top, usable->height);
		usable->y += taken;
		usable->height -= taken;
	} else if ((a & ZWLR_LAYER_SURFACE_V1_ANCHOR_BOTTOM) && !(a & ZWLR_LAYER_SURFACE_V1_ANCHOR_TOP)) {
		usable->height -= zone_taken(zone, st->margin.bottom, usable->height);
	} else if ((a & ZWLR_LAYER_SURFACE_V1_ANCHOR_LEFT) && !(a & ZWLR_LAYER_SURFACE_V1_ANCHOR_RIGHT)) {
		taken = zone_taken(zone, st->margin.left, usable->width);
		usable->x += taken;
		usable->width -= taken;
	} else if ((a & ZWLR_LAYER_SURFACE_V1_ANCHOR_RIGHT) && !(a & ZWLR_LAYER_SURFACE_V1_ANCHOR_LEFT)) {
		usable->width -= zone_taken(zone, st->margin.right, usable->width);
	}
}

/* One head's surfaces: exclusive zones first (from the top layer down), then the rest. */
static bool arrange_head(struct slim_shell *shell, struct slim_shell_head *head)
{
	struct wlr_box area = head->box, usable = area;
	struct slim_layer_surface *l;
	for (int exclusive = 1; exclusive >= 0; exclusive--) {
		for (int layer = ZWLR_LAYER_SHELL_V1_LAYER_OVERLAY; layer >= 0; layer--) {
			wl_list_for_each(l, &shell->layer_surfaces, link) {
				const struct wlr_layer_surface_v1_state *st = &l->ls->current;
				if (l->ls->output == head->output && (int)st->layer == layer &&
						(st->exclusive_zone > 0) == exclusive) {
					place(l, area, &usable);
				}
			}
		}
	}
	bool changed = usable.x != head->usable.x || usable.y != head->usable.y ||
		usable.width != head->usable.width || usable.height != head->usable.height;
	wlr_log(WLR_DEBUG, "layers: %s usable %d,%d %dx%d", head->output->name, usable.x,
		usable.y, usable.width, usable.height);
	head->usable = usable;
	return changed;
}

void layers_arrange(struct slim_shell *shell)
{
	bool changed = false;
	for (size_t i = 0; i < shell->n_heads; i++) {
		changed = arrange_head(shell, &shell->heads[i]) || changed;
	}
	if (changed) {
		views_fit_output(shell);
	}
}

void layers_rehome(struct slim_shell *shell)
{
	struct slim_layer_surface *l;
	wl_list_for_each(l, &shell->layer_surfaces, link) {
		if (!shell_head_of_output(shell, l->ls->output) && shell->output) {
			l->ls->output = shell->output;
			wlr_surface_send_enter(l->ls->surface, shell->output);
		}
	}
}

static void focus_if_asked(struct slim_layer_surface *l)
{
	struct wlr_seat *seat = l->shell->seat;
	struct wlr_keyboard *kb = wlr_seat_get_keyboard(seat);
	if (l->ls->current.keyboard_interactive != ZWLR_LAYER_SURFACE_V1_KEYBOARD_INTERACTIVITY_NONE &&
			kb) {
		wlr_seat_keyboard_notify_enter(seat, l->ls->surface, kb->keycodes, kb->num_keycodes,
			&kb->modifiers);
	}
}

static void handle_map(struct wl_listener *listener, void *data)
{
	struct slim_layer_surface *l = wl_container_of(listener, l, map);
	wlr_scene_node_set_enabled(l->node, true);
	/*
	 * Which screen it is on, before anything else: wlr_scene 0.15 says it
	 * only when a surface's size changes with damage, and a panel that
	 * gets the pointer first (yambar) has no screen to look it up on.
	 */
	wlr_surface_send_enter(l->ls->surface, l->ls->output);
	layers_arrange(l->shell);
	focus_if_asked(l);
	input_pointer_refresh(l->shell, 0);
}

/* The keyboard goes back to the window that had it. */
static void give_back_keyboard(struct slim_layer_surface *l)
{
	struct slim_shell *shell = l->shell;
	if (shell->seat->keyboard_state.focused_surface != l->ls->surface) {
		return;
	}
	wlr_seat_keyboard_clear_focus(shell->seat);
	if (shell->focused) {
		struct slim_view *v = shell->focused;
		shell->focused = NULL;
		view_focus(v, v->impl->surface(v));
	}
}

static void handle_unmap(struct wl_listener *listener, void *data)
{
	struct slim_layer_surface *l = wl_container_of(listener, l, unmap);
	wlr_scene_node_set_enabled(l->node, false);
	give_back_keyboard(l);
	layers_arrange(l->shell);
	input_pointer_refresh(l->shell, 0);
}

/*
 * The spec: a size of 0 leaves that dimension to the compositor, which
 * needs anchors on both of its edges to choose it; without them it is the
 * error invalid_size (wlroots 0.15 does not check).
 */
static bool size_valid(struct wlr_layer_surface_v1 *ls, const struct wlr_layer_surface_v1_state *st)
{
	const uint32_t lr = ZWLR_LAYER_SURFACE_V1_ANCHOR_LEFT | ZWLR_LAYER_SURFACE_V1_ANCHOR_RIGHT;
	const uint32_t tb = ZWLR_LAYER_SURFACE_V1_ANCHOR_TOP | ZWLR_LAYER_SURFACE_V1_ANCHOR_BOTTOM;
	if ((st->desired_width || (st->anchor & lr) == lr) &&
			(st->desired_height || (st->anchor & tb) == tb)) {
		return true;
	}
	wl_resource_post_error(ls->resource, ZWLR_LAYER_SURFACE_V1_ERROR_INVALID_SIZE,
		"a size of 0 needs anchors on both edges of that dimension");
	return false;
}

static void handle_commit(struct wl_listener *listener, void *data)
{
	struct slim_layer_surface *l = wl_container_of(listener, l, commit);
	if (l->ls->current.committed && size_valid(l->ls, &l->ls->current)) {
		/* anchors, size, zone, margins or layer changed */
		struct wlr_scene_tree *tree = l->shell->layers[l->ls->current.layer];
		if (l->node->parent != &tree->node) {
			wlr_scene_node_reparent(l->node, &tree->node);
		}
		layers_arrange(l->shell);
	}
}

static void handle_destroy(struct wl_listener *listener, void *data)
{
	struct slim_layer_surface *l = wl_container_of(listener, l, destroy);
	/*
	 * wlroots 0.15 frees the configures a surface has not acked when it
	 * unmaps, not when one that never mapped goes: each would leak, as
	 * often as a client cares to make and destroy surfaces.
	 */
	struct wlr_layer_surface_v1_configure *configure, *tmp;
	wl_list_for_each_safe(configure, tmp, &l->ls->configure_list, link) {
		wl_list_remove(&configure->link);
		free(configure);
	}
	wl_list_remove(&l->map.link);
	wl_list_remove(&l->unmap.link);
	wl_list_remove(&l->destroy.link);
	wl_list_remove(&l->commit.link);
	wl_list_remove(&l->link);
	wlr_scene_node_destroy(l->node);
	struct slim_shell *shell = l->shell;
	free(l);
	layers_arrange(shell);
}

static void handle_new_surface(struct wl_listener *listener, void *data)
{
	struct slim_shell *shell = wl_container_of(listener, shell, new_layer_surface);
	struct wlr_layer_surface_v1 *ls = data;
	if (!size_valid(ls, &ls->pending)) {
		return;
	}
	if (!shell->output || ls->pending.layer > ZWLR_LAYER_SHELL_V1_LAYER_OVERLAY) {
		wlr_layer_surface_v1_destroy(ls); /* nowhere to show it: closed */
		return;
	}
	/* the head it asked for, if the console has it; else the primary one */
	if (!ls->output || !shell_head_of_output(shell, ls->output)) {
		ls->output = shell->output;
	}
	struct slim_layer_surface *l = calloc(1, sizeof(*l));
	struct wlr_scene_node *node = l ? wlr_scene_subsurface_tree_create(
		&shell->layers[ls->pending.layer]->node, ls->surface) : NULL;
	if (!node) {
		free(l);
		wl_resource_post_no_memory(ls->resource);
		return;
	}
	l->shell = shell;
	l->ls = ls;
	l->node = node;
	wlr_scene_node_set_enabled(node, false);
	l->map.notify = handle_map;
	wl_signal_add(&ls->events.map, &l->map);
	l->unmap.notify = handle_unmap;
	wl_signal_add(&ls->events.unmap, &l->unmap);
	l->destroy.notify = handle_destroy;
	wl_signal_add(&ls->events.destroy, &l->destroy);
	l->commit.notify = handle_commit;
	wl_signal_add(&ls->surface->events.commit, &l->commit);
	wl_list_insert(&shell->layer_surfaces, &l->link);
	/*
	 * Its first configure says where it goes; it maps once it answers.
	 * wlroots 0.15 announces it at its first commit with that commit's
	 * state still pending: placed from it, as if current.
	 */
	struct wlr_layer_surface_v1_state current = ls->current;
	ls->current = ls->pending;
	layers_arrange(shell);
	ls->current = current;
}

bool layers_init(struct slim_shell *shell)
{
	wl_list_init(&shell->layer_surfaces);
	/* the scene, bottom up: background, its layers, windows, the layers over them */
	for (int i = 0; i < 4; i++) {
		shell->layers[i] = wlr_scene_tree_create(&shell->scene->node);
		if (i == ZWLR_LAYER_SHELL_V1_LAYER_BOTTOM) {
			shell->windows = wlr_scene_tree_create(&shell->scene->node);
		}
		if (!shell->layers[i]) {
			return false;
		}
	}
	struct wlr_layer_shell_v1 *layer_shell = wlr_layer_shell_v1_create(shell->display);
	if (!layer_shell || !shell->windows) {
		return false;
	}
	shell->new_layer_surface.notify = handle_new_surface;
	wl_signal_add(&layer_shell->events.new_surface, &shell->new_layer_surface);
	return true;
}
