/* notify: the service manager protocol (sd_notify), or nothing when built without it. */
#include "autoconf.h"

#include "notify.h"

#include <stdarg.h>
#include <stdio.h>

#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

static void notify_send(const char *msg)
{
#ifdef HAVE_LIBSYSTEMD
	sd_notify(0, msg);
#else
	(void)msg;
#endif
}

void notify_ready(void)
{
	notify_send("READY=1");
}

void notify_reloading(void)
{
	char msg[64];

	/* MONOTONIC_USEC lets newer managers (Type=notify-reload) match the reload. */
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)(mono_ns() / 1000));
	notify_send(msg);
}

void notify_stopping(void)
{
	notify_send("STOPPING=1");
}

void notify_watchdog(void)
{
	notify_send("WATCHDOG=1");
}

void notify_status(const char *fmt, ...)
{
	char msg[256] = "STATUS=";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg + 7, sizeof(msg) - 7, fmt, ap);
	va_end(ap);
	notify_send(msg);
}

uint64_t notify_watchdog_usec(void)
{
#ifdef HAVE_LIBSYSTEMD
	uint64_t usec = 0;

	if (sd_watchdog_enabled(0, &usec) > 0)
		return usec;
#endif
	return 0;
}
