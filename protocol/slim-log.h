/*
 * Logging shared by both ends of the wire, with a rate limit for what the
 * network can provoke: a flood of bad datagrams must not become a flood of
 * log lines. The compositor routes this into wlr_log with slim_log_set_handler.
 */
#ifndef SLIM_LOG_H
#define SLIM_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include "slim-clock.h" /* slim_ratelimit's time is slim_now_us's */

enum slim_log_level {
	SLIM_LOG_ERROR = 1,
	SLIM_LOG_INFO = 2,
	SLIM_LOG_DEBUG = 3,
};

typedef void (*slim_log_handler)(enum slim_log_level level, const char *fmt, va_list args);

void slim_log_init(enum slim_log_level verbosity, slim_log_handler handler);
void slim_log(enum slim_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * Writes `prefix` and the message as one line to stderr in a single
 * write(2), cut to 4 KiB: the daemons a program starts share its stderr,
 * and a line written in pieces can be split by theirs (which broke the
 * tests' reading of the compositor's lines).
 */
void slim_log_line(const char *prefix, const char *fmt, va_list args)
	__attribute__((format(printf, 2, 0)));

/*
 * A libav* log callback (av_log_set_callback): a hostile stream makes
 * libavcodec talk, so its errors go to our log at a limited rate and
 * the rest nowhere. `level` is libavutil's (AV_LOG_ERROR is 16).
 */
void slim_log_av(void *avcl, int level, const char *fmt, va_list args)
	__attribute__((format(printf, 3, 0)));

/* At most `burst` messages per second; the rest are counted and reported later. */
struct slim_ratelimit {
	uint64_t window_us;
	uint32_t burst;
	uint32_t used;
	uint32_t suppressed;
};

#define SLIM_RATELIMIT_INIT(n) { .burst = (n) }

/* Returns whether a message may be logged now; reports what was suppressed. */
bool slim_ratelimit(struct slim_ratelimit *rl, uint64_t now_us);

#endif
