/*
 * The console's heads as the shell places windows on them: which head a
 * point or a window is on, and what happens when the session says the
 * heads changed (a console with other monitors attached, one plugged in
 * or out): panels and big windows placed again, windows on a head that
 * is gone brought onto one that remains, the pointer kept on a head.
 */
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_output_layout.h>
#include <wlr/util/log.h>
#include "shell-internal.h"

/* How far (x, y) is from the box, squared: 0 inside. */
static double distance2(const struct wlr_box *b, double x, double y)
{
	double dx = x < b->x ? b->x - x : x >= b->x + b->width ? x - (b->x + b->width) + 1 : 0;
	double dy = y < b->y ? b->y - y : y >= b->y + b->height ? y - (b->y + b->height) + 1 : 0;
	return dx * dx + dy * dy;
}

struct slim_shell_head *shell_head_at(struct slim_shell *shell, double x, double y)
{
	struct slim_shell_head *best = NULL;
	double best_d = 0;
	for (size_t i = 0; i < shell->n_heads; i++) {
		double d = distance2(&shell->heads[i].box, x, y);
		if (!best || d < best_d) {
			best = &shell->heads[i];
			best_d = d;
		}
	}
	return best;
}

struct slim_shell_head *shell_head_of_view(struct slim_view *view)
{
	struct wlr_box box = view_box(view);
	return shell_head_at(view->shell, box.x + box.width / 2.0, box.y + box.height / 2.0);
}

struct slim_shell_head *shell_head_of_output(struct slim_shell *shell, struct wlr_output *output)
{
	for (size_t i = 0; i < shell->n_heads; i++) {
		if (shell->heads[i].output == output) {
			return &shell->heads[i];
		}
	}
	return NULL;
}

static bool on_a_head(struct slim_shell *shell, double x, double y)
{
	struct slim_shell_head *head = shell_head_at(shell, x, y);
	return head && distance2(&head->box, x, y) == 0;
}

void slim_shell_set_heads(struct slim_shell *shell, const struct slim_screen_map *maps,
		size_t n, struct wlr_output *primary)
{
	bool first = shell->n_heads == 0;
	shell->n_heads = 0;
	for (size_t i = 0; i < n && i < SLIM_MAX_HEADS; i++) {
		struct slim_shell_head *h = &shell->heads[shell->n_heads];
		/* each head's output is in the layout at its map's top left */
		h->output = wlr_output_layout_output_at(shell->layout, maps[i].x + 0.5,
			maps[i].y + 0.5);
		if (!h->output) {
			continue;
		}
		h->map = maps[i];
		slim_screen_map_layout_box(&maps[i], &h->box.x, &h->box.y, &h->box.width,
			&h->box.height);
		h->usable = h->box;
		shell->n_heads++;
	}
	shell->output = primary;
	layers_rehome(shell);
	layers_arrange(shell);
	views_rescue(shell);
	views_fit_output(shell);
	/* the greeter and the first windows open on the primary head: from its top left */
	struct slim_shell_head *p = shell_head_of_output(shell, primary);
	if (p && (first || !on_a_head(shell, shell->pointer_x, shell->pointer_y))) {
		shell->pointer_x = p->box.x;
		shell->pointer_y = p->box.y;
		shell->handler->pointer_moved(shell->data);
	}
}

void slim_shell_pointer_on_screen(const struct slim_shell *shell, double *x, double *y)
{
	struct slim_shell_head *head = shell_head_at((struct slim_shell *)shell,
		shell->pointer_x, shell->pointer_y);
	if (!head) {
		*x = shell->pointer_x;
		*y = shell->pointer_y;
		return;
	}
	slim_screen_map_to_screen(&head->map, shell->pointer_x, shell->pointer_y, x, y);
}

uint32_t slim_shell_pointer_scale(const struct slim_shell *shell)
{
	struct slim_shell_head *head = shell_head_at((struct slim_shell *)shell,
		shell->pointer_x, shell->pointer_y);
	return head ? head->map.scale : 1;
}
