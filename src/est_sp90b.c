/* est_sp90b: the online SP 800-90B estimator: min(kernel rule, literal min-entropy, cap). */
#include "autoconf.h"

#include "est.h"
#include "sp80090b.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Symbols. At full resolution a symbol is the low 8 bits of the quantised delta,
 * (t - t_prev) / quantum; the first event has none. For events the kernel already credits
 * at jiffy resolution (jiffy_ns > 0) it is the low 8 bits of the event's phase inside its
 * jiffy, (t % jiffy) / quantum: what the kernel's own timestamp does not see, so nothing is
 * counted twice. Every event has a phase, the first included.
 *
 * Credit per event = min(kernel Δ/Δ²/Δ³ rule, H, cap). H is the SP 800-90B literal
 * min-entropy per symbol (one symbol per event) over the instance's recent symbols, 0 until
 * the first H exists. The kernel rule (est_kernel's, on the same timestamps) applies at full
 * resolution only: in sub-jiffy mode it is what the kernel already counts.
 *
 * Schedule. Symbols are buffered (4 KB per instance) into non-overlapping blocks of
 * BLOCK = 4096, the least MultiMCW runs on. The first H comes from the first 1024 symbols
 * (all estimators but MultiMCW, which NIST skips below 4096, as sp90b_literal does), is
 * refined at 2048, and from then on every full block gives a new H:
 *  - MCV, MultiMCW and Lag run on every block;
 *  - MultiMMC and LZ78Y (one shared pass over classes of equal contexts) run on the first
 *    block and on every COSTLY_EVERY-th one after it.
 * A block is estimated only if a second of event time has passed since the last estimated
 * one (the first always is): a slow source (keys, a disk at a few hundred I/O a second) has
 * every block estimated, a flood of packets about one block a second, so the estimator's
 * cost per event falls with the rate (at 60,000 packets a second, by about 15 times).
 * Between estimates the last H stands, and the health tests still see every symbol; what
 * a change of the source could earn before the next estimate is bounded by the per-second
 * cap (cap_bits_per_second) times that second. "Every COSTLY_EVERY-th" below counts
 * estimated blocks.
 * H = min(latest MCV/MultiMCW/Lag result, latest MultiMMC/LZ78Y result). On blocks where all
 * five run (and at 1024 and 2048) H is exactly sp90b_literal() over those symbols at 8 bits.
 * In between, the dictionary predictors' last word stands, so a source that turns
 * predictable in a way only they see (a replay longer than Lag's 128) is caught at most
 * COSTLY_EVERY blocks later; until then credit stays at the lower of the two results.
 *
 * Why 8: CPU per event of est_add, amortised over 5M events (ns, CLOCK_PROCESS_CPUTIME_ID,
 * the 2-core development machine, busy; figures move by +-20% with its load):
 *
 *   MultiMMC/LZ78Y every      1 block   8 blocks
 *   random deltas               114        90
 *   disk-like (2/3 at 100 us)   296       154
 *   two intervals, at random    528       200
 *   512-delta replay            529       135
 *   two intervals, alternating  387       135
 *   exactly 1 ms                 18        14
 *
 * MCV+MultiMCW+Lag cost 50-110 ns per symbol; MultiMMC+LZ78Y 30 (random) to 350 (few
 * symbols, replays: every context recurs) per symbol of the block they run on. At 8 the
 * worst case stays near 200 ns beside the pipeline's other ~40 (budget: 300 per sample).
 *
 * A 4096-symbol block can show at most about 6.6 bits per symbol even from a perfect
 * source (MCV's 99% bound on the commonest of 256 values), well above the class caps.
 *
 * Scratch (the renumbered block and the predictors' work area, about 250 KB) is shared by
 * all instances: the daemon is single-threaded and an estimate is done within one call.
 */

#define BLOCK 4096
#define FIRST_ESTIMATE 1024
#define SECOND_ESTIMATE 2048
#define COSTLY_EVERY 8
#define ESTIMATE_EVERY_NS NS_PER_SEC

struct sp90b_est {
	uint64_t quantum_ns, jiffy_ns;
	void *kernel;      /* est_kernel's state, at full resolution only */
	uint64_t last_t;
	uint64_t symbols;  /* symbols produced so far */
	uint64_t blocks;   /* full blocks */
	uint64_t estimated; /* full blocks estimated */
	uint64_t estimated_t; /* the event time of the last estimated block's end */
	bool have_last, have_estimate;
	double h;          /* current min-entropy per symbol */
	double h_cheap, h_costly;
	enum sp90b_estimator min_by;
	double h_each[SP90B_N_ESTIMATORS];
	bool valid[SP90B_N_ESTIMATORS];
	size_t fill;       /* symbols in buf */
	uint8_t buf[BLOCK];
};

static struct {
	unsigned users;
	struct sp90b_work *work;
	uint8_t sym[BLOCK];
} scratch;

static void *sp90b_create(const struct est_params *p)
{
	struct sp90b_est *s = xcalloc(1, sizeof(*s));

	s->quantum_ns = p->quantum_ns ? p->quantum_ns : 1;
	s->jiffy_ns = p->jiffy_ns;
	if (!s->jiffy_ns)
		s->kernel = est_kernel_ops.create(p);
	if (scratch.users++ == 0)
		scratch.work = sp90b_work_new();
	return s;
}

static void sp90b_destroy(void *state)
{
	struct sp90b_est *s = state;

	if (s->kernel)
		est_kernel_ops.destroy(s->kernel);
	wipe(s, sizeof(*s));
	free(s);
	if (--scratch.users == 0) {
		sp90b_work_free(scratch.work);
		scratch.work = NULL;
		wipe(scratch.sym, sizeof(scratch.sym));
	}
}

/* The least valid result among estimators [from, to), or +inf. */
static double least(const struct sp90b_est *s, unsigned from, unsigned to)
{
	double h = INFINITY;

	for (unsigned e = from; e < to; e++)
		if (s->valid[e] && s->h_each[e] < h)
			h = s->h_each[e];
	return h;
}

static void set_result(struct sp90b_est *s, enum sp90b_estimator e, bool ok, double h)
{
	s->valid[e] = ok;
	s->h_each[e] = ok ? h : 0;
}

/* Estimate over buf[0..n): MCV, MultiMCW and Lag always; MultiMMC and LZ78Y if costly. */
static void estimate(struct sp90b_est *s, size_t n, bool costly)
{
	unsigned k = sp90b_prepare(s->buf, n, 8, scratch.sym);
	struct sp90b_pred mcw = {0}, lag = {0}, mmc = {0}, lz78y = {0};
	struct sp90b_mcv mcv = {0};

	if (k < 2) {
		/* One symbol value only: nothing to predict and nothing to credit, as in
		 * sp90b_literal. */
		for (unsigned e = 0; e < SP90B_N_ESTIMATORS; e++)
			if (costly || e < SP90B_MULTI_MMC)
				set_result(s, e, false, 0);
		s->h_cheap = 0;
		if (costly)
			s->h_costly = 0;
	} else {
		bool ok;

		ok = sp90b_mcv(scratch.sym, n, k, &mcv) == 0;
		set_result(s, SP90B_MCV, ok, mcv.h);
		ok = sp90b_multi_mcw(scratch.sym, n, k, &mcw) == 0;
		set_result(s, SP90B_MULTI_MCW, ok, mcw.h);
		ok = sp90b_lag(scratch.sym, n, k, &lag) == 0;
		set_result(s, SP90B_LAG, ok, lag.h);
		s->h_cheap = least(s, SP90B_MCV, SP90B_MULTI_MMC);
		if (costly) {
			ok = sp90b_dict_predictors(scratch.work, scratch.sym, n, k, &mmc,
						   &lz78y) == 0;
			set_result(s, SP90B_MULTI_MMC, ok, mmc.h);
			set_result(s, SP90B_LZ78Y, ok, lz78y.h);
			s->h_costly = least(s, SP90B_MULTI_MMC, SP90B_N_ESTIMATORS);
		}
	}
	s->h = fmin(s->h_cheap, s->h_costly);
	/* Name the first estimator holding the minimum, as sp90b_literal does. */
	s->min_by = SP90B_N_ESTIMATORS;
	for (unsigned e = SP90B_MCV; e < SP90B_N_ESTIMATORS; e++)
		if (s->valid[e] && s->h_each[e] == s->h) {
			s->min_by = e;
			break;
		}
	s->have_estimate = true;
}

/* A full block is estimated if it is the first, or if a second of event time has passed
 * since the last one estimated (a clock that stepped back counts as due). */
static bool block_due(const struct sp90b_est *s, uint64_t t_ns)
{
	return s->estimated == 0 || t_ns < s->estimated_t ||
	       t_ns - s->estimated_t >= ESTIMATE_EVERY_NS;
}

static void push(struct sp90b_est *s, uint8_t symbol, uint64_t t_ns)
{
	s->buf[s->fill++] = symbol;
	s->symbols++;
	if (s->fill == BLOCK) {
		if (block_due(s, t_ns)) {
			estimate(s, BLOCK, s->estimated % COSTLY_EVERY == 0);
			s->estimated++;
			s->estimated_t = t_ns;
		}
		s->blocks++;
		s->fill = 0;
	} else if (s->blocks == 0 && (s->fill == FIRST_ESTIMATE || s->fill == SECOND_ESTIMATE)) {
		estimate(s, s->fill, true);
	}
}

static void sp90b_add(void *state, uint64_t t_ns, struct est_out *out)
{
	struct sp90b_est *s = state;
	double bits = INFINITY;

	if (s->jiffy_ns) {
		out->have_symbol = true;
		out->symbol = (uint8_t)(t_ns % s->jiffy_ns / s->quantum_ns);
	} else {
		struct est_out k = {0};

		est_kernel_ops.add(s->kernel, t_ns, &k);
		bits = k.bits;
		if (s->have_last) {
			/* A clock that steps back gives delta 0, not a huge one. */
			uint64_t delta = t_ns > s->last_t ? t_ns - s->last_t : 0;

			out->have_symbol = true;
			out->symbol = (uint8_t)(delta / s->quantum_ns);
		}
		s->have_last = true;
		s->last_t = t_ns;
	}
	if (out->have_symbol)
		push(s, out->symbol, t_ns);
	out->bits = s->have_estimate ? fmin(bits, s->h) : 0;
}

static void sp90b_report(void *state, struct est_report *r)
{
	const struct sp90b_est *s = state;

	memset(r, 0, sizeof(*r));
	r->symbols = s->symbols;
	r->blocks = s->blocks;
	r->estimated = s->estimated;
	r->have_estimate = s->have_estimate;
	r->h = s->have_estimate ? s->h : 0;
	r->min_by = s->have_estimate ? sp90b_name(s->min_by) : "none yet";
	for (unsigned e = 0; e < SP90B_N_ESTIMATORS; e++) {
		r->valid[e] = s->valid[e];
		r->h_each[e] = s->h_each[e];
	}
}

const struct est_ops est_sp90b_ops = {
	.name = "sp800-90b",
	.create = sp90b_create,
	.add = sp90b_add,
	.destroy = sp90b_destroy,
	.report = sp90b_report,
};
