/* check_block_class: the block class as the configuration and the status see it
 * (block_class.c): the keys of sources.block with their defaults, what each accepts and what
 * it says of a wrong value, the class's policy and estimator defaults, and the backend shown. */
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

	ck_assert_int_eq(cfg->block.backend, BACKEND_AUTO);
	ck_assert_uint_eq(cfg->block.devices.n, 1);
	ck_assert_str_eq(cfg->block.devices.v[0], "auto");
	ck_assert_int_eq(cfg->block.quantum_ns, EST_QUANTUM_DEFAULT_NS);
	ck_assert(cfg->block.estimate_interval == 10);
	ck_assert(cfg->block.health_retry == 3600);
	ck_assert_str_eq(source_class_backend(cfg, CLASS_BLOCK), "auto");
	ck_assert_ptr_eq(source_class_all[CLASS_BLOCK], &block_class);
	ck_assert_str_eq(block_class.name, "block");
	ck_assert_str_eq(block_class.instance_noun, "disk with a medium");
	/* quantised disk latency is largely predictable: trusted, but at most 1 bit an event */
	ck_assert_int_eq(block_class.policy.mode, MODE_TRUSTED);
	ck_assert(block_class.policy.cap_bits_per_event == 1.0);
	ck_assert(block_class.policy.cap_bits_per_second == 128);
	ck_assert_int_eq(cfg->policy[CLASS_BLOCK].rule.mode, MODE_TRUSTED);
	/* one interrupt's completions, 1 to 6 us apart, are one timing event */
	ck_assert_uint_eq(block_class.batch_ns, 10000);
	ck_assert_int_eq(source_class_quantum_ns(cfg, CLASS_BLOCK), EST_QUANTUM_DEFAULT_NS);
	config_free(cfg);
}
END_TEST

/* What each key takes, from a file. */
START_TEST(test_values)
{
	struct config_errors errs = {0};
	struct config *cfg = tu_config_text(
		"sources = { block = { backend = \"blktrace\"; devices = [ \"sd?\", \"/dev/vdb\" ];\n"
		"  quantum_ns = 250; estimate_interval = 2.5; health_retry = 60; }; };\n",
		&errs, NULL);

	ck_assert_msg(cfg != NULL, "%s", errs.n ? errs.msg[0] : "?");
	ck_assert_int_eq(cfg->block.backend, BACKEND_BLKTRACE);
	ck_assert_str_eq(source_class_backend(cfg, CLASS_BLOCK), "blktrace");
	ck_assert_uint_eq(cfg->block.devices.n, 2);
	ck_assert_str_eq(cfg->block.devices.v[0], "sd?");
	ck_assert_str_eq(cfg->block.devices.v[1], "/dev/vdb");
	ck_assert_int_eq(source_class_quantum_ns(cfg, CLASS_BLOCK), 250);
	ck_assert(source_class_estimate_interval(cfg, CLASS_BLOCK) == 2.5);
	ck_assert(source_class_health_retry(cfg, CLASS_BLOCK) == 60);
	config_free(cfg);
	cfg = tu_config_text("sources = { block = { backend = \"tracepoint\"; }; };", &errs, NULL);
	ck_assert_ptr_nonnull(cfg);
	ck_assert_str_eq(source_class_backend(cfg, CLASS_BLOCK), "tracepoint");
	config_free(cfg);
	config_errors_free(&errs);
}
END_TEST

/* Each wrong value named, with what is allowed. */
static const struct {
	const char *block, *said;
} bad[] = {
	{"backend = \"perf\";",
	 "sources.block.backend: unknown value \"perf\"; allowed: \"auto\", \"tracepoint\", "
	 "\"blktrace\""},
	{"backend = 1;", "sources.block.backend: wrong type (an integer); allowed: \"auto\", "
			 "\"tracepoint\", \"blktrace\""},
	{"devices = [];", "sources.block.devices: the list is empty; allowed: [ \"auto\" ], or a "
			  "non-empty list of names or globs, e.g. [ \"sda\", \"nvme*\" ]"},
	{"devices = [ \"auto\", \"sda\" ];", "sources.block.devices: \"auto\" mixed with names; "
					     "allowed: [ \"auto\" ], or a non-empty list of names "
					     "or globs, e.g. [ \"sda\", \"nvme*\" ]"},
	{"devices = [ \"\" ];", "sources.block.devices[0]: the value is empty; allowed: "
				"[ \"auto\" ], or a non-empty list of names or globs, e.g. "
				"[ \"sda\", \"nvme*\" ]"},
	{"devices = \"sda\";", "sources.block.devices: wrong type (a string); allowed: [ \"auto\" ], "
			       "or a non-empty list of names or globs, e.g. [ \"sda\", \"nvme*\" ]"},
	{"quantum_ns = 0;", "sources.block.quantum_ns: 0 is out of range; allowed: an integer from "
			    "1 to 1000000000 ns"},
	{"estimate_interval = 0.5;", "sources.block.estimate_interval: 0.5 is out of range; "
				     "allowed: a number from 1 to 3600 seconds"},
	{"health_retry = 59;", "sources.block.health_retry: 59 is out of range; allowed: a number "
			       "from 60 to 604800 seconds"},
	{"watch = \"/dev/input\";", "sources.block.watch: unknown key; allowed: backend, devices, "
				    "quantum_ns, estimate_interval, health_retry"},
};

START_TEST(test_bad)
{
	char *text = xasprintf("sources = { block = { %s }; };\n", bad[_i].block);

	tu_assert_config_says(text, bad[_i].said);
	free(text);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("block_class");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_values);
	tcase_add_loop_test(tc, test_bad, 0, ARRAY_SIZE(bad));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
