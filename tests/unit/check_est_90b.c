/* check_est_90b: the literal estimators against NIST's reference output (tests/data/sp80090b). */
#include "autoconf.h"

#include "est_90b_noniid.h"
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

/* What NIST's verbose output prints for one estimator, in its words. */
enum field { F_MODE, F_PHAT, F_PU, F_C, F_R, F_N, F_PG, F_PGP, F_PL, F_H, N_FIELDS };
static const char *const field_key[N_FIELDS] = {
	[F_MODE] = "Mode count", [F_PHAT] = "p-hat", [F_PU] = "p_u",
	[F_C] = "C", [F_R] = "r", [F_N] = "N", [F_PG] = "P_global", [F_PGP] = "P_global'",
	[F_PL] = "P_local", [F_H] = "min entropy",
};

/* The five estimators this test checks, in the order of their tables here. */
static const enum sp90b_test five[] = {SP90B_T_MCV, SP90B_T_MULTI_MCW, SP90B_T_LAG,
				       SP90B_T_MULTI_MMC, SP90B_T_LZ78Y};
#define N_FIVE ARRAY_SIZE(five)
#define FIVE_TESTS                                                                        \
	(SP90B_TEST_BIT(SP90B_T_MCV) | SP90B_TEST_BIT(SP90B_T_MULTI_MCW) |                     \
	 SP90B_TEST_BIT(SP90B_T_LAG) | SP90B_TEST_BIT(SP90B_T_MULTI_MMC) |                     \
	 SP90B_TEST_BIT(SP90B_T_LZ78Y))

struct expected {
	long samples, k, bits;
	bool seen[N_FIVE][N_FIELDS];
	double v[N_FIVE][N_FIELDS]; /* P_local "can't change the result": -1 */
};

static const char *const files[] = {
	"rand8_short", "rand4_short", "rand1_short",
	"normal", "biased-random-bytes", "truerand_8bit",
};
#define N_SHORT 3

static int estimator_by_name(const char *name, size_t len)
{
	static const char suffix[] = " Prediction";
	size_t sl = sizeof(suffix) - 1;
	int e;

	if (len > sl && memcmp(name + len - sl, suffix, sl) == 0)
		len -= sl;
	for (e = 0; e < (int)N_FIVE; e++)
		if (strlen(sp90b_test_name(five[e])) == len &&
		    memcmp(sp90b_test_name(five[e]), name, len) == 0)
			return e;
	return -1; /* checked elsewhere (t-Tuple, LRS, Collision, ...) */
}

/* "Literal <estimator> Estimate: <key> = <value>" lines, and the "Loaded ..." line. */
static void parse_res(const char *path, struct expected *x)
{
	FILE *f = fopen(path, "r");
	char line[512];

	ck_assert_msg(f != NULL, "cannot open %s", path);
	memset(x, 0, sizeof(*x));
	while (fgets(line, sizeof(line), f)) {
		char *name, *mark, *rest, *eq;
		int e, fi;

		if (sscanf(line, "Loaded %ld samples of %ld distinct %ld-bit-wide", &x->samples,
			   &x->k, &x->bits) == 3)
			continue;
		if (strncmp(line, "Literal ", 8) != 0)
			continue;
		name = line + 8;
		mark = strstr(name, " Estimate: ");
		ck_assert_msg(mark != NULL, "unexpected line in %s", path);
		e = estimator_by_name(name, (size_t)(mark - name));
		if (e < 0)
			continue;
		rest = mark + strlen(" Estimate: ");
		if (strncmp(rest, "P_local can't change the result", 31) == 0) {
			x->seen[e][F_PL] = true;
			x->v[e][F_PL] = -1.0;
			continue;
		}
		eq = strstr(rest, " = ");
		ck_assert_msg(eq != NULL, "unexpected line in %s", path);
		*eq = '\0';
		for (fi = 0; fi < N_FIELDS; fi++)
			if (strcmp(rest, field_key[fi]) == 0)
				break;
		ck_assert_msg(fi < N_FIELDS, "unknown key '%s' in %s", rest, path);
		x->seen[e][fi] = true;
		x->v[e][fi] = strtod(eq + 3, NULL);
	}
	fclose(f);
	ck_assert_msg(x->samples > 0 && x->bits >= 1 && x->bits <= 8, "no 'Loaded' line in %s",
		      path);
}

static void ours_of(const struct sp90b_noniid_result *l, int e, double v[N_FIELDS],
		    bool want[N_FIELDS])
{
	const struct sp90b_pred *p = NULL;

	memset(want, 0, sizeof(bool) * N_FIELDS);
	if (five[e] == SP90B_T_MCV) {
		v[F_MODE] = (double)l->mcv.mode;
		v[F_PHAT] = l->mcv.p_hat;
		v[F_PU] = l->mcv.p_u;
		v[F_H] = l->mcv.h;
		want[F_MODE] = want[F_PHAT] = want[F_PU] = want[F_H] = true;
		return;
	}
	switch (five[e]) {
	case SP90B_T_MULTI_MCW: p = &l->mcw; break;
	case SP90B_T_LAG: p = &l->lag; break;
	case SP90B_T_MULTI_MMC: p = &l->mmc; break;
	default: p = &l->lz78y; break;
	}
	v[F_C] = (double)p->c;
	v[F_R] = (double)p->r;
	v[F_N] = (double)p->n;
	v[F_PG] = p->p_global;
	v[F_PGP] = p->p_global_prime;
	v[F_PL] = p->p_local < 0 ? -1.0 : p->p_local;
	v[F_H] = p->h;
	want[F_C] = want[F_R] = want[F_N] = want[F_PG] = want[F_PGP] = true;
	want[F_PL] = want[F_H] = true;
}

START_TEST(test_reference)
{
	const char *name = files[_i];
	char *bin = xasprintf(DATADIR "%s.bin", name), *res = xasprintf(DATADIR "%s.res", name);
	struct sp90b_noniid_result l;
	struct expected x;
	double ref_min = INFINITY;
	int e, fi, ref_min_by = -1;
	uint8_t *data;
	size_t n;

	parse_res(res, &x);
	data = (uint8_t *)tu_read_file(bin, &n);
	ck_assert(n > 0);
	ck_assert_uint_eq(n, (size_t)x.samples);
	ck_assert_int_eq(sp90b_noniid(NULL, data, n, (unsigned)x.bits, FIVE_TESTS, 0, &l), 0);
	ck_assert_uint_eq(l.k, (unsigned)x.k);

	for (e = 0; e < (int)N_FIVE; e++) {
		double v[N_FIELDS];
		bool want[N_FIELDS];

		ck_assert_msg(l.literal.valid[five[e]], "%s: %s did not run", name,
			      sp90b_test_name(five[e]));
		ours_of(&l, e, v, want);
		for (fi = 0; fi < N_FIELDS; fi++) {
			if (!want[fi])
				continue;
			ck_assert_msg(x.seen[e][fi], "%s: no %s %s in the reference", name,
				      sp90b_test_name(five[e]), field_key[fi]);
			ck_assert_msg(fabs(v[fi] - x.v[e][fi]) <= 1e-6,
				      "%s: %s %s = %.17g, NIST: %.17g", name, sp90b_test_name(five[e]),
				      field_key[fi], v[fi], x.v[e][fi]);
		}
		if (x.v[e][F_H] < ref_min) {
			ref_min = x.v[e][F_H];
			ref_min_by = e;
		}
	}
	ck_assert_msg(fabs(l.h_original - ref_min) <= 1e-6, "%s: minimum %.17g, NIST's five: %.17g",
		      name, l.h_original, ref_min);
	ck_assert_int_eq(l.literal.min_by, five[ref_min_by]);

	free(data);
	free(bin);
	free(res);
}
END_TEST

START_TEST(test_prepare)
{
	const uint8_t raw[] = {0x13, 0x17, 0x03, 0xf7, 0x13};
	uint8_t sym[sizeof(raw)], again[sizeof(raw)];

	/* Masked to 4 bits: 3 7 3 7 3 -> renumbered 0 1 0 1 0. */
	ck_assert_uint_eq(sp90b_prepare(raw, sizeof(raw), 4, sym), 2);
	ck_assert_mem_eq(sym, ((const uint8_t[]){0, 1, 0, 1, 0}), sizeof(raw));
	/* 8 bits: 0x03 < 0x13 < 0x17 < 0xf7. */
	ck_assert_uint_eq(sp90b_prepare(raw, sizeof(raw), 8, sym), 4);
	ck_assert_mem_eq(sym, ((const uint8_t[]){1, 2, 0, 3, 1}), sizeof(raw));
	/* In place. */
	memcpy(again, raw, sizeof(raw));
	ck_assert_uint_eq(sp90b_prepare(again, sizeof(raw), 8, again), 4);
	ck_assert_mem_eq(again, sym, sizeof(raw));
}
END_TEST

START_TEST(test_edges)
{
	uint8_t buf[5000];
	struct sp90b_noniid_result l;
	struct sp90b_pred p;
	struct sp90b_mcv m;
	size_t i;

	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(sp90b_noniid(NULL, buf, sizeof(buf), 0, FIVE_TESTS, 0, &l), -1);
	ck_assert_int_eq(sp90b_noniid(NULL, buf, sizeof(buf), 9, FIVE_TESTS, 0, &l), -1);
	ck_assert_int_eq(sp90b_noniid(NULL, buf, 1, 8, FIVE_TESTS, 0, &l), -1);

	/* One value only: nothing to credit. */
	memset(buf, 0x5a, sizeof(buf));
	ck_assert_int_eq(sp90b_noniid(NULL, buf, sizeof(buf), 8, FIVE_TESTS, 0, &l), 0);
	ck_assert_uint_eq(l.k, 1);
	ck_assert_double_eq(l.h_assessed, 0.0);
	ck_assert_int_eq(l.literal.min_by, SP90B_N_TESTS);

	/* Too short for MultiMCW: left out, the rest still run. */
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)((i * 2654435761U) >> 13);
	ck_assert_int_eq(sp90b_noniid(NULL, buf, 1000, 8, FIVE_TESTS, 0, &l), 0);
	ck_assert(!l.literal.valid[SP90B_T_MULTI_MCW]);
	ck_assert(l.literal.valid[SP90B_T_MCV] && l.literal.valid[SP90B_T_LAG] &&
		  l.literal.valid[SP90B_T_MULTI_MMC] && l.literal.valid[SP90B_T_LZ78Y]);
	ck_assert(l.literal.min_by != SP90B_T_MULTI_MCW);
	ck_assert_int_eq(sp90b_multi_mcw(buf, SP90B_MCW_MIN_SAMPLES - 1, 256, &p), -1);
	ck_assert_int_eq(sp90b_lz78y(buf, SP90B_LZ78Y_MIN_SAMPLES - 1, 256, &p), -1);
	ck_assert_int_eq(sp90b_mcv(buf, 100, 1, &m), -1);

	/* A period-2 sequence is fully predictable: every predictor but MCV sees it. */
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i & 1);
	ck_assert_int_eq(sp90b_noniid(NULL, buf, sizeof(buf), 1, FIVE_TESTS, 0, &l), 0);
	ck_assert_double_gt(l.mcv.h, 0.9);
	ck_assert_double_lt(l.lag.h, 0.01);
	ck_assert_double_lt(l.mmc.h, 0.01);
	ck_assert_double_lt(l.lz78y.h, 0.01);
	ck_assert_double_lt(l.h_original, 0.01);
}
END_TEST

/* NIST's Lag predictor as it reads (§6.3.8): C and the longest run of correct guesses. */
static void naive_lag(const uint8_t *s, size_t n, uint64_t *c, uint64_t *max_run)
{
	uint64_t score[128] = {0}, run = 0;
	size_t winner = 0, i, d;

	*c = *max_run = 0;
	for (i = 1; i < n; i++) {
		if (i > winner && s[i] == s[i - winner - 1]) {
			++*c;
			if (++run > *max_run)
				*max_run = run;
		} else {
			run = 0;
		}
		for (d = 0; d < 128 && d < i; d++)
			if (s[i] == s[i - d - 1] && ++score[d] >= score[winner])
				winner = d;
	}
}

/* n symbols of k values: with a period, nine in ten repeat the symbol that far back; the
 * others are 0 with probability bias, else any value. */
static void random_symbols(uint8_t *s, size_t n, unsigned k, size_t period, double bias)
{
	for (size_t i = 0; i < n; i++)
		s[i] = period && i >= period && tu_rng_next() % 10
			       ? s[i - period]
			       : (uint8_t)(tu_rng_unit() < bias ? 0 : tu_rng_next() % k);
}

/* A predictor's result against its reading of NIST's text: C, the longest run of correct
 * guesses (NIST's r is one more) and the number of guesses. */
static void same_as_nist(const struct sp90b_pred *p, uint64_t c, uint64_t run, uint64_t guesses,
			 size_t n, unsigned k)
{
	ck_assert_msg(p->c == c && p->r == run + 1 && p->n == guesses,
		      "n %zu k %u: C %llu r %llu, NIST's %llu %llu (seed %#llx)", n, k,
		      (unsigned long long)p->c, (unsigned long long)p->r, (unsigned long long)c,
		      (unsigned long long)run + 1, (unsigned long long)tu_seed);
}

/* Lag counts either by walking repeats or bit-sliced, by how often symbols repeat: both
 * against the predictor as NIST's reads, on inputs that take one and the other. */
START_TEST(test_lag_paths)
{
	static uint8_t s[20000];

	tu_rng_seed(0x5eed90b5);
	for (unsigned t = 0; t < 300; t++) {
		unsigned k = t % 3 ? 2 + (unsigned)(tu_rng_next() % 15) : 256;
		size_t n = 3 + tu_rng_next() % (t % 20 ? 3000 : sizeof(s) - 3);
		size_t period = t % 4 ? 0 : 1 + tu_rng_next() % 200;
		uint64_t c, r;
		struct sp90b_pred p;

		random_symbols(s, n, k, period, tu_rng_unit());
		naive_lag(s, n, &c, &r);
		ck_assert_int_eq(sp90b_lag(s, n, k, &p), 0);
		same_as_nist(&p, c, r, n - 1, n, k);
	}
}
END_TEST

/* NIST's MultiMCW predictor as it reads (§6.3.7): window counts kept, but the most common
 * symbol of each window searched for afresh at every step (ties: the one seen last). */
static void naive_mcw(const uint8_t *s, size_t n, uint64_t *c, uint64_t *max_run)
{
	static const size_t w[4] = {63, 255, 1023, 4095};
	size_t cnt[4][256] = {{0}}, last[256] = {0}, i, j;
	uint64_t score[4] = {0}, run = 0;
	size_t winner = 0;

	*c = *max_run = 0;
	for (i = 0; i < n; i++) {
		int frequent[4];

		for (j = 0; j < 4; j++) {
			size_t best = 0;

			frequent[j] = -1;
			if (i < w[j])
				continue;
			for (unsigned v = 0; v < 256; v++)
				if (cnt[j][v] && (cnt[j][v] > best ||
						  (cnt[j][v] == best && last[v] > last[frequent[j]]))) {
					best = cnt[j][v];
					frequent[j] = (int)v;
				}
		}
		if (i >= w[0]) {
			if (frequent[winner] == s[i]) {
				++*c;
				if (++run > *max_run)
					*max_run = run;
			} else {
				run = 0;
			}
			for (j = 0; j < 4; j++)
				if (frequent[j] == s[i] && ++score[j] >= score[winner])
					winner = j;
		}
		for (j = 0; j < 4; j++) {
			cnt[j][s[i]]++;
			if (i >= w[j])
				cnt[j][s[i - w[j]]]--;
		}
		last[s[i]] = i;
	}
}

/* MultiMCW finds a window's most common symbol anew in three ways (a count of counts, a
 * search over the symbols, a walk over the window), by how many symbols there are and how
 * they spread: each against the predictor as NIST's reads. */
START_TEST(test_mcw_paths)
{
	static uint8_t s[12000];

	tu_rng_seed(0x3c3c90b5);
	for (unsigned t = 0; t < 120; t++) {
		static const unsigned ks[] = {2, 3, 9, 16, 17, 64, 200, 256};
		unsigned k = ks[t % ARRAY_SIZE(ks)];
		size_t more = t % 10 ? 2500 : sizeof(s) - SP90B_MCW_MIN_SAMPLES;
		size_t n = SP90B_MCW_MIN_SAMPLES + tu_rng_next() % more;
		size_t period = t % 4 ? 0 : 1 + tu_rng_next() % 300;
		uint64_t c, r;
		struct sp90b_pred p;

		random_symbols(s, n, k, period, t % 3 ? tu_rng_unit() : 0);
		naive_mcw(s, n, &c, &r);
		ck_assert_int_eq(sp90b_multi_mcw(s, n, k, &p), 0);
		same_as_nist(&p, c, r, n - 63, n, k);
	}
}
END_TEST

/* MultiMCW taken further symbol by symbol (sp90b_mcw_add(), the online estimator's long
 * window while it grows) gives, after each stretch, what sp90b_multi_mcw() gives on all the
 * symbols so far, renumbered as the estimator renumbers them (sp90b_prepare()): raw values
 * spread over 0..255, few and many of them, with and without a period, and stretches of
 * one symbol to thousands. */
START_TEST(test_mcw_grown)
{
	static uint8_t raw[20000], sym[20000];

	tu_rng_seed(0x6e0f90b5);
	for (unsigned t = 0; t < 24; t++) {
		static const unsigned ks[] = {2, 3, 16, 17, 256, 40};
		unsigned k = ks[t % ARRAY_SIZE(ks)];
		size_t period = t % 4 ? 0 : 1 + tu_rng_next() % 300;
		unsigned spread = 1 + 2 * (unsigned)(tu_rng_next() % 100); /* odd: a permutation */
		struct sp90b_mcw *m = sp90b_mcw_new();
		size_t n = 0;

		random_symbols(raw, sizeof(raw), k, period, t % 3 ? tu_rng_unit() : 0);
		for (size_t i = 0; i < sizeof(raw); i++)
			raw[i] = (uint8_t)(raw[i] * spread + t);
		while (n < sizeof(raw)) {
			struct sp90b_pred live, all;
			unsigned kn;
			int got, want;

			n += t % 2 ? 1 + tu_rng_next() % 700 : 1 + tu_rng_next() % 5000;
			n = n < sizeof(raw) ? n : sizeof(raw);
			sp90b_mcw_add(m, raw, n);
			kn = sp90b_prepare(raw, n, 8, sym);
			got = sp90b_mcw_result(m, n, kn, &live);
			want = sp90b_multi_mcw(sym, n, kn, &all);
			ck_assert_int_eq(got, want);
			if (want < 0)
				continue;
			ck_assert_msg(live.c == all.c && live.r == all.r && live.n == all.n &&
					      live.h == all.h,
				      "n %zu k %u: C %llu r %llu h %g, all at once %llu %llu %g "
				      "(seed %#llx)", n, kn, (unsigned long long)live.c,
				      (unsigned long long)live.r, live.h, (unsigned long long)all.c,
				      (unsigned long long)all.r, all.h, (unsigned long long)tu_seed);
		}
		sp90b_mcw_free(m);
	}
}
END_TEST

static Suite *sp80090b_suite(void)
{
	Suite *s = suite_create("sp80090b");
	TCase *tc;

	/* Select with CK_RUN_CASE=short (e.g. under valgrind). */
	tc = tcase_create("short");
	tcase_add_loop_test(tc, test_reference, 0, N_SHORT);
	tcase_add_test(tc, test_prepare);
	tcase_add_test(tc, test_edges);
	tcase_add_test(tc, test_lag_paths);
	tcase_add_test(tc, test_mcw_paths);
	tcase_add_test(tc, test_mcw_grown);
	suite_add_tcase(s, tc);

	tc = tcase_create("long");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_reference, N_SHORT, (int)ARRAY_SIZE(files));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(sp80090b_suite());
}
