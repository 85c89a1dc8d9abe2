/* feed: when pending batches go to the sink, by kernel state and feed mode (DESIGN §6). */
#ifndef ENTROPYD_FEED_H
#define ENTROPYD_FEED_H

#include <event2/event.h>
#include <stdint.h>

#include "config.h"
#include "kernel.h"
#include "pool.h"
#include "sink.h"

enum feed_phase {
	PHASE_BOOT,      /* CRNG not ready: credit as early as possible */
	PHASE_MIX,       /* CRNG ready (5.18+): credit is ignored; mix at a low rate */
	PHASE_WATERMARK, /* before 5.18: feed while entropy_avail is below the watermark */
	PHASE_ALWAYS,    /* every batch with its credit */
};

struct feed {
	const struct config *cfg;
	struct pool *pool;
	struct sink *sink;
	struct event *timer;
	bool timer_armed;
	enum feed_phase phase;
	struct kernel_state ks;
	uint64_t start_ns;
	uint64_t ready_after_ns; /* start to CRNG ready, if we saw it happen; 0 otherwise */
	bool saw_not_ready;
	void (*after_flush)(void *arg); /* e.g. to update the systemd status line */
	void *after_flush_arg;
};

/* The phase the config's mode and the kernel's state call for. */
enum feed_phase feed_choose(enum feed_mode mode, const struct kernel_state *ks);
const char *feed_phase_name(enum feed_phase phase);

void feed_init(struct feed *f, struct event_base *base, const struct config *cfg,
	       struct pool *pool, struct sink *sink);
void feed_reconfigure(struct feed *f, const struct config *cfg);
/* The pool changed (pool notify hook): flush now if the phase says so, or arm the timer. */
void feed_poke(void *arg);
/* Hand everything pending to the sink now (used on exit). */
void feed_flush(struct feed *f);
void feed_fini(struct feed *f);

#endif
