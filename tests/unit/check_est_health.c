/* check_est_health: RCT/APT cutoffs against the reference table, and the credit state machine. */
#include "autoconf.h"

#include "est_health.h"
#include "testutil.h"
#include "util.h"

#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SRCDIR
#define SRCDIR "."
#endif
#define TABLE SRCDIR "/tests/data/sp80090b/README.md"

/* Random streams come from splitmix64 with this seed, so any failure can be replayed. */
#define SEED UINT64_C(0x5eed0000c0ffee42)
#define SEC UINT64_C(1000000000)
#define HOUR (3600 * SEC)

static uint64_t rng_state;

static uint8_t rnd(void)
{
	return (uint8_t)(tu_splitmix64(&rng_state) >> 56);
}

static void init_h(struct health *h, double h_claimed)
{
	struct health_cfg cfg;

	est_health_cfg_default(&cfg, h_claimed);
	ck_assert_ptr_null(est_health_cfg_check(&cfg));
	est_health_init(h, &cfg);
}

/* Feed random symbols (other than `avoid`, if it is 0..255) until start-up is over. */
static void reach_ok(struct health *h, int avoid)
{
	unsigned i;

	for (i = 0; i < HEALTH_STARTUP_SYMBOLS; i++) {
		uint8_t s;

		do
			s = rnd();
		while (s == avoid);
		est_health_feed(h, s);
	}
	ck_assert_msg(h->state == HEALTH_OK, "not OK after start-up (seed %#llx)",
		      (unsigned long long)SEED);
}

START_TEST(test_cutoff_table)
{
	static const char corrected_intro[] = "gives, for W = 512 and alpha = 2^-20:";
	FILE *f = fopen(TABLE, "r");
	char line[512];
	int rows = 0, corrected = 0;

	ck_assert_msg(f != NULL, "cannot open %s", TABLE);
	while (fgets(line, sizeof(line), f)) {
		unsigned rct20, rct30, apt20, apt30, aptw20, aptw30, c[5];
		const char *p;
		double hh;

		if (sscanf(line, "| %lf | %u | %u | %u | %u | %u / %u |", &hh, &rct20, &rct30,
			   &apt20, &apt30, &aptw20, &aptw30) == 7) {
			ck_assert_uint_eq(est_health_rct_cutoff(hh, 0x1p-20), rct20);
			ck_assert_uint_eq(est_health_rct_cutoff(hh, 0x1p-30), rct30);
			ck_assert_uint_eq(est_health_apt_cutoff(512, hh, 0x1p-20), apt20);
			ck_assert_uint_eq(est_health_apt_cutoff(512, hh, 0x1p-30), apt30);
			ck_assert_uint_eq(est_health_apt_cutoff(1024, hh, 0x1p-20), aptw20);
			ck_assert_uint_eq(est_health_apt_cutoff(1024, hh, 0x1p-30), aptw30);
			rows++;
		}
		/* The "corrected" form, 2 + CRITBINOM(W - 1, ...), is 1 + the plain cutoff of
		 * W - 1; it is listed for H = 0.5, 1, 2, 4, 8. */
		p = strstr(line, corrected_intro);
		if (p && sscanf(p + sizeof(corrected_intro) - 1, " %u, %u, %u, %u, %u", &c[0],
				&c[1], &c[2], &c[3], &c[4]) == 5) {
			static const double hs[5] = {0.5, 1, 2, 4, 8};
			int i;

			for (i = 0; i < 5; i++)
				ck_assert_uint_eq(1 + est_health_apt_cutoff(511, hs[i], 0x1p-20), c[i]);
			corrected++;
		}
	}
	fclose(f);
	ck_assert_int_eq(rows, 5);
	ck_assert_int_eq(corrected, 1);
}
END_TEST

START_TEST(test_cutoffs_misc)
{
	struct health h;

	/* The permanent level is stricter than the intermittent one. */
	init_h(&h, 4);
	ck_assert_uint_gt(h.rct_cutoff_permanent, h.rct_cutoff);
	ck_assert_uint_gt(h.apt_cutoff_permanent, h.apt_cutoff);
	ck_assert_uint_le(h.apt_cutoff_permanent, HEALTH_APT_WINDOW);
	/* Exact integers are not pushed up by rounding. */
	ck_assert_uint_eq(est_health_rct_cutoff(3, 0x1p-30), 11);
	ck_assert_uint_eq(est_health_rct_cutoff(0.1, 0x1p-30), 301);
	/* A tiny claim: cutoffs beyond reach rather than overflow. */
	ck_assert_uint_eq(est_health_rct_cutoff(1e-12, 0x1p-60), UINT_MAX);
	ck_assert_uint_gt(est_health_apt_cutoff(512, 0.001, 0x1p-30), 512);
}
END_TEST

START_TEST(test_cfg)
{
	struct health_cfg c;

	est_health_cfg_default(&c, 8);
	ck_assert_ptr_null(est_health_cfg_check(&c));
	c.h_claimed = 0;
	ck_assert_ptr_nonnull(est_health_cfg_check(&c));
	c.h_claimed = 8.5;
	ck_assert_ptr_nonnull(est_health_cfg_check(&c));
	c.h_claimed = NAN;
	ck_assert_ptr_nonnull(est_health_cfg_check(&c));
	est_health_cfg_default(&c, 2);
	c.alpha_permanent = c.alpha_intermittent;
	ck_assert_ptr_nonnull(est_health_cfg_check(&c));
	est_health_cfg_default(&c, 2);
	c.alpha_intermittent = 1;
	ck_assert_ptr_nonnull(est_health_cfg_check(&c));
	est_health_cfg_default(&c, 2);
	c.apt_window = 8;
	ck_assert_ptr_nonnull(est_health_cfg_check(&c));
	est_health_cfg_default(&c, 2);
	ck_assert_uint_eq(c.retry_ns, 3600 * SEC);
	c.retry_ns = 0;
	ck_assert_ptr_nonnull(est_health_cfg_check(&c));

	ck_assert_str_eq(est_health_state_name(HEALTH_STARTUP), "startup");
	ck_assert_str_eq(est_health_state_name(HEALTH_OK), "ok");
	ck_assert_str_eq(est_health_state_name(HEALTH_FAILED), "failed");
	ck_assert_str_eq(est_health_state_name(HEALTH_PERMANENT), "failed-permanent");
	ck_assert_str_eq(est_health_test_name(HEALTH_TEST_RCT), "repetition-count");
	ck_assert_str_eq(est_health_test_name(HEALTH_TEST_APT), "adaptive-proportion");
}
END_TEST

/* Honest claims pass: uniform over 256, 16 and 2 values, claimed 8, 4 and 1 bits. */
START_TEST(test_random_passes)
{
	static const struct {
		double h;
		uint8_t mask;
	} cases[] = {{8, 0xff}, {4, 0x0f}, {1, 0x01}};
	struct health h;
	unsigned i;

	rng_state = SEED;
	init_h(&h, cases[_i].h);
	for (i = 0; i < (1U << 20); i++)
		est_health_feed(&h, rnd() & cases[_i].mask);
	ck_assert_msg(h.state == HEALTH_OK && est_health_allows_credit(&h),
		      "H=%g: state %s (seed %#llx)", cases[_i].h, est_health_state_name(h.state),
		      (unsigned long long)SEED);
	ck_assert_uint_eq(h.count.rct_intermittent + h.count.apt_intermittent, 0);
	ck_assert_int_eq(h.last_test, HEALTH_TEST_NONE);
	ck_assert_uint_eq(h.count.symbols, 1U << 20);
}
END_TEST

START_TEST(test_startup)
{
	struct health h;
	unsigned i;

	rng_state = SEED;
	init_h(&h, 8);
	for (i = 1; i < HEALTH_STARTUP_SYMBOLS; i++) {
		ck_assert_int_eq(est_health_feed(&h, rnd()), HEALTH_STARTUP);
		ck_assert(!est_health_allows_credit(&h));
	}
	ck_assert_int_eq(est_health_feed(&h, rnd()), HEALTH_OK);
	ck_assert(est_health_allows_credit(&h));
}
END_TEST

/* A stuck source (or constant deltas): the RCT fails at exactly the cutoff, then latches. */
START_TEST(test_stuck)
{
	const uint8_t stuck = 0x42;
	struct health h;
	char why[96], want[96];
	unsigned i;


	rng_state = SEED;
	init_h(&h, 2);
	est_health_cause(&h, why, sizeof(why));
	ck_assert_str_eq(why, ""); /* never failed */
	reach_ok(&h, stuck);
	for (i = 1; i < h.rct_cutoff; i++)
		ck_assert_int_eq(est_health_feed(&h, stuck), HEALTH_OK);
	ck_assert_int_eq(est_health_feed(&h, stuck), HEALTH_FAILED);
	ck_assert(!est_health_allows_credit(&h));
	ck_assert_int_eq(h.last_test, HEALTH_TEST_RCT);
	ck_assert(!h.last_permanent);
	ck_assert_uint_eq(h.count.rct_intermittent, 1);
	for (i++; i < h.rct_cutoff_permanent; i++)
		ck_assert_int_eq(est_health_feed(&h, stuck), HEALTH_FAILED);
	ck_assert_int_eq(est_health_feed(&h, stuck), HEALTH_PERMANENT);
	ck_assert_uint_eq(h.count.rct_intermittent, 1); /* one run, counted once per level */
	ck_assert_uint_eq(h.count.rct_permanent, 1);
	ck_assert(!est_health_allows_credit(&h));
	/* Said in words, with the run's length and never the symbol. */
	est_health_cause(&h, why, sizeof(why));
	snprintf(want, sizeof(want), "its timing became periodic: one interval %u times in a row",
		 h.rct_cutoff_permanent);
	ck_assert_str_eq(why, want);
}
END_TEST

/* Periodic streams have no repeats for the RCT, but the APT catches them within a window,
 * and no credit is ever given. */
START_TEST(test_periodic)
{
	static const unsigned periods[] = {2, 3, 5};
	const unsigned period = periods[_i];
	struct health h;
	char why[96], want[96];
	unsigned i, failed_at = 0;

	init_h(&h, 4);
	for (i = 0; i < 200000; i++) {
		enum health_state st = est_health_feed(&h, (uint8_t)(0x30 + 7 * (i % period)));

		if (!failed_at && st == HEALTH_FAILED)
			failed_at = i + 1;
		ck_assert_msg(!est_health_allows_credit(&h), "period %u: credit at symbol %u", period,
			      i + 1);
	}
	/* The window's first symbol recurs every `period` symbols. */
	ck_assert_uint_eq(failed_at, (h.apt_cutoff - 1) * period + 1);
	ck_assert_uint_le(failed_at, HEALTH_APT_WINDOW);
	ck_assert_int_eq(h.last_test, HEALTH_TEST_APT);
	ck_assert_uint_eq(h.count.rct_intermittent, 0);
	ck_assert_uint_gt(h.count.apt_intermittent, 1);
	ck_assert(h.last_count == h.apt_cutoff || h.last_count == h.apt_cutoff_permanent);
	est_health_cause(&h, why, sizeof(why));
	snprintf(want, sizeof(want), "its timing became periodic: one interval in %u of %u",
		 h.last_count, HEALTH_APT_WINDOW);
	ck_assert_str_eq(why, want);
}
END_TEST

/* After an intermittent failure, credit returns only after a fresh window + 1024 clean symbols. */
START_TEST(test_recovery)
{
	const uint8_t stuck = 0x99;
	const unsigned need = HEALTH_APT_WINDOW + HEALTH_STARTUP_SYMBOLS;
	struct health h;
	unsigned i, round;

	rng_state = SEED;
	init_h(&h, 8);
	reach_ok(&h, stuck);
	for (round = 0; round < 3; round++) {
		for (i = 0; i < h.rct_cutoff; i++)
			est_health_feed(&h, stuck);
		ck_assert_int_eq(h.state, HEALTH_FAILED);
		ck_assert_uint_eq(h.count.rct_intermittent, round + 1);
		/* Failures closer together than `need` keep it failed; after the last one,
		 * it takes exactly `need` clean symbols. */
		for (i = 0; i < (round < 2 ? need / 2 : need - 1); i++) {
			uint8_t s;

			do
				s = rnd();
			while (s == stuck);
			ck_assert_int_eq(est_health_feed(&h, s), HEALTH_FAILED);
		}
	}
	ck_assert_int_eq(est_health_feed(&h, (uint8_t)(stuck + 1)), HEALTH_OK);
	ck_assert(est_health_allows_credit(&h));
	ck_assert_uint_eq(h.count.rct_permanent + h.count.apt_permanent, 0);
}
END_TEST

START_TEST(test_permanent)
{
	struct health h;
	uint64_t fails;
	unsigned i;

	rng_state = SEED;
	init_h(&h, 8);
	reach_ok(&h, 7);
	for (i = 0; i < h.rct_cutoff_permanent; i++)
		est_health_feed(&h, 7);
	ck_assert_int_eq(h.state, HEALTH_PERMANENT);
	ck_assert(h.last_permanent);
	fails = h.count.rct_intermittent;
	for (i = 0; i < 200000; i++)
		ck_assert_int_eq(est_health_feed(&h, rnd()), HEALTH_PERMANENT);
	ck_assert(!est_health_allows_credit(&h));

	/* Without event time (health_time()) only a reset ends it; the history stays. */
	est_health_reset(&h);
	ck_assert_int_eq(h.state, HEALTH_STARTUP);
	ck_assert_uint_eq(h.count.rct_intermittent, fails);
	ck_assert_uint_eq(h.count.rct_permanent, 1);
	reach_ok(&h, -1);
	ck_assert(est_health_allows_credit(&h));
}
END_TEST

START_TEST(test_reconfigure)
{
	struct health_cfg cfg;
	struct health h;

	rng_state = SEED;
	init_h(&h, 8);
	reach_ok(&h, -1);
	est_health_cfg_default(&cfg, 2);
	est_health_reconfigure(&h, &cfg);
	ck_assert_int_eq(h.state, HEALTH_OK);
	ck_assert_uint_eq(h.rct_cutoff, est_health_rct_cutoff(2, HEALTH_ALPHA_INTERMITTENT));
	ck_assert_uint_eq(h.apt_cutoff, est_health_apt_cutoff(HEALTH_APT_WINDOW, 2,
							  HEALTH_ALPHA_INTERMITTENT));
	ck_assert_uint_eq(h.count.symbols, HEALTH_STARTUP_SYMBOLS);
}
END_TEST

START_TEST(test_reconfigure_keeps_run)
{
	/* A run of one symbol that is fine under the old claim but at or past the new cutoff
	 * fails when the claim changes; it is not started over (which would let it through). */
	static const struct {
		double from, to;
		unsigned run;
		enum health_state want;
	} cases[] = {
		{1, 8, 8, HEALTH_FAILED},     /* H=8: cutoffs 5 and 9 */
		{2, 8, 15, HEALTH_PERMANENT}, /* H=2 allows 15; H=8's permanent cutoff is 9 */
		{1, 2, 8, HEALTH_OK},         /* H=2: cutoff 16, not reached */
	};

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct health_cfg cfg;
		struct health h;
		uint8_t last = 0;

		rng_state = SEED;
		init_h(&h, cases[c].from);
		reach_ok(&h, -1);
		do
			last = rnd();
		while (last == h.rct_sym);
		for (unsigned i = 0; i < cases[c].run; i++)
			ck_assert_int_eq(est_health_feed(&h, last), HEALTH_OK);
		est_health_cfg_default(&cfg, cases[c].to);
		est_health_reconfigure(&h, &cfg);
		ck_assert_msg(h.state == cases[c].want, "case %zu: state %s", c,
			      est_health_state_name(h.state));
		ck_assert_uint_eq(h.rct_run, cases[c].run);
		if (cases[c].want != HEALTH_OK)
			ck_assert_int_eq(h.last_test, HEALTH_TEST_RCT);
		/* The run goes on and counts on: no second failure for the same run. */
		est_health_feed(&h, last);
		ck_assert_uint_eq(h.rct_run, cases[c].run + 1);
	}
}
END_TEST

START_TEST(test_reconfigure_keeps_window)
{
	/* The APT window is not started over either: its end stays where it was. */
	struct health_cfg cfg;
	struct health h;
	unsigned seen;

	rng_state = SEED;
	init_h(&h, 1);
	reach_ok(&h, -1);
	for (int i = 0; i < 100; i++)
		est_health_feed(&h, rnd());
	seen = h.apt_seen;
	est_health_cfg_default(&cfg, 2);
	est_health_reconfigure(&h, &cfg);
	ck_assert_uint_eq(h.apt_seen, seen);
	ck_assert_int_eq(h.state, HEALTH_OK);
}
END_TEST

/* Symbols at event times `step` ns apart from *t on, stuck (one value) or random. */
static enum health_state feed_at(struct health *h, uint64_t *t, uint64_t step, unsigned n,
				 bool stuck)
{
	for (unsigned i = 0; i < n; i++) {
		*t += step;
		health_time(h, *t);
		est_health_feed(h, stuck ? 7 : rnd());
	}
	return h->state;
}

/* Stuck at 7, a second apart, until the permanent cutoff; the wait starts at *t then. */
static void fail_permanently(struct health *h, uint64_t *t)
{
	for (unsigned i = 0; i < h->rct_cutoff_permanent && h->state != HEALTH_PERMANENT; i++)
		feed_at(h, t, SEC, 1, true);
	ck_assert_int_eq(h->state, HEALTH_PERMANENT);
}

/* A permanent failure ends after the wait (an hour of event time by default) with a whole
 * start-up on good input: nothing before the wait is over, nothing before 1024 symbols
 * pass, credit after. */
START_TEST(test_permanent_requalifies)
{
	struct health h;
	uint64_t t = 5 * SEC, failed_at;

	rng_state = SEED;
	init_h(&h, 8);
	reach_ok(&h, 7);
	fail_permanently(&h, &t);
	failed_at = t;
	ck_assert_uint_eq(est_health_retry_left(&h), HOUR);
	/* Good symbols all through the hour, a second apart: still failed, and what is left
	 * shrinks with the events' time. */
	ck_assert_int_eq(feed_at(&h, &t, SEC, 3599, false), HEALTH_PERMANENT);
	ck_assert_uint_eq(est_health_retry_left(&h), SEC);
	ck_assert(!est_health_allows_credit(&h));
	ck_assert_uint_eq(h.retry.requalified, 0);
	/* The hour is over: a start-up again. */
	ck_assert_int_eq(feed_at(&h, &t, SEC, 1, false), HEALTH_STARTUP);
	ck_assert_uint_eq(t - failed_at, HOUR);
	ck_assert_uint_eq(h.retry.requalified, 1);
	ck_assert_uint_eq(est_health_retry_left(&h), 0);
	ck_assert_int_eq(feed_at(&h, &t, SEC, HEALTH_STARTUP_SYMBOLS - 2, false), HEALTH_STARTUP);
	ck_assert(!est_health_allows_credit(&h));
	ck_assert_int_eq(feed_at(&h, &t, SEC, 1, false), HEALTH_OK);
	ck_assert(est_health_allows_credit(&h));
	ck_assert_uint_eq(h.count.rct_permanent, 1);
}
END_TEST

/* A broken source stays off: re-qualified, it fails again at once, and each failure within
 * one wait of a re-qualification doubles the wait, up to 24 times the setting. A failure
 * after a longer good spell waits the setting again. */
START_TEST(test_permanent_stays_failed_on_bad_input)
{
	static const uint64_t waits[] = {1, 2, 4, 8, 16, 24, 24};
	struct health h;
	uint64_t t = 5 * SEC;

	rng_state = SEED;
	init_h(&h, 8);
	reach_ok(&h, 7);
	fail_permanently(&h, &t);
	for (size_t k = 0; k < sizeof(waits) / sizeof(waits[0]); k++) {
		ck_assert_msg(est_health_retry_left(&h) == waits[k] * HOUR, "wait %zu: %llu s, want %llu h",
			      k, (unsigned long long)(est_health_retry_left(&h) / SEC),
			      (unsigned long long)waits[k]);
		/* Stuck all through the wait (a minute apart): failed, nothing credited. */
		ck_assert_int_eq(feed_at(&h, &t, 60 * SEC, (unsigned)(waits[k] * 60 - 1), true),
				 HEALTH_PERMANENT);
		ck_assert(!est_health_allows_credit(&h));
		/* Re-qualified, and still stuck: a start-up that fails permanently again. */
		ck_assert_int_eq(feed_at(&h, &t, 60 * SEC, 1, true), HEALTH_STARTUP);
		ck_assert_uint_eq(h.retry.requalified, k + 1);
		fail_permanently(&h, &t);
		ck_assert(!est_health_allows_credit(&h));
	}
	ck_assert_uint_eq(h.count.rct_permanent, 1 + sizeof(waits) / sizeof(waits[0]));

	/* Good input once the day is over: back, and good for longer than the last wait; a
	 * failure then waits the setting again. */
	ck_assert_int_eq(feed_at(&h, &t, 60 * SEC, 24 * 60, false), HEALTH_STARTUP);
	ck_assert_int_eq(feed_at(&h, &t, 60 * SEC, HEALTH_STARTUP_SYMBOLS, false), HEALTH_OK);
	ck_assert_int_eq(feed_at(&h, &t, 60 * SEC, 24 * 60, false), HEALTH_OK);
	fail_permanently(&h, &t);
	ck_assert_uint_eq(est_health_retry_left(&h), HOUR);
}
END_TEST

/* Event time that runs backwards starts the wait again from there: it never shortens it. */
START_TEST(test_permanent_wait_time_backwards)
{
	struct health h;
	uint64_t t = 100 * HOUR;

	rng_state = SEED;
	init_h(&h, 8);
	reach_ok(&h, 7);
	fail_permanently(&h, &t);
	ck_assert_int_eq(feed_at(&h, &t, SEC, 1800, false), HEALTH_PERMANENT);
	t = 10 * HOUR; /* a stepped clock, a replay starting over */
	ck_assert_int_eq(feed_at(&h, &t, SEC, 1, false), HEALTH_PERMANENT);
	ck_assert_uint_eq(est_health_retry_left(&h), HOUR);
	ck_assert_int_eq(feed_at(&h, &t, SEC, 3599, false), HEALTH_PERMANENT);
	ck_assert_int_eq(feed_at(&h, &t, SEC, 1, false), HEALTH_STARTUP);
}
END_TEST

/* A later instance of the same source inherits the failure and its wait; one that was
 * re-qualified inherits only the wait (its next failure may double it). */
START_TEST(test_permanent_past)
{
	struct health h, later;
	struct health_past past;
	uint64_t t = 5 * SEC;

	rng_state = SEED;
	init_h(&h, 8);
	reach_ok(&h, 7);
	fail_permanently(&h, &t);
	est_health_past_save(&h, &past);
	ck_assert(past.failed);
	init_h(&later, 8);
	est_health_past_restore(&later, &past);
	ck_assert_int_eq(later.state, HEALTH_PERMANENT);
	ck_assert_int_eq(later.last_test, HEALTH_TEST_RCT);
	ck_assert_int_eq(feed_at(&later, &t, 60 * SEC, 59, false), HEALTH_PERMANENT);
	ck_assert_int_eq(feed_at(&later, &t, 60 * SEC, 1, false), HEALTH_STARTUP);

	est_health_past_save(&later, &past);
	ck_assert(!past.failed);
	init_h(&h, 8);
	est_health_past_restore(&h, &past);
	ck_assert_int_eq(h.state, HEALTH_STARTUP);
	fail_permanently(&h, &t);
	ck_assert_uint_eq(est_health_retry_left(&h), 2 * HOUR);
}
END_TEST

static Suite *health_suite(void)
{
	Suite *s = suite_create("health");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_cutoff_table);
	tcase_add_test(tc, test_cutoffs_misc);
	tcase_add_test(tc, test_cfg);
	tcase_add_loop_test(tc, test_random_passes, 0, 3);
	tcase_add_test(tc, test_startup);
	tcase_add_test(tc, test_stuck);
	tcase_add_loop_test(tc, test_periodic, 0, 3);
	tcase_add_test(tc, test_recovery);
	tcase_add_test(tc, test_permanent);
	tcase_add_test(tc, test_permanent_requalifies);
	tcase_add_test(tc, test_permanent_stays_failed_on_bad_input);
	tcase_add_test(tc, test_permanent_wait_time_backwards);
	tcase_add_test(tc, test_permanent_past);
	tcase_add_test(tc, test_reconfigure);
	tcase_add_test(tc, test_reconfigure_keeps_run);
	tcase_add_test(tc, test_reconfigure_keeps_window);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(health_suite());
}
