/* policy: the administrator's rule for one instance — mode, weight and caps. */
#ifndef ENTROPYD_POLICY_H
#define ENTROPYD_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

/* The class rule with the first matching per-instance override applied. */
struct policy_rule policy_resolve(const struct config *cfg, enum src_class cls, const char *name);

/* Credit for one event from its estimate: trusted min(cap, est), reduced scale * min(cap, est),
 * mix-only and disabled 0. */
double policy_credit(const struct policy_rule *rule, double estimate);

/* The per-second cap, as a token bucket of one second's worth, refilled by event time
 * (kernel timestamps; a replay is capped by its recorded times). Zero-initialise. */
struct rate_cap {
	double tokens;
	uint64_t last_ns;
	bool started;
};

/* How much of `want` bits may be credited at t_ns under cap_per_second. */
double rate_cap_take(struct rate_cap *rc, double cap_per_second, double want, uint64_t t_ns);

#endif
