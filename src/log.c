/* log: messages to stderr in the foreground, to syslog/the journal otherwise. */
#include "autoconf.h"

#include "log.h"

#include <errno.h>
#include <event2/event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static bool use_stderr = true;
static bool stderr_is_journal;
static int max_prio = LOG_NOTICE;
static void (*tee_fn)(int prio, const char *msg, void *arg);
static void *tee_arg;

void log_tee(void (*fn)(int prio, const char *msg, void *arg), void *arg)
{
	tee_fn = fn;
	tee_arg = arg;
}

void log_open(bool to_stderr, int verbosity)
{
	use_stderr = to_stderr;
	max_prio = verbosity >= 2 ? LOG_DEBUG : verbosity == 1 ? LOG_INFO : LOG_NOTICE;
	/* Under systemd, stderr may be a journal stream: prefix "<N>" so priorities survive. */
	stderr_is_journal = getenv("JOURNAL_STREAM") != NULL;
	if (!use_stderr)
		openlog("entropyd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void log_close(void)
{
	if (!use_stderr)
		closelog();
}

static void log_v(int prio, const char *fmt, va_list ap, int err) PRINTF_LIKE(2, 0);

static void log_v(int prio, const char *fmt, va_list ap, int err)
{
	char raw[1024], buf[4 * sizeof(raw)];
	int n;

	if (prio > max_prio)
		return;
	n = vsnprintf(raw, sizeof(raw), fmt, ap);
	if (err && n >= 0 && (size_t)n < sizeof(raw))
		snprintf(raw + n, sizeof(raw) - (size_t)n, ": %s", strerror(err));
	/* Messages carry names and errors from outside (an interface's name, a device's,
	 * libpcap's words about them): no byte of them may reach a terminal or the journal
	 * as a control sequence. */
	util_printable(buf, sizeof(buf), raw);
	if (tee_fn)
		tee_fn(prio, buf, tee_arg);
	if (!use_stderr) {
		syslog(prio, "%s", buf);
	} else if (stderr_is_journal) {
		fprintf(stderr, "<%d>%s\n", prio, buf);
	} else {
		static const char *const names[] = {"emerg", "alert", "crit", "error",
						    "warning", "notice", "info", "debug"};
		fprintf(stderr, "entropyd: %s: %s\n", names[prio & 7], buf);
	}
}

void log_msg(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_v(prio, fmt, ap, 0);
	va_end(ap);
}

void log_errno(int prio, const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	log_v(prio, fmt, ap, err);
	va_end(ap);
	errno = err;
}

void log_limited(struct log_ratelimit *rl, int prio, const char *fmt, ...)
{
	uint64_t now = util_mono_ns();
	va_list ap;

	if (rl->window_start_ns == 0 || now - rl->window_start_ns >= rl->interval_s * NS_PER_SEC) {
		if (rl->suppressed)
			log_msg(prio, "(%u similar messages suppressed)", rl->suppressed);
		rl->window_start_ns = now;
		rl->printed = rl->suppressed = 0;
	}
	if (rl->printed >= rl->burst) {
		rl->suppressed++;
		return;
	}
	rl->printed++;
	va_start(ap, fmt);
	log_v(prio, fmt, ap, 0);
	va_end(ap);
}

static void libevent_log_cb(int severity, const char *msg)
{
	int prio = severity == EVENT_LOG_ERR ? LOG_ERR
		   : severity == EVENT_LOG_WARN ? LOG_WARNING
		   : severity == EVENT_LOG_MSG ? LOG_INFO
					       : LOG_DEBUG;
	log_msg(prio, "libevent: %s", msg);
}

void log_hook_libevent(void)
{
	event_set_log_callback(libevent_log_cb);
}
