/* config_policy: the administrator's rule for one instance — mode, weight and caps. */
#include "autoconf.h"

#include "config_policy.h"
#include "util.h"

#include <fnmatch.h>
#include <math.h>

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

double config_policy_rate_cap_take(struct rate_cap *rc, double cap_per_second, double want, uint64_t t_ns,
		     uint64_t now_ns)
{
	uint64_t d, lead;
	double got;

	if (!rc->started) {
		rc->started = true;
		rc->tokens = cap_per_second;
		rc->event_ns = t_ns;
		rc->wall_ns = now_ns;
	}
	/* A clock that runs backwards (a replay starting over, a clock step) moves its reference
	 * back: it earns nothing now, and the other clock still bounds what it earns later. */
	if (t_ns < rc->event_ns)
		rc->event_ns = t_ns;
	if (now_ns < rc->wall_ns)
		rc->wall_ns = now_ns;
	/* Refill by the time both clocks agree has passed: events replayed faster than real time
	 * are held to real time, events delivered late (a batch) to their own span. */
	d = t_ns - rc->event_ns < now_ns - rc->wall_ns ? t_ns - rc->event_ns : now_ns - rc->wall_ns;
	rc->tokens += cap_per_second * (double)d / 1e9;
	rc->event_ns += d;
	rc->wall_ns += d;
	if (rc->tokens > cap_per_second)
		rc->tokens = cap_per_second;
	/* A lead of one clock over the other is kept only as far as it could still fill the
	 * bucket: banked beyond that (after an idle spell, say) it would let the other clock
	 * catch up with a second bucketful at one instant. */
	lead = cap_per_second > 0 ? (uint64_t)((cap_per_second - rc->tokens) / cap_per_second * 1e9)
				  : 0;
	if (t_ns - rc->event_ns > lead)
		rc->event_ns = t_ns - lead;
	if (now_ns - rc->wall_ns > lead)
		rc->wall_ns = now_ns - lead;
	got = want > 0 ? fmin(want, rc->tokens) : 0; /* NaN and negative wants get nothing */
	if (got < 0)
		got = 0;
	rc->tokens -= got;
	return got;
}
