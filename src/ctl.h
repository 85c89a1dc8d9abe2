/* ctl: the daemon's control socket — Varlink (ctl_proto.h) over a unix stream socket, served
 * from the event loop without ever blocking on a client. */
#ifndef ENTROPYD_CTL_H
#define ENTROPYD_CTL_H

#include <event2/event.h>

#include "config.h"

struct ctl;
struct daemon;

/* Connections served at once; one more is told TooManyClients and closed. */
#define CTL_MAX_CLIENTS 64

/* Create the socket cfg->control.socket names (its directory too, if missing) and serve it
 * on base. NULL on failure, which is a start-up error (already logged). */
struct ctl *ctl_start(struct event_base *base, const struct config *cfg, struct daemon *d);

/* cfg replaced the running config. The timeout applies at once; a new socket path or group
 * only at restart (logged). NULL ctl: nothing to do. */
void ctl_reconfigure(struct ctl *ctl, const struct config *cfg);

/* Close every connection and the socket, and remove the socket file. NULL: nothing. */
void ctl_stop(struct ctl *ctl);

#endif
