/*
 * Windows kept within the usable area of their output: the output's box
 * in the layout, less the panels' exclusive zones. A new window is placed
 * on the output under the pointer; a window that asks for a size (an X11
 * configure request, an xdg toplevel's own commit) is kept on the output
 * under its centre. One larger than that area is told a size that fits
 * and goes to the area's top left, so that its title bar and controls are
 * on screen. Interactive moves are left alone: a user may push a window
 * half off the screen.
 */
#include <wlr/types/wlr_output_layout.h>
#include "geometry.h"
#include "shell-internal.h"

/* The output at (x, y), or the nearest one; NULL while there is none. */
static struct wlr_output *output_at(struct slim_shell *shell, double x, double y, struct wlr_box *box)
{
	double cx = x, cy = y;
	wlr_output_layout_closest_point(shell->layout, NULL, x, y, &cx, &cy);
	struct wlr_output *output = wlr_output_layout_output_at(shell->layout, cx, cy);
	struct wlr_box *b = output ? wlr_output_layout_get_box(shell->layout, output) : NULL;
	if (!b) {
		return NULL;
	}
	*box = *b;
	return output;
}

struct wlr_box shell_output_box_at(struct slim_shell *shell, double x, double y)
{
	struct wlr_box box = shell->usable;
	output_at(shell, x, y, &box);
	return box;
}

struct wlr_box shell_usable_area_at(struct slim_shell *shell, double x, double y)
{
	struct wlr_box box;
	struct wlr_output *output = output_at(shell, x, y, &box);
	if (!output) {
		return shell->usable; /* no output yet: what the shell knows of the screen */
	}
	if (output != shell->output) {
		return box; /* panels go to the console's screen alone (layer.c) */
	}
	/* layer.c's zones are in the output's own coordinates */
	return (struct wlr_box){ box.x + shell->usable.x, box.y + shell->usable.y,
		shell->usable.width, shell->usable.height };
}

/* One axis: a window of `size` at `pos`, in [lo, lo + len): its size and place there. */
static void fit_axis(int32_t lo, int32_t len, int32_t *pos, int32_t *size)
{
	if (*size >= len) {
		*size = len > 0 ? len : 1;
		*pos = lo;
		return;
	}
	*pos = geo_clamp(*pos, lo, (int64_t)lo + len - *size);
}

struct wlr_box constrain_box(struct wlr_box area, struct wlr_box box, int32_t top)
{
	/* the title bar, if any, above the window is in the area too */
	area.y += top;
	area.height -= top;
	fit_axis(area.x, area.width, &box.x, &box.width);
	fit_axis(area.y, area.height, &box.y, &box.height);
	return box;
}
