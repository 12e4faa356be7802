/*
 * wlroots' headless output asks for a frame sixty times a second, whether
 * or not anything changed: a session nobody types in would wake up sixty
 * times a second to find nothing to do. The console's ACKs are this
 * screen's vblank instead (output.c sends the frame events), so it has no
 * clock of its own: idle, the compositor sleeps until a client, the
 * console or a timer of its own has something for it.
 *
 * Everything else is the headless backend's: the buffers it can show (its
 * buffer caps choose the allocator) and the keyboard. The mode says 60 Hz
 * to clients, which is what the console's pace comes to while it keeps up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <wlr/interfaces/wlr_output.h>
#include <wlr/util/log.h>
#include "screen.h"

#define REFRESH_MHZ 60000

struct screen {
	struct wlr_output wlr; /* first: the impl's callbacks get it */
};

static const uint32_t supported_state =
	WLR_OUTPUT_STATE_BACKEND_OPTIONAL | WLR_OUTPUT_STATE_BUFFER | WLR_OUTPUT_STATE_MODE;

static bool screen_commit(struct wlr_output *wlr)
{
	if (wlr->pending.committed & ~supported_state) {
		return false;
	}
	if (wlr->pending.committed & WLR_OUTPUT_STATE_MODE) {
		if (wlr->pending.mode_type != WLR_OUTPUT_STATE_MODE_CUSTOM) {
			return false;
		}
		wlr_output_update_custom_mode(wlr, wlr->pending.custom_mode.width,
			wlr->pending.custom_mode.height, REFRESH_MHZ);
	}
	if (wlr->pending.committed & WLR_OUTPUT_STATE_BUFFER) {
		/* shown as soon as committed: the encoder takes it from here */
		struct wlr_output_event_present present = {
			.commit_seq = wlr->commit_seq + 1,
			.presented = true,
		};
		wlr_output_send_present(wlr, &present);
	}
	return true;
}

static void screen_impl_destroy(struct wlr_output *wlr)
{
	struct screen *screen = wl_container_of(wlr, screen, wlr);
	free(screen);
}

static const struct wlr_output_impl screen_impl = {
	.commit = screen_commit,
	.destroy = screen_impl_destroy,
};

struct wlr_output *screen_create(struct wlr_backend *backend, struct wl_display *display,
		uint32_t width, uint32_t height)
{
	struct screen *screen = calloc(1, sizeof(*screen));
	if (!screen) {
		return NULL;
	}
	wlr_output_init(&screen->wlr, backend, &screen_impl, display);
	wlr_output_update_custom_mode(&screen->wlr, (int32_t)width, (int32_t)height, REFRESH_MHZ);
	snprintf(screen->wlr.make, sizeof(screen->wlr.make), "slimland");
	snprintf(screen->wlr.model, sizeof(screen->wlr.model), "console");
	wlr_output_set_name(&screen->wlr, "CONSOLE-1");
	wlr_output_set_description(&screen->wlr, "The console's screen");
	wlr_output_update_enabled(&screen->wlr, true);
	return &screen->wlr;
}

void screen_destroy(struct wlr_output *output)
{
	if (output) {
		wlr_output_destroy(output);
	}
}
