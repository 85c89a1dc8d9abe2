/* check_feed_pool: unit tests for feed_pool.c — batching, folding, credit bounds, wiping. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed_pool.h"
#include "testutil.h"

/* Random inputs come from a fixed seed (ENTROPYD_TEST_SEED overrides it), printed on failure. */
#define SEED 0x20261203u

static void fill(uint8_t *b, size_t n, uint8_t start)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(start + i * 7);
}

START_TEST(test_init_empty)
{
	struct pool p;

	memset(&p, 0xee, sizeof(p));
	feed_pool_init(&p);
	ck_assert(feed_pool_empty(&p));
	ck_assert(!feed_pool_full(&p));
	ck_assert_uint_eq(p.len, 0);
	ck_assert_uint_eq(p.events, 0);
	ck_assert(p.credit == 0);
	ck_assert(p.deferred == 0);
	ck_assert_uint_eq(p.pos, 0);
}
END_TEST

START_TEST(test_add_keeps_bytes_in_order)
{
	struct pool p;
	struct batch b;
	uint8_t d[40];

	fill(d, sizeof(d), 3);
	feed_pool_init(&p);
	feed_pool_add(&p, d, 16, 1);
	feed_pool_add(&p, d + 16, 24, 1);
	ck_assert(!feed_pool_empty(&p));
	ck_assert_uint_eq(p.len, 40);
	ck_assert_uint_eq(p.events, 2);
	feed_pool_take(&p, &b);
	ck_assert_uint_eq(b.len, 40);
	ck_assert_uint_eq(b.events, 2);
	ck_assert_int_eq(memcmp(b.data, d, sizeof(d)), 0);
	ck_assert_int_eq(b.credit_bits, 2);
}
END_TEST

START_TEST(test_credit_at_most_8_bits_per_byte)
{
	struct pool p;
	struct batch b;
	uint64_t v = 0x0123456789abcdefULL;

	feed_pool_init(&p);
	feed_pool_add(&p, &v, 2, 100);
	feed_pool_take(&p, &b);
	ck_assert_int_eq(b.credit_bits, 16);

	/* A full pool carries at most 8 * POOL_BYTES, whatever was claimed. */
	feed_pool_init(&p);
	for (int i = 0; i < 2 * POOL_BYTES / 8; i++)
		feed_pool_add(&p, &v, sizeof(v), 1000);
	feed_pool_take(&p, &b);
	ck_assert_uint_eq(b.len, POOL_BYTES);
	ck_assert_int_eq(b.credit_bits, 8 * POOL_BYTES);

	/* Zero bytes carry nothing. */
	feed_pool_init(&p);
	feed_pool_add(&p, &v, 0, 50);
	feed_pool_take(&p, &b);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_int_eq(b.credit_bits, 0);
}
END_TEST

START_TEST(test_credit_random_batches)
{
	struct pool p;
	struct batch b;
	uint8_t d[64];

	tu_rng_seed(SEED);
	feed_pool_init(&p);
	for (int round = 0; round < 500; round++) {
		int n = 1 + (int)(tu_rng_next() % 120);
		size_t bytes = 0;
		double sum = 0;

		for (int i = 0; i < n; i++) {
			size_t len = tu_rng_next() % sizeof(d);
			double c = tu_rng_unit() * 12;

			memset(d, round, len);
			feed_pool_add(&p, d, len, c);
			/* Only data that fits whole earns credit: folded bytes carry no more. */
			if (len > 0 && bytes + len <= POOL_BYTES)
				sum += c;
			bytes += len;
		}
		feed_pool_take(&p, &b);
		{
			size_t carried = bytes < POOL_BYTES ? bytes : POOL_BYTES;
			int want = (int)floor(fmin(sum, 8.0 * (double)carried));

			ck_assert_msg(b.len == carried, "round %d: len %zu, want %zu (seed %#llx)",
				      round, b.len, carried, (unsigned long long)tu_seed);
			ck_assert_msg(b.credit_bits == want,
				      "round %d: %d bits, want %d of %g in %zu bytes (seed %#llx)",
				      round, b.credit_bits, want, sum, carried,
				      (unsigned long long)tu_seed);
			ck_assert_msg((size_t)b.credit_bits <= 8 * b.len,
				      "round %d: %d bits in %zu bytes (seed %#llx)", round,
				      b.credit_bits, b.len, (unsigned long long)tu_seed);
			ck_assert_uint_eq(b.events, (uint64_t)n);
		}
	}
}
END_TEST

START_TEST(test_fractions_dropped_not_carried)
{
	struct pool p;
	struct batch b;
	uint64_t v = 1;

	feed_pool_init(&p);
	feed_pool_add(&p, &v, sizeof(v), 0.95);
	feed_pool_add(&p, &v, sizeof(v), 0.95);
	feed_pool_add(&p, &v, sizeof(v), 0.95);
	feed_pool_take(&p, &b);
	ck_assert_int_eq(b.credit_bits, 2); /* 2.85 */
	ck_assert(p.credit == 0);

	/* 0.3 alone is no whole bit; with the 0.85 carried over it would be one. */
	feed_pool_add(&p, &v, sizeof(v), 0.3);
	feed_pool_take(&p, &b);
	ck_assert_int_eq(b.credit_bits, 0);
}
END_TEST

START_TEST(test_bad_credit_ignored)
{
	struct pool p;
	struct batch b;
	uint64_t v = 1;

	feed_pool_init(&p);
	feed_pool_add(&p, &v, sizeof(v), 3);
	feed_pool_add(&p, &v, sizeof(v), -10);
	feed_pool_add(&p, &v, sizeof(v), NAN);
	feed_pool_add(&p, &v, sizeof(v), -INFINITY);
	ck_assert(p.credit == 3);
	feed_pool_take(&p, &b);
	ck_assert_int_eq(b.credit_bits, 3);
	ck_assert_uint_eq(b.events, 4);
}
END_TEST

START_TEST(test_full_folds_in)
{
	static uint8_t first[POOL_BYTES], more[POOL_BYTES + 100];
	uint8_t want[POOL_BYTES];
	struct pool p;
	struct batch b;

	fill(first, sizeof(first), 1);
	fill(more, sizeof(more), 200);
	feed_pool_init(&p);
	feed_pool_add(&p, first, sizeof(first), 0);
	ck_assert(feed_pool_full(&p));
	ck_assert_uint_eq(p.len, POOL_BYTES);

	/* The next bytes are XORed in from the start and wrap around. */
	feed_pool_add(&p, more, 10, 0);
	ck_assert_uint_eq(p.len, POOL_BYTES);
	feed_pool_add(&p, more + 10, sizeof(more) - 10, 0);
	ck_assert_uint_eq(p.len, POOL_BYTES);
	ck_assert(feed_pool_full(&p));

	memcpy(want, first, sizeof(want));
	for (size_t i = 0; i < sizeof(more); i++)
		want[i % POOL_BYTES] ^= more[i];
	feed_pool_take(&p, &b);
	ck_assert_uint_eq(b.len, POOL_BYTES);
	for (size_t i = 0; i < POOL_BYTES; i++)
		ck_assert_msg(b.data[i] == want[i], "byte %zu: %#x, want %#x", i, b.data[i],
			      want[i]);
}
END_TEST

START_TEST(test_full_random_model)
{
	/* Compare with a model of the pool over random add sizes. */
	uint8_t model[POOL_BYTES] = {0}, d[300];
	size_t mlen = 0, mpos = 0, total = 0;
	struct pool p;
	struct batch b;

	tu_rng_seed(SEED);
	feed_pool_init(&p);
	while (total < 5 * POOL_BYTES) {
		size_t len = tu_rng_next() % sizeof(d);

		for (size_t i = 0; i < len; i++)
			d[i] = (uint8_t)tu_rng_next();
		feed_pool_add(&p, d, len, 0);
		for (size_t i = 0; i < len; i++) {
			if (mlen < POOL_BYTES) {
				model[mlen++] = d[i];
			} else {
				model[mpos] ^= d[i];
				mpos = (mpos + 1) % POOL_BYTES;
			}
		}
		total += len;
		ck_assert_msg(p.len == mlen, "len %zu, want %zu (seed %#llx)", p.len, mlen,
			      (unsigned long long)tu_seed);
	}
	feed_pool_take(&p, &b);
	ck_assert_msg(memcmp(b.data, model, sizeof(model)) == 0, "pool differs (seed %#llx)",
		      (unsigned long long)tu_seed);
}
END_TEST

/* Events folded into a full pool are mixed, never credited: their bytes land on bytes that
 * already carry credit. */
START_TEST(test_full_pool_adds_no_credit)
{
	uint8_t d[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	struct pool p;
	struct batch b;

	feed_pool_init(&p);
	for (int i = 0; i < POOL_BYTES / 8; i++)
		feed_pool_add(&p, d, sizeof(d), 2.0);
	ck_assert(feed_pool_full(&p));
	for (int i = 0; i < 1000; i++)
		feed_pool_add(&p, d, sizeof(d), 2.0);
	ck_assert_uint_eq(p.events, POOL_BYTES / 8 + 1000);
	feed_pool_take(&p, &b);
	ck_assert_int_eq(b.credit_bits, 2 * POOL_BYTES / 8);
}
END_TEST

START_TEST(test_take_empties_and_wipes)
{
	static uint8_t d[POOL_BYTES + 50];
	struct pool p;
	struct batch b;

	memset(d, 0xa7, sizeof(d));
	feed_pool_init(&p);
	feed_pool_add(&p, d, POOL_BYTES, 77.5);
	feed_pool_add(&p, d, sizeof(d) - POOL_BYTES, 0); /* folded in */
	feed_pool_take(&p, &b);
	ck_assert(feed_pool_empty(&p));
	ck_assert(!feed_pool_full(&p));
	ck_assert_uint_eq(p.len, 0);
	ck_assert_uint_eq(p.pos, 0);
	ck_assert_uint_eq(p.events, 0);
	ck_assert(p.credit == 0);
	for (size_t i = 0; i < POOL_BYTES; i++)
		ck_assert_msg(p.buf[i] == 0, "pool byte %zu not wiped", i);
	ck_assert_int_eq(b.credit_bits, 77);

	/* A second take gives an empty batch. */
	feed_pool_take(&p, &b);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_int_eq(b.credit_bits, 0);
	ck_assert_uint_eq(b.events, 0);

	/* After a take the pool fills from the start again, not at the old fold position. */
	feed_pool_add(&p, "xyz", 3, 0);
	feed_pool_take(&p, &b);
	ck_assert_uint_eq(b.len, 3);
	ck_assert_int_eq(memcmp(b.data, "xyz", 3), 0);
}
END_TEST

START_TEST(test_batch_wipe)
{
	struct pool p;
	struct batch b;
	static const uint8_t zero[sizeof(struct batch)];

	feed_pool_init(&p);
	feed_pool_add(&p, "secret timing", 13, 5);
	feed_pool_take(&p, &b);
	feed_pool_batch_wipe(&b);
	ck_assert_int_eq(memcmp(&b, zero, sizeof(b)), 0);
}
END_TEST

START_TEST(test_vouched_credit_rides_on_later_bytes)
{
	struct pool p;
	struct batch b;
	uint64_t v = 7;

	feed_pool_init(&p);
	/* Credit for data sent on earlier waits for bytes to carry it: none in an empty pool. */
	ck_assert_double_eq_tol(feed_pool_vouch(&p, 100.5), 100.5, 1e-9);
	ck_assert(feed_pool_empty(&p));
	ck_assert(feed_pool_credit(&p) == 0);

	/* Eight bytes carry 64 bits; the rest waits for the next batch. */
	ck_assert(feed_pool_add(&p, &v, sizeof(v), 0));
	ck_assert(feed_pool_credit(&p) == 64);
	feed_pool_take(&p, &b);
	ck_assert_int_eq(b.credit_bits, 64);
	ck_assert_double_eq_tol(p.deferred, 36.5, 1e-9);

	/* A batch's own credit comes first, vouched credit fills the room it leaves. */
	ck_assert(feed_pool_add(&p, &v, sizeof(v), 60));
	ck_assert(feed_pool_credit(&p) == 64);
	feed_pool_take(&p, &b);
	ck_assert_int_eq(b.credit_bits, 64);
	ck_assert_double_eq_tol(p.deferred, 32.5, 1e-9);
	ck_assert(feed_pool_add(&p, &v, sizeof(v), 0));
	feed_pool_take(&p, &b);
	ck_assert_int_eq(b.credit_bits, 32); /* the half bit is dropped */
	ck_assert(p.deferred == 0);
}
END_TEST

START_TEST(test_vouched_credit_bounded)
{
	struct pool p;
	struct batch b;
	uint8_t d[POOL_BYTES] = {1};

	feed_pool_init(&p);
	ck_assert(feed_pool_vouch(&p, -5) == 0);
	ck_assert(feed_pool_vouch(&p, NAN) == 0);
	ck_assert(feed_pool_vouch(&p, INFINITY) == POOL_DEFERRED_MAX);
	ck_assert(feed_pool_vouch(&p, 1) == 0); /* no room: dropped, and said so */
	ck_assert(p.deferred == POOL_DEFERRED_MAX);
	/* A full pool carries it all at once, never more than 8 bits a byte. */
	ck_assert(feed_pool_add(&p, d, sizeof(d), 0));
	ck_assert(!feed_pool_add(&p, d, 1, 8)); /* folded in: no credit */
	feed_pool_take(&p, &b);
	ck_assert_int_eq(b.credit_bits, 8 * POOL_BYTES);
	ck_assert(p.deferred == 0);
}
END_TEST

static Suite *pool_suite(void)
{
	Suite *s = suite_create("pool");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_init_empty);
	tcase_add_test(tc, test_add_keeps_bytes_in_order);
	tcase_add_test(tc, test_credit_at_most_8_bits_per_byte);
	tcase_add_test(tc, test_credit_random_batches);
	tcase_add_test(tc, test_fractions_dropped_not_carried);
	tcase_add_test(tc, test_bad_credit_ignored);
	tcase_add_test(tc, test_full_folds_in);
	tcase_add_test(tc, test_full_random_model);
	tcase_add_test(tc, test_full_pool_adds_no_credit);
	tcase_add_test(tc, test_take_empties_and_wipes);
	tcase_add_test(tc, test_batch_wipe);
	tcase_add_test(tc, test_vouched_credit_rides_on_later_bytes);
	tcase_add_test(tc, test_vouched_credit_bounded);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(pool_suite());
}
