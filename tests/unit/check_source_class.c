/* check_source_class: unit tests for the class table (source_class.c, class_*.c). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "net_class.h"
#include "source_class.h"
#include "testutil.h"

START_TEST(test_every_class_described)
{
	for (int c = 0; c < CLASS_COUNT; c++) {
		const struct source_class *sc = source_class_all[c];

		ck_assert_ptr_nonnull(sc);
		ck_assert_str_eq(source_class_name(c), sc->name);
		ck_assert_int_eq(source_class_from_name(sc->name), c);
		ck_assert_ptr_nonnull(sc->settings);
		ck_assert_ptr_nonnull(sc->backend);
	}
	ck_assert_ptr_null(source_class_name(CLASS_COUNT));
	ck_assert_int_eq(source_class_from_name("tpm"), -1);
	ck_assert_int_eq(source_class_from_name(NULL), -1);
}
END_TEST

/* Each class's estimator parameters are its own fields, not another class's. */
START_TEST(test_estimator_parameters)
{
	struct config *cfg = config_defaults();

	cfg->input.quantum_ns = 11;
	cfg->block.quantum_ns = 22;
	cfg->network.quantum_ns = 33;
	cfg->input.estimate_interval = 1.5;
	cfg->block.estimate_interval = 2.5;
	cfg->network.estimate_interval = 3.5;
	ck_assert_int_eq(source_class_quantum_ns(cfg, CLASS_INPUT), 11);
	ck_assert_int_eq(source_class_quantum_ns(cfg, CLASS_BLOCK), 22);
	ck_assert_int_eq(source_class_quantum_ns(cfg, CLASS_NETWORK), 33);
	ck_assert(source_class_estimate_interval(cfg, CLASS_INPUT) == 1.5);
	ck_assert(source_class_estimate_interval(cfg, CLASS_BLOCK) == 2.5);
	ck_assert(source_class_estimate_interval(cfg, CLASS_NETWORK) == 3.5);
	config_free(cfg);
}
END_TEST

START_TEST(test_backend)
{
	struct config *cfg = config_defaults();

	ck_assert_str_eq(source_class_backend(cfg, CLASS_INPUT), "evdev");
	ck_assert_str_eq(source_class_backend(cfg, CLASS_BLOCK), "auto");
	cfg->block.backend = BACKEND_TRACEPOINT;
	ck_assert_str_eq(source_class_backend(cfg, CLASS_BLOCK), "tracepoint");
	cfg->block.backend = BACKEND_BLKTRACE;
	ck_assert_str_eq(source_class_backend(cfg, CLASS_BLOCK), "blktrace");
	cfg->block.backend = (enum block_backend)7;
	ck_assert_str_eq(source_class_backend(cfg, CLASS_BLOCK), "block");
	ck_assert_str_eq(source_class_backend(cfg, CLASS_NETWORK), "pcap");
	ck_assert_str_eq(source_class_backend(cfg, CLASS_COUNT), "unknown");
	config_free(cfg);
}
END_TEST

START_TEST(test_policy_defaults)
{
	struct config *cfg = config_defaults();

	for (int c = 0; c < CLASS_COUNT; c++) {
		const struct policy_rule *r = &cfg->policy[c].rule;

		ck_assert_int_eq(r->mode, source_class_all[c]->policy.mode);
		ck_assert(r->scale == 0.25);
		ck_assert(r->cap_bits_per_event == source_class_all[c]->policy.cap_bits_per_event);
		ck_assert(r->cap_bits_per_second == source_class_all[c]->policy.cap_bits_per_second);
	}
	config_free(cfg);
}
END_TEST

START_TEST(test_filter_compiles)
{
	char msg[256] = "";

	ck_assert(net_class_filter_compiles(NULL, 64, msg, sizeof(msg)));
	ck_assert(net_class_filter_compiles("", 64, msg, sizeof(msg)));
	ck_assert(net_class_filter_compiles("udp port 53", 64, msg, sizeof(msg)));
	ck_assert_str_eq(msg, "");
	ck_assert(!net_class_filter_compiles("tcp port", 64, msg, sizeof(msg)));
	ck_assert_msg(strstr(msg, "syntax error"), "libpcap's reason: \"%s\"", msg);
}
END_TEST

static Suite *source_class_suite(void)
{
	Suite *s = suite_create("source_class");
	TCase *t = tcase_create("table");

	tcase_add_test(t, test_every_class_described);
	tcase_add_test(t, test_estimator_parameters);
	tcase_add_test(t, test_backend);
	tcase_add_test(t, test_policy_defaults);
	tcase_add_test(t, test_filter_compiles);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tu_run_suite(source_class_suite());
}
