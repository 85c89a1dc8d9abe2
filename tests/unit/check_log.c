/* check_log: log lines, errno suffix and the rate limit, read back from stderr. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "testutil.h"

static char *captured;

/* Run fn with stderr captured; what it wrote is then in captured. */
static void capture(void (*fn)(void))
{
	tu_capture_begin();
	fn();
	free(captured);
	captured = tu_capture_end();
}

static size_t count(const char *needle)
{
	return tu_count(captured, needle);
}

static void levels(void)
{
	log_open(true, 0);
	log_notice("notice %d", 1);
	log_info("info %d", 2);
	log_debug("debug %d", 3);
	log_open(true, 2);
	log_debug("debug %d", 4);
}

START_TEST(verbosity_filters_levels)
{
	unsetenv("JOURNAL_STREAM");
	capture(levels);
	ck_assert_int_eq(count("entropyd: notice: notice 1\n"), 1);
	ck_assert_int_eq(count("info 2"), 0);
	ck_assert_int_eq(count("debug 3"), 0);
	ck_assert_int_eq(count("entropyd: debug: debug 4\n"), 1);
}
END_TEST

static void with_errno(void)
{
	log_open(true, 0);
	errno = ENOENT;
	log_errno(LOG_ERR, "cannot open %s", "/nowhere");
	ck_assert_int_eq(errno, ENOENT);
}

START_TEST(errno_is_appended_and_kept)
{
	unsetenv("JOURNAL_STREAM");
	capture(with_errno);
	ck_assert_int_eq(count("entropyd: error: cannot open /nowhere: No such file or directory\n"), 1);
}
END_TEST

static void journal(void)
{
	setenv("JOURNAL_STREAM", "8:1234", 1);
	log_open(true, 0);
	log_warn("to the journal");
	unsetenv("JOURNAL_STREAM");
}

START_TEST(journal_stream_gets_priority_prefix)
{
	capture(journal);
	ck_assert_int_eq(count("<4>to the journal\n"), 1);
}
END_TEST

static void flood(void)
{
	struct log_ratelimit rl = {.interval_s = 3600, .burst = 3};

	log_open(true, 0);
	for (int i = 0; i < 100; i++)
		log_limited(&rl, LOG_WARNING, "device gone");
	ck_assert_uint_eq(rl.printed, 3);
	ck_assert_uint_eq(rl.suppressed, 97);
	/* A new window says how many were held back. */
	rl.window_start_ns -= 3601ULL * 1000000000ULL;
	log_limited(&rl, LOG_WARNING, "device gone");
}

START_TEST(rate_limit_holds_back_and_reports)
{
	unsetenv("JOURNAL_STREAM");
	capture(flood);
	ck_assert_int_eq(count("device gone\n"), 4);
	ck_assert_int_eq(count("(97 similar messages suppressed)"), 1);
}
END_TEST

static Suite *log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, verbosity_filters_levels);
	tcase_add_test(tc, errno_is_appended_and_kept);
	tcase_add_test(tc, journal_stream_gets_priority_prefix);
	tcase_add_test(tc, rate_limit_holds_back_and_reports);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(log_suite());
}
