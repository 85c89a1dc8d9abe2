/* bench/rig: the daemon's pipeline without its sources, for the benchmarks: defaults, the
 * feed always on, a dry-run sink. */
#ifndef ENTROPYD_BENCH_RIG_H
#define ENTROPYD_BENCH_RIG_H

#include <stdbool.h>

#include "config.h"
#include "feed.h"
#include "pool.h"
#include "sink.h"

struct rig {
	struct config *cfg;
	struct event_base *base;
	struct pool pool;
	struct sink sink;
	struct feed feed;
};

/* CPU time of the process, in ns. */
double rig_cpu_ns(void);
void rig_open(struct rig *r);
/* Flushes what waits; say: print what the sink saw. */
void rig_close(struct rig *r, bool say);

#endif
