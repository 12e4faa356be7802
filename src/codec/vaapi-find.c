/*
 * Which render node encodes H.264: libva asked directly, node by node, so
 * that the answer (and why not) is known before any encoder is opened.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <va/va.h>
#include <va/va_drm.h>
#include "h264-encoder.h"

/* libva's messages go nowhere: a node that does not answer is said once, in `why`. */
static void va_quiet(void *context, const char *message)
{
}

static bool has_entrypoint(VADisplay dpy, VAProfile profile)
{
	int max = vaMaxNumEntrypoints(dpy);
	if (max <= 0) {
		return false;
	}
	VAEntrypoint *eps = calloc((size_t)max, sizeof(*eps));
	int n = 0;
	bool found = false;
	if (eps && vaQueryConfigEntrypoints(dpy, profile, eps, &n) == VA_STATUS_SUCCESS) {
		for (int i = 0; i < n && i < max; i++) {
			found |= eps[i] == VAEntrypointEncSlice || eps[i] == VAEntrypointEncSliceLP;
		}
	}
	free(eps);
	return found;
}

static bool encodes_h264(VADisplay dpy)
{
	int max = vaMaxNumProfiles(dpy);
	if (max <= 0) {
		return false;
	}
	VAProfile *profiles = calloc((size_t)max, sizeof(*profiles));
	int n = 0;
	bool found = false;
	if (profiles && vaQueryConfigProfiles(dpy, profiles, &n) == VA_STATUS_SUCCESS) {
		for (int i = 0; i < n && i < max && !found; i++) {
			if (profiles[i] == VAProfileH264ConstrainedBaseline ||
					profiles[i] == VAProfileH264Main || profiles[i] == VAProfileH264High) {
				found = has_entrypoint(dpy, profiles[i]);
			}
		}
	}
	free(profiles);
	return found;
}

/* Whether the node at `path` encodes H.264; else why not, in `why` (static text). */
static bool probe(const char *path, const char **why)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		*why = "cannot open the render node";
		return false;
	}
	bool ok = false;
	VADisplay dpy = vaGetDisplayDRM(fd);
	if (!dpy) {
		*why = "no VA-API display on the render node";
	} else {
		vaSetErrorCallback(dpy, va_quiet, NULL);
		vaSetInfoCallback(dpy, va_quiet, NULL);
		int major, minor;
		if (vaInitialize(dpy, &major, &minor) != VA_STATUS_SUCCESS) {
			*why = "VA-API does not initialise (no driver)";
		} else {
			ok = encodes_h264(dpy);
			if (!ok) {
				*why = "no H.264 encode entrypoint";
			}
			vaTerminate(dpy);
		}
	}
	close(fd);
	return ok;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_render_node(const struct dirent *d)
{
	return strncmp(d->d_name, "renderD", 7) == 0;
}

bool slim_h264_vaapi_find(char *node, size_t node_len, const char **why)
{
	/* "renderD128: no H.264 encode entrypoint": of the last node tried */
	static _Thread_local char reason[128];
	*why = "no render node";
	struct dirent **names = NULL;
	int n = scandir("/dev/dri", &names, is_render_node, by_name);
	bool found = false;
	for (int i = 0; i < n; i++) {
		char path[300];
		snprintf(path, sizeof(path), "/dev/dri/%s", names[i]->d_name);
		const char *not_here = NULL;
		if (!found && probe(path, &not_here)) {
			found = (size_t)snprintf(node, node_len, "%s", path) < node_len;
			*why = found ? "a render node encodes H.264" : "render node path too long";
		} else if (!found) {
			snprintf(reason, sizeof(reason), "%.32s: %s", names[i]->d_name, not_here);
			*why = reason;
		}
		free(names[i]);
	}
	free(names);
	return found;
}
