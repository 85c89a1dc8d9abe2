/* net_sample: the pure parts of sampling in the kernel (see net.h) — the share of packets
 * kept, which follows the arrival rate. No libpcap or socket calls here: net_sock.c has the
 * privileged process set what this decides (priv_filter.c keeps the share). */
#include "autoconf.h"

#include "net_sample.h"

#include <math.h>

#include "util.h"

void net_sample_init(struct sampler *s)
{
	*s = (struct sampler){.ratio = 1.0, .rate = NAN};
}

void net_sample_count(struct sampler *s, uint64_t n)
{
	s->taken += n;
}

void net_sample_set(struct sampler *s, double ratio, uint64_t now_ns)
{
	s->settling = ratio != s->ratio;
	s->ratio = ratio;
	s->window_ns = now_ns;
	s->taken = 0;
}

enum sampler_news net_sample_tick(struct sampler *s, uint32_t cap, uint64_t now_ns, double *ratio)
{
	double secs, want;
	bool settling = s->settling, early;

	if (!s->window_ns || now_ns <= s->window_ns) {
		s->window_ns = now_ns;
		s->taken = 0;
		return SAMPLER_NONE;
	}
	/* A window ends after SAMPLE_WINDOW_NS, or at once when a flood is plain: more packets
	 * kept than SAMPLE_ON seconds of the cap (SAMPLE_STEP times that while sampling), even
	 * in the window after a change. Such a window began before the flood, or counted
	 * packets kept at the share before, higher: either way the rate it gives is too
	 * low, and the share too high, so the next window ends early too, soon. */
	early = now_ns - s->window_ns < SAMPLE_WINDOW_NS;
	if (early && (double)s->taken <= SAMPLE_ON * cap * (s->ratio < 1 ? SAMPLE_STEP : 1))
		return SAMPLER_NONE;
	secs = (double)(now_ns - s->window_ns) / NS_PER_SEC;
	/* What the socket took is the share of what arrived (and passed the filter). */
	s->rate = (double)s->taken / s->ratio / secs;
	s->window_ns = now_ns;
	s->taken = 0;
	s->settling = false;
	if (settling && !early)
		return SAMPLER_MEASURED;
	want = s->rate > 0 ? (double)cap / s->rate : 1.0;
	if (want >= 1.0) /* at or below the cap: no sampling */
		*ratio = 1.0;
	else if (s->ratio >= 1.0) /* not sampling: only well above the cap */
		*ratio = s->rate > SAMPLE_ON * cap ? want : 1.0;
	else if (want > s->ratio * SAMPLE_STEP || want * SAMPLE_STEP < s->ratio)
		*ratio = want;
	else
		*ratio = s->ratio;
	return *ratio != s->ratio ? SAMPLER_CHANGE : SAMPLER_MEASURED;
}
