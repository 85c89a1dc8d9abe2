/* feed_pipeline: per-instance state and the path sample -> estimator -> health -> policy -> pool. */
#ifndef ENTROPYD_FEED_PIPELINE_H
#define ENTROPYD_FEED_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "source_classes.h"

struct pool;
struct instance;

/* Flags a source gives when it attaches an instance. */
enum {
	INST_KERNEL_CREDITS = 1 << 0, /* the kernel already credits these events itself */
};

/* Counters of one instance; never raw timings. */
struct inst_counters {
	uint64_t events;       /* samples received */
	uint64_t skipped;      /* not estimated: instance disabled by policy, or feed_pipeline_skip */
	uint64_t merged;       /* closer than the quantum to the event before: mixed, no symbol */
	uint64_t mixed_bytes;  /* bytes handed to the pool */
	double estimated_bits; /* sum of per-event estimates (after the class cap) */
	double credited_bits;  /* sum of per-event credit (after policy), vouched for by the
				* health tests (see feed_pipeline.c: hold()) */
	double held_bits;      /* credit earned that the health tests have yet to vouch for */
};

/* Why an instance's credit does not grow now, as decided for its latest event (see
 * feed_pipeline.c: reason_of()); PIPELINE_CREDITS when it does. */
enum pipeline_reason {
	PIPELINE_CREDITS,
	PIPELINE_IDLE,        /* no event yet */
	PIPELINE_DISABLED,    /* policy: disabled */
	PIPELINE_MIX_ONLY,    /* policy: mix-only */
	PIPELINE_STARTUP,     /* the health tests' start-up */
	PIPELINE_HEALTH,      /* a health test failed */
	PIPELINE_NO_ESTIMATE, /* the estimator has no estimate yet */
	PIPELINE_ESTIMATE_0,  /* the estimate is below EST_MIN_BITS (or the cap is 0) */
	PIPELINE_POOL_FULL,   /* folded into a full pool between feeds: earns nothing */
	PIPELINE_FLOW,        /* the source's own weight (the dominant-flow rule) */
	PIPELINE_RATE_CAP,    /* the per-second cap */
	PIPELINE_HELD,        /* earned, waiting for the health tests to vouch for it */
	PIPELINE_KERNEL,      /* the kernel no longer counts credit */
	PIPELINE_SAMPLED,     /* the source samples its events (feed_pipeline_set_sampling()) */
	PIPELINE_REASONS
};

/* The short name of a reason ("pool-full"); "-" for PIPELINE_CREDITS. */
const char *feed_pipeline_reason_name(enum pipeline_reason r);

struct inst_info {
	enum src_class cls;
	const char *name;
	const char *kind;   /* e.g. "keyboard", "mouse"; shown in status */
	const char *state;  /* "open", "stream", ... */
	const char *backend; /* the one in use, as the source said; NULL: the class's */
	struct policy_rule rule;
	const char *estimator;
	double last_estimate; /* bits/event of the most recent sample; NaN: no estimate yet */
	bool kernel_credits;
	uint64_t jiffy_ns;          /* nonzero: symbols only from timing finer than the kernel's */
	const char *health;         /* est_health_state_name(): "startup", "ok", "failed", ... */
	const char *health_last;    /* the test that failed last, or "none" */
	uint64_t health_failures;
	uint64_t health_requalified; /* times re-qualified after a permanent failure */
	double health_retry_in; /* failed permanently: seconds of event time before it is
				 * re-qualified, as of its latest event; NAN otherwise */
	struct inst_counters c;
	enum pipeline_reason reason;
	char reason_text[224]; /* the reason in a sentence, with its figures; "" if none */
	double weight;         /* the weight in force: the policy's times the source's */
	bool flow_zero;        /* the source's own weight is 0 (the dominant-flow rule) */
	char flow_text[96];    /* that rule in a sentence while it weighs (its own weight
				* below 1); "" otherwise */
	/* Where the source samples its events (feed_pipeline_set_sampling()): "off", "on" or
	 * "refused"; NULL where it never does. */
	const char *sampling;
	double sample_ratio; /* the share of events kept: 1 when not sampling */
	double arrival_rate; /* the source's estimate of its events a second; NaN: none */
	uint64_t long_estimates; /* its estimator's of the long window (est_report.long_runs) */
};

/* added(arg) is called whenever data or vouched credit went into the pool, for the pool's
 * owner to schedule what takes it on: the daemon's only marks the feed as wanted
 * (feed_want()), so nothing reaches the sink on a source's read path. NULL: nobody. */
void feed_pipeline_init(const struct config *cfg, struct pool *pool, void (*added)(void *arg),
		   void *arg);
void feed_pipeline_fini(void);

/* A new, valid config: every instance re-resolves its policy; estimator state stays. */
void feed_pipeline_reconfigure(const struct config *cfg);

/* Does policy let this instance be opened at all (mode != disabled)? */
bool feed_pipeline_enabled(enum src_class cls, const char *name);

/* A source opened an instance. Name must be unique within the class. */
struct instance *feed_pipeline_attach(enum src_class cls, const char *name, const char *kind,
				 unsigned flags);
void feed_pipeline_set_state(struct instance *inst, const char *state);
/* The backend that reads it, where a class has more than one (a static string). */
void feed_pipeline_set_backend(struct instance *inst, const char *backend);
/* A source's own weight on the instance's credit, 0 <= w <= 1 (default 1): applied after the
 * policy, before the per-second cap. share: why, the busiest flow's share of the events
 * (0..1), shown with the weight. */
void feed_pipeline_set_weight(struct instance *inst, double w, double share);
/* The source keeps only a random share `ratio` of its events (0 < ratio <= 1; 1: all of
 * them), an estimated rate_pps arriving a second (NaN: not known); state: "off", "on" or
 * "refused" (the source could not sample), shown in status. While ratio < 1 the instance's
 * events are mixed and counted but neither estimated, health-tested nor credited: which
 * events are kept is the sampler's randomness, and crediting their gaps would count that
 * randomness as the source's. When it is back at 1, estimation starts afresh and the health
 * tests start up again as after an intermittent failure. */
void feed_pipeline_set_sampling(struct instance *inst, const char *state, double ratio,
			   double rate_pps);
/* Whether the kernel still counts credit (since Linux 5.18 only until the CRNG is ready):
 * the daemon tells, for the reason shown when it does not. */
void feed_pipeline_kernel_counts(bool counts);
/* The boot allowance (see feed_pipeline.c, entropyd.conf(5) feed.boot_allowance): while the
 * kernel still counts credit, vouched credit may go past the per-second caps, up to `bits`
 * in all (what the kernel still needs: kernel_bits_needed()), given once at start. */
void feed_pipeline_boot_allowance(double bits);
/* n events the source saw but does not hand in (over its own event cap): counted as events
 * and as skipped, never estimated, mixed or credited. */
void feed_pipeline_skip(struct instance *inst, uint64_t n);
/* One event at t_ns (CLOCK_MONOTONIC, or the replayed timestamp). */
void feed_pipeline_sample(struct instance *inst, uint64_t t_ns);
/* n events in order, as n feed_pipeline_sample() calls would take them, but mixed into the pool
 * and counted in runs, with the clock read once. */
void feed_pipeline_samples(struct instance *inst, const uint64_t *t_ns, size_t n);
/* The instance went away: its counters move to the class totals, its state is freed. */
void feed_pipeline_detach(struct instance *inst);

/* Reading state for status and tests. */
size_t feed_pipeline_count(void);
/* Live instances whose health tests have failed (for now or for good): no credit. */
size_t feed_pipeline_failing(void);
/* The i-th live instance (0 <= i < feed_pipeline_count()), filled into *out. */
bool feed_pipeline_info(size_t i, struct inst_info *out);
/* The kernel's tick rate used for the no-double-counting rule, and where it was read. */
unsigned feed_pipeline_kernel_hz(const char **from);
/* Totals over all instances, live and detached. */
void feed_pipeline_totals(struct inst_counters *out);

#endif
