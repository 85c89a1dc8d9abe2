/* est_health: SP 800-90B §4.4 continuous health tests (RCT and APT) for one source instance. */
#ifndef ENTROPYD_EST_HEALTH_H
#define ENTROPYD_EST_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Two false-alarm levels. Intermittent: 2^-30 per test, as SP 800-90B suggests for a
 * device that sees millions of samples; a busy instance (1e5 symbols/s) can see a false
 * alarm every few hours, which costs only a short pause in credit. Permanent: 2^-60, so
 * that even at 1e5 symbols/s for ten years (2^45 symbols) a healthy instance is latched off
 * by chance with probability below 2^-15; a stuck source still reaches it within a few
 * dozen symbols. (2^-40 would latch off a busy healthy source a few times a year.)
 */
#define HEALTH_ALPHA_INTERMITTENT 0x1p-30
#define HEALTH_ALPHA_PERMANENT 0x1p-60
#define HEALTH_APT_WINDOW 512      /* SP 800-90B: 512 for non-binary symbols (1024 for bits) */
#define HEALTH_STARTUP_SYMBOLS 1024 /* passed before the first credit, and after a failure */
/* The least min-entropy the tests claim (feed_pipeline.c): below it the cutoffs no longer
 * catch anything the estimate does not. */
#define HEALTH_CLAIM_MIN 0.5

/*
 * A permanent failure is not forever: a source can fail under a load that passes (a disk's
 * completions in bursts, a packet flood), and the sources that see the most load are the
 * ones it would switch off. So a permanently failed instance is re-qualified after a wait:
 * a whole start-up again (HEALTH_STARTUP_SYMBOLS passing before any credit), which a broken
 * source fails again at once and a source that was only loaded passes. The wait is the
 * class's health_retry (an hour by default), doubled each time the instance fails
 * permanently again within one wait of being re-qualified, up to HEALTH_RETRY_MAX_TIMES the
 * setting; a failure after a longer good spell waits the setting again.
 *
 * The wait runs on the events' own time, as the estimators' schedule and the per-second
 * cap do: a live source's timestamps are the kernel's CLOCK_MONOTONIC (input, block) or its
 * capture clock (network), a replay re-qualifies exactly where the live run did, and the
 * test is made on the event path without reading a clock. Time that runs backwards (a
 * stepped capture clock, a replay starting over) starts the wait again from there, so it
 * never shortens it; a step forward can, but a wait only spaces the attempts out: credit
 * comes back only through the start-up tests.
 */
#define HEALTH_RETRY_DEFAULT_NS (3600ULL * 1000000000ULL)
#define HEALTH_RETRY_MAX_TIMES 24

enum health_state {
	HEALTH_STARTUP,  /* fewer than HEALTH_STARTUP_SYMBOLS symbols seen, all passing */
	HEALTH_OK,
	HEALTH_FAILED,   /* intermittent failure: no credit until the tests pass again */
	HEALTH_PERMANENT /* no credit until re-qualified (health_time()) or est_health_reset() */
};

enum health_test { HEALTH_TEST_NONE, HEALTH_TEST_RCT, HEALTH_TEST_APT };

struct health_cfg {
	double h_claimed;          /* min-entropy per symbol the cutoffs assume, 0 < H <= 8 */
	double alpha_intermittent; /* false-alarm probability of one test, 0 < alpha < 1 */
	double alpha_permanent;    /* stricter: 0 < alpha_permanent < alpha_intermittent */
	unsigned apt_window;       /* APT window W, 16..65536 */
	uint64_t retry_ns;         /* the first wait after a permanent failure, event time, > 0 */
};

struct health_counters {
	uint64_t symbols;
	uint64_t rct_intermittent, apt_intermittent; /* failures at the intermittent cutoff */
	uint64_t rct_permanent, apt_permanent;       /* ... and at the permanent one */
};

/* The re-qualification of a permanently failed instance. */
struct health_retry {
	uint64_t wait_ns;        /* the current wait (0: never failed permanently) */
	uint64_t failed_ns;      /* the event time it runs from: the permanent failure */
	uint64_t requalified;    /* re-qualifications so far */
	uint64_t requalified_ns; /* the event time of the last one */
};

/* What a permanent failure leaves to a later instance of the same source (same class and
 * name, after a detach): whether it is still failed, the test, and the wait. */
struct health_past {
	bool failed;
	enum health_test test;
	struct health_retry retry;
};

/* Per instance; plain data, no allocation. Fields are read-only outside est_health.c. */
struct health {
	struct health_cfg cfg;
	unsigned rct_cutoff, rct_cutoff_permanent; /* fail when a run reaches this length */
	unsigned apt_cutoff, apt_cutoff_permanent; /* fail when a window's count reaches this */
	enum health_state state;
	struct health_counters count;
	enum health_test last_test; /* the most recent failure (HEALTH_TEST_NONE: none yet) */
	bool last_permanent;
	uint64_t last_symbol;       /* count.symbols at that failure */
	unsigned last_count;        /* what tripped it: the run's length, or the window's count */

	uint8_t rct_sym, apt_ref;
	unsigned rct_run;   /* length of the current run of rct_sym (0: no symbol yet) */
	unsigned apt_seen;  /* symbols of the current window seen (0: next one starts a window) */
	unsigned apt_count; /* occurrences of apt_ref in the window, apt_ref itself included */
	uint32_t clean;     /* consecutive symbols on which both tests passed */
	uint32_t clean_needed;

	uint64_t now_ns; /* the event time of the latest symbol (health_time()) */
	struct health_retry retry;
	struct health_retry retry_before; /* as it was before the latest permanent failure */
};

/* Defaults (the alphas and W above) for a claimed min-entropy. */
void est_health_cfg_default(struct health_cfg *cfg, double h_claimed);
/* NULL if cfg is usable, else why not (for a config error message). */
const char *est_health_cfg_check(const struct health_cfg *cfg);

/* cfg must pass est_health_cfg_check(). Starts in HEALTH_STARTUP with zero counters. */
void est_health_init(struct health *h, const struct health_cfg *cfg);
/* New cutoffs (a new claim, a reload), keeping state, counters, and the current run and
 * window, which are judged by the new cutoffs from now on (at or past one: a failure now). */
void est_health_reconfigure(struct health *h, const struct health_cfg *cfg);
/* Back to HEALTH_STARTUP, the only way out of HEALTH_PERMANENT; counters are kept. */
void est_health_reset(struct health *h);
/* After a pause in which the source's symbols were not tested (a packet source's sampling):
 * a start-up as long as the recovery from an intermittent failure (a whole APT window and
 * HEALTH_STARTUP_SYMBOLS); a permanent failure stays as it is. */
void est_health_restart(struct health *h);
/* The source found that its symbols after the first `since` (count.symbols then) came from a
 * flood, not from the events it times (a packet source that now samples): a permanent
 * failure among them is taken back to an intermittent one, the wait it started with it;
 * it stays counted. True if there was one. */
bool est_health_forgive(struct health *h, uint64_t since);

/* For an instance whose earlier incarnation (same class and name, before a detach) failed
 * permanently: the wait goes on (and, if it was still failed, so does the failure). */
void est_health_past_save(const struct health *h, struct health_past *p);
void est_health_past_restore(struct health *h, const struct health_past *p);

void est_health_retry_due(struct health *h);
/* The event time of the next symbol; a permanently failed instance whose wait is over is
 * re-qualified here (est_health_reset()). Call before each est_health_feed(). */
static inline void health_time(struct health *h, uint64_t t_ns)
{
	h->now_ns = t_ns;
	if (h->state == HEALTH_PERMANENT)
		est_health_retry_due(h);
}
/* HEALTH_PERMANENT: the event time still to wait before it is re-qualified, as of the
 * latest symbol; otherwise 0. */
uint64_t est_health_retry_left(const struct health *h);

/* Run both tests on the next symbol, O(1); returns the state after it. */
enum health_state est_health_feed(struct health *h, uint8_t symbol);
bool est_health_allows_credit(const struct health *h);

const char *est_health_state_name(enum health_state s);
/*
 * What the latest failure says of the source's timing, in words, for the log and the
 * status: a symbol is an interval between events, so either test failing means one interval
 * kept coming back, beyond what chance gives a source of the claimed min-entropy: "its
 * timing became periodic: one interval N times in a row" (RCT) or "... in N of 512" (APT).
 * Never the interval itself. "" if it never failed.
 */
void est_health_cause(const struct health *h, char *buf, size_t size);
const char *est_health_test_name(enum health_test t);

/* RCT cutoff C = 1 + ceil(-log2(alpha) / H). */
unsigned est_health_rct_cutoff(double h, double alpha);
/* APT cutoff C = 1 + CRITBINOM(W, 2^-H, 1 - alpha): a window holding C copies of its first
 * symbol (that one included) fails. May exceed W, in which case the APT cannot fail. */
unsigned est_health_apt_cutoff(unsigned w, double h, double alpha);

#endif
