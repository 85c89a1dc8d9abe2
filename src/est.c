/* est: the estimator registry and the calls the pipeline makes. */
#include "autoconf.h"

#include "est.h"

#include <string.h>

static const struct est_ops *const estimators[] = {
	&est_kernel_ops,
	&est_online_sp90b_ops,
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

void est_fini(struct est *e)
{
	if (e->ops)
		e->ops->destroy(e->state);
	e->ops = NULL;
	e->state = NULL;
}
