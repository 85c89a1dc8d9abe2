/* check_feed_rate: unit tests for feed_rate.c — the per-second cap as a token bucket on the
 * events' clock and the daemon's: its first second's worth, refills by either clock, a
 * replay held to real time, a clock that runs back, and a long random run held to the cap. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed_rate.h"
#include "testutil.h"

#define EPS 1e-9

/* Random inputs come from a fixed seed (ENTROPYD_TEST_SEED overrides it), printed on failure. */
#define SEED 0x20261203u

#define SEC 1000000000ULL

START_TEST(test_rate_initial_burst)
{
	struct feed_rate rc;

	memset(&rc, 0, sizeof(rc));
	/* One second's worth is there at once, not more. */
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 100, 5 * SEC, 9 * SEC), 10, EPS);
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 100, 5 * SEC, 9 * SEC), 0, EPS);

	/* Smaller wants are granted in full until the burst is spent. */
	memset(&rc, 0, sizeof(rc));
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 3, 0, 0), 3, EPS);
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 3, 0, 0), 3, EPS);
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 100, 0, 0), 4, EPS);
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 1, 0, 0), 0, EPS);
}
END_TEST

START_TEST(test_rate_refills_by_event_time)
{
	struct feed_rate rc;
	uint64_t t0 = 1000 * SEC, w0 = 3 * SEC;

	/* Live events: their time and the daemon's pass alike. */
	memset(&rc, 0, sizeof(rc));
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 100, t0, w0), 10, EPS);
	/* Half a second earns half the cap. */
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 100, t0 + SEC / 2, w0 + SEC / 2), 5, 1e-6);
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 100, t0 + 6 * SEC / 10, w0 + 6 * SEC / 10), 1,
				1e-6);
	/* A long pause refills to one second's worth, never more. */
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 100, t0 + 3600 * SEC, w0 + 3600 * SEC), 10,
				1e-6);
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 100, t0 + 3600 * SEC, w0 + 3600 * SEC), 0,
				1e-6);
}
END_TEST

START_TEST(test_rate_replay_held_to_real_time)
{
	/* A recording replayed a hundred times faster than it happened: ten seconds of
	 * recorded time for every tenth of a second of the daemon's. */
	struct feed_rate rc;
	double total = 0;

	memset(&rc, 0, sizeof(rc));
	for (int i = 0; i <= 100; i++)
		total += feed_rate_take(&rc, 10, 100, 50 * SEC + i * 10 * SEC, i * SEC / 10);
	/* 10 s of the daemon's time: the burst plus 10 s worth, not 1000 s worth. */
	ck_assert_double_eq_tol(total, 10 + 10 * 10, 1e-6);
	/* The recording ran ahead; of that lead only what could fill the bucket is kept: at the
	 * last step, whose refill had left it 1 bit full, 0.9 s. */
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 100, 1050 * SEC, 3600 * SEC), 9, 1e-6);
	/* Recorded time standing still then earns nothing, however long the daemon waits. */
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 100, 1050 * SEC, 7200 * SEC), 0, 1e-6);
	/* Both moving again: what both agree on. */
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 100, 1050 * SEC + SEC / 5, 7201 * SEC), 2,
				1e-6);
}
END_TEST

START_TEST(test_rate_batch_refills_by_its_span)
{
	/* Events handed over in batches, a second of them at a time: the daemon sees ten
	 * events at one instant, their own times 0.1 s apart. A second's worth per batch. */
	struct feed_rate rc;
	double per_batch[5];

	memset(&rc, 0, sizeof(rc));
	feed_rate_take(&rc, 10, 100, 0, 0); /* the initial burst */
	for (int b = 0; b < 5; b++) {
		per_batch[b] = 0;
		for (int i = 0; i < 10; i++)
			per_batch[b] += feed_rate_take(&rc, 10, 100, (uint64_t)(b * 10 + i) * SEC / 10,
						      (uint64_t)(b + 1) * SEC);
	}
	for (int b = 1; b < 5; b++)
		ck_assert_double_eq_tol(per_batch[b], 10, 1e-6);
}
END_TEST

START_TEST(test_rate_no_second_bucket_at_one_instant)
{
	/* After an idle spell the bucket is full, and neither clock's lead is banked beyond it:
	 * events whose own times are a second apart, seen at one instant (a replay, a clock
	 * step), get one bucketful between them, not two. */
	struct feed_rate rc;

	memset(&rc, 0, sizeof(rc));
	ck_assert_double_eq_tol(feed_rate_take(&rc, 100, 1, 10 * SEC, 10 * SEC), 1, EPS);
	ck_assert_double_eq_tol(feed_rate_take(&rc, 100, 1000, 11 * SEC, 3600 * SEC), 100, 1e-6);
	ck_assert_double_eq_tol(feed_rate_take(&rc, 100, 1000, 12 * SEC, 3600 * SEC), 0, 1e-6);
	/* The same with the clocks the other way round. */
	memset(&rc, 0, sizeof(rc));
	ck_assert_double_eq_tol(feed_rate_take(&rc, 100, 1, 10 * SEC, 10 * SEC), 1, EPS);
	ck_assert_double_eq_tol(feed_rate_take(&rc, 100, 1000, 3600 * SEC, 11 * SEC), 100, 1e-6);
	ck_assert_double_eq_tol(feed_rate_take(&rc, 100, 1000, 3600 * SEC, 12 * SEC), 0, 1e-6);
}
END_TEST

START_TEST(test_rate_time_backwards_no_refill)
{
	struct feed_rate rc;
	uint64_t t0 = 50 * SEC, w0 = 7 * SEC;

	memset(&rc, 0, sizeof(rc));
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 100, t0, w0), 10, EPS);
	/* Earlier timestamps (a replay starting over, a clock step) earn nothing ... */
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 100, t0 - 20 * SEC, w0), 0, EPS);
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 100, 0, w0), 0, EPS);
	/* ... and later ones earn no more than the daemon's own clock allows. */
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 100, t0 + SEC / 2, w0 + SEC / 2), 5, 1e-6);
}
END_TEST

START_TEST(test_rate_never_negative)
{
	struct feed_rate rc;

	memset(&rc, 0, sizeof(rc));
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 4, SEC, SEC), 4, EPS);
	ck_assert(feed_rate_take(&rc, 10, -5, SEC, SEC) == 0);
	ck_assert(feed_rate_take(&rc, 10, -INFINITY, SEC, SEC) == 0);
	ck_assert(feed_rate_take(&rc, 10, NAN, SEC, SEC) == 0);
	/* A negative want neither returned anything nor added tokens. */
	ck_assert_double_eq_tol(feed_rate_take(&rc, 10, 100, SEC, SEC), 6, EPS);
	ck_assert(feed_rate_take(&rc, 10, 100, SEC, SEC) == 0);

	/* A zero cap grants nothing, ever. */
	memset(&rc, 0, sizeof(rc));
	ck_assert(feed_rate_take(&rc, 0, 5, SEC, SEC) == 0);
	ck_assert(feed_rate_take(&rc, 0, 5, 100 * SEC, 100 * SEC) == 0);
}
END_TEST

START_TEST(test_rate_long_run_bound)
{
	/* Event time that now and then runs back, a daemon clock that runs at its own pace
	 * (0.3x to 1.5x the events'): credit stays within the cap on either clock. */
	const double cap = 100;
	struct feed_rate rc;
	uint64_t t = 7 * SEC, w = 2 * SEC, w_first = w, t_forward = 0;
	double total = 0, wanted = 0;

	tu_rng_seed(SEED);
	memset(&rc, 0, sizeof(rc));
	for (int i = 0; i < 200000; i++) {
		double want = tu_rng_unit() * 20, got;
		uint64_t step = tu_rng_next() % (20 * 1000 * 1000); /* up to 20 ms */

		/* One step in a hundred goes back in time. */
		if (tu_rng_next() % 100 == 0 && t > step) {
			t -= step;
		} else {
			t += step;
			t_forward += step;
		}
		w += (uint64_t)((double)step * (0.3 + 1.2 * tu_rng_unit()));
		got = feed_rate_take(&rc, cap, want, t, w);
		ck_assert_msg(got >= 0 && got <= want + EPS,
			      "event %d: got %g of %g (seed %#llx)", i, got, want,
			      (unsigned long long)tu_seed);
		total += got;
		wanted += want;
	}
	{
		double wall = (double)(w - w_first) / 1e9, forward = (double)t_forward / 1e9;
		double bound = cap * fmin(wall, forward) + cap;

		ck_assert_msg(total <= bound + 1e-6,
			      "credited %g over %g s (events moved forward %g s), bound %g (seed %#llx)",
			      total, wall, forward, bound, (unsigned long long)tu_seed);
		/* Demand is about ten times the cap, so the bucket must actually refill. */
		ck_assert_msg(wanted > 2 * bound, "demand %g too low for the test (seed %#llx)",
			      wanted, (unsigned long long)tu_seed);
		ck_assert_msg(total >= 0.5 * cap * fmin(wall, forward),
			      "credited only %g over %g s at cap %g (seed %#llx)", total, wall, cap,
			      (unsigned long long)tu_seed);
	}
}
END_TEST

static Suite *feed_rate_suite(void)
{
	Suite *s = suite_create("feed_rate");
	TCase *tc = tcase_create("rate_cap");

	tcase_add_test(tc, test_rate_initial_burst);
	tcase_add_test(tc, test_rate_refills_by_event_time);
	tcase_add_test(tc, test_rate_replay_held_to_real_time);
	tcase_add_test(tc, test_rate_batch_refills_by_its_span);
	tcase_add_test(tc, test_rate_no_second_bucket_at_one_instant);
	tcase_add_test(tc, test_rate_time_backwards_no_refill);
	tcase_add_test(tc, test_rate_never_negative);
	tcase_add_test(tc, test_rate_long_run_bound);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(feed_rate_suite());
}
