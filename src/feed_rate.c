/* feed_rate: the per-second cap. The pipeline (feed_pipeline.c) takes each event's credit
 * through it, after the policy's weight; the rule it enforces is the policy's
 * (cap_bits_per_second, config_policy.c), the clocks it runs on are the events' and the
 * daemon's. */
#include "autoconf.h"

#include "feed_rate.h"

#include <math.h>

double feed_rate_take(struct feed_rate *rc, double cap_per_second, double want, uint64_t t_ns,
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
