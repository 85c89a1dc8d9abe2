/* priv_notify: the service manager protocol (sd_notify), or nothing when built without it. */
#ifndef ENTROPYD_PRIV_NOTIFY_H
#define ENTROPYD_PRIV_NOTIFY_H

#include <stdint.h>

#include "priv.h"
#include "util.h"

void priv_notify_ready(void);
void priv_notify_reloading(void);
void priv_notify_stopping(void);
void priv_notify_watchdog(void);
void priv_notify_status(const char *fmt, ...) PRINTF_LIKE(1, 2);
/* The watchdog interval the manager asked for, in µs; 0 if none. The first call must come
 * from the process the manager started. */
uint64_t priv_notify_watchdog_usec(void);

#endif
