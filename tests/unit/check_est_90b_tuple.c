/* check_est_90b_tuple: t-Tuple and LRS against NIST's reference output and a naive count. */
#include "autoconf.h"

#include "est_90b.h"
#include "est_90b_tuple.h"
#include "testutil.h"
#include "util.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SRCDIR
#define SRCDIR "."
#endif
#define DATADIR SRCDIR "/tests/data/sp80090b/"

/* Random inputs come from a fixed seed (ENTROPYD_TEST_SEED overrides it), printed on failure. */
#define SEED 0x7e91e5u

/*
 * Reals must match NIST's printed values to 1e-6; ours are closer than that: the same to
 * the last bit, except min entropy, which is 1 ULP off where glibc's log2 (since 2.28)
 * and the one NIST's reference was made with round differently.
 */
#define REL_TOL 1e-14

static bool close_to(double ours, double ref)
{
	return fabs(ours - ref) <= 1e-6 && fabs(ours - ref) <= REL_TOL * fabs(ref);
}

/* ---- NIST's reference output ---- */

enum view { LITERAL, BITSTRING, N_VIEWS };
static const char *const view_name[N_VIEWS] = {"Literal", "Bitstring"};

enum field { F_T, F_TP, F_TPU, F_TH, F_U, F_V, F_LP, F_LPU, F_LH, N_FIELDS };
static const struct {
	const char *est, *key;
} field_id[N_FIELDS] = {
	[F_T] = {"t-Tuple", "t"}, [F_TP] = {"t-Tuple", "p-hat_max"}, [F_TPU] = {"t-Tuple", "p_u"},
	[F_TH] = {"t-Tuple", "min entropy"}, [F_U] = {"LRS", "u"}, [F_V] = {"LRS", "v"},
	[F_LP] = {"LRS", "p-hat"}, [F_LPU] = {"LRS", "p_u"}, [F_LH] = {"LRS", "min entropy"},
};

struct expected {
	long samples, k, bits, binary;
	bool seen[N_VIEWS][N_FIELDS];
	double v[N_VIEWS][N_FIELDS];
};

static const char *const files[] = {
	"rand8_short", "rand4_short", "rand1_short",
	"normal", "biased-random-bytes", "truerand_8bit",
};
#define N_SHORT 3

/* "<view> <estimator> Estimate: <key> = <value>" lines, and the sizes. */
static void parse_res(const char *path, struct expected *x)
{
	FILE *f = fopen(path, "r");
	char line[512];

	ck_assert_msg(f != NULL, "cannot open %s", path);
	memset(x, 0, sizeof(*x));
	while (fgets(line, sizeof(line), f)) {
		char *mark, *eq;
		int vw, fi;

		if (sscanf(line, "Loaded %ld samples of %ld distinct %ld-bit-wide", &x->samples,
			   &x->k, &x->bits) == 3)
			continue;
		if (sscanf(line, "Number of Binary Symbols: %ld", &x->binary) == 1)
			continue;
		mark = strstr(line, " Estimate: ");
		eq = strstr(line, " = ");
		if (!mark || !eq)
			continue;
		*mark = '\0';
		*eq = '\0';
		for (vw = 0; vw < N_VIEWS; vw++) {
			size_t vl = strlen(view_name[vw]);

			if (strncmp(line, view_name[vw], vl) != 0 || line[vl] != ' ')
				continue;
			for (fi = 0; fi < N_FIELDS; fi++) {
				if (strcmp(line + vl + 1, field_id[fi].est) == 0 &&
				    strcmp(mark + strlen(" Estimate: "), field_id[fi].key) == 0) {
					x->seen[vw][fi] = true;
					x->v[vw][fi] = strtod(eq + 3, NULL);
				}
			}
		}
	}
	fclose(f);
	ck_assert_msg(x->samples > 0 && x->bits >= 1 && x->bits <= 8, "no 'Loaded' line in %s",
		      path);
}

static void ours_of(const struct sp90b_t_tuple *tt, const struct sp90b_lrs *lrs,
		    double v[N_FIELDS])
{
	v[F_T] = (double)tt->t;
	v[F_TP] = tt->p_hat_max;
	v[F_TPU] = tt->p_u;
	v[F_TH] = tt->h;
	v[F_U] = (double)lrs->u;
	v[F_V] = (double)lrs->v;
	v[F_LP] = lrs->p_hat;
	v[F_LPU] = lrs->p_u;
	v[F_LH] = lrs->h;
}

static void check_view(const char *name, const struct expected *x, enum view vw,
		       const uint8_t *sym, size_t n, unsigned k)
{
	struct sp90b_t_tuple tt;
	struct sp90b_lrs lrs;
	double v[N_FIELDS];
	int fi;

	ck_assert_int_eq(sp90b_tuple_lrs(sym, n, k, &tt, &lrs), 0);
	ck_assert(tt.valid && lrs.valid);
	ours_of(&tt, &lrs, v);
	for (fi = 0; fi < N_FIELDS; fi++) {
		ck_assert_msg(x->seen[vw][fi], "%s: no %s %s %s in the reference", name,
			      view_name[vw], field_id[fi].est, field_id[fi].key);
		ck_assert_msg(close_to(v[fi], x->v[vw][fi]), "%s: %s %s %s = %.17g, NIST: %.17g",
			      name, view_name[vw], field_id[fi].est, field_id[fi].key, v[fi],
			      x->v[vw][fi]);
	}
	/* The single calls give the same (each sorts again: not on the long inputs). */
	if (n <= 100000) {
		struct sp90b_t_tuple tt1;
		struct sp90b_lrs lrs1;

		ck_assert_int_eq(sp90b_t_tuple(sym, n, k, &tt1), 0);
		ck_assert_int_eq(sp90b_lrs(sym, n, k, &lrs1), 0);
		ck_assert(memcmp(&tt, &tt1, sizeof(tt)) == 0);
		ck_assert(memcmp(&lrs, &lrs1, sizeof(lrs)) == 0);
	}
}

START_TEST(test_reference)
{
	const char *name = files[_i];
	char *bin = xasprintf(DATADIR "%s.bin", name), *res = xasprintf(DATADIR "%s.res", name);
	struct expected x;
	uint8_t *data, *sym, *bits;
	size_t n, nb;
	unsigned k;
	bool bitstring;

	parse_res(res, &x);
	data = (uint8_t *)tu_read_file(bin, &n);
	ck_assert_uint_eq(n, (size_t)x.samples);
	sym = xmalloc(n);
	k = sp90b_prepare(data, n, (unsigned)x.bits, sym);
	ck_assert_uint_eq(k, (unsigned)x.k);
	check_view(name, &x, LITERAL, sym, n, k);

	/* NIST looks at the bits only when there are more than two symbols. */
	bitstring = x.bits > 1 && k > 2;
	ck_assert_int_eq(bitstring, x.seen[BITSTRING][F_T]);
	if (bitstring) {
		bits = xmalloc(n * (size_t)x.bits);
		nb = sp90b_bitstring(data, n, (unsigned)x.bits, bits);
		ck_assert_uint_eq(nb, (size_t)x.binary);
		check_view(name, &x, BITSTRING, bits, nb, 2);
		free(bits);
	}
	free(sym);
	free(data);
	free(bin);
	free(res);
}
END_TEST

/* ---- a naive count to compare with ---- */

struct text_ref {
	const uint8_t *s;
	size_t n;
};

static int cmp_suffix(const void *a, const void *b, void *arg)
{
	const struct text_ref *t = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b, li = t->n - i, lj = t->n - j;
	int c = memcmp(t->s + i, t->s + j, li < lj ? li : lj);

	if (c)
		return c;
	return li < lj ? -1 : 1;
}

/* Both estimators as SP 800-90B words them, by sorting the suffixes with qsort and
 * counting, for each length t, the runs of neighbours that share t symbols. */
static void naive(const uint8_t *s, size_t n, struct sp90b_t_tuple *tt, struct sp90b_lrs *lrs)
{
	struct text_ref t = {s, n};
	size_t *sa = xreallocarray(NULL, n, sizeof(*sa)), *lcp = xcalloc(n, sizeof(*lcp));
	size_t i, j, v = 0, u, len;
	uint64_t *most, *pairs;
	double p;

	for (i = 0; i < n; i++)
		sa[i] = i;
	qsort_r(sa, n, sizeof(*sa), cmp_suffix, &t);
	for (j = 1; j < n; j++) {
		size_t a = sa[j - 1], b = sa[j];

		for (len = 0; a + len < n && b + len < n && s[a + len] == s[b + len]; len++)
			;
		lcp[j] = len;
		if (len > v)
			v = len;
	}
	most = xcalloc(v + 2, sizeof(*most));
	pairs = xcalloc(v + 2, sizeof(*pairs));
	for (len = 1; len <= v; len++) {
		uint64_t run = 1;

		most[len] = 1;
		for (j = 1; j <= n; j++) {
			if (j < n && lcp[j] >= len) {
				run++;
				continue;
			}
			if (run > most[len])
				most[len] = run;
			pairs[len] += run * (run - 1) / 2;
			run = 1;
		}
	}
	for (u = 1; u <= v && most[u] >= SP90B_TUPLE_MIN_COUNT; u++)
		;
	memset(tt, 0, sizeof(*tt));
	memset(lrs, 0, sizeof(*lrs));
	tt->valid = u > 1;
	tt->t = u - 1;
	for (i = 1; i < u; i++) {
		p = pow((double)most[i] / (double)(n - i + 1), 1.0 / (double)i);
		if (p > tt->p_hat_max)
			tt->p_hat_max = p;
	}
	lrs->valid = v >= u;
	lrs->u = u;
	lrs->v = v;
	for (i = u; i <= v; i++) {
		p = pow((double)pairs[i] / (double)((n - i) * (n - i + 1) / 2), 1.0 / (double)i);
		if (p > lrs->p_hat)
			lrs->p_hat = p;
	}
	free(most);
	free(pairs);
	free(sa);
	free(lcp);
}

static void compare_naive(const uint8_t *s, size_t n, unsigned k, const char *what)
{
	struct sp90b_t_tuple tt, rt;
	struct sp90b_lrs lrs, rl;

	ck_assert_int_eq(sp90b_tuple_lrs(s, n, k, &tt, &lrs), 0);
	naive(s, n, &rt, &rl);
	ck_assert_msg(tt.valid == rt.valid && tt.t == rt.t && lrs.valid == rl.valid &&
			      lrs.u == rl.u && lrs.v == rl.v,
		      "%s, n %zu k %u: t %llu u %llu v %llu, naive %llu %llu %llu (seed %#llx)", what,
		      n, k, (unsigned long long)tt.t, (unsigned long long)lrs.u,
		      (unsigned long long)lrs.v, (unsigned long long)rt.t,
		      (unsigned long long)rl.u, (unsigned long long)rl.v,
		      (unsigned long long)tu_seed);
	if (tt.valid)
		ck_assert_msg(fabs(tt.p_hat_max - rt.p_hat_max) <= REL_TOL * rt.p_hat_max,
			      "%s, n %zu k %u: t-Tuple p-hat_max %.17g, naive %.17g (seed %#llx)",
			      what, n, k, tt.p_hat_max, rt.p_hat_max, (unsigned long long)tu_seed);
	if (lrs.valid)
		ck_assert_msg(fabs(lrs.p_hat - rl.p_hat) <= REL_TOL * rl.p_hat,
			      "%s, n %zu k %u: LRS p-hat %.17g, naive %.17g (seed %#llx)", what, n,
			      k, lrs.p_hat, rl.p_hat, (unsigned long long)tu_seed);
}

/* Random symbols < k, each 0 with probability bias (else uniform). */
static void fill(uint8_t *s, size_t n, unsigned k, double bias)
{
	size_t i;

	for (i = 0; i < n; i++)
		s[i] = tu_rng_unit() < bias ? 0 : (uint8_t)(tu_rng_next() % k);
}

START_TEST(test_naive_random)
{
	static const unsigned ks[] = {2, 3, 5, 16, 200, 256};
	uint8_t s[800];
	int round;

	tu_rng_seed(SEED);
	for (round = 0; round < 300; round++) {
		unsigned k = ks[tu_rng_next() % ARRAY_SIZE(ks)];
		size_t n = 2 + tu_rng_next() % (sizeof(s) - 1);
		double bias = (round % 3) == 0 ? 0.0 : (round % 3) == 1 ? 0.5 : 0.95;

		fill(s, n, k, bias);
		compare_naive(s, n, k, "random");
	}
}
END_TEST

/* Repeats longer than the first sort goes (1024 bits, 512 2-bit symbols, 128 bytes) are
 * left to prefix doubling. */
START_TEST(test_naive_long_repeats)
{
	static const struct {
		unsigned k;
		size_t min_len;
	} kinds[] = {{2, 1100}, {4, 600}, {256, 140}};
	uint8_t s[3000];
	int round;

	tu_rng_seed(SEED + 1);
	for (round = 0; round < 12; round++) {
		unsigned k = kinds[round % ARRAY_SIZE(kinds)].k;
		size_t min_len = kinds[round % ARRAY_SIZE(kinds)].min_len;
		size_t n = 2 * min_len + 100 + tu_rng_next() % 700;
		size_t len = min_len + tu_rng_next() % (n / 2 - min_len);
		size_t from = tu_rng_next() % (n - 2 * len + 1);
		size_t to = from + len + tu_rng_next() % (n - from - 2 * len + 1);

		fill(s, n, k, round % 2 ? 0.9 : 0.0);
		memcpy(s + to, s + from, len);
		compare_naive(s, n, k, "long repeat");
	}
	/* Periodic: everything repeats. */
	for (round = 0; round < 6; round++) {
		size_t n = 2000 + tu_rng_next() % 1000, period = 1 + tu_rng_next() % 40, i;

		for (i = 0; i < n; i++)
			s[i] = i < period ? (uint8_t)(tu_rng_next() % 2) : s[i - period];
		compare_naive(s, n, 2, "periodic");
	}
}
END_TEST

/* ---- by hand ---- */

START_TEST(test_all_equal)
{
	uint8_t s[1000];
	struct sp90b_t_tuple tt;
	struct sp90b_lrs lrs;

	memset(s, 0, sizeof(s));
	ck_assert_int_eq(sp90b_tuple_lrs(s, sizeof(s), 1, &tt, &lrs), 0);
	/* The t-tuple of 0s occurs 1000 - t + 1 times: 35 or more up to t = 966. */
	ck_assert(tt.valid);
	ck_assert_uint_eq(tt.t, 966);
	ck_assert_double_eq(tt.p_hat_max, 1.0);
	ck_assert_double_eq(tt.p_u, 1.0);
	ck_assert_double_eq(tt.h, 0.0);
	ck_assert(lrs.valid);
	ck_assert_uint_eq(lrs.u, 967);
	ck_assert_uint_eq(lrs.v, 999);
	ck_assert_double_eq(lrs.p_hat, 1.0);
	ck_assert_double_eq(lrs.h, 0.0);
	/* Bits: the same, with k = 2. */
	ck_assert_int_eq(sp90b_tuple_lrs(s, sizeof(s), 2, &tt, &lrs), 0);
	ck_assert_uint_eq(tt.t, 966);
	ck_assert_uint_eq(lrs.v, 999);
}
END_TEST

START_TEST(test_alternating)
{
	uint8_t s[1000];
	struct sp90b_t_tuple tt;
	struct sp90b_lrs lrs;
	size_t i;

	for (i = 0; i < sizeof(s); i++)
		s[i] = (uint8_t)(i & 1);
	ck_assert_int_eq(sp90b_tuple_lrs(s, sizeof(s), 2, &tt, &lrs), 0);
	/* Each t-tuple is one of two, the commoner seen ceil((1000 - t + 1) / 2) times. */
	ck_assert(tt.valid);
	ck_assert_uint_eq(tt.t, 932);
	ck_assert(lrs.valid);
	ck_assert_uint_eq(lrs.u, 933);
	ck_assert_uint_eq(lrs.v, 998);
	/* Fully predictable: next to nothing. */
	ck_assert_double_lt(tt.h, 0.01);
	ck_assert_double_lt(lrs.h, 0.01);
	/* Any two symbols: the renumbering does not matter. */
	for (i = 0; i < sizeof(s); i++)
		s[i] = i & 1 ? 200 : 7;
	ck_assert_int_eq(sp90b_tuple_lrs(s, sizeof(s), 256, &tt, &lrs), 0);
	ck_assert_uint_eq(tt.t, 932);
	ck_assert_uint_eq(lrs.v, 998);
}
END_TEST

START_TEST(test_edges)
{
	uint8_t s[64];
	struct sp90b_t_tuple tt;
	struct sp90b_lrs lrs;
	size_t i;

	memset(s, 0, sizeof(s));
	/* Too short, no symbols, bad k, a symbol not below k. */
	ck_assert_int_eq(sp90b_tuple_lrs(s, 0, 2, &tt, &lrs), -1);
	ck_assert_int_eq(sp90b_tuple_lrs(s, 1, 2, &tt, &lrs), -1);
	ck_assert_int_eq(sp90b_tuple_lrs(NULL, 10, 2, &tt, &lrs), -1);
	ck_assert_int_eq(sp90b_tuple_lrs(s, 10, 0, &tt, &lrs), -1);
	ck_assert_int_eq(sp90b_tuple_lrs(s, 10, 257, &tt, &lrs), -1);
	s[5] = 2;
	ck_assert_int_eq(sp90b_tuple_lrs(s, 10, 2, &tt, &lrs), -1);
	ck_assert_int_eq(sp90b_t_tuple(s, 10, 2, &tt), -1);
	ck_assert_int_eq(sp90b_lrs(s, 10, 2, &lrs), -1);
	ck_assert_int_eq(sp90b_tuple_lrs(s, 10, 3, &tt, &lrs), 0);

	/* Nothing repeats: neither can run. */
	for (i = 0; i < 34; i++)
		s[i] = (uint8_t)i;
	ck_assert_int_eq(sp90b_tuple_lrs(s, 34, 34, &tt, &lrs), 0);
	ck_assert(!tt.valid && !lrs.valid);
	ck_assert_uint_eq(lrs.v, 0);
	ck_assert_int_eq(sp90b_t_tuple(s, 34, 34, &tt), -1);
	ck_assert_int_eq(sp90b_lrs(s, 34, 34, &lrs), -1);

	/* 34 samples: no symbol can occur 35 times, but LRS runs from u = 1. */
	memset(s, 0, 34);
	s[33] = 1;
	ck_assert_int_eq(sp90b_tuple_lrs(s, 34, 2, &tt, &lrs), 0);
	ck_assert(!tt.valid);
	ck_assert_uint_eq(tt.t, 0);
	ck_assert(lrs.valid);
	ck_assert_uint_eq(lrs.u, 1);
	ck_assert_uint_eq(lrs.v, 32);
	ck_assert_int_eq(sp90b_t_tuple(s, 34, 2, &tt), -1);
	ck_assert_int_eq(sp90b_lrs(s, 34, 2, &lrs), 0);

	/* Either result may be left out. */
	ck_assert_int_eq(sp90b_tuple_lrs(s, 34, 2, NULL, &lrs), 0);
	ck_assert_int_eq(sp90b_tuple_lrs(s, 34, 2, &tt, NULL), 0);
}
END_TEST

START_TEST(test_bitstring)
{
	const uint8_t raw[] = {0xa5, 0x3c, 0xff};
	uint8_t out[3 * 8];

	ck_assert_uint_eq(sp90b_bitstring(raw, 2, 8, out), 16);
	ck_assert_mem_eq(out, ((const uint8_t[]){1, 0, 1, 0, 0, 1, 0, 1,
						 0, 0, 1, 1, 1, 1, 0, 0}), 16);
	/* Masked to the low bits first, then most significant first. */
	ck_assert_uint_eq(sp90b_bitstring(raw, 3, 4, out), 12);
	ck_assert_mem_eq(out, ((const uint8_t[]){0, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1}), 12);
	ck_assert_uint_eq(sp90b_bitstring(raw, 3, 1, out), 3);
	ck_assert_mem_eq(out, ((const uint8_t[]){1, 0, 1}), 3);
	ck_assert_uint_eq(sp90b_bitstring(raw, 3, 0, out), 0);
	ck_assert_uint_eq(sp90b_bitstring(raw, 3, 9, out), 0);
}
END_TEST

static Suite *sp80090b_tuple_suite(void)
{
	Suite *s = suite_create("sp80090b_tuple");
	TCase *tc;

	/* Select with CK_RUN_CASE=short (e.g. under valgrind). */
	tc = tcase_create("short");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_reference, 0, N_SHORT);
	tcase_add_test(tc, test_naive_random);
	tcase_add_test(tc, test_naive_long_repeats);
	tcase_add_test(tc, test_all_equal);
	tcase_add_test(tc, test_alternating);
	tcase_add_test(tc, test_edges);
	tcase_add_test(tc, test_bitstring);
	suite_add_tcase(s, tc);

	tc = tcase_create("long");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_reference, N_SHORT, (int)ARRAY_SIZE(files));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(sp80090b_tuple_suite());
}
