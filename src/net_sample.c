/* net_sample: the pure parts of sampling in the kernel (see net.h) — the
 * socket filter that keeps a random share of packets, and the share that follows the arrival
 * rate. No libpcap or socket calls here: net.c sets what this decides. */
#include "autoconf.h"

#include "net_sample.h"

#include <linux/filter.h>
#include <math.h>

#include "util.h"

void sampler_init(struct sampler *s)
{
	*s = (struct sampler){.ratio = 1.0, .rate = NAN};
}

void sampler_count(struct sampler *s, uint64_t n)
{
	s->taken += n;
}

void sampler_set(struct sampler *s, double ratio, uint64_t now_ns)
{
	s->settling = ratio != s->ratio;
	s->ratio = ratio;
	s->window_ns = now_ns;
	s->taken = 0;
}

enum sampler_news sampler_tick(struct sampler *s, uint32_t cap, uint64_t now_ns, double *ratio)
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

size_t sample_program(double ratio, const struct sock_filter *base, size_t n,
		      struct sock_filter *out)
{
	/* Kept when the kernel's random 32-bit number is at most ratio * 2^32 - 1. */
	double t = ratio * 4294967296.0 - 1;
	uint32_t k = t <= 0 ? 0 : t >= 4294967295.0 ? UINT32_MAX : (uint32_t)t;
	size_t i = 0;

	out[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 (uint32_t)(SKF_AD_OFF + SKF_AD_RANDOM));
	/* Above the threshold: on to the reject below; else over it, to the program. */
	out[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, k, 0, 1);
	out[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	if (!n) {
		out[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, UINT32_MAX);
		return i;
	}
	for (size_t j = 0; j < n; j++)
		out[i++] = base[j];
	return i;
}
