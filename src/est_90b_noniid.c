/* est_90b_noniid: the whole SP 800-90B non-IID assessment, as NIST's ea_non_iid makes it. */
#include "autoconf.h"

#include "est_90b_noniid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct sp90b_scratch {
	struct sp90b_work *work; /* MultiMMC and LZ78Y's dictionaries */
	uint8_t *sym, *bits;     /* the renumbered samples, the bitstring */
	size_t sym_cap, bits_cap;
};

const char *sp90b_test_name(enum sp90b_test t)
{
	static const char *const names[] = {
#define SP90B_TEST_NAME(id, name, key) [SP90B_T_##id] = name,
		SP90B_TESTS(SP90B_TEST_NAME)
#undef SP90B_TEST_NAME
	};

	return t < SP90B_N_TESTS ? names[t] : "none";
}

const char *sp90b_bit_name(enum sp90b_test t)
{
	static const char *const names[] = {
#define SP90B_BIT_NAME(id, name, key) [SP90B_T_##id] = "bitstring " name,
		SP90B_TESTS(SP90B_BIT_NAME)
#undef SP90B_BIT_NAME
	};

	return t < SP90B_N_TESTS ? names[t] : "none";
}

struct sp90b_scratch *sp90b_scratch_new(void)
{
	struct sp90b_scratch *s = xcalloc(1, sizeof(*s));

	s->work = sp90b_work_new();
	return s;
}

void sp90b_scratch_free(struct sp90b_scratch *s)
{
	if (!s)
		return;
	sp90b_work_free(s->work);
	if (s->sym)
		util_wipe(s->sym, s->sym_cap);
	if (s->bits)
		util_wipe(s->bits, s->bits_cap);
	free(s->sym);
	free(s->bits);
	free(s);
}

static uint8_t *room(uint8_t **buf, size_t *cap, size_t n)
{
	if (*cap < n) {
		if (*buf)
			util_wipe(*buf, *cap);
		free(*buf);
		*buf = xmalloc(n);
		*cap = n;
	}
	return *buf;
}

static void set(struct sp90b_view *v, enum sp90b_test t, bool ok, double h)
{
	v->valid[t] = ok;
	v->h[t] = ok ? h : 0;
}

/* The estimators chosen in `tests` over sym[0..n), all < k; `binary_too`: Collision, Markov
 * and Compression apply (k = 2). The details go to *a when it is the literal view. */
static void run_view(struct sp90b_scratch *s, const uint8_t *sym, size_t n, unsigned k,
		     unsigned tests, bool binary_too, double h_max, struct sp90b_view *v,
		     struct sp90b_noniid_result *a)
{
	struct sp90b_mcv mcv = {0};
	struct sp90b_pred mcw = {0}, lag = {0}, mmc = {0}, lz78y = {0};
	struct sp90b_collision col = {0};
	struct sp90b_markov mar = {0};
	struct sp90b_compression com = {0};
	struct sp90b_t_tuple tt = {0};
	struct sp90b_lrs lrs = {0};
	bool ok, want_mmc = tests & SP90B_TEST_BIT(SP90B_T_MULTI_MMC),
	     want_lz = tests & SP90B_TEST_BIT(SP90B_T_LZ78Y);

	memset(v, 0, sizeof(*v));
	if (!binary_too)
		tests &= ~(SP90B_TEST_BIT(SP90B_T_COLLISION) | SP90B_TEST_BIT(SP90B_T_MARKOV) |
			   SP90B_TEST_BIT(SP90B_T_COMPRESSION));
	if (tests & SP90B_TEST_BIT(SP90B_T_MCV)) {
		ok = sp90b_mcv(sym, n, k, &mcv) == 0;
		set(v, SP90B_T_MCV, ok, mcv.h);
	}
	if (tests & SP90B_TEST_BIT(SP90B_T_COLLISION)) {
		ok = sp90b_collision(sym, n, &col) == 0;
		set(v, SP90B_T_COLLISION, ok, col.h);
	}
	if (tests & SP90B_TEST_BIT(SP90B_T_MARKOV)) {
		ok = sp90b_markov(sym, n, &mar) == 0;
		set(v, SP90B_T_MARKOV, ok, mar.h);
	}
	if (tests & SP90B_TEST_BIT(SP90B_T_COMPRESSION)) {
		ok = sp90b_compression(sym, n, &com) == 0;
		set(v, SP90B_T_COMPRESSION, ok, com.h);
	}
	if (tests & (SP90B_TEST_BIT(SP90B_T_TUPLE) | SP90B_TEST_BIT(SP90B_T_LRS))) {
		if (sp90b_tuple_lrs(sym, n, k, &tt, &lrs) < 0)
			tt.valid = lrs.valid = false;
		if (tests & SP90B_TEST_BIT(SP90B_T_TUPLE))
			set(v, SP90B_T_TUPLE, tt.valid, tt.h);
		if (tests & SP90B_TEST_BIT(SP90B_T_LRS))
			set(v, SP90B_T_LRS, lrs.valid, lrs.h);
		if (a) {
			a->t_tuple = tt;
			a->lrs = lrs;
		}
	}
	if (tests & SP90B_TEST_BIT(SP90B_T_MULTI_MCW)) {
		ok = sp90b_multi_mcw(sym, n, k, &mcw) == 0;
		set(v, SP90B_T_MULTI_MCW, ok, mcw.h);
	}
	if (tests & SP90B_TEST_BIT(SP90B_T_LAG)) {
		ok = sp90b_lag(sym, n, k, &lag) == 0;
		set(v, SP90B_T_LAG, ok, lag.h);
	}
	if (want_mmc || want_lz) {
		/* Together they share most of the work, but fail as one if either cannot run:
		 * then each alone, on its own minimum. */
		bool ok_mmc, ok_lz;

		ok_mmc = ok_lz = sp90b_dict_predictors(s->work, sym, n, k, want_mmc ? &mmc : NULL,
						       want_lz ? &lz78y : NULL) == 0;
		if (!ok_mmc && want_mmc && want_lz) {
			ok_mmc = sp90b_dict_predictors(s->work, sym, n, k, &mmc, NULL) == 0;
			ok_lz = sp90b_dict_predictors(s->work, sym, n, k, NULL, &lz78y) == 0;
		}
		if (want_mmc)
			set(v, SP90B_T_MULTI_MMC, ok_mmc, mmc.h);
		if (want_lz)
			set(v, SP90B_T_LZ78Y, ok_lz, lz78y.h);
	}
	v->h_min = h_max;
	v->min_by = SP90B_N_TESTS;
	for (unsigned t = 0; t < SP90B_N_TESTS; t++)
		if (v->valid[t] && v->h[t] < v->h_min) {
			v->h_min = v->h[t];
			v->min_by = t;
		}
	if (a) {
		a->mcv = mcv;
		a->mcw = mcw;
		a->lag = lag;
		a->mmc = mmc;
		a->lz78y = lz78y;
	}
}

int sp90b_noniid(struct sp90b_scratch *scratch, const uint8_t *raw, size_t n, unsigned bits,
		 unsigned lit_tests, unsigned bit_tests, struct sp90b_noniid_result *out)
{
	struct sp90b_scratch *s = scratch ? scratch : sp90b_scratch_new();
	uint8_t *sym;

	if (!raw || bits < 1 || bits > 8 || n < 2 || n > SP90B_TUPLE_MAX_SAMPLES) {
		if (!scratch)
			sp90b_scratch_free(s);
		return -1;
	}
	memset(out, 0, sizeof(*out));
	out->bits = bits;
	out->samples = n;
	out->literal.min_by = out->bitstring.min_by = SP90B_N_TESTS;
	sym = room(&s->sym, &s->sym_cap, n);
	out->k = sp90b_prepare(raw, n, bits, sym);
	if (out->k < 2)
		goto done; /* one symbol value: ea_non_iid awards nothing */

	run_view(s, sym, n, out->k, lit_tests, out->k == 2, bits, &out->literal, out);
	out->h_original = out->literal.h_min;
	out->h_bitstring = 1;
	out->h_assessed = fmin(bits, out->h_original);
	if (out->k > 2) {
		uint8_t *b = room(&s->bits, &s->bits_cap, n * bits);

		out->n_bits = sp90b_bitstring(raw, n, bits, b);
		run_view(s, b, out->n_bits, 2, bit_tests, true, 1, &out->bitstring, NULL);
		out->h_bitstring = out->bitstring.h_min;
		out->h_assessed = fmin(out->h_assessed, bits * out->h_bitstring);
	}
done:
	if (!scratch)
		sp90b_scratch_free(s);
	return 0;
}
