/* block_backend: what both block backends share: putting a batch of completions in order. */
#include "autoconf.h"

#include "block_backend.h"

#include <stdlib.h>

static int cmp_sample(const void *a, const void *b)
{
	const struct block_sample *x = a, *y = b;

	return x->t_ns < y->t_ns ? -1 : x->t_ns > y->t_ns;
}

void block_backend_samples_sort(struct block_sample *s, size_t n)
{
	size_t i;

	/* Usually one CPU's run, already in order: check before sorting. */
	for (i = 1; i < n && s[i - 1].t_ns <= s[i].t_ns; i++)
		;
	if (i < n)
		qsort(s, n, sizeof(*s), cmp_sample);
}
