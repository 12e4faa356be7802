#define _GNU_SOURCE /* struct timespec with -std=c11 */
#include <drm_fourcc.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>
#include <xf86drmMode.h>
#include "drm-damage.h"
#include "drm.h"
#include "slim-log.h"

#define MAX_CARDS 16
#define CURSOR_DEFAULT 64

struct slim_drm_buffer {
	uint32_t handle, fb_id, pitch;
	uint64_t size;
	uint8_t *map; /* write-only: possibly write-combined, never read */
};

struct slim_drm_backend {
	struct slim_console_backend base;
	struct slim_seat *seat;
	const struct slim_drm_listener *listener;
	void *listener_data;

	int fd, device_id;
	char path[32];
	uint32_t connector_id, crtc_id;
	drmModeModeInfo mode;
	drmModeCrtc *saved_crtc; /* what was on screen before: the text console */
	uint32_t width, height;

	struct slim_drm_buffer bufs[2];
	struct slim_drm_damage damage;
	const struct slim_fb *fb; /* the core's shadow framebuffer, once presented */

	bool active;       /* the seat is ours and the CRTC is set */
	bool gone;         /* the device failed for good */
	bool flip_pending; /* buffers are not touched until its event */
	/* Flip events queued before a VT switch carry an older generation. */
	uintptr_t flip_generation;

	/* Hardware cursor: two buffers, so a new image never tears. */
	struct slim_drm_buffer cursor_bufs[2];
	int cursor_front;
	uint32_t cursor_size;
	bool cursor_ok;       /* the cursor plane works on this device */
	bool cursor_shown;    /* an image is set on the plane */
	bool cursor_visible;  /* the server wants it shown */
	uint32_t cursor_w, cursor_h, hot_x, hot_y;
	uint32_t *cursor_image; /* SLIM_CURSOR_MAX², what is on the plane */
	double pointer_x, pointer_y; /* the hotspot on the screen */

	struct slim_ratelimit log_limit;
};

static const struct slim_console_backend_impl drm_impl;

static struct slim_drm_backend *drm_from(struct slim_console_backend *b)
{
	return (struct slim_drm_backend *)b;
}

bool slim_drm_device_present(void)
{
	for (int i = 0; i < MAX_CARDS; i++) {
		char path[32];
		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		if (access(path, F_OK) == 0) {
			return true;
		}
	}
	return false;
}

bool slim_drm_backend_is(const struct slim_console_backend *b)
{
	return b && b->impl == &drm_impl;
}

/* -- buffers */

static bool buffer_create(struct slim_drm_backend *drm, struct slim_drm_buffer *buf,
		uint32_t width, uint32_t height, uint32_t format)
{
	*buf = (struct slim_drm_buffer){ 0 };
	if (drmModeCreateDumbBuffer(drm->fd, width, height, 32, 0, &buf->handle,
			&buf->pitch, &buf->size) != 0) {
		return false;
	}
	uint32_t handles[4] = { buf->handle }, pitches[4] = { buf->pitch }, offsets[4] = { 0 };
	uint64_t offset;
	if (drmModeAddFB2(drm->fd, width, height, format, handles, pitches, offsets,
			&buf->fb_id, 0) != 0 ||
			drmModeMapDumbBuffer(drm->fd, buf->handle, &offset) != 0) {
		goto fail;
	}
	buf->map = mmap(NULL, buf->size, PROT_WRITE, MAP_SHARED, drm->fd, (off_t)offset);
	if (buf->map == MAP_FAILED) {
		buf->map = NULL;
		goto fail;
	}
	/* black: what the shadow framebuffer holds before the server's first frame */
	memset(buf->map, 0, buf->size);
	return true;
fail:
	if (buf->fb_id) {
		drmModeRmFB(drm->fd, buf->fb_id);
	}
	drmModeDestroyDumbBuffer(drm->fd, buf->handle);
	*buf = (struct slim_drm_buffer){ 0 };
	return false;
}

static void buffer_destroy(struct slim_drm_backend *drm, struct slim_drm_buffer *buf)
{
	if (buf->map) {
		munmap(buf->map, buf->size);
	}
	if (buf->fb_id) {
		drmModeRmFB(drm->fd, buf->fb_id);
	}
	if (buf->handle) {
		drmModeDestroyDumbBuffer(drm->fd, buf->handle);
	}
	*buf = (struct slim_drm_buffer){ 0 };
}

/* Row by row from the shadow: the scanout buffer is only ever written. */
static void copy_box(const struct slim_drm_buffer *buf, const struct slim_fb *fb,
		const pixman_box32_t *box)
{
	size_t bytes = (size_t)(box->x2 - box->x1) * 4;
	for (int32_t y = box->y1; y < box->y2; y++) {
		memcpy(buf->map + (size_t)y * buf->pitch + (size_t)box->x1 * 4,
			fb->px + (size_t)y * fb->stride + box->x1, bytes);
	}
}

static void copy_region(const struct slim_drm_buffer *buf, const struct slim_fb *fb,
		const pixman_region32_t *region)
{
	int n;
	const pixman_box32_t *boxes = pixman_region32_rectangles(
		(pixman_region32_t *)region, &n);
	for (int i = 0; i < n; i++) {
		copy_box(buf, fb, &boxes[i]);
	}
}

/* -- failures */

static void device_lost(struct slim_drm_backend *drm, const char *what, int err)
{
	if (drm->gone) {
		return;
	}
	drm->gone = true;
	drm->active = false;
	char why[160];
	snprintf(why, sizeof(why), "%s: %s: %s", drm->path, what, strerror(err));
	if (drm->listener && drm->listener->lost) {
		drm->listener->lost(drm->listener_data, why);
	}
}

/* Errors that say the device itself is gone, not that this call was refused. */
static bool fatal_errno(int err)
{
	return err == ENODEV || err == EIO || err == ENXIO;
}

/* -- scanout */

/* Draws what the back buffer lacks and shows it with a synchronous modeset. */
static bool set_crtc(struct slim_drm_backend *drm)
{
	struct slim_drm_buffer *buf = &drm->bufs[drm->damage.back];
	if (drm->fb) {
		copy_region(buf, drm->fb, slim_drm_damage_back(&drm->damage));
		slim_drm_damage_drawn(&drm->damage);
	}
	if (drmModeSetCrtc(drm->fd, drm->crtc_id, buf->fb_id, 0, 0, &drm->connector_id, 1,
			&drm->mode) != 0) {
		return false;
	}
	slim_drm_damage_flipped(&drm->damage);
	return true;
}

/*
 * Brings the back buffer up to date and flips to it, unless a flip is
 * still pending: then the damage waits in both buffers' stale regions and
 * the flip event calls this again, so that any number of frames between
 * two vblanks cost one copy and one flip.
 */
static void update(struct slim_drm_backend *drm)
{
	if (!drm->active || drm->gone || drm->flip_pending || !drm->fb ||
			!slim_drm_damage_back_stale(&drm->damage)) {
		return;
	}
	struct slim_drm_buffer *buf = &drm->bufs[drm->damage.back];
	copy_region(buf, drm->fb, slim_drm_damage_back(&drm->damage));
	slim_drm_damage_drawn(&drm->damage);
	if (drmModePageFlip(drm->fd, drm->crtc_id, buf->fb_id, DRM_MODE_PAGE_FLIP_EVENT,
			(void *)drm->flip_generation) == 0) {
		drm->flip_pending = true;
		slim_drm_damage_flipped(&drm->damage);
		return;
	}
	int err = errno;
	if (fatal_errno(err)) {
		device_lost(drm, "page flip", err);
		return;
	}
	if (err == EACCES || err == EPERM) {
		/* no longer DRM master: the seat is going away; its enable redraws all */
		return;
	}
	/*
	 * A driver that refuses the flip (EINVAL, EBUSY) may still take a
	 * modeset: slower, but the picture gets there.
	 */
	if (slim_ratelimit(&drm->log_limit, slim_now_us())) {
		slim_log(SLIM_LOG_ERROR, "drm: page flip failed (%s), setting the CRTC instead",
			strerror(err));
	}
	if (drmModeSetCrtc(drm->fd, drm->crtc_id, buf->fb_id, 0, 0, &drm->connector_id, 1,
			&drm->mode) == 0) {
		slim_drm_damage_flipped(&drm->damage);
	} else if (fatal_errno(errno)) {
		device_lost(drm, "set CRTC", errno);
	}
}

static void drm_dispatch(struct slim_console_backend *b)
{
	struct slim_drm_backend *drm = drm_from(b);
	if (drm->gone) {
		return;
	}
	/*
	 * The events are read here rather than through drmHandleEvent, whose
	 * handler would need the backend: the flip's user data is the
	 * generation it was queued in, and a flip queued before a VT switch
	 * must not end the wait for one queued after it.
	 */
	char buf[1024];
	ssize_t len = read(drm->fd, buf, sizeof(buf));
	if (len < 0) {
		if (errno != EAGAIN && errno != EINTR && fatal_errno(errno)) {
			device_lost(drm, "reading events", errno);
		}
		return;
	}
	for (ssize_t i = 0; i + (ssize_t)sizeof(struct drm_event) <= len;) {
		struct drm_event ev;
		memcpy(&ev, buf + i, sizeof(ev));
		if (ev.length < sizeof(ev) || i + (ssize_t)ev.length > len) {
			break;
		}
		if (ev.type == DRM_EVENT_FLIP_COMPLETE && ev.length >= sizeof(struct drm_event_vblank)) {
			struct drm_event_vblank vb;
			memcpy(&vb, buf + i, sizeof(vb));
			if ((uintptr_t)vb.user_data == drm->flip_generation) {
				drm->flip_pending = false;
			}
		}
		i += ev.length;
	}
	update(drm);
}

static int drm_fd(struct slim_console_backend *b)
{
	struct slim_drm_backend *drm = drm_from(b);
	return drm->gone ? -1 : drm->fd;
}

/* -- cursor */

static void cursor_move(struct slim_drm_backend *drm)
{
	if (!drm->active || !drm->cursor_ok || !drm->cursor_shown) {
		return;
	}
	int x = (int)drm->pointer_x - (int)drm->hot_x;
	int y = (int)drm->pointer_y - (int)drm->hot_y;
	if (drmModeMoveCursor(drm->fd, drm->crtc_id, x, y) != 0 && fatal_errno(errno)) {
		device_lost(drm, "move cursor", errno);
	}
}

/* Puts the kept image on the plane (into the buffer not on screen) or hides it. */
static void cursor_show(struct slim_drm_backend *drm)
{
	if (!drm->active || !drm->cursor_ok) {
		return;
	}
	if (!drm->cursor_visible || drm->cursor_w == 0) {
		if (drm->cursor_shown) {
			drmModeSetCursor(drm->fd, drm->crtc_id, 0, 0, 0);
			drm->cursor_shown = false;
		}
		return;
	}
	int next = drm->cursor_front ^ 1;
	struct slim_drm_buffer *buf = &drm->cursor_bufs[next];
	/* Larger images are cut: the hotspot is at the top left of every theme's. */
	uint32_t w = drm->cursor_w < drm->cursor_size ? drm->cursor_w : drm->cursor_size;
	uint32_t h = drm->cursor_h < drm->cursor_size ? drm->cursor_h : drm->cursor_size;
	/* whole rows, transparent past the image: one pass of writes, no reads */
	uint32_t row[SLIM_CURSOR_MAX];
	for (uint32_t y = 0; y < drm->cursor_size; y++) {
		memset(row, 0, drm->cursor_size * 4);
		if (y < h) {
			memcpy(row, drm->cursor_image + (size_t)y * drm->cursor_w, w * 4);
		}
		memcpy(buf->map + (size_t)y * buf->pitch, row, drm->cursor_size * 4);
	}
	if (drmModeSetCursor2(drm->fd, drm->crtc_id, buf->handle, drm->cursor_size,
			drm->cursor_size, (int32_t)drm->hot_x, (int32_t)drm->hot_y) != 0 &&
			drmModeSetCursor(drm->fd, drm->crtc_id, buf->handle, drm->cursor_size,
			drm->cursor_size) != 0) {
		if (fatal_errno(errno)) {
			device_lost(drm, "set cursor", errno);
			return;
		}
		if (errno != EACCES && errno != EPERM) {
			slim_log(SLIM_LOG_ERROR, "drm: the cursor plane refuses the pointer (%s); "
				"no pointer shown", strerror(errno));
			drm->cursor_ok = false;
		}
		return;
	}
	drm->cursor_front = next;
	drm->cursor_shown = true;
	cursor_move(drm);
}

static void drm_cursor(struct slim_console_backend *b, const struct slim_console_cursor *c)
{
	struct slim_drm_backend *drm = drm_from(b);
	bool changed = c->visible != drm->cursor_visible;
	if (c->pixels && c->w > 0 && c->h > 0 && c->w <= SLIM_CURSOR_MAX &&
			c->h <= SLIM_CURSOR_MAX) {
		size_t bytes = (size_t)c->w * c->h * 4;
		if (c->w != drm->cursor_w || c->h != drm->cursor_h || c->hot_x != drm->hot_x ||
				c->hot_y != drm->hot_y || memcmp(c->pixels, drm->cursor_image, bytes) != 0) {
			memcpy(drm->cursor_image, c->pixels, bytes);
			drm->cursor_w = c->w;
			drm->cursor_h = c->h;
			drm->hot_x = c->hot_x;
			drm->hot_y = c->hot_y;
			changed = true;
		}
	}
	drm->cursor_visible = c->visible;
	drm->pointer_x = c->x;
	drm->pointer_y = c->y;
	slim_log(SLIM_LOG_DEBUG, "drm: cursor at %d,%d (server)%s", c->x, c->y,
		c->visible ? "" : " hidden");
	if (changed) {
		cursor_show(drm);
	} else {
		cursor_move(drm);
	}
}

void slim_drm_backend_move_pointer(struct slim_console_backend *b, double x, double y,
		bool relative)
{
	struct slim_drm_backend *drm = drm_from(b);
	if (relative) {
		x += drm->pointer_x;
		y += drm->pointer_y;
	}
	/* the server clamps the same way: the hotspot stays on the screen */
	double max_x = drm->width - 1, max_y = drm->height - 1;
	drm->pointer_x = x < 0 ? 0 : x > max_x ? max_x : x;
	drm->pointer_y = y < 0 ? 0 : y > max_y ? max_y : y;
	slim_log(SLIM_LOG_DEBUG, "drm: cursor at %d,%d (local)", (int)drm->pointer_x,
		(int)drm->pointer_y);
	cursor_move(drm);
}

/* -- the seat */

static void seat_disable(void *data)
{
	struct slim_drm_backend *drm = data;
	/*
	 * The seat manager takes DRM master away after this returns: stop
	 * touching the device. Frames keep arriving and keep the shadow
	 * framebuffer current; they are only not shown.
	 */
	drm->active = false;
}

static void seat_enable(void *data)
{
	struct slim_drm_backend *drm = data;
	if (drm->gone) {
		return;
	}
	/* Whatever was on screen meanwhile, neither buffer holds our picture. */
	drm->flip_pending = false;
	drm->flip_generation++;
	drm->cursor_shown = false;
	slim_drm_damage_add_all(&drm->damage);
	drm->active = true;
	if (!set_crtc(drm)) {
		if (fatal_errno(errno)) {
			device_lost(drm, "set CRTC", errno);
			return;
		}
		slim_log(SLIM_LOG_ERROR, "drm: cannot set the mode again (%s); "
			"waiting for the next switch", strerror(errno));
		drm->active = false;
		return;
	}
	cursor_show(drm);
	if (drm->listener && drm->listener->repaint) {
		drm->listener->repaint(drm->listener_data);
	}
}

static const struct slim_seat_listener seat_listener = {
	.enable = seat_enable,
	.disable = seat_disable,
};

/* -- choosing a display */

static bool mode_fits(const drmModeModeInfo *m)
{
	return m->hdisplay > 0 && m->vdisplay > 0 && m->hdisplay <= SLIM_MAX_DIM &&
		m->vdisplay <= SLIM_MAX_DIM;
}

/* The asked size if the display has it, else its preferred mode, else its first. */
static const drmModeModeInfo *pick_mode(const drmModeConnector *conn, uint32_t width,
		uint32_t height)
{
	const drmModeModeInfo *preferred = NULL, *first = NULL;
	for (int i = 0; i < conn->count_modes; i++) {
		const drmModeModeInfo *m = &conn->modes[i];
		if (!mode_fits(m)) {
			continue;
		}
		if (width && m->hdisplay == width && m->vdisplay == height) {
			return m;
		}
		if (!preferred && (m->type & DRM_MODE_TYPE_PREFERRED)) {
			preferred = m;
		}
		if (!first) {
			first = m;
		}
	}
	if (width && (preferred || first)) {
		slim_log(SLIM_LOG_INFO, "drm: the display has no %ux%u mode; using its %s mode",
			width, height, preferred ? "preferred" : "first");
	}
	return preferred ? preferred : first;
}

/* A CRTC for the connector: the one its encoder drives now, else any free one. */
static bool pick_crtc(struct slim_drm_backend *drm, drmModeRes *res, drmModeConnector *conn)
{
	if (conn->encoder_id) {
		drmModeEncoder *enc = drmModeGetEncoder(drm->fd, conn->encoder_id);
		if (enc && enc->crtc_id) {
			drm->crtc_id = enc->crtc_id;
			drmModeFreeEncoder(enc);
			return true;
		}
		drmModeFreeEncoder(enc);
	}
	for (int i = 0; i < conn->count_encoders; i++) {
		drmModeEncoder *enc = drmModeGetEncoder(drm->fd, conn->encoders[i]);
		if (!enc) {
			continue;
		}
		for (int j = 0; j < res->count_crtcs; j++) {
			if (enc->possible_crtcs & (1u << j)) {
				drm->crtc_id = res->crtcs[j];
				drmModeFreeEncoder(enc);
				return true;
			}
		}
		drmModeFreeEncoder(enc);
	}
	return false;
}

/*
 * Whether the open device drives a connected display we can use; fills
 * in the connector, mode and CRTC. `why` says what was missing.
 */
static bool pick_display(struct slim_drm_backend *drm, uint32_t width, uint32_t height,
		char *why, size_t why_len)
{
	uint64_t dumb = 0;
	if (drmGetCap(drm->fd, DRM_CAP_DUMB_BUFFER, &dumb) != 0 || !dumb) {
		snprintf(why, why_len, "no dumb buffers");
		return false;
	}
	drmModeRes *res = drmModeGetResources(drm->fd);
	if (!res) {
		snprintf(why, why_len, "not a KMS device (%s)", strerror(errno));
		return false;
	}
	bool found = false, connected = false;
	for (int i = 0; i < res->count_connectors && !found; i++) {
		drmModeConnector *conn = drmModeGetConnector(drm->fd, res->connectors[i]);
		if (!conn) {
			continue;
		}
		if (conn->connection == DRM_MODE_CONNECTED && conn->count_modes > 0) {
			connected = true;
			const drmModeModeInfo *mode = pick_mode(conn, width, height);
			if (mode && pick_crtc(drm, res, conn)) {
				drm->connector_id = conn->connector_id;
				drm->mode = *mode;
				found = true;
			}
		}
		drmModeFreeConnector(conn);
	}
	drmModeFreeResources(res);
	if (!found) {
		snprintf(why, why_len, connected ? "no usable mode or CRTC for the display" :
			"no display connected");
	}
	return found;
}

static void close_device(struct slim_drm_backend *drm)
{
	if (drm->fd >= 0) {
		slim_seat_close_device(drm->seat, drm->device_id);
		close(drm->fd);
		drm->fd = -1;
	}
}

/* The first card with a connected display; `err` says why none would do. */
static bool open_display(struct slim_drm_backend *drm, uint32_t width, uint32_t height,
		char *err, size_t err_len)
{
	char why[256] = "no DRM device (/dev/dri/card*)";
	for (int i = 0; i < MAX_CARDS; i++) {
		char path[32];
		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		if (access(path, F_OK) != 0) {
			continue;
		}
		drm->fd = slim_seat_open_device(drm->seat, path, &drm->device_id);
		if (drm->fd < 0) {
			snprintf(why, sizeof(why), "%s: cannot open it: %s", path, strerror(errno));
			continue;
		}
		snprintf(drm->path, sizeof(drm->path), "%s", path);
		char card_why[128];
		if (pick_display(drm, width, height, card_why, sizeof(card_why))) {
			return true;
		}
		snprintf(why, sizeof(why), "%s: %s", path, card_why);
		close_device(drm);
	}
	snprintf(err, err_len, "%s", why);
	return false;
}

static bool setup_cursor(struct slim_drm_backend *drm)
{
	uint64_t size = CURSOR_DEFAULT;
	if (drmGetCap(drm->fd, DRM_CAP_CURSOR_WIDTH, &size) != 0 || size == 0) {
		size = CURSOR_DEFAULT;
	}
	drm->cursor_size = size > SLIM_CURSOR_MAX ? SLIM_CURSOR_MAX : (uint32_t)size;
	drm->cursor_image = calloc((size_t)SLIM_CURSOR_MAX * SLIM_CURSOR_MAX, 4);
	if (!drm->cursor_image) {
		return false;
	}
	for (int i = 0; i < 2; i++) {
		if (!buffer_create(drm, &drm->cursor_bufs[i], drm->cursor_size, drm->cursor_size,
				DRM_FORMAT_ARGB8888)) {
			slim_log(SLIM_LOG_ERROR, "drm: no cursor buffer (%s); no pointer shown",
				strerror(errno));
			return true;
		}
	}
	drm->cursor_ok = true;
	return true;
}

struct slim_console_backend *slim_drm_backend_create(struct slim_seat *seat,
		uint32_t width, uint32_t height, const struct slim_drm_listener *listener,
		void *data, char *err, size_t err_len)
{
	struct slim_drm_backend *drm = calloc(1, sizeof(*drm));
	if (!drm) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	drm->base.impl = &drm_impl;
	drm->seat = seat;
	drm->listener = listener;
	drm->listener_data = data;
	drm->fd = -1;
	drm->log_limit = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	if (!open_display(drm, width, height, err, err_len)) {
		free(drm);
		return NULL;
	}
	drm->width = drm->mode.hdisplay;
	drm->height = drm->mode.vdisplay;
	slim_drm_damage_init(&drm->damage, drm->width, drm->height);
	drm->saved_crtc = drmModeGetCrtc(drm->fd, drm->crtc_id);
	for (int i = 0; i < 2; i++) {
		if (!buffer_create(drm, &drm->bufs[i], drm->width, drm->height,
				DRM_FORMAT_XRGB8888)) {
			snprintf(err, err_len, "%s: cannot create a %ux%u scanout buffer: %s",
				drm->path, drm->width, drm->height, strerror(errno));
			goto fail;
		}
	}
	if (!setup_cursor(drm)) {
		snprintf(err, err_len, "out of memory");
		goto fail;
	}
	drm->active = true;
	if (!set_crtc(drm)) {
		snprintf(err, err_len, "%s: cannot set mode %ux%u@%u: %s", drm->path, drm->width,
			drm->height, drm->mode.vrefresh, strerror(errno));
		drm->active = false;
		goto fail;
	}
	if (!slim_seat_add_listener(seat, &seat_listener, drm)) {
		snprintf(err, err_len, "too many seat listeners");
		goto fail;
	}
	slim_log(SLIM_LOG_INFO, "drm: %s, %ux%u@%u on connector %u, CRTC %u", drm->path,
		drm->width, drm->height, drm->mode.vrefresh, drm->connector_id, drm->crtc_id);
	return &drm->base;
fail:
	drm->base.impl->destroy(&drm->base);
	return NULL;
}

void slim_drm_backend_size(const struct slim_console_backend *b, uint32_t *width,
		uint32_t *height)
{
	const struct slim_drm_backend *drm = (const struct slim_drm_backend *)b;
	*width = drm->width;
	*height = drm->height;
}

/* -- the backend interface */

static bool drm_init(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	struct slim_drm_backend *drm = drm_from(b);
	/* the screen is the mode's size: the program asks the core for exactly that */
	return width == drm->width && height == drm->height;
}

static void drm_present(struct slim_console_backend *b, const struct slim_fb *fb,
		const struct slim_rect *damage, size_t n)
{
	struct slim_drm_backend *drm = drm_from(b);
	if (fb->width != drm->width || fb->height != drm->height) {
		return;
	}
	drm->fb = fb;
	slim_drm_damage_add(&drm->damage, damage, n);
	update(drm);
}

static bool drm_resize(struct slim_console_backend *b, uint32_t width, uint32_t height)
{
	/* a display's size is its mode's; nothing else fits on it */
	struct slim_drm_backend *drm = drm_from(b);
	return width == drm->width && height == drm->height;
}

static void drm_destroy(struct slim_console_backend *b)
{
	struct slim_drm_backend *drm = drm_from(b);
	slim_seat_remove_listener(drm->seat, drm);
	if (drm->fd >= 0 && drm->active && !drm->gone) {
		drmModeSetCursor(drm->fd, drm->crtc_id, 0, 0, 0);
		/* give the screen back to the text console it came from */
		if (drm->saved_crtc && drm->saved_crtc->mode_valid) {
			drmModeSetCrtc(drm->fd, drm->saved_crtc->crtc_id, drm->saved_crtc->buffer_id,
				drm->saved_crtc->x, drm->saved_crtc->y, &drm->connector_id, 1,
				&drm->saved_crtc->mode);
		}
	}
	drmModeFreeCrtc(drm->saved_crtc);
	if (drm->fd >= 0) {
		for (int i = 0; i < 2; i++) {
			buffer_destroy(drm, &drm->bufs[i]);
			buffer_destroy(drm, &drm->cursor_bufs[i]);
		}
	}
	close_device(drm);
	if (drm->width) {
		slim_drm_damage_finish(&drm->damage);
	}
	free(drm->cursor_image);
	free(drm);
}

static const struct slim_console_backend_impl drm_impl = {
	.name = "drm",
	.init = drm_init,
	.present = drm_present,
	.resize = drm_resize,
	.destroy = drm_destroy,
	.cursor = drm_cursor,
	.fd = drm_fd,
	.dispatch = drm_dispatch,
};

/* -- --bench-present */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool slim_drm_backend_bench(struct slim_console_backend *b, FILE *out)
{
	struct slim_drm_backend *drm = drm_from(b);
	struct slim_fb fb = { .width = drm->width, .height = drm->height, .stride = drm->width };
	fb.px = malloc((size_t)fb.width * fb.height * 4);
	if (!fb.px) {
		return false;
	}
	for (size_t i = 0; i < (size_t)fb.width * fb.height; i++) {
		fb.px[i] = 0xff000000u | (uint32_t)(i * 2654435761u >> 8);
	}
	/* into the buffer not on screen, as present() does between flips */
	const struct slim_drm_buffer *buf = &drm->bufs[drm->damage.back];
	static const uint32_t sides[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512 };
	/*
	 * cost = startup + pixels * per_pixel by least squares weighted by
	 * 1/cost^2, as bench-codec fits the commands' costs: small damages
	 * (the startup) count as much as large ones (the per-pixel cost).
	 */
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
	int n = 0;
	for (size_t s = 0; s < sizeof(sides) / sizeof(sides[0]); s++) {
		uint32_t side = sides[s];
		if (side > fb.width || side > fb.height) {
			break;
		}
		/* about 20 MB copied per round, at least 20 copies: long enough for the clock */
		uint64_t reps = 20u * 1000 * 1000 / ((uint64_t)side * side * 4);
		reps = reps < 20 ? 20 : reps > 100000 ? 100000 : reps;
		uint64_t best = UINT64_MAX;
		for (int round = 0; round < 5; round++) {
			uint64_t t0 = now_ns();
			for (uint64_t r = 0; r < reps; r++) {
				/* a different place each time, as damage comes */
				int32_t x = (int32_t)((r * 97u) % (fb.width - side + 1));
				int32_t y = (int32_t)((r * 61u) % (fb.height - side + 1));
				pixman_box32_t box = { x, y, x + (int32_t)side, y + (int32_t)side };
				copy_box(buf, &fb, &box);
			}
			uint64_t t = now_ns() - t0;
			best = t < best ? t : best;
		}
		double px = (double)side * side, ns = (double)best / (double)reps;
		double w = 1 / (ns > 1 ? ns * ns : 1);
		sw += w;
		sx += w * px;
		sy += w * ns;
		sxx += w * px * px;
		sxy += w * px * ns;
		n++;
		slim_log(SLIM_LOG_DEBUG, "bench: %ux%u: %.1f ns", side, side, ns);
	}
	free(fb.px);
	double det = sw * sxx - sx * sx;
	if (n < 2 || det == 0) {
		return false;
	}
	double per_px = (sw * sxy - sx * sy) / det;
	double startup = (sy - per_px * sx) / sw;
	fprintf(out, "present %.1f %.3f\n", startup < 0 ? 0 : startup, per_px);
	fflush(out);
	return true;
}
