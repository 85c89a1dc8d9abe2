/* est_90b_bits: SP 800-90B Collision, Markov and Compression estimators on bitstrings. */
#ifndef ENTROPYD_EST_90B_BITS_H
#define ENTROPYD_EST_90B_BITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The estimators of SP 800-90B §6.3.2-§6.3.4, which NIST's tool (ea_non_iid) runs on
 * bitstrings only: on the samples themselves when they are 1-bit ("Literal" lines), else on
 * the samples' bits, most significant first ("Bitstring" lines). Results agree with
 * usnistgov/SP800-90B_EntropyAssessment's reference output to the last bit but for a last
 * -log2 (its machine's log2 was sometimes 1 ULP off), including its bisections for p.
 *
 * Input: one bit per byte, bits[0..n); only the low bit of each byte is read. Entropy is per
 * bit. Pure functions: no globals, no logging, no allocation kept.
 */

/* Fewest bits each one runs on (below: -1, nothing computed). */
#define SP90B_COLLISION_MIN_BITS 6      /* at least two collisions, for a deviation */
#define SP90B_MARKOV_MIN_BITS 2         /* one transition */
#define SP90B_COMPRESSION_MIN_BITS 6006 /* more than the 1000 dictionary blocks of 6 bits */

/* Collision, §6.3.2: the mean time to the first repeat, t = 2 (00, 11) or 3 (010, ...). */
struct sp90b_collision {
	uint64_t v;         /* collisions seen */
	uint64_t sum_t;     /* bits they took: sum of t_i */
	double x_bar;       /* sum_t / v */
	double sigma_hat;   /* standard deviation of t */
	double x_bar_prime; /* lower 99% bound on x_bar, at least 2 */
	bool found;         /* false: x_bar_prime >= 2.5, p taken as 0.5 */
	double p;           /* 0.5 + sqrt(1.25 - 0.5 x_bar_prime) */
	double h;           /* -log2(p) */
};

/* Markov, §6.3.3: the likeliest 128-bit sequence under a first-order model. */
struct sp90b_markov {
	double p0, p1;               /* initial probabilities */
	double p00, p01, p10, p11;   /* transitions: p01 is P(1 follows 0) */
	double p_hat_max;            /* probability of the likeliest sequence */
	double h;                    /* min(-log2(p_hat_max) / 128, 1) */
};

/* Compression, §6.3.4: Maurer's statistic over 6-bit blocks, dictionary of 1000 blocks. */
struct sp90b_compression {
	double x_bar;       /* mean log2 distance to a block's previous occurrence */
	double sigma_hat;   /* 0.5907 times its standard deviation */
	double x_bar_prime; /* lower 99% bound on x_bar */
	bool found;         /* false: no p above 1/64 fits, p taken as 1/64 (h = 1) */
	double p;           /* of the most likely block */
	double h;           /* -log2(p) / 6 */
};

/* Each returns 0, or -1 if n is below its minimum (or bits is NULL). */
int sp90b_collision(const uint8_t *bits, size_t n, struct sp90b_collision *out);
int sp90b_markov(const uint8_t *bits, size_t n, struct sp90b_markov *out);
int sp90b_compression(const uint8_t *bits, size_t n, struct sp90b_compression *out);

#endif
