/*
 * One output per head of the console (heads.h). A console that attaches
 * says its heads; the session keeps an output whose name the console still
 * has (changing its size, place or scale), makes one for each new name and
 * removes those whose monitor is gone, after the new ones exist: the shell
 * moves their windows to a head that remains.
 *
 * Where the screen is shared (several heads, or one not at the top left),
 * each output draws into a copy of the console's screen (output.c) and
 * the encoder sees that copy; its gaps stay black, and nothing is ever
 * drawn there.
 */
#include <stdlib.h>
#include <string.h>
#include <wlr/render/allocator.h>
#include <wlr/render/wlr_renderer.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_output_layout.h>
#include <wlr/util/log.h>
#include "background.h"
#include "heads.h"
#include "output.h"
#include "screen.h"
#include "slim-pixels.h"
#include "user-scale.h"

struct head {
	struct slim_head desc;     /* what the console said */
	struct wlr_output *wlr;    /* screen.c */
	struct slim_output *output;
};

struct slim_heads {
	struct slim_heads_deps deps;
	struct head heads[SLIM_MAX_HEADS];
	struct slim_screen_map maps[SLIM_MAX_HEADS];
	size_t n;
	/*
	 * The copy of the console's screen the heads draw into (unused, but
	 * kept, while one head's buffer is the screen: a console that comes
	 * back finds its pages there).
	 */
	struct slim_fb screen;
	bool shared; /* the heads draw into `screen` */
	struct background_cache backgrounds;
};

/*
 * The scale a head is shown at, unless its user chose one
 * (~/.config/slimland/scale): the console's, if it says one; else 2 from
 * HIDPI_DPI up (its physical size known), else 1. 144 dpi is 1.5
 * times the 96 of scale 1, half way to 2.
 */
#define HIDPI_DPI 144

static uint32_t scale_of(const struct slim_head *head)
{
	if (head->scale) {
		return head->scale;
	}
	if (head->mm_width == 0 || head->mm_height == 0) {
		return 1;
	}
	/* dots per inch across: a 27" 3840x2160 monitor (600 mm) has 163, a 24" 2560x1440 one 122 */
	uint64_t dpi = (uint64_t)head->width * 254 / ((uint64_t)head->mm_width * 10);
	return dpi >= HIDPI_DPI ? 2 : 1;
}

static bool head_create(struct slim_heads *heads, struct head *h, const struct slim_head *desc)
{
	const struct slim_heads_deps *d = &heads->deps;
	h->desc = *desc;
	h->wlr = screen_create(d->backend, d->display, desc);
	if (!h->wlr || !wlr_output_init_render(h->wlr, d->allocator, d->renderer)) {
		wlr_log(WLR_ERROR, "cannot make an output for the head %s", desc->name);
		screen_destroy(h->wlr);
		*h = (struct head){ 0 };
		return false;
	}
	/* its global, and the scene's output for it, at its place */
	wlr_output_layout_add(d->layout, h->wlr, (int)desc->x, (int)desc->y);
	h->output = output_create(h->wlr, d->scene, &heads->backgrounds, d->loop, d->link,
		d->video, d->sched, &d->tap);
	if (!h->output) {
		wlr_output_layout_remove(d->layout, h->wlr);
		screen_destroy(h->wlr);
		*h = (struct head){ 0 };
		return false;
	}
	return true;
}

/* `layout`: NULL when the layout has gone already (the session ends). */
static void head_destroy(struct head *h, struct wlr_output_layout *layout)
{
	if (layout && h->wlr) {
		output_unplug(h->output);
		wlr_output_layout_remove(layout, h->wlr);
	}
	output_destroy(h->output);
	screen_destroy(h->wlr);
	*h = (struct head){ 0 };
}

/* `user`: the user's own scale for every head, 0: none. */
static void set_maps(struct slim_heads *heads, const struct slim_desk *desk, uint32_t user)
{
	for (uint32_t i = 0; i < desk->n_heads; i++) {
		const struct slim_head *h = &desk->heads[i];
		heads->maps[i] = (struct slim_screen_map){
			.x = (int32_t)h->x, .y = (int32_t)h->y,
			.width = h->width, .height = h->height,
			.scale = user ? user : scale_of(h),
		};
	}
}

/* The copy of the screen the heads draw into, if they share it: cleared, its size. */
static bool set_screen(struct slim_heads *heads, const struct slim_desk *desk)
{
	uint32_t width, height;
	slim_desk_bounds(desk, &width, &height);
	const struct slim_head *first = &desk->heads[0];
	heads->shared = !(desk->n_heads == 1 && first->x == 0 && first->y == 0);
	if (!heads->shared) {
		return true;
	}
	if (heads->screen.px && heads->screen.width == width && heads->screen.height == height) {
		/* black where no head is: the gaps are never drawn, the heads are at once */
		memset(heads->screen.px, 0, (size_t)width * height * 4);
		return true;
	}
	free(heads->screen.px);
	heads->screen = (struct slim_fb){ 0 };
	uint32_t *px = calloc((size_t)width * height, 4);
	if (!px) {
		wlr_log(WLR_ERROR, "out of memory for a %ux%u screen", width, height);
		heads->shared = false;
		return false;
	}
	heads->screen = (struct slim_fb){ .px = px, .width = width, .height = height,
		.stride = width };
	return true;
}

/* Of the heads there are, the one named `name`; -1 if none. */
static int find_head(const struct head *heads, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (heads[i].wlr && strcmp(heads[i].desc.name, name) == 0) {
			return (int)i;
		}
	}
	return -1;
}

bool heads_apply(struct slim_heads *heads, const struct slim_desk *desk)
{
	struct head old[SLIM_MAX_HEADS];
	size_t n_old = heads->n;
	memcpy(old, heads->heads, sizeof(old));
	struct head next[SLIM_MAX_HEADS] = { 0 };
	/* those the console still has are kept; new ones are made first */
	for (uint32_t i = 0; i < desk->n_heads; i++) {
		int k = find_head(old, n_old, desk->heads[i].name);
		if (k >= 0) {
			next[i] = old[k];
			next[i].desc = desk->heads[i];
			old[k] = (struct head){ 0 };
		} else if (!head_create(heads, &next[i], &desk->heads[i])) {
			/* undo: what was made goes, what was kept stays */
			for (uint32_t j = 0; j < i; j++) {
				if (find_head(heads->heads, n_old, next[j].desc.name) < 0) {
					head_destroy(&next[j], heads->deps.layout);
				}
			}
			return false;
		}
	}
	/* then those whose monitor is gone: their windows have somewhere to go */
	for (size_t k = 0; k < n_old; k++) {
		if (old[k].wlr) {
			wlr_log(WLR_INFO, "heads: %s is gone", old[k].desc.name);
			head_destroy(&old[k], heads->deps.layout);
		}
	}
	memcpy(heads->heads, next, sizeof(next));
	heads->n = desk->n_heads;
	set_maps(heads, desk, slim_user_scale());
	bool ok = set_screen(heads, desk);
	for (size_t i = 0; i < heads->n; i++) {
		struct head *h = &heads->heads[i];
		ok = output_place(h->output, &heads->maps[i],
			heads->shared ? &heads->screen : NULL) && ok;
		wlr_output_layout_add(heads->deps.layout, h->wlr, heads->maps[i].x, heads->maps[i].y);
		wlr_log(WLR_INFO, "heads: %s %ux%u at %d,%d, scale %u, %s %s%s", h->desc.name,
			h->desc.width, h->desc.height, heads->maps[i].x, heads->maps[i].y,
			heads->maps[i].scale, h->desc.make, h->desc.model,
			h->desc.primary ? ", primary" : "");
	}
	return ok;
}

struct slim_heads *heads_create(const struct slim_heads_deps *deps, const struct slim_desk *desk)
{
	struct slim_heads *heads = calloc(1, sizeof(*heads));
	if (!heads) {
		return NULL;
	}
	heads->deps = *deps;
	if (!heads_apply(heads, desk)) {
		heads_destroy(heads);
		return NULL;
	}
	return heads;
}

void heads_destroy(struct slim_heads *heads)
{
	if (!heads) {
		return;
	}
	for (size_t i = 0; i < heads->n; i++) {
		head_destroy(&heads->heads[i], NULL);
	}
	free(heads->screen.px);
	background_cache_finish(&heads->backgrounds);
	free(heads);
}

const struct slim_screen_map *heads_maps(const struct slim_heads *heads, size_t *n)
{
	*n = heads->n;
	return heads->maps;
}

struct wlr_output *heads_primary(const struct slim_heads *heads)
{
	for (size_t i = 0; i < heads->n; i++) {
		if (heads->heads[i].desc.primary) {
			return heads->heads[i].wlr;
		}
	}
	return heads->n ? heads->heads[0].wlr : NULL;
}

void heads_attached(struct slim_heads *heads)
{
	for (size_t i = 0; i < heads->n; i++) {
		output_attached(heads->heads[i].output);
	}
}

void heads_release_buffers(struct slim_heads *heads)
{
	wlr_log(WLR_INFO, "heads: no console: their buffers freed until one shows them");
	for (size_t i = 0; i < heads->n; i++) {
		screen_release_buffers(heads->heads[i].wlr);
	}
}

void heads_link_ready(struct slim_heads *heads)
{
	for (size_t i = 0; i < heads->n; i++) {
		output_link_ready(heads->heads[i].output);
	}
}

void heads_note_move(struct slim_heads *heads, struct wlr_box box, int32_t dx, int32_t dy)
{
	for (size_t i = 0; i < heads->n; i++) {
		output_note_move(heads->heads[i].output, box, dx, dy);
	}
}

void heads_damage_region(struct slim_heads *heads, const pixman_region32_t *region)
{
	for (size_t i = 0; i < heads->n; i++) {
		output_damage_region(heads->heads[i].output, region);
	}
}
