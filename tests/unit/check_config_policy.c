/* check_config_policy: unit tests for config_policy.c — rule resolution, per-event credit, per-second cap. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_policy.h"
#include "testutil.h"

#define EPS 1e-9

/* Random inputs come from a fixed seed (ENTROPYD_TEST_SEED overrides it), printed on failure. */
#define SEED 0x20261203u

static const struct policy_rule class_rule = {
	.mode = MODE_TRUSTED,
	.scale = 0.5,
	.cap_bits_per_event = 2,
	.cap_bits_per_second = 100,
};

/* Override values that differ from class_rule in every field. */
static const struct policy_rule other_rule = {
	.mode = MODE_DISABLED,
	.scale = 0.125,
	.cap_bits_per_event = 7,
	.cap_bits_per_second = 3,
};

static void rule_eq(const struct policy_rule *got, const struct policy_rule *want, const char *what)
{
	ck_assert_msg(got->mode == want->mode, "%s: mode %d, want %d", what, got->mode, want->mode);
	ck_assert_msg(got->scale == want->scale, "%s: scale %g, want %g", what, got->scale,
		      want->scale);
	ck_assert_msg(got->cap_bits_per_event == want->cap_bits_per_event,
		      "%s: cap/event %g, want %g", what, got->cap_bits_per_event,
		      want->cap_bits_per_event);
	ck_assert_msg(got->cap_bits_per_second == want->cap_bits_per_second,
		      "%s: cap/second %g, want %g", what, got->cap_bits_per_second,
		      want->cap_bits_per_second);
}

static void cfg_with(struct config *cfg, enum src_class cls, struct policy_override *ov, size_t n)
{
	memset(cfg, 0, sizeof(*cfg));
	for (int c = 0; c < CLASS_COUNT; c++)
		cfg->policy[c].rule = class_rule;
	cfg->policy[cls].overrides = ov;
	cfg->policy[cls].n_overrides = n;
}

START_TEST(test_resolve_no_overrides)
{
	struct config cfg;
	struct policy_rule r;

	cfg_with(&cfg, CLASS_NETWORK, NULL, 0);
	cfg.policy[CLASS_BLOCK].rule = other_rule;
	r = config_policy_resolve(&cfg, CLASS_NETWORK, "eth0");
	rule_eq(&r, &class_rule, "network/eth0");
	r = config_policy_resolve(&cfg, CLASS_BLOCK, "sda");
	rule_eq(&r, &other_rule, "block/sda takes its own class rule");
}
END_TEST

START_TEST(test_resolve_full_override)
{
	char name[] = "eth1";
	struct policy_override ov[] = {
		{.name = name, .set = RULE_SET_MODE | RULE_SET_SCALE | RULE_SET_CAP_EVENT |
				      RULE_SET_CAP_SECOND,
		 .rule = other_rule},
	};
	struct config cfg;
	struct policy_rule r;

	cfg_with(&cfg, CLASS_NETWORK, ov, 1);
	r = config_policy_resolve(&cfg, CLASS_NETWORK, "eth1");
	rule_eq(&r, &other_rule, "eth1 overridden");
	r = config_policy_resolve(&cfg, CLASS_NETWORK, "eth10");
	rule_eq(&r, &class_rule, "eth10 is not eth1");
	r = config_policy_resolve(&cfg, CLASS_NETWORK, "eth");
	rule_eq(&r, &class_rule, "eth is not eth1");
	/* An override belongs to its class only. */
	r = config_policy_resolve(&cfg, CLASS_INPUT, "eth1");
	rule_eq(&r, &class_rule, "input/eth1");
}
END_TEST

START_TEST(test_resolve_partial_override)
{
	static const unsigned flags[] = {RULE_SET_MODE, RULE_SET_SCALE, RULE_SET_CAP_EVENT,
					 RULE_SET_CAP_SECOND};
	char name[] = "sda";

	/* Each flag alone replaces exactly its field; the rest comes from the class rule. */
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		struct policy_override ov = {.name = name, .set = flags[i], .rule = other_rule};
		struct policy_rule want = class_rule, r;
		struct config cfg;
		char what[64];

		if (flags[i] == RULE_SET_MODE)
			want.mode = other_rule.mode;
		if (flags[i] == RULE_SET_SCALE)
			want.scale = other_rule.scale;
		if (flags[i] == RULE_SET_CAP_EVENT)
			want.cap_bits_per_event = other_rule.cap_bits_per_event;
		if (flags[i] == RULE_SET_CAP_SECOND)
			want.cap_bits_per_second = other_rule.cap_bits_per_second;
		cfg_with(&cfg, CLASS_BLOCK, &ov, 1);
		r = config_policy_resolve(&cfg, CLASS_BLOCK, "sda");
		snprintf(what, sizeof(what), "set = %#x", flags[i]);
		rule_eq(&r, &want, what);
	}

	/* Two fields together. */
	{
		struct policy_override ov = {.name = name,
					     .set = RULE_SET_MODE | RULE_SET_CAP_SECOND,
					     .rule = other_rule};
		struct policy_rule want = class_rule, r;
		struct config cfg;

		want.mode = other_rule.mode;
		want.cap_bits_per_second = other_rule.cap_bits_per_second;
		cfg_with(&cfg, CLASS_BLOCK, &ov, 1);
		r = config_policy_resolve(&cfg, CLASS_BLOCK, "sda");
		rule_eq(&r, &want, "mode + cap/second");
	}

	/* No flag: a matching override changes nothing. */
	{
		struct policy_override ov = {.name = name, .set = 0, .rule = other_rule};
		struct policy_rule r;
		struct config cfg;

		cfg_with(&cfg, CLASS_BLOCK, &ov, 1);
		r = config_policy_resolve(&cfg, CLASS_BLOCK, "sda");
		rule_eq(&r, &class_rule, "set = 0");
	}
}
END_TEST

START_TEST(test_resolve_first_match_wins)
{
	char glob[] = "eth*", exact[] = "eth1", wl[] = "?lan[0-3]";
	struct policy_override ov[3];
	struct policy_rule disabled = class_rule, reduced = class_rule, r;
	struct config cfg;

	disabled.mode = MODE_DISABLED;
	reduced.mode = MODE_REDUCED;

	/* The glob first: it wins for eth1 too, although an exact entry follows. */
	ov[0] = (struct policy_override){.name = glob, .set = RULE_SET_MODE, .rule = disabled};
	ov[1] = (struct policy_override){.name = exact, .set = RULE_SET_MODE, .rule = reduced};
	ov[2] = (struct policy_override){.name = wl, .set = RULE_SET_MODE, .rule = reduced};
	cfg_with(&cfg, CLASS_NETWORK, ov, 3);
	cfg.policy[CLASS_NETWORK].rule.mode = MODE_TRUSTED;
	ck_assert_int_eq(config_policy_resolve(&cfg, CLASS_NETWORK, "eth1").mode, MODE_DISABLED);
	ck_assert_int_eq(config_policy_resolve(&cfg, CLASS_NETWORK, "eth0").mode, MODE_DISABLED);
	ck_assert_int_eq(config_policy_resolve(&cfg, CLASS_NETWORK, "wlan2").mode, MODE_REDUCED);
	ck_assert_int_eq(config_policy_resolve(&cfg, CLASS_NETWORK, "wlan4").mode, MODE_TRUSTED);
	ck_assert_int_eq(config_policy_resolve(&cfg, CLASS_NETWORK, "lo").mode, MODE_TRUSTED);

	/* The exact name first: it wins for eth1, the glob still catches the rest. */
	ov[0] = (struct policy_override){.name = exact, .set = RULE_SET_MODE, .rule = reduced};
	ov[1] = (struct policy_override){.name = glob, .set = RULE_SET_MODE, .rule = disabled};
	ck_assert_int_eq(config_policy_resolve(&cfg, CLASS_NETWORK, "eth1").mode, MODE_REDUCED);
	ck_assert_int_eq(config_policy_resolve(&cfg, CLASS_NETWORK, "eth0").mode, MODE_DISABLED);

	/* A later match does not fill in fields the first match left unset. */
	ov[0] = (struct policy_override){.name = exact, .set = RULE_SET_MODE, .rule = reduced};
	ov[1] = (struct policy_override){.name = glob, .set = RULE_SET_SCALE,
					 .rule = other_rule};
	r = config_policy_resolve(&cfg, CLASS_NETWORK, "eth1");
	ck_assert_int_eq(r.mode, MODE_REDUCED);
	ck_assert(r.scale == class_rule.scale);
	r = config_policy_resolve(&cfg, CLASS_NETWORK, "eth7");
	ck_assert_int_eq(r.mode, MODE_TRUSTED);
	ck_assert(r.scale == other_rule.scale);
}
END_TEST

static struct policy_rule rule_of(enum policy_mode mode, double scale, double cap)
{
	return (struct policy_rule){.mode = mode, .scale = scale, .cap_bits_per_event = cap,
				    .cap_bits_per_second = 1e9};
}

START_TEST(test_credit_trusted)
{
	struct policy_rule r = rule_of(MODE_TRUSTED, 0.5, 4);

	ck_assert_double_eq_tol(config_policy_credit(&r, 1.5), 1.5, EPS);
	ck_assert_double_eq_tol(config_policy_credit(&r, 4), 4, EPS);
	ck_assert_double_eq_tol(config_policy_credit(&r, 9.75), 4, EPS); /* cap applied */
	ck_assert_double_eq_tol(config_policy_credit(&r, INFINITY), 4, EPS);
	ck_assert_double_eq_tol(config_policy_credit(&r, 0), 0, EPS);
}
END_TEST

START_TEST(test_credit_reduced)
{
	struct policy_rule r = rule_of(MODE_REDUCED, 0.25, 4);

	ck_assert_double_eq_tol(config_policy_credit(&r, 2), 0.5, EPS);
	/* The cap is applied before the weight: 0.25 * min(4, 10), not min(4, 0.25 * 10). */
	ck_assert_double_eq_tol(config_policy_credit(&r, 10), 1.0, EPS);
	r.scale = 0.75;
	ck_assert_double_eq_tol(config_policy_credit(&r, 3), 2.25, EPS);
}
END_TEST

START_TEST(test_credit_mix_only_and_disabled)
{
	struct policy_rule m = rule_of(MODE_MIX_ONLY, 0.5, 4), d = rule_of(MODE_DISABLED, 0.5, 4);
	static const double est[] = {0.5, 3, 4, 11, 1e6};

	for (size_t i = 0; i < sizeof(est) / sizeof(est[0]); i++) {
		ck_assert_msg(config_policy_credit(&m, est[i]) == 0, "mix-only credits %g for %g",
			      config_policy_credit(&m, est[i]), est[i]);
		ck_assert_msg(config_policy_credit(&d, est[i]) == 0, "disabled credits %g for %g",
			      config_policy_credit(&d, est[i]), est[i]);
	}
}
END_TEST

START_TEST(test_credit_bad_estimates_give_zero)
{
	static const enum policy_mode modes[] = {MODE_TRUSTED, MODE_REDUCED, MODE_MIX_ONLY,
						 MODE_DISABLED};
	static const double bad[] = {-1, -0.001, -INFINITY, NAN, -NAN};

	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct policy_rule r = rule_of(modes[m], 0.5, 4);

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			double c = config_policy_credit(&r, bad[i]);

			ck_assert_msg(c == 0, "mode %d: estimate %g credits %g", modes[m], bad[i],
				      c);
		}
	}
}
END_TEST

START_TEST(test_credit_cap_zero)
{
	struct policy_rule r = rule_of(MODE_TRUSTED, 0.5, 0);

	ck_assert(config_policy_credit(&r, 5) == 0);
}
END_TEST

#define SEC 1000000000ULL

START_TEST(test_rate_initial_burst)
{
	struct rate_cap rc;

	memset(&rc, 0, sizeof(rc));
	/* One second's worth is there at once, not more. */
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 100, 5 * SEC, 9 * SEC), 10, EPS);
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 100, 5 * SEC, 9 * SEC), 0, EPS);

	/* Smaller wants are granted in full until the burst is spent. */
	memset(&rc, 0, sizeof(rc));
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 3, 0, 0), 3, EPS);
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 3, 0, 0), 3, EPS);
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 100, 0, 0), 4, EPS);
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 1, 0, 0), 0, EPS);
}
END_TEST

START_TEST(test_rate_refills_by_event_time)
{
	struct rate_cap rc;
	uint64_t t0 = 1000 * SEC, w0 = 3 * SEC;

	/* Live events: their time and the daemon's pass alike. */
	memset(&rc, 0, sizeof(rc));
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 100, t0, w0), 10, EPS);
	/* Half a second earns half the cap. */
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 100, t0 + SEC / 2, w0 + SEC / 2), 5, 1e-6);
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 100, t0 + 6 * SEC / 10, w0 + 6 * SEC / 10), 1,
				1e-6);
	/* A long pause refills to one second's worth, never more. */
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 100, t0 + 3600 * SEC, w0 + 3600 * SEC), 10,
				1e-6);
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 100, t0 + 3600 * SEC, w0 + 3600 * SEC), 0,
				1e-6);
}
END_TEST

START_TEST(test_rate_replay_held_to_real_time)
{
	/* A recording replayed a hundred times faster than it happened: ten seconds of
	 * recorded time for every tenth of a second of the daemon's. */
	struct rate_cap rc;
	double total = 0;

	memset(&rc, 0, sizeof(rc));
	for (int i = 0; i <= 100; i++)
		total += config_policy_rate_cap_take(&rc, 10, 100, 50 * SEC + i * 10 * SEC, i * SEC / 10);
	/* 10 s of the daemon's time: the burst plus 10 s worth, not 1000 s worth. */
	ck_assert_double_eq_tol(total, 10 + 10 * 10, 1e-6);
	/* The recording ran ahead; of that lead only what could fill the bucket is kept: at the
	 * last step, whose refill had left it 1 bit full, 0.9 s. */
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 100, 1050 * SEC, 3600 * SEC), 9, 1e-6);
	/* Recorded time standing still then earns nothing, however long the daemon waits. */
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 100, 1050 * SEC, 7200 * SEC), 0, 1e-6);
	/* Both moving again: what both agree on. */
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 100, 1050 * SEC + SEC / 5, 7201 * SEC), 2,
				1e-6);
}
END_TEST

START_TEST(test_rate_batch_refills_by_its_span)
{
	/* Events handed over in batches, a second of them at a time: the daemon sees ten
	 * events at one instant, their own times 0.1 s apart. A second's worth per batch. */
	struct rate_cap rc;
	double per_batch[5];

	memset(&rc, 0, sizeof(rc));
	config_policy_rate_cap_take(&rc, 10, 100, 0, 0); /* the initial burst */
	for (int b = 0; b < 5; b++) {
		per_batch[b] = 0;
		for (int i = 0; i < 10; i++)
			per_batch[b] += config_policy_rate_cap_take(&rc, 10, 100, (uint64_t)(b * 10 + i) * SEC / 10,
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
	struct rate_cap rc;

	memset(&rc, 0, sizeof(rc));
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 100, 1, 10 * SEC, 10 * SEC), 1, EPS);
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 100, 1000, 11 * SEC, 3600 * SEC), 100, 1e-6);
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 100, 1000, 12 * SEC, 3600 * SEC), 0, 1e-6);
	/* The same with the clocks the other way round. */
	memset(&rc, 0, sizeof(rc));
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 100, 1, 10 * SEC, 10 * SEC), 1, EPS);
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 100, 1000, 3600 * SEC, 11 * SEC), 100, 1e-6);
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 100, 1000, 3600 * SEC, 12 * SEC), 0, 1e-6);
}
END_TEST

START_TEST(test_rate_time_backwards_no_refill)
{
	struct rate_cap rc;
	uint64_t t0 = 50 * SEC, w0 = 7 * SEC;

	memset(&rc, 0, sizeof(rc));
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 100, t0, w0), 10, EPS);
	/* Earlier timestamps (a replay starting over, a clock step) earn nothing ... */
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 100, t0 - 20 * SEC, w0), 0, EPS);
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 100, 0, w0), 0, EPS);
	/* ... and later ones earn no more than the daemon's own clock allows. */
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 100, t0 + SEC / 2, w0 + SEC / 2), 5, 1e-6);
}
END_TEST

START_TEST(test_rate_never_negative)
{
	struct rate_cap rc;

	memset(&rc, 0, sizeof(rc));
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 4, SEC, SEC), 4, EPS);
	ck_assert(config_policy_rate_cap_take(&rc, 10, -5, SEC, SEC) == 0);
	ck_assert(config_policy_rate_cap_take(&rc, 10, -INFINITY, SEC, SEC) == 0);
	ck_assert(config_policy_rate_cap_take(&rc, 10, NAN, SEC, SEC) == 0);
	/* A negative want neither returned anything nor added tokens. */
	ck_assert_double_eq_tol(config_policy_rate_cap_take(&rc, 10, 100, SEC, SEC), 6, EPS);
	ck_assert(config_policy_rate_cap_take(&rc, 10, 100, SEC, SEC) == 0);

	/* A zero cap grants nothing, ever. */
	memset(&rc, 0, sizeof(rc));
	ck_assert(config_policy_rate_cap_take(&rc, 0, 5, SEC, SEC) == 0);
	ck_assert(config_policy_rate_cap_take(&rc, 0, 5, 100 * SEC, 100 * SEC) == 0);
}
END_TEST

START_TEST(test_rate_long_run_bound)
{
	/* Event time that now and then runs back, a daemon clock that runs at its own pace
	 * (0.3x to 1.5x the events'): credit stays within the cap on either clock. */
	const double cap = 100;
	struct rate_cap rc;
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
		got = config_policy_rate_cap_take(&rc, cap, want, t, w);
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

static Suite *policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *tr = tcase_create("resolve"), *tc = tcase_create("credit"),
	      *tb = tcase_create("rate_cap");

	tcase_add_test(tr, test_resolve_no_overrides);
	tcase_add_test(tr, test_resolve_full_override);
	tcase_add_test(tr, test_resolve_partial_override);
	tcase_add_test(tr, test_resolve_first_match_wins);
	suite_add_tcase(s, tr);

	tcase_add_test(tc, test_credit_trusted);
	tcase_add_test(tc, test_credit_reduced);
	tcase_add_test(tc, test_credit_mix_only_and_disabled);
	tcase_add_test(tc, test_credit_bad_estimates_give_zero);
	tcase_add_test(tc, test_credit_cap_zero);
	suite_add_tcase(s, tc);

	tcase_add_test(tb, test_rate_initial_burst);
	tcase_add_test(tb, test_rate_refills_by_event_time);
	tcase_add_test(tb, test_rate_replay_held_to_real_time);
	tcase_add_test(tb, test_rate_batch_refills_by_its_span);
	tcase_add_test(tb, test_rate_no_second_bucket_at_one_instant);
	tcase_add_test(tb, test_rate_time_backwards_no_refill);
	tcase_add_test(tb, test_rate_never_negative);
	tcase_add_test(tb, test_rate_long_run_bound);
	suite_add_tcase(s, tb);
	return s;
}

int main(void)
{
	return tu_run_suite(policy_suite());
}
