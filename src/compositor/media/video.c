/*
 * Moving pictures go to the console as CSCS: YUV 4:2:0 at the resolution
 * the video budget allows, scaled back up by the console. Everything else
 * stays exact.
 *
 * Every surface is watched (video-detect.c decides from its commits and
 * its wp_content_type_v1 hint). At each streamed frame, the visible part of
 * each video surface that drew since the last frame (its box on screen
 * minus every surface above it, menus included) is converted from the
 * rendered frame and handed to the encoder as YUV images.
 *
 * What was sent as CSCS is remembered ("lossy"): the moment a part of it
 * is no longer video (the video paused, ended, moved, shrank or was
 * covered), that part is added to the frame's damage and the encoder,
 * which refines damage against its exact model of the console, repaints
 * it pixel for pixel. A pause is noticed VIDEO_IDLE_US after the last
 * frame, and the repaint goes out at once.
 */
#include <math.h>
#include <stdlib.h>
#include <wlr/types/wlr_compositor.h>
#include <wlr/types/wlr_scene.h>
#include <wlr/types/wlr_surface.h>
#include <wlr/util/log.h>
#include "content-type.h"
#include "geometry.h"
#include "slim-log.h"
#include "video-codec.h"
#include "video.h"

/* YUV images in one frame at most; what does not fit goes exact. */
#define VIDEO_MAX_IMAGES 8

struct slim_video_surface {
	struct wl_list link; /* slim_video.surfaces */
	struct slim_video *video;
	struct wlr_surface *surface;
	struct slim_video_detect detect;
	bool fresh;   /* drew since the last streamed frame */
	bool checked; /* found by measure, its picture has been looked at */
	bool said_ui; /* the log has said it is text or a user interface */
	bool seen;    /* on the head whose frame this is */
	struct wl_listener commit, destroy;
};

/* A surface on screen, in rendering order (bottom first). */
struct placed {
	struct wlr_surface *surface;
	pixman_box32_t box;
};

struct candidate {
	const struct slim_video_surface *vs;
	struct slim_rect rect;
	uint64_t demand; /* samples a second at full size */
	bool whole;      /* the rect is the whole surface: nothing over it, all on screen */
	bool single;     /* the rect is all that is seen of the surface: a codec may take it */
};

struct slim_video {
	struct wlr_scene *scene;
	const struct slim_video_handler *handler;
	void *data;
	uint64_t budget_bps; /* 0: no CSCS at all */
	struct wl_list surfaces;
	struct wl_event_source *expiry;
	pixman_region32_t lossy;
	pixman_region32_t pictured; /* frame->defer: where the next pictures repaint */
	struct placed *placed;
	size_t n_placed, placed_cap;
	struct slim_yuv_image images[VIDEO_MAX_IMAGES];
	struct slim_yuv_planes planes[VIDEO_MAX_IMAGES];
	struct video_codec *codec;
	struct slim_video_picture pictures[SLIM_VIDEO_STREAMS];
	struct slim_ratelimit log_limit;
	const struct slim_screen_map *map; /* the head whose frame this is */
	struct wl_listener new_surface;
};

/* The timer goes off when the first active video would end. */
static void arm_expiry(struct slim_video *video)
{
	uint64_t now = slim_now_us(), next = UINT64_MAX;
	struct slim_video_surface *vs;
	wl_list_for_each(vs, &video->surfaces, link) {
		if (vs->detect.active) {
			uint64_t until = slim_video_detect_until_expiry(&vs->detect, now);
			next = until < next ? until : next;
		}
	}
	wl_event_source_timer_update(video->expiry,
		next == UINT64_MAX ? 0 : (int)(next / 1000 + 1));
}

static const char *hint_name(enum slim_content_hint hint)
{
	static const char *names[] = {
		[SLIM_CONTENT_NONE] = "measured", [SLIM_CONTENT_PHOTO] = "client says photo",
		[SLIM_CONTENT_VIDEO] = "client says video", [SLIM_CONTENT_GAME] = "client says game",
	};
	return names[hint];
}

static uint64_t region_area(const pixman_region32_t *region)
{
	int n;
	const pixman_box32_t *b = pixman_region32_rectangles((pixman_region32_t *)region, &n);
	uint64_t area = 0;
	for (int i = 0; i < n; i++) {
		area += (uint64_t)(b[i].x2 - b[i].x1) * (uint64_t)(b[i].y2 - b[i].y1);
	}
	return area;
}

static void handle_surface_commit(struct wl_listener *listener, void *data)
{
	struct slim_video_surface *vs = wl_container_of(listener, vs, commit);
	struct wlr_surface *surface = vs->surface;
	vs->detect.hint = content_type_pending(surface);
	if (vs->video->budget_bps == 0 || !pixman_region32_not_empty(&surface->buffer_damage)) {
		return;
	}
	uint32_t w = (uint32_t)surface->current.buffer_width;
	uint32_t h = (uint32_t)surface->current.buffer_height;
	if (slim_video_detect_commit(&vs->detect, slim_now_us(), w, h,
			region_area(&surface->buffer_damage))) {
		vs->checked = false;
		/* one found by measure is said once its picture is looked at */
		if (vs->detect.hint != SLIM_CONTENT_NONE &&
				slim_ratelimit(&vs->video->log_limit, slim_now_us())) {
			wlr_log(WLR_INFO, "video: a %ux%u surface shows video (%s)", w, h,
				hint_name(vs->detect.hint));
		}
	}
	if (vs->detect.active) {
		vs->fresh = true;
		arm_expiry(vs->video);
	}
}

static void surface_destroy(struct slim_video_surface *vs)
{
	video_codec_forget(vs->video->codec, vs->surface);
	wl_list_remove(&vs->commit.link);
	wl_list_remove(&vs->destroy.link);
	wl_list_remove(&vs->link);
	free(vs);
}

/* A video window closing: its area is repainted by the frame its going damages. */
static void handle_surface_destroy(struct wl_listener *listener, void *data)
{
	struct slim_video_surface *vs = wl_container_of(listener, vs, destroy);
	surface_destroy(vs);
}

static void handle_new_surface(struct wl_listener *listener, void *data)
{
	struct slim_video *video = wl_container_of(listener, video, new_surface);
	struct wlr_surface *surface = data;
	struct slim_video_surface *vs = calloc(1, sizeof(*vs));
	if (!vs) {
		wlr_log(WLR_ERROR, "video: out of memory; a surface goes unwatched");
		return;
	}
	vs->video = video;
	vs->surface = surface;
	vs->commit.notify = handle_surface_commit;
	wl_signal_add(&surface->events.commit, &vs->commit);
	vs->destroy.notify = handle_surface_destroy;
	wl_signal_add(&surface->events.destroy, &vs->destroy);
	wl_list_insert(&video->surfaces, &vs->link);
}

/* Videos that stopped drawing: what was sent lossy is repainted exactly. */
static int handle_expiry(void *data)
{
	struct slim_video *video = data;
	uint64_t now = slim_now_us();
	bool ended = false;
	struct slim_video_surface *vs;
	wl_list_for_each(vs, &video->surfaces, link) {
		/* a client still waiting for its frame callback has not paused: we have */
		if (!wl_list_empty(&vs->surface->current.frame_callback_list)) {
			slim_video_detect_waiting(&vs->detect, now);
		}
		if (slim_video_detect_expire(&vs->detect, now)) {
			ended = true;
			video_codec_forget(video->codec, vs->surface);
		}
	}
	if (ended && pixman_region32_not_empty(&video->lossy)) {
		video->handler->repaint(video->data, &video->lossy);
	}
	arm_expiry(video);
	return 0;
}

struct slim_video *video_create(struct wl_event_loop *loop, struct wlr_compositor *compositor,
		struct wlr_scene *scene, uint64_t budget_bps, enum slim_h264_device device,
		const struct slim_video_handler *handler, void *data)
{
	struct slim_video *video = calloc(1, sizeof(*video));
	if (!video) {
		return NULL;
	}
	video->expiry = wl_event_loop_add_timer(loop, handle_expiry, video);
	video->codec = video_codec_create(device);
	if (!video->expiry || !video->codec) {
		if (video->expiry) {
			wl_event_source_remove(video->expiry);
		}
		video_codec_destroy(video->codec);
		free(video);
		return NULL;
	}
	video->scene = scene;
	video->handler = handler;
	video->data = data;
	video->budget_bps = budget_bps;
	video->log_limit = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	wl_list_init(&video->surfaces);
	pixman_region32_init(&video->lossy);
	pixman_region32_init(&video->pictured);
	video->new_surface.notify = handle_new_surface;
	wl_signal_add(&compositor->events.new_surface, &video->new_surface);
	return video;
}

void video_destroy(struct slim_video *video)
{
	if (!video) {
		return;
	}
	struct slim_video_surface *vs, *tmp;
	wl_list_for_each_safe(vs, tmp, &video->surfaces, link) {
		surface_destroy(vs);
	}
	wl_list_remove(&video->new_surface.link);
	wl_event_source_remove(video->expiry);
	video_codec_destroy(video->codec);
	pixman_region32_fini(&video->lossy);
	pixman_region32_fini(&video->pictured);
	for (size_t i = 0; i < VIDEO_MAX_IMAGES; i++) {
		slim_yuv_planes_finish(&video->planes[i]);
	}
	free(video->placed);
	free(video);
}

static void place_surface(struct wlr_surface *surface, int sx, int sy, void *data)
{
	struct slim_video *video = data;
	if (video->n_placed == video->placed_cap) {
		size_t cap = video->placed_cap ? 2 * video->placed_cap : 32;
		struct placed *p = realloc(video->placed, cap * sizeof(*p));
		if (!p) {
			return;
		}
		video->placed = p;
		video->placed_cap = cap;
	}
	/*
	 * A client's numbers (a subsurface's place, a viewport's size): any
	 * int32s, clamped; then on the console's screen, as the head shows them.
	 */
	const struct slim_screen_map *m = video->map;
	int64_t s = m->scale;
	video->placed[video->n_placed++] = (struct placed){ surface,
		{ geo_coord(m->x + (sx - (int64_t)m->x) * s), geo_coord(m->y + (sy - (int64_t)m->y) * s),
			geo_coord(m->x + ((int64_t)sx + surface->current.width - m->x) * s),
			geo_coord(m->y + ((int64_t)sy + surface->current.height - m->y) * s) } };
}

/* What of the i-th placed surface is on this head and under nothing else. */
static void visible_part(const struct slim_video *video, size_t i, pixman_region32_t *out)
{
	const pixman_box32_t *b = &video->placed[i].box;
	const struct slim_screen_map *m = video->map;
	pixman_region32_init_rect(out, b->x1, b->y1, (unsigned)(b->x2 - b->x1),
		(unsigned)(b->y2 - b->y1));
	pixman_region32_intersect_rect(out, out, m->x, m->y, m->width, m->height);
	for (size_t j = i + 1; j < video->n_placed && pixman_region32_not_empty(out); j++) {
		const pixman_box32_t *a = &video->placed[j].box;
		pixman_region32_t above;
		pixman_region32_init_rect(&above, a->x1, a->y1, (unsigned)(a->x2 - a->x1),
			(unsigned)(a->y2 - a->y1));
		pixman_region32_subtract(out, out, &above);
		pixman_region32_fini(&above);
	}
}

/*
 * A surface found by measure shows a picture, not text scrolling by (see
 * video-detect.h)? Looked at once each time it becomes video.
 */
static bool looks_like_video(struct slim_video_surface *vs, const struct slim_fb *fb,
		const pixman_region32_t *vis)
{
	const struct slim_video *v = vs->video;
	struct slim_yuv_image planes;
	if (vs->checked || vs->detect.hint != SLIM_CONTENT_NONE ||
			v->handler->texture_yuv(v->data, wlr_surface_get_texture(vs->surface), &planes)) {
		return true;
	}
	const pixman_box32_t *e = pixman_region32_extents((pixman_region32_t *)vis);
	struct slim_rect box = { (uint16_t)e->x1, (uint16_t)e->y1, (uint16_t)(e->x2 - e->x1),
		(uint16_t)(e->y2 - e->y1) };
	uint32_t colours = slim_video_colours(fb, box);
	bool video = colours >= VIDEO_MIN_COLOURS;
	/* said once a surface: a user interface that animates is looked at again each second */
	if ((video || !vs->said_ui) && slim_ratelimit(&vs->video->log_limit, slim_now_us())) {
		wlr_log(WLR_INFO, "video: a %ux%u surface redraws like video and has %u colours: %s",
			box.w, box.h, colours, video ? "video (measured)" : "text or a user interface");
		vs->said_ui = vs->said_ui || !video;
	}
	if (video) {
		vs->checked = true;
	} else {
		slim_video_detect_veto(&vs->detect, slim_now_us());
	}
	return video;
}

/*
 * Finds where the active video surfaces are seen; gathers those that drew.
 * `pictured`: where they are seen and their pictures go as CSCS (all of a
 * surface's parts fit in the frame's images).
 */
static size_t gather(struct slim_video *video, const struct slim_fb *fb,
		pixman_region32_t *active, pixman_region32_t *pictured, struct candidate *out)
{
	size_t n = 0;
	struct slim_video_surface *vs;
	wl_list_for_each(vs, &video->surfaces, link) {
		vs->seen = false;
		if (!vs->detect.active) {
			continue;
		}
		for (size_t i = 0; i < video->n_placed; i++) {
			if (video->placed[i].surface != vs->surface) {
				continue;
			}
			pixman_region32_t vis;
			visible_part(video, i, &vis);
			vs->seen = pixman_region32_not_empty(&vis);
			if (pixman_region32_not_empty(&vis) && !looks_like_video(vs, fb, &vis)) {
				pixman_region32_fini(&vis);
				break;
			}
			pixman_region32_union(active, active, &vis);
			int nb;
			const pixman_box32_t *b = pixman_region32_rectangles(&vis, &nb);
			const pixman_box32_t *all = &video->placed[i].box;
			bool whole = nb == 1 && b[0].x1 == all->x1 && b[0].y1 == all->y1 &&
				b[0].x2 == all->x2 && b[0].y2 == all->y2;
			uint32_t fps = slim_video_detect_fps(&vs->detect);
			if (!vs->fresh || n + (size_t)nb <= VIDEO_MAX_IMAGES) {
				pixman_region32_union(pictured, pictured, &vis);
			}
			for (int k = 0; vs->fresh && k < nb && n < VIDEO_MAX_IMAGES; k++) {
				struct slim_rect r = { (uint16_t)b[k].x1, (uint16_t)b[k].y1,
					(uint16_t)(b[k].x2 - b[k].x1), (uint16_t)(b[k].y2 - b[k].y1) };
				out[n++] = (struct candidate){ vs, r,
					(uint64_t)r.w * r.h * (fps ? fps : 60), whole, nb == 1 };
			}
			pixman_region32_fini(&vis);
			break;
		}
	}
	return n;
}

/*
 * A YUV client's own planes, cropped as its viewport says, when they fit
 * the budget: a 640x360 video shown at 1920x1080 goes as 640x360 samples.
 */
static bool client_planes(struct slim_video *video, const struct candidate *c, uint64_t share,
		struct slim_yuv_image *img)
{
	struct wlr_surface *surface = c->vs->surface;
	if (!c->whole || surface->current.transform != WL_OUTPUT_TRANSFORM_NORMAL ||
			!video->handler->texture_yuv(video->data, wlr_surface_get_texture(surface), img)) {
		return false;
	}
	struct wlr_fbox src;
	wlr_surface_get_buffer_source_box(surface, &src);
	/* even-aligned, so that the chroma planes start where the luma does */
	uint32_t x0 = (uint32_t)src.x & ~1u, y0 = (uint32_t)src.y & ~1u;
	uint32_t x1 = (uint32_t)ceil(src.x + src.width), y1 = (uint32_t)ceil(src.y + src.height);
	x1 = x1 < img->width ? x1 : img->width;
	y1 = y1 < img->height ? y1 : img->height;
	uint32_t fps = slim_video_detect_fps(&c->vs->detect);
	uint16_t fit_w, fit_h;
	slim_yuv_fit(share, fps, x1 - x0, y1 - y0, &fit_w, &fit_h);
	if (x1 <= x0 || y1 <= y0 || fit_w < x1 - x0 || fit_h < y1 - y0) {
		return false; /* over the budget: the rendered pixels, scaled down */
	}
	img->y += (size_t)y0 * img->y_stride + x0;
	img->u += (size_t)(y0 / 2) * img->c_stride + x0 / 2;
	img->v += (size_t)(y0 / 2) * img->c_stride + x0 / 2;
	img->width = (uint16_t)(x1 - x0);
	img->height = (uint16_t)(y1 - y0);
	img->dst = c->rect;
	return true;
}

/* Exact pixels outside the video changed: the frame answers the input. */
static bool answers(const pixman_region32_t *damage, const pixman_region32_t *pictured)
{
	pixman_region32_t outside;
	pixman_region32_init(&outside);
	pixman_region32_subtract(&outside, (pixman_region32_t *)damage,
		(pixman_region32_t *)pictured);
	bool any = pixman_region32_not_empty(&outside);
	pixman_region32_fini(&outside);
	return any;
}

/* The candidate's picture, scaled to its share of the budget, into img: false if none. */
static bool picture(struct slim_video *video, const struct candidate *c, uint64_t share,
		const struct slim_fb *fb, struct slim_yuv_image *img, struct slim_yuv_planes *planes)
{
	if (client_planes(video, c, share, img)) {
		return true;
	}
	const struct wlr_surface_state *st = &c->vs->surface->current;
	uint32_t fps = slim_video_detect_fps(&c->vs->detect);
	uint16_t w, h;
	slim_yuv_fit(share, fps, c->rect.w, c->rect.h, &w, &h);
	/* never more samples than the client drew: an upscaled video goes at its own size */
	if (st->width > 0 && st->buffer_width < st->width) {
		uint32_t cap = (uint32_t)((uint64_t)c->rect.w * (uint32_t)st->buffer_width /
			(uint32_t)st->width);
		w = (uint16_t)(w < cap ? w : cap > 2 ? cap : 2);
	}
	if (st->height > 0 && st->buffer_height < st->height) {
		uint32_t cap = (uint32_t)((uint64_t)c->rect.h * (uint32_t)st->buffer_height /
			(uint32_t)st->height);
		h = (uint16_t)(h < cap ? h : cap > 2 ? cap : 2);
	}
	return slim_yuv_from_fb(img, planes, fb, c->rect, w < c->rect.w ? w : c->rect.w,
		h < c->rect.h ? h : c->rect.h);
}

/*
 * The candidate's picture through its stream's encoder, into frame->pictures:
 * the client's own planes when they are whole and small enough, else the
 * rendered pixels at the size the codec's share allows.
 */
static bool coded_picture(struct slim_video *video, const struct candidate *c, uint64_t share,
		const struct slim_fb *fb, size_t slot, struct slim_frame *frame)
{
	uint32_t fps = slim_video_detect_fps(&c->vs->detect);
	uint16_t w, h;
	if (!c->single || !video_codec_size(video->codec, c->rect, fps, share, &w, &h)) {
		return false;
	}
	struct slim_yuv_image img;
	if (client_planes(video, c, UINT64_MAX, &img) && img.width <= w && img.height <= h &&
			img.width >= 64 && img.height >= 64) {
		img.width &= (uint16_t)~1u; /* the encoder takes even sizes */
		img.height &= (uint16_t)~1u;
	} else if (!slim_yuv_from_fb(&img, &video->planes[slot], fb, c->rect, w, h)) {
		return false;
	}
	struct slim_video_picture *pic = &video->pictures[frame->n_pictures];
	if (!video_codec_encode(video->codec, c->vs->surface, &img, fps, share, slim_now_us(), pic)) {
		return false;
	}
	frame->n_pictures++;
	return true;
}

/* The n candidates' pictures into frame->yuv, the budget shared by what each would send. */
static void pictures(struct slim_video *video, const struct candidate *cand, size_t n,
		const struct slim_fb *fb, struct slim_frame *frame)
{
	uint64_t demand = 0;
	for (size_t i = 0; i < n; i++) {
		demand += cand[i].demand;
	}
	/* the console's link, measured, and what else it carries may leave less */
	uint64_t budget = video->budget_bps;
	uint64_t link = video->handler->link_budget(video->data, slim_yuv_bps(demand));
	budget = link && link < budget ? link : budget;
	for (size_t i = 0; i < n; i++) {
		/* each its share of the budget, by the samples it would send in full */
		uint64_t share = (uint64_t)((double)budget * (double)cand[i].demand / (double)demand);
		if (frame->n_pictures < SLIM_VIDEO_STREAMS &&
				coded_picture(video, &cand[i], share, fb, frame->n_yuv, frame)) {
			continue;
		}
		if (picture(video, &cand[i], share, fb, &video->images[frame->n_yuv],
				&video->planes[frame->n_yuv])) {
			frame->n_yuv++;
		}
	}
}

/*
 * What was lossy and is no longer video (outside `active`) goes into
 * `damage`, to be repainted exactly now; what the frame's pictures cover,
 * and what waits for a picture, is lossy on the console from now on.
 */
static void track_lossy(struct slim_video *video, pixman_region32_t *active,
		pixman_region32_t *damage, const struct slim_frame *frame)
{
	/* this head's part of it: the others' is theirs to keep */
	const struct slim_screen_map *m = video->map;
	pixman_region32_t here, refresh;
	pixman_region32_init(&here);
	pixman_region32_init(&refresh);
	pixman_region32_intersect_rect(&here, &video->lossy, m->x, m->y, m->width, m->height);
	pixman_region32_subtract(&refresh, &here, active);
	pixman_region32_union(damage, damage, &refresh);
	pixman_region32_subtract(&video->lossy, &video->lossy, &refresh);
	pixman_region32_fini(&refresh);
	pixman_region32_fini(&here);
	for (size_t i = 0; i < frame->n_yuv; i++) {
		const struct slim_rect *d = &video->images[i].dst;
		pixman_region32_union_rect(&video->lossy, &video->lossy, d->x, d->y, d->w, d->h);
	}
	for (size_t i = 0; i < frame->n_pictures; i++) {
		const struct slim_rect *d = &video->pictures[i].clip;
		pixman_region32_union_rect(&video->lossy, &video->lossy, d->x, d->y, d->w, d->h);
	}
	pixman_region32_union(&video->lossy, &video->lossy, &video->pictured);
}

bool video_frame(struct slim_video *video, const struct slim_fb *fb,
		const struct slim_screen_map *map, pixman_region32_t *damage,
		struct slim_frame *frame, bool answer_pending)
{
	video->map = map;
	frame->yuv = video->images;
	frame->n_yuv = 0;
	frame->pictures = video->pictures;
	frame->n_pictures = 0;
	frame->video_ended = video_codec_take_ended(video->codec);
	frame->defer = NULL;
	struct slim_video_surface *vs;
	bool any = false;
	wl_list_for_each(vs, &video->surfaces, link) {
		any |= vs->detect.active;
	}
	if (!any && !pixman_region32_not_empty(&video->lossy)) {
		return answer_pending && pixman_region32_not_empty(damage);
	}
	video->n_placed = 0;
	wlr_scene_node_for_each_surface(&video->scene->node, place_surface, video);
	pixman_region32_t active;
	pixman_region32_init(&active);
	pixman_region32_clear(&video->pictured);
	struct candidate cand[VIDEO_MAX_IMAGES];
	size_t n = gather(video, fb, &active, &video->pictured, cand);
	/*
	 * Where pictures go, the next picture repaints what changed or was
	 * lost: nothing there is sent as exact pixels meanwhile.
	 */
	frame->defer = &video->pictured;
	/*
	 * An answer to input goes alone, ahead of the video (SLIM §7: the
	 * interactive stream first): the video's picture waits for the next
	 * frame.
	 */
	bool answer = answer_pending && answers(damage, &video->pictured);
	pictures(video, cand, answer ? 0 : n, fb, frame);
	wl_list_for_each(vs, &video->surfaces, link) {
		/* a deferred picture is still to come; one on another head is that head's */
		vs->fresh = vs->fresh && (answer || !vs->seen);
	}
	track_lossy(video, &active, damage, frame);
	pixman_region32_fini(&active);
	return answer;
}

void video_set_console_codec(struct slim_video *video, const struct slim_wire_codec *h264)
{
	video_codec_console(video->codec, h264);
}

void video_recover(struct slim_video *video, uint8_t stream)
{
	video_codec_recover(video->codec, stream);
}

void video_codec_stats(const struct slim_video *video, uint8_t stream,
		struct video_codec_stream_info *info)
{
	video_codec_info(video->codec, stream, info);
}
