/* est_health: the Repetition Count and Adaptive Proportion tests, and what failing them costs. */
#include "autoconf.h"

#include "est_health.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

void est_health_cfg_default(struct health_cfg *cfg, double h_claimed)
{
	cfg->h_claimed = h_claimed;
	cfg->alpha_intermittent = HEALTH_ALPHA_INTERMITTENT;
	cfg->alpha_permanent = HEALTH_ALPHA_PERMANENT;
	cfg->apt_window = HEALTH_APT_WINDOW;
	cfg->retry_ns = HEALTH_RETRY_DEFAULT_NS;
}

const char *est_health_cfg_check(const struct health_cfg *cfg)
{
	/* Written so that NaN fails every test. */
	if (!(cfg->h_claimed > 0.0 && cfg->h_claimed <= 8.0))
		return "claimed min-entropy must be above 0 and at most 8 bits per symbol";
	if (!(cfg->alpha_intermittent > 0.0 && cfg->alpha_intermittent < 1.0))
		return "intermittent false-alarm probability must be between 0 and 1";
	if (!(cfg->alpha_permanent > 0.0 && cfg->alpha_permanent < cfg->alpha_intermittent))
		return "permanent false-alarm probability must be above 0 and below the "
		       "intermittent one";
	if (cfg->apt_window < 16 || cfg->apt_window > 65536)
		return "APT window must be 16..65536 symbols";
	if (cfg->retry_ns == 0)
		return "the wait before a re-qualification must be above 0";
	return NULL;
}

unsigned est_health_rct_cutoff(double h, double alpha)
{
	double x = -log2(alpha) / h;

	/* -log2(alpha)/H is often an exact integer (alpha = 2^-30, H = 2); do not let a rounding
	 * error in the last bit add one to the cutoff. */
	x = ceil(x - 1e-9 * fmax(1.0, x));
	if (!(x < (double)(UINT_MAX - 1)))
		return UINT_MAX;
	return 1 + (unsigned)x;
}

static long double log_add(long double a, long double b)
{
	if (a < b) {
		long double t = a;
		a = b;
		b = t;
	}
	if (isinf(b))
		return a;
	return a + log1pl(expl(b - a));
}

unsigned est_health_apt_cutoff(unsigned w, double h, double alpha)
{
	const long double lp = -(long double)h * logl(2.0L);  /* log p, p = 2^-H */
	const long double lq = log1pl(-expl(lp));             /* log (1 - p) */
	const long double lalpha = logl(alpha);
	const long double lfact_w = lgammal((long double)w + 1.0L);
	long double ltail = -INFINITY; /* log P(X > x), X ~ Binomial(w, p) */
	unsigned x;

	/* CRITBINOM(w, p, 1 - alpha) is the least x with P(X <= x) >= 1 - alpha, that is
	 * P(X > x) <= alpha. The tail is summed from the top, in logs: the terms that matter
	 * are near alpha (down to 2^-60), far below what 1 - P(X <= x) could resolve. */
	for (x = w; x > 0; x--) {
		long double lpmf = lfact_w - lgammal((long double)x + 1.0L) -
				   lgammal((long double)(w - x) + 1.0L) + (long double)x * lp +
				   (long double)(w - x) * lq;

		ltail = log_add(ltail, lpmf); /* now log P(X > x - 1) */
		if (ltail > lalpha)
			return 1 + x;
	}
	return 1;
}

static void set_cutoffs(struct health *h, const struct health_cfg *cfg)
{
	const char *why = est_health_cfg_check(cfg);

	assert(why == NULL);
	(void)why;
	h->cfg = *cfg;
	h->rct_cutoff = est_health_rct_cutoff(cfg->h_claimed, cfg->alpha_intermittent);
	h->rct_cutoff_permanent = est_health_rct_cutoff(cfg->h_claimed, cfg->alpha_permanent);
	h->apt_cutoff = est_health_apt_cutoff(cfg->apt_window, cfg->h_claimed, cfg->alpha_intermittent);
	h->apt_cutoff_permanent =
		est_health_apt_cutoff(cfg->apt_window, cfg->h_claimed, cfg->alpha_permanent);
}

void est_health_init(struct health *h, const struct health_cfg *cfg)
{
	memset(h, 0, sizeof(*h));
	set_cutoffs(h, cfg);
	est_health_reset(h);
}

static void fail(struct health *h, enum health_test t, bool permanent);

void est_health_reconfigure(struct health *h, const struct health_cfg *cfg)
{
	set_cutoffs(h, cfg);
	/* The current run and window go on, judged by the new cutoffs from now: starting them
	 * over would let a stuck run that crosses a change of claim go unnoticed (and move the
	 * window's end, which the credit held for it waits for). One already at or past a new,
	 * lower cutoff fails now; past the permanent one, permanently. */
	if (h->rct_run >= h->rct_cutoff)
		fail(h, HEALTH_TEST_RCT, h->rct_run >= h->rct_cutoff_permanent);
	if (h->apt_seen > 0 && h->apt_count >= h->apt_cutoff)
		fail(h, HEALTH_TEST_APT, h->apt_count >= h->apt_cutoff_permanent);
	if (h->rct_run >= h->rct_cutoff || (h->apt_seen > 0 && h->apt_count >= h->apt_cutoff))
		h->clean = 0;
}

void est_health_reset(struct health *h)
{
	h->state = HEALTH_STARTUP;
	h->rct_run = 0;
	h->apt_seen = 0;
	h->apt_count = 0;
	h->clean = 0;
	h->clean_needed = HEALTH_STARTUP_SYMBOLS;
}

void est_health_restart(struct health *h)
{
	if (h->state == HEALTH_PERMANENT)
		return;
	est_health_reset(h);
	h->clean_needed = h->cfg.apt_window + HEALTH_STARTUP_SYMBOLS;
}

bool est_health_forgive(struct health *h, uint64_t since)
{
	if (h->state != HEALTH_PERMANENT || h->last_symbol <= since)
		return false;
	h->retry = h->retry_before;
	h->state = HEALTH_FAILED;
	h->clean = 0;
	h->clean_needed = h->cfg.apt_window + HEALTH_STARTUP_SYMBOLS;
	return true;
}

void est_health_past_save(const struct health *h, struct health_past *p)
{
	p->failed = h->state == HEALTH_PERMANENT;
	p->test = h->last_test;
	p->retry = h->retry;
}

void est_health_past_restore(struct health *h, const struct health_past *p)
{
	h->retry = p->retry;
	if (!p->failed)
		return;
	h->state = HEALTH_PERMANENT;
	h->last_test = p->test;
	h->last_permanent = true;
}

void est_health_retry_due(struct health *h)
{
	struct health_retry *r = &h->retry;

	if (h->now_ns < r->failed_ns)
		r->failed_ns = h->now_ns; /* time ran backwards: wait from here */
	if (h->now_ns - r->failed_ns < r->wait_ns)
		return;
	r->requalified++;
	r->requalified_ns = h->now_ns;
	est_health_reset(h);
}

uint64_t est_health_retry_left(const struct health *h)
{
	const struct health_retry *r = &h->retry;
	uint64_t waited;

	if (h->state != HEALTH_PERMANENT)
		return 0;
	waited = h->now_ns > r->failed_ns ? h->now_ns - r->failed_ns : 0;
	return waited < r->wait_ns ? r->wait_ns - waited : 0;
}

/* The wait starts: the setting, or twice the last one for an instance that failed again
 * within one wait of being re-qualified (it keeps failing). */
static void retry_start(struct health *h)
{
	struct health_retry *r = &h->retry;
	const uint64_t base = h->cfg.retry_ns;
	const uint64_t max = base <= UINT64_MAX / HEALTH_RETRY_MAX_TIMES
				     ? base * HEALTH_RETRY_MAX_TIMES
				     : UINT64_MAX;

	if (r->requalified && r->wait_ns && h->now_ns >= r->requalified_ns &&
	    h->now_ns - r->requalified_ns < r->wait_ns)
		r->wait_ns = r->wait_ns <= max / 2 ? 2 * r->wait_ns : max;
	else
		r->wait_ns = base;
	r->failed_ns = h->now_ns;
}

static void fail(struct health *h, enum health_test t, bool permanent)
{
	h->last_count = t == HEALTH_TEST_RCT ? h->rct_run : h->apt_count;
	if (t == HEALTH_TEST_RCT)
		permanent ? h->count.rct_permanent++ : h->count.rct_intermittent++;
	else
		permanent ? h->count.apt_permanent++ : h->count.apt_intermittent++;
	h->last_test = t;
	h->last_permanent = permanent;
	h->last_symbol = h->count.symbols;
	if (h->state == HEALTH_PERMANENT)
		return;
	h->state = permanent ? HEALTH_PERMANENT : HEALTH_FAILED;
	if (permanent) {
		h->retry_before = h->retry;
		retry_start(h);
	}
	/* Recovery needs a whole fresh APT window on top of the start-up length. */
	h->clean_needed = h->cfg.apt_window + HEALTH_STARTUP_SYMBOLS;
}

/*
 * A failure is counted once, when a run or a window's count reaches a cutoff; a run or
 * window that stays above the intermittent cutoff keeps the instance failing (and can go on
 * to the permanent cutoff) but is not counted again.
 */
enum health_state est_health_feed(struct health *h, uint8_t s)
{
	bool failing = false, grew = true;

	h->count.symbols++;

	/* Repetition Count Test, §4.4.1. */
	if (h->rct_run > 0 && s == h->rct_sym) {
		grew = h->rct_run < UINT_MAX;
		if (grew)
			h->rct_run++;
	} else {
		h->rct_sym = s;
		h->rct_run = 1;
	}
	if (grew && h->rct_run == h->rct_cutoff)
		fail(h, HEALTH_TEST_RCT, false);
	if (grew && h->rct_run == h->rct_cutoff_permanent)
		fail(h, HEALTH_TEST_RCT, true);
	if (h->rct_run >= h->rct_cutoff)
		failing = true;

	/* Adaptive Proportion Test, §4.4.2: non-overlapping windows of W symbols, counting
	 * the window's first symbol. */
	if (h->apt_seen == 0) {
		h->apt_ref = s;
		h->apt_count = 1;
	} else if (s == h->apt_ref) {
		h->apt_count++;
	}
	if (s == h->apt_ref && h->apt_count == h->apt_cutoff)
		fail(h, HEALTH_TEST_APT, false);
	if (s == h->apt_ref && h->apt_count == h->apt_cutoff_permanent)
		fail(h, HEALTH_TEST_APT, true);
	if (h->apt_count >= h->apt_cutoff)
		failing = true;
	if (++h->apt_seen == h->cfg.apt_window)
		h->apt_seen = 0;

	if (failing) {
		h->clean = 0;
	} else {
		if (h->clean < UINT32_MAX)
			h->clean++;
		if ((h->state == HEALTH_STARTUP || h->state == HEALTH_FAILED) &&
		    h->clean >= h->clean_needed)
			h->state = HEALTH_OK;
	}
	return h->state;
}

bool est_health_allows_credit(const struct health *h)
{
	return h->state == HEALTH_OK;
}

const char *est_health_state_name(enum health_state s)
{
	switch (s) {
	case HEALTH_STARTUP: return "startup";
	case HEALTH_OK: return "ok";
	case HEALTH_FAILED: return "failed";
	case HEALTH_PERMANENT: return "failed-permanent";
	}
	return "unknown";
}

void est_health_cause(const struct health *h, char *buf, size_t size)
{
	if (h->last_test == HEALTH_TEST_RCT)
		snprintf(buf, size, "its timing became periodic: one interval %u times in a row",
			 h->last_count);
	else if (h->last_test == HEALTH_TEST_APT)
		snprintf(buf, size, "its timing became periodic: one interval in %u of %u",
			 h->last_count, h->cfg.apt_window);
	else if (size)
		buf[0] = 0;
}

const char *est_health_test_name(enum health_test t)
{
	switch (t) {
	case HEALTH_TEST_NONE: return "none";
	case HEALTH_TEST_RCT: return "repetition-count";
	case HEALTH_TEST_APT: return "adaptive-proportion";
	}
	return "unknown";
}
