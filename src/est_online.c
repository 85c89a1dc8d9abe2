/* est_online: the online SP 800-90B estimator: min(kernel rule, non-IID min-entropy, cap). */
#include "autoconf.h"

#include "est.h"
#include "est_90b.h"
#include "est_90b_noniid.h"
#include "est_90b_tuple.h"
#include "est_health.h"
#include "est_kernel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Symbols. At full resolution a symbol is the low 8 bits of the quantised delta,
 * (t - t_prev) / quantum; the first event has none. For events the kernel already credits
 * at jiffy resolution (jiffy_ns > 0) it is the low 8 bits of the event's phase inside its
 * jiffy, (t % jiffy) / quantum: what the kernel's own timestamp does not see, so nothing is
 * counted twice. Every event has a phase, the first included. An event closer than a quantum
 * or the batch gap to the one before has neither: it is merged into that one's timing event
 * (est_merged()).
 *
 * Credit per event = min(kernel Δ/Δ²/Δ³ rule, H, cap). H is SP 800-90B's non-IID
 * min-entropy per symbol (one symbol per event) over the instance's recent symbols, as NIST's
 * ea_non_iid assesses it: min(H_original, 8 x H_bitstring), the literal view's estimators
 * over the symbols and all ten over their bits (est_90b_noniid.h); 0 until the first H
 * exists. The kernel rule (est_kernel's, on the same timestamps) applies at full resolution
 * only: in sub-jiffy mode it is what the kernel already counts.
 *
 * Schedule. Symbols are buffered (4 KB per instance) into non-overlapping blocks of
 * BLOCK = 4096, the least MultiMCW runs on. The first H comes from the first 1024 symbols
 * (every estimator that can run on so few), is refined at 2048, and then comes from full
 * blocks. The estimators' cost is bounded by event time, not by the number of events: a
 * full block is estimated if the class's estimate_interval (every_ns: 10 s for input and
 * block, 60 s for network by default) of event time has passed since the last estimated
 * one (the first always is), and of the estimated blocks
 *  - every one runs the cheap estimators: MCV, MultiMCW, Lag, t-Tuple and LRS on the
 *    symbols, MCV, Collision and Markov on the bits (t-Tuple and LRS on 4096 symbols cost
 *    less than MultiMCW, and on a flood's drained polls t-Tuple saw 0.20 bits a symbol
 *    where MultiMCW saw 0.33);
 *  - one at least COSTLY_TIMES intervals after the last such also MultiMMC and LZ78Y on
 *    the symbols, and Compression, t-Tuple and LRS on the bits;
 *  - one at least FULL_TIMES intervals after the last such all of them, the four
 *    predictors on the bits too;
 * the estimates at 1024 and 2048 symbols, and the block after a block of a single value,
 * run them all. A slow source (keys, a quiet disk: a block takes longer than those spans)
 * thus has every block fully assessed; a busy one costs the same CPU a second of event time
 * whatever its rate, and its cost per event falls as the rate grows (bench/pipeline.c,
 * bench/pcap.sh). Between estimates the last H stands and the health tests still see every
 * symbol: what a change of the source could earn before the next estimate is bounded by the
 * per-second cap (cap_bits_per_second) times those seconds, and a stuck or dominated source
 * is stopped by the health tests at once.
 * H is the minimum over every estimator's latest result, so an estimator that ran on an
 * earlier block keeps its word until it runs again. At 1024 and 2048 symbols, and on a
 * block that runs them all (a slow source's every block), H is exactly sp90b_noniid() over
 * its symbols at 8 bits. A source that turns predictable in a way only the costlier
 * estimators see is caught when they next run, in a way the cheap ones see (stuck,
 * periodic and short replayed timing) at the next estimate.
 *
 * A 4096-symbol block can show at most about 6.6 bits per symbol even from a perfect
 * source (MCV's 99% bound on the commonest of 256 values), well above the class caps.
 *
 * Runs. A block's estimators see that block only, and on a busy source only one block in
 * many: an assessment of the whole recording (NIST's, or entropyd --assess) sees every
 * symbol, and its predictors' P_local (SP 800-90B §6.3.7) counts the longest run of right
 * guesses in all of them, which grows with the recording. A disk that paces some writes
 * (runs of one interval, up to 26 in a row in 1.2 million symbols, each block estimated
 * at 3.3 bits a symbol) assesses at 0.955 bits a symbol over the whole run, below its
 * class cap of 1: the online credit came out 0.4 % above that. So every symbol also goes
 * into a window of the last RUN_SEGS x RUN_SEG symbols (about a million, the size of
 * an SP 800-90B assessment), where the predictor "the same interval again" (Lag's first,
 * and what the repetition count test watches) keeps its right guesses and its longest
 * run of them; H is at most that predictor's bound over the window (sp90b_pred_finish():
 * P_global and P_local over the window's symbols). A run counts when it ends, from the
 * event that ends it on, for as long as the window holds it; a run as long as the health
 * tests' repetition count cutoff is not counted: it fails them, and what they stop is
 * theirs to judge. It costs a comparison a symbol; the bound is worked out again when the
 * longest run grows, when a segment leaves the window and at each estimate.
 *
 * Long window. t-Tuple and LRS count repeated substrings, and MultiMCW's P_local the longest
 * run of right guesses: over more symbols they see more, and their result falls with length.
 * A trusted interface drained by a poll assessed at 0.424 bits a symbol as the mean of its
 * 4096-symbol blocks, 0.352 of its 16,384-symbol ones, 0.279 at 65,536 and 0.220 over all
 * its 102,596 symbols; credited by its blocks' estimates it got 0.246. So every symbol also
 * goes into a window of the instance's last LONG_SYMS (2^20) symbols, grown as they come
 * (up to 1 MiB an instance), and t-Tuple, LRS and MultiMCW run over all of it (on the
 * symbols; as ea_non_iid's literal view):
 *  - while it grows, at 1024 symbols and at the steps after that, every eighth of each
 *    doubling (but at least every 256 symbols): 1024, 1280, ... 2048, 2304, ... 4096,
 *    4608, ... 2^20; only at the next doubling while its bound counts as zero (below
 *    EST_MIN_BITS: a replayed or periodic source, whose long estimates cost the most). A
 *    step is passed over while little of its bits went on to credit: the slack, an
 *    eighth (LONG_SLACK) of what a step's symbols earn at the H in force, is what may go
 *    to credit between two estimates, and the estimate comes at the first step once it
 *    is spent (or FULL_TIMES intervals of event time after the last). The estimator
 *    counts as credited every bit it gives (long_take()); the pipeline gives back those
 *    the policy then held back (the per-second cap, a full pool, failed health tests,
 *    mix-only: est_uncredited()). A source whose bits go to credit is estimated at every
 *    step, as the bits at stake are what the long window is for; one whose credit the
 *    per-second cap holds to a trickle (any busy source, and every source once the
 *    kernel's CRNG is ready and entropyd only mixes) costs a few estimates, not 77, and
 *    what goes to credit before a longer window is seen is less than a step would give;
 *  - then once a segment (RUN_SEG symbols) has left it since the last, at most once every
 *    COSTLY_TIMES estimate intervals of event time; FULL_TIMES while its bound counts as
 *    zero, and while the slack is not spent and most of the bits given since the last
 *    estimate were held back from credit (long_credited()).
 * Its result (8 until the first) bounds H, and it keeps a budget: at each of its estimates,
 * its bound times the symbols it holds, less the bits already given to events of those
 * symbols (each at most the cap: what can be credited); every symbol after adds the bound,
 * every event's bits are taken from it, and an event gets no more than is left. So when a
 * longer window shows what the shorter ones did not (a flood's runs of about 70 equal
 * symbols, first seen 36,864 symbols in, took the interface's assessment from 0.62 to 0.26
 * bits a symbol), the bits given since its start never stay above what it assesses: the
 * events after earn nothing until the budget is back above zero. An assessment of the same
 * symbols counts those runs too, so they stay in the window; a run as long as the health
 * tests' permanent repetition count cutoff does not (what they fail for good is theirs: no
 * credit until the source is re-qualified, an hour of its events later).
 * On a busy disk's symbols t-Tuple with LRS took 111 ms and MultiMCW 110 ms over 2^20
 * symbols, 41 and 15 ms over 2^18, 5 and 4 ms over 2^16 (on random symbols all three 85 ms
 * over 2^20: bench/pipeline --long). While symbols have only been appended to the window,
 * MultiMCW takes those since its last estimate and no more (sp90b_mcw_add(): the same
 * result), so its growth costs t-Tuple's and LRS's runs over all of it and MultiMCW each
 * symbol once: 371 and 34 ms over a million random symbols, 405 in all where it was 804
 * (bench/pipeline --long). Then it is one estimate every COSTLY_TIMES intervals (2 minutes
 * for a disk), or every 65,536 symbols on a slower source. The renumbered copy it is estimated from (1 MiB) is
 * shared scratch; t-Tuple's suffix array (28 bytes a symbol) is allocated for the call.
 *
 * Scratch (the renumbered block, its bits and the predictors' work area, a little over
 * 1 MB with the tables of the bitstring predictors) is shared by all instances: the daemon
 * is single-threaded and an estimate is done within one call.
 */

#define BLOCK 4096
#define FIRST_ESTIMATE 1024
#define SECOND_ESTIMATE 2048
#define ESTIMATE_EVERY_NS (10 * NS_PER_SEC) /* unless est_params say otherwise */
#define COSTLY_TIMES 12                      /* the costly estimators 12 times as seldom */
#define FULL_TIMES 60                        /* all of them 60 times */
#define RUN_SEG 65536                        /* symbols a segment of the run window */
#define RUN_SEGS 16                          /* segments: 2^20 symbols */
#define LONG_SYMS ((size_t)RUN_SEG * RUN_SEGS) /* the long window: 2^20 symbols */
#define LONG_FIRST FIRST_ESTIMATE            /* its first estimate */
#define LONG_STEP_MIN 256                    /* the least it grows between estimates */
#define LONG_STEPS 8                         /* estimates per doubling */
#define LONG_SLACK 0.125 /* of what a step earns at the H in force, what may go to credit
			* before the next step's estimate is made */

#define T(x) SP90B_TEST_BIT(SP90B_T_##x)
#define LIT_CHEAP (T(MCV) | T(MULTI_MCW) | T(LAG) | T(TUPLE) | T(LRS) | T(COLLISION) | T(MARKOV))
#define BIT_CHEAP (T(MCV) | T(COLLISION) | T(MARKOV))
#define LIT_COSTLY (LIT_CHEAP | T(MULTI_MMC) | T(LZ78Y) | T(COMPRESSION))
#define BIT_COSTLY (BIT_CHEAP | T(COMPRESSION) | T(TUPLE) | T(LRS))
/* Every view's estimators, by level (see the schedule above). */
const unsigned est_online_sp90b_lit[EST_LEVELS] = {LIT_CHEAP, LIT_COSTLY, SP90B_ALL_TESTS};
const unsigned est_online_sp90b_bit[EST_LEVELS] = {BIT_CHEAP, BIT_COSTLY, SP90B_ALL_TESTS};
/* The long window's estimators: those whose result falls with length (see "Long window"). */
#define LONG_TESTS (T(TUPLE) | T(LRS) | T(MULTI_MCW))
#undef T

/* The long window (see "Long window" above): the instance's last LONG_SYMS symbols, the bits
 * it was given per RUN_SEG segment of them, and the bound and budget they set. */
struct long_window {
	uint8_t *sym;      /* the window's symbols, oldest first */
	size_t n, size;    /* symbols held; allocated */
	uint64_t first;    /* the number of the oldest symbol held */
	uint64_t next;     /* while it grows: estimate when this many symbols have been produced */
	uint64_t first_t;  /* the oldest symbol held at the last estimate */
	uint64_t t;        /* the event time of the last estimate */
	double given[RUN_SEGS]; /* bits given, by segment (symbol number / RUN_SEG % RUN_SEGS) */
	double h;          /* the bound, bits per symbol (8 until the first estimate) */
	double budget;     /* bits that may still be given (H x symbols - given, and on) */
	double slack;      /* bits that may still go to credit before the next step's estimate
			    * is needed (see "Long window") */
	double given_since, kept_since; /* bits given since the last estimate; of them, those
					 * that did not go on to credit */
	uint64_t runs;     /* its estimates */
	uint32_t cutoff;   /* runs this long fail the health tests for good: not held here */
	bool out;          /* the run going on is the health tests', not the window's */
	enum sp90b_test by;
	/* MultiMCW, taken further at each estimate while symbols have only been appended to
	 * the window; NULL once one has left it (then it runs over all of the window). */
	struct sp90b_mcw *mcw;
	bool mcw_over;     /* ... for good */
};

/* The run window (see "Runs" above): per segment, its symbols, those equal to the one
 * before, and the longest run of equal symbols that reached into it. */
struct run_window {
	uint32_t n[RUN_SEGS], same[RUN_SEGS], longest[RUN_SEGS]; /* n: of the full segments */
	unsigned cur;      /* the segment filling */
	uint32_t left;     /* symbols it still takes */
	uint32_t run;      /* equal symbols in a row, the last one included */
	uint32_t cutoff;   /* runs this long fail the health tests: not counted here */
	uint32_t longest_all; /* the longest in the window when h was worked out */
	int last;          /* the symbol before; -1 before the first */
	double h;          /* the bound, bits per symbol */
};

struct sp90b_est {
	uint64_t quantum_ns, jiffy_ns;
	uint64_t merge_ns; /* est_merge_ns() */
	uint64_t every_ns; /* event time between estimated blocks */
	struct kernel_rule kernel; /* the kernel's rule, at full resolution only */
	uint64_t last_t;   /* the event before (merged or not) */
	uint32_t merged;   /* events merged in a row, sub-jiffy mode (est_merge_run()) */
	bool started;      /* last_t is set (sub-jiffy mode) */
	uint64_t symbols;  /* symbols produced so far */
	uint64_t blocks;   /* full blocks */
	uint64_t estimated; /* full blocks estimated */
	uint64_t estimated_t; /* the event time of the last estimated block's end */
	uint64_t costly_t, full_t;         /* ... and of the last estimate at each level */
	uint64_t costly_runs, full_runs;
	bool have_estimate;
	bool full_due;     /* the next estimated block runs every estimator */
	double h;          /* current min-entropy per symbol */
	double h_now;      /* current_h(): min(h, the run window's, the long window's) */
	const char *min_by;
	struct sp90b_view lit, bit; /* every estimator's latest result */
	struct run_window runs;
	struct long_window lw;
	double cap_bits;
	size_t fill;       /* symbols in buf */
	uint8_t buf[BLOCK];
};

static struct {
	unsigned users;
	struct sp90b_scratch *work;
	uint8_t *renumbered; /* the long window's symbols as sp90b_prepare() makes them */
	size_t renumbered_size;
} scratch;

/* The lesser of two bounds, none of them NaN (libm's fmin() is a call). */
static inline double min_d(double a, double b)
{
	return a < b ? a : b;
}

/* H in force: the latest estimate, at most the run window's and the long window's bounds. */
static double current_h(const struct sp90b_est *s)
{
	return min_d(min_d(s->h, s->runs.h), s->lw.h);
}

/* One of the three bounds changed: the H in force, kept for every event to read. */
static void h_changed(struct sp90b_est *s)
{
	s->h_now = current_h(s);
}

/* The run window counts the runs the health tests pass: those shorter than their
 * repetition count cutoff at what they claim (feed_pipeline.c: the cap, or less as the
 * estimate says). */
static void runs_cutoff(struct sp90b_est *s)
{
	double h = s->cap_bits > 0 ? s->cap_bits : 8;

	if (s->have_estimate && current_h(s) < h)
		h = current_h(s);
	h = fmin(fmax(h, HEALTH_CLAIM_MIN), 8);
	s->runs.cutoff = est_health_rct_cutoff(h, HEALTH_ALPHA_INTERMITTENT);
	s->lw.cutoff = est_health_rct_cutoff(h, HEALTH_ALPHA_PERMANENT);
}

static void *sp90b_create(const struct est_params *p)
{
	struct sp90b_est *s = xcalloc(1, sizeof(*s));

	s->quantum_ns = p->quantum_ns ? p->quantum_ns : 1;
	s->jiffy_ns = p->jiffy_ns;
	s->merge_ns = est_merge_ns(p);
	s->every_ns = p->estimate_every_ns ? p->estimate_every_ns : ESTIMATE_EVERY_NS;
	s->cap_bits = p->cap_bits;
	s->runs.h = 8;
	s->runs.left = RUN_SEG;
	s->runs.last = -1;
	s->lw.h = 8;
	s->lw.budget = INFINITY;
	s->lw.next = LONG_FIRST;
	s->lw.by = SP90B_N_TESTS;
	h_changed(s);
	runs_cutoff(s);
	if (!s->jiffy_ns)
		kernel_rule_init(&s->kernel, p);
	if (scratch.users++ == 0)
		scratch.work = sp90b_scratch_new();
	return s;
}

static void sp90b_destroy(void *state)
{
	struct sp90b_est *s = state;

	if (s->lw.sym) {
		util_wipe(s->lw.sym, s->lw.size);
		free(s->lw.sym);
	}
	sp90b_mcw_free(s->lw.mcw);
	util_wipe(s, sizeof(*s));
	free(s);
	if (--scratch.users == 0) {
		sp90b_scratch_free(scratch.work); /* wipes its buffers */
		scratch.work = NULL;
		if (scratch.renumbered) {
			util_wipe(scratch.renumbered, scratch.renumbered_size);
			free(scratch.renumbered);
		}
		scratch.renumbered = NULL;
		scratch.renumbered_size = 0;
	}
}

/* The results of the estimators in `ran` (of one view) replace the earlier ones. */
static void take(struct sp90b_view *keep, const struct sp90b_view *got, unsigned ran)
{
	for (unsigned t = 0; t < SP90B_N_TESTS; t++) {
		if (!(ran & SP90B_TEST_BIT(t)))
			continue;
		keep->valid[t] = got->valid[t];
		keep->h[t] = got->h[t];
	}
}

/* The least valid result of a view, at most h_max; its estimator in *by. */
static double least(const struct sp90b_view *v, double h_max, enum sp90b_test *by)
{
	double h = h_max;

	*by = SP90B_N_TESTS;
	for (unsigned t = 0; t < SP90B_N_TESTS; t++)
		if (v->valid[t] && v->h[t] < h) {
			h = v->h[t];
			*by = t;
		}
	return h;
}

/* The run window's bound, from its counts now. */
static void runs_bound(struct run_window *w)
{
	uint64_t n = 0, same = 0;
	uint32_t longest = 0;
	struct sp90b_pred p;

	w->n[w->cur] = RUN_SEG - w->left;
	for (unsigned i = 0; i < RUN_SEGS; i++) {
		n += w->n[i];
		same += w->same[i];
		longest = w->longest[i] > longest ? w->longest[i] : longest;
	}
	w->longest_all = longest;
	if (n < 2) {
		w->h = 8;
		return;
	}
	/* n - 1 guesses, same of them right, at most longest - 1 of them in a row. */
	sp90b_pred_finish(same, n - 1, longest ? longest - 1 : 0, 256, &p);
	w->h = p.h;
}

/* A run of w->run equal symbols ended: counted if the health tests let it through
 * (shorter than w->cutoff, runs_cutoff()). */
static void runs_end(struct run_window *w)
{
	unsigned c = w->cur;

	if (w->run >= w->cutoff)
		return;
	w->same[c] += w->run - 1;
	if (w->run > w->longest[c])
		w->longest[c] = w->run;
	if (w->run > w->longest_all)
		runs_bound(w);
}

/* The segment filling is full: the oldest leaves. */
static void runs_next_segment(struct run_window *w)
{
	unsigned c;

	w->n[w->cur] = RUN_SEG;
	c = w->cur = (w->cur + 1) % RUN_SEGS;
	w->n[c] = w->same[c] = w->longest[c] = 0;
	w->left = RUN_SEG;
	runs_bound(w);
}

/* One more symbol into the run window; a run is counted when it ends (runs_end()). A
 * comparison and a count a symbol: false unless the bound may have been worked out again. */
static inline bool runs_add(struct run_window *w, uint8_t symbol)
{
	bool again = false;

	if (symbol == w->last) {
		w->run++;
	} else {
		if (__builtin_expect(w->run > 1, 0)) {
			runs_end(w);
			again = true;
		}
		w->run = 1;
		w->last = symbol;
	}
	if (__builtin_expect(--w->left == 0, 0)) {
		runs_next_segment(w);
		again = true;
	}
	return again;
}

/* Has `every` of event time passed since `since`? (A clock that stepped back counts as
 * yes.) */
static bool due(uint64_t t_ns, uint64_t since, uint64_t every)
{
	return t_ns < since || t_ns - since >= every;
}

/* Symbols left the long window (a segment, or a run the health tests took): MultiMCW runs
 * over all of it from now on. */
static void long_mcw_over(struct long_window *w)
{
	sp90b_mcw_free(w->mcw);
	w->mcw = NULL;
	w->mcw_over = true;
}

/* MultiMCW over the long window (in scratch.renumbered, k values). While symbols have only
 * been appended to it, those since the last estimate are taken further: the same result, for
 * the new symbols' cost. */
static int long_mcw(struct long_window *w, unsigned k, struct sp90b_pred *out)
{
	if (w->mcw_over)
		return sp90b_multi_mcw(scratch.renumbered, w->n, k, out);
	if (!w->mcw)
		w->mcw = sp90b_mcw_new();
	sp90b_mcw_add(w->mcw, w->sym, w->n);
	return sp90b_mcw_result(w->mcw, w->n, k, out);
}

/* The greatest power of two at most symbols (and at most LONG_SYMS). */
static uint64_t long_pow2(uint64_t symbols)
{
	uint64_t pow2 = 1;

	while (pow2 * 2 <= symbols && pow2 < LONG_SYMS)
		pow2 *= 2;
	return pow2;
}

/* A step of the window's growth from symbols on: an eighth of a doubling, at least
 * LONG_STEP_MIN. */
static uint64_t long_step(uint64_t symbols)
{
	const uint64_t eighth = long_pow2(symbols) / LONG_STEPS;

	return eighth > LONG_STEP_MIN ? eighth : LONG_STEP_MIN;
}

/* The long window's estimators over all it holds; its bound, and the budget: the bits its
 * symbols may have been given at that bound, less those they were. */
static void long_estimate(struct sp90b_est *s, uint64_t t_ns)
{
	struct long_window *w = &s->lw;
	struct sp90b_t_tuple tt;
	struct sp90b_lrs lrs;
	struct sp90b_pred mcw;
	double given = 0;
	unsigned k;

	w->t = t_ns;
	w->first_t = w->first;
	if (scratch.renumbered_size < w->n) {
		free(scratch.renumbered);
		scratch.renumbered_size = w->size;
		scratch.renumbered = xmalloc(scratch.renumbered_size);
	}
	k = sp90b_prepare(w->sym, w->n, 8, scratch.renumbered);
	w->h = 8;
	w->by = SP90B_N_TESTS;
	if (k < 2) {
		w->h = 0; /* one value: nothing to credit, as in ea_non_iid */
	} else {
		if (sp90b_tuple_lrs(scratch.renumbered, w->n, k, &tt, &lrs) < 0)
			tt.valid = lrs.valid = false;
		if (tt.valid && tt.h < w->h) {
			w->h = tt.h;
			w->by = SP90B_T_TUPLE;
		}
		if (lrs.valid && lrs.h < w->h) {
			w->h = lrs.h;
			w->by = SP90B_T_LRS;
		}
		if (long_mcw(w, k, &mcw) == 0 && mcw.h < w->h) {
			w->h = mcw.h;
			w->by = SP90B_T_MULTI_MCW;
		}
	}
	for (unsigned i = 0; i < RUN_SEGS; i++)
		given += w->given[i];
	w->budget = w->h * (double)w->n - given;
	w->runs++;
	h_changed(s);
	runs_cutoff(s); /* the health tests claim the new bound too */
	/* Until the next estimate, what may go to credit: a share of what the next step's
	 * symbols would earn at the H in force (see "Long window"). */
	w->given_since = w->kept_since = 0;
	w->slack = LONG_SLACK * min_d(s->h_now, s->cap_bits > 0 ? s->cap_bits : 8) *
		   (double)long_step(s->symbols);
}

/* Did what the events were given since the last estimate go on to credit? Once the slack is
 * spent, or most of it if that is less. */
static inline bool long_credited(const struct long_window *w)
{
	return w->slack <= 0 ||
	       (w->given_since > 0 && 2 * (w->given_since - w->kept_since) >= w->given_since);
}

/* Is the long window's estimate due? While it grows (to LONG_SYMS), when it reaches next
 * (long_next()), if the slack is spent, its bound counts as zero or FULL_TIMES intervals of
 * event time have passed since the last; then once a segment has left it since the last,
 * after COSTLY_TIMES intervals if its bits went on to credit (long_credited()), else after
 * FULL_TIMES (and while its bound counts as zero). */
static inline bool long_due(const struct sp90b_est *s, uint64_t t_ns)
{
	const struct long_window *w = &s->lw;
	const bool stale = due(t_ns, w->t, FULL_TIMES * s->every_ns);

	if (s->symbols <= LONG_SYMS)
		return s->symbols >= w->next && (w->h < EST_MIN_BITS || w->slack <= 0 || stale);
	return w->first != w->first_t &&
	       (stale || (w->h >= EST_MIN_BITS && long_credited(w) &&
			  due(t_ns, w->t, COSTLY_TIMES * s->every_ns)));
}

/* The next estimate while the window grows: a step on; at the next doubling if the bound
 * counts as zero (a replayed or periodic source: the estimates of a long window of one cost
 * the most, and a few more symbols change nothing it earns). */
static void long_next(struct long_window *w, uint64_t symbols)
{
	if (w->h < EST_MIN_BITS)
		w->next = 2 * long_pow2(symbols);
	else
		w->next = symbols + long_step(symbols);
}

/* The long window is as large as it is allocated: the oldest segment leaves a full one,
 * and one still growing is given twice the room. */
static void long_room(struct long_window *w)
{
	if (w->n == LONG_SYMS) {
		long_mcw_over(w);
		memmove(w->sym, w->sym + RUN_SEG, w->n - RUN_SEG);
		w->n -= RUN_SEG;
		w->given[w->first / RUN_SEG % RUN_SEGS] = 0; /* the slot of the segment beginning */
		w->first += RUN_SEG;
	} else {
		size_t size = w->size ? 2 * w->size : BLOCK;
		uint8_t *sym = xmalloc(size);

		if (w->n) {
			memcpy(sym, w->sym, w->n);
			util_wipe(w->sym, w->size);
		}
		free(w->sym);
		w->sym = sym;
		w->size = size;
	}
}

/* One more symbol into the long window (long_room() when it is full). Each symbol adds the
 * bound to the budget. */
static inline void long_add(struct sp90b_est *s, uint8_t symbol, uint64_t t_ns)
{
	struct long_window *w = &s->lw;

	/* A run as long as the health tests' permanent repetition count cutoff is theirs: its
	 * symbols leave the window, and those after it do not enter. */
	if (s->runs.run < w->cutoff) {
		w->out = false;
	} else {
		if (!w->out) {
			size_t drop = s->runs.run - 1 < w->n ? s->runs.run - 1 : w->n;

			w->n -= drop;
			if (drop)
				long_mcw_over(w);
			if (w->h < 8)
				w->budget -= w->h * (double)drop;
			w->out = true;
		}
		return;
	}
	if (__builtin_expect(w->n == w->size, 0))
		long_room(w);
	w->sym[w->n++] = symbol;
	if (w->h < 8)
		w->budget += w->h;
	/* Neither is due (long_due()) unless the window reached next or lost a segment. A
	 * step the slack lets pass moves next on. */
	if (__builtin_expect(s->symbols >= w->next || w->first != w->first_t, 0)) {
		if (long_due(s, t_ns)) {
			long_estimate(s, t_ns);
			long_next(w, s->symbols);
		} else if (s->symbols >= w->next && s->symbols <= LONG_SYMS) {
			long_next(w, s->symbols);
		}
	}
}

/* The bits an event may be given, at most the long window's budget, which they use. */
static inline double long_take(struct sp90b_est *s, double bits)
{
	struct long_window *w = &s->lw;
	double use;

	if (bits <= 0 || w->h >= 8)
		return bits;
	bits = min_d(bits, w->budget > 0 ? w->budget : 0);
	use = s->cap_bits > 0 ? min_d(bits, s->cap_bits) : bits; /* what can be credited */
	w->budget -= use;
	w->slack -= use;
	w->given_since += use;
	w->given[(w->first + w->n - 1) / RUN_SEG % RUN_SEGS] += use;
	return bits;
}

/* Estimate over buf[0..n) with the estimators of `level` (EST_LEVEL_*). */
static void estimate(struct sp90b_est *s, size_t n, int level, uint64_t t_ns)
{
	unsigned lit = est_online_sp90b_lit[level], bit = est_online_sp90b_bit[level];
	struct sp90b_noniid_result a;
	enum sp90b_test lit_by, bit_by;
	double h_lit, h_bit;

	if (level >= EST_LEVEL_ALL) {
		s->full_due = false;
		s->full_t = t_ns;
		s->full_runs++;
	}
	if (level >= EST_LEVEL_COSTLY) {
		s->costly_t = t_ns;
		s->costly_runs++;
	}
	runs_bound(&s->runs);
	if (sp90b_noniid(scratch.work, s->buf, n, 8, lit, bit, &a) < 0 || a.k < 2) {
		/* One symbol value only: nothing to predict and nothing to credit, as in
		 * ea_non_iid. The other estimators' results are kept, not wiped (a wiped one
		 * would leave H to the cheap ones until it ran again), and the next estimated
		 * block runs every estimator. */
		s->h = 0;
		s->min_by = "single symbol";
		s->have_estimate = true;
		s->full_due = true;
		h_changed(s);
		runs_cutoff(s);
		return;
	}
	take(&s->lit, &a.literal, lit);
	if (a.n_bits) {
		take(&s->bit, &a.bitstring, bit);
	} else {
		/* Two values: ea_non_iid has no bitstring view. The earlier bitstring results
		 * still count (lower, never higher), and the next block runs everything. */
		s->full_due = true;
	}
	if (a.k > 2) { /* Collision, Markov, Compression apply to the symbols only if binary */
		s->lit.valid[SP90B_T_COLLISION] = s->lit.valid[SP90B_T_MARKOV] = false;
		s->lit.valid[SP90B_T_COMPRESSION] = false;
	}
	h_lit = least(&s->lit, 8, &lit_by);
	h_bit = 8 * least(&s->bit, 1, &bit_by);
	if (h_bit < h_lit) {
		s->h = h_bit;
		s->min_by = bit_by < SP90B_N_TESTS ? sp90b_bit_name(bit_by) : "8 bits";
	} else {
		s->h = h_lit;
		s->min_by = lit_by < SP90B_N_TESTS ? sp90b_test_name(lit_by) : "8 bits";
	}
	s->have_estimate = true;
	h_changed(s);
	runs_cutoff(s);
}

/* A full block is estimated if it is the first, or every_ns after the last one. */
static bool block_due(const struct sp90b_est *s, uint64_t t_ns)
{
	return s->estimated == 0 || due(t_ns, s->estimated_t, s->every_ns);
}

/* Which estimators an estimated block runs (see the schedule above). */
static int level_due(const struct sp90b_est *s, uint64_t t_ns)
{
	if (s->full_due || due(t_ns, s->full_t, FULL_TIMES * s->every_ns))
		return EST_LEVEL_ALL;
	if (due(t_ns, s->costly_t, COSTLY_TIMES * s->every_ns))
		return EST_LEVEL_COSTLY;
	return EST_LEVEL_CHEAP;
}

static void push(struct sp90b_est *s, uint8_t symbol, uint64_t t_ns)
{
	double runs_h = s->runs.h;

	if (runs_add(&s->runs, symbol) && s->runs.h != runs_h) {
		h_changed(s);
		runs_cutoff(s);
	}
	s->buf[s->fill++] = symbol;
	s->symbols++;
	long_add(s, symbol, t_ns);
	if (s->fill == BLOCK) {
		if (block_due(s, t_ns)) {
			estimate(s, BLOCK, level_due(s, t_ns), t_ns);
			s->estimated++;
			s->estimated_t = t_ns;
		}
		s->blocks++;
		s->fill = 0;
	} else if (s->blocks == 0 && (s->fill == FIRST_ESTIMATE || s->fill == SECOND_ESTIMATE)) {
		estimate(s, s->fill, EST_LEVEL_ALL, t_ns);
	}
}

static void sp90b_add(void *state, const uint64_t *t_ns, size_t n, struct est_out *out)
{
	struct sp90b_est *s = state;

	for (size_t i = 0; i < n; i++) {
		uint64_t t = t_ns[i];
		double bits = INFINITY;

		if (s->jiffy_ns) {
			/* An event within a quantum (or a batch) of the one before shares its
			 * timing: merged, it earns nothing here (whatever the kernel's own
			 * rule makes of it is the kernel's). */
			if (s->started && est_merge_run(t, s->last_t, s->merge_ns, &s->merged))
				out[i] = (struct est_out){.merged = true};
			else
				out[i] = (struct est_out){
					.have_symbol = true,
					.symbol = (uint8_t)est_quanta(t % s->jiffy_ns, s->quantum_ns),
				};
			s->started = true;
			s->last_t = t;
		} else {
			/* The kernel rule's bits; it has a symbol once there is a delta. */
			kernel_rule_add(&s->kernel, t, &out[i]);
			bits = out[i].bits;
			/* Ours is the delta in quanta; a clock that steps back gives 0, not a huge
			 * one. */
			if (out[i].have_symbol)
				out[i].symbol = (uint8_t)est_quanta(t > s->last_t ? t - s->last_t : 0,
								    s->quantum_ns);
			s->last_t = t;
		}
		if (out[i].have_symbol)
			push(s, out[i].symbol, t);
		out[i].bits = !s->have_estimate || out[i].merged ? 0
										 : long_take(s, min_d(bits, s->h_now));
	}
}

/* Bits the events were given that did not go on to credit: the long window's slack has
 * them back (its budget does not: what the window's symbols were given stands). */
static void sp90b_uncredited(void *state, double bits)
{
	struct sp90b_est *s = state;

	s->lw.slack += bits;
	s->lw.kept_since += bits;
}

/* What set the long window's bound. */
static const char *long_by(enum sp90b_test by)
{
	switch (by) {
	case SP90B_T_TUPLE:
		return "t-Tuple, last million";
	case SP90B_T_LRS:
		return "LRS, last million";
	case SP90B_T_MULTI_MCW:
		return "MultiMCW, last million";
	default:
		return "single symbol, last million";
	}
}

static void sp90b_report(void *state, struct est_report *r)
{
	const struct sp90b_est *s = state;

	memset(r, 0, sizeof(*r));
	r->symbols = s->symbols;
	r->blocks = s->blocks;
	r->estimated = s->estimated;
	r->costly_runs = s->costly_runs;
	r->full_runs = s->full_runs;
	r->long_runs = s->lw.runs;
	r->long_h = s->lw.h;
	r->long_budget = s->lw.budget;
	r->long_symbols = s->lw.n;
	r->have_estimate = s->have_estimate;
	r->h = s->have_estimate ? current_h(s) : 0;
	r->min_by = !s->have_estimate ? "none yet"
		    : s->lw.h < fmin(s->h, s->runs.h) ? long_by(s->lw.by)
		    : s->runs.h < s->h ? "runs of one interval"
				       : s->min_by;
	for (unsigned t = 0; t < SP90B_N_TESTS; t++) {
		r->valid_lit[t] = s->lit.valid[t];
		r->h_lit[t] = s->lit.h[t];
		r->valid_bit[t] = s->bit.valid[t];
		r->h_bit[t] = s->bit.h[t];
	}
}

const struct est_ops est_online_sp90b_ops = {
	.name = "sp800-90b",
	.create = sp90b_create,
	.add = sp90b_add,
	.destroy = sp90b_destroy,
	.report = sp90b_report,
	.uncredited = sp90b_uncredited,
};
