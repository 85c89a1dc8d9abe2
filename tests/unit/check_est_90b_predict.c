/* check_est_90b_predict: the MultiMMC and LZ78Y predictors (est_90b_predict.c) called on their
 * own, against NIST's reference output (tests/data/sp80090b), literal and bitstring, with the
 * work area shared, reused and asked for one predictor at a time. */
#include "autoconf.h"

#include "est_90b.h"
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

/* NIST's value of "VIEW NAME Prediction Estimate: KEY = value" in res (-1 for a P_local that
 * "can't change the result"); fails the test if the line is missing. */
static double nist(const char *res, const char *view, const char *name, const char *key)
{
	char *head = xasprintf("%s %s Prediction Estimate: ", view, name);
	char *line = xasprintf("\n%s%s = ", head, key);
	char *cant = xasprintf("\n%sP_local can't change the result", head);
	const char *p = strstr(res, line);
	double v;

	if (!p && strcmp(key, "P_local") == 0 && strstr(res, cant))
		v = -1;
	else {
		ck_assert_msg(p != NULL, "no \"%s%s\" in the reference", head, key);
		v = strtod(p + strlen(line), NULL);
	}
	free(head);
	free(line);
	free(cant);
	return v;
}

/* One predictor's outcome against NIST's lines for it. */
static void assert_pred(const char *file, const char *res, const char *view, const char *name,
			const struct sp90b_pred *p)
{
	const struct {
		const char *key;
		double ours;
	} f[] = {
		{"C", (double)p->c}, {"r", (double)p->r}, {"N", (double)p->n},
		{"P_global", p->p_global}, {"P_global'", p->p_global_prime},
		{"P_local", p->p_local < 0 ? -1 : p->p_local}, {"min entropy", p->h},
	};

	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		double want = nist(res, view, name, f[i].key);

		ck_assert_msg(fabs(f[i].ours - want) <= 1e-9 * fmax(1, fabs(want)),
			      "%s: %s %s %s = %.17g, NIST: %.17g", file, view, name, f[i].key,
			      f[i].ours, want);
	}
}

/* The samples of file, prepared as NIST's tool prepares them (masked to its width,
 * renumbered): sym and k; the width in *bits. */
static uint8_t *load(const char *file, const char *res, size_t *n, unsigned *k, unsigned *bits)
{
	char *bin = xasprintf(DATADIR "%s.bin", file);
	uint8_t *sym = (uint8_t *)tu_read_file(bin, n);
	const char *loaded = strstr(res, "Loaded ");
	long samples, distinct, width;

	ck_assert_msg(loaded && sscanf(loaded, "Loaded %ld samples of %ld distinct %ld-bit-wide",
				       &samples, &distinct, &width) == 3,
		      "%s: no \"Loaded\" line", file);
	ck_assert_uint_eq(*n, (size_t)samples);
	*bits = (unsigned)width;
	*k = sp90b_prepare(sym, *n, *bits, sym);
	ck_assert_uint_eq(*k, (unsigned)distinct);
	free(bin);
	return sym;
}

static char *load_res(const char *file)
{
	char *path = xasprintf(DATADIR "%s.res", file);
	char *res = tu_read_file(path, NULL);

	free(path);
	return res;
}

static const char *const files[] = {
	"rand8_short", "rand4_short", "rand1_short",
	"normal", "biased-random-bytes", "truerand_8bit",
};

/* Each file's literal symbols, through the two entry points of their own. */
START_TEST(test_literal_reference)
{
	const char *file = files[_i];
	char *res = load_res(file);
	struct sp90b_pred mmc, lz;
	unsigned k, bits;
	size_t n;
	uint8_t *sym = load(file, res, &n, &k, &bits);

	ck_assert_int_eq(sp90b_multi_mmc(sym, n, k, &mmc), 0);
	assert_pred(file, res, "Literal", "MultiMMC", &mmc);
	ck_assert_int_eq(sp90b_lz78y(sym, n, k, &lz), 0);
	assert_pred(file, res, "Literal", "LZ78Y", &lz);
	free(sym);
	free(res);
}
END_TEST

/* The bitstring view of the short files (each sample's bits, most significant first, as
 * NIST's tool makes it): the path of its own for k = 2, through one work area for both. */
START_TEST(test_bitstring_reference)
{
	const char *file = files[_i];
	char *res = load_res(file);
	struct sp90b_work *w = sp90b_work_new();
	struct sp90b_pred mmc, lz;
	unsigned k, bits;
	size_t n, nb = 0;
	uint8_t *sym = load(file, res, &n, &k, &bits), *raw, *bitv;
	char *bin = xasprintf(DATADIR "%s.bin", file);

	/* The bitstring is of the raw samples masked to their width, not of renumbered ones. */
	raw = (uint8_t *)tu_read_file(bin, NULL);
	bitv = xmalloc(n * bits);
	for (size_t i = 0; i < n; i++)
		for (unsigned b = bits; b-- > 0;)
			bitv[nb++] = (raw[i] >> b) & 1;
	ck_assert_int_eq(sp90b_dict_predictors(w, bitv, nb, 2, &mmc, &lz), 0);
	if (bits == 1) {
		/* NIST prints no bitstring view of 1-bit samples: it is the literal one. */
		assert_pred(file, res, "Literal", "MultiMMC", &mmc);
		assert_pred(file, res, "Literal", "LZ78Y", &lz);
	} else {
		assert_pred(file, res, "Bitstring", "MultiMMC", &mmc);
		assert_pred(file, res, "Bitstring", "LZ78Y", &lz);
	}
	sp90b_work_free(w);
	free(bitv);
	free(raw);
	free(bin);
	free(sym);
	free(res);
}
END_TEST

static bool pred_eq(const struct sp90b_pred *a, const struct sp90b_pred *b)
{
	return a->c == b->c && a->r == b->r && a->n == b->n && a->p_global == b->p_global &&
	       a->p_global_prime == b->p_global_prime && a->p_local == b->p_local && a->h == b->h;
}

/* One work area kept across inputs of other sizes and alphabets (as an online estimator keeps
 * it) gives what a fresh one gives, and asking for one predictor gives what asking for both
 * gives: nothing of one run or of the other predictor leaks into the next. */
START_TEST(test_work_reused)
{
	const char *order[] = {"rand8_short", "rand1_short", "rand4_short", "rand8_short"};
	struct sp90b_work *w = sp90b_work_new();

	for (size_t f = 0; f < ARRAY_SIZE(order); f++) {
		char *res = load_res(order[f]);
		struct sp90b_pred both_m, both_l, only_m, only_l, fresh_m, fresh_l;
		unsigned k, bits;
		size_t n;
		uint8_t *sym = load(order[f], res, &n, &k, &bits);

		/* a prefix first, so that the area has held another length */
		ck_assert_int_eq(sp90b_dict_predictors(w, sym, n / 3, k, &both_m, &both_l), 0);
		ck_assert_int_eq(sp90b_dict_predictors(w, sym, n, k, &both_m, &both_l), 0);
		ck_assert_int_eq(sp90b_dict_predictors(w, sym, n, k, &only_m, NULL), 0);
		ck_assert_int_eq(sp90b_dict_predictors(w, sym, n, k, NULL, &only_l), 0);
		ck_assert_int_eq(sp90b_multi_mmc(sym, n, k, &fresh_m), 0);
		ck_assert_int_eq(sp90b_lz78y(sym, n, k, &fresh_l), 0);
		ck_assert_msg(pred_eq(&both_m, &fresh_m) && pred_eq(&only_m, &fresh_m),
			      "%s: MultiMMC differs with a reused work area", order[f]);
		ck_assert_msg(pred_eq(&both_l, &fresh_l) && pred_eq(&only_l, &fresh_l),
			      "%s: LZ78Y differs with a reused work area", order[f]);
		assert_pred(order[f], res, "Literal", "MultiMMC", &both_m);
		assert_pred(order[f], res, "Literal", "LZ78Y", &both_l);
		free(sym);
		free(res);
	}
	sp90b_work_free(w);
	sp90b_work_free(NULL);
}
END_TEST

/* What each refuses, computing nothing, and the smallest inputs they take. */
START_TEST(test_arguments)
{
	static const struct {
		size_t n;
		unsigned k;
		int mmc, lz; /* what sp90b_multi_mmc and sp90b_lz78y return */
	} cases[] = {
		{1000, 1, -1, -1},   /* one symbol: nothing to predict */
		{1000, 257, -1, -1}, /* more symbols than a byte holds */
		{2, 4, -1, -1},      /* nothing to predict from */
		{3, 4, 0, -1},       /* MultiMMC predicts from the third on */
		{3, 2, -1, -1},      /* from the fourth on in bits, as NIST's binary variant */
		{4, 2, 0, -1},
		{SP90B_LZ78Y_MIN_SAMPLES - 1, 4, 0, -1},
		{SP90B_LZ78Y_MIN_SAMPLES, 4, 0, 0},
		{SP90B_LZ78Y_MIN_SAMPLES, 2, 0, -1}, /* k = 2 needs one more */
		{SP90B_LZ78Y_MIN_SAMPLES + 1, 2, 0, 0},
	};
	uint8_t sym[64];
	struct sp90b_work *w = sp90b_work_new();

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sp90b_pred m = {.c = 12345}, l = {.c = 12345}, d = {.c = 12345};
		size_t n = cases[i].n;
		unsigned k = cases[i].k;

		/* symbols below k, as the functions require (k out of range: any) */
		for (size_t j = 0; j < sizeof(sym); j++)
			sym[j] = (uint8_t)(j * 7 % (k < 2 || k > 256 ? 2 : k));
		ck_assert_msg(sp90b_multi_mmc(sym, n, k, &m) == cases[i].mmc,
			      "MultiMMC, n %zu, k %u: want %d", n, k, cases[i].mmc);
		ck_assert_msg(sp90b_lz78y(sym, n, k, &l) == cases[i].lz, "LZ78Y, n %zu, k %u: want %d",
			      n, k, cases[i].lz);
		if (cases[i].mmc < 0)
			ck_assert_uint_eq(m.c, 12345);
		if (cases[i].lz < 0)
			ck_assert_uint_eq(l.c, 12345);
		/* both at once: refused if either is */
		ck_assert_int_eq(sp90b_dict_predictors(w, sym, n, k, &m, &d),
				 cases[i].mmc < 0 || cases[i].lz < 0 ? -1 : 0);
	}
	ck_assert_int_eq(sp90b_multi_mmc(NULL, 100, 4, &(struct sp90b_pred){0}), -1);
	ck_assert_int_eq(sp90b_dict_predictors(w, sym, 40, 4, NULL, NULL), -1);
	sp90b_work_free(w);
}
END_TEST

/* A source that repeats itself is predicted. MultiMMC's scoreboard finds the order that
 * tells (a period of 5 where "1" is followed by 1 or 2 needs order 2); LZ78Y's guess is the
 * highest count over every context length, so it learns a period whose symbols tell the
 * next one alone. Both then get nearly every prediction right, well under 0.05 bits. */
START_TEST(test_periodic_predicted)
{
	static const uint8_t five[] = {0, 3, 1, 1, 2}, four[] = {0, 3, 1, 2};
	size_t n = 5000;
	uint8_t *a = xmalloc(n), *b = xmalloc(n);
	struct sp90b_pred m, l;

	for (size_t i = 0; i < n; i++) {
		a[i] = five[i % ARRAY_SIZE(five)];
		b[i] = four[i % ARRAY_SIZE(four)];
	}
	ck_assert_int_eq(sp90b_multi_mmc(a, n, 4, &m), 0);
	ck_assert_int_eq(sp90b_lz78y(b, n, 4, &l), 0);
	ck_assert_uint_ge(m.c, m.n - 20);
	ck_assert_uint_ge(l.c, l.n - 20);
	ck_assert_double_lt(m.h, 0.05);
	ck_assert_double_lt(l.h, 0.05);
	/* and LZ78Y, on the period of 5, is right only where length 1 tells: 4 in 5 */
	ck_assert_int_eq(sp90b_lz78y(a, n, 4, &l), 0);
	ck_assert_double_lt(fabs(l.p_global - 0.8), 0.01);
	free(a);
	free(b);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("est_90b_predict");
	TCase *ref = tcase_create("reference"), *tc = tcase_create("core");

	/* the three 1,000,000-sample files take seconds each under a sanitizer */
	tcase_set_timeout(ref, 120);
	tcase_add_loop_test(ref, test_literal_reference, 0, ARRAY_SIZE(files));
	tcase_add_loop_test(ref, test_bitstring_reference, 0, 3);
	tcase_add_test(ref, test_work_reused);
	tcase_add_test(tc, test_arguments);
	tcase_add_test(tc, test_periodic_predicted);
	suite_add_tcase(s, ref);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
