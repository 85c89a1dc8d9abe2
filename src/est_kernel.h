/* est_kernel: the kernel's classic timer-randomness rule (Δ, Δ², Δ³) at a chosen quantum.
 * Credit is min(fls(min(|Δ|,|Δ²|,|Δ³|) >> 1), 11) bits, as in random.c's
 * add_timer_randomness() before 5.18, but on our own timestamps at `quantum_ns` instead of
 * jiffies. A stuck or perfectly regular source has Δ² = 0 and earns nothing.
 * Inline, as est_sp90b applies it to every event too. */
#ifndef ENTROPYD_EST_KERNEL_H
#define ENTROPYD_EST_KERNEL_H

#include "est.h"

struct kernel_rule {
	uint64_t quantum_ns;
	uint64_t merge_ns; /* est_merge_ns() */
	int64_t last_time, last_delta, last_delta2;
	uint64_t last_ns; /* the event before, unquantised: merges those closer than a quantum */
	unsigned seen; /* events so far, up to 3: the differences need history */
	uint32_t merged; /* events merged in a row (est_merge_run()) */
};

static inline void kernel_rule_init(struct kernel_rule *k, const struct est_params *p)
{
	*k = (struct kernel_rule){.quantum_ns = p->quantum_ns ? p->quantum_ns : 1,
				  .merge_ns = est_merge_ns(p)};
}

static inline int kernel_rule_fls(uint64_t v)
{
	return v ? 64 - __builtin_clzll(v) : 0;
}

static inline uint64_t kernel_rule_abs(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

/* The event at t_ns: out->bits, and its symbol (the low 8 bits of Δ) once there is a Δ; or
 * merged (est_merged()). A merged event moves the differences on as any other does, so the
 * next one's Δ, Δ² and Δ³, and its bits, are what they were before merging existed; under
 * this rule it would have earned little itself (|Δ| below the batch gap). */
static inline void kernel_rule_add(struct kernel_rule *k, uint64_t t_ns, struct est_out *out)
{
	int64_t t = (int64_t)est_quanta(t_ns, k->quantum_ns);
	int64_t delta = t - k->last_time;
	int64_t delta2 = delta - k->last_delta;
	int64_t delta3 = delta2 - k->last_delta2;
	bool merged = k->seen > 0 && est_merge_run(t_ns, k->last_ns, k->merge_ns, &k->merged);
	uint64_t m;

	*out = (struct est_out){0};
	k->last_time = t;
	k->last_delta = delta;
	k->last_delta2 = delta2;
	k->last_ns = t_ns;
	if (merged) {
		out->merged = true;
		if (k->seen < 3)
			k->seen++;
		return;
	}
	if (k->seen < 3) {
		/* Without three earlier events Δ² and Δ³ are measured against zero. */
		if (k->seen > 0) {
			out->have_symbol = true;
			out->symbol = (uint8_t)delta;
		}
		k->seen++;
		return;
	}
	m = kernel_rule_abs(delta);
	if (kernel_rule_abs(delta2) < m)
		m = kernel_rule_abs(delta2);
	if (kernel_rule_abs(delta3) < m)
		m = kernel_rule_abs(delta3);
	out->have_symbol = true;
	out->symbol = (uint8_t)delta;
	out->bits = kernel_rule_fls(m >> 1) < 11 ? kernel_rule_fls(m >> 1) : 11;
}

#endif
