/* est_90b_noniid: the whole SP 800-90B non-IID assessment, as NIST's ea_non_iid makes it;
 * entropyd --assess (est_assess.c) runs it over a file, est_online.c over recent symbols. */
#ifndef ENTROPYD_EST_90B_NONIID_H
#define ENTROPYD_EST_90B_NONIID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "est_90b.h"
#include "est_90b_bits.h"
#include "est_90b_tuple.h"

/*
 * ea_non_iid runs the ten estimators of SP 800-90B §6.3 in two views and takes
 *
 *   h_assessed = min(bits, H_original, bits x H_bitstring)
 *
 * H_original: over the samples as symbols (renumbered 0..k-1): MCV, t-Tuple, LRS and the four
 * predictors; Collision, Markov and Compression too when k = 2. At most `bits`.
 * H_bitstring: over the samples' bits, most significant first (sp90b_bitstring()), all ten,
 * per bit, at most 1; only when k > 2. A source whose bytes look random as symbols can still
 * be predictable bit by bit: on NIST's own "normal" data H_original is 5.53 bits a sample,
 * the assessment 4.10 (8 x Compression's 0.513 per bit).
 *
 * Estimators that cannot run (too few samples, no repeat for LRS, ...) are left out, as
 * ea_non_iid leaves them out. A single symbol value gives 0.
 */

/* The estimators, in ea_non_iid's order: X(id, name, key) with the name NIST's tool prints
 * and the key entropyd --assess's JSON uses. One list: the enum and every table of names
 * follow it. */
#define SP90B_TESTS(X)                                 \
	X(MCV, "Most Common Value", "mcv")             \
	X(COLLISION, "Collision", "collision")         \
	X(MARKOV, "Markov", "markov")                  \
	X(COMPRESSION, "Compression", "compression")   \
	X(TUPLE, "t-Tuple", "t_tuple")                 \
	X(LRS, "LRS", "lrs")                           \
	X(MULTI_MCW, "MultiMCW", "multimcw")           \
	X(LAG, "Lag", "lag")                           \
	X(MULTI_MMC, "MultiMMC", "multimmc")           \
	X(LZ78Y, "LZ78Y", "lz78y")

enum sp90b_test {
#define SP90B_TEST_ENUM(id, name, key) SP90B_T_##id,
	SP90B_TESTS(SP90B_TEST_ENUM)
#undef SP90B_TEST_ENUM
	SP90B_N_TESTS
};

#define SP90B_TEST_BIT(t) (1u << (t))
#define SP90B_ALL_TESTS ((1u << SP90B_N_TESTS) - 1)

/* One view's results: min-entropy per symbol of the view (per bit for the bitstring). */
struct sp90b_view {
	bool valid[SP90B_N_TESTS]; /* asked for, applicable to this view, and it ran */
	double h[SP90B_N_TESTS];
	double h_min;              /* the least valid one, at most the view's maximum */
	enum sp90b_test min_by;    /* which (SP90B_N_TESTS: none ran) */
};

struct sp90b_noniid_result {
	unsigned bits;  /* as given, 1..8 */
	unsigned k;     /* distinct symbols present */
	size_t samples;
	size_t n_bits;  /* the bitstring's length; 0: no bitstring view (k <= 2) */
	struct sp90b_view literal, bitstring;
	double h_original, h_bitstring, h_assessed;
	/* The details ea_non_iid prints for the literal view (valid as literal.valid says). */
	struct sp90b_mcv mcv;
	struct sp90b_pred mcw, lag, mmc, lz78y;
	struct sp90b_t_tuple t_tuple;
	struct sp90b_lrs lrs;
};

/* "Most Common Value", "Collision", ... as ea_non_iid names them; and "bitstring
 * Compression", ... for the bitstring view. */
const char *sp90b_test_name(enum sp90b_test t);
const char *sp90b_bit_name(enum sp90b_test t);

/*
 * Scratch for repeated assessments (an online estimator's blocks): buffers kept between
 * calls, grown as needed. NULL to sp90b_noniid() allocates one for the call.
 */
struct sp90b_scratch;
struct sp90b_scratch *sp90b_scratch_new(void);
void sp90b_scratch_free(struct sp90b_scratch *s); /* NULL is fine */

/*
 * Assess raw[0..n) (one sample a byte, the low `bits` used). lit_tests and bit_tests choose
 * the estimators of each view (SP90B_TEST_BIT()s; SP90B_ALL_TESTS for ea_non_iid's whole
 * assessment); those not chosen are neither run nor counted in the minima. Returns 0, or -1
 * if bits is not 1..8 or n is not 2..SP90B_TUPLE_MAX_SAMPLES.
 */
int sp90b_noniid(struct sp90b_scratch *s, const uint8_t *raw, size_t n, unsigned bits,
		 unsigned lit_tests, unsigned bit_tests, struct sp90b_noniid_result *out);

#endif
