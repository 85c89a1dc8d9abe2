/* est_90b: SP 800-90B non-IID "literal" min-entropy estimators, computed as NIST's tool does. */
#ifndef ENTROPYD_EST_90B_H
#define ENTROPYD_EST_90B_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Estimators of SP 800-90B §6.3 that work on the symbols themselves: Most Common Value
 * (§6.3.1) and the MultiMCW, Lag, MultiMMC and LZ78Y predictors (§6.3.7-§6.3.10).
 * Results agree with usnistgov/SP800-90B_EntropyAssessment (ea_non_iid, "Literal" lines),
 * including its quirks: symbols are first masked to `bits` bits and then renumbered
 * 0..k-1 in order of value, k being the number of distinct symbols present, and k (not
 * 2^bits) is the alphabet size the predictors use.
 *
 * The functions are pure: no globals, no logging, no results kept between calls (a work
 * area only keeps its allocations). The whole assessment, with the other five and the
 * bitstring view, is est_90b_noniid.h's.
 */

/* Counters are 32-bit inside the predictors' dictionaries. */
#define SP90B_MAX_SAMPLES ((size_t)INT32_MAX)

/* Fewest samples each estimator runs on (below: the estimator is skipped, as NIST's is). */
#define SP90B_MCW_MIN_SAMPLES 4096
#define SP90B_LZ78Y_MIN_SAMPLES 18 /* 19 if k = 2 */

/* Most Common Value, §6.3.1. */
struct sp90b_mcv {
	uint64_t mode; /* occurrences of the most common symbol */
	double p_hat;  /* mode / n */
	double p_u;    /* upper 99% confidence bound on p_hat */
	double h;      /* -log2(p_u) */
};

/* A predictor's outcome, §6.3.7-§6.3.10 (NIST's verbose output prints exactly these). */
struct sp90b_pred {
	uint64_t c;            /* correct predictions */
	uint64_t r;            /* longest run of correct predictions, plus one (NIST's r) */
	uint64_t n;            /* predictions made */
	double p_global;       /* c / n */
	double p_global_prime; /* upper 99% bound on p_global (or 1 - 0.01^(1/n) if c = 0) */
	double p_local;        /* from the longest run; < 0 if it could not change the result */
	double h;              /* -log2(max(1/k, p_global', p_local)) */
};

/*
 * Mask raw[0..n) to `bits` bits (1..8) and renumber the symbols present as 0..k-1, keeping
 * their order, into sym[0..n) (may equal raw). Returns k.
 */
unsigned sp90b_prepare(const uint8_t *raw, size_t n, unsigned bits, uint8_t *sym);

/*
 * The single estimators, over prepared symbols (all < k, 2 <= k <= 256). Each returns 0, or
 * -1 if n is too small for it (or too large: SP90B_MAX_SAMPLES) or k is out of range.
 */
int sp90b_mcv(const uint8_t *sym, size_t n, unsigned k, struct sp90b_mcv *out);
int sp90b_multi_mcw(const uint8_t *sym, size_t n, unsigned k, struct sp90b_pred *out);
/* MultiMCW taken symbol by symbol, over a sequence that only grows (the online estimator's
 * long window): sp90b_mcw_add() takes sym[i] for every i below n not taken yet (sym holds
 * the whole sequence, from its first symbol); then sp90b_mcw_result() over those n symbols
 * is what sp90b_multi_mcw() gives on them, k being how many values they take. Its guesses
 * do not depend on how values are numbered, so raw symbols give what renumbered ones do.
 * About 27 KB; wiped when freed. */
struct sp90b_mcw;
struct sp90b_mcw *sp90b_mcw_new(void);
void sp90b_mcw_add(struct sp90b_mcw *m, const uint8_t *sym, size_t n);
int sp90b_mcw_result(const struct sp90b_mcw *m, size_t n, unsigned k, struct sp90b_pred *out);
void sp90b_mcw_free(struct sp90b_mcw *m);
int sp90b_lag(const uint8_t *sym, size_t n, unsigned k, struct sp90b_pred *out);
int sp90b_multi_mmc(const uint8_t *sym, size_t n, unsigned k, struct sp90b_pred *out);
int sp90b_lz78y(const uint8_t *sym, size_t n, unsigned k, struct sp90b_pred *out);

/*
 * MultiMMC and LZ78Y keep their dictionaries (about 60 bytes per sample, and 1 MiB for
 * bits) in a work area, which repeated runs (an online estimator's blocks) can reuse instead
 * of allocating it each time. One work area serves one call at a time. sp90b_dict_predictors() runs both, or the
 * one whose result pointer is not NULL, sharing most of the work; results are those of
 * sp90b_multi_mmc() and sp90b_lz78y(). Returns 0, or -1 (and computes nothing) if n or k is
 * out of range for one asked for.
 */
struct sp90b_work;
struct sp90b_work *sp90b_work_new(void);
void sp90b_work_free(struct sp90b_work *w); /* NULL is fine */
int sp90b_dict_predictors(struct sp90b_work *w, const uint8_t *sym, size_t n, unsigned k,
			  struct sp90b_pred *mmc, struct sp90b_pred *lz78y);


/* A predictor's bound from its counts: c right of n guesses, at most max_run in a row. Shared
 * by the predictors (est_90b.c and est_90b_predict.c) and the online estimator's run window
 * (est_online.c). */
void sp90b_pred_finish(uint64_t c, uint64_t n, uint64_t max_run, unsigned k,
		       struct sp90b_pred *out);

#endif
