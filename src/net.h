/* net: packet arrivals (libpcap) as a timing source, live per interface or from a
 * savefile; with a per-interface event cap and the dominant-flow rule. */
#ifndef ENTROPYD_NET_H
#define ENTROPYD_NET_H

#include "source.h"

/* The "network" class driver. */
extern const struct source_ops net_source_ops;

#endif
