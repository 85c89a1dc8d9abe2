/* est_kernel: the kernel's classic timer-randomness rule (Δ, Δ², Δ³) at a chosen quantum.
 * Credit is min(fls(min(|Δ|,|Δ²|,|Δ³|) >> 1), 11) bits, as in random.c's
 * add_timer_randomness() before 5.18, but on our own timestamps at `quantum_ns` instead of
 * jiffies. A stuck or perfectly regular source has Δ² = 0 and earns nothing. */
#include "autoconf.h"

#include "est.h"

#include <stdlib.h>

struct kernel_est {
	uint64_t quantum_ns;
	int64_t last_time, last_delta, last_delta2;
	unsigned seen; /* events so far, up to 3: the differences need history */
};

static void *kernel_create(const struct est_params *p)
{
	struct kernel_est *k = xcalloc(1, sizeof(*k));

	k->quantum_ns = p->quantum_ns ? p->quantum_ns : 1;
	return k;
}

static int fls64(uint64_t v)
{
	return v ? 64 - __builtin_clzll(v) : 0;
}

static uint64_t abs64(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

static void kernel_add(void *state, uint64_t t_ns, struct est_out *out)
{
	struct kernel_est *k = state;
	int64_t t = (int64_t)(t_ns / k->quantum_ns);
	int64_t delta = t - k->last_time;
	int64_t delta2 = delta - k->last_delta;
	int64_t delta3 = delta2 - k->last_delta2;
	uint64_t m;

	k->last_time = t;
	k->last_delta = delta;
	k->last_delta2 = delta2;
	if (k->seen < 3) {
		/* Without three earlier events Δ² and Δ³ are measured against zero. */
		if (k->seen > 0) {
			out->have_symbol = true;
			out->symbol = (uint8_t)delta;
		}
		k->seen++;
		return;
	}
	m = abs64(delta);
	if (abs64(delta2) < m)
		m = abs64(delta2);
	if (abs64(delta3) < m)
		m = abs64(delta3);
	out->have_symbol = true;
	out->symbol = (uint8_t)delta;
	out->bits = fls64(m >> 1) < 11 ? fls64(m >> 1) : 11;
}

static void kernel_destroy(void *state)
{
	free(state);
}

const struct est_ops est_kernel_ops = {
	.name = "kernel",
	.create = kernel_create,
	.add = kernel_add,
	.destroy = kernel_destroy,
};
