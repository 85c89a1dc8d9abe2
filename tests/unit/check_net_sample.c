/* check_net_sample: the sampler of a live capture (net_sample.c) — the share of packets the
 * kernel keeps, from the rate measured window by window: none at or below the cap, about
 * cap / rate well above it, a flood acted on before its window ends. The sampling on a real
 * capture is t_pcap.sh's. */
#include "autoconf.h"

#include <check.h>
#include <math.h>
#include <stdint.h>

#include "net_sample.h"
#include "testutil.h"
#include "util.h"

/* The share follows the rate: none at or below the cap, about cap / rate well above it,
 * left alone within SAMPLE_STEP, not acted on in the window after a change. */
START_TEST(test_sampler)
{
	struct sampler s;
	uint64_t t = 5 * NS_PER_SEC;
	double r = -1;

	/* One window: `rate` arrivals a second, of which the share in force reach the socket. */
#define WINDOW(rate) (net_sample_count(&s, (uint64_t)((rate) * s.ratio)), t += NS_PER_SEC, \
		      net_sample_tick(&s, 1000, t, &r) == SAMPLER_CHANGE)
	net_sample_init(&s);
	ck_assert(s.ratio == 1 && isnan(s.rate));
	ck_assert(net_sample_tick(&s, 1000, t, &r) == SAMPLER_NONE); /* the first window starts */
	ck_assert(!WINDOW(900));
	ck_assert(fabs(s.rate - 900) < 1e-6);
	ck_assert(!WINDOW(1150)); /* above the cap, below SAMPLE_ON times it */
	ck_assert(WINDOW(50000));
	ck_assert(fabs(r - 0.02) < 1e-9);
	net_sample_set(&s, r, t);
	ck_assert(!WINDOW(50000)); /* settling */
	ck_assert(!WINDOW(60000)); /* within SAMPLE_STEP */
	ck_assert(fabs(s.rate - 60000) < 1e-6);
	ck_assert(WINDOW(10000));
	ck_assert(fabs(r - 0.1) < 1e-9);
	net_sample_set(&s, r, t);
	ck_assert(!WINDOW(10000));
	ck_assert(WINDOW(1100)); /* between the cap and SAMPLE_ON times it: still sampled... */
	ck_assert(fabs(r - 1000.0 / 1100) < 1e-9);
	net_sample_set(&s, r, t);
	ck_assert(!WINDOW(1100));
	ck_assert(WINDOW(999)); /* ... but at the cap, none */
	ck_assert(r == 1);
	net_sample_set(&s, r, t);
	ck_assert(!WINDOW(0));
	ck_assert(!WINDOW(0));
	ck_assert(s.rate == 0);
	/* Time that runs backwards starts a new window. */
	t -= 10 * NS_PER_SEC;
	ck_assert(net_sample_tick(&s, 1000, t, &r) == SAMPLER_NONE);
	/* Rate falls to nothing while sampling: off. */
	ck_assert(WINDOW(1e6));
	net_sample_set(&s, r, t);
	ck_assert(!WINDOW(1e6));
	ck_assert(WINDOW(0));
	ck_assert(r == 1);
	net_sample_set(&s, r, t);
	/* A flood is not waited for: 5000 packets in a tenth of a second, sampled there. */
	ck_assert(net_sample_tick(&s, 1000, t + NS_PER_SEC / 20, &r) == SAMPLER_NONE);
	net_sample_count(&s, 1200);
	ck_assert(net_sample_tick(&s, 1000, t + NS_PER_SEC / 20, &r) == SAMPLER_NONE);
	net_sample_count(&s, 3800);
	ck_assert(net_sample_tick(&s, 1000, t + NS_PER_SEC / 10, &r) == SAMPLER_CHANGE);
	ck_assert_msg(fabs(r - 0.02) < 1e-9, "%g", r);
	ck_assert(fabs(s.rate - 50000) < 1e-6);
	/* While sampling, a window that kept more than SAMPLE_STEP * SAMPLE_ON seconds of the
	 * cap ends early too, settling or not: the rate went up. */
	net_sample_set(&s, r, t);
	ck_assert(s.settling);
	net_sample_count(&s, 1700);
	ck_assert(net_sample_tick(&s, 1000, t + NS_PER_SEC / 10, &r) == SAMPLER_NONE);
	net_sample_count(&s, 200);
	ck_assert(net_sample_tick(&s, 1000, t + NS_PER_SEC / 5, &r) == SAMPLER_CHANGE);
	ck_assert_msg(fabs(r - 0.002105263) < 1e-6, "%g", r); /* 1900 / 0.02 / 0.2 s */
	t += NS_PER_SEC / 5;
	/* A window that measures without a change says so. */
	net_sample_set(&s, r, t);
	ck_assert(net_sample_tick(&s, 1000, t + NS_PER_SEC, &r) == SAMPLER_MEASURED);
#undef WINDOW
}
END_TEST

static Suite *net_sample_suite(void)
{
	Suite *s = suite_create("net_sample");
	TCase *tc = tcase_create("sampler");

	tcase_add_test(tc, test_sampler);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(net_sample_suite());
}
