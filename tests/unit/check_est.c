/* check_est: unit tests for est.c and est_kernel.c — the kernel's Δ/Δ²/Δ³ rule at a quantum. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "est.h"
#include "testutil.h"

#define US 1000ULL
#define MS 1000000ULL
#define SEC 1000000000ULL

/* Random inputs come from a fixed seed (ENTROPYD_TEST_SEED overrides it), printed on failure. */
#define SEED 0x20261203u

static void kernel_est(struct est *e, uint64_t quantum_ns, double cap_bits)
{
	struct est_params p = {.quantum_ns = quantum_ns, .cap_bits = cap_bits};

	est_init(e, &est_kernel_ops, &p);
}

/* Feed alternating intervals a, b (ns) from t0; return the estimate of event n (1-based). */
static double alternating(uint64_t quantum_ns, double cap, uint64_t a, uint64_t b, int n)
{
	struct est e;
	struct est_out out = {0};
	uint64_t t = 3 * SEC + 123;

	kernel_est(&e, quantum_ns, cap);
	for (int i = 1; i <= n; i++) {
		est_add(&e, t, &out);
		t += (i % 2) ? a : b;
	}
	est_fini(&e);
	return out.bits;
}

START_TEST(test_registry)
{
	ck_assert_ptr_eq(est_find("kernel"), &est_kernel_ops);
	ck_assert_ptr_null(est_find("no-such-estimator"));
	ck_assert_ptr_null(est_find(""));
}
END_TEST

START_TEST(test_first_three_events_no_credit)
{
	/* Wildly irregular intervals would earn credit at once if history were not required. */
	static const uint64_t t[] = {5 * SEC, 5 * SEC + 137 * US, 5 * SEC + 9071 * US};
	struct est e;
	struct est_out out;

	kernel_est(&e, 1000, 11);
	for (size_t i = 0; i < 3; i++) {
		est_add(&e, t[i], &out);
		ck_assert_msg(out.bits == 0, "event %zu earned %g bits", i + 1, out.bits);
		/* The first event has no delta, hence no symbol; later ones have. */
		ck_assert_msg(out.have_symbol == (i > 0), "event %zu: have_symbol %d", i + 1,
			      out.have_symbol);
	}
	/* The fourth, equally irregular, does earn. */
	est_add(&e, 5 * SEC + 9500 * US, &out);
	ck_assert(out.bits > 0);
	est_fini(&e);
}
END_TEST

START_TEST(test_constant_interval_zero)
{
	struct est e;
	struct est_out out;
	uint64_t t;

	tu_rng_seed(SEED);
	/* Any start, not aligned to the quantum; a constant interval that is. */
	t = SEC + tu_rng_next() % (1000 * SEC);
	kernel_est(&e, 1000, 11);
	for (int i = 1; i <= 1000; i++) {
		est_add(&e, t, &out);
		if (i > 3)
			ck_assert_msg(out.bits == 0,
				      "event %d: %g bits from a regular source (seed %#llx)", i,
				      out.bits, (unsigned long long)tu_seed);
		t += 1 * MS;
	}
	est_fini(&e);
}
END_TEST

START_TEST(test_stuck_source_zero)
{
	struct est e;
	struct est_out out;

	kernel_est(&e, 1, 11);
	for (int i = 1; i <= 100; i++) {
		est_add(&e, 42 * SEC + 17, &out);
		ck_assert_msg(out.bits == 0, "event %d: %g bits from a stuck source", i, out.bits);
		/* The same instant again is the same timing event: merged, no symbol. */
		ck_assert(out.merged == (i > 1));
		ck_assert(!out.have_symbol);
	}
	est_fini(&e);
}
END_TEST

START_TEST(test_alternating_1000_1100_us)
{
	/* Δ alternates 1000/1100 quanta: |Δ²| = 100, |Δ³| = 200, so min = 100 -> fls(50) = 6. */
	struct est e;
	struct est_out out;
	uint64_t t = 2 * SEC;

	kernel_est(&e, 1000, 11);
	for (int i = 1; i <= 200; i++) {
		est_add(&e, t, &out);
		if (i > 3)
			ck_assert_msg(out.bits == 6, "event %d: %g bits, want 6", i, out.bits);
		t += (i % 2) ? 1000 * US : 1100 * US;
	}
	est_fini(&e);
}
END_TEST

START_TEST(test_alternating_capped_by_class)
{
	ck_assert(alternating(1000, 4, 1000 * US, 1100 * US, 50) == 4);
	ck_assert(alternating(1000, 2.5, 1000 * US, 1100 * US, 50) == 2.5);
	ck_assert(alternating(1000, 0, 1000 * US, 1100 * US, 50) == 0);
	/* A cap above the estimate leaves it alone. */
	ck_assert(alternating(1000, 8, 1000 * US, 1100 * US, 50) == 6);
}
END_TEST

START_TEST(test_quantum_applies)
{
	/* The same 1000/1100 µs stream, seen at coarser quanta: Δ² = 100, 10, 1 quanta. */
	ck_assert(alternating(1000, 11, 1000 * US, 1100 * US, 50) == 6);     /* fls(50) */
	ck_assert(alternating(10000, 11, 1000 * US, 1100 * US, 50) == 3);    /* fls(5) */
	ck_assert(alternating(100000, 11, 1000 * US, 1100 * US, 50) == 0);   /* fls(0) */
	/* Quantum 0 is taken as 1 ns: 1000/1100 ns intervals then give 6 bits too. */
	ck_assert(alternating(0, 11, 1000, 1100, 50) == 6);
}
END_TEST

START_TEST(test_kernel_rule_max_11)
{
	/* Intervals of 1 s and 2 s at 1 ns: min(|Δ|,|Δ²|,|Δ³|) = 1e9, fls(5e8) = 29, but the
	 * kernel's rule stops at 11 even when the class cap is higher. */
	ck_assert(alternating(1, 64, 1 * SEC, 2 * SEC, 20) == 11);
}
END_TEST

static int fls64_ref(uint64_t v)
{
	int n = 0;

	while (v) {
		n++;
		v >>= 1;
	}
	return n;
}

static uint64_t iabs(int64_t v)
{
	return v < 0 ? (uint64_t)-v : (uint64_t)v;
}

START_TEST(test_symbols_and_bits_match_rule)
{
	/* Random intervals over six orders of magnitude, quantum not dividing them. */
	const uint64_t q = 1000;
	const double cap = 8;
	struct est e;
	struct est_out out;
	uint64_t t;
	int64_t prev_q = 0, d1 = 0, d2 = 0;
	uint64_t prev_t = 0;
	int merged = 0;

	tu_rng_seed(SEED);
	t = SEC + tu_rng_next() % SEC;
	kernel_est(&e, q, cap);
	for (int i = 1; i <= 20000; i++) {
		int64_t tq = (int64_t)(t / q);
		int64_t dd = tq - prev_q, dd2 = dd - d1, dd3 = dd2 - d2;
		uint64_t m = iabs(dd);
		double want;

		if (iabs(dd2) < m)
			m = iabs(dd2);
		if (iabs(dd3) < m)
			m = iabs(dd3);
		want = i > 3 ? fmin(fmin(fls64_ref(m / 2), 11), cap) : 0;

		est_add(&e, t, &out);
		/* Closer than a quantum to the event before: merged into it, nothing of its own,
		 * while the differences move on as the rule has them (the next event's bits). */
		if (i > 1 && t - prev_t < q) {
			ck_assert_msg(out.merged && !out.have_symbol && out.bits == 0,
				      "event %d, %llu ns after the one before: not merged (seed %#llx)",
				      i, (unsigned long long)(t - prev_t), (unsigned long long)tu_seed);
			merged++;
			goto next;
		}
		ck_assert_msg(!out.merged, "event %d merged (seed %#llx)", i,
			      (unsigned long long)tu_seed);
		ck_assert_msg(out.bits == want, "event %d: %g bits, rule says %g (seed %#llx)", i,
			      out.bits, want, (unsigned long long)tu_seed);
		if (i > 1) {
			ck_assert_msg(out.have_symbol, "event %d: no symbol", i);
			ck_assert_msg(out.symbol == (uint8_t)(dd & 0xff),
				      "event %d: symbol %u, want low byte of %lld (seed %#llx)", i,
				      out.symbol, (long long)dd, (unsigned long long)tu_seed);
		}
next:
		prev_q = tq;
		d1 = dd;
		d2 = dd2;
		prev_t = t;
		t += 1 + tu_rng_next() % (1ULL << (10 + tu_rng_next() % 20));
	}
	ck_assert_msg(merged > 100 && merged < 10000, "%d of 20000 events merged: the test "
		      "needs both kinds (seed %#llx)", merged, (unsigned long long)tu_seed);
	est_fini(&e);
}
END_TEST

START_TEST(test_symbol_is_low_byte_of_quantised_delta)
{
	/* 300 µs at 1 µs = 300 quanta = 0x12c -> 0x2c; the same at 1 ns would be 0xc0. */
	struct est e;
	struct est_out out;

	kernel_est(&e, 1000, 11);
	est_add(&e, 10 * SEC, &out);
	est_add(&e, 10 * SEC + 300 * US, &out);
	ck_assert(out.have_symbol);
	ck_assert_uint_eq(out.symbol, 300 & 0xff);
	/* Sub-quantum parts are floored away: 300.999 µs later is still 300 quanta. */
	est_add(&e, 10 * SEC + 600 * US + 999, &out);
	ck_assert_uint_eq(out.symbol, 300 & 0xff);
	est_fini(&e);
}
END_TEST

START_TEST(test_est_add_never_above_cap)
{
	static const double caps[] = {0, 0.5, 1, 3, 6.5, 11, 20};

	tu_rng_seed(SEED);
	for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		struct est e;
		struct est_out out;
		uint64_t t = SEC;

		kernel_est(&e, 1, caps[c]);
		for (int i = 0; i < 5000; i++) {
			est_add(&e, t, &out);
			ck_assert_msg(out.bits >= 0 && out.bits <= caps[c],
				      "cap %g: %g bits (seed %#llx)", caps[c], out.bits,
				      (unsigned long long)tu_seed);
			t += tu_rng_next() % (1ULL << (tu_rng_next() % 40));
		}
		est_fini(&e);
	}
}
END_TEST

/* An estimator that says whatever it is told, to check what est_add makes of it. */
static double fake_bits;

static void *fake_create(const struct est_params *p)
{
	static int token;

	return &token;
}

static void fake_add(void *state, const uint64_t *t_ns, size_t n, struct est_out *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (struct est_out){.bits = fake_bits, .have_symbol = true,
					  .symbol = (uint8_t)t_ns[i]};
}

static void fake_destroy(void *state)
{
}

static const struct est_ops fake_ops = {
	.name = "fake",
	.create = fake_create,
	.add = fake_add,
	.destroy = fake_destroy,
};

START_TEST(test_est_add_clamps_any_estimator)
{
	struct est_params p = {.quantum_ns = 1, .cap_bits = 3};
	struct est e;
	struct est_out out;

	est_init(&e, &fake_ops, &p);
	fake_bits = 1000;
	est_add(&e, 1, &out);
	ck_assert(out.bits == 3);
	fake_bits = INFINITY;
	est_add(&e, 2, &out);
	ck_assert(out.bits == 3);
	fake_bits = 2;
	est_add(&e, 3, &out);
	ck_assert(out.bits == 2);
	fake_bits = -4;
	est_add(&e, 4, &out);
	ck_assert(out.bits == 0);
	fake_bits = NAN;
	est_add(&e, 5, &out);
	ck_assert(out.bits == 0);
	ck_assert(out.have_symbol);
	ck_assert_uint_eq(out.symbol, 5);
	est_fini(&e);
	ck_assert_ptr_null(e.ops);
	est_fini(&e); /* twice is harmless */
}
END_TEST

static Suite *est_suite(void)
{
	Suite *s = suite_create("est");
	TCase *tc = tcase_create("kernel");

	tcase_add_test(tc, test_registry);
	tcase_add_test(tc, test_first_three_events_no_credit);
	tcase_add_test(tc, test_constant_interval_zero);
	tcase_add_test(tc, test_stuck_source_zero);
	tcase_add_test(tc, test_alternating_1000_1100_us);
	tcase_add_test(tc, test_alternating_capped_by_class);
	tcase_add_test(tc, test_quantum_applies);
	tcase_add_test(tc, test_kernel_rule_max_11);
	tcase_add_test(tc, test_symbols_and_bits_match_rule);
	tcase_add_test(tc, test_symbol_is_low_byte_of_quantised_delta);
	tcase_add_test(tc, test_est_add_never_above_cap);
	tcase_add_test(tc, test_est_add_clamps_any_estimator);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(est_suite());
}
