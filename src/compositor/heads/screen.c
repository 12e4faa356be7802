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
#include "slim-desk.h"

/* What the mode says to clients when the console does not know its refresh. */
#define REFRESH_MHZ 60000

struct screen {
	struct wlr_output wlr; /* first: the impl's callbacks get it */
};

static const uint32_t supported_state = WLR_OUTPUT_STATE_BACKEND_OPTIONAL |
	WLR_OUTPUT_STATE_BUFFER | WLR_OUTPUT_STATE_MODE | WLR_OUTPUT_STATE_SCALE;

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
			wlr->pending.custom_mode.height, wlr->pending.custom_mode.refresh ?
			wlr->pending.custom_mode.refresh : REFRESH_MHZ);
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
		const struct slim_head *head)
{
	struct screen *screen = calloc(1, sizeof(*screen));
	if (!screen) {
		return NULL;
	}
	struct wlr_output *wlr = &screen->wlr;
	wlr_output_init(wlr, backend, &screen_impl, display);
	wlr_output_update_custom_mode(wlr, (int32_t)head->width, (int32_t)head->height,
		head->refresh_mhz ? (int32_t)head->refresh_mhz : REFRESH_MHZ);
	/* what the console said, cleaned (slim-desk.h): before the global exists */
	snprintf(wlr->make, sizeof(wlr->make), "%s", head->make[0] ? head->make : "slimland");
	/* wlr_output keeps 15 characters of a model */
	snprintf(wlr->model, sizeof(wlr->model), "%.15s", head->model[0] ? head->model : "console");
	wlr->phys_width = (int32_t)head->mm_width;
	wlr->phys_height = (int32_t)head->mm_height;
	wlr_output_set_name(wlr, head->name);
	char desc[128];
	snprintf(desc, sizeof(desc), "%s %s (%s on the console)", wlr->make, wlr->model,
		head->name);
	wlr_output_set_description(wlr, desc);
	wlr_output_update_enabled(wlr, true);
	return wlr;
}

void screen_destroy(struct wlr_output *output)
{
	if (output) {
		wlr_output_destroy(output);
	}
}

/*
 * Exported by wlroots 0.15 but declared in a header it does not install
 * (render/swapchain.h). The output makes a new swapchain when it renders
 * and has none (types/output/render.c, output_create_swapchain).
 */
struct wlr_swapchain;
void wlr_swapchain_destroy(struct wlr_swapchain *swapchain);

void screen_release_buffers(struct wlr_output *output)
{
	/* nothing holds the last buffer rendered once it is committed: it goes too */
	if (output && output->swapchain && !output->back_buffer) {
		wlr_swapchain_destroy(output->swapchain);
		output->swapchain = NULL;
	}
}
