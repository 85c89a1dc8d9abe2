/* check_source_disabled: the classes and instances that policy disables, as status lists them
 * (source_disabled.c): in the order first set, each once, each gone when no longer disabled,
 * and each row under the rule the configuration gives it now. */
#include "autoconf.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "source_disabled.h"
#include "testutil.h"
#include "util.h"

static struct config *cfg;

static void setup(void)
{
	struct config_errors errs = {0};

	cfg = tu_config_text("policy = {\n"
			     "  network = { mode = \"disabled\";\n"
			     "    instances = ( { name = \"wlan*\"; mode = \"disabled\"; },\n"
			     "                  { name = \"eth1\"; mode = \"reduced\"; scale = 0.5; } ); };\n"
			     "  block = { mode = \"disabled\"; };\n"
			     "};\n",
			     &errs, NULL);
	ck_assert_msg(cfg != NULL, "%s", errs.n ? errs.msg[0] : "?");
	config_errors_free(&errs);
}

static void teardown(void)
{
	source_disabled_forget_all();
	config_free(cfg);
}

/* The rows there are now, "class/name" each, joined with spaces. */
static char *rows(void)
{
	struct inst_info in;
	char *out = xstrdup(""), *more;

	for (size_t i = 0; source_disabled_info(i, cfg, &in); i++) {
		more = xasprintf("%s%s%s/%s", out, i ? " " : "", source_class_name(in.cls), in.name);
		free(out);
		out = more;
	}
	return out;
}

static void assert_rows(const char *want)
{
	char *got = rows();

	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(test_order_and_once)
{
	assert_rows("");
	source_disabled_set(CLASS_NETWORK, "wlan0", true);
	source_disabled_set(CLASS_BLOCK, NULL, true);
	source_disabled_set(CLASS_NETWORK, "wlan1", true);
	source_disabled_set(CLASS_NETWORK, "wlan0", true); /* again: still once, in its place */
	source_disabled_set(CLASS_BLOCK, NULL, true);
	assert_rows("network/wlan0 block/" DISABLED_CLASS_NAME " network/wlan1");
	/* the same name in another class is another row */
	source_disabled_set(CLASS_INPUT, "wlan0", true);
	assert_rows("network/wlan0 block/* network/wlan1 input/wlan0");
	/* no longer disabled, or gone: off the list, first, middle and last */
	source_disabled_set(CLASS_NETWORK, "wlan0", false);
	assert_rows("block/* network/wlan1 input/wlan0");
	source_disabled_set(CLASS_NETWORK, "wlan1", false);
	assert_rows("block/* input/wlan0");
	source_disabled_set(CLASS_INPUT, "wlan0", false);
	assert_rows("block/*");
	/* the last one gone, a new one still goes at the end */
	source_disabled_set(CLASS_NETWORK, "wlan2", true);
	source_disabled_set(CLASS_INPUT, NULL, true);
	assert_rows("block/* network/wlan2 input/*");
	/* one that is not there, and the whole class by a name: nothing changes */
	source_disabled_set(CLASS_NETWORK, "eth0", false);
	source_disabled_set(CLASS_BLOCK, "*", false);
	assert_rows("block/* network/wlan2 input/*");
	source_disabled_forget_all();
	assert_rows("");
	source_disabled_set(CLASS_NETWORK, "wlan3", true);
	assert_rows("network/wlan3");
}
END_TEST

/* A row is what status shows of something never opened: no events, no estimate, weight 0,
 * and the rule the configuration gives it: its override's, or its class's. */
START_TEST(test_row)
{
	struct inst_info in;

	source_disabled_set(CLASS_NETWORK, "wlan0", true);
	source_disabled_set(CLASS_BLOCK, NULL, true);
	source_disabled_set(CLASS_NETWORK, "eth1", true);
	ck_assert(source_disabled_info(0, cfg, &in));
	ck_assert_int_eq(in.cls, CLASS_NETWORK);
	ck_assert_str_eq(in.name, "wlan0");
	ck_assert_str_eq(in.kind, "-");
	ck_assert_str_eq(in.state, "disabled by policy");
	ck_assert_str_eq(in.backend, "-");
	ck_assert_str_eq(in.estimator, "-");
	ck_assert_str_eq(in.health, "-");
	ck_assert_str_eq(in.health_last, "none");
	ck_assert(isnan(in.last_estimate));
	ck_assert(isnan(in.health_retry_in));
	ck_assert_int_eq(in.reason, PIPELINE_DISABLED);
	ck_assert_str_eq(in.reason_text, "policy: disabled (never opened)");
	ck_assert(in.weight == 0);
	ck_assert_uint_eq(in.c.events, 0);
	ck_assert_int_eq(in.rule.mode, MODE_DISABLED);

	ck_assert(source_disabled_info(1, cfg, &in));
	ck_assert_int_eq(in.cls, CLASS_BLOCK);
	ck_assert_str_eq(in.name, DISABLED_CLASS_NAME);
	ck_assert_str_eq(in.kind, "class");
	ck_assert_int_eq(in.rule.mode, MODE_DISABLED);

	/* its override's rule, whatever listed it */
	ck_assert(source_disabled_info(2, cfg, &in));
	ck_assert_str_eq(in.name, "eth1");
	ck_assert_int_eq(in.rule.mode, MODE_REDUCED);
	ck_assert(in.rule.scale == 0.5);
	ck_assert(!source_disabled_info(3, cfg, &in));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("source_disabled");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_order_and_once);
	tcase_add_test(tc, test_row);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
