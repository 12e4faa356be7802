/*
 * Finds the render node that decodes H.264. Each node is opened through
 * libavutil (which keeps the VA display) and asked with libva whether an
 * H.264 profile has a decoding entrypoint; a GPU without one is of no use
 * even if VA-API opens on it.
 */
#include <dirent.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vaapi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vaapi-device.h"

static bool decodes(VADisplay dpy, VAProfile profile)
{
	int max = vaMaxNumEntrypoints(dpy);
	VAEntrypoint *eps = max > 0 ? calloc((size_t)max, sizeof(*eps)) : NULL;
	int n = 0;
	bool found = false;
	if (eps && vaQueryConfigEntrypoints(dpy, profile, eps, &n) == VA_STATUS_SUCCESS) {
		for (int i = 0; i < n && i < max; i++) {
			found |= eps[i] == VAEntrypointVLD;
		}
	}
	free(eps);
	return found;
}

static int is_render_node(const struct dirent *d)
{
	return strncmp(d->d_name, "renderD", 7) == 0;
}

AVBufferRef *slim_vaapi_h264_decode_device(void)
{
	struct dirent **names = NULL;
	int n = scandir("/dev/dri", &names, is_render_node, alphasort);
	AVBufferRef *found = NULL;
	for (int i = 0; i < n; i++) {
		char path[300];
		snprintf(path, sizeof(path), "/dev/dri/%s", names[i]->d_name);
		AVBufferRef *dev = NULL;
		if (!found && av_hwdevice_ctx_create(&dev, AV_HWDEVICE_TYPE_VAAPI, path, NULL, 0) == 0) {
			AVVAAPIDeviceContext *va = ((AVHWDeviceContext *)dev->data)->hwctx;
			if (decodes(va->display, VAProfileH264High) || decodes(va->display, VAProfileH264Main)) {
				found = dev;
			} else {
				av_buffer_unref(&dev);
			}
		}
		free(names[i]);
	}
	free(names);
	return found;
}
