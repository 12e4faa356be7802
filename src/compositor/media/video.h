/*
 * Moving pictures found and sent as CSCS (video.c). The session makes it
 * and asks it for each streamed frame's pictures; it tells the session
 * through slim_video_handler and calls none of it.
 */
#ifndef SLIM_VIDEO_H
#define SLIM_VIDEO_H

#include <pixman.h>
#include <stdbool.h>
#include <stdint.h>
#include <wayland-server-core.h>
#include "encoder.h"
#include "video-codec.h"
#include "screen-map.h"

struct wlr_compositor;
struct wlr_scene;
struct wlr_texture;
struct slim_video;

struct slim_video_handler {
	/* `region` (output coordinates) stopped being video: it is repainted exactly. */
	void (*repaint)(void *data, const pixman_region32_t *region);
	/*
	 * The bits a second video may take on the console's link, asking for
	 * demand_bps (0: no limit known).
	 */
	uint64_t (*link_budget)(void *data, uint64_t demand_bps);
	/* A YUV client buffer's texture: its planes (4:2:0, depth 8; no dst) into img. */
	bool (*texture_yuv)(void *data, struct wlr_texture *texture, struct slim_yuv_image *img);
};

/*
 * Watches the surfaces of `compositor`, shown in `scene`; budget_bps 0:
 * video goes as pixels like everything else. `device`: where H.264 is
 * encoded for consoles that decode it.
 */
struct slim_video *video_create(struct wl_event_loop *loop, struct wlr_compositor *compositor,
		struct wlr_scene *scene, uint64_t budget_bps, enum slim_h264_device device,
		const struct slim_video_handler *handler, void *data);
/* What the attached console decodes (NULL: none): its streams start again. */
void video_set_console_codec(struct slim_video *video, const struct slim_wire_codec *h264);
/* The console asked for a key picture of `stream` (VIDEO_RECOVER). */
void video_recover(struct slim_video *video, uint8_t stream);
void video_codec_stats(const struct slim_video *video, uint8_t stream,
		struct video_codec_stream_info *info);
void video_destroy(struct slim_video *video);
/*
 * The frame's video, as YUV images into frame->yuv, taken from the rendered
 * pixels `fb` (the console's screen) on the head `map` whose frame it is; what stopped being video is added to `damage` to be repainted.
 * `answer_pending`: input waits for its answer. Returns whether this frame
 * is that answer (exact pixels outside the video changed); the video's
 * picture then waits for the next frame (frame->defer).
 */
bool video_frame(struct slim_video *video, const struct slim_fb *fb,
		const struct slim_screen_map *map, pixman_region32_t *damage,
		struct slim_frame *frame, bool answer_pending);

#endif
