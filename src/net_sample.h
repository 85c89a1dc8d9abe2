/* net_sample: sampling in the kernel: the share of packets a socket filter keeps above the
 * event cap (net_sample.c). */
#ifndef ENTROPYD_NET_SAMPLE_H
#define ENTROPYD_NET_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Above the event cap the kernel's packet socket filter keeps only a random share of the
 * packets (on the kernel's own random numbers, SKF_AD_RANDOM: priv_filter.c), so that
 * what will not be timed is never copied into the ring. The share follows the measured
 * arrival rate: about cap / rate. It starts when the rate is above SAMPLE_ON times the cap,
 * stops when the rate is at or below the cap, and in between is re-set only when the share
 * wanted differs from the one in force by more than a factor SAMPLE_STEP; the rate is
 * measured over windows of at least SAMPLE_WINDOW_NS, and the window after a change is not
 * acted on (it counted packets taken under both shares), so the share changes at most every
 * other window. A flood is not waited for: once a window has kept more than SAMPLE_ON times
 * the cap (SAMPLE_STEP times that while sampling), the share is set there and then.
 */
#define SAMPLE_ON 1.2
#define SAMPLE_STEP 1.5
#define SAMPLE_WINDOW_NS 1000000000ULL
struct sampler {
	double ratio;       /* in force: the share of packets the kernel keeps; 1: none dropped */
	double rate;        /* the arrivals a second last measured; NaN: none measured yet */
	uint64_t window_ns; /* when the current window started (0: not yet) */
	uint64_t taken;     /* packets the socket took in the window (handed over or dropped) */
	bool settling;      /* the window after a change: measured, not acted on */
};

void net_sample_init(struct sampler *s);
/* n more packets the socket took (that passed its filter) since the last count. */
void net_sample_count(struct sampler *s, uint64_t n);
enum sampler_news {
	SAMPLER_NONE,     /* the window goes on */
	SAMPLER_MEASURED, /* a window ended: s->rate is new */
	SAMPLER_CHANGE,   /* ... and the share should change, to *ratio (1: stop sampling) */
};
/* At now_ns (CLOCK_MONOTONIC). The caller sets a change in the kernel, and says whether that
 * worked with net_sample_set(). */
enum sampler_news net_sample_tick(struct sampler *s, uint32_t cap, uint64_t now_ns, double *ratio);
/* The share now in force (after net_sample_tick() asked for it, or 1 when the kernel refused). */
void net_sample_set(struct sampler *s, double ratio, uint64_t now_ns);

#endif
