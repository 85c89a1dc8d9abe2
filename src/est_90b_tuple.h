/* est_90b_tuple: SP 800-90B t-Tuple and LRS estimators, computed as NIST's tool does. */
#ifndef ENTROPYD_EST_90B_TUPLE_H
#define ENTROPYD_EST_90B_TUPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The t-Tuple (§6.3.5) and Longest Repeated Substring (§6.3.6) estimators, which count
 * repeated substrings. Results agree with usnistgov/SP800-90B_EntropyAssessment (ea_non_iid,
 * its "t-Tuple" and "LRS" lines): over sp90b_prepare()'s symbols with its k for the
 * "Literal" lines, over sp90b_bitstring()'s bits with k = 2 for the "Bitstring" ones (NIST
 * runs the bitstring view only when there are more than 2 distinct symbols).
 *
 * Both come from the LCP array of the suffixes in order. Where no repeat is as long as 64
 * bits of packed symbols (random data), sorting the suffixes by those 64 bits alone (a radix
 * sort) gives it; else from a suffix array: the suffixes are sorted 64 bits at a time
 * (MSD radix sort), as deep as they agree up to 1024 bits, then by prefix doubling:
 * O(n log n) whatever the input, and no doubling at all unless some repeat is longer than
 * that. Memory: 28 bytes a symbol (12 for the suffix array, 16 with doubling), and 20 a
 * symbol of the longest repeat. The functions are pure: no globals, no logging.
 */

/* Indices are 32-bit; NIST's tool takes no more than this either. */
#define SP90B_TUPLE_MAX_SAMPLES ((size_t)INT32_MAX - 1)

/* A tuple must occur at least this often to be counted by t-Tuple (NIST's cutoff). */
#define SP90B_TUPLE_MIN_COUNT 35

/* t-Tuple, §6.3.5. */
struct sp90b_t_tuple {
	bool valid;       /* false: no symbol occurs 35 times (NIST: "estimate failed") */
	uint64_t t;       /* the longest tuple length whose most common tuple occurs 35 times */
	double p_hat_max; /* max over i = 1..t of (count of the most common i-tuple / (n-i+1))^(1/i) */
	double p_u;       /* upper 99% bound on p_hat_max */
	double h;         /* -log2(p_u) */
};

/* LRS, §6.3.6. */
struct sp90b_lrs {
	bool valid;   /* false: v < u (NIST: "Can't Run LRS Test") */
	uint64_t u;   /* t + 1 (1 if t-Tuple failed) */
	uint64_t v;   /* length of the longest repeated substring */
	double p_hat; /* max over i = u..v of (repeated i-tuple pairs / (n-i+1 choose 2))^(1/i) */
	double p_u;   /* upper 99% bound on p_hat */
	double h;     /* -log2(p_u) */
};

/*
 * Both estimators over sym[0..n), every symbol < k (1 <= k <= 256), from one suffix array;
 * either result pointer may be NULL. Returns 0 (each result's valid says whether that
 * estimator could run), or -1, computing nothing, if n is not 2..SP90B_TUPLE_MAX_SAMPLES,
 * k is out of range or a symbol is not below k.
 */
int sp90b_tuple_lrs(const uint8_t *sym, size_t n, unsigned k, struct sp90b_t_tuple *tt,
		    struct sp90b_lrs *lrs);

/* Each alone: 0, or -1 if the arguments are out of range or the estimator cannot run. */
int sp90b_t_tuple(const uint8_t *sym, size_t n, unsigned k, struct sp90b_t_tuple *out);
int sp90b_lrs(const uint8_t *sym, size_t n, unsigned k, struct sp90b_lrs *out);

/*
 * NIST's bitstring view: each sample masked to `bits` bits (1..8) and written as that many
 * bytes of 0 or 1, most significant bit first, into out[0 .. n * bits). Returns n * bits,
 * or 0 if bits is out of range.
 */
size_t sp90b_bitstring(const uint8_t *raw, size_t n, unsigned bits, uint8_t *out);

#endif
