/* check_est_online: unit tests for est_online.c, the online SP 800-90B estimator. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "est.h"
#include "est_90b_noniid.h"
#include "testutil.h"
#include "util.h"

#define US 1000ULL
#define MS 1000000ULL
#define SEC 1000000000ULL

#define BLOCK 4096 /* as in est_online.c */

/* Random inputs come from a fixed seed (ENTROPYD_TEST_SEED overrides it), printed on failure. */
#define SEED 0x5b90b5b9u

static void sp90b_est(struct est *e, uint64_t quantum_ns, double cap_bits, uint64_t jiffy_ns)
{
	struct est_params p = {.quantum_ns = quantum_ns, .cap_bits = cap_bits,
			       .jiffy_ns = jiffy_ns};

	est_init(e, &est_online_sp90b_ops, &p);
}

static struct est_report report(struct est *e)
{
	struct est_report r;

	e->ops->report(e->state, &r);
	return r;
}

/* A stream of events, with the symbols they produced. */
struct stream {
	uint64_t t;
	uint8_t *sym;
	size_t nsym, cap;
};

static void stream_init(struct stream *s, uint64_t t0)
{
	memset(s, 0, sizeof(*s));
	s->t = t0;
}

static void add(struct est *e, struct stream *s, struct est_out *out)
{
	est_add(e, s->t, out);
	if (!out->have_symbol)
		return;
	if (s->nsym == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 4096;
		s->sym = xreallocarray(s->sym, s->cap, 1);
	}
	s->sym[s->nsym++] = out->symbol;
}

START_TEST(test_registry)
{
	ck_assert_ptr_eq(est_find("sp800-90b"), &est_online_sp90b_ops);
	ck_assert_ptr_nonnull(est_online_sp90b_ops.report);
	ck_assert_ptr_eq(est_find("kernel"), &est_kernel_ops);
}
END_TEST

START_TEST(test_no_credit_before_first_estimate)
{
	struct est e;
	struct est_out out;
	struct est_report r;
	uint64_t t = 7 * SEC;

	tu_rng_seed(SEED);
	sp90b_est(&e, 1000, 8, 0);
	r = report(&e);
	ck_assert(!r.have_estimate);
	ck_assert_uint_eq(r.symbols, 0);
	for (int i = 1; i <= 1024; i++) {
		est_add(&e, t, &out);
		/* The first event has no delta, hence no symbol. */
		ck_assert_msg(out.have_symbol == (i > 1), "event %d: have_symbol %d", i,
			      out.have_symbol);
		ck_assert_msg(out.bits == 0, "event %d (symbol %d): %g bits before any estimate "
			      "(seed %#llx)", i, i - 1, out.bits, (unsigned long long)tu_seed);
		t += (tu_rng_next() % 65536) * US;
	}
	r = report(&e);
	ck_assert(!r.have_estimate);
	ck_assert_uint_eq(r.symbols, 1023);
	ck_assert_double_eq(r.h, 0);
	/* The 1024th symbol completes the first estimate, and its event is credited. */
	est_add(&e, t, &out);
	r = report(&e);
	ck_assert(r.have_estimate);
	ck_assert_uint_eq(r.symbols, 1024);
	/* (1024 random bytes: about 6 bits a symbol literally, less by their 8192 bits.) */
	ck_assert_msg(r.h > 3.5 && out.bits > 0, "h %g, bits %g (seed %#llx)", r.h, out.bits,
		      (unsigned long long)tu_seed);
	est_fini(&e);
}
END_TEST

START_TEST(test_constant_interval_zero)
{
	struct est e;
	struct est_out out;
	struct est_report r;
	uint64_t t;

	tu_rng_seed(SEED);
	t = SEC + tu_rng_next() % (1000 * SEC);
	sp90b_est(&e, 1000, 11, 0);
	for (int i = 1; i <= 3 * BLOCK; i++) {
		est_add(&e, t, &out);
		ck_assert_msg(out.bits == 0, "event %d: %g bits from a regular source (seed %#llx)",
			      i, out.bits, (unsigned long long)tu_seed);
		t += 1 * MS;
	}
	r = report(&e);
	ck_assert(r.have_estimate);
	ck_assert_double_eq(r.h, 0);
	ck_assert_str_eq(r.min_by, "single symbol");
	est_fini(&e);
}
END_TEST

START_TEST(test_alternating_intervals_zero)
{
	/* 1000/1100 µs: the kernel's rule credits 6 bits per event for ever, but the stream is
	 * perfectly predictable, which Lag and MultiMMC see. */
	struct est e, k;
	struct est_out out, kout;
	struct est_params kp = {.quantum_ns = 1000, .cap_bits = 11};
	struct est_report r;
	uint64_t t = 2 * SEC;

	sp90b_est(&e, 1000, 11, 0);
	est_init(&k, &est_kernel_ops, &kp);
	for (int i = 1; i <= 2 * BLOCK + 100; i++) {
		est_add(&e, t, &out);
		est_add(&k, t, &kout);
		if (i > 3)
			ck_assert_msg(kout.bits == 6, "event %d: kernel rule %g bits", i, kout.bits);
		ck_assert_msg(out.bits <= 0.01, "event %d: %g bits from a period-2 source", i,
			      out.bits);
		t += (i % 2) ? 1000 * US : 1100 * US;
	}
	r = report(&e);
	ck_assert(r.have_estimate);
	ck_assert_double_le(r.h, 0.01);
	ck_assert(r.valid_lit[SP90B_T_LAG] && r.h_lit[SP90B_T_LAG] <= 0.01);
	ck_assert(r.valid_lit[SP90B_T_MULTI_MMC] && r.h_lit[SP90B_T_MULTI_MMC] <= 0.01);
	/* MCV alone would have allowed a bit per symbol. */
	ck_assert_double_gt(r.h_lit[SP90B_T_MCV], 0.9);
	est_fini(&k);
	est_fini(&e);
}
END_TEST

START_TEST(test_replay_falls_to_zero)
{
	/* 512 random intervals played over and over: new-looking at first, then a replay
	 * longer than Lag's reach, which only the dictionary predictors can see. */
	uint64_t loop[512];
	struct est e;
	struct est_out out;
	struct est_report r;
	uint64_t t = 5 * SEC;

	tu_rng_seed(SEED);
	for (size_t i = 0; i < ARRAY_SIZE(loop); i++)
		loop[i] = (tu_rng_next() % 65536) * US + tu_rng_next() % US;
	sp90b_est(&e, 1000, 8, 0);
	for (int i = 0; i < 6 * BLOCK; i++) {
		est_add(&e, t, &out);
		/* From the first estimate on (two loops seen), credit is near zero. */
		if (i > 1024)
			ck_assert_msg(out.bits <= 0.1, "event %d: %g bits from a replay (seed %#llx)",
				      i, out.bits, (unsigned long long)tu_seed);
		t += loop[i % 512];
	}
	r = report(&e);
	ck_assert_double_le(r.h, 0.1);
	/* One with a long memory saw it: a dictionary predictor or a repeated substring. */
	ck_assert_msg(r.min_by && (strstr(r.min_by, "MultiMMC") || strstr(r.min_by, "LZ78Y") ||
				   strstr(r.min_by, "LRS") || strstr(r.min_by, "t-Tuple")),
		      "set by %s", r.min_by);
	/* The estimators without a long memory do not see it. */
	ck_assert_double_gt(r.h_lit[SP90B_T_MCV], 4);
	ck_assert_double_gt(r.h_lit[SP90B_T_LAG], 4);
	est_fini(&e);
}
END_TEST

START_TEST(test_random_near_8_bits_and_capped)
{
	/* Intervals uniform over 0..65535 µs: low bytes at 1 µs are uniform, 8 bits per
	 * symbol, of which 4096 symbols can show only about 6.6 (MCV's 99% bound on the mode's
	 * probability, 256 values seen ~16 times each). The credit is min(kernel rule,
	 * estimate, cap) exactly. */
	static const double caps[] = {11, 8, 4, 0.5};
	struct est e[ARRAY_SIZE(caps)], k;
	struct est_params kp = {.quantum_ns = 1000, .cap_bits = 64};
	uint64_t t = 9 * SEC;

	tu_rng_seed(SEED);
	for (size_t c = 0; c < ARRAY_SIZE(caps); c++)
		sp90b_est(&e[c], 1000, caps[c], 0);
	est_init(&k, &est_kernel_ops, &kp);
	for (int i = 0; i < 3 * BLOCK; i++) {
		struct est_out kout;

		est_add(&k, t, &kout);
		for (size_t c = 0; c < ARRAY_SIZE(caps); c++) {
			struct est_out out;
			struct est_report r;
			double want;

			est_add(&e[c], t, &out);
			r = report(&e[c]);
			want = r.have_estimate ? fmin(fmin(kout.bits, r.h), caps[c]) : 0;
			ck_assert_msg(out.bits == want, "event %d cap %g: %g bits, want %g "
				      "(seed %#llx)", i, caps[c], out.bits, want,
				      (unsigned long long)tu_seed);
		}
		t += (tu_rng_next() % 65536) * US + tu_rng_next() % US;
	}
	for (size_t c = 0; c < ARRAY_SIZE(caps); c++) {
		struct est_report r = report(&e[c]);

		/* The bitstring view's confidence bounds on 32768 bits take it below the
		 * literal view's ~6.6. */
		ck_assert_msg(r.h > 5 && r.h < 8, "h = %g (seed %#llx)", r.h,
			      (unsigned long long)tu_seed);
		for (int x = 0; x < SP90B_N_TESTS; x++) {
			ck_assert(!r.valid_lit[x] || (r.h_lit[x] >= r.h && r.h_lit[x] <= 8));
			ck_assert(r.valid_bit[x] && 8 * r.h_bit[x] >= r.h && r.h_bit[x] <= 1);
		}
		ck_assert(r.valid_lit[SP90B_T_MCV] && r.valid_lit[SP90B_T_LZ78Y] &&
			  !r.valid_lit[SP90B_T_COLLISION]);
		est_fini(&e[c]);
	}
	est_fini(&k);
}
END_TEST

/* The schedule of est_online.c: which estimators run on every estimated block (cheap), every
 * two minutes of event time (costly), every ten (full). */
#define T(x) SP90B_TEST_BIT(SP90B_T_##x)
static const unsigned lit_cheap =
	T(MCV) | T(MULTI_MCW) | T(LAG) | T(TUPLE) | T(LRS) | T(COLLISION) | T(MARKOV);
static const unsigned bit_cheap = T(MCV) | T(COLLISION) | T(MARKOV);
static const unsigned bit_full = T(MULTI_MCW) | T(LAG) | T(MULTI_MMC) | T(LZ78Y);
#undef T

/* The instance's view against sp90b_noniid(): each estimator's latest result from the block
 * (symbols of sym) given for its frequency, and H the least of them, as ea_non_iid takes it. */
static void expect_from(const struct est_report *r, const uint8_t *cheap, const uint8_t *costly,
			const uint8_t *full, size_t n, const char *when)
{
	struct sp90b_noniid_result a[3];
	const uint8_t *from[3] = {cheap, costly, full};
	double h_lit = 8, h_bit = 1;

	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(sp90b_noniid(NULL, from[i], n, 8, SP90B_ALL_TESTS,
					      SP90B_ALL_TESTS, &a[i]), 0);
	for (unsigned x = 0; x < SP90B_N_TESTS; x++) {
		const struct sp90b_noniid_result *l = &a[(lit_cheap >> x) & 1 ? 0 : 1];
		const struct sp90b_noniid_result *b =
			&a[(bit_cheap >> x) & 1 ? 0 : (bit_full >> x) & 1 ? 2 : 1];

		ck_assert_msg(r->valid_lit[x] == l->literal.valid[x], "%s: %s valid %d", when,
			      sp90b_test_name(x), r->valid_lit[x]);
		ck_assert_msg(r->valid_bit[x] == b->bitstring.valid[x], "%s: bitstring %s valid %d",
			      when, sp90b_test_name(x), r->valid_bit[x]);
		if (l->literal.valid[x]) {
			ck_assert_msg(r->h_lit[x] == l->literal.h[x], "%s: %s %.17g, assess %.17g",
				      when, sp90b_test_name(x), r->h_lit[x], l->literal.h[x]);
			h_lit = fmin(h_lit, l->literal.h[x]);
		}
		if (b->bitstring.valid[x]) {
			ck_assert_msg(r->h_bit[x] == b->bitstring.h[x],
				      "%s: bitstring %s %.17g, assess %.17g", when,
				      sp90b_test_name(x), r->h_bit[x], b->bitstring.h[x]);
			h_bit = fmin(h_bit, b->bitstring.h[x]);
		}
	}
	ck_assert_msg(r->h == fmin(h_lit, 8 * h_bit), "%s: h %.17g, want %.17g (seed %#llx)", when,
		      r->h, fmin(h_lit, 8 * h_bit), (unsigned long long)tu_seed);
}

/* All from one block: exactly sp90b_noniid(). */
static void expect_literal(const struct est_report *r, const uint8_t *sym, size_t n,
			   const char *when)
{
	struct sp90b_noniid_result a;

	expect_from(r, sym, sym, sym, n, when);
	ck_assert_int_eq(sp90b_noniid(NULL, sym, n, 8, SP90B_ALL_TESTS, SP90B_ALL_TESTS, &a), 0);
	ck_assert_msg(r->h == a.h_assessed, "%s: h %.17g, assessed %.17g", when, r->h,
		      a.h_assessed);
}

/* Intervals mostly 100 µs, a quarter anything up to 300 µs: skewed, so the estimators
 * disagree. */
static uint64_t skewed_interval(void)
{
	return (tu_rng_next() % 4 == 0) ? (tu_rng_next() % 300) * US : 100 * US + tu_rng_next() % US;
}

START_TEST(test_block_estimate_is_literal)
{
	struct est e;
	struct est_out out;
	struct stream s;

	tu_rng_seed(SEED);
	sp90b_est(&e, 1000, 8, 0);
	stream_init(&s, 11 * SEC);
	while (s.nsym < 9 * BLOCK) {
		size_t before = s.nsym;
		struct est_report r;

		add(&e, &s, &out);
		/* 512 ms more changes no symbol (512000 µs is 0 modulo 256) and makes each block
		 * span far more than the ten minutes after which every estimator runs again. */
		s.t += skewed_interval() + 512 * MS;
		if (s.nsym == before)
			continue;
		r = report(&e);
		switch (s.nsym) {
		case 1024:
		case 2048:
		case BLOCK:
			expect_literal(&r, s.sym, s.nsym, "first block");
			ck_assert_double_lt(r.h, 6);
			break;
		case 2 * BLOCK:
			/* A block spans far more than ten minutes: every estimator runs on
			 * every block, so each is all its own. */
			expect_literal(&r, s.sym + BLOCK, BLOCK, "block 1");
			break;
		case 9 * BLOCK:
			expect_literal(&r, s.sym + 8 * BLOCK, BLOCK, "block 8");
			break;
		default:
			break;
		}
	}
	ck_assert_uint_eq(report(&e).symbols, 9 * BLOCK);
	free(s.sym);
	est_fini(&e);
}
END_TEST

START_TEST(test_sub_jiffy_symbols)
{
	static const uint64_t jiffies[] = {4 * MS, 1 * MS, 10 * MS};
	static const uint64_t quanta[] = {1000, 1, 3000};

	tu_rng_seed(SEED);
	for (size_t j = 0; j < ARRAY_SIZE(jiffies); j++) {
		struct est e;
		uint64_t t = 3 * SEC + tu_rng_next() % SEC;

		uint64_t gap = 0, symbols = 0;

		sp90b_est(&e, quanta[j], 8, jiffies[j]);
		for (int i = 0; i < 2 * BLOCK; i++) {
			struct est_out out;
			struct est_report r;
			uint8_t want = (uint8_t)(t % jiffies[j] / quanta[j]);

			est_add(&e, t, &out);
			/* Within a quantum of the event before, it is that one's timing event:
			 * merged, no phase of its own, nothing earned. */
			if (i > 0 && gap < quanta[j]) {
				ck_assert(out.merged && !out.have_symbol && out.bits == 0);
				ck_assert_uint_eq(report(&e).symbols, symbols);
				gap = tu_rng_next() % (3 * jiffies[j]);
				t += gap;
				continue;
			}
			symbols++;
			/* Every other event has a phase, the first one too. */
			ck_assert(!out.merged);
			ck_assert(out.have_symbol);
			ck_assert_msg(out.symbol == want, "jiffy %llu quantum %llu, t %llu: symbol %u, "
				      "want %u", (unsigned long long)jiffies[j],
				      (unsigned long long)quanta[j], (unsigned long long)t,
				      out.symbol, want);
			/* The kernel's rule is not applied: the kernel counts that part. */
			r = report(&e);
			ck_assert(out.bits == (r.have_estimate ? fmin(r.h, 8) : 0));
			ck_assert_uint_eq(r.symbols, symbols);
			gap = tu_rng_next() % (3 * jiffies[j]);
			t += gap;
		}
		est_fini(&e);
	}
}
END_TEST

START_TEST(test_never_above_cap)
{
	static const double caps[] = {0, 0.25, 3, 8, 11};

	tu_rng_seed(SEED);
	for (size_t c = 0; c < ARRAY_SIZE(caps); c++) {
		for (int kind = 0; kind < 4; kind++) {
			struct est e;
			uint64_t t = 4 * SEC;

			sp90b_est(&e, kind == 3 ? 1 : 1000, caps[c], kind == 2 ? 4 * MS : 0);
			for (int i = 0; i < BLOCK + 2048; i++) {
				struct est_out out;

				est_add(&e, t, &out);
				ck_assert_msg(out.bits >= 0 && out.bits <= caps[c],
					      "kind %d cap %g event %d: %g bits (seed %#llx)", kind,
					      caps[c], i, out.bits, (unsigned long long)tu_seed);
				/* A clock stepping back now and then must not upset anything. */
				if (tu_rng_next() % 1000 == 0)
					t -= tu_rng_next() % MS;
				else
					t += tu_rng_next() % (kind == 1 ? 300 * US : 70 * MS);
			}
			est_fini(&e);
		}
	}
}
END_TEST

START_TEST(test_instances_independent)
{
	/* Scratch is shared; each instance's estimate must still be its own. */
	struct est a, b, c;
	struct est_out out;
	uint64_t ta = SEC, tb = SEC, tc = SEC;

	tu_rng_seed(SEED);
	sp90b_est(&a, 1000, 8, 0);
	sp90b_est(&b, 1000, 8, 0);
	for (int i = 0; i < BLOCK + 1; i++) {
		est_add(&a, ta, &out);
		est_add(&b, tb, &out);
		ta += (tu_rng_next() % 65536) * US;
		tb += 1 * MS;
		if (i == 2000) {
			/* One comes and goes midway. */
			sp90b_est(&c, 1000, 8, 0);
			est_add(&c, tc, &out);
			est_fini(&c);
		}
	}
	ck_assert_double_gt(report(&a).h, 4.5);
	ck_assert_double_eq(report(&b).h, 0);
	est_fini(&b);
	est_fini(&a);
}
END_TEST

START_TEST(test_flood_estimated_every_ten_seconds)
{
	/* Random intervals of 5-15 µs: a 4096-symbol block every ~41 ms. A block is estimated
	 * once ten seconds of event time have passed since the last one, so about one in 245;
	 * at 2.5-3.5 ms between events (a block in ~12 s) every block is. */
	struct est fast, slow;
	struct est_out out;
	struct est_report r;
	uint64_t t = 5 * SEC, t0 = t;

	tu_rng_seed(SEED);
	sp90b_est(&fast, 1000, 8, 0);
	while (report(&fast).blocks < 1000) {
		est_add(&fast, t, &out);
		t += 5 * US + tu_rng_next() % (10 * US);
	}
	r = report(&fast);
	/* The first block, then one per ten seconds of the ~41 s that follow it. */
	ck_assert_msg(r.estimated >= (t - t0) / (10 * SEC) && r.estimated <= 1 + (t - t0) / (10 * SEC),
		      "%llu of 1000 blocks estimated over %.2f s (seed %#llx)",
		      (unsigned long long)r.estimated, (double)(t - t0) / 1e9,
		      (unsigned long long)tu_seed);
	ck_assert(r.have_estimate && r.h > 0);
	est_fini(&fast);

	sp90b_est(&slow, 1000, 8, 0);
	while (report(&slow).blocks < 4) {
		est_add(&slow, t, &out);
		t += 2500 * US + tu_rng_next() % MS;
	}
	ck_assert_uint_eq(report(&slow).estimated, 4);
	est_fini(&slow);
}
END_TEST

START_TEST(test_single_value_block_keeps_results)
{
	/* A source repeating 200 random intervals: only the estimators with a long memory
	 * (LRS, t-Tuple, MultiMMC, LZ78Y) see it, and they run every two minutes. One block of
	 * a single value between must not wipe what they found: the block after it runs them
	 * all again, and H stays near 0. (Each interval is 2560 µs longer than its symbol
	 * says: a block takes about 11 s, so every block is estimated, the costly estimators
	 * only every ~11th.) */
	uint64_t loop[200], t = 3 * SEC;
	struct est e;
	struct est_out out;

	tu_rng_seed(SEED);
	for (size_t i = 0; i < ARRAY_SIZE(loop); i++)
		loop[i] = (tu_rng_next() % 256) * US + 2560 * US;
	sp90b_est(&e, 1000, 8, 0);
	for (int i = 0; i < 4 * BLOCK + 1; i++) { /* the first event gives no symbol */
		t += loop[i % 200];
		est_add(&e, t, &out);
	}
	ck_assert_msg(report(&e).h <= 0.1, "the repeats were not seen: %g by %s", report(&e).h,
		      report(&e).min_by);
	for (int i = 0; i < BLOCK; i++) { /* one block, one value */
		t += 2560 * US;
		est_add(&e, t, &out);
	}
	ck_assert_double_eq(report(&e).h, 0);
	ck_assert_str_eq(report(&e).min_by, "single symbol");
	for (int i = 0; i < BLOCK; i++) {
		t += loop[i % 200];
		est_add(&e, t, &out);
	}
	ck_assert_uint_eq(report(&e).estimated, 6);
	ck_assert_msg(report(&e).h <= 0.1, "after a single-value block: %g by %s", report(&e).h,
		      report(&e).min_by);
	est_fini(&e);
}
END_TEST

/* A busy source for `seconds` of event time from *t on: ~10,000 events a second (50-150 µs
 * apart), a block every ~0.4 s. */
static void busy(struct est *e, uint64_t *t, unsigned seconds)
{
	uint64_t t0 = *t;
	struct est_out out;

	while (*t - t0 < seconds * SEC) {
		est_add(e, *t, &out);
		*t += 50 * US + tu_rng_next() % (100 * US);
	}
}

START_TEST(test_schedule_busy_and_slow)
{
	/* Busy: ~10,000 events a second, a block every ~0.4 s, estimated every ten seconds for
	 * 25 minutes of event time: the costly estimators every two minutes, all of them every
	 * ten, besides the two start-up estimates. Slow: a block per ~370 s, the costly ones on
	 * every block, all of them on the first block that comes ten minutes after the last. */
	struct est e;
	struct est_out out;
	struct est_report r;
	uint64_t t = 2 * SEC;

	tu_rng_seed(SEED);
	sp90b_est(&e, 1000, 8, 0);
	busy(&e, &t, 1500);
	r = report(&e);
	/* one every 10-10.4 s after the first */
	ck_assert_msg(r.estimated >= 1 + 144 && r.estimated <= 1 + 150, "%llu estimated",
		      (unsigned long long)r.estimated);
	/* 2 start-up, then every 600-610 s: at ~600 and ~1200 s */
	ck_assert_msg(r.full_runs == 2 + 2, "%llu full runs of %llu estimates",
		      (unsigned long long)r.full_runs, (unsigned long long)r.estimated);
	/* every 120-130 s: 11 or 12 after the start-up ones */
	ck_assert_msg(r.costly_runs >= 2 + 11 && r.costly_runs <= 2 + 12,
		      "%llu costly runs of %llu estimates", (unsigned long long)r.costly_runs,
		      (unsigned long long)r.estimated);
	est_fini(&e);

	sp90b_est(&e, 1000, 8, 0);
	for (int i = 0; i < 3 * BLOCK + 1; i++) {
		est_add(&e, t, &out);
		t += 80 * MS + tu_rng_next() % (20 * MS);
	}
	r = report(&e);
	ck_assert_uint_eq(r.estimated, 3);
	/* the first block comes ~185 s after the 2048-symbol estimate: costly, not all; the
	 * second ~555 s after the last full one: costly; the third ~925 s: all */
	ck_assert_uint_eq(r.full_runs, 2 + 1);
	ck_assert_uint_eq(r.costly_runs, 2 + 3);
	est_fini(&e);
}
END_TEST

START_TEST(test_schedule_follows_interval)
{
	/* The interval given in est_params sets the whole schedule: at 60 s, a busy stream
	 * (~10,000 events a second) for 65 minutes of event time has a block estimated every
	 * minute, the costly estimators every 12 and all of them every 60 minutes. */
	struct est_params p = {.quantum_ns = 1000, .cap_bits = 8, .estimate_every_ns = 60 * SEC};
	struct est e;
	struct est_report r;
	uint64_t t = 2 * SEC;

	tu_rng_seed(SEED);
	est_init(&e, &est_online_sp90b_ops, &p);
	busy(&e, &t, 3900);
	r = report(&e);
	/* one every 60-60.4 s after the first */
	ck_assert_msg(r.estimated >= 1 + 64 && r.estimated <= 1 + 65, "%llu estimated",
		      (unsigned long long)r.estimated);
	ck_assert_msg(r.full_runs == 2 + 1, "%llu full runs", (unsigned long long)r.full_runs);
	/* at ~12, 24, 36, 48 and 60 (full) minutes */
	ck_assert_msg(r.costly_runs == 2 + 5, "%llu costly runs",
		      (unsigned long long)r.costly_runs);
	est_fini(&e);
}
END_TEST

/* est_add_run() over runs of any length gives every event what est_add() gives it alone:
 * the same symbol and bits, the same estimates (blocks estimated within a run), at the
 * default quantum and another, at full resolution and below a jiffy, through a clock that
 * steps back; and so does the kernel rule. */
START_TEST(test_runs_as_single_events)
{
	enum { N = 14000 };
	static uint64_t t[N];
	static struct est_out one[N], runs[N];
	const struct {
		const struct est_ops *ops;
		struct est_params p;
	} cases[] = {
		{&est_online_sp90b_ops, {.quantum_ns = 1000, .cap_bits = 8, .estimate_every_ns = SEC}},
		{&est_online_sp90b_ops, {.quantum_ns = 100, .cap_bits = 6, .estimate_every_ns = SEC}},
		{&est_online_sp90b_ops,
		 {.quantum_ns = 1000, .cap_bits = 8, .jiffy_ns = 4 * MS, .estimate_every_ns = SEC}},
		{&est_kernel_ops, {.quantum_ns = 1000, .cap_bits = 11}},
	};
	uint64_t now = 5 * SEC;

	tu_rng_seed(SEED);
	for (size_t i = 0; i < N; i++) {
		t[i] = now += 200 * US + tu_rng_next() % (3 * MS);
		if (i == N / 2)
			t[i] -= 2 * SEC; /* the clock stepped back */
	}
	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct est a, b;

		est_init(&a, cases[c].ops, &cases[c].p);
		est_init(&b, cases[c].ops, &cases[c].p);
		for (size_t i = 0; i < N; i++)
			est_add(&a, t[i], &one[i]);
		for (size_t i = 0, run; i < N; i += run) {
			run = 1 + tu_rng_next() % 300;
			run = run < N - i ? run : N - i;
			est_add_run(&b, t + i, run, runs + i);
		}
		for (size_t i = 0; i < N; i++)
			ck_assert_msg(one[i].have_symbol == runs[i].have_symbol &&
					      one[i].symbol == runs[i].symbol &&
					      one[i].bits == runs[i].bits,
				      "case %zu, event %zu: symbol %d/%u bits %g alone, %d/%u bits %g "
				      "in a run (seed %#llx)", c, i, one[i].have_symbol, one[i].symbol,
				      one[i].bits, runs[i].have_symbol, runs[i].symbol, runs[i].bits,
				      (unsigned long long)tu_seed);
		if (cases[c].ops->report) {
			struct est_report ra = report(&a), rb = report(&b);

			ck_assert_uint_eq(ra.estimated, rb.estimated);
			ck_assert_msg(ra.estimated >= 3, "case %zu: %llu blocks estimated", c,
				      (unsigned long long)ra.estimated);
			ck_assert(ra.h == rb.h);
		}
		est_fini(&a);
		est_fini(&b);
	}
}
END_TEST

/* ---- the run window: every symbol, not only the estimated blocks ---- */

#define RUN_WINDOW (16 * 65536) /* as in est_online.c */

/* Random intervals (uniform low bytes at 1 us) for n symbols; then, if run > 0, `run` equal
 * intervals and one other that ends them. */
static void random_then_run(struct est *e, struct stream *s, size_t n, unsigned run)
{
	struct est_out out;

	for (size_t i = 0; i < n; i++) {
		s->t += (tu_rng_next() % 65536) * US + tu_rng_next() % US;
		add(e, s, &out);
	}
	for (unsigned i = 0; i < run; i++) {
		s->t += 1234 * US;
		add(e, s, &out);
	}
	if (run) {
		s->t += 4321 * US;
		add(e, s, &out);
	}
}

/* An estimator at the block class's cap of 1 bit, past three blocks of random intervals
 * (estimated at about 6 bits a symbol) and 100 symbols into the next: what it reports. */
static struct est_report random_start(struct est *e, struct stream *s)
{
	tu_rng_seed(SEED);
	sp90b_est(e, 1000, 1, 0);
	stream_init(s, 3 * SEC);
	random_then_run(e, s, 3 * BLOCK + 100, 0);
	return report(e);
}

static void random_end(struct est *e, struct stream *s)
{
	est_fini(e);
	free(s->sym);
}

/* The estimate is the blocks' (about 6 bits a symbol), no run bounds it. */
static void expect_blocks_only(struct est *e)
{
	struct est_report r = report(e);

	ck_assert_str_ne(r.min_by, "runs of one interval");
	ck_assert_msg(r.h > 5, "h %g (seed %#llx)", r.h, (unsigned long long)tu_seed);
}

START_TEST(test_run_window_sees_every_symbol)
{
	/* A disk that paces some writes: one interval 25 times in a row amid random ones, in
	 * a block the schedule does not estimate (the next estimate is 10 s of event time
	 * away). The blocks say about 6 bits a symbol; an assessment of every symbol so far
	 * says less than the cap of 1, and from the event that ends the run so does the
	 * estimate in force. The run is short of the repetition count cutoff at 1 bit (31):
	 * the health tests let it through. */
	struct est e;
	struct stream s;
	struct est_report before = random_start(&e, &s), r;
	struct est_out out;
	struct sp90b_noniid_result a;

	ck_assert_msg(before.h > 5, "h %g before the run (seed %#llx)", before.h,
		      (unsigned long long)tu_seed);
	random_then_run(&e, &s, 0, 25);
	r = report(&e);
	ck_assert_uint_eq(r.estimated, before.estimated);
	ck_assert_str_eq(r.min_by, "runs of one interval");
	ck_assert_int_eq(sp90b_noniid(NULL, s.sym, s.nsym, 8, SP90B_ALL_TESTS, SP90B_ALL_TESTS,
				      &a), 0);
	ck_assert_msg(a.h_assessed < 1 && r.h <= a.h_assessed,
		      "h %g after the run, assessed over all %zu symbols at %g (seed %#llx)", r.h,
		      s.nsym, a.h_assessed, (unsigned long long)tu_seed);
	s.t += 777 * US;
	est_add(&e, s.t, &out);
	ck_assert(out.bits == r.h);
	random_end(&e, &s);
}
END_TEST

START_TEST(test_run_window_leaves_failures_to_health)
{
	/* A run as long as the repetition count cutoff (31 at 1 bit) fails the health tests,
	 * which then stop the credit and judge the source again when it passes: the window
	 * does not count it. */
	struct est e;
	struct stream s;

	random_start(&e, &s);
	random_then_run(&e, &s, 0, 31);
	expect_blocks_only(&e);
	random_end(&e, &s);
}
END_TEST

START_TEST(test_run_window_forgets)
{
	/* About a million symbols later (the window), the run no longer bounds the estimate. */
	struct est e;
	struct stream s;

	random_start(&e, &s);
	random_then_run(&e, &s, 0, 25);
	ck_assert_str_eq(report(&e).min_by, "runs of one interval");
	random_then_run(&e, &s, RUN_WINDOW - 2 * 65536, 0);
	ck_assert_str_eq(report(&e).min_by, "runs of one interval");
	random_then_run(&e, &s, 2 * 65536, 0);
	expect_blocks_only(&e);
	random_end(&e, &s);
}
END_TEST

/* ---- the long window: t-Tuple, LRS and MultiMCW over the last million symbols ---- */

#define STRETCH 8192 /* two blocks */

/* An estimator at this cap, past two blocks of random intervals (kept in gaps, for a
 * replay). */
static void stretch_start(struct est *e, struct stream *s, uint64_t *gaps, double cap_bits)
{
	struct est_out out;

	tu_rng_seed(SEED);
	sp90b_est(e, 1000, cap_bits, 0);
	stream_init(s, 3 * SEC);
	for (size_t i = 0; i < STRETCH; i++) {
		gaps[i] = (tu_rng_next() % 65536) * US + tu_rng_next() % US;
		s->t += gaps[i];
		add(e, s, &out);
	}
}

START_TEST(test_long_window_sees_a_replayed_stretch)
{
	/* Two blocks of random intervals, then the same intervals again: every block is random
	 * on its own (its LRS above 5 bits a symbol; t-Tuple finds no value 35 times in it),
	 * and the stretch repeated is what an assessment of all the symbols sees (LRS: next to
	 * nothing). Once the long window's next estimate has seen the repeat, the estimate
	 * counts as zero too, and the bits given so far are far above what all the symbols assess at:
	 * nothing more is given. */
	static uint64_t gaps[STRETCH];
	struct est e;
	struct stream s;
	struct est_report r;
	struct est_out out;
	struct sp90b_noniid_result a;
	double given = 0;

	stretch_start(&e, &s, gaps, 8);
	r = report(&e);
	ck_assert_msg(r.h > 4, "h %g before the repeat (seed %#llx)", r.h,
		      (unsigned long long)tu_seed);
	for (size_t i = 0; i < STRETCH; i++) {
		s.t += gaps[i];
		add(&e, &s, &out);
		if (i >= 2048)
			given += out.bits;
	}
	r = report(&e);
	ck_assert_msg(r.valid_lit[SP90B_T_LRS] && r.h_lit[SP90B_T_LRS] > 5,
		      "a block saw the repeat: LRS %g (seed %#llx)", r.h_lit[SP90B_T_LRS],
		      (unsigned long long)tu_seed);
	ck_assert_int_eq(sp90b_noniid(NULL, s.sym, s.nsym, 8, SP90B_ALL_TESTS, SP90B_ALL_TESTS,
				      &a), 0);
	ck_assert_msg(r.h < EST_MIN_BITS && a.h_assessed < 0.01,
		      "h %g, all %zu symbols assessed at %g (seed %#llx)", r.h, s.nsym,
		      a.h_assessed, (unsigned long long)tu_seed);
	ck_assert_str_eq(r.min_by, "LRS, last million");
	ck_assert_msg(given == 0, "%g bits given after the repeat was seen (seed %#llx)", given,
		      (unsigned long long)tu_seed);
	est_fini(&e);
	free(s.sym);
}
END_TEST

/* Random intervals, the low byte of each uniform at 1 us (about 2 ms apart on average), until
 * the estimator has made `until` symbols; each event's bits are given back (not credited) in
 * the share `held` (est_uncredited()). Returns the bits that went to credit. */
static double random_held(struct est *e, struct stream *s, size_t until, double held)
{
	struct est_out out;
	double went = 0;

	while (s->nsym < until) {
		s->t += (tu_rng_next() % 4096) * US + tu_rng_next() % US;
		add(e, s, &out);
		est_uncredited(e, out.bits * held);
		went += out.bits * (1 - held);
	}
	return went;
}

/* As random_held(), at intervals of up to 256 us (uniform low bytes still). */
static void random_held_fine(struct est *e, struct stream *s, size_t until, double held)
{
	struct est_out out;

	while (s->nsym < until) {
		s->t += (tu_rng_next() % 256) * US + tu_rng_next() % US;
		add(e, s, &out);
		est_uncredited(e, out.bits * held);
	}
}

START_TEST(test_long_window_steps_while_credited)
{
	/* Every bit given goes to credit: the long window is estimated at 1024 symbols and at
	 * every step after, an eighth of each doubling (at least 256): 1024 to 1792 by 256,
	 * 2048 to 3840 by 256, 4096 to 7680 by 512, 8192 to 15360 by 1024, 16384 to 30720 by
	 * 2048, 32768 and 36864: 38 estimates in 40,000 symbols. */
	struct est e;
	struct stream s;

	tu_rng_seed(SEED);
	sp90b_est(&e, 1000, 8, 0);
	stream_init(&s, 3 * SEC);
	random_held(&e, &s, 40000, 0);
	ck_assert_uint_eq(report(&e).long_runs, 38);
	est_fini(&e);
	free(s.sym);
}
END_TEST

START_TEST(test_long_window_passes_steps_held_back)
{
	/* Nothing goes to credit (a per-second cap, a full pool, mix-only): the slack is not
	 * spent, and the steps pass without an estimate; the first two are made, at 1024
	 * symbols and at the step after it (no H was in force at the first, so it left no
	 * slack). Once credit goes on, the estimate comes at the first step after an eighth of
	 * a step's bits at the H in force went to credit. */
	struct est e;
	struct stream s;
	struct est_report r;
	size_t at;

	tu_rng_seed(SEED);
	sp90b_est(&e, 1000, 8, 0);
	stream_init(&s, 3 * SEC);
	ck_assert_double_eq(random_held(&e, &s, 40000, 1), 0);
	r = report(&e);
	ck_assert_msg(r.long_runs == 2, "%llu long estimates (seed %#llx)",
		      (unsigned long long)r.long_runs, (unsigned long long)tu_seed);
	ck_assert_msg(s.t - 3 * SEC < 60 * 10 * SEC, "the stream took %llu s of event time",
		      (unsigned long long)((s.t - 3 * SEC) / SEC));
	/* The step after 40,000 symbols is 4096 symbols long; a fifth of it credited at about
	 * 6 bits a symbol (the cap is 8) spends the slack. */
	at = s.nsym;
	random_held(&e, &s, at + 2 * 4096 + 1, 0);
	r = report(&e);
	ck_assert_msg(r.long_runs >= 3, "no long estimate in %zu symbols credited (seed %#llx)",
		      s.nsym - at, (unsigned long long)tu_seed);
	est_fini(&e);
	free(s.sym);
}
END_TEST

/* Once the window is full: one estimator whose bits all go to credit, one whose bits are all
 * held back, on the same intervals (about 128 us apart), estimate_interval 1 s. The first is
 * estimated as segments leave, once every 12 s of event time; the second once every 60 s. */
START_TEST(test_long_window_slides_by_credit)
{
	const struct est_params p = {.quantum_ns = 1000, .cap_bits = 8, .estimate_every_ns = SEC};
	struct est e[2];
	struct stream s[2];
	uint64_t at[2], t0 = 0;

	for (int k = 0; k < 2; k++) {
		tu_rng_seed(SEED);
		est_init(&e[k], &est_online_sp90b_ops, &p);
		stream_init(&s[k], 3 * SEC);
		random_held_fine(&e[k], &s[k], (size_t)16 * 65536 + 1, k);
		at[k] = report(&e[k]).long_runs;
		t0 = s[k].t;
		random_held_fine(&e[k], &s[k], (size_t)16 * 65536 + 1 + 8 * 65536, k);
		at[k] = report(&e[k]).long_runs - at[k];
	}
	ck_assert_msg(s[0].t - t0 > 60 * SEC && s[0].t - t0 < 120 * SEC,
		      "%llu s of event time", (unsigned long long)((s[0].t - t0) / SEC));
	ck_assert_msg(at[0] >= 4, "%llu estimates credited (seed %#llx)",
		      (unsigned long long)at[0], (unsigned long long)tu_seed);
	ck_assert_msg(at[1] <= 2, "%llu estimates held back (seed %#llx)",
		      (unsigned long long)at[1], (unsigned long long)tu_seed);
	for (int k = 0; k < 2; k++) {
		est_fini(&e[k]);
		free(s[k].sym);
	}
}
END_TEST

START_TEST(test_long_window_held_back_sees_a_replay)
{
	/* As test_long_window_sees_a_replayed_stretch, with a sixteenth of the bits going to
	 * credit (the rest held back): the steps pass while little is credited, but once an
	 * eighth of a step's bits at the H in force (at most 8 x 1024 / 8 here) went to credit,
	 * the next step's estimate sees the repeat, and nothing more goes. */
	static uint64_t gaps[STRETCH];
	struct est e;
	struct stream s;
	struct est_report r;
	struct est_out out;
	double went = 0, spent = 0;
	size_t i, seen = 0;

	tu_rng_seed(SEED);
	sp90b_est(&e, 1000, 8, 0);
	stream_init(&s, 3 * SEC);
	for (i = 0; i < STRETCH; i++) {
		gaps[i] = (tu_rng_next() % 65536) * US + tu_rng_next() % US;
		s.t += gaps[i];
		add(&e, &s, &out);
		est_uncredited(&e, out.bits * 15 / 16);
	}
	for (size_t round = 0; round < 3 && !seen; round++)
		for (i = 0; i < STRETCH; i++) {
			s.t += gaps[i];
			add(&e, &s, &out);
			est_uncredited(&e, out.bits * 15 / 16);
			went += out.bits / 16;
			spent += out.bits;
			if (!seen && report(&e).h < EST_MIN_BITS)
				seen = s.nsym;
		}
	r = report(&e);
	ck_assert_msg(seen, "the long window never saw the repeat (seed %#llx)",
		      (unsigned long long)tu_seed);
	ck_assert_str_eq(r.min_by, "LRS, last million");
	ck_assert_msg(went <= 8.0 * 1024 / 8 + 8, "%g bits went to credit after the repeat began, "
		      "%g given (seed %#llx)", went, spent, (unsigned long long)tu_seed);
	est_fini(&e);
	free(s.sym);
}
END_TEST

START_TEST(test_long_window_bound_moves_the_cutoffs)
{
	/* The health tests claim what the estimate in force says, the long window's bound
	 * among the three (feed_pipeline.c), so the windows count the runs those tests let
	 * through at that claim. At the cap of 1 bit a run of 80 equal intervals is past the
	 * permanent repetition count cutoff (61) and the long window drops it; once the long
	 * window's estimate has seen a replay and counts as zero, the claim is the least
	 * (0.5 bits, cutoff 121), and a run of 80 that comes before the next block's estimate
	 * enters the window whole. */
	static uint64_t gaps[STRETCH];
	struct est e;
	struct stream s;
	struct est_report r0, r;
	struct est_out out;
	uint64_t runs = 0;
	bool found = false;

	stretch_start(&e, &s, gaps, 1);
	/* The replay, until a long estimate that counts as zero has just been made, with room
	 * for the run before the block ends (a block's estimate sets the cutoffs too). */
	for (size_t round = 0; round < 4 && !found; round++)
		for (size_t i = 0; i < STRETCH && !found; i++) {
			s.t += gaps[i];
			add(&e, &s, &out);
			r0 = report(&e);
			found = r0.long_runs > runs && r0.long_h < EST_MIN_BITS &&
				r0.symbols % BLOCK + 81 < BLOCK;
			runs = r0.long_runs;
		}
	ck_assert_msg(found, "no long estimate saw the replay with room for the run (seed %#llx)",
		      (unsigned long long)tu_seed);
	random_then_run(&e, &s, 0, 80);
	r = report(&e);
	ck_assert_uint_eq(r.estimated, r0.estimated);
	ck_assert_uint_eq(r.long_runs, r0.long_runs);
	ck_assert_msg(r.long_symbols == r0.long_symbols + 81,
		      "the long window holds %llu symbols after a run of 80 and one more, %llu "
		      "before (seed %#llx)", (unsigned long long)r.long_symbols,
		      (unsigned long long)r0.long_symbols, (unsigned long long)tu_seed);
	est_fini(&e);
	free(s.sym);
}
END_TEST

static Suite *est_sp90b_suite(void)
{
	Suite *s = suite_create("est_sp90b");
	TCase *tc = tcase_create("sp800-90b");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_registry);
	tcase_add_test(tc, test_no_credit_before_first_estimate);
	tcase_add_test(tc, test_constant_interval_zero);
	tcase_add_test(tc, test_alternating_intervals_zero);
	tcase_add_test(tc, test_replay_falls_to_zero);
	tcase_add_test(tc, test_random_near_8_bits_and_capped);
	tcase_add_test(tc, test_block_estimate_is_literal);
	tcase_add_test(tc, test_sub_jiffy_symbols);
	tcase_add_test(tc, test_never_above_cap);
	tcase_add_test(tc, test_instances_independent);
	tcase_add_test(tc, test_flood_estimated_every_ten_seconds);
	tcase_add_test(tc, test_single_value_block_keeps_results);
	tcase_add_test(tc, test_schedule_busy_and_slow);
	tcase_add_test(tc, test_schedule_follows_interval);
	tcase_add_test(tc, test_runs_as_single_events);
	tcase_add_test(tc, test_run_window_sees_every_symbol);
	tcase_add_test(tc, test_run_window_leaves_failures_to_health);
	tcase_add_test(tc, test_run_window_forgets);
	tcase_add_test(tc, test_long_window_sees_a_replayed_stretch);
	tcase_add_test(tc, test_long_window_steps_while_credited);
	tcase_add_test(tc, test_long_window_passes_steps_held_back);
	tcase_add_test(tc, test_long_window_held_back_sees_a_replay);
	tcase_add_test(tc, test_long_window_slides_by_credit);
	tcase_add_test(tc, test_long_window_bound_moves_the_cutoffs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(est_sp90b_suite());
}
