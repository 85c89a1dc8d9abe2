/* config_policy: the administrator's rule for one instance — mode, weight and caps. */
#include "autoconf.h"

#include "config_policy.h"
#include "util.h"

#include <fnmatch.h>

const struct policy_override *config_policy_override_for(const struct config *cfg, enum src_class cls,
						  const char *name)
{
	const struct class_policy *cp = &cfg->policy[cls];

	for (size_t i = 0; i < cp->n_overrides; i++)
		if (fnmatch(cp->overrides[i].name, name, 0) == 0)
			return &cp->overrides[i];
	return NULL;
}

bool config_policy_class_runs(const struct config *cfg, enum src_class cls)
{
	const struct class_policy *cp = &cfg->policy[cls];

	if (cp->rule.mode != MODE_DISABLED)
		return true;
	for (size_t i = 0; i < cp->n_overrides; i++)
		if ((cp->overrides[i].set & RULE_SET_MODE) &&
		    cp->overrides[i].rule.mode != MODE_DISABLED)
			return true;
	return false;
}

struct policy_rule config_policy_override_apply(const struct policy_rule *base,
					const struct policy_override *o)
{
	struct policy_rule r = *base;

	if (o->set & RULE_SET_MODE)
		r.mode = o->rule.mode;
	if (o->set & RULE_SET_SCALE)
		r.scale = o->rule.scale;
	if (o->set & RULE_SET_CAP_EVENT)
		r.cap_bits_per_event = o->rule.cap_bits_per_event;
	if (o->set & RULE_SET_CAP_SECOND)
		r.cap_bits_per_second = o->rule.cap_bits_per_second;
	return r;
}

struct policy_rule config_policy_resolve(const struct config *cfg, enum src_class cls, const char *name)
{
	const struct policy_override *o = config_policy_override_for(cfg, cls, name);

	return o ? config_policy_override_apply(&cfg->policy[cls].rule, o) : cfg->policy[cls].rule;
}

double config_policy_credit(const struct policy_rule *rule, double estimate)
{
	double bits;

	/* A NaN or non-positive estimate earns nothing. */
	if (!(estimate > 0))
		return 0;
	bits = estimate < rule->cap_bits_per_event ? estimate : rule->cap_bits_per_event;
	if (!(bits > 0))
		return 0;
	switch (rule->mode) {
	case MODE_TRUSTED:
		return bits;
	case MODE_REDUCED:
		return rule->scale * bits;
	case MODE_MIX_ONLY:
	case MODE_DISABLED:
		break;
	}
	return 0;
}
