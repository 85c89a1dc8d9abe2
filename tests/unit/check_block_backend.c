/* check_block_backend: what both block backends hand the source (block_backend.c): the
 * kernel's device numbers, and batches put in time order. */
#include "autoconf.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_backend.h"
#include "testutil.h"
#include "util.h"

#define SEED 0x0b10c5u

/* The kernel's internal dev_t (major << 20 | minor), as trace records carry it. */
START_TEST(test_kdev)
{
	static const struct {
		unsigned major, minor;
		uint32_t kdev;
	} cases[] = {
		{7, 0, 7u << 20},
		{7, 3, (7u << 20) | 3},
		{8, 16, (8u << 20) | 16},
		{259, 5, (259u << 20) | 5},
		{0, 0xfffff, 0xfffff},
		{1, 0x1fffff, (1u << 20) | 0xfffff}, /* a minor has 20 bits: the rest is cut */
		{4095, 1, (4095u << 20) | 1},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		ck_assert_msg(BLOCK_KDEV(cases[i].major, cases[i].minor) == cases[i].kdev,
			      "%u:%u: %#x, want %#x", cases[i].major, cases[i].minor,
			      BLOCK_KDEV(cases[i].major, cases[i].minor), cases[i].kdev);
}
END_TEST

/* sorted: in time order, and the same completions (times with their devices) as before. */
static void assert_sorted(const struct block_sample *before, const struct block_sample *s,
			  size_t n)
{
	uint64_t sum_before = 0, sum = 0;

	for (size_t i = 0; i < n; i++) {
		if (i)
			ck_assert_msg(s[i - 1].t_ns <= s[i].t_ns, "out of order at %zu: %llu > %llu",
				      i, (unsigned long long)s[i - 1].t_ns,
				      (unsigned long long)s[i].t_ns);
		/* each time still with its device: a mix of the two, summed */
		sum_before += before[i].t_ns * 31 + before[i].kdev * (before[i].t_ns | 1);
		sum += s[i].t_ns * 31 + s[i].kdev * (s[i].t_ns | 1);
	}
	ck_assert_msg(sum == sum_before, "the completions changed, not only their order");
}

START_TEST(test_sort)
{
	struct block_sample s[500], before[500];
	unsigned seed = SEED;

	printf("test_sort: seed 0x%x\n", seed);
	/* Two CPUs' runs, each in order, one after the other: interleaved by time. */
	for (size_t i = 0; i < 250; i++) {
		s[i].t_ns = 1000 + i * 20;
		s[i].kdev = 1;
		s[250 + i].t_ns = 1010 + i * 20;
		s[250 + i].kdev = 2;
	}
	memcpy(before, s, sizeof(s));
	block_backend_samples_sort(s, 500);
	assert_sorted(before, s, 500);
	for (size_t i = 1; i < 500; i++)
		ck_assert_uint_eq(s[i].kdev, i % 2 ? 2 : 1);
	/* Random times, and equal ones. */
	for (size_t i = 0; i < 500; i++) {
		s[i].t_ns = (uint64_t)rand_r(&seed) % (i < 250 ? 1000000u : 50u);
		s[i].kdev = (uint32_t)i;
	}
	memcpy(before, s, sizeof(s));
	block_backend_samples_sort(s, 500);
	assert_sorted(before, s, 500);
	/* The last one out of place, and the first. */
	for (size_t i = 0; i < 100; i++)
		s[i] = (struct block_sample){.t_ns = 100 + i, .kdev = 9};
	s[99].t_ns = 5;
	block_backend_samples_sort(s, 100);
	ck_assert_uint_eq(s[0].t_ns, 5);
	ck_assert_uint_eq(s[99].t_ns, 198);
	s[0].t_ns = 1000;
	block_backend_samples_sort(s, 100);
	ck_assert_uint_eq(s[0].t_ns, 100);
	ck_assert_uint_eq(s[99].t_ns, 1000);
}
END_TEST

/* A batch already in order (one CPU's run, the usual case) is left exactly as it is, equal
 * times in the order they came; nothing or one is nothing to do. */
START_TEST(test_in_order_untouched)
{
	struct block_sample s[64], before[64];

	for (size_t i = 0; i < ARRAY_SIZE(s); i++)
		s[i] = (struct block_sample){.t_ns = 1000 + i / 4, .kdev = (uint32_t)(ARRAY_SIZE(s) - i)};
	memcpy(before, s, sizeof(s));
	block_backend_samples_sort(s, ARRAY_SIZE(s));
	ck_assert_mem_eq(s, before, sizeof(s));
	s[0].t_ns = 99999;
	block_backend_samples_sort(s, 1);
	ck_assert_uint_eq(s[0].t_ns, 99999);
	block_backend_samples_sort(s, 0);
	block_backend_samples_sort(NULL, 0);
	/* completions whose time is unknown come first */
	s[5].t_ns = BLOCK_NO_TIME;
	block_backend_samples_sort(s, 8);
	ck_assert_uint_eq(s[0].t_ns, BLOCK_NO_TIME);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("block_backend");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_kdev);
	tcase_add_test(tc, test_sort);
	tcase_add_test(tc, test_in_order_untouched);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
