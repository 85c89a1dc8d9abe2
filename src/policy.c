/* policy: the administrator's rule for one instance — mode, weight and caps. */
#include "autoconf.h"

#include "policy.h"

#include <fnmatch.h>
#include <math.h>

struct policy_rule policy_resolve(const struct config *cfg, enum src_class cls, const char *name)
{
	const struct class_policy *cp = &cfg->policy[cls];
	struct policy_rule r = cp->rule;

	for (size_t i = 0; i < cp->n_overrides; i++) {
		const struct policy_override *o = &cp->overrides[i];

		if (fnmatch(o->name, name, 0) != 0)
			continue;
		if (o->set & RULE_SET_MODE)
			r.mode = o->rule.mode;
		if (o->set & RULE_SET_SCALE)
			r.scale = o->rule.scale;
		if (o->set & RULE_SET_CAP_EVENT)
			r.cap_bits_per_event = o->rule.cap_bits_per_event;
		if (o->set & RULE_SET_CAP_SECOND)
			r.cap_bits_per_second = o->rule.cap_bits_per_second;
		break;
	}
	return r;
}

double policy_credit(const struct policy_rule *rule, double estimate)
{
	double bits;

	/* fmin() returns its other argument for a NaN: test the estimate itself first. */
	if (!(estimate > 0))
		return 0;
	bits = fmin(rule->cap_bits_per_event, estimate);
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

double rate_cap_take(struct rate_cap *rc, double cap_per_second, double want, uint64_t t_ns)
{
	double got;

	if (!rc->started) {
		rc->started = true;
		rc->tokens = cap_per_second;
		rc->last_ns = t_ns;
	} else if (t_ns > rc->last_ns) {
		/* Time that runs backwards (a replay, a clock step) refills nothing. */
		rc->tokens += cap_per_second * (double)(t_ns - rc->last_ns) / 1e9;
		rc->last_ns = t_ns;
	}
	if (rc->tokens > cap_per_second)
		rc->tokens = cap_per_second;
	got = want > 0 ? fmin(want, rc->tokens) : 0; /* NaN and negative wants get nothing */
	if (got < 0)
		got = 0;
	rc->tokens -= got;
	return got;
}
