/* est_kernel: the kernel's classic rule as an estimator of its own (est_kernel.h). */
#include "autoconf.h"

#include "est_kernel.h"

#include <stdlib.h>

static void *kernel_create(const struct est_params *p)
{
	struct kernel_rule *k = xmalloc(sizeof(*k));

	kernel_rule_init(k, p);
	return k;
}

static void kernel_add(void *state, const uint64_t *t_ns, size_t n, struct est_out *out)
{
	for (size_t i = 0; i < n; i++)
		kernel_rule_add(state, t_ns[i], &out[i]);
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
