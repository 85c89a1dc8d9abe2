/* log: messages to stderr in the foreground, to syslog/the journal otherwise. */
#ifndef ENTROPYD_LOG_H
#define ENTROPYD_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

#include "util.h"

/* verbosity: 0 = notice and above, 1 = info, 2 = debug. */
void log_open(bool to_stderr, int verbosity);
void log_close(void);

/* log_msg never adds errno; log_errno appends ": strerror(errno)". Neither ever receives raw
 * timings or input data: callers pass counts and names only. */
void log_msg(int prio, const char *fmt, ...) PRINTF_LIKE(2, 3);
void log_errno(int prio, const char *fmt, ...) PRINTF_LIKE(2, 3);

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* Until called again with NULL, every message logged is also handed to fn, made printable,
 * without the prefix: a reload collects what it said for the one who asked for it. */
void log_tee(void (*fn)(int prio, const char *msg, void *arg), void *arg);

/* A rate limit for one kind of warning: at most `burst` messages per `interval_s` seconds;
 * when the window reopens, one line says how many were suppressed. Zero-initialise, then set
 * interval_s and burst (LOG_RATELIMIT_INIT does both). */
struct log_ratelimit {
	unsigned interval_s, burst;
	uint64_t window_start_ns;
	unsigned printed, suppressed;
};
#define LOG_RATELIMIT_INIT {.interval_s = 60, .burst = 5}

void log_limited(struct log_ratelimit *rl, int prio, const char *fmt, ...) PRINTF_LIKE(3, 4);

/* Route libevent's own messages into our log. */
void log_hook_libevent(void);

#endif
