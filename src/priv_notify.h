/* priv_notify: the service manager protocol (sd_notify), or nothing when built without it. */
#ifndef ENTROPYD_PRIV_NOTIFY_H
#define ENTROPYD_PRIV_NOTIFY_H

#include <stdint.h>

#include "priv.h"
#include "util.h"

void notify_ready(void);
void notify_reloading(void);
void notify_stopping(void);
void notify_watchdog(void);
void notify_status(const char *fmt, ...) PRINTF_LIKE(1, 2);
/* The watchdog interval the manager asked for, in µs; 0 if none. The first call must come
 * from the process the manager started. */
uint64_t notify_watchdog_usec(void);

#endif
