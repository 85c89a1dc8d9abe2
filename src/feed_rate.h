/* feed_rate: an instance's per-second cap on credit (the policy's cap_bits_per_second), as a
 * token bucket on two clocks. */
#ifndef ENTROPYD_FEED_RATE_H
#define ENTROPYD_FEED_RATE_H

#include <stdbool.h>
#include <stdint.h>

/* The per-second cap, as a token bucket of one second's worth. It refills by the time that
 * has passed on both clocks: the events' own (kernel timestamps, or a recording's) and the
 * daemon's CLOCK_MONOTONIC. So live events are capped by their time, and a replay, however
 * long the span it recorded, never credits faster than real time. Zero-initialise. */
struct feed_rate {
	double tokens;
	uint64_t event_ns; /* the event time up to which the bucket has been refilled */
	uint64_t wall_ns;  /* the same on CLOCK_MONOTONIC */
	bool started;
};

/* How much of `want` bits may be credited for an event at t_ns, seen at now_ns (monotonic),
 * under cap_per_second. */
double feed_rate_take(struct feed_rate *rc, double cap_per_second, double want, uint64_t t_ns,
		      uint64_t now_ns);

#endif
