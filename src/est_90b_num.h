/* est_90b_num: numeric helpers the SP 800-90B estimators share, as NIST's tool has them.
 * Internal to sp80090b*.c; inline, since they sit in the estimators' root searches. */
#ifndef ENTROPYD_EST_90B_NUM_H
#define ENTROPYD_EST_90B_NUM_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The 99 % two-sided normal quantile, to the digits NIST's tool uses (not 2.576). */
#define Z_ALPHA 2.5758293035489008

/* NIST's closeness test: relative within rel, or absolute within abs near zero, or a few ULPs. */
static inline bool rel_eps_equal(double a, double b, double abs_f, double rel_f, uint64_t max_ulp)
{
	double diff, fa, fb;
	uint64_t ia, ib;

	if (isnan(a) || isnan(b))
		return false;
	if (!islessgreater(a, b))
		return true;
	if (isinf(a) || isinf(b))
		return false;
	fa = fabs(a);
	fb = fabs(b);
	if (fa > fb) {
		double t = a;
		a = b;
		b = t;
		t = fa;
		fa = fb;
		fb = t;
	}
	diff = fabs(b - a);
	if (fa < DBL_MIN || diff < DBL_MIN || isinf(diff) || fb * rel_f < DBL_MIN)
		return diff <= abs_f;
	if (diff <= fb * rel_f)
		return true;
	if (signbit(a) != signbit(b))
		return false;
	memcpy(&ia, &fa, sizeof(ia));
	memcpy(&ib, &fb, sizeof(ib));
	return ib - ia <= max_ulp;
}

/*
 * c ? x : y without a branch, for coin tosses such as whether a guess was right, where a
 * branch would be mispredicted half the time (and compilers do not always avoid one).
 */
static inline uint64_t pick(bool c, uint64_t x, uint64_t y)
{
	uint64_t m = -(uint64_t)c;

	return (x & m) | (y & ~m);
}

static inline bool in_closed(double x, double a, double b)
{
	return a > b ? (x >= b && x <= a) : (x >= a && x <= b);
}

static inline bool in_open(double x, double a, double b)
{
	return a > b ? (x > b && x < a) : (x > a && x < b);
}

/*
 * NIST's bisection for the p in [lo, hi] at which a falling function f reaches target, with
 * its stopping rules, on which the last digits depend: "equal" within DBL_EPSILON relative
 * or 4 ULPs; where the bracket leaves [lo, hi] or no longer holds target, on_failure (each
 * estimator has its own); where f is not even loosely monotonic, or the bracket no longer
 * halves, hi's end of the bracket. At most BISECT_ITER_MAX halvings (enough to reach any
 * double). P_local (est_90b.c), Collision and Compression (est_90b_bits.c) use it.
 */
#define BISECT_ITER_MAX 1076
double sp90b_bisect(double target, double lo, double hi, double (*f)(double, void *), void *arg,
		    double on_failure);

/*
 * The same bisection, with f's value at each point first taken from fast(p, arg, &err),
 * which returns it to within err (f's own rounding included). f itself is evaluated only
 * where a comparison is too close for the approximation to decide, so every comparison
 * comes out as in sp90b_bisect() and so does the result, for fewer evaluations of a costly
 * f (those near the end, where the bracket has narrowed). Compression uses it.
 */
double sp90b_bisect_approx(double target, double lo, double hi, double (*f)(double, void *),
			   double (*fast)(double, void *, double *), void *arg, double on_failure);

#endif
