/* check_block: the block source's pure parts: the tracefs format parser, the perf filter and
 * when perf's losses are said. Disk selection is check_block_disks's, batch ordering
 * check_block_backend's. The real tracing is tested as root on loop devices by t_block.sh. */
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

static const char format_text[] =
	"name: block_rq_complete\n"
	"ID: 2107\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:int error;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;\n"
	"\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n"
	"\tfield:__data_loc char[] cmd;\toffset:44;\tsize:4;\tsigned:0;\n"
	"\n"
	"print fmt: \"%d,%d %s (%s) %llu + %u\", ((unsigned int) ((REC->dev) >> 20))\n";

START_TEST(test_format_field)
{
	unsigned off = 0, size = 0;

	ck_assert(block_tp_format_field(format_text, "dev", &off, &size));
	ck_assert_uint_eq(off, 8);
	ck_assert_uint_eq(size, 4);
	ck_assert(block_tp_format_field(format_text, "rwbs", &off, &size));
	ck_assert_uint_eq(off, 34);
	ck_assert_uint_eq(size, 10);
	ck_assert(block_tp_format_field(format_text, "cmd", &off, &size));
	ck_assert_uint_eq(off, 44);
	ck_assert(block_tp_format_field(format_text, "sector", &off, &size));
	ck_assert_uint_eq(size, 8);
	/* Not a prefix or suffix match. */
	ck_assert(!block_tp_format_field(format_text, "de", &off, &size));
	ck_assert(!block_tp_format_field(format_text, "ev", &off, &size));
	ck_assert(!block_tp_format_field(format_text, "nosuch", &off, &size));
	ck_assert(!block_tp_format_field("", "dev", &off, &size));
	ck_assert(!block_tp_format_field("\tfield:dev_t dev;\toffset:x;\n", "dev", &off, &size));
}
END_TEST

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

	tcase_add_test(tp, test_format_field);
	tcase_add_test(tp, test_filter);
	tcase_add_test(tp, test_unsampled_due);
	suite_add_tcase(s, tp);
	return s;
}

int main(void)
{
	return tu_run_suite(block_suite());
}
