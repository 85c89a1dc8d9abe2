/* check_input_class: the input class as the configuration and the status see it
 * (input_class.c): the keys of sources.input with their defaults, what each accepts and what
 * it says of a wrong value, the class's policy defaults, and the backend shown. */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "est.h"
#include "source_class.h"
#include "testutil.h"
#include "util.h"

START_TEST(test_defaults)
{
	struct config *cfg = config_defaults();

	ck_assert_str_eq(cfg->input.watch, "/dev/input");
	/* software can time a virtual device's events exactly: left out unless asked */
	ck_assert(cfg->input.exclude_virtual);
	ck_assert_uint_eq(cfg->input.include.n, 0);
	ck_assert_uint_eq(cfg->input.exclude.n, 0);
	ck_assert_int_eq(cfg->input.quantum_ns, EST_QUANTUM_DEFAULT_NS);
	ck_assert(cfg->input.estimate_interval == 10);
	ck_assert(cfg->input.health_retry == 3600);
	ck_assert_ptr_eq(source_class_all[CLASS_INPUT], &input_class);
	ck_assert_str_eq(input_class.name, "input");
	ck_assert_str_eq(input_class.instance_noun, "input device");
	ck_assert_int_eq(input_class.policy.mode, MODE_TRUSTED);
	ck_assert(input_class.policy.cap_bits_per_event == 2.0);
	ck_assert(input_class.policy.cap_bits_per_second == 64);
	ck_assert_uint_eq(input_class.batch_ns, 0);
	ck_assert_str_eq(source_class_backend(cfg, CLASS_INPUT), "evdev");
	config_free(cfg);
}
END_TEST

START_TEST(test_values)
{
	struct config_errors errs = {0};
	struct config *cfg = tu_config_text(
		"sources = { input = { watch = \"/run/test/input\"; exclude_virtual = false;\n"
		"  include = [ \"*Keyboard*\", \"/dev/input/event3\" ]; exclude = [ \"*Mouse*\" ];\n"
		"  quantum_ns = 2000; estimate_interval = 30; health_retry = 7200.5; }; };\n",
		&errs, NULL);

	ck_assert_msg(cfg != NULL, "%s", errs.n ? errs.msg[0] : "?");
	ck_assert_str_eq(cfg->input.watch, "/run/test/input");
	ck_assert(!cfg->input.exclude_virtual);
	ck_assert_uint_eq(cfg->input.include.n, 2);
	ck_assert_str_eq(cfg->input.include.v[1], "/dev/input/event3");
	ck_assert_uint_eq(cfg->input.exclude.n, 1);
	ck_assert_str_eq(cfg->input.exclude.v[0], "*Mouse*");
	ck_assert_int_eq(source_class_quantum_ns(cfg, CLASS_INPUT), 2000);
	ck_assert(source_class_estimate_interval(cfg, CLASS_INPUT) == 30);
	ck_assert(source_class_health_retry(cfg, CLASS_INPUT) == 7200.5);
	/* the backend is evdev whatever the configuration */
	ck_assert_str_eq(source_class_backend(cfg, CLASS_INPUT), "evdev");
	config_free(cfg);
	config_errors_free(&errs);
}
END_TEST

static const struct {
	const char *input, *said;
} bad[] = {
	{"watch = \"dev/input\";", "sources.input.watch: \"dev/input\" is not an absolute path; "
				   "allowed: an absolute path (a string starting with \"/\")"},
	{"watch = \"\";", "sources.input.watch: \"\" is not an absolute path; allowed: an absolute "
			  "path (a string starting with \"/\")"},
	{"watch = [ \"/dev/input\" ];", "sources.input.watch: wrong type (an array); allowed: an "
					"absolute path (a string starting with \"/\")"},
	{"exclude_virtual = 1;", "sources.input.exclude_virtual: wrong type (an integer); allowed: "
				 "true or false"},
	{"exclude_virtual = \"yes\";", "sources.input.exclude_virtual: wrong type (a string); "
				       "allowed: true or false"},
	{"include = [ \"\" ];", "sources.input.include[0]: the value is empty; allowed: a list of "
				"non-empty strings, e.g. [ \"a\", \"b*\" ] or []"},
	{"exclude = ( \"a\", 2 );", "sources.input.exclude[1]: wrong type (an integer); allowed: a "
				    "list of non-empty strings, e.g. [ \"a\", \"b*\" ] or []"},
	{"quantum_ns = 1000000001;", "sources.input.quantum_ns: 1000000001 is out of range; "
				     "allowed: an integer from 1 to 1000000000 ns"},
	{"devices = [ \"auto\" ];", "sources.input.devices: unknown key; allowed: watch, "
				    "exclude_virtual, include, exclude, quantum_ns, "
				    "estimate_interval, health_retry"},
};

START_TEST(test_bad)
{
	char *text = xasprintf("sources = { input = { %s }; };\n", bad[_i].input);

	tu_assert_config_says(text, bad[_i].said);
	free(text);
}
END_TEST

/* An empty include is every device; an include of "auto" is a name like any other. */
START_TEST(test_lists_as_written)
{
	char *said = tu_config_errors("sources = { input = { include = []; exclude = []; }; };");

	ck_assert_ptr_null(said);
	said = tu_config_errors("sources = { input = { include = [ \"auto\", \"kbd\" ]; }; };");
	ck_assert_ptr_null(said);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("input_class");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_values);
	tcase_add_loop_test(tc, test_bad, 0, ARRAY_SIZE(bad));
	tcase_add_test(tc, test_lists_as_written);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
