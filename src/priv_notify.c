/* priv_notify: the service manager protocol (sd_notify), or nothing when built without it. In
 * the collector, every message goes through the privileged process, the service's main
 * process, which sends it on (NotifyAccess=main). */
#include "autoconf.h"

#include "priv_notify.h"

#include <stdarg.h>
#include <stdio.h>

#include "priv.h"
#include "priv_ops.h"

#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

static void notify(enum priv_notify what, const char *text)
{
	if (priv_active())
		priv_service_notify(what, text);
	else
		priv_ops_notify(what, text);
}

void priv_notify_ready(void)
{
	notify(PRIV_N_READY, NULL);
}

void priv_notify_reloading(void)
{
	notify(PRIV_N_RELOADING, NULL);
}

void priv_notify_stopping(void)
{
	notify(PRIV_N_STOPPING, NULL);
}

void priv_notify_watchdog(void)
{
	notify(PRIV_N_WATCHDOG, NULL);
}

void priv_notify_status(const char *fmt, ...)
{
	char text[PRIV_STATUS_TEXT];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	notify(PRIV_N_STATUS, text);
}

/* Asked once, before the fork: sd_watchdog_enabled() answers only in the process systemd
 * started (WATCHDOG_PID), which the collector is not. */
uint64_t priv_notify_watchdog_usec(void)
{
	static bool asked;
	static uint64_t usec;

	if (asked)
		return usec;
	asked = true;
#ifdef HAVE_LIBSYSTEMD
	if (sd_watchdog_enabled(0, &usec) <= 0)
		usec = 0;
#endif
	return usec;
}
