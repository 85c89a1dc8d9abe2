/* est_90b: MCV, MultiMCW and Lag estimators, the predictors' common bound, and the minimum. */
#include "autoconf.h"

#include "est_90b.h"
#include "est_90b_num.h"
#include "util.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Lag: expected repeats per symbol above which the bit-sliced count is the faster. */
#define LAG_SLICED_ABOVE 4


unsigned sp90b_prepare(const uint8_t *raw, size_t n, unsigned bits, uint8_t *sym)
{
	unsigned mask = (1U << bits) - 1;
	unsigned char present[256] = {0};
	uint8_t rank[256];
	unsigned k = 0;
	size_t i;

	for (i = 0; i < n; i++)
		present[raw[i] & mask] = 1;
	for (i = 0; i < 256; i++)
		if (present[i])
			rank[i] = (uint8_t)k++;
	/* Renumbering keeps the order of values, so the predictors' tie-breaks
	 * ("prefer the larger symbol") fall as they do in NIST's tool. */
	for (i = 0; i < n; i++)
		sym[i] = rank[raw[i] & mask];
	return k;
}

static bool args_ok(const uint8_t *sym, size_t n, unsigned k, size_t min_n)
{
	return sym && k >= 2 && k <= 256 && n >= min_n && n <= SP90B_MAX_SAMPLES;
}

int sp90b_mcv(const uint8_t *sym, size_t n, unsigned k, struct sp90b_mcv *out)
{
	uint64_t counts[256] = {0};
	uint64_t mode = 0;
	double p;
	size_t i;

	if (!args_ok(sym, n, k, 2))
		return -1;
	for (i = 0; i < n; i++)
		counts[sym[i]]++;
	for (i = 0; i < k; i++)
		if (counts[i] > mode)
			mode = counts[i];
	p = (double)mode / (double)n;
	out->mode = mode;
	out->p_hat = p;
	out->p_u = fmin(1.0, p + Z_ALPHA * sqrt(p * (1.0 - p) / ((double)n - 1.0)));
	out->h = -log2(out->p_u);
	return 0;
}

/*
 * log of the probability that n predictions with success rate p contain no run of r
 * successes (SP 800-90B §6.3.7 step 6, the "P_local" equation), as NIST evaluates it: the
 * root x of 1 - x + q p^r x^(r+1) = 0 by fixed-point iteration, in long double.
 */
static double run_probability_log(long double p, long r, long n)
{
	long double q = 1.0L - p, x = 1.0L, xlast = 0.0L, lr = (long double)r;
	long double qpr = q * powl(p, lr); /* (q p^r) x^(r+1), grouped as NIST's is */
	int i;

	for (i = 0; i <= 65 && (x - xlast) > LDBL_EPSILON * x; i++) {
		xlast = x;
		/* powl(1, y) is exactly 1 (C11 F.10.4.4): the first step, at a fifth of the cost of
		 * this search, needs no powl. */
		x = 1.0L + qpr * (x == 1.0L ? 1.0L : powl(x, lr + 1.0L));
	}
	return (double)(logl(1.0L - p * x) - logl((lr + 1.0L - lr * x) * q) -
			((long double)n + 1.0L) * logl(x));
}

/* run_probability_log() for sp90b_bisect(). */
struct run_args {
	long r, n;
};

static double run_probability_f(double p, void *arg)
{
	const struct run_args *a = arg;

	return run_probability_log(p, a->r, a->n);
}

/*
 * P_local: the p in [lo, 1] at which run_probability_log() equals log(0.99), by NIST's
 * bisection with its stopping rules, so that the result matches theirs bit for bit (the
 * function is only loosely monotonic in floating point; where it misbehaves NIST returns the
 * conservative end of the bracket, and so do we).
 */
static double p_local_search(long r, long n, double lo)
{
	struct run_args a = {r, n};

	return sp90b_bisect(log(0.99), lo, 1.0, run_probability_f, &a, 1.0);
}

/* A point of the bisection and f's value there, within err (0: exact). */
struct bisect_point {
	double p, v, err;
};

struct bisect {
	double (*f)(double, void *), (*fast)(double, void *, double *);
	void *arg;
};

static struct bisect_point bisect_eval(const struct bisect *b, double p)
{
	struct bisect_point x = {.p = p};

	if (b->fast)
		x.v = b->fast(p, b->arg, &x.err);
	else
		x.v = b->f(p, b->arg);
	return x;
}

/*
 * Makes x exact if it is too close to y (within both errors, with room for what
 * rel_eps_equal() takes as equal) for comparisons of the two to be sure of their outcome,
 * or not finite. An infinite y (a bracket's end not yet evaluated) is never close.
 */
static void bisect_settle(const struct bisect *b, struct bisect_point *x, double y, double y_err)
{
	double room = 2 * (x->err + y_err) + 16 * DBL_EPSILON * fmax(fabs(x->v), fabs(y));

	if (x->err > 0 && (!isfinite(x->v) || (!isinf(y) && !(fabs(x->v - y) > room))))
		*x = (struct bisect_point){.p = x->p, .v = b->f(x->p, b->arg)};
}

/* The same for both: each is made exact if the two are close. */
static void bisect_settle2(const struct bisect *b, struct bisect_point *x, struct bisect_point *y)
{
	bisect_settle(b, x, y->v, y->err);
	bisect_settle(b, y, x->v, x->err);
}

double sp90b_bisect_approx(double target, double lo, double hi, double (*f)(double, void *),
			   double (*fast)(double, void *, double *), void *arg, double on_failure)
{
	const struct bisect b = {f, fast, arg};
	struct bisect_point l = {lo, INFINITY, 0}, h = {hi, -INFINITY, 0}, m;
	double p;
	int j;

	m = bisect_eval(&b, (lo + hi) / 2.0);
	for (j = 0; j < BISECT_ITER_MAX; j++) {
		bisect_settle(&b, &m, target, 0);
		if (rel_eps_equal(m.v, target, DBL_MIN, DBL_EPSILON, 4))
			break;
		if (target < m.v)
			l = m;
		else
			h = m;
		if (l.p >= h.p)
			return fmin(fmax(l.p, h.p), hi);
		bisect_settle(&b, &l, target, 0);
		bisect_settle(&b, &h, target, 0);
		if (!in_closed(l.p, lo, hi) || !in_closed(h.p, lo, hi) ||
		    !in_closed(target, l.v, h.v))
			return on_failure;
		p = (l.p + h.p) / 2.0;
		if (!in_open(p, l.p, h.p) || !islessgreater(m.p, p))
			return h.p;
		m = bisect_eval(&b, p);
		bisect_settle2(&b, &m, &l);
		bisect_settle2(&b, &m, &h);
		if (!in_closed(m.v, l.v, h.v))
			return h.p;
	}
	return m.p;
}

double sp90b_bisect(double target, double lo, double hi, double (*f)(double, void *), void *arg,
		    double on_failure)
{
	return sp90b_bisect_approx(target, lo, hi, f, NULL, arg, on_failure);
}

void sp90b_pred_finish(uint64_t c, uint64_t n, uint64_t max_run, unsigned k,
		       struct sp90b_pred *out)
{
	double cur = 1.0 / (double)k, pg, pgp;
	long r = (long)max_run + 1;

	pg = (double)c / (double)n;
	if (pg > 0)
		pgp = fmin(1.0, pg + Z_ALPHA * sqrt(pg * (1.0 - pg) / ((double)n - 1.0)));
	else
		pgp = 1.0 - pow(0.01, 1.0 / (double)n);
	cur = fmax(cur, pgp);
	out->p_local = -1.0;
	/* P_local only matters if a run this long would be unlikely at the current bound. */
	if (cur < 1.0 && run_probability_log(cur, r, (long)n) > log(0.99)) {
		out->p_local = p_local_search(r, (long)n, cur);
		cur = fmax(cur, out->p_local);
	}
	out->c = c;
	out->r = (uint64_t)r;
	out->n = n;
	out->p_global = pg;
	out->p_global_prime = pgp;
	out->h = -log2(cur);
}

/*
 * MultiMCW, §6.3.7: four predictors, each guessing the most common symbol of the last w
 * symbols (w = 63, 255, 1023, 4095; ties go to the symbol seen most recently), and a
 * scoreboard choosing whose guess counts.
 */
enum { MCW_NW = 4 };
static const long mcw_w[MCW_NW] = {63, 255, 1023, 4095};

struct mcw_board {
	uint64_t score[MCW_NW], c, run, max_run;
	unsigned winner;
};

/*
 * A step of the scoreboard: right holds the predictors whose window is full and that
 * guessed right (bit j: predictor j). The winner's guess counts, then each of those gains
 * a point. Without branches on whether a guess was right, a coin toss on random bits;
 * `sparse` (many symbols) adds one on whether any was, which is then seldom so.
 */
static inline __attribute__((always_inline)) void mcw_board_step(struct mcw_board *b,
								 unsigned right, bool sparse)
{
	bool hit = (right >> b->winner) & 1;
	uint64_t high = b->score[b->winner]; /* score[winner], kept in a register */

	if (sparse && !right) {
		b->run = 0;
		return;
	}
	b->c += hit;
	b->run = pick(hit, b->run + 1, 0);
	b->max_run = pick(b->run > b->max_run, b->run, b->max_run);
#pragma GCC unroll 4
	for (unsigned j = 0; j < MCW_NW; j++) {
		bool r = (right >> j) & 1;
		uint64_t v = b->score[j] += r;
		bool take = r & (v >= high);

		b->winner = (unsigned)pick(take, j, b->winner);
		high = pick(take, v, high);
	}
}

/*
 * The general predictors: window counts are kept incrementally; the mode is searched for
 * again only when a symbol equal to it leaves the window, as NIST does. With many symbols
 * we also count how many have each count: when the new top count is held by one symbol
 * only, and that is the one that came or the one that left (the usual case where one
 * symbol dominates), no search is needed. With few, searching costs less than that
 * bookkeeping. The state is a struct so that a sequence that only grows can be taken
 * further, symbol by symbol, where the last call left it (sp90b_mcw_add()).
 */
#define MCW_SEARCH_MAX_K 16
static const long mcw_nat_off[MCW_NW] = {0, 64, 64 + 256, 64 + 256 + 1024};

struct sp90b_mcw {
	long cnt[MCW_NW][256], pos[MCW_NW][256], max_cnt[MCW_NW];
	uint16_t nat_all[64 + 256 + 1024 + 4096]; /* at mcw_nat_off[j] + c: symbols with
						   * count c in window j */
	uint8_t freq[MCW_NW];
	unsigned k;    /* the symbols are below k */
	bool hist;     /* keep nat */
	long i;        /* symbols taken */
	struct mcw_board b;
};

static struct sp90b_mcw *mcw_new(unsigned k)
{
	struct sp90b_mcw *m = xcalloc(1, sizeof(*m));

	m->k = k;
	m->hist = k > MCW_SEARCH_MAX_K;
	return m;
}

/* Symbol i of sym (those before it taken already): the guesses of the predictors whose
 * window is full, then each window takes it (and, once full, lets its oldest go). */
static inline __attribute__((always_inline)) void mcw_step(struct sp90b_mcw *restrict m,
							   const uint8_t *restrict sym, long i)
{
	const long *w = mcw_w;
	const uint8_t x = sym[i];
	unsigned j, s;

	if (i >= w[0]) {
		unsigned right = 0;

		for (j = 0; j < MCW_NW; j++)
			right |= (unsigned)((i >= w[j]) & (m->freq[j] == x)) << j;
		mcw_board_step(&m->b, right, true);
	}
	for (j = 0; j < MCW_NW; j++) {
		uint16_t *nat = m->nat_all + mcw_nat_off[j];
		long *cnt = m->cnt[j];
		uint8_t old;
		long top;

		if (i < w[j]) { /* the window fills */
			if (m->hist) {
				nat[cnt[x]]--;
				nat[cnt[x] + 1]++;
			}
			if (m->max_cnt[j] <= ++cnt[x]) {
				m->max_cnt[j] = cnt[x];
				m->freq[j] = x;
			}
			m->pos[j][x] = i;
			continue;
		}
		old = sym[i - w[j]];
		if (m->hist && old != x) {
			nat[cnt[old]]--;
			nat[cnt[old] - 1]++;
			nat[cnt[x]]--;
			nat[cnt[x] + 1]++;
		}
		cnt[old]--;
		cnt[x]++;
		m->pos[j][x] = i;
		if (old != m->freq[j] && m->max_cnt[j] <= cnt[x]) {
			m->max_cnt[j] = cnt[x];
			m->freq[j] = x;
			continue;
		}
		if (old != m->freq[j])
			continue;
		/* One came and one left: the top count is within one of the old. */
		top = m->max_cnt[j] + 1;
		if (m->hist && (top > w[j] || !nat[top]))
			top = nat[m->max_cnt[j]] ? m->max_cnt[j] : m->max_cnt[j] - 1;
		if (m->hist && nat[top] == 1 && (cnt[x] == top || cnt[old] == top)) {
			m->max_cnt[j] = top;
			m->freq[j] = cnt[x] == top ? x : old;
		} else {
			long max_pos = i - w[j];

			m->max_cnt[j]--;
			for (s = 0; s < m->k; s++) {
				if (m->max_cnt[j] < cnt[s] ||
				    (m->max_cnt[j] == cnt[s] && max_pos <= m->pos[j][s])) {
					m->max_cnt[j] = cnt[s];
					m->freq[j] = (uint8_t)s;
					max_pos = m->pos[j][s];
				}
			}
		}
	}
}

static void mcw_symbols(const uint8_t *sym, size_t n, unsigned k, struct mcw_board *b)
{
	struct sp90b_mcw *m = mcw_new(k);

	for (long i = 0; i < (long)n; i++)
		mcw_step(m, sym, i);
	*b = m->b;
	free(m);
}

struct sp90b_mcw *sp90b_mcw_new(void)
{
	return mcw_new(256);
}

void sp90b_mcw_add(struct sp90b_mcw *m, const uint8_t *sym, size_t n)
{
	for (long i = m->i; i < (long)n; i++)
		mcw_step(m, sym, i);
	if ((long)n > m->i)
		m->i = (long)n;
}

int sp90b_mcw_result(const struct sp90b_mcw *m, size_t n, unsigned k, struct sp90b_pred *out)
{
	if (k < 2 || k > 256 || (long)n != m->i || n < SP90B_MCW_MIN_SAMPLES ||
	    n > SP90B_MAX_SAMPLES)
		return -1;
	sp90b_pred_finish(m->b.c, n - (size_t)mcw_w[0], m->b.max_run, k, out);
	return 0;
}

void sp90b_mcw_free(struct sp90b_mcw *m)
{
	if (!m)
		return;
	util_wipe(m, sizeof(*m));
	free(m);
}

/*
 * Bits: a window of odd length holds no tie, so its most common symbol (what NIST's
 * incremental search finds too) is the majority, from a running count of ones.
 */
static void mcw_bits(const uint8_t *sym, size_t n, struct mcw_board *b)
{
	long ones[MCW_NW] = {0}, i, len = (long)n;
	unsigned j, full = 0; /* bit j: window j is full, so predictor j guesses */

	for (i = 0; i < len; i++) {
		unsigned guess_one = 0;

		for (j = 0; j < MCW_NW; j++) {
			full |= (unsigned)(i == mcw_w[j]) << j;
			guess_one |= (unsigned)(2 * ones[j] > mcw_w[j]) << j;
		}
		if (full)
			mcw_board_step(b, (sym[i] ? guess_one : ~guess_one) & full, false);
		for (j = 0; j < MCW_NW; j++)
			ones[j] += sym[i] - ((full >> j) & 1 ? sym[i - mcw_w[j]] : 0);
	}
}

int sp90b_multi_mcw(const uint8_t *sym, size_t n, unsigned k, struct sp90b_pred *out)
{
	struct mcw_board b = {0};

	if (!args_ok(sym, n, k, SP90B_MCW_MIN_SAMPLES))
		return -1;
	if (k == 2)
		mcw_bits(sym, n, &b);
	else
		mcw_symbols(sym, n, k, &b);
	sp90b_pred_finish(b.c, n - (size_t)mcw_w[0], b.max_run, k, out);
	return 0;
}

/*
 * Lag, §6.3.8: 128 predictors, predictor d guessing the symbol d+1 back; the one with the
 * best score (ties: the one that most recently reached it) makes the counted guess. Only
 * the lags at which the new symbol repeats gain a point. Where repeats are rare (many
 * symbols, evenly spread) we walk a chain of earlier occurrences of the same symbol
 * (nearest first, as NIST's ring buffers do) instead of testing all 128 lags; where they
 * are common, all 128 scores are counted at once, bit-sliced (lag_sliced).
 */
enum { LAG_D = 128 };

/* Lag by walking, for each symbol, its earlier occurrences within reach. */
static void lag_chained(const uint8_t *sym, size_t n, uint64_t *c, uint64_t *max_run)
{
	long last[256], prev[LAG_D];
	uint64_t score[LAG_D] = {0}, high = 0, run = 0;
	long i, p, len = (long)n;
	unsigned winner = 0;

	for (i = 0; i < 256; i++)
		last[i] = -1;
	last[sym[0]] = 0;
	prev[0] = -1;

	for (i = 1; i < len; i++) {
		uint8_t x = sym[i];

		if (x == sym[i - (long)winner - 1]) {
			++*c;
			if (++run > *max_run)
				*max_run = run;
		} else {
			run = 0;
		}
		/* prev[] is a ring: slot p % D still describes p as long as i - p <= D. */
		for (p = last[x]; p >= 0 && i - p <= LAG_D; p = prev[p % LAG_D]) {
			unsigned off = (unsigned)(i - p - 1);

			if (++score[off] >= high) {
				winner = off;
				high = score[off];
			}
		}
		prev[i % LAG_D] = last[x];
		last[x] = i;
	}
}

/*
 * The same, counted for all 128 lags at once. Ascending d, NIST's winner is the last lag
 * whose new score reaches the running high; so the winner always holds the greatest score,
 * and the new winner is the largest d among the lags hit that were at most one behind it,
 * those level with it first. So what is kept is how far each lag is behind the winner, as
 * bit planes (plane b holds bit b of every lag's deficit, lag d in bit d): the lags level
 * with it and one behind are read off the planes, and a step adds one to the deficits of
 * the lags that missed (when the greatest score rose) or takes one off those that hit
 * (else), a ripple-carry over the planes. Where the symbol at i appears in the last 128
 * comes from a 128-bit ring per symbol (slot -p mod 128 for position p, so that a rotation
 * lines it up with the lags).
 */
static void lag_sliced(const uint8_t *sym, size_t n, uint64_t *c, uint64_t *max_run)
{
	uint64_t ring[256][2] = {{0}}, plane[33][2] = {{0}}, run = 0;
	unsigned winner = 0, top = 1, b; /* planes top.. are zero */
	size_t i;

	ring[sym[0]][0] = 1; /* position 0: slot 0 */
	for (i = 1; i < n; i++) {
		uint8_t x = sym[i];
		unsigned r = (unsigned)(1 - i) & (LAG_D - 1), slot = (unsigned)(-i) & (LAG_D - 1);
		uint64_t lo = ring[x][0], hi = ring[x][1], far[2] = {0}, lead_lo, lead_hi, clo, chi;
		bool hit = x == sym[i - winner - 1];

		/* Without a branch on whether the guess was right: a coin toss on random input. */
		*c += hit;
		run = pick(hit, run + 1, 0);
		*max_run = pick(run > *max_run, run, *max_run);
		/* The lags that hit: rotate the ring right by r (slot of position i - 1). */
		if (r & 64) {
			uint64_t t = lo;

			lo = hi;
			hi = t;
		}
		if (r & 63) {
			uint64_t t = lo;

			lo = (lo >> (r & 63)) | (hi << (64 - (r & 63)));
			hi = (hi >> (r & 63)) | (t << (64 - (r & 63)));
		}
		/* Position i takes the slot of position i - 128. */
		if (i >= LAG_D)
			ring[sym[i - LAG_D]][slot >> 6] &= ~(UINT64_C(1) << (slot & 63));
		ring[x][slot >> 6] |= UINT64_C(1) << (slot & 63);

		/* lead: the lags hit that are level with the winner, else those one behind
		 * (far: two or more behind). */
		for (b = 1; b < top; b++) {
			far[0] |= plane[b][0];
			far[1] |= plane[b][1];
		}
		lead_lo = lo & ~far[0] & ~plane[0][0];
		lead_hi = hi & ~far[1] & ~plane[0][1];
		if (lead_lo | lead_hi) {
			/* The greatest score rises: the others fall one further behind. */
			clo = ~lo;
			chi = ~hi;
			for (b = 0; clo | chi; b++) {
				uint64_t tlo = plane[b][0] & clo, thi = plane[b][1] & chi;

				plane[b][0] ^= clo;
				plane[b][1] ^= chi;
				clo = tlo;
				chi = thi;
			}
			if (b > top)
				top = b;
		} else {
			lead_lo = lo & ~far[0] & plane[0][0];
			lead_hi = hi & ~far[1] & plane[0][1];
			/* The lags hit catch up by one (none is level: no borrow past the top). */
			clo = lo;
			chi = hi;
			for (b = 0; clo | chi; b++) {
				uint64_t tlo = ~plane[b][0] & clo, thi = ~plane[b][1] & chi;

				plane[b][0] ^= clo;
				plane[b][1] ^= chi;
				clo = tlo;
				chi = thi;
			}
		}
		if (lead_lo | lead_hi)
			winner = lead_hi ? 127 - (unsigned)__builtin_clzll(lead_hi)
					: 63 - (unsigned)__builtin_clzll(lead_lo);
	}
}

int sp90b_lag(const uint8_t *sym, size_t n, unsigned k, struct sp90b_pred *out)
{
	uint64_t count[256] = {0}, sq = 0, c = 0, max_run = 0;
	size_t i;

	if (!args_ok(sym, n, k, 3))
		return -1;
	/* Expected repeats per symbol within 128 back, for independent symbols: 128 sum p^2.
	 * The chain walk costs a step per repeat; the bit-sliced count is the faster from
	 * about LAG_SLICED_ABOVE repeats (measured on 4096-symbol blocks). */
	for (i = 0; i < n; i++)
		count[sym[i]]++;
	for (i = 0; i < 256; i++)
		sq += count[i] * count[i];
	if ((double)sq * LAG_D > LAG_SLICED_ABOVE * (double)n * (double)n)
		lag_sliced(sym, n, &c, &max_run);
	else
		lag_chained(sym, n, &c, &max_run);
	sp90b_pred_finish(c, (uint64_t)(n - 1), max_run, k, out);
	return 0;
}

