/* The shadow's own link, fed from the session's frames: see shadow-link.h. */
#define SHADOW_DEFER_MS 5
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "shadow-link.h"
#include "slim-log.h"

struct slim_shadow_link {
	const struct slim_shadow_link_handler *handler;
	void *data;
	struct slim_link *link;
	/* the session's screen as the shadow is to see it: its console's size */
	struct slim_fb copy;
	pixman_region32_t pending; /* changed in `copy` since the shadow's last frame */
	/* the send, SHADOW_DEFER_MS after the session's console was sent its frame */
	struct wl_event_source *timer;
	bool armed;
};

/* What changed goes, if the shadow's link can take a frame now. */
static void send_pending(struct slim_shadow_link *shadow)
{
	if (!shadow->copy.px || !pixman_region32_not_empty(&shadow->pending) ||
			!slim_link_ready(shadow->link)) {
		return; /* its want_frame comes once it has room */
	}
	struct slim_frame frame = { .fb = &shadow->copy, .damage = &shadow->pending };
	slim_link_send_frame(shadow->link, &frame, false);
	pixman_region32_clear(&shadow->pending);
}

static int handle_timer(void *data)
{
	struct slim_shadow_link *shadow = data;
	shadow->armed = false;
	send_pending(shadow);
	return 0;
}

/*
 * Not at once: the session's frame answers its user, and reaches that
 * console in the meantime; encoding the watcher's at the same moment
 * would have the two share the server's cores. A timer already armed is
 * left as it is, so that a session that animates all the time does not
 * keep its watcher waiting.
 */
static void schedule_send(struct slim_shadow_link *shadow)
{
	if (!shadow->armed) {
		shadow->armed = true;
		wl_event_source_timer_update(shadow->timer, SHADOW_DEFER_MS);
	}
}

static void free_copy(struct slim_shadow_link *shadow)
{
	free(shadow->copy.px);
	shadow->copy = (struct slim_fb){ 0 };
	pixman_region32_clear(&shadow->pending);
}

static void handle_attached(void *data, const char *console_id, const struct slim_desk *desk)
{
	struct slim_shadow_link *shadow = data;
	uint32_t width, height;
	slim_desk_bounds(desk, &width, &height);
	free_copy(shadow);
	/* black until the session's next frame: then the whole screen is damaged */
	shadow->copy.px = calloc((size_t)width * height, 4);
	if (!shadow->copy.px) {
		slim_link_detach(shadow->link, "out of memory for its screen");
		return;
	}
	shadow->copy.width = width;
	shadow->copy.height = height;
	shadow->copy.stride = width;
	shadow->handler->attached(shadow->data, console_id);
}

static void handle_detached(void *data, const char *console_id)
{
	struct slim_shadow_link *shadow = data;
	free_copy(shadow);
	shadow->handler->detached(shadow->data, console_id);
}

static void handle_input(void *data, const struct slim_wire_input *ev)
{
	struct slim_shadow_link *shadow = data;
	shadow->handler->input(shadow->data, ev);
}

static void handle_want_frame(void *data)
{
	send_pending(data);
}

/* The shadow hears no sound and sends none; its link is not reported. */
static void handle_nothing(void *data)
{
}

static void handle_microphone(void *data, const struct slim_audio_packet *p, bool again)
{
}

static void handle_video_recover(void *data, uint8_t stream)
{
}

static const struct slim_link_handler link_handler = {
	.attached = handle_attached,
	.detached = handle_detached,
	.input = handle_input,
	.want_frame = handle_want_frame,
	.audio_report = handle_nothing,
	.microphone = handle_microphone,
	.link_report = handle_nothing,
	.video_recover = handle_video_recover,
};

struct slim_shadow_link *slim_shadow_link_create(struct wl_event_loop *loop,
		const struct slim_link_config *config, const struct slim_shadow_link_handler *handler,
		void *data)
{
	/* the session's address, any free port */
	char listen[300];
	const char *colon = config->listen ? strrchr(config->listen, ':') : NULL;
	if (!colon || (size_t)(colon - config->listen) + 3 > sizeof(listen)) {
		return NULL;
	}
	snprintf(listen, sizeof(listen), "%.*s:0", (int)(colon - config->listen), config->listen);
	struct slim_shadow_link *shadow = calloc(1, sizeof(*shadow));
	if (!shadow) {
		return NULL;
	}
	shadow->handler = handler;
	shadow->data = data;
	pixman_region32_init(&shadow->pending);
	struct slim_link_config cfg = *config;
	cfg.listen = listen;
	cfg.managed = true;
	shadow->link = slim_link_create(loop, &cfg, &link_handler, shadow);
	shadow->timer = wl_event_loop_add_timer(loop, handle_timer, shadow);
	if (!shadow->link || !shadow->timer) {
		slim_shadow_link_destroy(shadow);
		return NULL;
	}
	return shadow;
}

void slim_shadow_link_destroy(struct slim_shadow_link *shadow)
{
	if (!shadow) {
		return;
	}
	if (shadow->timer) {
		wl_event_source_remove(shadow->timer);
	}
	/* it goes without telling: the session ends the watching itself */
	slim_link_destroy(shadow->link);
	free(shadow->copy.px);
	pixman_region32_fini(&shadow->pending);
	free(shadow);
}

struct slim_link *slim_shadow_link_link(struct slim_shadow_link *shadow)
{
	return shadow->link;
}

uint16_t slim_shadow_link_port(const struct slim_shadow_link *shadow)
{
	return slim_link_port(shadow->link);
}

void slim_shadow_link_expect(struct slim_shadow_link *shadow,
		const uint8_t token[SLIM_ATTACH_TOKEN_LEN],
		const char console_id[SLIM_CONSOLE_ID_LEN], const uint8_t key[SLIM_SEC_KEY_LEN])
{
	slim_link_expect(shadow->link, token, console_id, key);
}

void slim_shadow_link_frame(struct slim_shadow_link *shadow, const struct slim_fb *fb,
		const pixman_region32_t *damage)
{
	if (!shadow || !shadow->copy.px) {
		return;
	}
	uint32_t w = fb->width < shadow->copy.width ? fb->width : shadow->copy.width;
	uint32_t h = fb->height < shadow->copy.height ? fb->height : shadow->copy.height;
	pixman_region32_t mine;
	pixman_region32_init_rect(&mine, 0, 0, w, h);
	if (damage) {
		pixman_region32_intersect(&mine, &mine, damage);
	}
	int n;
	const pixman_box32_t *b = pixman_region32_rectangles(&mine, &n);
	for (int i = 0; i < n; i++) {
		for (int32_t y = b[i].y1; y < b[i].y2; y++) {
			memcpy(shadow->copy.px + (size_t)y * shadow->copy.stride + b[i].x1,
				fb->px + (size_t)y * fb->stride + b[i].x1,
				(size_t)(b[i].x2 - b[i].x1) * 4);
		}
	}
	pixman_region32_union(&shadow->pending, &shadow->pending, &mine);
	pixman_region32_fini(&mine);
	schedule_send(shadow);
}
