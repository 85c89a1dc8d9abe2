/* config_policy: the administrator's rule for one instance — mode, weight and caps. */
#ifndef ENTROPYD_CONFIG_POLICY_H
#define ENTROPYD_CONFIG_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

/* Does class cls run at all: its mode is not disabled, or an override enables an instance. */
bool config_policy_class_runs(const struct config *cfg, enum src_class cls);

/* The first per-instance override of class cls whose name (or glob) matches name, or NULL. */
const struct policy_override *config_policy_override_for(const struct config *cfg, enum src_class cls,
						  const char *name);

/* The class rule with the first matching per-instance override applied. */
struct policy_rule config_policy_resolve(const struct config *cfg, enum src_class cls, const char *name);
/* base with the fields override o gives. */
struct policy_rule config_policy_override_apply(const struct policy_rule *base,
					const struct policy_override *o);

/* Credit for one event from its estimate: trusted min(cap, est), reduced scale * min(cap, est),
 * mix-only and disabled 0. */
double config_policy_credit(const struct policy_rule *rule, double estimate);

#endif
