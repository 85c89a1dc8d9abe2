/* check_config_policy: unit tests for config_policy.c — rule resolution, per-event credit (the
 * per-second cap: check_feed_rate.c). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_policy.h"
#include "testutil.h"

#define EPS 1e-9

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

static Suite *policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *tr = tcase_create("resolve"), *tc = tcase_create("credit");

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
	return s;
}

int main(void)
{
	return tu_run_suite(policy_suite());
}
