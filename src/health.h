/* health: SP 800-90B §4.4 continuous health tests (RCT and APT) for one source instance. */
#ifndef ENTROPYD_HEALTH_H
#define ENTROPYD_HEALTH_H

#include <stdbool.h>
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

enum health_state {
	HEALTH_STARTUP,  /* fewer than HEALTH_STARTUP_SYMBOLS symbols seen, all passing */
	HEALTH_OK,
	HEALTH_FAILED,   /* intermittent failure: no credit until the tests pass again */
	HEALTH_PERMANENT /* no credit until health_reset() */
};

enum health_test { HEALTH_TEST_NONE, HEALTH_TEST_RCT, HEALTH_TEST_APT };

struct health_cfg {
	double h_claimed;          /* min-entropy per symbol the cutoffs assume, 0 < H <= 8 */
	double alpha_intermittent; /* false-alarm probability of one test, 0 < alpha < 1 */
	double alpha_permanent;    /* stricter: 0 < alpha_permanent < alpha_intermittent */
	unsigned apt_window;       /* APT window W, 16..65536 */
};

struct health_counters {
	uint64_t symbols;
	uint64_t rct_intermittent, apt_intermittent; /* failures at the intermittent cutoff */
	uint64_t rct_permanent, apt_permanent;       /* ... and at the permanent one */
};

/* Per instance; plain data, no allocation. Fields are read-only outside health.c. */
struct health {
	struct health_cfg cfg;
	unsigned rct_cutoff, rct_cutoff_permanent; /* fail when a run reaches this length */
	unsigned apt_cutoff, apt_cutoff_permanent; /* fail when a window's count reaches this */
	enum health_state state;
	struct health_counters count;
	enum health_test last_test; /* the most recent failure (HEALTH_TEST_NONE: none yet) */
	bool last_permanent;
	uint64_t last_symbol;       /* count.symbols at that failure */

	uint8_t rct_sym, apt_ref;
	unsigned rct_run;   /* length of the current run of rct_sym (0: no symbol yet) */
	unsigned apt_seen;  /* symbols of the current window seen (0: next one starts a window) */
	unsigned apt_count; /* occurrences of apt_ref in the window, apt_ref itself included */
	uint32_t clean;     /* consecutive symbols on which both tests passed */
	uint32_t clean_needed;
};

/* Defaults (the alphas and W above) for a claimed min-entropy. */
void health_cfg_default(struct health_cfg *cfg, double h_claimed);
/* NULL if cfg is usable, else why not (for a config error message). */
const char *health_cfg_check(const struct health_cfg *cfg);

/* cfg must pass health_cfg_check(). Starts in HEALTH_STARTUP with zero counters. */
void health_init(struct health *h, const struct health_cfg *cfg);
/* New cutoffs (a new claim, a reload), keeping state, counters, and the current run and
 * window, which are judged by the new cutoffs from now on (at or past one: a failure now). */
void health_reconfigure(struct health *h, const struct health_cfg *cfg);
/* Back to HEALTH_STARTUP, the only way out of HEALTH_PERMANENT; counters are kept. */
void health_reset(struct health *h);

/* Straight to HEALTH_PERMANENT: for an instance whose earlier incarnation (same class and
 * name, before a detach) failed permanently; t is the test that failed then. */
void health_latch_permanent(struct health *h, enum health_test t);

/* Run both tests on the next symbol, O(1); returns the state after it. */
enum health_state health_feed(struct health *h, uint8_t symbol);
bool health_allows_credit(const struct health *h);

const char *health_state_name(enum health_state s);
const char *health_test_name(enum health_test t);

/* RCT cutoff C = 1 + ceil(-log2(alpha) / H). */
unsigned health_rct_cutoff(double h, double alpha);
/* APT cutoff C = 1 + CRITBINOM(W, 2^-H, 1 - alpha): a window holding C copies of its first
 * symbol (that one included) fails. May exceed W, in which case the APT cannot fail. */
unsigned health_apt_cutoff(unsigned w, double h, double alpha);

#endif
