/* bench/rig: the daemon's pipeline without its sources, for the benchmarks: defaults and a
 * dry-run sink. */
#ifndef ENTROPYD_BENCH_RIG_H
#define ENTROPYD_BENCH_RIG_H

#include <stdbool.h>

#include "config.h"
#include "feed.h"
#include "feed_pool.h"
#include "feed_sink.h"

struct rig {
	struct config *cfg;
	struct event_base *base;
	struct pool pool;
	struct sink sink;
	struct feed feed;
};

/* CPU time of the process, in ns. */
double rig_cpu_ns(void);
/* feed_always: every full pool goes to the sink; else the default feed, which on a running
 * system (its CRNG ready) sends a batch now and then and folds the rest into the pool. */
void rig_open(struct rig *r, bool feed_always);
/* Flushes what waits; say: print what the sink saw. */
void rig_close(struct rig *r, bool say);

#endif
