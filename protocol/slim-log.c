#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "slim-log.h"

static enum slim_log_level log_verbosity = SLIM_LOG_INFO;
static slim_log_handler log_handler;

void slim_log_init(enum slim_log_level verbosity, slim_log_handler handler)
{
	log_verbosity = verbosity;
	log_handler = handler;
}

void slim_log(enum slim_log_level level, const char *fmt, ...)
{
	if (level > log_verbosity) {
		return;
	}
	va_list args;
	va_start(args, fmt);
	if (log_handler) {
		log_handler(level, fmt, args);
	} else {
		static const char *const tags[] = { "", "[ERROR] ", "[INFO] ", "[DEBUG] " };
		slim_log_line(tags[level], fmt, args);
	}
	va_end(args);
}

void slim_log_line(const char *prefix, const char *fmt, va_list args)
{
	char line[4096];
	int n = snprintf(line, sizeof(line) - 1, "%s", prefix);
	if (n < 0) {
		return;
	}
	/* one byte is kept for the '\n' */
	size_t len = (size_t)n < sizeof(line) - 2 ? (size_t)n : sizeof(line) - 2;
	size_t room = sizeof(line) - 1 - len; /* for vsnprintf: its text and a NUL */
	int m = vsnprintf(line + len, room, fmt, args);
	if (m > 0) {
		len += (size_t)m < room ? (size_t)m : room - 1;
	}
	line[len++] = '\n';
	fflush(stderr); /* what stdio still holds goes first */
	ssize_t w = write(STDERR_FILENO, line, len);
	(void)w;
}

bool slim_ratelimit(struct slim_ratelimit *rl, uint64_t now_us)
{
	if (now_us - rl->window_us >= 1000000) {
		if (rl->suppressed > 0) {
			slim_log(SLIM_LOG_ERROR, "(%u similar messages suppressed)", rl->suppressed);
		}
		rl->window_us = now_us;
		rl->used = 0;
		rl->suppressed = 0;
	}
	if (rl->used < rl->burst) {
		rl->used++;
		return true;
	}
	rl->suppressed++;
	return false;
}

/* libavutil's AV_LOG_ERROR, without its headers here */
#define AV_LOG_ERROR_LEVEL 16

void slim_log_av(void *avcl, int level, const char *fmt, va_list args)
{
	static struct slim_ratelimit limit = SLIM_RATELIMIT_INIT(5);
	if (level > AV_LOG_ERROR_LEVEL || !slim_ratelimit(&limit, slim_now_us())) {
		return;
	}
	char line[256];
	vsnprintf(line, sizeof(line), fmt, args);
	line[strcspn(line, "\n")] = '\0';
	slim_log(SLIM_LOG_ERROR, "h264: libavcodec: %s", line);
}
