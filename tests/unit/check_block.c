/* check_block: the block source's pure parts: the perf filter and when perf's losses are
 * said. The tracefs format parser is check_block_tp_format's, disk selection
 * check_block_disks's, batch ordering check_block_backend's. The real tracing is tested as
 * root on loop devices by t_block.sh. */
#include "autoconf.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block.h"
#include "block_tp.h"
#include "testutil.h"
#include "util.h"

START_TEST(test_filter)
{
	uint32_t k[] = {BLOCK_KDEV(7, 0), BLOCK_KDEV(254, 0), BLOCK_KDEV(259, 3)};
	char buf[128], tiny[20];

	ck_assert_uint_eq(BLOCK_KDEV(7, 3), (7u << 20) | 3u);
	ck_assert(block_tp_filter(k, 1, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "dev == 7340032");
	ck_assert(block_tp_filter(k, 3, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "dev == 7340032 || dev == 266338304 || dev == 271581187");
	ck_assert(!block_tp_filter(k, 3, tiny, sizeof(tiny)));
}
END_TEST

/* perf's silent losses are said the first time, then at most hourly, with the count since. */
START_TEST(test_unsampled_due)
{
	struct block_tp_unsampled_log l = {0};
	const uint64_t s = NS_PER_SEC, hour = BLOCK_TP_UNSAMPLED_EVERY_S * NS_PER_SEC;
	bool first;

	ck_assert_uint_eq(block_tp_unsampled_due(&l, 0, 5 * s, &first), 0); /* none lost */
	ck_assert(first);
	ck_assert_uint_eq(block_tp_unsampled_due(&l, 5, 12 * s, &first), 5);
	ck_assert(first);
	/* every 12 s more, as on a busy VM: nothing said within the hour */
	for (uint64_t t = 24; t < 12 + BLOCK_TP_UNSAMPLED_EVERY_S; t += 12) {
		ck_assert_uint_eq(block_tp_unsampled_due(&l, 5 + t, t * s, &first), 0);
		ck_assert(!first);
	}
	ck_assert_uint_eq(block_tp_unsampled_due(&l, 5000, 12 * s + hour, &first), 4995);
	ck_assert(!first);
	/* nothing new: nothing said, however long after */
	ck_assert_uint_eq(block_tp_unsampled_due(&l, 5000, 12 * s + 3 * hour, &first), 0);
	ck_assert_uint_eq(block_tp_unsampled_due(&l, 5001, 12 * s + 3 * hour, &first), 1);
}
END_TEST

static Suite *block_suite(void)
{
	Suite *s = suite_create("block");
	TCase *tp = tcase_create("tracepoint");

	tcase_add_test(tp, test_filter);
	tcase_add_test(tp, test_unsampled_due);
	suite_add_tcase(s, tp);
	return s;
}

int main(void)
{
	return tu_run_suite(block_suite());
}
