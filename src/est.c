/* est: the estimator registry and the calls the pipeline makes. */
#include "autoconf.h"

#include "est.h"

#include <string.h>

static const struct est_ops *const estimators[] = {
	&est_kernel_ops,
	&est_sp90b_ops,
};

const struct est_ops *est_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(estimators); i++)
		if (strcmp(estimators[i]->name, name) == 0)
			return estimators[i];
	return NULL;
}

void est_init(struct est *e, const struct est_ops *ops, const struct est_params *p)
{
	e->ops = ops;
	e->params = *p;
	e->state = ops->create(p);
}

void est_add(struct est *e, uint64_t t_ns, struct est_out *out)
{
	out->bits = 0;
	out->have_symbol = false;
	out->symbol = 0;
	e->ops->add(e->state, t_ns, out);
	/* The class cap is the last word, whatever an estimator says; and an estimate too small
	 * to tell from zero is zero. */
	if (!(out->bits >= EST_MIN_BITS))
		out->bits = 0;
	if (out->bits > e->params.cap_bits) /* a comparison, not fmin(): every event */
		out->bits = e->params.cap_bits;
}

void est_fini(struct est *e)
{
	if (e->ops)
		e->ops->destroy(e->state);
	e->ops = NULL;
	e->state = NULL;
}
