/* est_90b_bits: Collision, Markov and Compression estimators, computed as NIST's tool does. */
#include "autoconf.h"

#include "est_90b_bits.h"
#include "est_90b_num.h"
#include "util.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Every expression that rounds is grouped and typed as in NIST's tool (double, long double
 * where it uses long double, its Kahan sums), so that results agree to the last bit on the
 * same platform (x86-64: long double is the x87 80-bit type). Nothing here may be built with
 * -ffast-math.
 */

/* Compression: block length, dictionary blocks, NIST's c for sigma-hat. */
#define CMP_B 6
#define CMP_K (1 << CMP_B)
#define CMP_D 1000
#define CMP_SIGMA_C 0.5907
/* Distances below this take log2 from a table (the mean distance is about 64). */
#define CMP_LOG_TABLE 1024
/* Markov: the length of the sequence whose probability is bounded. */
#define MARKOV_LEN 128

/* NIST's bisection for the p where f reaches target, failing to lo (full entropy); -1 if
 * even f(lo) is not above target. fast, if not NULL, approximates f (sp90b_bisect_approx()). */
static double nist_solve(double target, double lo, double hi, double (*f)(double, void *),
			 double (*fast)(double, void *, double *), void *arg)
{
	if (!(f(lo, arg) > target))
		return -1.0;
	return sp90b_bisect_approx(target, lo, hi, f, fast, arg, lo);
}

/* ---- Collision ---- */

/* SP 800-90B's expected mean time to a collision of bits, if one has probability p (its F
 * for k = 2 as in Appendix G.1.1), grouped as NIST's tool has it; mathematically
 * -2p^2 + 2p + 2. */
static double collision_expect(double p, void *arg)
{
	double q = 1.0 - p, f = q * (2.0 * q * q + 2.0 * q + 1.0);

	(void)arg;
	return (p / (q * q)) * (1.0 + 0.5 * (1.0 / p - 1.0 / q)) * f -
	       (p / q) * 0.5 * (1.0 / p - 1.0 / q);
}

int sp90b_collision(const uint8_t *bits, size_t n, struct sp90b_collision *out)
{
	uint64_t v = 0, sq = 0;
	size_t i = 0;
	double x, s;

	if (!bits || n < SP90B_COLLISION_MIN_BITS)
		return -1;
	/* From bit i the first repeat comes at i+1 (t = 2) or, if bits i and i+1 differ, at
	 * i+2 (t = 3: a third bit equals one of two different ones). Branch-free, because on
	 * random bits the branch would be mispredicted half the time. A try cut short by the
	 * end of the data does not count. */
	while (i + 2 < n) {
		unsigned d = (bits[i] ^ bits[i + 1]) & 1;

		v++;
		sq += 4 + 5 * d;
		i += 2 + d;
	}
	if (i + 1 < n && !((bits[i] ^ bits[i + 1]) & 1)) {
		v++;
		sq += 4;
		i += 2;
	}

	x = (double)i / (double)v;
	s = sqrt(((double)sq - (double)i * x) / (double)(v - 1));
	out->v = v;
	out->sum_t = i;
	out->x_bar = x;
	out->sigma_hat = s;
	x -= Z_ALPHA * s / sqrt((double)v);
	/* 2 is the least possible mean: p = 1 (NIST's tool now stops there; the search it
	 * had before could only creep towards 1). */
	x = fmax(x, 2.0);
	out->x_bar_prime = x;
	/* The p whose expected mean is the bound. NIST's tool now solves -2p^2 + 2p + 2 = x in
	 * closed form, but its reference output (which we match) came from its earlier search,
	 * and the two differ in the last few digits. Past 2.5 (at p = 0.5) there is no p:
	 * full entropy. */
	out->p = x > 2.0 ? nist_solve(x, 0.5, 1.0, collision_expect, NULL, NULL) : 1.0;
	out->found = out->p > 0.5;
	if (out->found) {
		out->h = -log2(out->p);
	} else {
		out->p = 0.5;
		out->h = 1.0;
	}
	return 0;
}

/* ---- Markov ---- */

int sp90b_markov(const uint8_t *bits, size_t n, struct sp90b_markov *out)
{
	uint64_t c0 = 0, c00 = 0, c10 = 0, c1;
	double p0, p1, p00 = 0.0, p01 = 0.0, p10 = 0.0, p11 = 0.0, h;
	size_t i;

	if (!bits || n < SP90B_MARKOV_MIN_BITS)
		return -1;
	for (i = 0; i + 1 < n; i++) {
		unsigned a = bits[i] & 1, b = bits[i + 1] & 1;

		c0 += a ^ 1;
		c00 += (a | b) ^ 1;
		c10 += a & (b ^ 1);
	}
	/* c0, c1: zeros and ones among the first n-1 bits, those a transition starts from. */
	c1 = (uint64_t)(n - 1) - c0;
	if (c0 > 0) {
		p00 = (double)c00 / (double)c0;
		p01 = 1.0 - p00;
	}
	if (c1 > 0) {
		p10 = (double)c10 / (double)c1;
		p11 = 1.0 - p10;
	}
	c0 += (bits[n - 1] & 1) ^ 1;
	p0 = (double)c0 / (double)n;
	p1 = 1.0 - p0;

	/* The likeliest 128-bit sequence is one of six (SP 800-90B §6.3.3 step 3): 00...0,
	 * 0101...01, 011...1, 100...0, 1010...10 and 11...1, here in -log2 and in that order,
	 * the terms summed as NIST's tool sums them. A zero transition rules a sequence out. */
	h = MARKOV_LEN;
	if (p00 > 0.0)
		h = fmin(h, -log2(p0) - 127.0 * log2(p00));
	if (p01 > 0.0 && p10 > 0.0)
		h = fmin(h, -log2(p0) - 64.0 * log2(p01) - 63.0 * log2(p10));
	if (p01 > 0.0 && p11 > 0.0)
		h = fmin(h, -log2(p0) - log2(p01) - 126.0 * log2(p11));
	if (p10 > 0.0 && p00 > 0.0)
		h = fmin(h, -log2(p1) - log2(p10) - 126.0 * log2(p00));
	if (p10 > 0.0 && p01 > 0.0)
		h = fmin(h, -log2(p1) - 64.0 * log2(p10) - 63.0 * log2(p01));
	if (p11 > 0.0)
		h = fmin(h, -log2(p1) - 127.0 * log2(p11));

	out->p0 = p0;
	out->p1 = p1;
	out->p00 = p00;
	out->p01 = p01;
	out->p10 = p10;
	out->p11 = p11;
	out->p_hat_max = pow(2.0, -h);
	out->h = fmin(h / MARKOV_LEN, 1.0);
	return 0;
}

/* ---- Compression ---- */

static inline void kahan_add(double *sum, double *comp, double in)
{
	double y = in - *comp, t = *sum + y;

	*comp = (t - *sum) - y;
	*sum = t;
}

/* log2l(i), filled in as far as G() reaches: for small z it stops far short of the end. */
struct log2_table {
	long double *v;
	double *d; /* the same, rounded to double */
	long len, cap, max; /* v[0..len) filled; never more than max entries */
};

/* Makes sure v[0..i] is filled, and some way past it; returns the last index filled. */
static long log2_reach(struct log2_table *t, long i)
{
	if (i < t->len)
		return t->len - 1;
	if (t->cap <= i) {
		long cap = t->cap ? t->cap : 4096;

		while (cap <= i)
			cap *= 2;
		if (cap > t->max)
			cap = t->max;
		t->v = xreallocarray(t->v, (size_t)cap, sizeof(*t->v));
		t->d = xreallocarray(t->d, (size_t)cap, sizeof(*t->d));
		t->cap = cap;
	}
	for (; t->len < t->cap; t->len++) {
		t->v[t->len] = log2l((long double)t->len);
		t->d[t->len] = (double)t->v[t->len];
	}
	return t->len - 1;
}

/*
 * SP 800-90B's G(z), the expected log2 distance contributed by a block of probability z, by
 * the recurrence NIST's tool takes from UL's comments (B_i = (1-z)^(i-1) in long double,
 * Kahan sums in double) and with its cut-off: the sum of sums stops at the first term that
 * is zero in double, and A then leaves out its last term as well. The Kahan sums make each
 * G a chain of dependent additions, about 15 cycles a block; the two Gs an expectation
 * needs are independent, so they are summed side by side (g_*() below), each exactly as
 * alone, and the processor overlaps the two chains.
 */
struct g_sum {
	double z, ai_sum, ai_comp, first, first_comp, ad1;
	long double bterm, bi;
	bool cut; /* the sum of sums has stopped */
};

static void g_begin(struct g_sum *g, double z)
{
	memset(g, 0, sizeof(*g));
	g->z = z;
	g->bterm = 1.0L - (long double)z;
	g->bi = g->bterm;
}

/* Term i of A alone (i <= CMP_D), lg[i] = log2l(i). */
static inline void g_head(struct g_sum *g, const long double *lg, long i)
{
	kahan_add(&g->ai_sum, &g->ai_comp, (double)(lg[i] * g->bi));
	g->bi *= g->bterm;
}

/* Term i of A and of the sum of sums (CMP_D < i < nb), unless cut off. */
static inline void g_term(struct g_sum *g, const long double *lg, long i, long nb)
{
	long double ai, scaled;

	if (g->cut)
		return;
	ai = lg[i] * g->bi;
	kahan_add(&g->ai_sum, &g->ai_comp, (double)ai);
	scaled = (long double)(nb - i) * ai;
	if (!((double)scaled > 0.0)) {
		g->cut = true;
		return;
	}
	kahan_add(&g->first, &g->first_comp, (double)scaled);
	g->bi *= g->bterm;
}

static double g_end(struct g_sum *g, long nb, struct log2_table *lt)
{
	kahan_add(&g->first, &g->first_comp, (double)(nb - CMP_D) * g->ad1);
	if (!g->cut) {
		log2_reach(lt, nb);
		kahan_add(&g->ai_sum, &g->ai_comp, (double)(lt->v[nb] * g->bi));
	}
	return 1.0 / (double)(nb - CMP_D) * g->z * (g->z * g->first + (g->ai_sum - g->ad1));
}

struct compression_arg {
	long nb; /* blocks */
	struct log2_table lt;
};

/* The expected statistic if one block value has probability p and the other 63 share the
 * rest equally: G(p) + 63 G(q). */
static double compression_expect(double p, void *arg)
{
	struct compression_arg *a = arg;
	struct log2_table *lt = &a->lt;
	long nb = a->nb, i, end;
	struct g_sum g[2];

	g_begin(&g[0], p);
	g_begin(&g[1], (1.0 - p) / ((double)CMP_K - 1.0));
	log2_reach(lt, CMP_D);
	for (i = 2; i <= CMP_D; i++) {
		g_head(&g[0], lt->v, i);
		g_head(&g[1], lt->v, i);
	}
	g[0].ad1 = g[0].ai_sum;
	g[1].ad1 = g[1].ai_sum;
	for (i = CMP_D + 1; i <= nb - 1 && !(g[0].cut && g[1].cut);) {
		end = log2_reach(lt, i);
		if (end > nb - 1)
			end = nb - 1;
		for (; i <= end; i++) {
			g_term(&g[0], lt->v, i, nb);
			g_term(&g[1], lt->v, i, nb);
		}
	}
	return g_end(&g[0], nb, lt) + ((double)CMP_K - 1.0) * g_end(&g[1], nb, lt);
}

/*
 * compression_expect() to within err, for sp90b_bisect_approx(), several times faster: in
 * double and plain sums, the two Gs side by side for the vector unit (estimate_run()).
 * The terms come in blocks of CMP_BLOCK: B_i starts each block from long double powers of
 * 1 - z and is then multiplied in double, and each block is summed on its own. All terms
 * are positive, so with u = DBL_EPSILON / 2: a term is within (2 CMP_BLOCK + 4) u of
 * exact (1 - z rounded, a rounding a multiplication, lg), a block sum within CMP_BLOCK u
 * more, and the sum of the blocks one u a block more; g_term()'s terms are within
 * (nb / 2048 + 1) u (B_i in long double) and its Kahan sums 2 u; the results' last steps a
 * few. err is four times all that, on the magnitudes that enter the result (A - A_1000
 * counted as A + A_1000). Once B_i underflows the sums stop (as g_term()'s at its cut-off,
 * a little later): what is left out, or rounded in subnormals, is below 2^-900 in all.
 */
#define CMP_BLOCK 64

/* x^e, e >= 0, by squaring: fewer than 2 log2(e) roundings of long double. */
static long double pow_int(long double x, long e)
{
	long double r = 1.0L;

	for (; e; e >>= 1, x *= x)
		if (e & 1)
			r *= x;
	return r;
}

/* Adds A_i, and (nb - i) A_i if f is not NULL, over i in [from, to) to a[] and f[] (for
 * z[0] and z[1]), until B_i underflows; b holds B_from in long double for each, and is
 * advanced with the terms. */
static void estimate_run(struct compression_arg *arg, const double z[2], long double b[2],
			 long from, long to, double a[2], double f[2])
{
	double bterm[2] = {1.0 - z[0], 1.0 - z[1]};
	long double step[2] = {pow_int(1.0L - (long double)z[0], CMP_BLOCK),
			       pow_int(1.0L - (long double)z[1], CMP_BLOCK)};
	unsigned k;

	while (from < to && ((double)b[0] > 0.0 || (double)b[1] > 0.0)) {
		long end = log2_reach(&arg->lt, from + CMP_BLOCK - 1) + 1;
		double bi[2] = {(double)b[0], (double)b[1]}, ab[2] = {0}, fb[2] = {0};
		const double *lg = arg->lt.d;

		end = end < from + CMP_BLOCK ? end : from + CMP_BLOCK;
		end = end < to ? end : to;
		for (long i = from; i < end; i++)
			for (k = 0; k < 2; k++) {
				double ai = lg[i] * bi[k];

				ab[k] += ai;
				fb[k] += (double)(arg->nb - i) * ai;
				bi[k] *= bterm[k];
			}
		for (k = 0; k < 2; k++) {
			a[k] += ab[k];
			if (f)
				f[k] += fb[k];
			b[k] *= end - from == CMP_BLOCK
					? step[k]
					: pow_int(1.0L - (long double)z[k], end - from);
		}
		from = end;
	}
}

static double compression_estimate(double p, void *arg, double *err)
{
	struct compression_arg *a = arg;
	double z[2] = {p, (1.0 - p) / ((double)CMP_K - 1.0)}, ad1[2] = {0};
	double ai_sum[2], first[2] = {0}, g[2], mag[2];
	long double b[2] = {1.0L - (long double)z[0], 1.0L - (long double)z[1]}; /* B_2 */
	/* Blocks: also cut short at each run's end and where the log2 table grows. */
	long nb = a->nb, blocks = nb / CMP_BLOCK + 3 + 64;
	unsigned k;

	estimate_run(a, z, b, 2, CMP_D + 1, ad1, NULL);
	ai_sum[0] = ad1[0];
	ai_sum[1] = ad1[1];
	/* A's last term, i = nb, is outside the sum of sums. */
	estimate_run(a, z, b, CMP_D + 1, nb, ai_sum, first);
	estimate_run(a, z, b, nb, nb + 1, ai_sum, NULL);
	for (k = 0; k < 2; k++) {
		double scale = 1.0 / (double)(nb - CMP_D) * z[k];

		first[k] += (double)(nb - CMP_D) * ad1[k];
		g[k] = scale * (z[k] * first[k] + (ai_sum[k] - ad1[k]));
		mag[k] = scale * (z[k] * first[k] + ai_sum[k] + ad1[k]);
	}
	*err = 2.0 * (3.0 * CMP_BLOCK + (double)blocks + (double)nb / 2048 + 16) * DBL_EPSILON *
		       (mag[0] + ((double)CMP_K - 1.0) * mag[1]) +
	       0x1p-900;
	return g[0] + ((double)CMP_K - 1.0) * g[1];
}

int sp90b_compression(const uint8_t *bits, size_t n, struct sp90b_compression *out)
{
	double x = 0.0, x_comp = 0.0, sq = 0.0, sq_comp = 0.0, lg[CMP_LOG_TABLE], p;
	long nb = (long)(n / CMP_B), last[CMP_K] = {0}, i, v;
	struct compression_arg arg = {.nb = nb, .lt = {.max = nb + 1}};
	unsigned j;

	if (!bits || n < SP90B_COMPRESSION_MIN_BITS)
		return -1;
	for (i = 1; i < CMP_LOG_TABLE; i++)
		lg[i] = log2((double)i);

	/* Blocks are numbered from 1 and read most significant bit first. The first 1000 only
	 * fill the dictionary (block -> where it was last seen); the rest are tested. */
	for (i = 0; i < nb; i++) {
		const uint8_t *b = bits + (size_t)i * CMP_B;
		unsigned blk = 0;
		long dist;
		double l;

		for (j = 0; j < CMP_B; j++)
			blk = blk << 1 | (b[j] & 1);
		dist = i + 1 - last[blk];
		last[blk] = i + 1;
		if (i < CMP_D)
			continue;
		l = dist < CMP_LOG_TABLE ? lg[dist] : log2((double)dist);
		kahan_add(&x, &x_comp, l);
		kahan_add(&sq, &sq_comp, l * l);
	}

	v = nb - CMP_D;
	x /= (double)v;
	out->x_bar = x;
	out->sigma_hat = CMP_SIGMA_C * sqrt(sq / ((double)v - 1.0) - x * x);
	x -= Z_ALPHA * out->sigma_hat / sqrt((double)v);
	out->x_bar_prime = x;

	p = nist_solve(x, 1.0 / CMP_K, 1.0, compression_expect, compression_estimate, &arg);
	free(arg.lt.v);
	free(arg.lt.d);
	out->found = p > 1.0 / CMP_K;
	if (out->found) {
		out->p = p;
		out->h = -log2(p) / CMP_B;
	} else {
		out->p = 1.0 / CMP_K;
		out->h = 1.0;
	}
	return 0;
}
