/*
 * ~/.config/slimland/scale: read at each attach, so that a user's choice
 * follows them to every console. The file is the user's own, read by the
 * user's own compositor: it is bounded, not trusted further than that.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "slim-log.h"
#include "slim-proto.h"
#include "user-scale.h"

static bool config_path(char *path, size_t len)
{
	const char *config = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	int n;
	if (config && config[0] == '/') {
		n = snprintf(path, len, "%s/slimland/scale", config);
	} else if (home && home[0] == '/') {
		n = snprintf(path, len, "%s/.config/slimland/scale", home);
	} else {
		return false;
	}
	return n > 0 && (size_t)n < len;
}

uint32_t slim_user_scale(void)
{
	char path[4096], line[32];
	if (!config_path(path, sizeof(path))) {
		return 0;
	}
	FILE *f = fopen(path, "r");
	if (!f) {
		return 0;
	}
	bool read = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	char *end;
	errno = 0;
	unsigned long v = read ? strtoul(line, &end, 10) : 0;
	if (!read || errno != 0 || end == line || (*end != '\n' && *end != '\0') ||
			v < 1 || v > SLIM_MAX_SCALE) {
		slim_log(SLIM_LOG_ERROR, "%s: not a scale from 1 to %d: the console's is used",
			path, SLIM_MAX_SCALE);
		return 0;
	}
	return (uint32_t)v;
}
