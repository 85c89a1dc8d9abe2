/* check_est_kernel: the kernel's classic timer rule (est_kernel.h, est_kernel.c): credit
 * min(fls(min(|Δ|, |Δ²|, |Δ³|) >> 1), 11) bits on quantised times, nothing before three
 * earlier events, nothing for a regular source, and events closer than the batch gap merged.
 * The expected values are worked out by hand from random.c's add_timer_randomness(). */
#include "autoconf.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "est.h"
#include "est_kernel.h"
#include "testutil.h"
#include "util.h"

#define MAX_EV 8

struct kcase {
	const char *what;
	uint64_t quantum_ns, batch_ns;
	size_t n;
	uint64_t t[MAX_EV];      /* ns */
	double bits[MAX_EV];     /* what each earns */
	int symbol[MAX_EV];      /* the low 8 bits of Δ, or -1: none */
	bool merged[MAX_EV];
};

static const struct kcase cases[] = {
	/* quanta 1 3 7 15 31 63: Δ 2 4 8 16 32, Δ² 2 4 8 16, Δ³ 2 4 8; the first three earn
	 * nothing, then fls(2>>1)=1, fls(4>>1)=2, fls(8>>1)=3 */
	{"doubling gaps", 1000, 0, 6, {1000, 3000, 7000, 15000, 31000, 63000},
	 {0, 0, 0, 1, 2, 3}, {-1, 2, 4, 8, 16, 32}, {0}},
	/* a regular source: Δ² = 0 after the start, nothing at all */
	{"regular", 1000, 0, 6, {10000, 20000, 30000, 40000, 50000, 60000},
	 {0, 0, 0, 0, 0, 0}, {-1, 10, 10, 10, 10, 10}, {0}},
	/* large, irregular gaps: the cap of 11 bits; Δ 200000 400000 800000 (symbol: low byte) */
	{"capped at 11", 1, 0, 5, {100000, 300000, 700000, 1500000, 3100000},
	 {0, 0, 0, 11, 11}, {-1, 200000 & 0xff, 400000 & 0xff, 800000 & 0xff, 1600000 & 0xff},
	 {0}},
	/* the smallest of the three differences rules */
	{"smallest difference", 1, 0, 6, {1000, 1100, 1200, 1301, 1500, 1900},
	 /* event 4: Δ 101, Δ² 1, Δ³ 1 -> fls(0) = 0; event 5: Δ 199, Δ² 98, Δ³ 97 ->
	  * fls(48) = 6; event 6: Δ 400, Δ² 201, Δ³ 103 -> fls(51) = 6 */
	 {0, 0, 0, 0, 6, 6}, {-1, 100, 100, 101, 199, 400 & 0xff}, {0}},
	/* times quantised first: 1.5 quanta is 1 */
	{"quantised", 1000, 0, 5, {1500, 3999, 7000, 15999, 31000},
	 {0, 0, 0, 1, 2}, {-1, 2, 4, 8, 16}, {0}},
	/* closer than the batch gap (10 us): merged, no symbol and no credit, but the
	 * differences move on, so the next event earns what it would have */
	{"merged", 1000, 10000, 6, {100000, 300000, 305000, 700000, 1500000, 3100000},
	 /* event 4: Δ 395, Δ² 390, Δ³ 585 -> fls(195) = 8; event 5: Δ 800, Δ² 405, Δ³ 15 ->
	  * fls(7) = 3; event 6: Δ 1600, Δ² 800, Δ³ 395 -> fls(197) = 8 */
	 {0, 0, 0, 8, 3, 8}, {-1, 200, -1, 395 & 0xff, 800 & 0xff, 1600 & 0xff},
	 {false, false, true, false, false, false}},
	/* an event earlier than the one before (another CPU's clock): merged too */
	{"backwards", 1000, 0, 3, {500000, 400000, 900000}, {0, 0, 0}, {-1, -1, 500 & 0xff},
	 {false, true, false}},
};

START_TEST(test_rule)
{
	const struct kcase *c = &cases[_i];
	struct est_params p = {.quantum_ns = c->quantum_ns, .batch_ns = c->batch_ns, .cap_bits = 64};
	struct kernel_rule k;
	struct est_out out;

	kernel_rule_init(&k, &p);
	for (size_t i = 0; i < c->n; i++) {
		kernel_rule_add(&k, c->t[i], &out);
		ck_assert_msg(out.bits == c->bits[i], "%s: event %zu earned %g bits, want %g", c->what,
			      i + 1, out.bits, c->bits[i]);
		ck_assert_msg(out.merged == c->merged[i], "%s: event %zu %s", c->what, i + 1,
			      out.merged ? "merged" : "not merged");
		ck_assert_msg(out.have_symbol == (c->symbol[i] >= 0), "%s: event %zu %s a symbol",
			      c->what, i + 1, out.have_symbol ? "has" : "has no");
		if (c->symbol[i] >= 0)
			ck_assert_msg(out.symbol == c->symbol[i], "%s: event %zu symbol %u, want %d",
				      c->what, i + 1, out.symbol, c->symbol[i]);
	}
}
END_TEST

/* A source with a short fixed period below the batch gap is no batch: after EST_BATCH_MAX
 * merged in a row the next event gives a symbol, so the health tests see it. */
START_TEST(test_batch_bound)
{
	struct est_params p = {.quantum_ns = 1, .batch_ns = 1000};
	struct kernel_rule k;
	struct est_out out;
	size_t merged = 0;

	kernel_rule_init(&k, &p);
	kernel_rule_add(&k, 1000000, &out);
	for (size_t i = 1; i <= EST_BATCH_MAX + 1; i++) {
		kernel_rule_add(&k, 1000000 + i * 10, &out);
		if (out.merged)
			merged++;
		else
			break;
	}
	ck_assert_uint_eq(merged, EST_BATCH_MAX);
	ck_assert(out.have_symbol);
	ck_assert_uint_eq(out.symbol, 10);
}
END_TEST

/* As an estimator: found by name, the same results through est_ops, run by run, and the
 * class cap the last word. */
START_TEST(test_ops)
{
	const struct kcase *c = &cases[0];
	struct est_params p = {.quantum_ns = c->quantum_ns, .cap_bits = 2.5};
	struct est_out out[MAX_EV];
	struct est e;

	ck_assert_ptr_eq(est_find("kernel"), &est_kernel_ops);
	ck_assert_str_eq(est_kernel_ops.name, "kernel");
	est_init(&e, &est_kernel_ops, &p);
	est_add_run(&e, c->t, 3, out);
	est_add_run(&e, c->t + 3, c->n - 3, out + 3);
	for (size_t i = 0; i < c->n; i++)
		ck_assert_msg(out[i].bits == (c->bits[i] > 2.5 ? 2.5 : c->bits[i]),
			      "event %zu: %g bits", i + 1, out[i].bits);
	est_fini(&e);
}
END_TEST

/* fls, and |v| of the most negative difference */
START_TEST(test_helpers)
{
	static const struct {
		uint64_t v;
		int fls;
	} f[] = {{0, 0}, {1, 1}, {2, 2}, {3, 2}, {1024, 11}, {UINT64_MAX, 64}};

	for (size_t i = 0; i < ARRAY_SIZE(f); i++)
		ck_assert_int_eq(kernel_rule_fls(f[i].v), f[i].fls);
	ck_assert_uint_eq(kernel_rule_abs(-5), 5);
	ck_assert_uint_eq(kernel_rule_abs(INT64_MIN), (uint64_t)1 << 63);
	ck_assert_uint_eq(kernel_rule_abs(7), 7);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("est_kernel");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_rule, 0, ARRAY_SIZE(cases));
	tcase_add_test(tc, test_batch_bound);
	tcase_add_test(tc, test_ops);
	tcase_add_test(tc, test_helpers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
