/* feed: when pending batches go to the sink, by kernel state and feed mode (feed.mode in
 * entropyd.conf(5); the kernel's side in entropyd(8), "What the kernel does with credit"). */
#ifndef ENTROPYD_FEED_H
#define ENTROPYD_FEED_H

#include <event2/event.h>
#include <stdint.h>

#include "config.h"
#include "feed_pool.h"
#include "feed_sink.h"
#include "kernel.h"

enum feed_phase {
	PHASE_BOOT,      /* CRNG not ready: credit as early as possible */
	PHASE_MIX,       /* CRNG ready (5.18 semantics): credit is ignored; mix at a low rate */
	PHASE_WATERMARK, /* the old semantics: feed while entropy_avail is below the watermark */
	PHASE_ALWAYS,    /* every batch with its credit */
};

/* Batches taken in one turn of the loop, at most: as many as the busiest source's read
 * callback fills (a packet source's wakeup: 16 x 256 events of 8 bytes). */
#define FEED_QUEUE 64

struct feed {
	const struct config *cfg;
	struct pool *pool;
	struct sink *sink;
	/* Batches taken and not yet sent; the run event, made active by feed_want(), sends them
	 * from the loop. */
	struct batch queue[FEED_QUEUE];
	size_t queued;
	struct event *run;
	struct event *timer;
	bool timer_armed;
	enum feed_phase phase;
	struct kernel_state ks;
	/* KERNEL_RANDOM_DEV, opened only for the kernel's poll() answers, write-only (a read
	 * before the CRNG is ready would set off the kernel's own jitter loop); -1 if not open.
	 * POLLIN: the CRNG became ready (watched until it is, then never again); POLLOUT, with
	 * the old semantics: entropy_avail is below write_wakeup_threshold. */
	int watch_fd;
	bool own_watch_fd;
	struct event *ready_ev, *low_ev;
	bool low_armed;
	uint64_t low_fed_ns; /* the last batch that POLLOUT let go */
	uint64_t start_ns;
	uint64_t ready_after_ns; /* start to CRNG ready, if we saw it happen; 0 otherwise */
	uint64_t credited_before_ready; /* ... and the bits the sink had credited by then */
	bool saw_not_ready;
	/* After each batch sent and when the CRNG becomes ready: e.g. to update the systemd
	 * status line. */
	void (*after_flush)(void *arg);
	void *after_flush_arg;
};

/* The phase the config's mode and the kernel's state call for. */
enum feed_phase feed_choose(enum feed_mode mode, const struct kernel_state *ks);
const char *feed_phase_name(enum feed_phase phase);
/* What the daemon does in a phase, in words, for the start-up log (a static string). */
const char *feed_phase_meaning(enum feed_phase phase);

void feed_init(struct feed *f, struct event_base *base, const struct config *cfg,
	       struct pool *pool, struct sink *sink);
/* Take ks (probed elsewhere: a recorded tree in tests) as the kernel's, and watch fd (-1:
 * none; the caller keeps it) in place of KERNEL_RANDOM_DEV; the phase follows. */
void feed_use_kernel(struct feed *f, const struct kernel_state *ks, int fd);
/* The low watermark in force: feed.low_watermark, or when that is 0 the kernel's
 * write_wakeup_threshold, or KERNEL_OLD_WRITE_WAKEUP when that cannot be read. *from says
 * which. */
int feed_watermark(const struct feed *f, const char **from);
/* Whether the watermark phase waits for the kernel's POLLOUT (the old semantics, and the
 * watermark is the kernel's write_wakeup_threshold) rather than checking entropy_avail
 * every batch_interval. */
bool feed_watermark_by_pollout(const struct feed *f);
void feed_reconfigure(struct feed *f, const struct config *cfg);
/* Data went into the pool (the pipeline's `added` hook): the feed decides now, as it always
 * did (take the pool as a batch if the phase says so, or arm the timer), and what it took
 * goes to the sink from the event loop, in one run for however many adds come before it:
 * no batch reaches the sink on a source's read path. */
void feed_want(void *feed);
/* The same, the batch sent at once: for a caller with no loop turning between adds
 * (bench/). The daemon only ever calls feed_want(). */
void feed_run(struct feed *f);
/* Whether the CRNG got ready since the last batch, for a status asked between batches where
 * POLLIN cannot tell (kernels before 5.6, or no KERNEL_RANDOM_DEV). */
void feed_poll_ready(struct feed *f);
/* Hand everything pending to the sink now (used on exit). */
void feed_flush(struct feed *f);
void feed_fini(struct feed *f);

#endif
